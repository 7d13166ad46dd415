// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_MANUAL_IO_HPP
#define IDLEWHEEL_TESTS_SUPPORT_MANUAL_IO_HPP

// Driving an io_context whose timers wait on idlewheel::manual_clock: move the time, then
// poll (never run(): see manual_clock.hpp). Tests read "advance 1 ms at a time for 250 ms" and
// every handler that became due ran at the manual time it became due, exactly.

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include "net.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace idlewheel::test {

/// wheel_options' default tick, which most tests use.
inline constexpr std::int64_t tick_ms = 10;

/// The first tick boundary at or after `ms` (ms since the wheel's origin).
[[nodiscard]] constexpr std::int64_t ceil_to_tick(std::int64_t ms) noexcept {
    return (ms + tick_ms - 1) / tick_ms * tick_ms;
}

// The clock is one process-wide value: it must be reset before anything reads it, hence a
// base class (bases are initialised before members).
struct clock_reset {
    clock_reset() { manual_clock::reset(); }
};

/// An io_context and the manual time t0 its test starts at.
struct manual_fixture : clock_reset {
    net::io_context io;
    manual_clock::time_point t0 = manual_clock::now();
};

/// ... and a wheel on it (default options unless a derived fixture passes others).
struct wheel_fixture : manual_fixture {
    using wheel_type = basic_wheel_timer<manual_clock>;
    wheel_fixture() = default;
    explicit wheel_fixture(const wheel_options& options) : wheel(io, options) {}
    wheel_type wheel{io};
};

// io_context::poll() stops a context that has run out of work, and a stopped context polls
// nothing until restart(). A test adds work between polls all the time, so every poll here
// restarts first; io.stopped() right after a poll still tells "no work was left".
inline std::size_t poll(net::io_context& io) {
    if (io.stopped()) io.restart();
    return io.poll();
}

// Moves the manual clock forward by `total`, `step` at a time, polling after each step (and
// once before the first, so that anything already due runs at the current time). Returns the
// number of handlers run.
inline std::size_t advance_and_poll(net::io_context& io, manual_clock::duration total,
                                    manual_clock::duration step = std::chrono::milliseconds(1)) {
    std::size_t handlers = poll(io);
    while (total > manual_clock::duration::zero()) {
        const auto d = std::min(step, total);
        manual_clock::advance(d);
        total -= d;
        handlers += poll(io);
    }
    return handlers;
}

// Advances `step` at a time until `done()` or `limit` has passed. Returns the time it took.
template <class Done>
manual_clock::duration advance_until(net::io_context& io, Done&& done, manual_clock::duration limit,
                                     manual_clock::duration step = std::chrono::milliseconds(1)) {
    const auto start = manual_clock::now();
    poll(io);
    while (!done() && manual_clock::now() - start < limit) {
        manual_clock::advance(step);
        poll(io);
    }
    return manual_clock::now() - start;
}

// Manual time elapsed since `t0`, in whole milliseconds: the unit every expectation is in
// (a plain number, so that Boost.Test can print it when an expectation fails).
inline std::int64_t ms_since(manual_clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(manual_clock::now() - t0).count();
}

// A session-like owner of a node, the way the library expects nodes to be used: records the
// manual time (ms since `t0`) of every expiry.
struct session {
    explicit session(manual_clock::time_point origin) : t0(origin) {}
    void on_timer() { fired.push_back(ms_since(t0)); }

    manual_clock::time_point t0;
    std::vector<std::int64_t> fired;
    timer_node node{bind_member<&session::on_timer>(this)};
};

}  // namespace idlewheel::test

#endif
