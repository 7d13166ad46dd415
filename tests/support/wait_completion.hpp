// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_WAIT_COMPLETION_HPP
#define IDLEWHEEL_TESTS_SUPPORT_WAIT_COMPLETION_HPP

// The completion handler of the async_wait tests (test_wheel_timer_async_wait*.cpp, one
// executable): it must be called exactly once and records how.

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include "manual_io.hpp"

#include <chrono>
#include <cstdint>

namespace idlewheel::test::wait_completion {

using wheel_type = basic_wheel_timer<manual_clock>;

// Beast's "handler that must be called exactly once", and it records how: `initiating` is
// true while the initiating function runs, so a call from inside it is caught.
struct completion {
    int calls = 0;
    error_code ec;
    std::int64_t at = -1;
    bool called_inside_initiation = false;
    bool initiating = false;
};

struct completion_handler {
    completion* c;
    manual_clock::time_point t0;
    void operator()(error_code ec) const {
        ++c->calls;
        c->ec = ec;
        c->at = ms_since(t0);
        if (c->initiating) c->called_inside_initiation = true;
    }
};

// Starts a wait whose handler records into `c`, noting whether it ran before the call returned.
template <class Wrap>
void start_wait(wheel_type& wheel, std::chrono::nanoseconds delay, completion& c, manual_clock::time_point t0,
                Wrap&& wrap) {
    c.initiating = true;
    wheel.async_wait(delay, wrap(completion_handler{&c, t0}));
    c.initiating = false;
}

inline void start_wait(wheel_type& wheel, std::chrono::nanoseconds delay, completion& c, manual_clock::time_point t0) {
    start_wait(wheel, delay, c, t0, [](auto h) { return h; });
}

}  // namespace idlewheel::test::wait_completion

#endif
