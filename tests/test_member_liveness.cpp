// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/member_liveness.hpp>

// member_liveness from its contract (member_liveness.hpp): a session_liveness that is a member
// of its session, finds the session from its own address and calls the session's member hook;
// rebind() moves it to another config of the same session type (HTTP to WebSocket) in place.
// On the manual clock, 1 ms at a time (support/liveness_scene.hpp). Part of the executable
// test_session_liveness (tests/README.md).

#include "support/net.hpp"
#include "support/session_scene.hpp"

#include <idlewheel/error.hpp>

#include <boost/test/unit_test.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using namespace idlewheel::test::session_scene;  // support/session_scene.hpp

using phase = idlewheel::basic_session_liveness<wheel_type>::phase;

// A session with two hooks, one per config: the HTTP one and the WebSocket one, so that a test
// sees which config an event came through as well as which session it reached.
struct hooked_session {
    using config = idlewheel::member_liveness_config<hooked_session, wheel_type>;

    hooked_session(const config& c, const scene& st) : live(c, *this), stage(&st) {}
    void on_liveness(liveness_event e) { record(e, "http"); }
    void on_websocket(liveness_event e) { record(e, "websocket"); }
    void record(liveness_event e, const char* through) {
        events.push_back({e, stage->now_ms()});
        hooks.emplace_back(through);
        if (react) react(e);
    }
    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : events) out.push_back(name(e.event));
        return out;
    }

    std::string name_before = "padding before the member";
    idlewheel::member_liveness<hooked_session, wheel_type> live;
    const scene* stage;
    std::vector<seen> events;
    std::vector<std::string> hooks;     // "http" or "websocket", per event
    std::function<void(liveness_event)> react;  // run last in the hook (it may re-bind, stop, ...)
};

using member_config = hooked_session::config;

// The two configs of a session type on one wheel, as the demo keeps them per worker: an HTTP
// one (handshake deadline, reader idle, no heartbeat) and a WebSocket one (idle and heartbeat).
struct two_configs {
    explicit two_configs(scene& s, const idlewheel::session_liveness_options& http_times = {.handshake_timeout = 50ms,
                                                                                             .idle_timeout = 300ms,
                                                                                             .close_timeout = 40ms},
                         const idlewheel::session_liveness_options& websocket_times = {.idle_timeout = 500ms,
                                                                                       .ping_interval = 100ms,
                                                                                       .pong_timeout = 30ms,
                                                                                       .close_timeout = 60ms})
        : http(s.wheel, http_times, idlewheel::bind_member<&hooked_session::on_liveness>(), &http_stats),
          websocket(s.wheel, websocket_times, idlewheel::bind_member<&hooked_session::on_websocket>(), &websocket_stats) {}

    idlewheel::liveness_stats http_stats;
    idlewheel::liveness_stats websocket_stats;
    member_config http;
    member_config websocket;
};
}  // namespace

// ---- construction and the hook ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(member_liveness_calls_the_session_that_holds_it) {
    scene s;
    member_config config(s.wheel, {.handshake_timeout = 50ms}, idlewheel::bind_member<&hooked_session::on_liveness>(), &s.live);
    auto a = std::make_unique<hooked_session>(config, s);
    auto b = std::make_unique<hooked_session>(config, s);
    BOOST_TEST(sizeof(a->live) <= 64U);
    BOOST_TEST(&a->live.owner() == a.get());
    BOOST_TEST(&b->live.owner() == b.get());
    a->live.start_handshake();
    s.step_to(20);
    b->live.start_handshake();
    s.step_to(100);
    BOOST_TEST_REQUIRE(a->events.size() == 1U);
    BOOST_TEST_REQUIRE(b->events.size() == 1U);
    BOOST_TEST(name(a->events[0].event) == "handshake timeout");
    BOOST_TEST(a->events[0].at == 50);
    BOOST_TEST(b->events[0].at == 70);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
}

BOOST_AUTO_TEST_CASE(a_new_object_is_stopped_on_its_config_and_costs_no_entry) {
    scene s;
    two_configs c(s);
    hooked_session a(c.http, s);
    BOOST_TEST((a.live.current() == phase::stopped));
    BOOST_TEST(!a.live.armed());
    BOOST_TEST(!a.live.has_verdict());
    BOOST_TEST(&a.live.config() == static_cast<const idlewheel::basic_session_liveness_config<wheel_type>*>(&c.http));
    BOOST_TEST(&a.live.wheel() == &s.wheel);
    BOOST_TEST(s.wheel.pending() == 0U);
    s.step_to(1000);
    BOOST_TEST(a.events.empty());  // never started: nothing comes
}

