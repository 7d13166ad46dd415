// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_SESSION_LIVENESS_HPP
#define IDLEWHEEL_SESSION_LIVENESS_HPP

/** @file
 * @brief idlewheel::session_liveness: every timeout of one session in one small object, on one wheel entry.
 *
 * member_liveness has its own header, idlewheel/member_liveness.hpp, which this header
 * includes at its end: code that includes only this header and uses member_liveness compiles.
 */

#include <idlewheel/bind_member.hpp>
#include <idlewheel/callback.hpp>
#include <idlewheel/core/activity_epochs.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/core/liveness_rules.hpp>
#include <idlewheel/detail/jitter.hpp>
#include <idlewheel/detail/liveness_access.hpp>
#include <idlewheel/core/timer_entry.hpp>
#include <idlewheel/core/wheel_core.hpp>
#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace idlewheel {

/// What a session_liveness tells its handler. send_ping asks for a ping; every other event is
/// a verdict that ends (idle: starts closing) the session.
enum class liveness_event : std::uint8_t {
    send_ping,          ///< quiet for ping_interval: send a ping (at most one awaited at a time)
    idle,               ///< no message for idle_timeout: close the session (the closing phase has begun)
    dead_peer,          ///< the ping was not answered within pong_timeout: drop the connection
    handshake_timeout,  ///< the handshake did not finish in time: drop the connection
    close_timeout,      ///< the close handshake did not finish in time: drop the connection
};

/// A name for logs: "send ping", "idle", "dead peer", "handshake timeout", "close timeout".
/// @param e the event.
/// @return a static string.
[[nodiscard]] constexpr const char* to_string(liveness_event e) noexcept {
    switch (e) {
        case liveness_event::send_ping: return "send ping";
        case liveness_event::idle: return "idle";
        case liveness_event::dead_peer: return "dead peer";
        case liveness_event::handshake_timeout: return "handshake timeout";
        case liveness_event::close_timeout: return "close timeout";
    }
    return "liveness";
}

/// The times of a session_liveness; 0 turns a part off.
struct session_liveness_options {
    std::chrono::nanoseconds handshake_timeout{0};  ///< start_handshake() to handshake_done()
    std::chrono::nanoseconds idle_timeout{0};       ///< no message (on_read()) for this long: idle
    std::chrono::nanoseconds ping_interval{0};      ///< nothing from the peer for this long: send_ping
    std::chrono::nanoseconds pong_timeout{0};       ///< time to answer a ping; must be > 0 with ping_interval
    std::chrono::nanoseconds jitter{0};             ///< spread of the per-session offset added to ping_interval
    std::chrono::nanoseconds close_timeout{0};      ///< start_close() / on_peer_close() / idle to the end of the close
    /// Reader idle in the handshake phase too, beside the handshake deadline, for a protocol
    /// whose handshake is its first request and whose idle time may be the shorter (HTTP: a
    /// connection that sends nothing for idle_timeout is idle, not slow). Idle then runs from
    /// start_handshake(), on_read() starts it again, and the handshake deadline stays hard:
    /// each is its own verdict, counted as itself (reader_idle, handshake_timeouts); when both
    /// are due at one look, the handshake deadline. An idle verdict in the handshake phase is
    /// the open phase's: the closing phase begins (close_timeout bounds it) and
    /// handshake_done() is false from then on. Off (the default), or with idle_timeout 0: the
    /// handshake phase watches its deadline only, and idle runs from handshake_done().
    bool idle_in_handshake = false;
};

template <class Wheel>
class basic_session_liveness;

/// What every session of a thread shares: the wheel, the times (converted once), the handler
/// and the stats. Must outlive its sessions; not copyable or movable (they point at it).
template <class Wheel>
class basic_session_liveness_config : private detail::entry_table {
public:
    using session_type = basic_session_liveness<Wheel>;  ///< The sessions it serves.
    using duration = typename Wheel::duration;           ///< The wheel's duration.

