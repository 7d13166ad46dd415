// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/repeating_timer.hpp>

// basic_repeating_timer on idlewheel::manual_clock (tick 10 ms unless a test says otherwise):
// time moves only when a test moves it and the io_context is driven by poll() alone, so every
// expectation is an exact time or count. The model test at the end checks random operation
// sequences against a reference of when each round must run.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE repeating_timer
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <ratio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// Allocation counting for the "zero allocation per round" test: every operator new of this
// program goes through here. Not inlined: GCC's -Wmismatched-new-delete would otherwise see
// free() meet a pointer from operator new at every inlined delete.
namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

[[gnu::noinline]] void* operator new(std::size_t n) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::repeat_mode;
using idlewheel::test::clock_reset;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using idlewheel::test::tick_ms;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using timer_type = idlewheel::basic_repeating_timer<wheel_type>;

constexpr std::int64_t ms_ns = 1'000'000;

bool is_error(const idlewheel::system_error& e, idlewheel::error expected) {
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

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(construction)

BOOST_AUTO_TEST_CASE(periods_are_validated_rounded_up_and_saturated) {
    scene s;
    const idlewheel::timer_callback none{[](void*) {}, nullptr};
    BOOST_CHECK_THROW(timer_type(s.wheel, none, 0ms), std::invalid_argument);
    BOOST_CHECK_THROW(timer_type(s.wheel, none, -1ms), std::invalid_argument);
    BOOST_CHECK_THROW(timer_type(s.wheel, none, std::chrono::duration<double>(std::nan(""))), std::invalid_argument);
    BOOST_CHECK_THROW(timer_type(s.wheel, none, std::chrono::duration<double>(-0.5)), std::invalid_argument);

    const timer_type third(s.wheel, none, std::chrono::duration<std::int64_t, std::ratio<1, 3>>(1));
    BOOST_TEST(third.period().count() == 333'333'334);  // rounded up: never early
    const timer_type tiny(s.wheel, none, std::chrono::duration<double, std::nano>(0.25));
    BOOST_TEST(tiny.period().count() == 1);
    const timer_type huge(s.wheel, none, std::chrono::hours::max());
    BOOST_TEST(huge.period().count() == std::chrono::nanoseconds::max().count());
    const timer_type dbl(s.wheel, none, std::chrono::duration<double>(1e300));
    BOOST_TEST(dbl.period().count() == std::chrono::nanoseconds::max().count());

    BOOST_TEST(!third.running());
    BOOST_TEST(third.runs() == 0U);
    BOOST_TEST(third.missed_total() == 0U);
    BOOST_TEST((third.mode() == repeat_mode::fixed_delay));
    BOOST_TEST(&third.wheel() == &s.wheel);
    BOOST_TEST(s.wheel.pending() == 0U);
    BOOST_TEST(s.io.poll() == 0U);  // constructing posts nothing
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(operations)

BOOST_AUTO_TEST_CASE(fixed_delay_runs_every_period) {
    scene s;
    ticker t(s, 50ms);
    s.step_to(7);
    t.timer->start();  // first round due at 57
    BOOST_TEST(t.timer->running());
    BOOST_TEST(s.wheel.pending() == 1U);
    s.step_to(300);
    BOOST_TEST(t.at == (times{60, 110, 160, 210, 260}), boost::test_tools::per_element());
    BOOST_TEST(t.timer->runs() == 5U);
    BOOST_TEST(t.timer->missed_total() == 0U);
    for (const bool r : t.running_inside) BOOST_TEST(r);
}

BOOST_AUTO_TEST_CASE(start_while_running_does_nothing) {
    scene s;
    ticker t(s, 50ms);
    t.timer->start();
    s.step_to(30);
    t.timer->start();  // the round due at 50 stays
    s.step_to(100);
    BOOST_TEST(t.at == (times{50, 100}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(stop_and_start_again) {
    scene s;
    ticker t(s, 20ms);
    BOOST_TEST(!t.timer->stop());  // not running
    t.timer->start();
    s.step_to(45);
    BOOST_TEST(t.timer->stop());
    BOOST_TEST(!t.timer->running());
    BOOST_TEST(s.wheel.pending() == 0U);
    BOOST_TEST(!t.timer->stop());
    s.step_to(200);
    BOOST_TEST(t.at == (times{20, 40}), boost::test_tools::per_element());
    t.timer->start();  // from now: 220
    s.step_to(245);
    BOOST_TEST(t.at == (times{20, 40, 220, 240}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(restart_starts_a_fresh_round_running_or_not) {
    scene s;
    ticker t(s, 30ms);
    t.timer->restart();  // a stopped timer: starts it
    BOOST_TEST(t.timer->running());
    s.step_to(25);
    t.timer->restart();  // the round due at 30 is replaced by one due at 55
    s.step_to(100);
    BOOST_TEST(t.at == (times{60, 90}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reset_sets_the_period_and_restarts_a_running_timer) {
    scene s;
    ticker t(s, 30ms);
    t.timer->reset(100ms);  // stopped: only the period
    BOOST_TEST(!t.timer->running());
    BOOST_TEST(t.timer->period().count() == std::chrono::nanoseconds(100ms).count());
    s.step_to(5);
    t.timer->start();  // due at 105
    s.step_to(50);
    t.timer->reset(20ms);  // a fresh round of 20 ms from 50
    s.step_to(95);
    BOOST_TEST(t.at == (times{70, 90}), boost::test_tools::per_element());
    BOOST_CHECK_THROW(t.timer->reset(0ms), std::invalid_argument);  // nothing changes
    BOOST_TEST(t.timer->period().count() == std::chrono::nanoseconds(20ms).count());
    s.step_to(101);
    t.timer->reset();  // the same period, from 101: 121 (the round due at 110 is replaced)
    s.step_to(125);
    BOOST_TEST(t.at == (times{70, 90}), boost::test_tools::per_element());
    s.step_to(130);
    BOOST_TEST(t.at == (times{70, 90, 130}), boost::test_tools::per_element());
    t.timer->stop();
    t.timer->reset();  // stopped: nothing
    BOOST_TEST(!t.timer->running());
    s.step_to(300);
    BOOST_TEST(t.at.size() == 3U);
}

BOOST_AUTO_TEST_CASE(run_once_now_is_posted_never_inline) {
    scene s;
    ticker t(s, 50ms);
    BOOST_TEST(!t.timer->run_once_now());  // not running: nothing
    BOOST_TEST(s.settle() == 0U);
    BOOST_TEST(t.at.empty());

    t.timer->start();
    s.step_to(20);
    BOOST_TEST(t.timer->run_once_now());
    BOOST_TEST(t.at.empty());  // not inside the call
    BOOST_TEST(t.timer->running());
    BOOST_TEST(t.timer->run_once_now());  // several calls: one run
    BOOST_TEST(s.wheel.pending() == 1U);  // the timer keeps its one entry
    BOOST_TEST(s.io.poll_one() == 1U);  // the posted handler, at the same time
    BOOST_TEST(t.at == (times{20}), boost::test_tools::per_element());
    s.step_to(150);  // the round due at 50 was dropped; a new one from 20: 70, then 120
    BOOST_TEST(t.at == (times{20, 70, 120}), boost::test_tools::per_element());
    BOOST_TEST(t.timer->runs() == 3U);
}

BOOST_AUTO_TEST_CASE(run_once_now_fixed_rate_takes_its_phase_from_the_run) {
    scene s;
    ticker t(s, 40ms, {.mode = repeat_mode::fixed_rate});
    t.timer->start();
    s.step_to(13);
    t.timer->run_once_now();
    s.settle();
    s.step_to(140);
    BOOST_TEST(t.at == (times{13, 60, 100, 140}), boost::test_tools::per_element());
    BOOST_TEST(t.missed == (std::vector<std::uint64_t>{0, 0, 0, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(stop_restart_reset_or_destruction_cancel_a_posted_run) {
    scene s;
    ticker t(s, 50ms);
    t.timer->start();
    t.timer->run_once_now();
    t.timer->stop();
    s.settle();
    BOOST_TEST(t.at.empty());
    BOOST_TEST(!t.timer->running());

    t.timer->start();
    t.timer->run_once_now();
    t.timer->restart();  // a fresh round from 0 instead
    s.step_to(49);
    BOOST_TEST(t.at.empty());
    t.timer->run_once_now();
    t.timer->reset(10ms);  // a fresh round from 49: 59, at the tick boundary 60
    s.step_to(59);
    BOOST_TEST(t.at.empty());
    s.step_to(60);
    BOOST_TEST(t.at == (times{60}), boost::test_tools::per_element());
    t.at.clear();

    t.timer->run_once_now();
    t.timer.reset();  // the posted handler finds nothing (ASan checks it touches nothing)
    s.settle();
    s.step_to(200);
    BOOST_TEST(t.at.empty());
    BOOST_TEST(s.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(set_callback_takes_effect_at_the_next_run) {
    scene s;
    ticker t(s, 10ms);
    int other = 0;
    t.timer->start();
    s.step_to(10);
    t.timer->set_callback({[](void* p) { ++*static_cast<int*>(p); }, &other});
    s.step_to(30);
    BOOST_TEST(t.at.size() == 1U);
    BOOST_TEST(other == 2);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(inside_the_callback)

BOOST_AUTO_TEST_CASE(stop_inside_the_callback_ends_the_timer) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 20ms, {.mode = mode});
        bool running_after_stop = true;
        t.on_run = [&](ticker& k) {
            if (k.at.size() == 2) {
                k.timer->stop();
                running_after_stop = k.timer->running();
            }
        };
        t.timer->start();
        s.step_to(200);
        BOOST_TEST(t.at == (times{20, 40}), boost::test_tools::per_element());
        BOOST_TEST(!running_after_stop);
        BOOST_TEST(!t.timer->running());
        BOOST_TEST(s.wheel.pending() == 0U);
    }
}

BOOST_AUTO_TEST_CASE(stop_then_start_inside_the_callback_starts_from_that_call) {
    scene s;
    ticker t(s, 20ms, {.mode = repeat_mode::fixed_rate});
    t.on_run = [](ticker& k) {
        if (k.at.size() != 1) return;
        k.timer->stop();
        manual_clock::advance(5ms);  // a slow callback: 25
        k.timer->start();            // due at 45
    };
    t.timer->start();
    s.step_to(80);
    BOOST_TEST(t.at == (times{20, 50, 70}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reset_and_restart_inside_the_callback_replace_the_next_round) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 20ms, {.mode = mode});
        t.on_run = [](ticker& k) {
            if (k.at.size() == 1) {
                k.timer->reset(50ms);       // from 20: 70
                manual_clock::advance(3ms);  // returns at 23: fixed-delay would have said 73
            } else if (k.at.size() == 2) {
                k.timer->restart();  // from 70: 120
            }
        };
        t.timer->start();
        s.step_to(175);
        BOOST_TEST(t.at == (times{20, 70, 120, 170}), boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(run_once_now_inside_the_callback_runs_again_after_it) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 30ms, {.mode = mode});
        t.on_run = [](ticker& k) {
            if (k.at.size() == 1) {
                BOOST_TEST(k.timer->run_once_now());
                BOOST_TEST(k.at.size() == 1U);  // not inline
            }
        };
        t.timer->start();
        s.step_to(30);
        BOOST_TEST(t.at == (times{30, 30}), boost::test_tools::per_element());
        s.step_to(100);
        BOOST_TEST(t.at == (times{30, 30, 60, 90}), boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(fixed_delay_counts_from_the_return_fixed_rate_from_the_deadline) {
    scene s;
    ticker delay(s, 50ms);
    ticker rate(s, 50ms, {.mode = repeat_mode::fixed_rate});
    const auto slow = [](ticker&) { manual_clock::advance(12ms); };  // the callback takes 12 ms
    delay.on_run = slow;
    rate.on_run = slow;
    delay.timer->start();
    rate.timer->start();
    s.step_to(400);
    // delay: 50 (returns 62, next 112 -> 120) ...; rate: its deadlines stay 50, 100, 150, ...
    BOOST_TEST(delay.at.size() >= 3U);
    for (std::size_t i = 1; i < delay.at.size(); ++i) BOOST_TEST(delay.at[i] - delay.at[i - 1] >= 62);
    for (std::size_t i = 0; i < rate.at.size(); ++i) {
        // Each run is at most one tick (plus the other timer's 12 ms) after 50 (i + 1).
        BOOST_TEST(rate.at[i] >= static_cast<std::int64_t>(50 * (i + 1)));
        BOOST_TEST(rate.at[i] <= static_cast<std::int64_t>(50 * (i + 1) + 12 + 12 + tick_ms));
    }
    BOOST_TEST(rate.at.size() + rate.timer->missed_total() >= 7U);
}

BOOST_AUTO_TEST_CASE(destroying_the_timer_inside_its_callback) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 20ms, {.mode = mode});
        ticker bystander(s, 20ms);
        t.on_run = [](ticker& k) { k.timer.reset(); };
        t.timer->start();
        bystander.timer->start();
        s.step_to(100);
        BOOST_TEST(t.at == (times{20}), boost::test_tools::per_element());
        BOOST_TEST(!t.timer.has_value());
        BOOST_TEST(bystander.at.size() == 5U);  // the wheel goes on
        BOOST_TEST(s.wheel.pending() == 1U);
    }
}

// On the heap, so that AddressSanitizer reports any access of the timer after the callback
// destroyed it (an optional keeps its storage).
BOOST_AUTO_TEST_CASE(destroying_a_heap_timer_inside_its_callback) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        for (const bool posted : {false, true}) {
            for (const bool throws : {false, true}) {
                scene s;
                struct owner {
                    std::unique_ptr<timer_type> timer;
                    bool throws = false;
                    int runs = 0;
                    void fire() {
                        ++runs;
                        timer.reset();
                        if (throws) throw std::runtime_error("after destruction");
                    }
                } o;
                o.throws = throws;
                o.timer = std::make_unique<timer_type>(s.wheel, idlewheel::bind_member<&owner::fire>(&o), 20ms,
                                                       idlewheel::repeat_options{.mode = mode});
                o.timer->start();
                if (posted) o.timer->run_once_now();
                BOOST_TEST(s.step_to(100) == (throws ? 1U : 0U));
                BOOST_TEST(o.runs == 1);
                BOOST_TEST(s.wheel.pending() == 0U);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(destroying_the_timer_inside_its_callback_then_throwing) {
    scene s;
    ticker t(s, 20ms);
    t.on_run = [](ticker& k) {
        k.timer.reset();
        throw std::runtime_error("after destruction");
    };
    t.timer->start();
    BOOST_TEST(s.step_to(100) == 1U);
    BOOST_TEST(t.at.size() == 1U);
    BOOST_TEST(s.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(destroying_the_timer_inside_a_posted_run) {
    scene s;
    ticker t(s, 20ms);
    t.on_run = [](ticker& k) { k.timer.reset(); };
    t.timer->start();
    t.timer->run_once_now();
    s.step_to(100);
    BOOST_TEST(t.at == (times{0}), boost::test_tools::per_element());
    BOOST_TEST(s.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(a_throwing_callback_keeps_the_timer_running) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 30ms, {.mode = mode});
        t.on_run = [](ticker&) { throw std::runtime_error("round"); };
        t.timer->start();
        s.step_to(29);
        manual_clock::advance(1ms);
        // The exception leaves the io_context's handler (as it would leave run())...
        BOOST_CHECK_THROW(poll(s.io), std::runtime_error);
        BOOST_TEST(t.at == (times{30}), boost::test_tools::per_element());
        // ...and the next round was already scheduled when it did.
        BOOST_TEST(t.timer->running());
        BOOST_TEST(s.wheel.pending() == 1U);
        BOOST_TEST(s.step_to(100) == 2U);
        BOOST_TEST(t.at == (times{30, 60, 90}), boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(a_throwing_posted_run_keeps_the_timer_running) {
    scene s;
    ticker t(s, 30ms);
    t.on_run = [](ticker&) { throw std::runtime_error("now"); };
    t.timer->start();
    s.step_to(5);
    t.timer->run_once_now();
    BOOST_CHECK_THROW(poll(s.io), std::runtime_error);
    BOOST_TEST(t.timer->running());
    BOOST_TEST(s.step_to(70) == 2U);
    BOOST_TEST(t.at == (times{5, 40, 70}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(expire_all_runs_a_round_ahead_of_time_keeping_the_phase) {
    scene s;
    ticker t(s, 100ms, {.mode = repeat_mode::fixed_rate});
    t.timer->start();
    s.step_to(10);
    BOOST_TEST(s.wheel.expire_all() == 1U);  // round 1 (due 100) runs now; round 2 keeps its phase
    BOOST_TEST(t.at == (times{10}), boost::test_tools::per_element());
    s.step_to(200);
    BOOST_TEST(t.at == (times{10, 200}), boost::test_tools::per_element());
    // Inside a callback the wheel queues what expire_all() takes: round 3 (due 300) runs
    // right after the callback returns, not inside it.
    int depth = 0;
    int deepest = 0;
    t.on_run = [&](ticker& k) {
        ++depth;
        deepest = std::max(deepest, depth);
        if (k.at.size() == 3) s.wheel.expire_all();
        --depth;
    };
    s.step_to(300);
    BOOST_TEST(deepest == 1);
    BOOST_TEST(t.at == (times{10, 200, 300, 300}), boost::test_tools::per_element());
    s.step_to(500);
    BOOST_TEST(t.at == (times{10, 200, 300, 300, 500}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_round_due_inside_its_own_callback_waits_for_its_deadline) {
    // From a posted run there is no wheel batch around the callback: expire_all() inside it
    // runs everything at once, the timer's own entry included. It is not reentered.
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 50ms, {.mode = mode});
        int depth = 0;
        int deepest = 0;
        t.on_run = [&](ticker& k) {
            ++depth;
            deepest = std::max(deepest, depth);
            if (k.at.size() == 1) BOOST_TEST(s.wheel.expire_all() == 1U);
            --depth;
        };
        t.timer->start();
        s.step_to(5);
        t.timer->run_once_now();
        s.settle();
        BOOST_TEST(deepest == 1);
        BOOST_TEST(t.at == (times{5}), boost::test_tools::per_element());
        BOOST_TEST(t.timer->running());
        s.step_to(110);  // the next round is still the one from the run: 55 -> 60
        BOOST_TEST(t.at == (times{5, 60, 110}), boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(fixed_rate)

BOOST_AUTO_TEST_CASE(missed_rounds_are_coalesced_and_counted) {
    scene s;
    ticker t(s, 10ms, {.mode = repeat_mode::fixed_rate});
    t.timer->start();  // rounds due 10, 20, 30, ...
    s.step_to(10);
    manual_clock::advance(85ms);  // the io_context was busy: woken at 95
    s.settle();
    BOOST_TEST(t.at == (times{10, 95}), boost::test_tools::per_element());
    // The run at 95 is round 20's; 30 .. 90 (7 rounds) are coalesced into it.
    BOOST_TEST(t.missed == (std::vector<std::uint64_t>{0, 7}), boost::test_tools::per_element());
    s.step_to(120);  // the next round is the first one still ahead: 100
    BOOST_TEST(t.at == (times{10, 95, 100, 110, 120}), boost::test_tools::per_element());
    BOOST_TEST(t.timer->missed() == 0U);
    BOOST_TEST(t.timer->missed_total() == 7U);
    BOOST_TEST(t.timer->runs() + t.timer->missed_total() == 12U);  // rounds 10 .. 120
}

BOOST_AUTO_TEST_CASE(a_period_shorter_than_a_tick_runs_once_per_tick) {
    scene s;
    ticker t(s, 3ms, {.mode = repeat_mode::fixed_rate});
    t.timer->start();  // due 3, 6, 9, 12, ...
    s.step_to(40);
    // Each tick's wake-up runs the earliest round due and coalesces the rest due by then.
    BOOST_TEST(t.at == (times{10, 20, 30, 40}), boost::test_tools::per_element());
    BOOST_TEST(t.missed == (std::vector<std::uint64_t>{2, 2, 3, 2}), boost::test_tools::per_element());
    BOOST_TEST(t.timer->runs() + t.timer->missed_total() == 13U);  // floor(40 / 3)
}

BOOST_AUTO_TEST_CASE(no_drift_over_ten_thousand_rounds_with_irregular_wakeups) {
    scene s;
    const std::int64_t period_ns = 7 * ms_ns + 345'678;  // not a multiple of anything
    ticker t(s, std::chrono::nanoseconds(period_ns), {.mode = repeat_mode::fixed_rate});
    std::uint64_t checked = 0;
    std::int64_t start_ns = 0;
    t.on_run = [&](ticker& k) {
        // Every round due by now was run or coalesced; none that is not yet due was.
        const auto due_by_now = static_cast<std::uint64_t>((s.now_ns() - start_ns) / period_ns);
        BOOST_TEST(k.timer->runs() + k.timer->missed_total() == due_by_now);
        ++checked;
    };
    s.step_to(3);
    start_ns = s.now_ns();
    t.timer->start();
    std::mt19937_64 rng(20261123);
    std::uniform_int_distribution<std::int64_t> late(0, 40 * ms_ns);  // 0 .. 4 ticks of delay
    std::uint64_t wakeups = 0;
    while (t.timer->runs() + t.timer->missed_total() < 10'000) {
        // Irregular wake-ups: sometimes on time, sometimes up to 4 ticks late, at any ns.
        manual_clock::advance(std::chrono::nanoseconds(rng() % 4 == 0 ? late(rng) : ms_ns));
        s.settle();
        ++wakeups;
    }
    BOOST_TEST(checked == t.timer->runs());
    BOOST_TEST(t.timer->missed_total() > 0U);
    BOOST_TEST(t.timer->runs() > 2'000U);
    // After that, with on-time wake-ups, round k runs at the first tick boundary at or after
    // start + k * period, exactly: no drift accumulated.
    const std::uint64_t before = t.timer->runs();
    for (int i = 0; i < 100; ++i) {
        const auto k = static_cast<std::int64_t>(t.timer->runs() + t.timer->missed_total()) + 1;
        const std::int64_t due_ns = start_ns + k * period_ns;
        const std::int64_t tick_ns = tick_ms * ms_ns;
        const std::int64_t expect_ns = (due_ns + tick_ns - 1) / tick_ns * tick_ns;
        const std::uint64_t runs = t.timer->runs();
        // Stop 1 ns before the boundary, then cross it: never early, exactly on the boundary.
        // (A round already in this tick ran when its predecessor coalesced it; skip to it.)
        if (expect_ns - 1 > s.now_ns()) {
            manual_clock::advance(std::chrono::nanoseconds(expect_ns - 1 - s.now_ns()));
            s.settle();
            BOOST_TEST(t.timer->runs() == runs);
        }
        manual_clock::advance(std::chrono::nanoseconds(expect_ns - s.now_ns()));
        s.settle();
        BOOST_TEST(t.timer->runs() == runs + 1);
    }
    BOOST_TEST(t.timer->runs() == before + 100);
}

BOOST_AUTO_TEST_CASE(rounds_across_wheel_levels_run_exactly_on_their_tick) {
    // Periods whose rounds sit in higher levels of the wheel (64 ticks = 640 ms per level-0
    // turn, 64 x more per level) and cascade down before they run.
    scene s;
    const std::int64_t tick_ns = tick_ms * ms_ns;
    const std::int64_t periods_ns[] = {1'234'567'891, 45'600'000'003, 150'000'000'007};
    std::deque<ticker> rate;  // tickers do not move: the timers point at them
    for (const auto p : periods_ns) rate.emplace_back(s, std::chrono::nanoseconds(p), idlewheel::repeat_options{.mode = repeat_mode::fixed_rate});
    ticker delay(s, std::chrono::nanoseconds(periods_ns[1]));
    s.step_to(3);
    const std::int64_t start_ns = s.now_ns();
    for (auto& r : rate) r.timer->start();
    delay.timer->start();
    // One poll per tick boundary: a round due at D runs at the boundary at or after D, exactly.
    const std::int64_t end_ns = 460 * 1'000 * ms_ns;
    while (s.now_ns() < end_ns) {
        manual_clock::advance(std::chrono::nanoseconds(tick_ns - s.now_ns() % tick_ns));
        s.settle();
    }
    const auto tick_after = [](std::int64_t ns) { return (ns + tick_ns - 1) / tick_ns * tick_ns / ms_ns; };
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& r = rate[i];
        BOOST_TEST_CONTEXT("period " << periods_ns[i]) {
            BOOST_TEST(r.at.size() == static_cast<std::size_t>((end_ns - start_ns) / periods_ns[i]));
            for (std::size_t k = 0; k < r.at.size(); ++k) {
                BOOST_TEST(r.at[k] == tick_after(start_ns + static_cast<std::int64_t>(k + 1) * periods_ns[i]));
                BOOST_TEST(r.missed[k] == 0U);
            }
        }
    }
    // Fixed delay: each round counts from the previous run (a tick boundary).
    BOOST_TEST(delay.at.size() == 10U);
    std::int64_t from_ns = start_ns;
    for (const auto at : delay.at) {
        BOOST_TEST(at == tick_after(from_ns + periods_ns[1]));
        from_ns = at * ms_ns;
    }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(adjust)

// An adjust hook that logs its calls and returns period + 7 ms * call number.
struct stretcher {
    std::chrono::nanoseconds adjust(std::chrono::nanoseconds period) noexcept {
        seen.push_back(period);
        return period + 7ms * static_cast<std::int64_t>(seen.size() - 1);
    }
    std::vector<std::chrono::nanoseconds> seen;
};

BOOST_AUTO_TEST_CASE(called_for_every_round_fixed_delay) {
    scene s;
    stretcher h;
    ticker t(s, 20ms, {.adjust = idlewheel::bind_member<&stretcher::adjust>(&h)});
    t.timer->start();  // call 0: 20 -> due 20
    BOOST_TEST(h.seen.size() == 1U);
    s.step_to(200);    // 20 + 27 = 47 -> 50; 50 + 34 = 84 -> 90; 90 + 41 -> 140; 140 + 48 -> 190
    BOOST_TEST(t.at == (times{20, 50, 90, 140, 190}), boost::test_tools::per_element());
    BOOST_TEST(h.seen.size() == 6U);  // one per round started
    for (const auto p : h.seen) BOOST_TEST(p.count() == std::chrono::nanoseconds(20ms).count());
    t.timer->reset(10ms);
    BOOST_TEST(h.seen.back().count() == std::chrono::nanoseconds(10ms).count());
}

BOOST_AUTO_TEST_CASE(called_once_per_run_fixed_rate_with_coalescing) {
    scene s;
    stretcher h;
    ticker t(s, 10ms, {.mode = repeat_mode::fixed_rate, .adjust = idlewheel::bind_member<&stretcher::adjust>(&h)});
    t.timer->start();  // due 10 (call 0)
    s.step_to(10);     // run; call 1: +17 -> due 27
    manual_clock::advance(30ms);  // 40: run due 27; call 2: d = 24: 51 is next (none missed)
    s.settle();
    manual_clock::advance(100ms);  // 140: run due 51; call 3: d = 31: 82, 113 missed; next 144
    s.settle();
    s.step_to(150);
    BOOST_TEST(t.at == (times{10, 40, 140, 150}), boost::test_tools::per_element());
    BOOST_TEST(t.missed == (std::vector<std::uint64_t>{0, 0, 2, 0}), boost::test_tools::per_element());
    BOOST_TEST(h.seen.size() == 5U);
}

BOOST_AUTO_TEST_CASE(a_result_not_above_zero_is_the_smallest_delay) {
    scene s;
    struct zero {
        static std::chrono::nanoseconds adjust(void*, std::chrono::nanoseconds) noexcept { return -5s; }
    };
    ticker t(s, 1h, {.adjust = {&zero::adjust, nullptr}});
    s.step_to(3);
    t.timer->start();
    s.step_to(31);
    BOOST_TEST(t.at == (times{10, 20, 30}), boost::test_tools::per_element());  // every tick
    t.timer->set_adjust({nullptr, nullptr});  // the period again, from the next round
    s.step_to(100);
    BOOST_TEST(t.at.size() == 4U);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(odd_periods)

BOOST_AUTO_TEST_CASE(a_third_of_a_second_fixed_rate) {
    scene s;
    ticker t(s, std::chrono::duration<std::int64_t, std::ratio<1, 3>>(1), {.mode = repeat_mode::fixed_rate});
    t.timer->start();  // 333 333 334, 666 666 668, 1 000 000 002 ns
    s.step_to(1020);
    BOOST_TEST(t.at == (times{340, 670, 1010}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_double_period_fixed_delay) {
    scene s;
    ticker t(s, std::chrono::duration<double>(0.0255));  // 25.5 ms
    t.timer->start();
    s.step_to(100);  // 25.5 -> 30; 55.5 -> 60; 85.5 -> 90
    BOOST_TEST(t.at == (times{30, 60, 90}), boost::test_tools::per_element());
    t.timer->reset(std::chrono::duration<double, std::milli>(4.5));  // from 100: 104.5 -> 110
    s.step_to(125);
    BOOST_TEST(t.at == (times{30, 60, 90, 110, 120}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(hours_max_saturates_and_never_comes) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, std::chrono::hours::max(), {.mode = mode});
        s.step_to(5);
        t.timer->start();
        BOOST_TEST(t.timer->running());
        BOOST_TEST(s.wheel.pending() == 1U);
        idlewheel::test::advance_and_poll(s.io, 24h * 365 * 10, 24h);
        BOOST_TEST(t.at.empty());
        BOOST_TEST(t.timer->running());
        // run_once_now still works, and the next round is again out of reach.
        t.timer->run_once_now();
        s.settle();
        BOOST_TEST(t.at.size() == 1U);
        idlewheel::test::advance_and_poll(s.io, 24h * 365, 24h);
        BOOST_TEST(t.at.size() == 1U);
        BOOST_TEST(t.timer->missed_total() == 0U);
        t.timer->reset(std::chrono::duration<double>(1e200));
        BOOST_TEST(t.timer->running());
        t.timer->reset(10ms);
        const auto base = s.now_ms();
        s.step_to(base + 9);
        BOOST_TEST(t.at.size() == 1U);
        s.step_to(base + 20);
        BOOST_TEST(t.at.size() == 2U);
    }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(the_wheel)

BOOST_AUTO_TEST_CASE(a_stopped_wheel_drops_the_round_and_refuses_a_start) {
    scene s;
    ticker t(s, 20ms);
    t.timer->start();
    s.step_to(20);
    s.wheel.stop();
    BOOST_TEST(!t.timer->running());
    s.step_to(100);
    BOOST_TEST(t.at.size() == 1U);
    try {
        t.timer->start();
        BOOST_FAIL("start() on a stopped wheel must throw");
    } catch (const idlewheel::system_error& e) {
        BOOST_TEST(is_error(e, idlewheel::error::stopped));
    }
    BOOST_CHECK_THROW(t.timer->restart(), idlewheel::system_error);
    BOOST_TEST(!t.timer->running());
    t.timer->reset(5ms);  // stopped: only the period
    BOOST_TEST(!t.timer->run_once_now());
    BOOST_TEST(!t.timer->stop());
}

BOOST_AUTO_TEST_CASE(stopping_the_wheel_inside_the_callback) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        scene s;
        ticker t(s, 20ms, {.mode = mode});
        t.on_run = [&](ticker&) { s.wheel.stop(); };
        t.timer->start();
        s.step_to(100);
        BOOST_TEST(t.at == (times{20}), boost::test_tools::per_element());
        BOOST_TEST(!t.timer->running());
    }
}

BOOST_AUTO_TEST_CASE(stopping_the_wheel_with_a_posted_run) {
    scene s;
    ticker t(s, 20ms);
    t.timer->start();
    t.timer->run_once_now();
    s.wheel.stop();
    s.settle();
    BOOST_TEST(t.at.empty());  // nothing runs after the wheel stopped
    BOOST_TEST(!t.timer->running());
}

BOOST_AUTO_TEST_CASE(destroying_the_wheel_inside_the_callback) {
    clock_reset reset;
    net::io_context io;
    auto wheel = std::make_unique<wheel_type>(io);
    int runs = 0;
    struct owner {
        std::unique_ptr<wheel_type>* wheel;
        int* runs;
        void fire() {
            ++*runs;
            wheel->reset();
        }
        timer_type timer;
    } o{&wheel, &runs, timer_type(*wheel, idlewheel::timer_callback{}, 10ms)};
    o.timer.set_callback(idlewheel::bind_member<&owner::fire>(&o));
    o.timer.start();
    idlewheel::test::advance_and_poll(io, 50ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(!wheel);
    BOOST_TEST(!o.timer.running());
    BOOST_TEST(!o.timer.stop());  // the node is gone from the dead wheel: touches nothing
}

BOOST_AUTO_TEST_CASE(the_timer_may_outlive_its_wheel) {
    clock_reset reset;
    net::io_context io;
    std::optional<wheel_type> wheel(std::in_place, io);
    timer_type timer(*wheel, {[](void*) {}, nullptr}, 10ms);
    timer.start();
    wheel.reset();
    BOOST_TEST(!timer.running());
}

BOOST_AUTO_TEST_CASE(a_running_timer_keeps_its_entry_under_max_pending) {
    scene s({.max_pending = 2});
    ticker t(s, 20ms);
    ticker other(s, 20ms);
    idlewheel::timer_node filler{{[](void*) {}, nullptr}};
    std::size_t started_inside = 0;
    t.on_run = [&](ticker&) {
        // The round's entry is out of the wheel while its callback runs: the wheel has room,
        // and the timer re-arms afterwards anyway (the liveness objects' exemption).
        if (other.timer->running()) return;
        other.timer->start();
        ++started_inside;
    };
    t.timer->start();
    s.wheel.schedule(filler, 1h);
    try {
        other.timer->start();
        BOOST_FAIL("a third entry must be refused");
    } catch (const idlewheel::system_error& e) {
        BOOST_TEST(is_error(e, idlewheel::error::too_many_pending));
    }
    BOOST_TEST(!other.timer->running());
    s.step_to(100);
    BOOST_TEST(t.at.size() == 5U);
    BOOST_TEST(started_inside == 1U);
    BOOST_TEST(other.timer->running());
    BOOST_TEST(other.at.size() == 4U);  // started at 20 ms: 40, 60, 80, 100
    // Both running timers keep their entries past max_pending: by one each at most.
    BOOST_TEST(s.wheel.pending() == 3U);
    BOOST_CHECK_THROW(s.wheel.schedule(1h, [] {}), idlewheel::system_error);
    // run_once_now, reset and restart of a running timer move its entry: never refused.
    BOOST_TEST(t.timer->run_once_now());
    s.settle();
    t.timer->reset(30ms);
    t.timer->restart();
    BOOST_TEST(t.timer->running());
    BOOST_TEST(s.wheel.pending() == 3U);
}

// Issue 20, item 6: a fixed-delay round held a placeholder entry while its callback ran, which
// doubled the wheel's `scheduled` count (placeholder, then the next round). Now a round is one
// entry put in the wheel, and the timer holds no entry while its callback runs.
BOOST_AUTO_TEST_CASE(each_round_is_scheduled_once) {
    for (const auto mode : {repeat_mode::fixed_delay, repeat_mode::fixed_rate}) {
        BOOST_TEST_CONTEXT((mode == repeat_mode::fixed_delay ? "fixed_delay" : "fixed_rate")) {
            scene s;
            ticker t(s, 20ms, {.mode = mode});
            std::vector<std::size_t> pending_inside;
            t.on_run = [&](ticker&) { pending_inside.push_back(s.wheel.pending()); };
            t.timer->start();
            const auto before = s.wheel.stats().scheduled;
            s.step_to(200);
            BOOST_TEST(t.at.size() == 10U);
            BOOST_TEST(s.wheel.stats().scheduled - before == 10U);  // one per round
            BOOST_TEST(s.wheel.stats().rescheduled == 0U);
            // Inside the callback: fixed-rate has its next round in the wheel already,
            // fixed-delay nothing (it re-arms when the callback returns).
            const std::size_t expected = mode == repeat_mode::fixed_rate ? 1U : 0U;
            for (const auto p : pending_inside) BOOST_TEST(p == expected);
            BOOST_TEST(t.running_inside == std::vector<bool>(10, true), boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(one_tick_late_at_most_on_a_per_tick_wheel) {
    scene s({.clock = idlewheel::clock_read::per_tick});
    ticker delay(s, 25ms);
    ticker rate(s, 25ms, {.mode = repeat_mode::fixed_rate});
    s.step_to(2);
    delay.timer->start();  // 27 -> 30; 55 -> 60; 85 -> 90
    rate.timer->start();   // 27, 52, 77 -> 30, 60, 80
    s.step_to(95);
    BOOST_TEST(delay.at == (times{30, 60, 90}), boost::test_tools::per_element());
    BOOST_TEST(rate.at == (times{30, 60, 80}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(no_allocation_per_round) {
    scene s;
    ticker delay(s, 10ms);
    ticker rate(s, 20ms, {.mode = repeat_mode::fixed_rate});
    delay.at.reserve(2000);
    delay.missed.reserve(2000);
    delay.running_inside.reserve(2000);
    rate.at.reserve(2000);
    rate.missed.reserve(2000);
    rate.running_inside.reserve(2000);
    delay.timer->start();
    rate.timer->start();
    s.step_to(100);  // warm up Asio's handler memory
    const std::uint64_t before = allocations.load();
    s.step_to(10'000);
    BOOST_TEST(allocations.load() - before == 0U);
    BOOST_TEST(delay.at.size() == 1000U);
    BOOST_TEST(rate.at.size() == 500U);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// The model: random operation sequences (seeded) against a reference of when each round must
// run. The reference knows nothing of wheels: a round due at D runs at the first poll at or
// after the tick boundary at or after D; a posted run runs at the next poll; fixed-rate
// deadlines are sums; the adjust hook is a pure function of how often it was called.
BOOST_AUTO_TEST_SUITE(model)

namespace {

std::uint64_t mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::int64_t ceil_to_tick_ns(std::int64_t ns) {
    const std::int64_t t = tick_ms * ms_ns;
    return (ns + t - 1) / t * t;
}

struct reference {
    bool exists = false;
    bool running = false;
    bool posted = false;
    repeat_mode mode = repeat_mode::fixed_delay;
    bool jitter = false;
    std::int64_t period = 0;    // ns
    std::int64_t deadline = 0;  // ns since t0, while running && !posted
    std::uint64_t adjust_calls = 0;
    std::uint64_t runs = 0;
    std::uint64_t missed_total = 0;
    std::uint64_t generation = 0;  // changed by every operation that decides the next round

    std::int64_t delay() {
        if (!jitter) return period;
        const std::uint64_t k = adjust_calls++;
        return period + static_cast<std::int64_t>(mix(k) % static_cast<std::uint64_t>(period / 2 + 1));
    }
    [[nodiscard]] bool due_at(std::int64_t now) const {
        return running && (posted || now >= ceil_to_tick_ns(deadline));
    }
    void start_fresh(std::int64_t now) {
        ++generation;
        posted = false;
        running = true;
        deadline = now + delay();
    }
    void start(std::int64_t now) {
        if (!running) start_fresh(now);
    }
    bool stop() {
        ++generation;
        posted = false;
        return std::exchange(running, false);
    }
    void reset(std::int64_t p, std::int64_t now) {
        period = p;
        if (running) start_fresh(now);
    }
    bool run_once_now() {
        if (!running) return false;
        if (!posted) {
            posted = true;
            ++generation;
        }
        return true;
    }
    // A run at `now`: returns the missed() the callback must see.
    std::uint64_t begin_run(std::int64_t now) {
        const std::int64_t due = posted ? now : deadline;
        posted = false;
        std::uint64_t missed = 0;
        if (mode == repeat_mode::fixed_rate) {
            const std::int64_t d = delay();
            std::int64_t base = due;
            if (now > due) {
                missed = static_cast<std::uint64_t>((now - due) / d);
                base = due + d * static_cast<std::int64_t>(missed);
            }
            deadline = base + d;
        }
        ++runs;
        missed_total += missed;
        return missed;
    }
    void end_run(std::uint64_t generation_at_start, std::int64_t now) {
        if (exists && mode == repeat_mode::fixed_delay && running && generation == generation_at_start)
            deadline = now + delay();
    }
};

std::string describe(const reference& m) {
    std::ostringstream o;
    o << "running " << m.running << " posted " << m.posted << " mode " << static_cast<int>(m.mode) << " period "
      << m.period << " deadline " << m.deadline << " runs " << m.runs;
    return o.str();
}

// The real timer and the reference side by side.
struct harness {
    harness(std::uint64_t seed, const idlewheel::wheel_options& options) : rng(seed), s(options) {}

    std::chrono::nanoseconds adjust(std::chrono::nanoseconds period) noexcept {
        const std::uint64_t k = adjust_calls++;
        return period + std::chrono::nanoseconds(mix(k) % static_cast<std::uint64_t>(period.count() / 2 + 1));
    }

    std::int64_t random_period() {
        switch (rng() % 4) {
            case 0: return static_cast<std::int64_t>(1 + rng() % 9) * ms_ns;              // under a tick
            case 1: return static_cast<std::int64_t>(1 + rng() % 10) * tick_ms * ms_ns;  // whole ticks
            case 2: return static_cast<std::int64_t>(1 + rng() % 200) * ms_ns + static_cast<std::int64_t>(rng() % ms_ns);
            default: return static_cast<std::int64_t>(1 + rng() % 50'000'000);           // any ns up to 50 ms
        }
    }

    void create() {
        m = reference{};
        m.exists = true;
        m.mode = rng() % 2 == 0 ? repeat_mode::fixed_delay : repeat_mode::fixed_rate;
        m.jitter = rng() % 2 == 0;
        m.period = random_period();
        adjust_calls = 0;
        idlewheel::repeat_options o{.mode = m.mode};
        if (m.jitter) o.adjust = idlewheel::bind_member<&harness::adjust>(this);
        timer.emplace(s.wheel, idlewheel::bind_member<&harness::fire>(this), std::chrono::nanoseconds(m.period), o);
    }

    void fire() {
        const std::int64_t now = s.now_ns();
        BOOST_TEST_REQUIRE(m.due_at(now), "a run the reference did not expect at " << now << ": " << describe(m));
        const bool was_posted = m.posted;
        const std::int64_t due = m.deadline;
        if (!was_posted) {
            // Never early; at most one tick late, plus the time the io_context was not
            // polled (one step of the clock, and callbacks that took time).
            BOOST_TEST_REQUIRE(now >= due);
            BOOST_TEST_REQUIRE(now - due < tick_ms * ms_ns + jump_ns);
            if (jump_ns <= ms_ns) ++on_time_runs;
        }
        const std::uint64_t missed = m.begin_run(now);
        BOOST_TEST_REQUIRE(timer->missed() == missed);
        BOOST_TEST_REQUIRE(timer->runs() == m.runs);
        BOOST_TEST_REQUIRE(timer->running());
        const std::uint64_t generation = m.generation;
        ++runs_seen;
        // What the callback does.
        const auto action = rng() % 40;
        if (action == 0) {
            m.exists = false;
            m.running = false;
            timer.reset();
            return;
        }
        bool throw_after = false;
        switch (action) {
            case 1: BOOST_TEST_REQUIRE(timer->stop() == m.stop()); break;
            case 2: m.start_fresh(s.now_ns()); timer->restart(); break;
            case 3: {
                const auto p = random_period();
                m.reset(p, s.now_ns());
                timer->reset(std::chrono::nanoseconds(p));
                break;
            }
            case 4: BOOST_TEST_REQUIRE(timer->run_once_now() == m.run_once_now()); break;
            case 5: throw_after = true; break;
            case 6: {
                BOOST_TEST_REQUIRE(timer->stop() == m.stop());
                m.start(s.now_ns());
                timer->start();
                break;
            }
            case 7: case 8: {
                const auto work = std::chrono::nanoseconds(static_cast<std::int64_t>(rng() % (30 * ms_ns)));
                manual_clock::advance(work);  // a slow callback
                jump_ns += work.count();
                break;
            }
            case 9: m.start(s.now_ns()); timer->start(); break;  // running: nothing
            default: break;
        }
        m.end_run(generation, s.now_ns());
        if (throw_after) {
            ++thrown_expected;
            throw std::runtime_error("model");
        }
    }

    void check_state() {
        BOOST_TEST_REQUIRE(timer.has_value() == m.exists);
        if (!m.exists) return;
        BOOST_TEST_REQUIRE(timer->running() == m.running, describe(m));
        BOOST_TEST_REQUIRE(timer->runs() == m.runs);
        BOOST_TEST_REQUIRE(timer->missed_total() == m.missed_total);
        if (m.jitter) BOOST_TEST_REQUIRE(adjust_calls == m.adjust_calls, "the adjust hook was not called once per round");
        BOOST_TEST_REQUIRE(s.wheel.pending() == (m.running ? 1U : 0U));
    }

    void settle() {
        thrown_seen += s.settle();
        // Nothing the reference expects at this time is left undone.
        BOOST_TEST_REQUIRE(!m.due_at(s.now_ns()), "a run the reference expected did not happen: " << describe(m)
                                                                                                    << " now " << s.now_ns());
        check_state();
    }

    void step() {
        const auto op = rng() % 100;
        const std::int64_t now = s.now_ns();
        jump_ns = 0;
        if (!m.exists) {
            create();
        } else if (op < 70) {
            jump_ns = ms_ns;
            manual_clock::advance(1ms);
        } else if (op < 75) {
            jump_ns = static_cast<std::int64_t>(1 + rng() % (50 * ms_ns));  // a busy io_context
            manual_clock::advance(std::chrono::nanoseconds(jump_ns));
        } else if (op < 80) {
            m.start(now);
            timer->start();
        } else if (op < 83) {
            BOOST_TEST_REQUIRE(timer->stop() == m.stop());
        } else if (op < 86) {
            m.start_fresh(now);
            timer->restart();
        } else if (op < 90) {
            const auto p = random_period();
            m.reset(p, now);
            timer->reset(std::chrono::nanoseconds(p));
        } else if (op < 92) {
            m.reset(m.period, now);
            timer->reset();
        } else if (op < 98) {
            BOOST_TEST_REQUIRE(timer->run_once_now() == m.run_once_now());
        } else {
            m = reference{};
            timer.reset();
        }
        settle();
    }

    std::mt19937_64 rng;
    scene s;
    reference m;
    std::optional<timer_type> timer;
    std::uint64_t adjust_calls = 0;
    std::int64_t jump_ns = 0;  // how far the clock moved since the step began
    std::uint64_t on_time_runs = 0;
    std::size_t thrown_expected = 0;
    std::size_t thrown_seen = 0;
    std::uint64_t runs_seen = 0;
};

}  // namespace

BOOST_AUTO_TEST_CASE(random_operation_sequences_against_the_reference) {
    std::uint64_t runs = 0;
    for (std::uint64_t seed = 1; seed <= 24; ++seed) {
        BOOST_TEST_CONTEXT("seed " << seed) {
            // Half the seeds on a clock_read::per_tick wheel: rounds are exact there too.
            harness h(seed, {.clock = seed % 2 == 0 ? idlewheel::clock_read::per_tick : idlewheel::clock_read::per_schedule});
            for (int i = 0; i < 10'000; ++i) h.step();
            BOOST_TEST(h.thrown_seen == h.thrown_expected);
            BOOST_TEST(h.on_time_runs > 0U);
            runs += h.runs_seen;
        }
    }
    BOOST_TEST(runs > 10'000U);  // the sequences do exercise the rounds
}

BOOST_AUTO_TEST_SUITE_END()
