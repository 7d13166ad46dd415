// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// The contract edges, continued (a source file of the executable test_contract_edges, whose
// first file is test_contract_edges.cpp): the rules a-f of issue 20 (suite rules) and
// expiry() across the handles, nodes and liveness objects (suite expiry).

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
// (f, a max_run_per_wakeup continuation is not "the next wake-up":
// test_wheel_timer_expire_immediately.)
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
