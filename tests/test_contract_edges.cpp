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
//  - the rules a-f of issue 20 (suite rules) and expiry() (suite expiry), below.

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

// ---------------------------------------------------------------------------------------------
// The rules of wheel_timer's contract that independent readers took two ways (issue 20, item
// 4), each as the header and docs/precision.md state it, on the manual clock:
//  a. schedule(0) and schedule_at(a time that has passed) made in the same tick run in call
//     order (per_schedule), however far a sleeping wheel lags; on a per_tick wheel the
//     absolute entry runs first (the relative one enters the wheel at the next wake-up);
//  b. a wait whose completion has been posted no longer counts in pending() nor toward
//     max_pending, though its handler has not run;
//  c. cancelling, stop() or destroying the wheel after a wait's completion was posted leaves
//     it a success (as an Asio timer's queued completion);
//  d. a wait handler never runs inside expire_all(): its completion is posted;
//  e. turning the switch off before the wake-up that would have run them leaves entries
//     scheduled while it was on at their own deadlines.
// (f, a max_run_per_wakeup continuation is not "the next wake-up": test_expire_immediately.)
namespace rules {
BOOST_AUTO_TEST_SUITE(rules)

namespace {

using namespace std::chrono_literals;
using idlewheel::error_code;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::poll;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;

struct named {
    std::vector<std::string>* log;
    std::string name;
    void fire() { log->push_back(name); }
    idlewheel::timer_node node{idlewheel::bind_member<&named::fire>(this)};
};

// Runs the wheel's own wake-up (the Asio timer's completion) and nothing after it: a wait it
// found due has its completion posted, not run.
std::size_t run_one(net::io_context& io) {
    if (io.stopped()) io.restart();
    return io.poll_one();
}

struct recorded_wait {
    std::optional<error_code> result;
    auto handler() {
        return [this](error_code ec) { result = ec; };
    }
};

idlewheel::wheel_options with_max_pending(std::size_t n) {
    idlewheel::wheel_options o;
    o.max_pending = n;
    return o;
}

}  // namespace

// (a) A far timeout keeps the wheel armed and asleep: it does not hand out ticks while the
// clock moves. A due-now relative timeout and a past absolute one made later in the same tick
// then ran in the wrong order (the past time went to the lagging wheel's next tick).
BOOST_FIXTURE_TEST_CASE(a_due_now_and_a_past_time_run_in_call_order, idlewheel::test::wheel_fixture) {
    std::vector<std::string> log;
    auto far = wheel.schedule(1h, [] {});
    for (const auto phase : {55ms, 5ms}) {  // mid-tick (55 ms), then exactly on a boundary (60 ms)
        BOOST_TEST_CONTEXT("at " << idlewheel::test::ms_since(t0) + phase.count() << " ms") {
            manual_clock::advance(phase);
            log.clear();
            named rel{&log, "schedule(0)"};
            named abs{&log, "schedule_at(past)"};
            named rel2{&log, "schedule(-1s)"};
            wheel.schedule(rel.node, 0ms);
            wheel.schedule_at(abs.node, t0 + 12ms);
            wheel.schedule(rel2.node, -1s);
            BOOST_TEST(log.empty());
            advance_and_poll(io, 10ms);
            BOOST_TEST(log == (std::vector<std::string>{"schedule(0)", "schedule_at(past)", "schedule(-1s)"}),
                       boost::test_tools::per_element());
        }
    }
    BOOST_TEST(far.pending());
}

// (a) per_tick: the relative entry enters the wheel at the next wake-up, so the absolute one
// (in the wheel at the call) runs first, whichever was called first.
BOOST_AUTO_TEST_CASE(a_due_now_and_a_past_time_on_a_per_tick_wheel_absolute_first) {
    idlewheel::test::clock_reset reset;
    net::io_context io;
    const auto t0 = manual_clock::now();
    idlewheel::wheel_options o;
    o.clock = idlewheel::clock_read::per_tick;
    wheel_type wheel(io, o);
    std::vector<std::string> log;
    auto far = wheel.schedule(1h, [] {});
    advance_and_poll(io, 20ms);
    for (const auto phase : {35ms, 5ms}) {
        manual_clock::advance(phase);
        log.clear();
        named rel{&log, "schedule(0)"};
        named abs{&log, "schedule_at(past)"};
        wheel.schedule(rel.node, 0ms);
        wheel.schedule_at(abs.node, t0 + 12ms);
        advance_and_poll(io, 30ms);
        BOOST_TEST(log == (std::vector<std::string>{"schedule_at(past)", "schedule(0)"}),
                   boost::test_tools::per_element());
    }
}

// (b) Like an Asio timer whose completion is queued: the wait has left the wheel.
BOOST_FIXTURE_TEST_CASE(a_posted_wait_counts_neither_in_pending_nor_toward_max_pending, idlewheel::test::manual_fixture) {
    wheel_type wheel(io, with_max_pending(1));
    recorded_wait w;
    wheel.async_wait(10ms, w.handler());
    BOOST_TEST(wheel.pending() == 1U);
    BOOST_CHECK_THROW(wheel.schedule(1h, [] {}), idlewheel::system_error);  // full
    manual_clock::advance(10ms);
    BOOST_TEST(run_one(io) == 1U);  // the wake-up: the completion is posted
    BOOST_TEST(!w.result.has_value());
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(wheel.stats().pending == 0U);
    auto h = wheel.schedule(1h, [] {});  // room again
    BOOST_TEST(h.pending());
    poll(io);
    BOOST_TEST(w.result.has_value());
    BOOST_TEST(!*w.result);
}

// (c) The wait had completed when its completion was posted: cancelling it through its slot,
// stop() and the wheel's destruction come too late and change nothing.
BOOST_FIXTURE_TEST_CASE(cancel_after_the_completion_was_posted_is_still_success, idlewheel::test::manual_fixture) {
    wheel_type wheel(io);
    net::cancellation_signal signal;
    recorded_wait w;
    wheel.async_wait(10ms, net::bind_cancellation_slot(signal.slot(), w.handler()));
    manual_clock::advance(10ms);
    BOOST_TEST(run_one(io) == 1U);
    BOOST_TEST(!w.result.has_value());
    signal.emit(net::cancellation_type::all);
    poll(io);
    BOOST_TEST(w.result.has_value());
    BOOST_TEST(!*w.result);
}

BOOST_FIXTURE_TEST_CASE(stop_after_the_completion_was_posted_is_still_success, idlewheel::test::manual_fixture) {
    wheel_type wheel(io);
    recorded_wait w;
    recorded_wait dropped;
    wheel.async_wait(10ms, w.handler());
    wheel.async_wait(1h, dropped.handler());
    manual_clock::advance(10ms);
    BOOST_TEST(run_one(io) == 1U);
    BOOST_TEST(wheel.stop().empty());
    poll(io);
    BOOST_TEST(w.result.has_value());
    BOOST_TEST(!*w.result);
    BOOST_TEST(dropped.result.has_value());
    BOOST_TEST(*dropped.result == net::error::operation_aborted);  // still pending: dropped
}

BOOST_FIXTURE_TEST_CASE(destroying_the_wheel_after_the_completion_was_posted_is_still_success,
                        idlewheel::test::manual_fixture) {
    auto wheel = std::make_unique<wheel_type>(io);
    recorded_wait w;
    recorded_wait dropped;
    wheel->async_wait(10ms, w.handler());
    wheel->async_wait(1h, dropped.handler());
    manual_clock::advance(10ms);
    BOOST_TEST(run_one(io) == 1U);
    wheel.reset();
    poll(io);
    BOOST_TEST(w.result.has_value());
    BOOST_TEST(!*w.result);
    BOOST_TEST(dropped.result.has_value());
    BOOST_TEST(*dropped.result == net::error::operation_aborted);
}

// (d) expire_all() completes the wait (success, counted in what it returns) but only posts its
// handler: it runs when the io_context runs handlers, never inside expire_all().
BOOST_FIXTURE_TEST_CASE(a_wait_handler_never_runs_inside_a_top_level_expire_all, idlewheel::test::wheel_fixture) {
    recorded_wait w;
    bool in_expire_all = false;
    bool ran_inside = false;
    wheel.async_wait(1h, [&](error_code ec) {
        ran_inside = in_expire_all;
        w.result = ec;
    });
    std::vector<std::string> log;
    named n{&log, "node"};
    wheel.schedule(n.node, 2h);
    in_expire_all = true;
    BOOST_TEST(wheel.expire_all() == 2U);
    in_expire_all = false;
    BOOST_TEST(log == std::vector<std::string>{"node"});  // callbacks run inside it
    BOOST_TEST(!w.result.has_value());
    poll(io);
    BOOST_TEST(w.result.has_value());
    BOOST_TEST(!*w.result);
    BOOST_TEST(!ran_inside);
}

// (e) The switch is looked at by each wake-up when it comes.
BOOST_FIXTURE_TEST_CASE(entries_scheduled_while_the_switch_was_on_keep_their_deadlines_when_it_is_turned_off,
                        idlewheel::test::wheel_fixture) {
    std::vector<std::string> log;
    named n{&log, "node"};
    recorded_wait w;
    wheel.set_expire_immediately(true);
    wheel.schedule(n.node, 1s);
    auto h = wheel.schedule(2s, [&log] { log.push_back("handle"); });
    wheel.async_wait(3s, w.handler());
    wheel.set_expire_immediately(false);
    advance_and_poll(io, 500ms);
    BOOST_TEST(log.empty());
    BOOST_TEST(wheel.pending() == 3U);
    advance_and_poll(io, 3s, 10ms);
    BOOST_TEST(log == (std::vector<std::string>{"node", "handle"}), boost::test_tools::per_element());
    BOOST_TEST(w.result.has_value());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace rules

// ---------------------------------------------------------------------------------------------
// expiry(): when a pending timeout is due (Asio's timer expiry(), Kafka's getDelay), for
// handles and nodes (wheel_timer::expiry()) and the liveness objects, on the manual clock,
// against the precision contract: the start of the deadline tick, never before the time asked
// for and less than a tick after it; time_point::max() when not pending; a per_tick entry whose
// delay has not started yet reports the earliest it can be due. (Issue 20, item 5.)
namespace expiry {
BOOST_AUTO_TEST_SUITE(expiry)

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::poll;
using idlewheel::test::session;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using time_point = wheel_type::time_point;

struct fixture : idlewheel::test::wheel_fixture {
    fixture() = default;
    explicit fixture(const idlewheel::wheel_options& o) : wheel_fixture(o) {}
    // Expiry as ms since t0 (a plain number, printable); -1 for time_point::max().
    [[nodiscard]] std::int64_t ms(time_point tp) const {
        if (tp == time_point::max()) return -1;
        return std::chrono::duration_cast<std::chrono::milliseconds>(tp - t0).count();
    }
};

struct per_tick_fixture : fixture {
    per_tick_fixture() : fixture(options()) {}
    static idlewheel::wheel_options options() {
        idlewheel::wheel_options o;
        o.clock = idlewheel::clock_read::per_tick;
        return o;
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(handles_and_nodes_report_the_start_of_their_deadline_tick, fixture) {
    advance_and_poll(io, 3ms);
    auto h = wheel.schedule(25ms, [] {});  // asked for 28 ms
    session s(t0);
    wheel.schedule(s.node, 40ms);  // asked for 43 ms
    BOOST_TEST(ms(wheel.expiry(h)) == 30);
    BOOST_TEST(ms(wheel.expiry(s.node)) == 50);
    wheel.schedule_at(s.node, t0 + 57ms);  // moved: exact time, rounded up to its tick
    BOOST_TEST(ms(wheel.expiry(s.node)) == 60);
    wheel.schedule_at(s.node, t0 - 1h);  // a time that has passed: due at the next boundary
    BOOST_TEST(ms(wheel.expiry(s.node)) == 10);
    wheel.schedule(s.node, 0ms);
    BOOST_TEST(ms(wheel.expiry(s.node)) == 10);
    wheel.schedule(s.node, 24h);
    BOOST_TEST(ms(wheel.expiry(s.node)) == 24 * 3600 * 1000 + 10);
    // Runs at its expiry, not before.
    advance_and_poll(io, 26ms);  // 29 ms
    BOOST_TEST(h.pending());
    advance_and_poll(io, 1ms);
    BOOST_TEST(h.expired());
}

BOOST_FIXTURE_TEST_CASE(not_pending_is_time_point_max, fixture) {
    session s(t0);
    idlewheel::timeout empty;
    BOOST_TEST(ms(wheel.expiry(empty)) == -1);
    BOOST_TEST(ms(wheel.expiry(s.node)) == -1);  // never scheduled
    auto h = wheel.schedule(10ms, [] {});
    wheel.schedule(s.node, 10ms);
    advance_and_poll(io, 10ms);
    BOOST_TEST(ms(wheel.expiry(h)) == -1);  // ran
    BOOST_TEST(ms(wheel.expiry(s.node)) == -1);
    auto c = wheel.schedule(1s, [] {});
    c.cancel();
    BOOST_TEST(ms(wheel.expiry(c)) == -1);  // cancelled
    wheel.schedule(s.node, 1s);
    wheel_type other(io);
    BOOST_TEST(ms(other.expiry(s.node)) == -1);  // pending, but on another wheel
    auto d = wheel.schedule(1s, [] {});
    wheel.stop();
    BOOST_TEST(ms(wheel.expiry(d)) == -1);  // dropped by stop()
    BOOST_TEST(ms(wheel.expiry(s.node)) == -1);
}

// A per_tick entry starts its delay at the next wake-up: before it, the earliest it can be
// due (as if its delay started now); from it, its deadline tick.
BOOST_FIXTURE_TEST_CASE(a_staged_entry_reports_the_earliest_it_can_be_due, per_tick_fixture) {
    // Keeps the wheel awake and current, as a busy server's: the next wake-up is then up to a
    // tick away (a sleeping wheel wakes at once and starts the delay at the call).
    struct beat {
        void run() {}
    } b;
    idlewheel::basic_repeating_timer<wheel_type> heartbeat(wheel, idlewheel::bind_member<&beat::run>(&b), 1ms);
    heartbeat.start();
    advance_and_poll(io, 53ms);  // the next wake-up is at 60 ms
    session s(t0);
    wheel.schedule(s.node, 20ms);
    BOOST_TEST(ms(wheel.expiry(s.node)) == 80);  // 53 + 20 rounded up
    advance_and_poll(io, 7ms);                   // the 60 ms wake-up starts the delay: 80
    BOOST_TEST(ms(wheel.expiry(s.node)) == 80);
    auto h = wheel.schedule(25ms, [] {});
    BOOST_TEST(ms(wheel.expiry(h)) == 90);  // 60 + 25 rounded up; the wake-up at 70 makes it 100
    advance_and_poll(io, 10ms);
    BOOST_TEST(ms(wheel.expiry(h)) == 100);  // at most one tick later than reported before
    advance_and_poll(io, 50ms);
    BOOST_TEST(s.fired == std::vector<std::int64_t>{80});
    BOOST_TEST(h.expired());
}

BOOST_FIXTURE_TEST_CASE(an_operation_deadline_reports_its_expiry, fixture) {
    struct owner {
        void late() {}
    } o;
    idlewheel::basic_operation_deadline<wheel_type> d(wheel, idlewheel::bind_member<&owner::late>(&o));
    BOOST_TEST(ms(d.expiry()) == -1);
    advance_and_poll(io, 4ms);
    d.expires_after(5s);
    BOOST_TEST(ms(d.expiry()) == 5010);
    d.cancel();
    BOOST_TEST(ms(d.expiry()) == -1);
}

BOOST_FIXTURE_TEST_CASE(a_repeating_timer_reports_its_next_round, fixture) {
    struct counter {
        int runs = 0;
        void run() { ++runs; }
    } c;
    idlewheel::basic_repeating_timer<wheel_type> rt(wheel, idlewheel::bind_member<&counter::run>(&c), 1s);
    BOOST_TEST(ms(rt.expiry()) == -1);
    rt.start();
    BOOST_TEST(ms(rt.expiry()) == 1000);
    advance_and_poll(io, 1005ms);
    BOOST_TEST(c.runs == 1);
    BOOST_TEST(ms(rt.expiry()) == 2000);  // fixed delay from the callback's return at 1000 ms
    rt.stop();
    BOOST_TEST(ms(rt.expiry()) == -1);
}

// The liveness objects report their next look: no report (event) comes before it.
BOOST_FIXTURE_TEST_CASE(an_idle_watch_reports_its_next_look, fixture) {
    struct owner {
        std::vector<std::int64_t> at;
        manual_clock::time_point t0;
        void on_idle(idlewheel::idle_kind, bool) { at.push_back(idlewheel::test::ms_since(t0)); }
    } o{{}, t0};
    idlewheel::idle_options opts;
    opts.reader = 200ms;
    idlewheel::basic_idle_watch<wheel_type> w(wheel, idlewheel::bind_member<&owner::on_idle>(&o), opts);
    BOOST_TEST(ms(w.expiry()) == -1);
    w.start();
    BOOST_TEST(ms(w.expiry()) == 200);
    advance_and_poll(io, 100ms);
    w.on_read();  // lazy: the entry stays where it is until it comes due
    BOOST_TEST(ms(w.expiry()) == 200);
    advance_and_poll(io, 100ms);
    BOOST_TEST(o.at.empty());
    BOOST_TEST(ms(w.expiry()) >= 300);  // re-armed from the read's epoch
    BOOST_TEST(ms(w.expiry()) <= 320);
    w.stop();
    BOOST_TEST(ms(w.expiry()) == -1);
}

BOOST_FIXTURE_TEST_CASE(a_session_liveness_reports_its_next_decision_time, fixture) {
    using live_type = idlewheel::basic_session_liveness<wheel_type>;
    idlewheel::session_liveness_options opts;
    opts.handshake_timeout = 500ms;
    opts.idle_timeout = 2s;
    std::vector<idlewheel::liveness_event> events;
    idlewheel::basic_session_liveness_config<wheel_type> config(
        wheel, opts,
        {[](void* ctx, live_type&, idlewheel::liveness_event e) {
            static_cast<std::vector<idlewheel::liveness_event>*>(ctx)->push_back(e);
        },
        &events});
    live_type live(config);
    BOOST_TEST(ms(live.expiry()) == -1);
    live.start_handshake();
    BOOST_TEST(ms(live.expiry()) >= 500);
    BOOST_TEST(ms(live.expiry()) <= 510);
    advance_and_poll(io, 100ms);
    BOOST_TEST(live.handshake_done());
    BOOST_TEST(ms(live.expiry()) >= 2100);  // the idle decision
    BOOST_TEST(ms(live.expiry()) <= 2110);
    live.stop();
    BOOST_TEST(ms(live.expiry()) == -1);
    BOOST_TEST(events.empty());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace expiry