// Every event the session_liveness reaches, forwarded to the member hook with its time, and
// counted in the config's stats.
BOOST_AUTO_TEST_CASE(every_event_reaches_the_member_hook) {
    scene s;
    two_configs c(s);
    // Handshake timeout: exact (a deadline on a tick boundary).
    hooked_session h(c.http, s);
    h.live.start_handshake();
    s.step_to(100);
    BOOST_TEST(h.names() == std::vector<std::string>{"handshake timeout"});
    BOOST_TEST(h.events.at(0).at == 50);

    // Idle, then the close deadline it starts (40 ms).
    hooked_session i(c.http, s);
    i.live.start();  // at 100
    s.step_to(1000);
    BOOST_TEST_REQUIRE(i.names() == (std::vector<std::string>{"idle", "close timeout"}));
    BOOST_TEST(i.events[0].at >= 400);
    BOOST_TEST(i.events[0].at <= 400 + 2 * tick_ms);  // at most two ticks late
    BOOST_TEST(i.events[1].at == i.events[0].at + 40);

    // The heartbeat: a ping after 100 ms of silence, no answer within 30 ms: a dead peer.
    hooked_session p(c.websocket, s);
    p.live.start();  // at 1000
    s.step_to(2000);
    BOOST_TEST_REQUIRE(p.names() == (std::vector<std::string>{"send ping", "dead peer"}));
    BOOST_TEST(p.events[0].at >= 1100);
    BOOST_TEST(p.events[0].at <= 1100 + 2 * tick_ms);
    BOOST_TEST(p.events[1].at == p.events[0].at + 30);
    BOOST_TEST((p.hooks == std::vector<std::string>{"websocket", "websocket"}));

    BOOST_TEST(c.http_stats.handshake_timeouts == 1U);
    BOOST_TEST(c.http_stats.reader_idle == 1U);
    BOOST_TEST(c.http_stats.close_timeouts == 1U);
    BOOST_TEST(c.websocket_stats.pings_sent == 1U);
    BOOST_TEST(c.websocket_stats.dead_peers == 1U);
    BOOST_TEST(c.http_stats.pings_sent == 0U);
    BOOST_TEST(c.websocket_stats.reader_idle == 0U);
}

BOOST_AUTO_TEST_CASE(destroying_the_session_while_armed_runs_nothing) {
    scene s;
    two_configs c(s);
    auto a = std::make_unique<hooked_session>(c.http, s);
    auto b = std::make_unique<hooked_session>(c.websocket, s);
    a->live.start_handshake();
    b->live.start();
    s.step_to(20);
    BOOST_TEST(a->live.armed());
    BOOST_TEST(s.wheel.pending() == 2U);
    a.reset();  // its deadline (50) still pending: the entry unlinks itself
    BOOST_TEST(s.wheel.pending() == 1U);
    b->live.on_read();
    s.step_to(60);
    b.reset();
    BOOST_TEST(s.wheel.pending() == 0U);
    s.step_to(2000);  // a crash or a sanitizer report here is the failure
    BOOST_TEST(c.http_stats.handshake_timeouts == 0U);
    BOOST_TEST(c.websocket_stats.pings_sent == 0U);
}

// ---- rebind ---------------------------------------------------------------------------------

// HTTP to WebSocket as the demo does it: an open HTTP session re-bound and started again; the
// WebSocket times and hook from then, on the same object and the same session.
BOOST_AUTO_TEST_CASE(rebind_while_armed_cancels_the_old_deadlines_and_starts_nothing) {
    scene s;
    two_configs c(s);
    hooked_session a(c.http, s);
    hooked_session other(c.http, s);
    a.live.start_handshake();  // handshake deadline at 50
    other.live.start_handshake();
    s.step_to(20);
    BOOST_TEST(a.live.armed());
    const auto* before = &a.live;
    a.live.rebind(c.websocket);
    BOOST_TEST(&a.live == before);  // the same object
    BOOST_TEST(&a.live.owner() == &a);
    BOOST_TEST((a.live.current() == phase::stopped));
    BOOST_TEST(!a.live.armed());
    BOOST_TEST(&a.live.config() == static_cast<const idlewheel::basic_session_liveness_config<wheel_type>*>(&c.websocket));
    s.step_to(400);
    BOOST_TEST(a.events.empty());  // neither the old deadline (50) nor anything of the new config
    BOOST_TEST(other.names() == std::vector<std::string>{"handshake timeout"});  // the other session keeps its config
    BOOST_TEST(other.hooks == std::vector<std::string>{"http"});
    BOOST_TEST(c.http_stats.handshake_timeouts == 1U);  // other's only: a re-bind counts nothing
    BOOST_TEST(c.websocket_stats.handshake_timeouts == 0U);

    a.live.start();  // at 400: idle 500 and a ping after 100 on the WebSocket config
    s.step_to(600);
    BOOST_TEST_REQUIRE(!a.events.empty());
    BOOST_TEST(name(a.events[0].event) == "send ping");
    BOOST_TEST(a.events[0].at >= 500);
    BOOST_TEST(a.events[0].at <= 500 + 2 * tick_ms);
    BOOST_TEST(a.hooks.at(0) == "websocket");
    BOOST_TEST(c.websocket_stats.pings_sent == 1U);
    BOOST_TEST(c.http_stats.pings_sent == 0U);
}

