// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/repeating_timer.hpp>

// basic_repeating_timer's rounds (a source file of the executable test_repeating_timer, whose
// first file is test_repeating_timer.cpp): fixed rate and its coalescing, the adjust hook, odd
// and extreme periods, and the wheel underneath (stopped, destroyed, full, per tick), with no
// allocation per round.

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/repeating_scene.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <ratio>
#include <stdexcept>
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

using namespace idlewheel::test::repeating;  // support/repeating_scene.hpp

}  // namespace

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
