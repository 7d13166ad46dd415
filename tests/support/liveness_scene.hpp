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

#include "manual_io.hpp"
#include "net.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace idlewheel::test::liveness {

using namespace std::chrono_literals;
using wheel_type = basic_wheel_timer<manual_clock>;

// wheel_options' default tick (every liveness test uses it), the tick rounding and the clock
// reset are the ones of manual_io.hpp.
using test::ceil_to_tick;
using test::clock_reset;
using test::tick_ms;

/// What a liveness handler reported and when: the kind (an idle_kind, a heartbeat_event, ...),
/// idle_watch's `first` flag (false where there is none) and the manual time in ms since t0.
template <class Kind>
struct event {
    Kind kind;
    bool first;
    std::int64_t at;
};

/// The reports of one handler, in order, with the views the expectations compare.
template <class Kind>
struct event_log {
    std::vector<event<Kind>> events;

    void add(Kind kind, bool first, std::int64_t at) { events.push_back({kind, first, at}); }
    [[nodiscard]] std::vector<std::int64_t> times(Kind kind) const {
        std::vector<std::int64_t> out;
        for (const auto& e : events)
            if (e.kind == kind) out.push_back(e.at);
        return out;
    }
    [[nodiscard]] std::vector<bool> firsts(Kind kind) const {
        std::vector<bool> out;
        for (const auto& e : events)
            if (e.kind == kind) out.push_back(e.first);
        return out;
    }
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

    net::io_context io;
    const manual_clock::time_point t0 = manual_clock::now();  // the wheel's origin: tick 0 starts here
    wheel_type wheel;
    idlewheel::liveness_stats live;  // what the liveness objects of a test report (pass &live)
};

}  // namespace idlewheel::test::liveness

#endif