BOOST_AUTO_TEST_CASE(rebind_in_the_open_phase_then_start_is_the_upgrade) {
    scene s;
    two_configs c(s);
    hooked_session a(c.http, s);
    a.live.start_handshake();
    s.step_to(30);
    BOOST_TEST(a.live.handshake_done());  // the request: open on the HTTP config (idle 300, no ping)
    s.step_to(100);
    a.live.rebind(c.websocket);  // the upgrade
    a.live.start();
    // Answer every ping: only the idle verdict (500 ms after 100) and its close deadline come.
    a.react = [&](liveness_event e) {
        if (e == liveness_event::send_ping) a.live.on_inbound();
    };
    s.step_to(1000);
    BOOST_TEST_REQUIRE(a.events.size() >= 3U);
    BOOST_TEST(a.names().back() == "close timeout");
    const auto idle = a.events.at(a.events.size() - 2);
    BOOST_TEST(name(idle.event) == "idle");
    BOOST_TEST(idle.at >= 600);  // the WebSocket idle from the upgrade, not the HTTP one (300 from 30)
    BOOST_TEST(idle.at <= 600 + 2 * tick_ms);
    BOOST_TEST(a.events.back().at == idle.at + 60);  // the WebSocket close timeout
    for (const auto& h : a.hooks) BOOST_TEST(h == "websocket");
    BOOST_TEST(c.http_stats.reader_idle == 0U);
    BOOST_TEST(c.websocket_stats.reader_idle == 1U);
    BOOST_TEST(c.websocket_stats.close_timeouts == 1U);
}

BOOST_AUTO_TEST_CASE(rebind_while_a_ping_is_awaited_or_closing_clears_it) {
    scene s;
    two_configs c(s);
    hooked_session a(c.websocket, s);
    a.live.start();
    s.step_to(1000, [&](std::int64_t) {
        if (a.live.awaiting_pong() && a.live.current() == phase::open && a.events.size() == 1U) a.live.rebind(c.http);
    });
    BOOST_TEST(a.names() == std::vector<std::string>{"send ping"});  // no dead peer after the re-bind
    BOOST_TEST(!a.live.awaiting_pong());
    BOOST_TEST((a.live.current() == phase::stopped));
    BOOST_TEST(c.websocket_stats.dead_peers == 0U);

    hooked_session b(c.websocket, s);
    b.live.start();
    BOOST_TEST(b.live.start_close());  // the close deadline (60 ms) runs
    b.live.rebind(c.http);
    s.step_to(2000);
    BOOST_TEST(b.events.empty());
    BOOST_TEST(c.websocket_stats.close_timeouts == 0U);
    BOOST_TEST(c.http_stats.close_timeouts == 0U);
}

BOOST_AUTO_TEST_CASE(rebind_clears_a_verdict_and_the_ended_phase) {
    scene s;
    two_configs c(s);
    hooked_session a(c.http, s);
    a.live.start_handshake();
    s.step_to(100);
    BOOST_TEST((a.live.current() == phase::ended));
    BOOST_TEST(a.live.has_verdict());
    BOOST_TEST(a.live.expired());
    a.live.rebind(c.http);  // to the same config: a stop that also clears the verdict
    BOOST_TEST((a.live.current() == phase::stopped));
    BOOST_TEST(!a.live.has_verdict());
    BOOST_TEST(!a.live.expired());
    BOOST_TEST(c.http_stats.handshake_timeouts == 1U);  // what was counted stays counted
    a.live.start_handshake();  // at 100: deadline 150, on the same config
    s.step_to(300);
    BOOST_TEST_REQUIRE(a.events.size() == 2U);
    BOOST_TEST(a.events[1].at == 150);
    BOOST_TEST(c.http_stats.handshake_timeouts == 2U);
}

