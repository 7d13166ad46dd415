// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_MANUAL_CLOCK_HPP
#define IDLEWHEEL_MANUAL_CLOCK_HPP

/** @file
 * @brief idlewheel::manual_clock: a clock that moves only when a test moves it.
 */

#include <idlewheel/detail/asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace idlewheel {

/**
 * A std::chrono clock that moves only when a test moves it (Seastar's manual_clock), so
 * timing logic is tested exactly and without sleeping:
 *
 *     idlewheel::manual_clock::reset();
 *     net::io_context io;
 *     idlewheel::basic_wheel_timer<idlewheel::manual_clock> wheel(io);
 *     wheel.schedule(50ms, [&] { fired = true; });
 *     idlewheel::manual_clock::advance(49ms); io.poll();   // not yet
 *     idlewheel::manual_clock::advance(1ms);  io.poll();   // fired
 *
 * Drive the io_context with poll()/poll_one() only, never run(): the Asio timer that waits on
 * this clock is told every wait is already over (see the wait_traits below), so the reactor
 * re-checks it on every poll and a wait completes on the first poll() after advance() has
 * moved the clock past it. run() would spin while such a wait is pending.
 *
 * The time is one process-wide value, like any clock's now(): tests call reset() first.
 *
 * Asio's wait_traits are specialized for it: every wait converts to a real wait of zero.
 *
 * @par Thread safety
 * now(), advance() and reset() are atomic (any thread); a wheel on this clock keeps its own
 * rules (its executor).
 */
class manual_clock {
public:
    using duration = std::chrono::nanoseconds;                 ///< Nanoseconds.
    using rep = duration::rep;                                 ///< The count type.
    using period = duration::period;                           ///< std::nano.
    using time_point = std::chrono::time_point<manual_clock>;  ///< A time of this clock.
    static constexpr bool is_steady = true;                    ///< Never goes back (unless reset()).

    /// The current time (starts at one hour; reset() and advance() move it).
    [[nodiscard]] static time_point now() noexcept {
        return time_point(duration(ticks().load(std::memory_order_acquire)));
    }

    /// Moves the time forward by `d` (>= 0).
    /// @param d how far.
    static void advance(duration d) noexcept { ticks().fetch_add(d.count(), std::memory_order_acq_rel); }

    /// Sets the time to `t`; only for the start of a test (time never goes back under a wheel).
    /// @param t the time (default: one hour after the epoch).
    static void reset(time_point t = time_point(std::chrono::hours(1))) noexcept {
        ticks().store(t.time_since_epoch().count(), std::memory_order_release);
    }

private:
    static std::atomic<rep>& ticks() noexcept {
        static std::atomic<rep> value{std::chrono::nanoseconds(std::chrono::hours(1)).count()};
        return value;
    }
};

}  // namespace idlewheel

// Asio converts "time until expiry" into a real wait with these traits. For a manual clock
// the real wait must be zero: then the reactor checks the timer (against manual_clock::now())
// on every poll, instead of sleeping for a span of real time that means nothing here.
/// @cond IDLEWHEEL_SPECIALIZATIONS
template <>
struct idlewheel::net::wait_traits<idlewheel::manual_clock> {
    static idlewheel::manual_clock::duration to_wait_duration(const idlewheel::manual_clock::duration&) {
        return idlewheel::manual_clock::duration::zero();
    }
    static idlewheel::manual_clock::duration to_wait_duration(const idlewheel::manual_clock::time_point&) {
        return idlewheel::manual_clock::duration::zero();
    }
};
/// @endcond

#endif