    /// The handler: a callback called with the session and the event, last (it may destroy
    /// the session). What bind_member<&T::on_event>(self) converts to, for a `void
    /// T::on_event(session_type& session, liveness_event event)`; or `{&function, context}`
    /// (a captureless lambda taking `void* context` first fits `function`).
    using bound_handler = callback<void(session_type& session, liveness_event event)>;
    /// The handler's function apart from its context, the form of 1.0: bound_handler's
    /// `function_type`.
    /// @deprecated Use bound_handler (bound_handler::function_type for the function alone); 2.0 drops it.
    using handler_type [[deprecated("use bound_handler (bound_handler::function_type for the function alone)")]] =
        typename bound_handler::function_type;

    /// The config of the sessions of `wheel`.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times, converted once to units of tick / 16 (rounded up).
    /// @param handler called for every event of every session (bind_member<&T::on_event>(self)).
    /// @param stats the counters, or null; must outlive the config.
    /// @throws std::invalid_argument if ping_interval > 0 and pong_timeout <= 0, or a time is
    /// at or above 2^29 units (see basic_session_liveness, Cost), or ping_interval + jitter +
    /// pong_timeout is.
    basic_session_liveness_config(Wheel& wheel, const session_liveness_options& options, bound_handler handler,
                                  liveness_stats* stats = nullptr);

    /// The same, with the handler as a function and its context apart: the form of 1.0.
    /// @deprecated Write `bound_handler{handler, context}` (the constructor above); 2.0 drops it.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times, as above.
    /// @param handler called for every event of every session.
    /// @param context the handler's first argument.
    /// @param stats the counters, or null; must outlive the config.
    /// @throws std::invalid_argument as above.
    [[deprecated("use bound_handler{handler, context}")]] basic_session_liveness_config(
        Wheel& wheel, const session_liveness_options& options, typename bound_handler::function_type handler,
        void* context = nullptr, liveness_stats* stats = nullptr)
        : basic_session_liveness_config(wheel, options, bound_handler{handler, context}, stats) {}
    basic_session_liveness_config(const basic_session_liveness_config&) = delete;  ///< Not copyable (nor movable).
    /// Not copyable (nor movable).
    basic_session_liveness_config& operator=(const basic_session_liveness_config&) = delete;

    /// The wheel.
    [[nodiscard]] Wheel& wheel() const noexcept { return *wheel_; }
    /// The options as given.
    [[nodiscard]] const session_liveness_options& options() const noexcept { return options_; }
    /// The counters, or null.
    [[nodiscard]] liveness_stats* stats() const noexcept { return stats_; }
    /// The unit the sessions keep their times in.
    [[nodiscard]] duration unit() const noexcept { return unit_; }

protected:
    /// For a transport layer that handles events itself before its user (beast, stream).
    /// @param handler the new handler.
    void set_handler(bound_handler handler) noexcept { handler_ = handler; }
    /// The same, the form of 1.0.
    /// @deprecated Write `set_handler(bound_handler{handler, context})`; 2.0 drops it.
    /// @param handler the new handler's function.
    /// @param context its first argument.
    [[deprecated("use set_handler(bound_handler{handler, context})")]] void set_handler(
        typename bound_handler::function_type handler, void* context) noexcept {
        handler_ = bound_handler{handler, context};
    }

private:
    friend class basic_session_liveness<Wheel>;
    static constexpr std::uint64_t limit = std::uint64_t{1} << 29;

    // A configured time in units, rounded up (never early).
    [[nodiscard]] std::uint32_t units(std::chrono::nanoseconds t) const;

    Wheel* wheel_;
    bound_handler handler_;
    liveness_stats* stats_;
    duration unit_{};
    std::uint32_t handshake_ = 0, idle_ = 0, interval_ = 0, pong_ = 0, jitter_ = 0, close_ = 0;
    bool idle_in_handshake_ = false;  // options.idle_in_handshake with an idle_timeout
    session_liveness_options options_;
};

