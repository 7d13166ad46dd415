// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// wheel_timer::set_expire_immediately(): the switch of the customized HashedWheelTimer, on the
// manual clock. On: everything pending runs at the next wake-up (ahead of time, in deadline
// order), and every timeout scheduled while it is on runs at the next tick's wake-up, never
// inline in the call that scheduled it. Off: delays count again.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE expire_immediately
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;

struct fixture : idlewheel::test::wheel_fixture {
    fixture() = default;
    explicit fixture(const idlewheel::wheel_options& o) : wheel_fixture(o) {}
    std::vector<std::string> log;

    void note(const std::string& what) { log.push_back(what + " @" + std::to_string(ms_since(t0))); }
};

struct named_node {
    fixture* f;
    std::string name;
    void fire() { f->note(name); }
    idlewheel::timer_node node{idlewheel::bind_member<&named_node::fire>(this)};
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(turning_it_on_runs_everything_pending_at_the_next_wake_up_in_deadline_order, fixture) {
    named_node far{this, "node 1h"};
    auto h = wheel.schedule(300ms, [this] { note("handle 300ms"); });
    wheel.schedule(far.node, 1h);
    wheel.async_wait(200ms, [this](idlewheel::error_code ec) { note("wait 200ms " + std::string(ec ? "error" : "ok")); });
    auto h2 = wheel.schedule(24h * 365, [this] { note("handle 1y"); });
    advance_and_poll(io, 13ms);
    BOOST_TEST(log.empty());
    wheel.set_expire_immediately(true);
    BOOST_TEST(wheel.expire_immediately());
    BOOST_TEST(log.empty());  // not inline in the call
    // At the wheel's next wake-up: at once here (the wheel slept through tick 1, so the wake-up
    // it asks for is already due), at the latest the next tick boundary.
    advance_and_poll(io, 7ms);
    const std::vector<std::string> expected{"handle 300ms @13", "node 1h @13", "handle 1y @13", "wait 200ms ok @13"};
    BOOST_TEST(log == expected, boost::test_tools::per_element());
    BOOST_TEST(h.expired());
    BOOST_TEST(h2.expired());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_FIXTURE_TEST_CASE(while_on_new_timeouts_run_at_the_next_tick_never_inline, fixture) {
    wheel.set_expire_immediately(true);
    advance_and_poll(io, 5ms);
    auto h = wheel.schedule(1h, [this] { note("handle"); });
    named_node n{this, "node"};
    wheel.schedule(n.node, 10min);
    wheel.async_wait(std::chrono::hours::max(), [this](idlewheel::error_code ec) { note(ec ? "wait error" : "wait ok"); });
    BOOST_TEST(log.empty());
    poll(io);
    BOOST_TEST(log.empty());
    advance_and_poll(io, 5ms);  // 10 ms
    // In deadline order (the node's 10 min before the handle's hour), the wait's posted
    // completion after the callbacks.
    BOOST_TEST(log == (std::vector<std::string>{"node @10", "handle @10", "wait ok @10"}), boost::test_tools::per_element());

    // Scheduled from a callback: not in the same batch, at the next tick.
    wheel.schedule(1h, [this] {
        note("outer");
        wheel.schedule(1h, [this] { note("inner"); });
    });
    advance_and_poll(io, 30ms);
    BOOST_TEST(log == (std::vector<std::string>{"node @10", "handle @10", "wait ok @10", "outer @20", "inner @30"}),
               boost::test_tools::per_element());

    // Off: delays count again.
    wheel.set_expire_immediately(false);
    wheel.schedule(100ms, [this] { note("after"); });
    advance_and_poll(io, 99ms);
    BOOST_TEST(log.size() == 5U);
    advance_and_poll(io, 20ms);
    BOOST_TEST(log.back() == "after @140");
}

BOOST_FIXTURE_TEST_CASE(a_repeating_timer_runs_every_tick_while_on, fixture) {
    struct counter {
        int runs = 0;
        void run() { ++runs; }
    } c;
    idlewheel::basic_repeating_timer<wheel_type> rt(wheel, idlewheel::bind_member<&counter::run>(&c), 1s);
    rt.start();
    advance_and_poll(io, 100ms);
    BOOST_TEST(c.runs == 0);
    wheel.set_expire_immediately(true);
    advance_and_poll(io, 100ms);
    BOOST_TEST(c.runs >= 5);  // not stuck: it keeps running while the switch is on
    wheel.set_expire_immediately(false);
    const int at_off = c.runs;
    advance_and_poll(io, 900ms);
    BOOST_TEST(c.runs <= at_off + 1);
    advance_and_poll(io, 1200ms);
    BOOST_TEST(c.runs >= at_off + 1);
}

// An idle watch is checked every tick while the switch is on, and still reports only when
// its time has come: the switch never makes a report early.
BOOST_FIXTURE_TEST_CASE(an_idle_watch_never_reports_early_while_on, fixture) {
    struct session {
        std::vector<std::int64_t> at;
        manual_clock::time_point t0;
        void on_idle(idlewheel::idle_kind, bool) { at.push_back(ms_since(t0)); }
    } s{{}, t0};
    idlewheel::basic_idle_watch<wheel_type> watch(wheel, idlewheel::bind_member<&session::on_idle>(&s), {.reader = 200ms});
    watch.start();
    wheel.set_expire_immediately(true);
    const auto wakeups_before = wheel.stats().wakeups;
    advance_and_poll(io, 150ms, 1ms);
    BOOST_TEST(s.at.empty());
    BOOST_TEST(wheel.stats().wakeups - wakeups_before >= 14U);  // looked at every tick
    advance_and_poll(io, 60ms, 1ms);
    BOOST_TEST(s.at == std::vector<std::int64_t>{200}, boost::test_tools::per_element());
    wheel.set_expire_immediately(false);
    const auto wakeups_off = wheel.stats().wakeups;
    advance_and_poll(io, 150ms, 1ms);
    BOOST_TEST(wheel.stats().wakeups - wakeups_off <= 2U);  // back to sleeping until due
}

BOOST_FIXTURE_TEST_CASE(stop_while_on_still_returns_what_never_ran, fixture) {
    wheel.set_expire_immediately(true);
    auto h = wheel.schedule(1h, [this] { note("never"); });
    const auto unrun = wheel.stop();
    BOOST_TEST(unrun.size() == 1U);
    BOOST_TEST(h.cancelled());
    advance_and_poll(io, 50ms);
    BOOST_TEST(log.empty());
}

namespace {

// poll() one handler at a time, at most `limit` of them: a wheel that never goes back to sleep
// makes a test fail on the count instead of hanging it.
std::size_t bounded_poll(idlewheel::net::io_context& io, std::size_t limit) {
    std::size_t n = 0;
    if (io.stopped()) io.restart();
    while (n != limit && io.poll_one() != 0) ++n;
    return n;
}

struct quiet_session {
    int reports = 0;
    void on_idle(idlewheel::idle_kind, bool) { ++reports; }
};

struct one_per_wakeup : fixture {
    one_per_wakeup() : fixture(options()) {}
    static idlewheel::wheel_options options() {
        idlewheel::wheel_options o;
        o.max_run_per_wakeup = 1;
        return o;
    }
};

}  // namespace

// Issue 20, item 2: with more running liveness objects than max_run_per_wakeup, each wake-up
// re-armed its watches "for the next wake-up", the posted continuation counted as that
// wake-up and found them due again: the wheel never slept (poll() never returned). Now each
// entry runs at most once per tick and the wheel sleeps until the next tick.
BOOST_FIXTURE_TEST_CASE(the_switch_runs_each_watch_once_per_tick_and_sleeps_between_ticks, one_per_wakeup) {
    quiet_session s;
    idlewheel::idle_options o;
    o.reader = 10s;
    idlewheel::basic_idle_watch<wheel_type> w1(wheel, idlewheel::bind_member<&quiet_session::on_idle>(&s), o);
    idlewheel::basic_idle_watch<wheel_type> w2(wheel, idlewheel::bind_member<&quiet_session::on_idle>(&s), o);
    w1.start();
    w2.start();
    BOOST_TEST(bounded_poll(io, 1000) < 1000U);
    wheel.set_expire_immediately(true);
    const auto before = wheel.stats();
    // Ten ticks: one wake-up and one continuation each (a watch per wake-up), then sleep.
    for (int i = 0; i < 10; ++i) {
        manual_clock::advance(10ms);
        BOOST_TEST(bounded_poll(io, 1000) <= 3U);  // the wake-up, its continuation (and the epoch)
    }
    const auto after = wheel.stats();
    BOOST_TEST(after.wakeups - before.wakeups <= 20U);
    BOOST_TEST(after.wakeups - before.wakeups >= 10U);  // still looked at every tick
    BOOST_TEST(after.expired - before.expired == 20U);  // each watch once per tick, no more
    BOOST_TEST(s.reports == 0);
    BOOST_TEST(io.poll_one() == 0U);  // asleep until the next tick
}

BOOST_FIXTURE_TEST_CASE(the_switch_with_4097_watches_and_the_default_limit_costs_two_wakeups_a_tick, fixture) {
    quiet_session s;
    idlewheel::idle_options o;
    o.reader = 10s;
    std::vector<std::unique_ptr<idlewheel::basic_idle_watch<wheel_type>>> watches;
    for (int i = 0; i < 4097; ++i) {
        watches.push_back(std::make_unique<idlewheel::basic_idle_watch<wheel_type>>(
            wheel, idlewheel::bind_member<&quiet_session::on_idle>(&s), o));
        watches.back()->start();
    }
    BOOST_TEST(bounded_poll(io, 100) < 100U);
    wheel.set_expire_immediately(true);
    const auto before = wheel.stats();
    for (int i = 0; i < 20; ++i) {
        manual_clock::advance(10ms);
        BOOST_TEST(bounded_poll(io, 100) <= 3U);
    }
    const auto after = wheel.stats();
    BOOST_TEST(after.wakeups - before.wakeups <= 40U);  // 4096 and then 1: two a tick
    BOOST_TEST(after.expired - before.expired == 20U * 4097U);
    BOOST_TEST(s.reports == 0);
}

// Rule (f): a max_run_per_wakeup continuation is not "the next wake-up". It finishes the batch
// of the wake-up that posted it; what that batch's callbacks schedule while the switch is on
// runs at the next tick's wake-up.
BOOST_FIXTURE_TEST_CASE(a_continuation_is_not_the_next_wake_up, one_per_wakeup) {
    wheel.schedule(1h, [this] {
        note("a");
        wheel.schedule(1h, [this] { note("c"); });
    });
    wheel.schedule(2h, [this] { note("b"); });
    wheel.set_expire_immediately(true);
    advance_and_poll(io, 10ms);
    BOOST_TEST(log == (std::vector<std::string>{"a @10", "b @10"}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 1U);
    advance_and_poll(io, 10ms);
    BOOST_TEST(log == (std::vector<std::string>{"a @10", "b @10", "c @20"}), boost::test_tools::per_element());
}
