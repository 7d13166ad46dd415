// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/session_liveness.hpp>

// basic_session_liveness on a manual-clock wheel, driven 1 ms at a time (support/liveness_scene):
// the sans-I/O machine of one session (handshake -> open -> closing -> ended) with its one
// wheel entry, its 16 bytes of state, and exact times: never early, at most the contract's
// ticks late. Its transports run over real sockets: stream_liveness in test_stream_liveness.cpp,
// websocket_liveness in test_beast_websocket_liveness.cpp.
//
// This file, the first of the executable test_session_liveness (one translation unit): its
// size and options, the close, the lifetime, a full wheel, and the compact marks. Its parts:
// test_session_liveness_handshake.cpp (the handshake phase) and test_session_liveness_open.cpp
// (the open phase: idle and the heartbeat); support/session_liveness_scene.hpp, their session.

#include "support/liveness_scene.hpp"
#include "support/session_scene.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE session_liveness
#include <boost/test/unit_test.hpp>

#include "support/session_liveness_scene.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using namespace idlewheel::test::session_liveness_scene;  // support/session_liveness_scene.hpp
}  // namespace

BOOST_AUTO_TEST_CASE(idle_heartbeat_and_deadlines_fit_in_64_bytes) {
    static_assert(sizeof(live_type) <= 64);
    static_assert(sizeof(idlewheel::session_liveness) <= 64);
    BOOST_TEST(sizeof(idlewheel::session_liveness) <= 64U);
    BOOST_TEST_MESSAGE("sizeof(session_liveness) = " << sizeof(idlewheel::session_liveness));
}

BOOST_AUTO_TEST_CASE(options_out_of_range_are_refused) {
    scene s;
    BOOST_CHECK_THROW(config_type(s.wheel, {.ping_interval = 1s}, config_type::bound_handler{&session_fixture::on_event}), std::invalid_argument);
    BOOST_CHECK_THROW(config_type(s.wheel, {.idle_timeout = 24h * 30}, config_type::bound_handler{&session_fixture::on_event}),
                      std::invalid_argument);
    BOOST_CHECK_NO_THROW(config_type(s.wheel, {.idle_timeout = 24h * 3}, config_type::bound_handler{&session_fixture::on_event}));
}

// ---- close ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(one_close_at_a_time_and_none_after_the_peer_started_one) {
    session_fixture f({.idle_timeout = 1s, .close_timeout = 100ms});
    f.session->start();
    f.step_to(10);
    BOOST_TEST(f.session->start_close());   // ours: send it
    BOOST_TEST(!f.session->start_close());  // never a second one
    f.step_to(109);
    BOOST_TEST(f.events.empty());
    f.step_to(200);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "close timeout");
    BOOST_TEST(f.events[0].at == 110);
    BOOST_TEST(f.live.close_timeouts == 1U);
    BOOST_TEST(f.live.operation_timeouts == 0U);  // a close deadline is not an operation's

    session_fixture g({.idle_timeout = 50ms, .close_timeout = 100ms});
    g.session->start();
    g.step_to(10);
    g.session->on_peer_close();
    BOOST_TEST(g.session->peer_closing());
    BOOST_TEST(!g.session->start_close());  // the peer started it: we never send one
    g.step_to(300);
    // No idle verdict while closing; the close deadline bounds the peer's close too.
    BOOST_TEST_REQUIRE(g.events.size() == 1U);
    BOOST_TEST(name(g.events[0].event) == "close timeout");
    BOOST_TEST(g.events[0].at == 110);
}

BOOST_AUTO_TEST_CASE(idle_starts_the_close_and_its_deadline) {
    session_fixture f({.idle_timeout = 100ms, .ping_interval = 30ms, .pong_timeout = 1s, .close_timeout = 50ms});
    f.react = [&](liveness_event e) {
        if (e == liveness_event::send_ping) f.session->on_inbound();  // pongs at once
    };
    f.session->start();
    f.step_to(300);
    const auto idle = f.times(liveness_event::idle);
    BOOST_TEST(idle == std::vector<std::int64_t>{100}, boost::test_tools::per_element());
    BOOST_TEST(f.times(liveness_event::close_timeout) == std::vector<std::int64_t>{150},
               boost::test_tools::per_element());
    for (const auto p : f.times(liveness_event::send_ping)) BOOST_TEST(p < 100);  // no ping while closing
    BOOST_TEST(!f.session->start_close());
    BOOST_TEST((f.session->verdict() == liveness_event::close_timeout));
}