/**
 * Every timeout of one session in one small object, on one wheel entry
 * (idlewheel::session_liveness is `basic_session_liveness<wheel_timer>`). The sans-I/O state
 * machine under idlewheel/beast/websocket_liveness.hpp (WebSocket) and
 * idlewheel/stream_liveness.hpp (raw TCP); it knows no socket and works with standalone Asio
 * too. member_liveness (idlewheel/member_liveness.hpp, which this header includes) calls a
 * member function of the session that holds it. Its rules (the phases below and what each
 * decides) are written once, in core/liveness_rules.hpp, and shared with the one-line
 * WebSocket timeouts of idlewheel::beast::set_option(ws, timeout), which run them with
 * Beast's times on the tcp_stream.
 *
 * @tparam Wheel the wheel type (a basic_wheel_timer).
 *
 * @par Phases
 * @verbatim
   stopped --start_handshake()--> handshake --handshake_done()--> open --start_close()--> closing
                                      |                            | \--on_peer_close()--/  |
                                      | handshake_timeout     idle | dead_peer     close_timeout
                                      v                            v    v                   v
                                                      ended (a verdict, see verdict())
   @endverbatim
 *
 *  - handshake: a hard deadline from start_handshake() (call it at accept, before reading the
 *    HTTP request: bytes arriving never extend it) to handshake_done(); with
 *    session_liveness_options::idle_in_handshake, reader idleness beside it, from
 *    start_handshake() (verdict idle, which starts the closing phase as in the open phase);
 *  - open: reader idleness (no message for idle_timeout: verdict idle, which also starts the
 *    closing phase) and a heartbeat (after ping_interval + this session's jitter offset
 *    without anything from the peer, event send_ping; nothing within pong_timeout after it:
 *    verdict dead_peer). At most one ping is awaited at a time;
 *  - closing: a deadline (close_timeout) on the close handshake, whoever started it; hard,
 *    unless the session reports write progress (on_write_progress(): then close_timeout
 *    without progress, for a session that sends what it queued before closing).
 *
 * @par Cost
 * Cost per session: the object is its own (one) wheel entry, always due at the earliest of its
 * deadlines and moved only when it comes due (Netty's lazy re-arm), plus 16 bytes of state:
 * two 32-bit activity fields (a compact activity mark, or a time), the current phase's hard
 * deadline as a 32-bit time, and three bytes of phase, flags and verdict. Times are kept in
 * units of tick / 16 (of the tick when it does not divide by 16), relative to the present
 * with serial-number arithmetic: every configured time must stay below 2^29 units (3.9 days
 * on the default 10 ms tick; the options' constructor checks). Options, the wheel, the
 * handler and the stats live in a session_liveness_config shared by all sessions of a thread.
 * The jitter offset is derived from the object's address: no storage.
 *
 * A touch (on_read(), on_inbound()) reads no clock and touches no timer: it stores the
 * wheel's current activity epoch (core/activity_epochs.hpp) in one 32-bit field.
 *
 * @par Precision
 * Never early. Idle and heartbeat outcomes come at most two ticks (plus wake-up
 * delays) after their time, as idle_watch's; deadlines (handshake, pong, close) at most one
 * tick after (plus one unit of tick / 16 when they do not fall on a unit boundary).
 *
 * @par Completion
 * The handler (the config's) runs on the wheel's executor with the session and the event; it
 * is called last: the object touches nothing after it returns, so it may stop, restart or
 * destroy the session. Destroying the object unlinks its entry in O(1); no handler runs for a
 * destroyed session.
 *
 * @par Thread safety
 * Like the wheel, the object and its config belong to the wheel's executor: start, mark, stop
 * and destroy it there (checked with IDLEWHEEL_CHECK_EXECUTOR).
 *
 * @par Errors
 * Limits: the first arm (start_handshake() or start() of an object whose entry is not in the
 * wheel) counts against wheel_options::max_pending and throws error::too_many_pending past it
 * (or error::stopped); once running, the object moves its own entry and keeps its place. A
 * stopped wheel ends the object (phase() turns stopped).
 *
 * Outcomes are counted in the config's liveness_stats: idle -> reader_idle, send_ping ->
 * pings_sent, dead_peer -> dead_peers, handshake_timeout -> handshake_timeouts,
 * close_timeout -> close_timeouts.
 */
