// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_REPEATING_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_REPEATING_SCENE_HPP

// The scene of the repeating_timer tests (test_repeating_timer*.cpp, one executable, three
// files): one io_context and one wheel on the manual clock (tick 10 ms unless a test says
// otherwise), stepped 1 ms at a time, and a ticker that owns a repeating timer and records
// every run.

#include <idlewheel/bind_member.hpp>
#include <idlewheel/error.hpp>
#include <idlewheel/repeating_timer.hpp>

#include "manual_io.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

// The names the tests use unqualified (they say `using namespace idlewheel::test::repeating;`).
namespace idlewheel::test::repeating {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::repeat_mode;
using idlewheel::test::clock_reset;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using idlewheel::test::tick_ms;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using timer_type = idlewheel::basic_repeating_timer<wheel_type>;

inline constexpr std::int64_t ms_ns = 1'000'000;

inline bool is_error(const idlewheel::system_error& e, idlewheel::error expected) {
    return e.code() == make_error_code(expected);
}


// One io_context and one wheel on the manual clock; the wheel's origin is t0.
struct scene : clock_reset {
    explicit scene(const idlewheel::wheel_options& options = {}) : wheel(io, options) {}

    [[nodiscard]] std::int64_t now_ms() const { return ms_since(t0); }
    [[nodiscard]] std::int64_t now_ns() const { return (manual_clock::now() - t0).count(); }

    // Polls until no handler is ready at the current time. An exception that leaves poll() is
    // counted and polling goes on, as a server calls run() again.
    std::size_t settle() {
        std::size_t thrown = 0;
        for (;;) {
            try {
                if (poll(io) == 0) return thrown;
            } catch (const std::runtime_error&) {
                ++thrown;
            }
        }
    }

    // Moves 1 ms at a time to `ms` since t0, settling after each step. Returns the exceptions.
    std::size_t step_to(std::int64_t ms) {
        std::size_t thrown = settle();
        while (now_ms() < ms) {
            manual_clock::advance(1ms);
            thrown += settle();
        }
        return thrown;
    }

    net::io_context io;
    const manual_clock::time_point t0 = manual_clock::now();
    wheel_type wheel;
};

// The owner of a repeating timer, recording every run (ms since t0, missed()) and doing what
// the test asks inside the callback.
struct ticker {
    template <class Rep, class Period>
    ticker(scene& sc, std::chrono::duration<Rep, Period> period, const idlewheel::repeat_options& options = {})
        : s(&sc) {
        timer.emplace(sc.wheel, idlewheel::bind_member<&ticker::fire>(this), period, options);
    }

    void fire() {
        at.push_back(s->now_ms());
        missed.push_back(timer->missed());
        running_inside.push_back(timer->running());
        if (on_run) on_run(*this);
    }

    scene* s;
    std::vector<std::int64_t> at;
    std::vector<std::uint64_t> missed;
    std::vector<bool> running_inside;
    std::function<void(ticker&)> on_run;
    std::optional<timer_type> timer;
};

using times = std::vector<std::int64_t>;

}  // namespace idlewheel::test::repeating

#endif
