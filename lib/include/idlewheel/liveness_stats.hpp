// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_LIVENESS_STATS_HPP
#define IDLEWHEEL_LIVENESS_STATS_HPP

/** @file
 * @brief idlewheel::liveness_stats: what the liveness objects decided, by cause.
 */

#include <cstdint>

namespace idlewheel {

/**
 * idlewheel::liveness_stats: what the liveness objects decided, by cause. The timer counts
 * timeouts (wheel_stats); the liveness layer counts its own outcomes here. A server keeps one
 * per wheel (per io_context thread, or per wheel_pool shard) and hands its address to the
 * liveness objects of that wheel's sessions; a null pointer counts nothing. Plain counters:
 * read them on the wheel's executor (a pool: wheel_pool::async_for_each), and sum them with +=.
 */
struct liveness_stats {
    std::uint64_t reader_idle = 0;         ///< idle_watch reader-idle reports
    std::uint64_t writer_idle = 0;         ///< idle_watch writer-idle reports
    std::uint64_t all_idle = 0;            ///< idle_watch all-idle reports
    std::uint64_t pings_sent = 0;          ///< heartbeat pings asked for
    std::uint64_t dead_peers = 0;          ///< heartbeat peers declared dead (no answer in time)
    std::uint64_t handshake_timeouts = 0;  ///< deadlines expired with error::handshake_timeout
    /// Other deadline expiries (operation_deadline with any cause but handshake_timeout and
    /// close_timeout). Close deadlines were counted here until 1.0.x; they are close_timeouts now.
    std::uint64_t operation_timeouts = 0;
    /// Close handshakes ended by their deadline (liveness_event::close_timeout, or an
    /// operation_deadline whose cause is error::close_timeout). Last, so that
    /// an aggregate initialization written for 1.0 keeps its meaning.
    std::uint64_t close_timeouts = 0;

    /// Adds another thread's or shard's counts (a wheel_pool's sum).
    /// @param o the counts added.
    /// @return *this.
    liveness_stats& operator+=(const liveness_stats& o) noexcept {
        reader_idle += o.reader_idle;
        writer_idle += o.writer_idle;
        all_idle += o.all_idle;
        pings_sent += o.pings_sent;
        dead_peers += o.dead_peers;
        handshake_timeouts += o.handshake_timeouts;
        operation_timeouts += o.operation_timeouts;
        close_timeouts += o.close_timeouts;
        return *this;
    }
};

}  // namespace idlewheel

#endif