template <class Wheel>
class basic_session_liveness : private detail::shared_entry {
public:
    using config_type = basic_session_liveness_config<Wheel>;  ///< The shared config.
    using duration = typename Wheel::duration;                 ///< The wheel's duration.
    /// The session's phase (the diagram above).
    enum class phase : std::uint8_t {
        stopped,    ///< not started, or stop(), or its wheel stopped
        handshake,  ///< start_handshake() until handshake_done()
        open,       ///< idle and heartbeat watched
        closing,    ///< a close handshake under close_timeout
        ended       ///< a verdict was reached (verdict())
    };

    /// A stopped session of `config`.
    /// @param config the config; must outlive the object.
    explicit basic_session_liveness(const config_type& config) noexcept : shared_entry(&config, kind::liveness) {}
    basic_session_liveness(const basic_session_liveness&) = delete;             ///< Not copyable (nor movable).
    basic_session_liveness& operator=(const basic_session_liveness&) = delete;  ///< Not copyable (nor movable).
    /// Unlinks the entry in O(1): no handler runs for a destroyed session.
    ~basic_session_liveness() = default;  // the entry unlinks itself

    /// Enters the handshake phase with its deadline (none if handshake_timeout is 0), and with
    /// reader idle from now if the options ask for it (idle_in_handshake). Call it at accept,
    /// before reading anything. Reads the clock once.
    /// @throws system_error error::too_many_pending or error::stopped (then stopped).
    void start_handshake();

    /// The handshake completed: enters the open phase (idle and heartbeat from now). False if
    /// the session is not in its handshake any more: the deadline passed before this success
    /// was reported (the connection is being dropped), it was idle (idle_in_handshake: it is
    /// closing), or it was stopped: do not trust it.
    [[nodiscard]] bool handshake_done();

    /// Enters the open phase directly (no handshake). Reads the clock once.
    /// @throws system_error error::too_many_pending or error::stopped (then stopped).
    void start();

    /// A message arrived: the session is not idle and the peer is alive (in the handshake
    /// phase, with idle_in_handshake, idle starts again; the deadline does not move). Two adjacent 32-bit stores
    /// (and once per tick for the whole wheel, a flag and a wake-up request). No clock.
    void on_read() noexcept { read_ = heard_ = access::compact_activity_mark(wheel()); }

    /// Something other than a message arrived (a pong, a ping, any control frame, any byte):
    /// the peer is alive; idleness is not affected.
    void on_inbound() noexcept { heard_ = access::compact_activity_mark(wheel()); }

    /// Starts our close: true if the caller should now send it (the session was open, and
    /// neither side had started a close); the close deadline runs from now. False otherwise:
    /// send nothing (Beast allows one close, and none once the peer started one).
    [[nodiscard]] bool start_close();

    /// The peer started a close: we will never start one; the close deadline bounds it.
    void on_peer_close();

    /// Write progress: part of what the session sends went out (a write, or part of one,
    /// completed). In the closing phase the close deadline starts again from now, so
    /// close_timeout bounds the time *without* progress, not the whole drain of what was
    /// queued before the close: a slow but steady reader is not cut, one that stops reading
    /// is dropped close_timeout after its last progress. Nothing in any other phase, and
    /// nothing if close_timeout is 0. Reads the clock once; the entry is not moved (it looks
    /// again when the earlier deadline comes due), so call it per completed write, as often
    /// as they come. Precision as start_close(): never early, at most one tick (plus one
    /// unit) after the last progress.
    void on_write_progress() noexcept;

    /// Stops every timeout; no event until a start. The verdict, if any, stays. O(1).
    void stop() noexcept;

