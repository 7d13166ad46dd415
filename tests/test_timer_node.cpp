// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/timer_node.hpp>

// idlewheel::timer_node, the intrusive entry a session embeds: schedule, reschedule, destroy
// while pending, move to another wheel. Part of the executable test_wheel_timer
// (tests/README.md).

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::session;
using idlewheel::test::wheel_fixture;

}  // namespace

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
