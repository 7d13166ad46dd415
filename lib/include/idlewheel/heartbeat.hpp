// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_HEARTBEAT_HPP
#define IDLEWHEEL_HEARTBEAT_HPP

/** @file
 * @brief idlewheel::heartbeat: ping/pong liveness, apart from application idleness.
 */

#include <idlewheel/callback.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/detail/jitter.hpp>
#include <idlewheel/detail/liveness_access.hpp>
#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace idlewheel {

/// What a heartbeat reports.
enum class heartbeat_event {
    send_ping,  ///< ping_interval passed with nothing from the peer: send a ping now
    dead_peer,  ///< nothing at all within pong_timeout after the ping: close the connection
    /// The old name of dead_peer (liveness_event's word is dead_peer).
    /// @deprecated Use heartbeat_event::dead_peer; kept for 1.x.
    peer_dead [[deprecated("use heartbeat_event::dead_peer")]] = dead_peer
};

/// The times of a heartbeat (applied by its next start()).
struct heartbeat_options {
    std::chrono::nanoseconds ping_interval{0};  ///< quiet time before a ping; 0 disables the heartbeat
    std::chrono::nanoseconds pong_timeout{0};   ///< time to answer; must be > 0 when enabled
    std::chrono::nanoseconds jitter{0};         ///< spread of the per-session offset added to ping_interval
};

/// What a heartbeat calls: `function(context, event)` (idlewheel::callback;
/// bind_member<&T::f>(self) converts to it).
using heartbeat_handler = callback<void(heartbeat_event event)>;

/// A heartbeat_handler that calls `(self->*Member)(event)`.
/// @deprecated Use idlewheel::bind_member (the same, for every handler shape); kept for 1.x.
/// @tparam Member a pointer to a member function of T taking a heartbeat_event.
/// @param self the object; must outlive the heartbeat's events.
/// @return the handler.
template <auto Member, class T>
[[deprecated("use idlewheel::bind_member")]] [[nodiscard]] constexpr heartbeat_handler heartbeat_member(T* self) noexcept {
    return bind_member<Member>(self);
}

/**
 * Ping/pong liveness, apart from application idleness (idlewheel::heartbeat is
 * `basic_heartbeat<wheel_timer>`).
 *
 * @tparam Wheel the wheel type (a basic_wheel_timer).
 *
 * After `ping_interval` without anything from the peer, the heartbeat asks for a ping
 * (heartbeat_event::send_ping). If nothing at all (a pong or any other frame) arrives within
 * `pong_timeout` after that, the peer is dead (heartbeat_event::dead_peer). A peer that
 * answers pings but never sends a message is alive: closing it for idleness is idle_watch's
 * job, with its own, typically much longer, time. That is the split Beast's websocket timeouts
 * cannot make (boostorg/beast#2323: long idle limits plus short keep-alive pings).
 *
 *     idlewheel::heartbeat hb{wheel, idlewheel::bind_member<&session::on_heartbeat>(this),
 *                             {.ping_interval = 15s, .pong_timeout = 10s, .jitter = 2s}};
 *     hb.start();                    // after the handshake
 *     hb.on_inbound();               // for every frame read, pongs included: a store
 *     void on_heartbeat(idlewheel::heartbeat_event e) {
 *         if (e == idlewheel::heartbeat_event::send_ping) ws.async_ping({}, ...);
 *         else socket.close();       // dead_peer
 *     }
 *
 * idlewheel/beast/websocket_helpers.hpp wires this to a boost::beast::websocket::stream. Over
 * raw TCP, send an application-level ping on send_ping and call on_inbound() for every byte
 * received.
 *
 * @par Jitter (Netty #973)
 * With `jitter` > 0 each heartbeat adds its own fixed offset, drawn
 * uniformly from [0, jitter], to its ping interval, so 20 000 sessions opened together do not
 * all ping in the same tick.
 *
 * @par State machine
 * @verbatim
   waiting --(interval quiet)--> awaiting_pong --(inbound)--> waiting
                                               \--(pong_timeout quiet)--> dead
   @endverbatim
 * It is the same sans-I/O machine over any transport; it is tested without sockets.
 *
 * @par Completion
 * The handler runs on the wheel's executor, from the wheel's completion handler (a wheel
 * callback: wheel_timer, Completion): send_ping when ping_interval (plus this heartbeat's
 * jitter offset) passed with nothing from the peer, never a second one while a ping is
 * awaited; dead_peer once (the heartbeat then stays in state::dead until start()). The handler may stop, restart or
 * destroy the heartbeat.
 *
 * @par Thread safety
 * Like the wheel, the heartbeat belongs to the wheel's executor: start, stop, mark and destroy
 * it there (checked with IDLEWHEEL_CHECK_EXECUTOR). Destroying it unlinks its entry in O(1):
 * the handler never runs afterwards.
 *
 * @par Errors
 * Limits: start() throws error::too_many_pending at wheel_options::max_pending (or
 * error::stopped); once running, re-arming its own entry never counts against max_pending.
 * Outcomes are counted in the liveness_stats given at construction (none if null).
 */