    /// The current phase.
    [[nodiscard]] phase current() const noexcept { return phase_; }
    /// The verdict that ended the session (idle, dead_peer, handshake_timeout,
    /// close_timeout), if there was one. send_ping is never a verdict.
    [[nodiscard]] bool has_verdict() const noexcept { return verdict_ != 0; }
    /// The verdict; meaningful only if has_verdict().
    [[nodiscard]] liveness_event verdict() const noexcept { return static_cast<liveness_event>(verdict_ - 1); }
    /// True once a verdict other than idle was reached: the connection is being dropped, so a
    /// success reported now must not be trusted.
    [[nodiscard]] bool expired() const noexcept { return verdict_ != 0 && verdict() != liveness_event::idle; }
    /// True while a ping is awaited (between send_ping and anything from the peer).
    [[nodiscard]] bool awaiting_pong() const noexcept { return (flags_ & awaiting) != 0; }
    /// True if the peer started a close (on_peer_close()).
    [[nodiscard]] bool peer_closing() const noexcept { return (flags_ & peer_closed) != 0; }
    /// True while its entry is in the wheel.
    [[nodiscard]] bool armed() const noexcept { return linked(); }
    /// Its next decision time (its wheel entry's wheel_timer::expiry()): no event (idle,
    /// send_ping, dead_peer, a handshake or close timeout) comes before it. The entry re-arms
    /// lazily, so activity since it was armed is counted only then: the object may then
    /// re-arm instead of deciding. time_point::max() if not armed.
    [[nodiscard]] typename Wheel::time_point expiry() const noexcept;

    /// A flag the transport layer keeps here (one ping in flight): no storage of its own.
    [[nodiscard]] bool ping_in_flight() const noexcept { return (flags_ & ping_flight) != 0; }
    /// @param on whether a ping is in flight.
    void set_ping_in_flight(bool on) noexcept;

    /// This session's fixed jitter offset, derived from its address.
    [[nodiscard]] duration jitter_offset() const noexcept;

    /// The config, which is also this entry's table (the one pointer serves both).
    [[nodiscard]] const config_type& config() const noexcept { return static_cast<const config_type&>(*table_); }
    /// The config's wheel.
    [[nodiscard]] Wheel& wheel() const noexcept { return *config().wheel_; }

protected:
    /// For a derived class's re-bind (member_liveness::rebind()): the object as if newly
    /// constructed on `config` at the same address, stopped. Its entry leaves the wheel (no
    /// event of the old config comes after this call); nothing is counted; the verdict, the
    /// flags and the activity are cleared.
    /// @param config the config from now on; must be on this object's wheel and outlive it.
    /// @throws std::invalid_argument if `config` is on another wheel (nothing changed then).
    void rebind_config(const config_type& config);

private:
    friend class basic_session_liveness_config<Wheel>;  // its table fires and discards us
    using access = detail::liveness_access<Wheel>;
    static constexpr std::uint8_t awaiting = 1, ping_flight = 2, peer_closed = 4;
    static constexpr std::uint32_t low31 = detail::activity_epochs::compact_mark_bit - 1U;

    [[nodiscard]] std::uint64_t ceil_units(duration t) const noexcept;
    [[nodiscard]] std::uint64_t floor_units(duration t) const noexcept;
    [[nodiscard]] duration at_unit(std::uint64_t u) const noexcept;
    [[nodiscard]] static std::uint32_t time31(std::uint64_t u) noexcept;
    // A 31-bit time (within 2^30 units of `ref`) as a full count of units.
    [[nodiscard]] static std::uint64_t full31(std::uint32_t v, std::uint64_t ref) noexcept;
    // The 32-bit deadline (within 2^31 units of `ref`) as a full count of units.
    [[nodiscard]] static std::uint64_t full32(std::uint32_t v, std::uint64_t ref) noexcept;

    [[nodiscard]] std::uint64_t offset_units() const noexcept;

    // An activity field as a time in units (ceil), as of `now`: a compact mark of the epoch
    // still open counts as now; marks of closed epochs are stored back as times (settled) so
    // that no mark outlives the epochs' ring.
    [[nodiscard]] std::uint64_t settle(std::uint32_t& field, duration now, std::uint64_t now_u) const noexcept;

    void reset(phase p) noexcept;

    void enter_closing(duration now);

    void cancel_entry() noexcept { shared_entry::cancel(); }

    // The first arm of a start: counts against max_pending unless the entry is already in.
    void arm_first(duration now);