BOOST_AUTO_TEST_CASE(rebind_from_the_objects_own_hook) {
    scene s;
    two_configs c(s);
    hooked_session a(c.http, s);
    a.react = [&](liveness_event e) {
        if (e == liveness_event::idle && a.hooks.back() == "http") {
            a.live.rebind(c.websocket);  // the idle verdict armed the HTTP close deadline: cancelled
            a.live.start();
        }
    };
    a.live.start();  // idle at 300 on the HTTP config
    s.step_to(1000);
    BOOST_TEST_REQUIRE(a.events.size() == 3U);
    BOOST_TEST(a.names() == (std::vector<std::string>{"idle", "send ping", "dead peer"}));
    BOOST_TEST((a.hooks == std::vector<std::string>{"http", "websocket", "websocket"}));
    BOOST_TEST(a.events[1].at >= a.events[0].at + 100);  // the WebSocket heartbeat from the re-bind
    BOOST_TEST(a.events[1].at <= a.events[0].at + 100 + 2 * tick_ms);
    BOOST_TEST(a.events[2].at == a.events[1].at + 30);
    BOOST_TEST(c.http_stats.close_timeouts == 0U);  // the HTTP close deadline (40 ms) never came
    BOOST_TEST(c.websocket_stats.dead_peers == 1U);
}

// Two sessions due in the same tick: the first one's hook re-binds the second, whose entry
// the wheel has already found due: it must not run.
BOOST_AUTO_TEST_CASE(rebind_of_a_session_due_in_the_same_tick_runs_nothing_of_it) {
    scene s;
    two_configs c(s);
    hooked_session a(c.http, s);
    hooked_session b(c.http, s);
    a.react = [&](liveness_event) { b.live.rebind(c.websocket); };
    b.react = [&](liveness_event) { a.live.rebind(c.websocket); };
    a.live.start_handshake();
    b.live.start_handshake();  // both due at 50
    s.step_to(200);
    BOOST_TEST(a.events.size() + b.events.size() == 1U);
    BOOST_TEST(c.http_stats.handshake_timeouts == 1U);
    BOOST_TEST(!a.live.armed());
    BOOST_TEST(!b.live.armed());
}

// The re-bound entry left the wheel: the next start is a first start and counts against
// max_pending (what destroying and rebuilding the object did too).
BOOST_AUTO_TEST_CASE(the_start_after_a_rebind_counts_against_max_pending) {
    scene s({.max_pending = 1});
    two_configs c(s);
    hooked_session a(c.http, s);
    hooked_session b(c.http, s);
    a.live.start();
    BOOST_TEST(s.wheel.pending() == 1U);
    a.live.rebind(c.websocket);
    BOOST_TEST(s.wheel.pending() == 0U);
    b.live.start();  // takes the one place
    BOOST_CHECK_EXCEPTION(a.live.start(), idlewheel::system_error, [](const idlewheel::system_error& e) {
        return e.code() == idlewheel::make_error_code(idlewheel::error::too_many_pending);
    });
    BOOST_TEST((a.live.current() == phase::stopped));
    b.live.stop();
    a.live.start();  // a place again
    BOOST_TEST(a.live.armed());
}

// ---- misuse the library catches -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(rebind_to_a_config_on_another_wheel_throws_and_changes_nothing) {
    scene s;
    two_configs c(s);
    wheel_type elsewhere(s.io);
    member_config foreign(elsewhere, {.idle_timeout = 100ms}, idlewheel::bind_member<&hooked_session::on_websocket>());
    hooked_session a(c.http, s);
    a.live.start_handshake();  // deadline at 50
    s.step_to(10);
    BOOST_CHECK_THROW(a.live.rebind(foreign), std::invalid_argument);
    BOOST_TEST(&a.live.config() == static_cast<const idlewheel::basic_session_liveness_config<wheel_type>*>(&c.http));
    BOOST_TEST((a.live.current() == phase::handshake));
    BOOST_TEST(a.live.armed());
    s.step_to(100);
    BOOST_TEST(a.names() == std::vector<std::string>{"handshake timeout"});  // the old config's, on time
    BOOST_TEST(a.events.at(0).at == 50);
    BOOST_TEST(a.hooks == std::vector<std::string>{"http"});
}
