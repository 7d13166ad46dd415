// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IDLEWHEEL_HPP
#define IDLEWHEEL_IDLEWHEEL_HPP

/** @file
 * @brief Everything of idlewheel's public API in one include (idlewheel/beast.hpp, the umbrella
 * of the Beast headers, is separate so that users without Beast need not have it).
 */
// Every public header of this directory but beast.hpp must be listed here:
// tests/umbrella_header.cmake checks it (and tests/header_layers.py that nothing in lib/
// includes this header).
#include <idlewheel/bind_member.hpp>
#include <idlewheel/callback.hpp>
#include <idlewheel/cancel_after.hpp>
#include <idlewheel/error.hpp>
#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/member_liveness.hpp>
#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/owner_offset.hpp>
#include <idlewheel/per_shard.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/stream_liveness.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/version.hpp>
#include <idlewheel/wheel_pool.hpp>
#include <idlewheel/wheel_timer.hpp>

#endif