// Write progress restarts the close deadline (a slow but steady reader is not cut), never
// outside the closing phase, and a session whose progress stops is dropped close_timeout after
// the last progress: never early, at most one tick late.
BOOST_AUTO_TEST_CASE(write_progress_restarts_the_close_deadline) {
    session_fixture f({.idle_timeout = 1s, .close_timeout = 100ms});
    f.session->start();
    f.step_to(50);
    f.session->on_write_progress();  // open: nothing to restart
    f.step_to(60);
    BOOST_TEST(f.session->start_close());
    std::int64_t last = 60;
    for (std::int64_t t = 90; t <= 600; t += 30) {  // progress every 30 ms, far past 100 ms
        f.step_to(t);
        BOOST_TEST_REQUIRE(f.events.empty(), "a draining session was cut at " << t << " ms");
        f.session->on_write_progress();
        last = t;
    }
    BOOST_TEST(f.wheel.pending() == 1U);  // still its one entry, moved only when it came due
    f.step_to(last + 99);
    BOOST_TEST(f.events.empty());  // never early
    f.step_to(last + 200);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "close timeout");
    BOOST_TEST(f.events[0].at >= last + 100);
    BOOST_TEST(f.events[0].at <= last + 100 + tick_ms);
    BOOST_TEST(f.live.close_timeouts == 1U);
    BOOST_TEST(f.live.operation_timeouts == 0U);  // a close deadline is not an operation's
    f.session->on_write_progress();  // ended: no deadline comes back
    f.step_to(last + 500);
    BOOST_TEST(f.events.size() == 1U);
    BOOST_TEST(f.wheel.pending() == 0U);

    // close_timeout 0: there is no close deadline to restart.
    session_fixture g({.idle_timeout = 1s, .close_timeout = 0ms});
    g.session->start();
    BOOST_TEST(g.session->start_close());
    g.session->on_write_progress();
    BOOST_TEST(g.wheel.pending() == 0U);
    g.step_to(300);
    BOOST_TEST(g.events.empty());
}

// ---- lifetime -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(the_handler_may_destroy_the_session) {
    for (const auto kind : {liveness_event::send_ping, liveness_event::idle, liveness_event::dead_peer,
                            liveness_event::handshake_timeout, liveness_event::close_timeout}) {
        session_fixture f({.handshake_timeout = 50ms,
                           .idle_timeout = 300ms,
                           .ping_interval = 100ms,
                           .pong_timeout = 50ms,
                           .close_timeout = 50ms});
        f.react = [&](liveness_event e) {
            if (e == kind) f.session.reset();  // ASan: nothing of it is touched afterwards
        };
        if (kind == liveness_event::handshake_timeout) {
            f.session->start_handshake();
        } else if (kind == liveness_event::close_timeout) {
            f.session->start();
            BOOST_TEST(f.session->start_close());
        } else {
            f.session->start();
        }
        if (kind == liveness_event::idle) {
            f.react = [&](liveness_event e) {
                if (e == liveness_event::send_ping && f.session) f.session->on_inbound();
                if (e == liveness_event::idle) f.session.reset();
            };
        }
        f.step_to(1000);
        BOOST_TEST(!f.session, name(kind));
        BOOST_TEST(!f.events.empty());
        BOOST_TEST(name(f.events.back().event) == name(kind));
        BOOST_TEST(f.wheel.pending() == 0U, name(kind));
    }
}

BOOST_AUTO_TEST_CASE(destroying_a_running_session_unlinks_its_entry) {
    session_fixture f({.idle_timeout = 100ms, .ping_interval = 50ms, .pong_timeout = 50ms});
    f.session->start();
    BOOST_TEST(f.wheel.pending() == 1U);
    f.session.reset();
    BOOST_TEST(f.wheel.pending() == 0U);
    f.step_to(500);
    BOOST_TEST(f.events.empty());
}

