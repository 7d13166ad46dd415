// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// basic_wheel_timer on idlewheel::manual_clock: time moves only when a test moves it, and the
// io_context is driven by poll() alone, so every expectation is an exact time, count or order.
// async_wait's token and cancellation machinery is tested in test_async_wait.cpp; the real
// clock in test_realtime.cpp.

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

bool is_error(const idlewheel::system_error& e, idlewheel::error expected) {
    return e.code() == make_error_code(expected);
}

// The receiving end of an async_wait that must complete exactly once.
struct wait_result {
    int calls = 0;
    error_code ec;
    std::int64_t at = -1;
};

auto record(wait_result& r, manual_clock::time_point t0) {
    return [&r, t0](error_code ec) {
        ++r.calls;
        r.ec = ec;
        r.at = ms_since(t0);
    };
}

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

BOOST_AUTO_TEST_SUITE(timeout_handle)

BOOST_FIXTURE_TEST_CASE(states, wheel_fixture) {
    idlewheel::timeout empty;
    BOOST_TEST(!empty);
    BOOST_TEST(!empty.pending());
    BOOST_TEST(!empty.expired());
    BOOST_TEST(!empty.cancelled());
    BOOST_TEST(!empty.cancel());

    int runs = 0;
    auto h = wheel.schedule(10ms, [&runs] { ++runs; });
    BOOST_TEST(static_cast<bool>(h));
    BOOST_TEST(h.pending());
    BOOST_TEST(!h.expired());
    BOOST_TEST(!h.cancelled());
    BOOST_TEST(!(h == empty));
    advance_and_poll(io, 10ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(!h.pending());
    BOOST_TEST(h.expired());
    BOOST_TEST(!h.cancelled());
    BOOST_TEST(!h.cancel());  // already ran
    BOOST_TEST(h.expired());

    auto k = wheel.schedule(10ms, [&runs] { ++runs; });
    BOOST_TEST(k.cancel());
    BOOST_TEST(!k.cancel());  // twice: only the first one did it
    BOOST_TEST(k.cancelled());
    BOOST_TEST(!k.pending());
    BOOST_TEST(!k.expired());
    advance_and_poll(io, 50ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(wheel.stats().cancelled == 1U);
}

BOOST_FIXTURE_TEST_CASE(copies_share_state, wheel_fixture) {
    int runs = 0;
    auto h = wheel.schedule(10ms, [&runs] { ++runs; });
    idlewheel::timeout copy = h;
    idlewheel::timeout assigned;
    assigned = copy;
    BOOST_TEST((copy == h));
    BOOST_TEST((assigned == h));
    BOOST_TEST(assigned.cancel());
    BOOST_TEST(h.cancelled());
    BOOST_TEST(copy.cancelled());
    BOOST_TEST(!h.cancel());

    auto g = wheel.schedule(10ms, [&runs] { ++runs; });
    idlewheel::timeout moved = std::move(g);
    BOOST_TEST(!g);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
    BOOST_TEST(moved.pending());
    {
        idlewheel::timeout scoped = moved;  // copies come and go; the timeout does not care
    }
    advance_and_poll(io, 10ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(moved.expired());
}

BOOST_FIXTURE_TEST_CASE(dropping_every_handle_does_not_cancel, wheel_fixture) {
    int runs = 0;
    { auto h = wheel.schedule(10ms, [&runs] { ++runs; }); }
    wheel.schedule(10ms, [&runs] { ++runs; });
    advance_and_poll(io, 10ms);
    BOOST_TEST(runs == 2);
}

BOOST_FIXTURE_TEST_CASE(captures_are_released_right_after_run_and_cancel, wheel_fixture) {
    auto sp = std::make_shared<int>(1);
    long count_in_next = -1;
    auto h = wheel.schedule(10ms, [sp] {});
    // Runs right after `h` in the same batch: by then h's callable must be gone.
    wheel.schedule(10ms, [&count_in_next, &sp] { count_in_next = sp.use_count(); });
    BOOST_TEST(sp.use_count() == 2);
    advance_and_poll(io, 10ms);
    BOOST_TEST(count_in_next == 1);
    BOOST_TEST(sp.use_count() == 1);
    BOOST_TEST(h.expired());  // the handle lives on without the callable

    auto k = wheel.schedule(1s, [sp] {});
    BOOST_TEST(sp.use_count() == 2);
    BOOST_TEST(k.cancel());
    BOOST_TEST(sp.use_count() == 1);  // at once, not at the deadline

    // Thrown out of the callback: released all the same.
    wheel.schedule(10ms, [sp] { throw std::runtime_error("boom"); });
    BOOST_TEST(sp.use_count() == 2);
    manual_clock::advance(10ms);
    BOOST_CHECK_THROW(poll(io), std::runtime_error);
    BOOST_TEST(sp.use_count() == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(timer_nodes)

BOOST_FIXTURE_TEST_CASE(schedule_and_fire_once, wheel_fixture) {
    session s(t0);
    BOOST_TEST(!s.node.pending());
    BOOST_TEST(!s.node.cancel());
    wheel.schedule(s.node, 100ms);
    BOOST_TEST(s.node.pending());
    BOOST_TEST(wheel.pending() == 1U);
    advance_and_poll(io, 300ms);
    BOOST_TEST(s.fired == (std::vector<std::int64_t>{100}), boost::test_tools::per_element());
    BOOST_TEST(!s.node.pending());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_FIXTURE_TEST_CASE(reschedule_while_pending_fires_once_at_the_new_time, wheel_fixture) {
    session later(t0);
    session sooner(t0);
    wheel.schedule(later.node, 100ms);
    wheel.schedule(sooner.node, 1s);
    advance_and_poll(io, 50ms);
    wheel.schedule(later.node, 100ms);  // now due at 150 ms
    wheel.schedule(sooner.node, 20ms);  // now due at 70 ms: the wheel must wake earlier
    BOOST_TEST(wheel.pending() == 2U);
    advance_and_poll(io, 2s);
    BOOST_TEST(later.fired == (std::vector<std::int64_t>{150}), boost::test_tools::per_element());
    BOOST_TEST(sooner.fired == (std::vector<std::int64_t>{70}), boost::test_tools::per_element());
    const auto s = wheel.stats();
    BOOST_TEST(s.scheduled == 4U);
    BOOST_TEST(s.rescheduled == 2U);
    BOOST_TEST(s.expired == 2U);
    BOOST_TEST(s.cancelled == 0U);
}

BOOST_FIXTURE_TEST_CASE(destroying_a_pending_node_unschedules_it, wheel_fixture) {
    auto s = std::make_unique<session>(t0);
    session other(t0);
    wheel.schedule(s->node, 100ms);
    wheel.schedule(other.node, 100ms);
    BOOST_TEST(wheel.pending() == 2U);
    s.reset();  // under ASan, a callback through the dead node would be a use after free
    BOOST_TEST(wheel.pending() == 1U);
    BOOST_TEST(wheel.stats().cancelled == 1U);
    advance_and_poll(io, 200ms);
    BOOST_TEST(other.fired == (std::vector<std::int64_t>{100}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().expired == 1U);
}

BOOST_FIXTURE_TEST_CASE(schedule_at_and_schedule_tick, wheel_fixture) {
    session a(t0);
    session b(t0);
    session c(t0);
    wheel.schedule_at(a.node, t0 + 250ms);
    wheel.schedule_tick(b.node, wheel.deadline_after(30ms));
    manual_clock::advance(5ms);
    wheel.schedule_at(c.node, t0 - 1h);  // in the past: as soon as possible
    advance_and_poll(io, 300ms);
    BOOST_TEST(a.fired == (std::vector<std::int64_t>{250}), boost::test_tools::per_element());
    BOOST_TEST(b.fired == (std::vector<std::int64_t>{30}), boost::test_tools::per_element());
    BOOST_TEST(c.fired == (std::vector<std::int64_t>{10}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(cancel_and_set_callback, wheel_fixture) {
    session s(t0);
    int plain_calls = 0;
    wheel.schedule(s.node, 10ms);
    BOOST_TEST(s.node.cancel());
    BOOST_TEST(!s.node.cancel());
    BOOST_TEST(!s.node.pending());
    wheel.schedule(s.node, 20ms);
    s.node.set_callback({[](void* p) { ++*static_cast<int*>(p); }, &plain_calls});
    advance_and_poll(io, 50ms);
    BOOST_TEST(plain_calls == 1);
    BOOST_TEST(s.fired.empty());
}

BOOST_FIXTURE_TEST_CASE(moving_a_node_to_another_wheel, wheel_fixture) {
    wheel_type second(io);
    session s(t0);
    wheel.schedule(s.node, 10ms);
    second.schedule(s.node, 30ms);
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(second.pending() == 1U);
    BOOST_TEST(wheel.stats().cancelled == 1U);
    advance_and_poll(io, 50ms);
    BOOST_TEST(s.fired == (std::vector<std::int64_t>{30}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().wakeups == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(stopping)

BOOST_FIXTURE_TEST_CASE(stop_returns_exactly_the_unrun_handles, wheel_fixture) {
    std::vector<int> ran;
    auto h1 = wheel.schedule(10ms, [&ran] { ran.push_back(1); });
    auto h2 = wheel.schedule(1s, [&ran] { ran.push_back(2); });
    auto h3 = wheel.schedule(2s, [&ran] { ran.push_back(3); });
    auto h4 = wheel.schedule(2s, [&ran] { ran.push_back(4); });
    BOOST_TEST(h4.cancel());
    session s(t0);
    wheel.schedule(s.node, 500ms);
    wait_result w;
    wheel.async_wait(700ms, record(w, t0));
    advance_and_poll(io, 20ms);
    BOOST_TEST(ran == (std::vector<int>{1}), boost::test_tools::per_element());

    const auto unrun = wheel.stop();
    BOOST_TEST(unrun.size() == 2U);
    BOOST_TEST(std::count(unrun.begin(), unrun.end(), h2) == 1);
    BOOST_TEST(std::count(unrun.begin(), unrun.end(), h3) == 1);
    for (const auto& t : unrun) {
        BOOST_TEST(t.cancelled());
        BOOST_TEST(!t.pending());
    }
    BOOST_TEST(h2.cancelled());
    BOOST_TEST(!h2.cancel());
    BOOST_TEST(h1.expired());
    BOOST_TEST(!s.node.pending());
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(w.calls == 0);  // completes as if by post
    poll(io);
    BOOST_TEST(w.calls == 1);
    BOOST_TEST(w.ec == net::error::operation_aborted);
    BOOST_TEST(io.stopped());  // the Asio wait is gone too

    const auto s1 = wheel.stats();
    BOOST_TEST(s1.stopped == 4U);  // h2, h3, the node, the wait
    BOOST_TEST(s1.expired == 1U);
    BOOST_TEST(s1.cancelled == 1U);

    BOOST_CHECK_EXCEPTION(wheel.schedule(1ms, [] {}), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::stopped); });
    BOOST_CHECK_EXCEPTION(wheel.schedule(s.node, 1ms), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::stopped); });
    BOOST_CHECK_EXCEPTION(wheel.schedule_at(s.node, t0), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::stopped); });
    wait_result late;
    wheel.async_wait(1ms, record(late, t0));
    BOOST_TEST(late.calls == 0);  // not inline
    poll(io);
    BOOST_TEST(late.calls == 1);
    BOOST_TEST(late.ec == make_error_code(idlewheel::error::stopped));
    BOOST_TEST(wheel.stats().rejected == 4U);
    BOOST_TEST(!s.node.pending());

    BOOST_TEST(wheel.stop().empty());  // idempotent
    advance_and_poll(io, 5s, 10ms);
    BOOST_TEST(ran.size() == 1U);
    BOOST_TEST(s.fired.empty());
    BOOST_TEST(wheel.stats().wakeups == 1U);
}

BOOST_FIXTURE_TEST_CASE(stop_inside_a_callback_returns_the_rest_of_the_batch, wheel_fixture) {
    std::vector<int> ran;
    std::vector<idlewheel::timeout> unrun;
    std::vector<idlewheel::timeout> handles;
    handles.push_back(wheel.schedule(10ms, [&ran] { ran.push_back(0); }));
    handles.push_back(wheel.schedule(10ms, [&] {
        ran.push_back(1);
        unrun = wheel.stop();
    }));
    handles.push_back(wheel.schedule(10ms, [&ran] { ran.push_back(2); }));
    handles.push_back(wheel.schedule(10ms, [&ran] { ran.push_back(3); }));
    handles.push_back(wheel.schedule(1h, [&ran] { ran.push_back(4); }));
    advance_and_poll(io, 20ms);
    BOOST_TEST(ran == (std::vector<int>{0, 1}), boost::test_tools::per_element());
    BOOST_TEST(unrun.size() == 3U);
    for (std::size_t i = 2; i < 5; ++i) {
        BOOST_TEST(std::count(unrun.begin(), unrun.end(), handles[i]) == 1);
        BOOST_TEST(handles[i].cancelled());
    }
    BOOST_TEST(handles[1].expired());
    advance_and_poll(io, 2h, 1min);
    BOOST_TEST(ran.size() == 2U);
    BOOST_TEST(io.stopped());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(limits)

BOOST_FIXTURE_TEST_CASE(max_pending, manual_fixture) {
    wheel_type wheel(io, {.max_pending = 3});
    std::vector<std::int64_t> at;
    auto log = [&at, this] { at.push_back(ms_since(t0)); };
    session node(t0);
    session other(t0);
    auto h1 = wheel.schedule(10ms, log);
    wheel.schedule(node.node, 20ms);
    auto h3 = wheel.schedule(30ms, log);
    BOOST_TEST(wheel.pending() == 3U);

    auto rejected_capture = std::make_shared<int>(0);
    BOOST_CHECK_EXCEPTION(wheel.schedule(5ms, [rejected_capture] {}), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::too_many_pending); });
    BOOST_TEST(rejected_capture.use_count() == 1);  // the refused callable was not kept
    BOOST_CHECK_EXCEPTION(wheel.schedule(other.node, 5ms), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::too_many_pending); });
    BOOST_TEST(!other.node.pending());
    BOOST_TEST(wheel.stats().rejected == 2U);

    // Moving an entry that is already pending takes no new room.
    BOOST_CHECK_NO_THROW(wheel.schedule(node.node, 25ms));
    BOOST_TEST(wheel.pending() == 3U);
    BOOST_TEST(wheel.stats().rescheduled == 1U);

    advance_and_poll(io, 10ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{10}), boost::test_tools::per_element());
    BOOST_CHECK_NO_THROW(wheel.schedule(other.node, 5ms));  // room again
    BOOST_CHECK_EXCEPTION(wheel.schedule(5ms, log), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::too_many_pending); });
    advance_and_poll(io, 100ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{10, 30}), boost::test_tools::per_element());
    BOOST_TEST(node.fired == (std::vector<std::int64_t>{30}), boost::test_tools::per_element());
    BOOST_TEST(other.fired == (std::vector<std::int64_t>{20}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().rejected == 3U);
    BOOST_TEST(h1.expired());
    BOOST_TEST(h3.expired());
}

// A running callback no longer counts as pending, so it may schedule its successor in a full
// wheel (the idle_watch pattern: re-arm from the expiry callback).
BOOST_FIXTURE_TEST_CASE(max_pending_leaves_room_for_a_running_callback, manual_fixture) {
    wheel_type wheel(io, {.max_pending = 2});
    std::vector<std::int64_t> at;
    auto log = [&at, this] { at.push_back(ms_since(t0)); };
    int inside = -1;  // -1: not run
    wheel.schedule(1s, log);
    wheel.schedule(10ms, [&] {
        log();
        inside = 0;
        wheel.schedule(10ms, log);
        inside = 1;
        wheel.schedule(10ms, log);  // full again: throws out of the callback
        inside = 2;
    });
    manual_clock::advance(10ms);
    BOOST_CHECK_EXCEPTION(poll(io), idlewheel::system_error,
                          [](const auto& e) { return is_error(e, idlewheel::error::too_many_pending); });
    BOOST_TEST(inside == 1);
    BOOST_TEST(wheel.pending() == 2U);
    advance_and_poll(io, 1s);
    BOOST_TEST(at == (std::vector<std::int64_t>{10, 20, 1000}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().rejected == 1U);
}

// Deadlines all due at one wake-up, scheduled out of order: one handler runs at most 3, the
// rest follow in later handlers, all in deadline order, each exactly once.
BOOST_FIXTURE_TEST_CASE(max_run_per_wakeup_bounds_a_handler, manual_fixture) {
    wheel_type wheel(io, {.max_run_per_wakeup = 3});
    std::vector<int> order;
    for (const int i : {7, 2, 9, 0, 5, 3, 8, 1, 6, 4}) {
        wheel.schedule(std::chrono::milliseconds(10 * (i + 1)), [&order, i] { order.push_back(i); });
    }
    poll(io);  // each earlier deadline replaced the Asio wait: run the aborted ones first
    manual_clock::advance(100ms);
    io.poll_one();
    BOOST_TEST(order.size() == 3U);
    io.poll_one();
    BOOST_TEST(order.size() == 6U);
    io.poll_one();
    BOOST_TEST(order.size() == 9U);
    io.poll_one();
    BOOST_TEST(order.size() == 10U);
    poll(io);
    BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(wheel.stats().expired == 10U);
    BOOST_TEST(io.stopped());
}

BOOST_FIXTURE_TEST_CASE(max_run_per_wakeup_yields_to_other_handlers, manual_fixture) {
    wheel_type wheel(io, {.max_run_per_wakeup = 3});
    std::vector<int> order;
    std::size_t ran_before_io = 0;
    for (int i = 0; i < 10; ++i) {
        wheel.schedule(10ms, [&, i] {
            order.push_back(i);
            if (i == 0) net::post(io, [&] { ran_before_io = order.size(); });
        });
    }
    advance_and_poll(io, 10ms);
    BOOST_TEST(order.size() == 10U);
    BOOST_TEST(ran_before_io == 3U);  // the I/O handler got its turn after the first 3
}

BOOST_FIXTURE_TEST_CASE(a_cancel_between_bounded_handlers, manual_fixture) {
    wheel_type wheel(io, {.max_run_per_wakeup = 2});
    std::vector<int> order;
    std::vector<idlewheel::timeout> h;
    for (int i = 0; i < 5; ++i) h.push_back(wheel.schedule(10ms, [&order, i] { order.push_back(i); }));
    manual_clock::advance(10ms);
    io.poll_one();
    BOOST_TEST(wheel.pending() == 3U);  // due, waiting in the batch: still pending
    BOOST_TEST(h[3].pending());
    BOOST_TEST(h[3].cancel());
    BOOST_TEST(wheel.pending() == 2U);
    poll(io);
    BOOST_TEST(order == (std::vector<int>{0, 1, 2, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(faults)

BOOST_FIXTURE_TEST_CASE(a_throwing_callback_loses_nothing, wheel_fixture) {
    std::array<int, 5> runs{};
    std::vector<idlewheel::timeout> h;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        h.push_back(wheel.schedule(20ms, [&runs, i] {
            ++runs[i];
            if (i == 2) throw std::runtime_error("callback 2");
        }));
    }
    session later(t0);
    wheel.schedule(later.node, 100ms);
    manual_clock::advance(20ms);
    BOOST_CHECK_THROW(poll(io), std::runtime_error);
    BOOST_TEST(runs == (std::array<int, 5>{1, 1, 1, 0, 0}), boost::test_tools::per_element());
    BOOST_TEST(h[2].expired());
    BOOST_TEST(h[3].pending());
    BOOST_TEST(wheel.pending() == 3U);

    poll(io);  // the next run goes on where the exception left
    BOOST_TEST(runs == (std::array<int, 5>{1, 1, 1, 1, 1}), boost::test_tools::per_element());
    poll(io);
    BOOST_TEST(runs == (std::array<int, 5>{1, 1, 1, 1, 1}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().expired == 5U);

    // And it keeps working, for what was pending and for new timeouts.
    std::vector<std::int64_t> at;
    wheel.schedule(30ms, [&at, this] { at.push_back(ms_since(t0)); });
    advance_and_poll(io, 100ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{50}), boost::test_tools::per_element());
    BOOST_TEST(later.fired == (std::vector<std::int64_t>{100}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_FIXTURE_TEST_CASE(the_last_of_a_batch_throwing_still_rearms, wheel_fixture) {
    struct thrower {
        void fire() { throw std::logic_error("node"); }
        idlewheel::timer_node node{idlewheel::bind_member<&thrower::fire>(this)};
    } t;
    std::vector<std::int64_t> at;
    wheel.schedule(t.node, 10ms);
    wheel.schedule(70ms, [&at, this] { at.push_back(ms_since(t0)); });
    manual_clock::advance(10ms);
    BOOST_CHECK_THROW(poll(io), std::logic_error);
    BOOST_TEST(!t.node.pending());
    advance_and_poll(io, 100ms);
    BOOST_TEST(at == (std::vector<std::int64_t>{70}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(draining)

BOOST_FIXTURE_TEST_CASE(expire_all_runs_everything_in_deadline_order, wheel_fixture) {
    std::vector<std::string> order;
    struct named_session {
        std::vector<std::string>* order;
        std::string name;
        void fire() { order->push_back(name); }
        idlewheel::timer_node node{idlewheel::bind_member<&named_session::fire>(this)};
    };
    named_session n1{&order, "node 100ms"};
    named_session n2{&order, "node 1h"};
    auto h300 = wheel.schedule(300ms, [&order] { order.push_back("handle 300ms"); });
    wheel.schedule(n2.node, 1h);
    wheel.async_wait(200ms, [&order](error_code ec) { order.push_back("wait 200ms " + ec.message()); });
    wheel.schedule(n1.node, 100ms);
    auto h50 = wheel.schedule(50ms, [&order] { order.push_back("handle 50ms"); });
    std::size_t count = 0;
    net::post(io, [&] { count = wheel.expire_all(); });
    poll(io);
    BOOST_TEST(count == 5U);
    // A wait's completion is posted (it runs as a handler of its own): after the callbacks.
    const std::vector<std::string> expected{"handle 50ms", "node 100ms", "handle 300ms", "node 1h",
                                            "wait 200ms " + error_code().message()};
    BOOST_TEST(order == expected, boost::test_tools::per_element());
    BOOST_TEST(h50.expired());
    BOOST_TEST(h300.expired());
    BOOST_TEST(!n2.node.pending());
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(wheel.stats().expired == 5U);
    // Nothing left to wait for: the Asio timer armed for 50 ms must not keep run() busy.
    BOOST_TEST(io.stopped());
    advance_and_poll(io, 2h, 1min);
    BOOST_TEST(order.size() == 5U);
    BOOST_TEST(wheel.stats().wakeups == 0U);

    BOOST_TEST(wheel.expire_all() == 0U);  // empty
}

BOOST_FIXTURE_TEST_CASE(expire_all_outside_any_handler, wheel_fixture) {
    int runs = 0;
    wait_result w;
    wheel.schedule(1s, [&runs] { ++runs; });
    wheel.async_wait(2s, record(w, t0));
    BOOST_TEST(wheel.expire_all() == 2U);
    BOOST_TEST(runs == 1);
    BOOST_TEST(w.calls == 0);  // not inside expire_all: outside the io_context it is posted
    poll(io);
    BOOST_TEST(w.calls == 1);
    BOOST_TEST(!w.ec);
    BOOST_TEST(w.at == 0);
    BOOST_TEST(io.stopped());
}

BOOST_FIXTURE_TEST_CASE(expire_all_inside_a_callback_queues_behind_the_batch, wheel_fixture) {
    std::vector<std::pair<int, std::int64_t>> ran;
    std::size_t queued = 0;
    wheel.schedule(10ms, [&] {
        ran.emplace_back(0, ms_since(t0));
        queued = wheel.expire_all();
        BOOST_TEST(ran.size() == 1U);  // queued, not run from in here
    });
    wheel.schedule(10ms, [&] { ran.emplace_back(1, ms_since(t0)); });
    wheel.schedule(1s, [&] { ran.emplace_back(2, ms_since(t0)); });
    wheel.schedule(1h, [&] { ran.emplace_back(3, ms_since(t0)); });
    advance_and_poll(io, 10ms);
    BOOST_TEST(queued == 2U);
    const std::vector<std::pair<int, std::int64_t>> expected{{0, 10}, {1, 10}, {2, 10}, {3, 10}};
    BOOST_TEST((ran == expected));
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_FIXTURE_TEST_CASE(expire_all_with_a_throwing_callback, wheel_fixture) {
    std::array<int, 4> runs{};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        wheel.schedule(std::chrono::seconds(i + 1), [&runs, i] {
            ++runs[i];
            if (i == 1) throw std::runtime_error("drain");
        });
    }
    BOOST_CHECK_THROW(wheel.expire_all(), std::runtime_error);
    BOOST_TEST(runs == (std::array<int, 4>{1, 1, 0, 0}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 2U);
    poll(io);  // "the rest stay queued and run on the next io_context::run()"
    BOOST_TEST(runs == (std::array<int, 4>{1, 1, 1, 1}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lifetime)

// Where the wheel lives when a callback destroys it: std::optional keeps the storage (the
// brief's case: a stray access after destruction reads a dead but tidy object), std::unique_ptr
// frees it (ASan reports any stray access).
using wheel_holders = std::tuple<std::optional<wheel_type>, std::unique_ptr<wheel_type>>;

void emplace(std::optional<wheel_type>& holder, net::io_context& io) { holder.emplace(io); }
void emplace(std::unique_ptr<wheel_type>& holder, net::io_context& io) {
    holder = std::make_unique<wheel_type>(io);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(destroying_the_wheel_inside_a_callback, Holder, wheel_holders) {
    manual_fixture f;
    Holder wheel;
    emplace(wheel, f.io);
    std::vector<int> ran;
    std::vector<idlewheel::timeout> h;
    session s(f.t0);
    wait_result w;
    h.push_back(wheel->schedule(20ms, [&ran] { ran.push_back(0); }));
    h.push_back(wheel->schedule(20ms, [&] {
        ran.push_back(1);
        wheel.reset();
    }));
    h.push_back(wheel->schedule(20ms, [&ran] { ran.push_back(2); }));
    wheel->schedule(s.node, 20ms);
    wheel->async_wait(20ms, record(w, f.t0));
    h.push_back(wheel->schedule(20ms, [&ran] { ran.push_back(3); }));
    h.push_back(wheel->schedule(1h, [&ran] { ran.push_back(4); }));
    advance_and_poll(f.io, 20ms);
    BOOST_TEST(!wheel);
    BOOST_TEST(ran == (std::vector<int>{0, 1}), boost::test_tools::per_element());
    BOOST_TEST(h[1].expired());
    for (std::size_t i = 2; i < h.size(); ++i) BOOST_TEST(h[i].cancelled());
    BOOST_TEST(!s.node.pending());
    BOOST_TEST(s.fired.empty());
    BOOST_TEST(w.calls == 1);
    BOOST_TEST(w.ec == net::error::operation_aborted);
    advance_and_poll(f.io, 2h, 1min);
    BOOST_TEST(ran.size() == 2U);
    BOOST_TEST(f.io.stopped());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(destroying_the_wheel_inside_a_node_or_wait_callback, Holder, wheel_holders) {
    manual_fixture f;
    Holder wheel;
    emplace(wheel, f.io);
    struct killer {
        Holder* wheel;
        void fire() { wheel->reset(); }
        idlewheel::timer_node node{idlewheel::bind_member<&killer::fire>(this)};
    } k{&wheel};
    int after = 0;
    wheel->schedule(k.node, 10ms);
    auto h = wheel->schedule(10ms, [&after] { ++after; });
    advance_and_poll(f.io, 20ms);
    BOOST_TEST(!wheel);
    BOOST_TEST(after == 0);
    BOOST_TEST(h.cancelled());

    emplace(wheel, f.io);
    wait_result w;
    wheel->async_wait(10ms, [&](error_code ec) {
        w.ec = ec;
        ++w.calls;
        wheel.reset();
    });
    // The wait's handler runs as a handler of its own, after the wake-up that completed it:
    // the handle is due later than that.
    h = wheel->schedule(15ms, [&after] { ++after; });
    advance_and_poll(f.io, 12ms);
    BOOST_TEST(!wheel);
    BOOST_TEST(w.calls == 1);
    BOOST_TEST(!w.ec);
    BOOST_TEST(after == 0);
    BOOST_TEST(h.cancelled());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(destroying_the_wheel_inside_expire_all, Holder, wheel_holders) {
    manual_fixture f;
    Holder wheel;
    emplace(wheel, f.io);
    int after = 0;
    wheel->schedule(1s, [&wheel] { wheel.reset(); });
    auto h = wheel->schedule(2s, [&after] { ++after; });
    BOOST_TEST(wheel->expire_all() == 1U);
    BOOST_TEST(!wheel);
    BOOST_TEST(after == 0);
    BOOST_TEST(h.cancelled());
    poll(f.io);
    BOOST_TEST(f.io.stopped());
}

BOOST_FIXTURE_TEST_CASE(destroying_the_wheel_with_pending_timeouts, manual_fixture) {
    auto sp = std::make_shared<int>(0);
    std::optional<wheel_type> wheel(std::in_place, io);
    auto s = std::make_unique<session>(t0);
    wait_result w;
    auto h = wheel->schedule(1s, [sp] {});
    wheel->schedule(s->node, 1s);
    wheel->async_wait(1s, record(w, t0));
    advance_and_poll(io, 100ms);
    wheel.reset();
    BOOST_TEST(h.cancelled());
    BOOST_TEST(!h.cancel());
    BOOST_TEST(sp.use_count() == 1);
    BOOST_TEST(!s->node.pending());
    BOOST_TEST(w.calls == 0);
    poll(io);
    BOOST_TEST(w.calls == 1);
    BOOST_TEST(w.ec == net::error::operation_aborted);
    BOOST_TEST(w.at == 100);
    s.reset();  // a node that outlives its wheel dies quietly
    advance_and_poll(io, 2s, 100ms);
    BOOST_TEST(io.stopped());
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
