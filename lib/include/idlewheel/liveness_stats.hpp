// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_LIVENESS_STATS_HPP
#define IDLEWHEEL_LIVENESS_STATS_HPP

// idlewheel::liveness_stats: what the liveness objects decided, by cause. The timer counts
// timeouts (wheel_stats); the liveness layer counts its own outcomes here. A server keeps one
// per wheel (per io_context thread) and hands its address to the liveness objects of that
// thread's sessions; a null pointer counts nothing. Plain counters: read them on the thread
// that owns them.

#include <cstdint>

namespace idlewheel {

struct liveness_stats {
    std::uint64_t reader_idle = 0;         ///< idle_watch reader-idle reports
    std::uint64_t writer_idle = 0;         ///< idle_watch writer-idle reports
    std::uint64_t all_idle = 0;            ///< idle_watch all-idle reports
    std::uint64_t pings_sent = 0;          ///< heartbeat pings asked for
    std::uint64_t dead_peers = 0;          ///< heartbeat peers declared dead (no answer in time)
    std::uint64_t handshake_timeouts = 0;  ///< deadlines expired with error::handshake_timeout
    std::uint64_t operation_timeouts = 0;  ///< other deadline expiries
};

}  // namespace idlewheel

#endif
