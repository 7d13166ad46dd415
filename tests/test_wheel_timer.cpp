// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// basic_wheel_timer on idlewheel::manual_clock: time moves only when a test moves it, and the
// io_context is driven by poll() alone, so every expectation is an exact time, count or order.
// The executable test_wheel_timer also holds test_wheel_timer_stop.cpp (stop, limits, faults,
// draining, lifetime) and the tests of the wheel's handle and node headers (test_timeout.cpp,
// test_timer_node.cpp); async_wait is tested in test_wheel_timer_async_wait.cpp, the real clock
// in test_wheel_timer_realtime.cpp (tests/README.md has the map).

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE wheel_timer
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::ceil_to_tick;
using idlewheel::test::manual_fixture;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using idlewheel::test::session;
using idlewheel::test::tick_ms;
using idlewheel::test::wheel_fixture;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using idlewheel::error_code;

// A clock whose resolution is 1 ms, to check a tick that does not survive the conversion.
struct coarse_clock {
    using duration = std::chrono::milliseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<coarse_clock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept {
        return time_point(std::chrono::duration_cast<duration>(manual_clock::now().time_since_epoch()));
    }
};
static_assert(coarse_clock::is_steady);  // a complete Clock (and clang 14 sees the member used)

}  // namespace

BOOST_AUTO_TEST_SUITE(options)

BOOST_FIXTURE_TEST_CASE(invalid_options_throw_invalid_argument, manual_fixture) {
    auto make = [this](const idlewheel::wheel_options& o) { wheel_type w(io, o); };
    BOOST_CHECK_THROW(make({.tick = 0ns}), std::invalid_argument);
    BOOST_CHECK_THROW(make({.tick = -1ms}), std::invalid_argument);
    BOOST_CHECK_THROW(make({.tick = std::chrono::nanoseconds::min()}), std::invalid_argument);
    BOOST_CHECK_THROW(make({.max_run_per_wakeup = 0}), std::invalid_argument);
    BOOST_CHECK_NO_THROW(make({.tick = 1ns, .max_pending = 1, .max_run_per_wakeup = 1}));

    // 500 us is 0 in a millisecond clock: that wheel could never advance.
    auto make_coarse = [this](std::chrono::nanoseconds tick) {
        idlewheel::basic_wheel_timer<coarse_clock> w(io, {.tick = tick});
        return w.tick().count();
    };
    BOOST_CHECK_THROW(make_coarse(500us), std::invalid_argument);
    BOOST_TEST(make_coarse(1ms) == 1);
    BOOST_TEST(io.poll() == 0U);  // constructing (or failing to) posts nothing
}

