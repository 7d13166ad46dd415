// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_LIVENESS_RULES_HPP
#define IDLEWHEEL_CORE_LIVENESS_RULES_HPP

// The rules of a WebSocket's (or any session's) liveness, written once: the handshake
// deadline, reader idleness, the ping after silence, the pong deadline and the close bound.
// Both front doors run them: session_liveness (and so websocket_liveness, stream_liveness,
// member_liveness), which keeps its times in 32-bit units of tick / 16, and the
// tcp_stream's one-line WebSocket timeouts (beast/websocket_timeout.hpp), which keep Beast's
// two durations. Each keeps its state its own way and resolves it to times for one look;
// decide() says what is due and when to look next. Sans-I/O: no clock, no wheel, no socket.
//
// Time is an unsigned integer count (units) or a std::chrono::duration (elapsed since a
// fixed origin); never<Time>() is "no such deadline" and turns a rule off.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace idlewheel::detail {

// The phases of a session (session_liveness::phase has the same values, in this order).
enum class liveness_phase : std::uint8_t {
    stopped,    // not started, stopped, or not watched
    handshake,  // until the handshake completed: its hard deadline (and idleness, if asked)
    open,       // idleness and the heartbeat
    closing,    // a close handshake under its bound
    ended,      // a verdict was reached (or, for the stream, the connection ended)
};

// What one look found due. After `wait` and `send_ping` the session goes on; every other step
// is a verdict (liveness_event has the same values, one lower: send_ping is its first).
enum class liveness_step : std::uint8_t {
    wait,               // nothing due: look again at decision::next
    send_ping,          // silent for ping_after: send a ping, then look again (pong deadline)
    idle,               // no message for idle
    dead_peer,          // the ping was not answered by its deadline
    handshake_timeout,  // the handshake did not complete by its deadline
    close_timeout,      // the close did not complete by its bound
};

// "No such deadline": the largest Time.
template <class Time>
[[nodiscard]] constexpr Time never() noexcept {
    if constexpr (std::is_integral_v<Time>)
        return std::numeric_limits<Time>::max();
    else
        return Time::max();
}

// `t` plus `d`, saturated at never() (a rule that is off, or a sum past the range, is never).
template <class Time>
[[nodiscard]] constexpr Time after(Time t, Time d) noexcept {
    if (d <= Time{}) return t;  // a zero (or negative) time has passed at once
    if (d == never<Time>() || t >= never<Time>() - d) return never<Time>();
    return t + d;
}

// The configured times; never<Time>() turns a rule off.
template <class Time>
struct liveness_rules {
    Time handshake = never<Time>();   // from the start of the handshake to its end
    Time idle = never<Time>();        // no message for this long: idle
    Time ping_after = never<Time>();  // nothing from the peer for this long: send a ping
    Time pong = never<Time>();        // from the ping to an answer
    Time close = never<Time>();       // from the start of a close to its end
    bool idle_in_handshake = false;   // idleness in the handshake phase too

    // The hard deadline of a phase that began at `start` (handshake or closing).
    [[nodiscard]] constexpr Time phase_deadline(liveness_phase p, Time start) const noexcept {
        return after(start, p == liveness_phase::handshake ? handshake : close);
    }
    // The deadline of a ping sent at `sent`.
    [[nodiscard]] constexpr Time pong_deadline(Time sent) const noexcept { return after(sent, pong); }
};

// A session's state at one look, resolved to times by its owner.
template <class Time>
struct liveness_look {
    Time now{};       // the time of the look
    Time read{};      // the last message (idleness counts from it)
    Time heard{};     // the last sign of life from the peer; while a ping is unanswered, its time
    Time deadline{};  // the phase's hard deadline: handshake, close, or the unanswered ping's
    bool awaiting = false;  // a ping was sent and nothing was heard since (the owner clears it)
};

// What a look decided.
template <class Time>
struct liveness_decision {
    liveness_step step = liveness_step::wait;
    Time next = never<Time>();  // with wait: when to look again (never: nothing to watch)
};

// The rules, at one look: the first step due, or when to look next. When two are due at one
// look: in the handshake phase its deadline before idleness; in the open phase idleness
// before the heartbeat. A look that finds nothing due yet (an early one, or activity since)
// names the earliest time something may be due; never early.
template <class Time>
[[nodiscard]] constexpr liveness_decision<Time> decide(liveness_phase phase, const liveness_rules<Time>& rules,
                                                       const liveness_look<Time>& look) noexcept {
    constexpr Time off = never<Time>();
    using step = liveness_step;
    switch (phase) {
        case liveness_phase::handshake: {
            Time next = off;
            if (rules.handshake != off) {
                if (look.now >= look.deadline) return {step::handshake_timeout, off};
                next = look.deadline;
            }
            if (rules.idle_in_handshake && rules.idle != off) {
                const Time idle_at = after(look.read, rules.idle);
                if (look.now >= idle_at) return {step::idle, off};
                next = (std::min)(next, idle_at);
            }
            return {step::wait, next};
        }
        case liveness_phase::open: {
            Time next = off;
            if (rules.idle != off) {
                const Time idle_at = after(look.read, rules.idle);
                if (look.now >= idle_at) return {step::idle, off};
                next = idle_at;
            }
            if (rules.ping_after != off) {
                const Time ping_at = after(look.heard, rules.ping_after);
                if (look.awaiting) {
                    if (look.now >= look.deadline) return {step::dead_peer, off};
                    next = (std::min)({next, look.deadline, ping_at});
                } else {
                    if (look.now >= ping_at) return {step::send_ping, off};
                    next = (std::min)(next, ping_at);
                }
            }
            return {step::wait, next};
        }
        case liveness_phase::closing:
            if (rules.close == off) return {step::wait, off};
            if (look.now >= look.deadline) return {step::close_timeout, off};
            return {step::wait, look.deadline};
        default: return {step::wait, off};
    }
}

}  // namespace idlewheel::detail

#endif