template <class Wheel>
class basic_heartbeat {
public:
    using duration = typename Wheel::duration;  ///< The wheel's duration.
    /// Where the heartbeat's state machine is.
    enum class state {
        stopped,        ///< not started, stopped, disabled (ping_interval 0), or its wheel stopped
        waiting,        ///< waiting for ping_interval of quiet
        awaiting_pong,  ///< a ping was asked for; waiting for anything from the peer
        dead            ///< dead_peer was reported
    };

    /// A heartbeat on `wheel` that calls `handler`, counting pings and dead peers in `*stats`
    /// (if not null). Stopped until start().
    /// @param wheel the wheel; must outlive the heartbeat.
    /// @param handler what an event calls (bind_member<&T::f>(self) for a member function).
    /// @param options the times (set_options()).
    /// @param stats the counters, or null; must outlive the heartbeat.
    /// @throws std::invalid_argument if ping_interval > 0 and pong_timeout <= 0.
    basic_heartbeat(Wheel& wheel, heartbeat_handler handler, const heartbeat_options& options = {},
                    liveness_stats* stats = nullptr)
        : wheel_(&wheel), handler_(handler), stats_(stats) {
        set_options(options);
    }
    basic_heartbeat(const basic_heartbeat&) = delete;             ///< Not copyable (nor movable).
    basic_heartbeat& operator=(const basic_heartbeat&) = delete;  ///< Not copyable (nor movable).
    /// Unlinks its entry in O(1): the handler never runs afterwards.
    ~basic_heartbeat() = default;  // the node unlinks itself

    /// Starts (or restarts) from now, with the times of the latest set_options(): the peer
    /// counts as heard from now. When ping_interval is 0 the heartbeat is disabled: start()
    /// leaves it stopped (stopping it if it was running). Reads the clock once. Draws a new
    /// jitter offset.
    /// @throws system_error error::too_many_pending (a first start on a full wheel) or
    /// error::stopped; the heartbeat is then stopped.
    void start();

    /// Stops; no event until start(). O(1).
    void stop() noexcept;

    /// Something arrived from the peer (any frame, a pong, any byte). A load and a store; no
    /// clock, no timer (see idle_watch).
    void on_inbound() noexcept { heard_ = access::activity_mark(*wheel_); }

    /// Changes the times; they apply from the next start() (a running heartbeat keeps the
    /// times it was started with until then).
    /// @param o the times.
    /// @throws std::invalid_argument if ping_interval > 0 and pong_timeout <= 0 (nothing changes).
    void set_options(const heartbeat_options& o);

    /// The state machine's state.
    [[nodiscard]] state current() const noexcept { return state_; }
    /// This heartbeat's fixed jitter offset (for tests and metrics).
    [[nodiscard]] duration jitter_offset() const noexcept { return offset_; }

private:
    using access = detail::liveness_access<Wheel>;

    // t + a + b, saturating (a, b >= 0): a ping interval of duration::max() never pings.
    [[nodiscard]] static duration after(duration t, duration a, duration b) noexcept;

    // The latest time the peer was heard from, as of `now`: a time no earlier than it (a mark
    // of the epoch still open counts as now, and stays a mark until its epoch closes).
    [[nodiscard]] duration settle_heard(duration now) noexcept;

    // Re-arms its own entry for `at` (sooner if `heard_` could age out of the wheel's ring
    // before then). Never refused for max_pending; a stopped wheel ends the heartbeat.
    void arm(duration at, duration now) noexcept;

    // While a ping is unanswered, look again at the pong deadline, or one ping interval from
    // now if that is sooner: an answer only becomes visible at a check, and waiting for the
    // pong deadline alone would put the next ping pong_timeout after the last one instead of
    // ping_interval after the answer.
    [[nodiscard]] duration next_pong_check(duration now) const noexcept;

    void fire();

    // on_inbound() uses only these two: next to each other, it writes one cache line.
    Wheel* wheel_;
    std::int64_t heard_ = 0;  // an activity mark or a time (see wheel_core)
    heartbeat_handler handler_;
    timer_node node_{bind_member<&basic_heartbeat::fire>(this)};
    duration interval_{}, pong_timeout_{}, jitter_{}, offset_{};  // in force since start()
    // What set_options() gave, applied by start(): fire() reads only the times in force, so a
    // change (interval 0 in particular) never meets a schedule made with the old ones.
    duration next_interval_{}, next_pong_timeout_{}, next_jitter_{};
    duration ping_sent_{};
    liveness_stats* stats_;
    state state_ = state::stopped;
};

/// The heartbeat for idlewheel::wheel_timer (steady_clock).
using heartbeat = basic_heartbeat<wheel_timer>;

}  // namespace idlewheel

#include <idlewheel/impl/heartbeat.hpp>

#endif