BOOST_FIXTURE_TEST_CASE(defaults, wheel_fixture) {
    BOOST_TEST(wheel.tick().count() == std::chrono::nanoseconds(10ms).count());
    BOOST_TEST(wheel.pending() == 0U);
    const auto s = wheel.stats();
    BOOST_TEST(s.scheduled == 0U);
    BOOST_TEST(s.wakeups == 0U);
    BOOST_TEST(s.worst_lateness.count() == 0);
    BOOST_TEST((wheel.get_executor() == wheel_type::executor_type(io.get_executor())));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(precision)

BOOST_FIXTURE_TEST_CASE(tick_arithmetic, wheel_fixture) {
    BOOST_TEST(wheel.current_tick() == 0U);
    BOOST_TEST((wheel.time_of(0) == t0));
    manual_clock::advance(1003ms);
    BOOST_TEST(wheel.current_tick() == 100U);
    BOOST_TEST(wheel.deadline_after(0ms) == 101U);  // rounded up: never early
    BOOST_TEST(wheel.deadline_after(7ms) == 101U);
    BOOST_TEST(wheel.deadline_after(8ms) == 102U);
    BOOST_TEST(wheel.deadline_after(1ns) == 101U);
    BOOST_TEST(wheel.deadline_after(-5s) == 101U);
    BOOST_TEST((wheel.time_of(101) == t0 + 1010ms));
    manual_clock::advance(7ms);
    BOOST_TEST(wheel.current_tick() == 101U);
    BOOST_TEST(wheel.deadline_after(0ms) == 101U);  // exactly on a boundary
    BOOST_TEST(wheel.deadline_after(1ns) == 102U);
    BOOST_TEST((wheel.time_of(std::numeric_limits<wheel_type::tick_type>::max()) == manual_clock::time_point::max()));
    BOOST_TEST((wheel.time_of(wheel.deadline_after(std::chrono::hours::max())) == manual_clock::time_point::max()));
}

// Every delay from 0 to 250 ms, scheduled at every millisecond phase within a tick, after the
// wheel has idled for a second (so it has to catch up first). Time advances 1 ms at a time, so
// a callback's run time is exact: the first tick boundary at or after its deadline.
BOOST_AUTO_TEST_CASE(never_early_and_at_most_one_tick_late) {
    constexpr int max_delay = 250;
    for (int phase = 0; phase < tick_ms; ++phase) {
        manual_clock::reset();
        net::io_context io;
        wheel_type wheel(io);
        const auto origin = manual_clock::now();
        manual_clock::advance(1000ms + std::chrono::milliseconds(phase));
        const std::int64_t start = ms_since(origin);

        std::vector<std::int64_t> fired(max_delay + 1, -1);
        std::vector<int> runs(max_delay + 1, 0);
        for (int d = 0; d <= max_delay; ++d) {
            const auto i = static_cast<std::size_t>(d);
            wheel.schedule(std::chrono::milliseconds(d), [&fired, &runs, i, origin] {
                ++runs[i];
                fired[i] = ms_since(origin);
            });
        }
        BOOST_TEST(wheel.pending() == static_cast<std::size_t>(max_delay + 1));
        advance_and_poll(io, std::chrono::milliseconds(max_delay + 2 * tick_ms));

        std::set<std::int64_t> boundaries;
        for (int d = 0; d <= max_delay; ++d) {
            BOOST_TEST_CONTEXT("phase " << phase << " ms, delay " << d << " ms") {
                const auto i = static_cast<std::size_t>(d);
                const std::int64_t deadline = start + d;
                BOOST_TEST(runs[i] == 1);
                BOOST_TEST(fired[i] >= deadline);
                if (d > 0) {
                    BOOST_TEST(fired[i] < deadline + tick_ms);
                    BOOST_TEST(fired[i] == ceil_to_tick(deadline));
                } else {
                    // "As soon as possible" is the next tick boundary: on a boundary that is a
                    // whole tick away, because the wheel has already handed out the current
                    // tick. Still within the contract's "at most one tick".
                    BOOST_TEST(fired[i] <= deadline + tick_ms);
                    BOOST_TEST(fired[i] == (start / tick_ms + 1) * tick_ms);
                }
                boundaries.insert(fired[i]);
            }
        }
        const auto s = wheel.stats();
        BOOST_TEST_CONTEXT("phase " << phase) {
            BOOST_TEST(wheel.pending() == 0U);
            BOOST_TEST(s.expired == static_cast<std::uint64_t>(max_delay + 1));
            // One wake-up per distinct deadline tick, none for nothing.
            BOOST_TEST(s.wakeups == boundaries.size());
            BOOST_TEST(s.idle_wakeups == 0U);
            BOOST_TEST(s.worst_lateness.count() == 0);
        }
    }
}

BOOST_FIXTURE_TEST_CASE(sub_tick_delays_round_up, wheel_fixture) {
    manual_clock::advance(1000ms);
    std::vector<std::int64_t> fired;
    for (const std::chrono::nanoseconds d : {1ns, 1000ns, 999000ns, 9999000ns, 10000000ns, 10001000ns}) {
        wheel.schedule(d, [&fired, this] { fired.push_back(ms_since(t0)); });
    }
    advance_and_poll(io, 50ms);
    BOOST_TEST(fired == (std::vector<std::int64_t>{1010, 1010, 1010, 1010, 1010, 1020}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(zero_and_negative_delays_run_on_the_next_tick, wheel_fixture) {
    manual_clock::advance(1003ms);
    std::vector<int> order;
    std::vector<std::int64_t> at;
    bool scheduling = true;
    auto log = [&](int id) {
        return [&order, &at, &scheduling, this, id] {
            BOOST_TEST(!scheduling);  // never inside schedule()
            order.push_back(id);
            at.push_back(ms_since(t0));
        };
    };
    wheel.schedule(0ms, log(0));
    wheel.schedule(-1ms, log(1));
    wheel.schedule(std::chrono::hours::min(), log(2));
    wheel.schedule(std::chrono::nanoseconds::min(), log(3));
    wheel.schedule(std::chrono::duration<double>(-std::numeric_limits<double>::infinity()), log(4));
    scheduling = false;

    poll(io);
    BOOST_TEST(order.empty());  // due at the next boundary, 1010 ms, not now
    advance_and_poll(io, 6ms);
    BOOST_TEST(order.empty());
    advance_and_poll(io, 1ms);
    BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}), boost::test_tools::per_element());  // FIFO
    BOOST_TEST(at == (std::vector<std::int64_t>(5, 1010)), boost::test_tools::per_element());

    // Now exactly on a boundary the wheel has handed out: the next chance is a tick later.
    wheel.schedule(0ms, log(5));
    poll(io);
    BOOST_TEST(order.size() == 5U);
    advance_and_poll(io, 9ms);
    BOOST_TEST(order.size() == 5U);
    advance_and_poll(io, 1ms);
    BOOST_TEST(order.size() == 6U);
    BOOST_TEST(at.back() == 1020);

    const auto s = wheel.stats();
    BOOST_TEST(s.expired == 6U);
    BOOST_TEST(s.wakeups == 2U);  // one per boundary that had something due
    BOOST_TEST(s.idle_wakeups == 0U);
}

BOOST_AUTO_TEST_CASE(huge_delays_saturate_and_stay_pending) {
    for (const auto tick : {std::chrono::nanoseconds(1ns), std::chrono::nanoseconds(10ms), std::chrono::nanoseconds(1h)}) {
        BOOST_TEST_CONTEXT("tick " << tick.count() << " ns") {
            manual_clock::reset();
            net::io_context io;
            wheel_type wheel(io, {.tick = tick});
            auto captured = std::make_shared<int>(0);
            int fired = 0;
            auto never = [&fired, captured] { ++fired; };
            std::vector<idlewheel::timeout> handles;
            handles.push_back(wheel.schedule(std::chrono::hours::max(), never));
            handles.push_back(wheel.schedule(std::chrono::nanoseconds::max(), never));
            handles.push_back(wheel.schedule(std::chrono::seconds::max(), never));
            handles.push_back(wheel.schedule(std::chrono::years(100), never));
            handles.push_back(wheel.schedule(std::chrono::years(1000), never));  // > 2^63 ns
            handles.push_back(wheel.schedule(std::chrono::duration<double>(1e300), never));
            handles.push_back(wheel.schedule(std::chrono::duration<double>(std::numeric_limits<double>::infinity()), never));
            handles.push_back(wheel.schedule(std::chrono::duration<long double, std::ratio<31556952>>(1e30L), never));
            session s(manual_clock::now());
            wheel.schedule(s.node, std::chrono::hours::max());
            int control = 0;
            wheel.schedule(1s, [&control] { ++control; });

            // 1000 hours, an hour at a time.
            advance_and_poll(io, 1000h, 1h);
            BOOST_TEST(control == 1);
            BOOST_TEST(fired == 0);
            BOOST_TEST(s.fired.empty());
            BOOST_TEST(wheel.pending() == handles.size() + 1);
            for (const auto& h : handles) BOOST_TEST(h.pending());
            BOOST_TEST(s.node.pending());
            BOOST_TEST(wheel.stats().wakeups == 1U);  // the control only: far entries cost nothing

            // Still usable: a new timeout after all that time fires on time, not a moment early.
            int later = 0;
            wheel.schedule(tick * 3, [&later] { ++later; });
            advance_and_poll(io, tick * 3 - 1ns, tick);
            BOOST_TEST(later == 0);
            advance_and_poll(io, 1ns, 1ns);
            BOOST_TEST(later == 1);

            for (auto& h : handles) BOOST_TEST(h.cancel());
            BOOST_TEST(s.node.cancel());
            BOOST_TEST(wheel.pending() == 0U);
            BOOST_TEST(captured.use_count() == 2);  // `never` itself, and nothing in the wheel
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(wakeups)

BOOST_FIXTURE_TEST_CASE(an_idle_wheel_never_wakes, wheel_fixture) {
    advance_and_poll(io, 10min, 1s);
    BOOST_TEST(wheel.stats().wakeups == 0U);
    BOOST_TEST(io.stopped());  // no Asio wait was ever started: nothing keeps run() busy

    // Everything cancelled: the Asio timer is disarmed rather than left to fire for nothing.
    int fired = 0;
    auto a = wheel.schedule(50ms, [&fired] { ++fired; });
    auto b = wheel.schedule(50ms, [&fired] { ++fired; });
    auto c = wheel.schedule(2s, [&fired] { ++fired; });
    auto s = std::make_unique<session>(t0);
    wheel.schedule(s->node, 1s);
    poll(io);
    BOOST_TEST(!io.stopped());  // the wheel's Asio wait is outstanding work
    BOOST_TEST(a.cancel());
    BOOST_TEST(c.cancel());
    BOOST_TEST(s->node.cancel());
    poll(io);
    BOOST_TEST(!io.stopped());  // `b` still needs the wait
    BOOST_TEST(b.cancel());
    BOOST_TEST(wheel.pending() == 0U);
    poll(io);
    BOOST_TEST(io.stopped());  // the last cancel took the Asio wait away

    // The same when the last entry goes by destruction of its node.
    wheel.schedule(s->node, 3s);
    poll(io);
    BOOST_TEST(!io.stopped());
    s.reset();
    BOOST_TEST(wheel.pending() == 0U);
    poll(io);
    BOOST_TEST(io.stopped());

    advance_and_poll(io, 5s, 10ms);
    const auto st = wheel.stats();
    BOOST_TEST(fired == 0);
    BOOST_TEST(st.wakeups == 0U);
    BOOST_TEST(st.idle_wakeups == 0U);
    BOOST_TEST(st.expired == 0U);
    BOOST_TEST(st.cancelled == 5U);
}

BOOST_FIXTURE_TEST_CASE(one_wakeup_per_distinct_deadline_tick, wheel_fixture) {
    int fired = 0;
    for (int i = 0; i < 100; ++i) wheel.schedule(50ms, [&fired] { ++fired; });
    advance_and_poll(io, 60ms);
    BOOST_TEST(fired == 100);
    BOOST_TEST(wheel.stats().wakeups == 1U);

    // Three distinct boundaries (70 ms, 760 ms, 50.06 s), on levels 0, 1 and 2 of the wheel.
    std::vector<std::int64_t> at;
    auto log = [&at, this] { at.push_back(ms_since(t0)); };
    session s(t0);
    for (const auto d : {5ms, 5ms, 5ms, 700ms, 700ms, 50'000ms}) wheel.schedule(d, log);
    wheel.schedule(s.node, 50s);
    advance_and_poll(io, 1s, 10ms);
    advance_and_poll(io, 48s, 1s);  // nothing due in between: no precision needed
    advance_and_poll(io, 2s, 10ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{70, 70, 70, 760, 760, 50'060}), boost::test_tools::per_element());
    BOOST_TEST(s.fired == (std::vector<std::int64_t>{50'060}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().wakeups == 4U);
    BOOST_TEST(wheel.stats().idle_wakeups == 0U);
}

BOOST_AUTO_TEST_CASE(a_far_timeout_costs_one_wakeup) {
    for (const std::int64_t phase : {0, 3}) {
        BOOST_TEST_CONTEXT("start phase " << phase << " ms") {
            manual_clock::reset();
            net::io_context io;
            wheel_type wheel(io);
            const auto origin = manual_clock::now();
            manual_clock::advance(std::chrono::milliseconds(phase));
            std::vector<std::int64_t> at;
            wheel.schedule(10min, [&at, origin] { at.push_back(ms_since(origin)); });
            advance_and_poll(io, 599s, 1s);
            BOOST_TEST(at.empty());
            BOOST_TEST(wheel.stats().wakeups == 0U);
            advance_and_poll(io, 2s);
            BOOST_TEST(at == (std::vector<std::int64_t>{ceil_to_tick(600'000 + phase)}), boost::test_tools::per_element());
            BOOST_TEST(wheel.stats().wakeups == 1U);
            BOOST_TEST(wheel.stats().idle_wakeups == 0U);
        }
    }
}

BOOST_FIXTURE_TEST_CASE(a_day_long_timeout_costs_one_wakeup, wheel_fixture) {
    std::vector<std::int64_t> at;
    wheel.schedule(24h, [&at, this] { at.push_back(ms_since(t0)); });
    advance_and_poll(io, 24h - 1s, 1min);
    BOOST_TEST(at.empty());
    advance_and_poll(io, 2s, 10ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{24 * 3600 * 1000}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().wakeups == 1U);
}

// A cancelled neighbour in the same high-level slot leaves an early hint behind: the wheel
// may wake once more per level the survivor crosses, but the survivor is still exact.
BOOST_FIXTURE_TEST_CASE(a_cancelled_neighbour_costs_at_most_a_few_wakeups, wheel_fixture) {
    std::vector<std::int64_t> at;
    auto near = wheel.schedule(594s, [] {});
    wheel.schedule(600s, [&at, this] { at.push_back(ms_since(t0)); });
    BOOST_TEST(near.cancel());
    advance_and_poll(io, 599s, 1s);  // the stale wake-up, if any, needs no precision
    BOOST_TEST(at.empty());
    advance_and_poll(io, 2s, 10ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{600'000}), boost::test_tools::per_element());
    const auto s = wheel.stats();
    BOOST_TEST(s.wakeups >= 1U);
    BOOST_TEST(s.wakeups <= 3U);
    BOOST_TEST(s.idle_wakeups == s.wakeups - 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(callbacks)

BOOST_FIXTURE_TEST_CASE(same_tick_runs_in_schedule_order, wheel_fixture) {
    std::vector<int> order;
    for (int i = 0; i < 8; ++i) wheel.schedule(25ms, [&order, i] { order.push_back(i); });
    advance_and_poll(io, 30ms);
    BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(cancel_inside_a_callback, wheel_fixture) {
    std::vector<int> order;
    idlewheel::timeout a;
    idlewheel::timeout b;
    idlewheel::timeout c;
    session s(t0);
    int cancelled_b = -1;  // -1: not called
    int cancelled_self = -1;
    int cancelled_node = -1;
    a = wheel.schedule(20ms, [&] {
        order.push_back(0);
        cancelled_b = b.cancel() ? 1 : 0;
        cancelled_self = a.cancel() ? 1 : 0;
        cancelled_node = s.node.cancel() ? 1 : 0;
        BOOST_TEST(a.expired());
        BOOST_TEST(!a.pending());
    });
    b = wheel.schedule(20ms, [&order] { order.push_back(1); });
    wheel.schedule(s.node, 20ms);
    c = wheel.schedule(20ms, [&order] { order.push_back(2); });
    advance_and_poll(io, 20ms);

    BOOST_TEST(order == (std::vector<int>{0, 2}), boost::test_tools::per_element());
    BOOST_TEST(cancelled_b == 1);
    BOOST_TEST(cancelled_self == 0);
    BOOST_TEST(cancelled_node == 1);
    BOOST_TEST(s.fired.empty());
    BOOST_TEST(b.cancelled());
    BOOST_TEST(!b.expired());
    BOOST_TEST(a.expired());
    BOOST_TEST(c.expired());
    advance_and_poll(io, 100ms);
    BOOST_TEST(order.size() == 2U);
    const auto st = wheel.stats();
    BOOST_TEST(st.expired == 2U);
    BOOST_TEST(st.cancelled == 2U);
    BOOST_TEST(st.pending == 0U);
}

// Netty's HashedWheelTimerTest: a task that reschedules itself every second.
BOOST_FIXTURE_TEST_CASE(reschedule_itself_every_second, wheel_fixture) {
    struct ticker {
        wheel_type& wheel;
        manual_clock::time_point t0;
        std::vector<std::int64_t> at;
        void arm() {
            wheel.schedule(1s, [this] {
                at.push_back(ms_since(t0));
                if (at.size() < 10) arm();
            });
        }
    } t{wheel, t0, {}};
    t.arm();
    advance_and_poll(io, 10500ms, 10ms);  // every boundary is polled: times stay exact
    BOOST_TEST(t.at == (std::vector<std::int64_t>{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000}),
               boost::test_tools::per_element());
    advance_and_poll(io, 5s, 10ms);
    BOOST_TEST(t.at.size() == 10U);
    const auto s = wheel.stats();
    BOOST_TEST(s.scheduled == 10U);
    BOOST_TEST(s.expired == 10U);
    BOOST_TEST(s.wakeups == 10U);
    BOOST_TEST(wheel.pending() == 0U);
}

// The zero-allocation form of the same: a node that re-arms itself.
BOOST_FIXTURE_TEST_CASE(a_node_rescheduling_itself, wheel_fixture) {
    struct periodic {
        wheel_type& wheel;
        manual_clock::time_point t0;
        std::vector<std::int64_t> at;
        idlewheel::timer_node node{idlewheel::bind_member<&periodic::fire>(this)};
        void fire() {
            at.push_back(ms_since(t0));
            if (at.size() < 5) wheel.schedule(node, 250ms);
        }
    } p{wheel, t0, {}};
    wheel.schedule(p.node, 250ms);
    advance_and_poll(io, 2s);
    BOOST_TEST(p.at == (std::vector<std::int64_t>{250, 500, 750, 1000, 1250}), boost::test_tools::per_element());
    BOOST_TEST(!p.node.pending());
}

// A callback that asks for "now" must wait for the next tick, not run again in the same poll.
BOOST_FIXTURE_TEST_CASE(rescheduling_with_zero_delay_does_not_spin, wheel_fixture) {
    struct spinner {
        wheel_type& wheel;
        int runs = 0;
        void arm() {
            wheel.schedule(0ms, [this] {
                ++runs;
                arm();
            });
        }
    } s{wheel};
    s.arm();
    poll(io);
    BOOST_TEST(s.runs == 0);
    advance_and_poll(io, 10ms, 10ms);
    BOOST_TEST(s.runs == 1);
    poll(io);
    BOOST_TEST(s.runs == 1);
    advance_and_poll(io, 50ms, 10ms);
    BOOST_TEST(s.runs == 6);
    BOOST_TEST(wheel.pending() == 1U);
}

BOOST_FIXTURE_TEST_CASE(move_only_callables, wheel_fixture) {
    auto owned = std::make_unique<int>(42);
    int seen = 0;
    wheel.schedule(10ms, [&seen, p = std::move(owned)] { seen = *p; });
    advance_and_poll(io, 10ms);
    BOOST_TEST(seen == 42);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(statistics)

BOOST_FIXTURE_TEST_CASE(every_counter, wheel_fixture) {
    auto a = wheel.schedule(10ms, [] {});
    auto b = wheel.schedule(10ms, [] {});
    auto c = wheel.schedule(30ms, [] {});
    session s(t0);
    wheel.schedule(s.node, 50ms);
    BOOST_TEST(b.cancel());
    wheel.schedule(s.node, 60ms);
    BOOST_TEST(wheel.stats().pending == 3U);
    advance_and_poll(io, 100ms);
    auto st = wheel.stats();
    BOOST_TEST(st.pending == 0U);
    BOOST_TEST(st.scheduled == 5U);
    BOOST_TEST(st.rescheduled == 1U);
    BOOST_TEST(st.expired == 3U);
    BOOST_TEST(st.cancelled == 1U);
    BOOST_TEST(st.stopped == 0U);
    BOOST_TEST(st.rejected == 0U);
    BOOST_TEST(st.wakeups == 3U);  // 10, 30 and 60 ms
    BOOST_TEST(st.idle_wakeups == 0U);
    BOOST_TEST(st.ticks_advanced == 6U);
    BOOST_TEST(st.worst_lateness.count() == 0);  // polled every millisecond

    // Polled 27 ms after its tick began: that is the lateness.
    wheel.schedule(10ms, [] {});  // at 100 ms: due at 110 ms
    manual_clock::advance(37ms);
    poll(io);
    st = wheel.stats();
    BOOST_TEST(st.expired == 4U);
    BOOST_TEST(st.worst_lateness.count() == std::chrono::nanoseconds(27ms).count());
    BOOST_TEST(st.ticks_advanced == 13U);

    wheel.schedule(1s, [] {});
    wheel.schedule(2s, [] {});
    BOOST_TEST(wheel.stop().size() == 2U);
    BOOST_CHECK_THROW(wheel.schedule(1s, [] {}), idlewheel::system_error);
    st = wheel.stats();
    BOOST_TEST(st.stopped == 2U);
    BOOST_TEST(st.rejected == 1U);
    BOOST_TEST(st.scheduled == 8U);
    BOOST_TEST(st.pending == 0U);
}

BOOST_FIXTURE_TEST_CASE(worst_lateness_stays_within_a_tick, wheel_fixture) {
    // Deadlines everywhere, polled every millisecond at unaligned times.
    manual_clock::advance(3ms);
    for (int d = 1; d < 500; d += 7) wheel.schedule(std::chrono::milliseconds(d), [] {});
    advance_and_poll(io, 600ms);
    BOOST_TEST(wheel.stats().expired == 72U);
    BOOST_TEST(wheel.stats().worst_lateness.count() >= 0);
    BOOST_TEST(wheel.stats().worst_lateness <= wheel.tick());
}

BOOST_AUTO_TEST_SUITE_END()
