// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// expiry(): when a pending timeout is due (Asio's timer expiry(), Kafka's getDelay), for
// handles and nodes (wheel_timer::expiry()) and the liveness objects, on the manual clock,
// against the precision contract: the start of the deadline tick, never before the time asked
// for and less than a tick after it; time_point::max() when not pending; a per_tick entry whose
// delay has not started yet reports the earliest it can be due. (Issue 20, item 5.)

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE expiry
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

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
    idlewheel::basic_repeating_timer<wheel_type> heartbeat(wheel, idlewheel::call_member<&beat::run>(&b), 1ms);
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
    idlewheel::basic_operation_deadline<wheel_type> d(wheel, idlewheel::call_member<&owner::late>(&o));
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
    idlewheel::basic_repeating_timer<wheel_type> rt(wheel, idlewheel::call_member<&counter::run>(&c), 1s);
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
    idlewheel::basic_idle_watch<wheel_type> w(wheel, idlewheel::idle_member<&owner::on_idle>(&o), opts);
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
        [](void* ctx, live_type&, idlewheel::liveness_event e) {
            static_cast<std::vector<idlewheel::liveness_event>*>(ctx)->push_back(e);
        },
        &events);
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
