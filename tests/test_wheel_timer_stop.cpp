// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// basic_wheel_timer at its edges: stop() and what it returns, max_pending and
// max_run_per_wakeup, throwing callbacks, expire_all(), and destroying the wheel (inside a
// callback, with timeouts pending). The second source file of the executable test_wheel_timer
// (the first, test_wheel_timer.cpp, holds the options, precision, wake-ups and callbacks).

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/timer_node.hpp>

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
using idlewheel::test::manual_fixture;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using idlewheel::test::session;
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

}  // namespace

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