BOOST_AUTO_TEST_CASE(stop_and_restart) {
    session_fixture f({.idle_timeout = 100ms, .ping_interval = 60ms, .pong_timeout = 30ms});
    f.session->start();
    f.step_to(50);
    f.session->stop();
    BOOST_TEST((f.session->current() == phase::stopped));
    BOOST_TEST(f.wheel.pending() == 0U);
    f.step_to(400);
    BOOST_TEST(f.events.empty());
    f.session->start();  // everything from now again
    f.step_to(459);
    BOOST_TEST(f.events.empty());
    // Stopped inside its own handler: nothing more (no dead peer after the ping).
    f.react = [&](liveness_event) { f.session->stop(); };
    f.step_to(1000);
    BOOST_TEST(f.times(liveness_event::send_ping) == std::vector<std::int64_t>{460}, boost::test_tools::per_element());
    BOOST_TEST(f.events.size() == 1U);
    BOOST_TEST(f.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(a_stopped_wheel_ends_the_session) {
    session_fixture f({.idle_timeout = 100ms});
    f.session->start();
    (void)f.wheel.stop();
    BOOST_TEST((f.session->current() == phase::stopped));
    BOOST_CHECK_THROW(f.session->start(), idlewheel::system_error);
    f.step_to(300);
    BOOST_TEST(f.events.empty());
}

// ---- max_pending ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_running_session_keeps_its_place_on_a_full_wheel) {
    session_fixture f({.handshake_timeout = 50ms,
                       .idle_timeout = 400ms,
                       .ping_interval = 100ms,
                       .pong_timeout = 50ms,
                       .close_timeout = 100ms},
                      {.max_pending = 1});
    std::vector<idlewheel::timeout> taken;
    int refused = 0;
    f.react = [&](liveness_event e) {
        if (e == liveness_event::send_ping) f.session->on_inbound();
        try {
            taken.push_back(f.wheel.schedule(1h, [] {}));  // the wheel is full: refused
        } catch (const idlewheel::system_error&) {
            ++refused;
        }
    };
    f.session->start_handshake();  // 1 of 1
    BOOST_CHECK_THROW((void)f.wheel.schedule(1ms, [] {}), idlewheel::system_error);
    std::optional<live_type> other(f.config);
    BOOST_CHECK_EXCEPTION(other->start(), idlewheel::system_error, [](const idlewheel::system_error& e) {
        return e.code() == idlewheel::make_error_code(idlewheel::error::too_many_pending);
    });
    BOOST_TEST((other->current() == phase::stopped));
    f.step_to(20);
    BOOST_TEST(f.session->handshake_done());  // moves its own entry
    f.step_to(2000);
    BOOST_TEST(f.times(liveness_event::send_ping).size() >= 3U);
    BOOST_TEST(f.times(liveness_event::idle).size() == 1U);
    BOOST_TEST(f.times(liveness_event::close_timeout).size() == 1U);
    // Every handler found the wheel full (the session's entry holds the one place) except the
    // last: the close timeout ended the session, and its entry left the wheel.
    BOOST_TEST(taken.size() == 1U);
    BOOST_TEST(refused == static_cast<int>(f.events.size()) - 1);
    BOOST_TEST(f.wheel.stats().rejected >= f.events.size());
}

// ---- compact marks (core/activity_epochs.hpp) ----------------------------------------

BOOST_AUTO_TEST_CASE(compact_marks_expand_to_their_epoch) {
    idlewheel::detail::activity_epochs e;
    const auto m1 = e.compact_mark();
    BOOST_TEST(idlewheel::detail::activity_epochs::is_compact_mark(m1));
    BOOST_TEST(e.expand(m1) == e.mark());
    BOOST_TEST(!e.closed(e.expand(m1)));
    (void)e.touch();
    e.close(1000);
    BOOST_TEST(e.closed(e.expand(m1)));
    BOOST_TEST(e.resolve(e.expand(m1), 5000) == 1000);
    // A mark of a later epoch expands to that epoch, not to an earlier one.
    for (int i = 0; i < 3; ++i) {
        (void)e.touch();
        e.close(2000 + i);
    }
    const auto m2 = e.compact_mark();
    (void)e.touch();
    e.close(3000);
    BOOST_TEST(e.resolve(e.expand(m2), 9000) == 3000);
}
