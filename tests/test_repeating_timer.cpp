// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/repeating_timer.hpp>

// basic_repeating_timer on idlewheel::manual_clock (tick 10 ms unless a test says otherwise):
// time moves only when a test moves it and the io_context is driven by poll() alone, so every
// expectation is an exact time or count. This file: construction, the operations, and what
// the callback may do. The executable test_repeating_timer also holds
// test_repeating_timer_rounds.cpp (fixed rate, adjust, odd periods, the wheel underneath) and
// test_repeating_timer_model.cpp (random operation sequences against a reference); the scene
// they share is support/repeating_scene.hpp.

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/repeating_scene.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE repeating_timer
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <ratio>
#include <stdexcept>
#include <vector>

namespace {

using namespace idlewheel::test::repeating;  // support/repeating_scene.hpp

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
