// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_LIVENESS_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_LIVENESS_SCENE_HPP

// A deterministic stage for the liveness tests (idle_watch, heartbeat, operation_deadline):
// one io_context and one wheel on idlewheel::manual_clock, time in whole milliseconds since
// the wheel's origin, moved 1 ms at a time with a poll after every step (never run(): see
// manual_clock.hpp).
//
// One convention matters for exact expectations. "Activity at t" means: the clock has reached
// t and the activity happens before the io_context is polled at t, as a socket handler queued
// ahead of the wheel's own wake-up would. step_to() therefore calls its `at(t)` hook after
// advancing and before polling. Activity after the poll at a tick boundary is the same instant
// on the manual clock but really happens after the wheel's wake-up (a few nanoseconds later on
// a real clock); tests that need it call act after poll() themselves and say so.

#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace idlewheel::test::liveness {

using namespace std::chrono_literals;
using wheel_type = basic_wheel_timer<manual_clock>;

/// wheel_options' default tick, which every liveness test uses.
inline constexpr std::int64_t tick_ms = 10;

/// The first tick boundary at or after `ms` (ms since the wheel's origin).
[[nodiscard]] constexpr std::int64_t ceil_to_tick(std::int64_t ms) noexcept {
    return (ms + tick_ms - 1) / tick_ms * tick_ms;
}

// The clock is one process-wide value: it must be reset before the scene's members read it,
// hence a base class (bases are initialised before members).
struct clock_reset {
    clock_reset() { manual_clock::reset(); }
};

class scene : private clock_reset {
public:
    explicit scene(const wheel_options& options = {}) : wheel(io, options) {}
    scene(const scene&) = delete;
    scene& operator=(const scene&) = delete;

    /// Manual time since the wheel's origin, in ms: the unit of every expectation, and a plain
    /// number so that Boost.Test prints it when an expectation fails.
    [[nodiscard]] std::int64_t now_ms() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(manual_clock::now() - t0).count();
    }

    /// Runs every ready handler at the current time. poll() leaves a context that ran out of
    /// work stopped, and tests add work between polls all the time: restart it first.
    std::size_t poll() {
        if (io.stopped()) io.restart();
        return io.poll();
    }

    /// Moves 1 ms at a time up to `t_ms` (absolute, ms since t0), calling `at(t)` at each new
    /// time before polling (see the convention above).
    template <class At>
    void step_to(std::int64_t t_ms, At&& at) {
        poll();
        while (now_ms() < t_ms) {
            manual_clock::advance(1ms);
            at(now_ms());
            poll();
        }
    }
    void step_to(std::int64_t t_ms) {
        step_to(t_ms, [](std::int64_t) {});
    }

    /// Steps until `done()` holds or `t_ms` is reached; returns whether `done()` held.
    template <class Done>
    bool step_until(Done&& done, std::int64_t t_ms) {
        poll();
        while (!done() && now_ms() < t_ms) {
            manual_clock::advance(1ms);
            poll();
        }
        return done();
    }

    boost::asio::io_context io;
    const manual_clock::time_point t0 = manual_clock::now();  // the wheel's origin: tick 0 starts here
    wheel_type wheel;
    idlewheel::liveness_stats live;  // what the liveness objects of a test report (pass &live)
};

}  // namespace idlewheel::test::liveness

#endif
