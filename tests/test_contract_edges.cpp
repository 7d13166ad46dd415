// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// The edges of the written contract, each a sentence of a header taken literally:
//  - "Delays are saturated, never overflowed", for every chrono type: odd periods (not a whole
//    number of nanoseconds), floating-point reps (NaN and infinities included), unsigned and
//    narrow reps, the limits of each;
//  - absolute times are exact, and a time that has passed is due now, at the limits of the
//    clock's range too;
//  - a running liveness object keeps its place at max_pending;
//  - an exception from any callback or wait handler leaves run() once, none is lost;
//  - per_tick: how staged entries order against absolute ones of the same tick;
//  - the rules a-f of issue 20 (suite rules) and expiry() (suite expiry): in
//    test_contract_edges_rules.cpp, the second file of this executable.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/error.hpp>
#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE contract_edges
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::clock_reset;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using ns = std::chrono::nanoseconds;

using fixture = idlewheel::test::wheel_fixture;

template <class D>
ns ceil_ns(D d) {
    return idlewheel::detail::saturating_ceil<ns>(d);
}

struct fired_at {
    manual_clock::time_point t0;
    std::vector<std::int64_t> at;
    void fire() { at.push_back(ms_since(t0)); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(saturating_conversion)

BOOST_AUTO_TEST_CASE(odd_periods_round_up_exactly) {
    using third = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;
    using seventh = std::chrono::duration<std::int32_t, std::ratio<1, 7>>;
    using tenth_us = std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>;
    using two_thirds_ns = std::chrono::duration<std::int64_t, std::ratio<2, 3'000'000'000>>;
    BOOST_TEST(ceil_ns(third(1)).count() == 333'333'334);
    BOOST_TEST(ceil_ns(third(3)).count() == 1'000'000'000);
    BOOST_TEST(ceil_ns(seventh(1)).count() == 142'857'143);
    BOOST_TEST(ceil_ns(tenth_us(1)).count() == 100);
    BOOST_TEST(ceil_ns(two_thirds_ns(1)).count() == 1);  // 0.67 ns: never rounded down to 0
    BOOST_TEST(ceil_ns(two_thirds_ns(3)).count() == 2);
    // 5e9 s is representable in int64 nanoseconds; std::chrono::ceil overflows on the way.
    BOOST_TEST(ceil_ns(third(15'000'000'000)).count() == 5'000'000'000'000'000'000);
}

BOOST_AUTO_TEST_CASE(too_large_saturates_and_never_wraps) {
    using third = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;
    using years = std::chrono::duration<std::int64_t, std::ratio<31'556'952>>;
    const auto max = ns::max().count();
    BOOST_TEST(ceil_ns(third(std::numeric_limits<std::int64_t>::max())).count() == max);
    BOOST_TEST(ceil_ns(std::chrono::hours::max()).count() == max);
    BOOST_TEST(ceil_ns(years(300)).count() == max);  // 9.5e18 ns: just past int64
    BOOST_TEST(ceil_ns(years(292)).count() == 292LL * 31'556'952LL * 1'000'000'000LL);
    BOOST_TEST(ceil_ns(std::chrono::duration<std::uint64_t, std::milli>(std::numeric_limits<std::uint64_t>::max())).count() == max);
    BOOST_TEST(ceil_ns(std::chrono::duration<std::uint8_t>(255)).count() == 255'000'000'000);
    BOOST_TEST(ceil_ns(std::chrono::duration<std::int16_t, std::milli>(-5)).count() == 0);
    BOOST_TEST(ceil_ns(ns::max()).count() == max);
    BOOST_TEST(ceil_ns(ns::min()).count() == 0);
    BOOST_TEST(ceil_ns(std::chrono::seconds::min()).count() == 0);
}

BOOST_AUTO_TEST_CASE(floating_point_reps) {
    using dsec = std::chrono::duration<double>;
    using fms = std::chrono::duration<float, std::milli>;
    using ldhours = std::chrono::duration<long double, std::ratio<3600>>;
    BOOST_TEST(ceil_ns(dsec(1.5)).count() == 1'500'000'000);
    BOOST_TEST(ceil_ns(dsec(1e-10)).count() == 1);  // a tenth of a nanosecond: up, not to 0
    BOOST_TEST(ceil_ns(fms(0.25f)).count() == 250'000);
    BOOST_TEST(ceil_ns(dsec(0.0)).count() == 0);
    BOOST_TEST(ceil_ns(dsec(-0.0)).count() == 0);
    BOOST_TEST(ceil_ns(dsec(-1e300)).count() == 0);
    BOOST_TEST(ceil_ns(dsec(1e300)).count() == ns::max().count());
    BOOST_TEST(ceil_ns(dsec(std::numeric_limits<double>::infinity())).count() == ns::max().count());
    BOOST_TEST(ceil_ns(dsec(-std::numeric_limits<double>::infinity())).count() == 0);
    // Not a number: a delay that never comes due (never "now").
    BOOST_TEST(ceil_ns(dsec(std::numeric_limits<double>::quiet_NaN())).count() == ns::max().count());
    BOOST_TEST(ceil_ns(ldhours(3e6L)).count() == ns::max().count());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(odd_delays_on_the_wheel)

// The finding that started this suite: 5e9 s in thirds of a second fired at the next tick.
BOOST_FIXTURE_TEST_CASE(a_huge_odd_period_delay_never_fires_early, fixture) {
    using third = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;
    int ran = 0;
    auto h = wheel.schedule(third(15'000'000'000), [&ran] { ++ran; });
    fired_at n{t0, {}};
    idlewheel::timer_node node{idlewheel::bind_member<&fired_at::fire>(&n)};
    wheel.schedule(node, std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN()));
    int waits = 0;
    wheel.async_wait(std::chrono::duration<float>(std::numeric_limits<float>::infinity()),
                     [&waits](idlewheel::error_code) { ++waits; });
    advance_and_poll(io, 10s, 10ms);
    advance_and_poll(io, 24h, 1h);
    BOOST_TEST(ran == 0);
    BOOST_TEST(n.at.empty());
    BOOST_TEST(waits == 0);
    BOOST_TEST(!h.expired());
    BOOST_TEST(wheel.pending() == 3U);
    wheel.stop();
    poll(io);
    BOOST_TEST(waits == 1);
}

// Odd-typed delays that are small: at the right tick, never before the delay.
BOOST_AUTO_TEST_CASE(odd_typed_delays_fire_on_time_in_both_clock_modes) {
    using third = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;
    using seventh_ms = std::chrono::duration<std::int32_t, std::ratio<1, 7000>>;
    using dms = std::chrono::duration<double, std::milli>;
    for (const auto mode : {idlewheel::clock_read::per_schedule, idlewheel::clock_read::per_tick}) {
        BOOST_TEST_CONTEXT("per_tick " << (mode == idlewheel::clock_read::per_tick)) {
            manual_clock::reset();
            net::io_context io;
            const auto t0 = manual_clock::now();
            wheel_type wheel(io, {.clock = mode});
            const std::int64_t late_bound = mode == idlewheel::clock_read::per_tick ? 20 : 10;
            advance_and_poll(io, 3ms);  // off a tick boundary
            std::vector<std::pair<std::int64_t, std::int64_t>> due_and_fired;  // (due ms, fired ms)
            const auto add = [&](auto delay, std::int64_t due_ms) {
                wheel.schedule(delay, [&due_and_fired, t0, due_ms] { due_and_fired.emplace_back(due_ms, ms_since(t0)); });
            };
            add(third(1), 3 + 334);           // 333.33 ms
            add(seventh_ms(7 * 55 + 1), 3 + 56);  // 55.14 ms
            add(dms(12.5), 3 + 13);
            add(std::chrono::duration<std::uint16_t, std::centi>(7), 3 + 70);
            add(std::chrono::duration<float>(0.0f), 3);
            advance_and_poll(io, 1s);
            BOOST_TEST_REQUIRE(due_and_fired.size() == 5U);
            for (const auto& [due, fired] : due_and_fired) {
                BOOST_TEST(fired >= due);
                BOOST_TEST(fired <= due + late_bound);
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(absolute_times)

BOOST_FIXTURE_TEST_CASE(a_time_long_past_is_due_now, fixture) {
    advance_and_poll(io, 25ms);
    fired_at a{t0, {}}, b{t0, {}}, c{t0, {}};
    idlewheel::timer_node na{idlewheel::bind_member<&fired_at::fire>(&a)};
    idlewheel::timer_node nb{idlewheel::bind_member<&fired_at::fire>(&b)};
    idlewheel::timer_node nc{idlewheel::bind_member<&fired_at::fire>(&c)};
    wheel.schedule_at(na, manual_clock::time_point::min());
    wheel.schedule_at(nb, manual_clock::time_point{});         // the clock's epoch: before the origin
    wheel.schedule_at(nc, manual_clock::now() - 10ms);
    BOOST_TEST(wheel.pending() == 3U);
    advance_and_poll(io, 10ms);
    // Due now: at the next tick the wheel hands out (30 ms), never lost.
    BOOST_TEST(a.at == std::vector<std::int64_t>{30}, boost::test_tools::per_element());
    BOOST_TEST(b.at == std::vector<std::int64_t>{30}, boost::test_tools::per_element());
    BOOST_TEST(c.at == std::vector<std::int64_t>{30}, boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_FIXTURE_TEST_CASE(a_time_at_the_end_of_the_clock_never_fires, fixture) {
    fired_at a{t0, {}}, b{t0, {}};
    idlewheel::timer_node na{idlewheel::bind_member<&fired_at::fire>(&a)};
    idlewheel::timer_node nb{idlewheel::bind_member<&fired_at::fire>(&b)};
    wheel.schedule_at(na, manual_clock::time_point::max());
    wheel.schedule_at(nb, manual_clock::time_point::max() - 1ns);
    advance_and_poll(io, 1000h, 1h);
    BOOST_TEST(a.at.empty());
    BOOST_TEST(b.at.empty());
    BOOST_TEST(wheel.pending() == 2U);
}

// Absolute times are exact: the first tick that starts at or after them, whatever the phase.
BOOST_FIXTURE_TEST_CASE(absolute_times_are_exact, fixture) {
    advance_and_poll(io, 7ms);
    std::vector<fired_at> seen(40, fired_at{t0, {}});
    std::vector<std::optional<idlewheel::timer_node>> nodes(seen.size());
    for (std::size_t i = 0; i < seen.size(); ++i) {
        nodes[i].emplace(idlewheel::bind_member<&fired_at::fire>(&seen[i]));
        wheel.schedule_at(*nodes[i], t0 + std::chrono::milliseconds(7 + i * 3));
    }
    advance_and_poll(io, 300ms);
    for (std::size_t i = 0; i < seen.size(); ++i) {
        const auto when = static_cast<std::int64_t>(7 + i * 3);
        BOOST_TEST_REQUIRE(seen[i].at.size() == 1U);
        const std::int64_t expected = when <= 7 ? 10 : (when + 9) / 10 * 10;  // 7 is due now: next tick
        BOOST_TEST(seen[i].at[0] == expected);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(full_wheel)

namespace {
// A session whose idle handler schedules one more timeout each time: at max_pending, the
// watch's own re-arm must still get its place.
struct greedy_session {
    wheel_type* wheel;
    std::vector<std::int64_t> reports;
    manual_clock::time_point t0;
    std::vector<idlewheel::timeout> taken;
    std::optional<idlewheel::basic_idle_watch<wheel_type>> watch;
    void on_idle(idlewheel::idle_kind, bool) {
        reports.push_back(ms_since(t0));
        try {
            taken.push_back(wheel->schedule(1h, [] {}));
        } catch (const idlewheel::system_error& e) {
            BOOST_TEST(e.code() == idlewheel::make_error_code(idlewheel::error::too_many_pending));
        }
    }
};
}  // namespace

BOOST_AUTO_TEST_CASE(a_running_idle_watch_keeps_reporting_when_the_wheel_is_full) {
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io, {.max_pending = 2});
    idlewheel::liveness_stats live;
    greedy_session s{&wheel, {}, manual_clock::now(), {}, {}};
    s.watch.emplace(wheel, idlewheel::bind_member<&greedy_session::on_idle>(&s), idlewheel::idle_options{.reader = 100ms},
                    &live);
    s.watch->start();  // 1 of 2
    // Its first report takes the last place: the re-arm after it must not be refused.
    BOOST_CHECK_NO_THROW(advance_and_poll(io, 450ms));
    BOOST_TEST(s.reports == (std::vector<std::int64_t>{100, 200, 300, 400}), boost::test_tools::per_element());
    BOOST_TEST(s.watch->running());
    // While its handler runs the watch's entry is out of the wheel, so its handler could take
    // two places (at 100 and 200 ms); from then on the wheel is full and it is refused. The
    // watch's own re-arms were exempt: max_pending + the one watch.
    BOOST_TEST(s.taken.size() == 2U);
    BOOST_TEST(live.reader_idle == 4U);
    BOOST_TEST(wheel.pending() == 3U);

    // A new watch cannot start on a full wheel: a clear error, and it is not running.
    greedy_session other{&wheel, {}, manual_clock::now(), {}, {}};
    other.watch.emplace(wheel, idlewheel::bind_member<&greedy_session::on_idle>(&other), idlewheel::idle_options{.reader = 100ms});
    BOOST_CHECK_EXCEPTION(other.watch->start(), idlewheel::system_error, [](const idlewheel::system_error& e) {
        return e.code() == idlewheel::make_error_code(idlewheel::error::too_many_pending);
    });
    BOOST_TEST(!other.watch->running());
    // Changing the running watch's times moves its own entry: never refused.
    BOOST_CHECK_NO_THROW(s.watch->set_options({.reader = 50ms}));
    advance_and_poll(io, 100ms);
    BOOST_TEST(s.reports.size() >= 6U);
}

namespace {
struct hogging_peer {
    wheel_type* wheel;
    std::vector<idlewheel::heartbeat_event> events;
    std::optional<idlewheel::timeout> hog;
    void on_heartbeat(idlewheel::heartbeat_event e) {
        events.push_back(e);
        // The ping's handler (the session writing a ping) takes the wheel's last place.
        if (!hog) hog = wheel->schedule(1h, [] {});
    }
};
}  // namespace

BOOST_AUTO_TEST_CASE(a_running_heartbeat_still_declares_a_dead_peer_when_the_wheel_is_full) {
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io, {.max_pending = 2});
    hogging_peer p{&wheel, {}, {}};
    idlewheel::basic_heartbeat<wheel_type> hb(wheel, idlewheel::bind_member<&hogging_peer::on_heartbeat>(&p),
                                             {.ping_interval = 100ms, .pong_timeout = 50ms});
    hb.start();
    BOOST_CHECK_NO_THROW(advance_and_poll(io, 400ms));
    BOOST_TEST_REQUIRE(p.events.size() == 2U);
    BOOST_TEST((p.events[0] == idlewheel::heartbeat_event::send_ping));
    BOOST_TEST((p.events[1] == idlewheel::heartbeat_event::dead_peer));
    BOOST_TEST(wheel.pending() == 1U);  // the hog only
}

BOOST_AUTO_TEST_CASE(an_armed_deadline_can_be_moved_on_a_full_wheel) {
    manual_clock::reset();
    net::io_context io;
    const auto t0 = manual_clock::now();
    wheel_type wheel(io, {.max_pending = 1});
    fired_at f{t0, {}};
    idlewheel::basic_operation_deadline<wheel_type> d(wheel, idlewheel::bind_member<&fired_at::fire>(&f));
    d.expires_after(100ms);
    BOOST_CHECK_NO_THROW(d.expires_after(200ms));  // its own entry: a move
    BOOST_CHECK_THROW(wheel.schedule(1ms, [] {}), idlewheel::system_error);
    advance_and_poll(io, 250ms);
    BOOST_TEST(f.at == std::vector<std::int64_t>{200}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(exceptions)

namespace {
// Polls until nothing is left, collecting every exception that leaves poll(); anything that
// is not a runtime_error (multiple_exceptions, say) is a failure of its own.
std::vector<std::string> poll_collecting(net::io_context& io) {
    std::vector<std::string> seen;
    for (int attempts = 0; attempts < 50; ++attempts) {
        try {
            poll(io);
            return seen;
        } catch (const std::runtime_error& e) {
            seen.emplace_back(e.what());
        }
    }
    BOOST_FAIL("poll() kept throwing");
    return seen;
}
}  // namespace

BOOST_FIXTURE_TEST_CASE(a_throwing_callback_and_a_throwing_wait_handler_of_one_wake_up_both_leave_run, fixture) {
    int waits = 0, callbacks = 0;
    wheel.schedule(10ms, [&callbacks] {
        ++callbacks;
        throw std::runtime_error("callback");
    });
    wheel.async_wait(10ms, [&waits](idlewheel::error_code) {
        ++waits;
        throw std::runtime_error("wait 1");
    });
    wheel.async_wait(10ms, [&waits](idlewheel::error_code) {
        ++waits;
        throw std::runtime_error("wait 2");
    });
    wheel.schedule(10ms, [&callbacks] { ++callbacks; });
    manual_clock::advance(10ms);
    std::vector<std::string> seen;
    BOOST_CHECK_NO_THROW(seen = poll_collecting(io));
    std::sort(seen.begin(), seen.end());
    BOOST_TEST(seen == (std::vector<std::string>{"callback", "wait 1", "wait 2"}), boost::test_tools::per_element());
    BOOST_TEST(callbacks == 2);  // the one after the thrower ran too, once
    BOOST_TEST(waits == 2);
    BOOST_TEST(wheel.pending() == 0U);
    // And nothing runs twice afterwards.
    advance_and_poll(io, 100ms);
    BOOST_TEST(callbacks == 2);
    BOOST_TEST(waits == 2);
}

BOOST_FIXTURE_TEST_CASE(every_throwing_node_of_a_batch_is_seen_once, fixture) {
    struct thrower {
        int calls = 0;
        std::string name;
        void fire() {
            ++calls;
            throw std::runtime_error(name);
        }
    };
    std::vector<thrower> t(5);
    std::vector<std::optional<idlewheel::timer_node>> nodes(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        t[i].name = "node " + std::to_string(i);
        nodes[i].emplace(idlewheel::bind_member<&thrower::fire>(&t[i]));
        wheel.schedule(*nodes[i], 10ms);
    }
    manual_clock::advance(10ms);
    const auto seen = poll_collecting(io);
    BOOST_TEST(seen.size() == t.size());
    for (const auto& x : t) BOOST_TEST(x.calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(per_tick_order)

// The rule (wheel_timer.hpp): within one tick, entries run in the order they entered the
// wheel. An absolute entry enters at the call; a relative one on a per_tick wheel enters at
// the next wake-up, which starts its delay. So a relative timeout scheduled first runs after
// an absolute one of the same tick scheduled later in the same tick.
BOOST_FIXTURE_TEST_CASE(staged_entries_run_after_absolute_entries_of_their_tick, clock_reset) {
    net::io_context io;
    const auto t0 = manual_clock::now();
    wheel_type wheel(io, {.clock = idlewheel::clock_read::per_tick});
    std::vector<std::string> order;
    struct named {
        std::vector<std::string>* order;
        std::string name;
        void fire() { order->push_back(name); }
    } rel{&order, "relative"}, abs{&order, "absolute"}, rel2{&order, "relative after flush"};
    idlewheel::timer_node nrel{idlewheel::bind_member<&named::fire>(&rel)};
    idlewheel::timer_node nabs{idlewheel::bind_member<&named::fire>(&abs)};
    idlewheel::timer_node nrel2{idlewheel::bind_member<&named::fire>(&rel2)};
    wheel.schedule(0ms, [] {});  // a first wake-up at 0 ms: a fresh wheel's first ask comes at once
    advance_and_poll(io, 2ms);
    wheel.schedule(nrel, 20ms);               // staged: starts at the 10 ms wake-up, due at 30 ms
    wheel.schedule_at(nabs, t0 + 30ms);       // in the wheel now, due at 30 ms
    advance_and_poll(io, 9ms);                // 11 ms: the staged entry has its deadline now
    wheel.schedule(nrel2, 9ms);               // staged again: starts at 20 ms, due at 30 ms
    advance_and_poll(io, 30ms);
    BOOST_TEST(order == (std::vector<std::string>{"absolute", "relative", "relative after flush"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(entry_size)

// What an entry costs is part of the design (core/timer_entry.hpp): on LP64, the wheel's
// own bookkeeping is 40 bytes, and a function (or a shared table) pointer makes 48.
BOOST_AUTO_TEST_CASE(entries_cost_what_the_wheel_needs) {
    if constexpr (sizeof(void*) == 8) {
        BOOST_TEST(sizeof(idlewheel::detail::timer_entry) == 40U);
        BOOST_TEST(sizeof(idlewheel::detail::own_entry) == 48U);
        BOOST_TEST(sizeof(idlewheel::detail::shared_entry) == 48U);
        BOOST_TEST(sizeof(idlewheel::timer_node) == 64U);  // + its callback and context
    }
}

BOOST_AUTO_TEST_SUITE_END()

// Found by fuzz_wheel_timer: each failed on the code before its fix.
BOOST_AUTO_TEST_SUITE(fuzz_findings)

// long double arithmetic rounded 1001528003.0000000001 ns down onto a whole nanosecond.
BOOST_AUTO_TEST_CASE(a_double_delay_is_rounded_up_exactly) {
    const std::chrono::duration<double> d(0x1.006423a2e9c6dp+0);
    BOOST_TEST(ceil_ns(d).count() == 1'001'528'004);
    BOOST_TEST(ceil_ns(std::chrono::duration<float>(std::numeric_limits<float>::denorm_min())).count() == 1);
    BOOST_TEST(ceil_ns(std::chrono::duration<double, std::ratio<3600>>(std::numeric_limits<double>::max())).count() ==
               ns::max().count());
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io, {.tick = 1ns});
    bool ran = false;
    wheel.schedule(d, [&ran] { ran = true; });
    manual_clock::advance(1'001'528'003ns);
    poll(io);
    BOOST_TEST(!ran);
    manual_clock::advance(1ns);
    poll(io);
    BOOST_TEST(ran);
}

BOOST_AUTO_TEST_CASE(the_lateness_sum_never_overflows) {
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io);
    int ran = 0;
    for (int i = 0; i < 3; ++i) wheel.schedule(1ms, [&ran] { ++ran; });
    manual_clock::advance(ns(std::int64_t{1} << 62));
    poll(io);
    BOOST_TEST(ran == 3);
    BOOST_TEST(wheel.stats().lateness_sum == ns::max());  // saturated
}

namespace {
struct resetting_session {
    wheel_type* wheel;
    std::optional<idlewheel::basic_idle_watch<wheel_type>> watch;
    idlewheel::timeout hog;
    int reports = 0;
    bool restart = false;
    void on_idle(idlewheel::idle_kind, bool) {
        if (++reports != 1) return;
        hog = wheel->schedule(1h, [] {});  // the last place, while the watch's entry is out
        if (restart)
            watch->reset();
        else
            watch->set_options({.reader = 50ms});
    }
};
}  // namespace

BOOST_AUTO_TEST_CASE(set_options_or_reset_inside_the_handler_never_counts_against_max_pending) {
    for (const bool restart : {false, true}) {
        BOOST_TEST_CONTEXT("reset() " << restart) {
            manual_clock::reset();
            net::io_context io;
            wheel_type wheel(io, {.max_pending = 1});
            resetting_session s{&wheel, {}, {}, 0, restart};
            s.watch.emplace(wheel, idlewheel::bind_member<&resetting_session::on_idle>(&s),
                            idlewheel::idle_options{.reader = 100ms});
            s.watch->start();
            BOOST_CHECK_NO_THROW(advance_and_poll(io, 400ms));
            BOOST_TEST(s.watch->running());
            BOOST_TEST(s.reports >= 4);
        }
    }
}

// A callback staged an entry (asking for the next tick's wake-up) and a later callback of the
// same batch ran expire_all(), which took the staged entry too: the wheel then slept, and the
// "asked" flag, never cleared, swallowed every later request. Later timeouts never ran.
BOOST_AUTO_TEST_CASE(a_per_tick_wheel_wakes_again_after_expire_all_in_a_callback) {
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io, {.tick = 1ms, .clock = idlewheel::clock_read::per_tick});
    int ran = 0;
    wheel.schedule(0ms, [&] { wheel.schedule(2ms, [&ran] { ++ran; }); });
    wheel.schedule(1ms, [&] { wheel.expire_all(); });
    advance_and_poll(io, 8ms);
    BOOST_TEST(ran == 1);
    BOOST_TEST(wheel.pending() == 0U);
    bool later = false;
    wheel.schedule(0ms, [&later] { later = true; });
    advance_and_poll(io, 3ms);
    BOOST_TEST(later);
}

BOOST_AUTO_TEST_CASE(a_clock_before_its_epoch) {
    manual_clock::reset(manual_clock::time_point(-1h));
    net::io_context io;
    const auto t0 = manual_clock::now();
    wheel_type wheel(io);
    fired_at f{t0, {}};
    idlewheel::timer_node n{idlewheel::bind_member<&fired_at::fire>(&f)};
    wheel.schedule(n, 20ms);
    int ran = 0;
    wheel.schedule(20ms, [&ran] { ++ran; });
    advance_and_poll(io, 30ms);
    BOOST_TEST(ran == 1);
    BOOST_TEST(f.at == std::vector<std::int64_t>{20}, boost::test_tools::per_element());
    BOOST_TEST((wheel.time_of(std::numeric_limits<wheel_type::tick_type>::max()) == manual_clock::time_point::max()));
    manual_clock::reset();
}

BOOST_AUTO_TEST_SUITE_END()
