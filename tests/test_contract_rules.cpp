// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// The rules of wheel_timer's contract that independent readers took two ways (issue 20, item
// 4), each as the header and the README state it, on the manual clock:
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

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE contract_rules
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
    idlewheel::timer_node node{idlewheel::call_member<&named::fire>(this)};
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