    // Moves its own entry: never refused for max_pending; a stopped wheel ends the session.
    void arm(duration now, std::uint64_t at_u) noexcept;

    static constexpr std::uint64_t never = ~std::uint64_t{0};

    // The phase as the rules (core/liveness_rules.hpp) name it: the same values.
    [[nodiscard]] detail::liveness_phase core_phase() const noexcept {
        return static_cast<detail::liveness_phase>(phase_);
    }
    // The config's times in units (never: off), with this session's jitter offset.
    [[nodiscard]] detail::liveness_rules<std::uint64_t> rules() const noexcept;
    // The state resolved to times for one look (settles the activity fields it reads).
    [[nodiscard]] detail::liveness_look<std::uint64_t> look(duration now, std::uint64_t now_u) noexcept;

    // When to look next, in units (never: nothing to watch).
    [[nodiscard]] std::uint64_t next_check(duration now) noexcept;

    static void act(timer_entry& e, detail::entry_action a);

    // Ends the session with a verdict, counts it, and calls the handler last.
    void conclude(liveness_event e, std::uint64_t liveness_stats::*counter);

    void notify(liveness_event e);

    // The idle verdict (open phase, or handshake phase with idle_in_handshake): it starts the
    // closing phase, unlike the other verdicts, which end the session.
    void idle_verdict(duration now);

    // The entry came due.
    void check();

    // After the entry (whose table pointer is the config), what a touch writes: one cache line.
    std::uint32_t read_ = 0;      // last message: a compact activity mark, or a 31-bit time
    std::uint32_t heard_ = 0;     // last sign of life from the peer: the same
    std::uint32_t deadline_ = 0;  // the phase's hard deadline (handshake, pong, close), 32-bit time
    phase phase_ = phase::stopped;
    std::uint8_t flags_ = 0;
    std::uint8_t verdict_ = 0;  // 1 + liveness_event, 0 for none
};

// The rules' phases and steps (core/liveness_rules.hpp) are this object's phases and events,
// value for value: the object converts them with a cast.
namespace detail {
template <class Phase>
[[nodiscard]] constexpr bool same_values(Phase a, liveness_phase b) noexcept {
    return static_cast<unsigned>(a) == static_cast<unsigned>(b);
}
[[nodiscard]] constexpr bool same_values(liveness_event a, liveness_step b) noexcept {
    return static_cast<unsigned>(a) + 1U == static_cast<unsigned>(b);
}
}  // namespace detail
static_assert(detail::same_values(basic_session_liveness<wheel_timer>::phase::stopped, detail::liveness_phase::stopped) &&
              detail::same_values(basic_session_liveness<wheel_timer>::phase::handshake, detail::liveness_phase::handshake) &&
              detail::same_values(basic_session_liveness<wheel_timer>::phase::open, detail::liveness_phase::open) &&
              detail::same_values(basic_session_liveness<wheel_timer>::phase::closing, detail::liveness_phase::closing) &&
              detail::same_values(basic_session_liveness<wheel_timer>::phase::ended, detail::liveness_phase::ended));
static_assert(detail::same_values(liveness_event::send_ping, detail::liveness_step::send_ping) &&
              detail::same_values(liveness_event::idle, detail::liveness_step::idle) &&
              detail::same_values(liveness_event::dead_peer, detail::liveness_step::dead_peer) &&
              detail::same_values(liveness_event::handshake_timeout, detail::liveness_step::handshake_timeout) &&
              detail::same_values(liveness_event::close_timeout, detail::liveness_step::close_timeout));

/// The session liveness config for idlewheel::wheel_timer (steady_clock).
using session_liveness_config = basic_session_liveness_config<wheel_timer>;
/// The session liveness for idlewheel::wheel_timer (steady_clock).
using session_liveness = basic_session_liveness<wheel_timer>;

}  // namespace idlewheel

#include <idlewheel/impl/session_liveness.hpp>

// member_liveness (a session_liveness that calls a member function of its session) has its own
// header; it is included here so that code including only this header keeps compiling.
#include <idlewheel/member_liveness.hpp>

#endif
