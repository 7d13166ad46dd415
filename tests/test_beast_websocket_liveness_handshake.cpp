// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_liveness.hpp>

// websocket_liveness.hpp's handshake phase (a part of test_beast_websocket_liveness, whose
// first file is test_beast_websocket_liveness.cpp): an upgrade request trickled past the
// handshake deadline, in both forms of the echo server; then websocket_liveness alone, on a
// stream with no peer: handshake_step() (the TLS step before the upgrade), idle in the
// handshake phase, and Beast's own timeouts set after start(), whose misuse is a death test in
// a child process (support/in_child.hpp). websocket_liveness runs on wheel_timer (the steady
// clock): where an exact time matters the tests compare the wheel entry's expiry(), which
// needs no sleeping; real time gives only lower bounds.

#include "support/net.hpp"
#include "support/ws_echo_server.hpp"

#include <boost/test/unit_test.hpp>

#include "support/in_child.hpp"  // after Boost.Test
#include "support/websocket_liveness_scene.hpp"

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace {
using namespace idlewheel::test::ws_liveness;  // support/websocket_liveness_scene.hpp
}  // namespace

// An upgrade request trickled a byte every 20 ms is cut off by the handshake deadline: the
// bytes do not extend it. A client connecting afterwards is served normally.
BOOST_AUTO_TEST_CASE_TEMPLATE(slow_handshake_is_dropped_and_others_are_served, Server, servers) {
    const auto handshake = 200ms;
    const auto gap = 20ms;  // the whole request would take 2.6 s
    server_thread<Server> server({.handshake_timeout = handshake});
    net::io_context io;
    tcp::socket raw(io);
    trickle_result t;
    net::co_spawn(io, trickle_client(raw, server.port(), gap, t), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return t.closed && t.writer_done; }));
    BOOST_TEST(ms(t.closed_after) >= ms(handshake));
    BOOST_TEST(ms(t.closed_after) < 1500);  // had the bytes extended it, not before 2.6 s
    BOOST_TEST(t.sent >= 3U);               // bytes did arrive while the deadline ran
    BOOST_TEST(t.sent < upgrade_request.size());

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    auto c = server.counters();
    BOOST_TEST(ws_echo::to_string(c.closed.at(0).cause) == "handshake timeout");
    BOOST_TEST(ms(c.closed.at(0).after_accept) >= ms(handshake));
    BOOST_TEST(!c.closed.at(0).after_upgrade.has_value());
    BOOST_TEST(c.upgraded == 0U);
    BOOST_TEST(server.stats().handshake_timeouts == 1U);

    client_result control;
    net::co_spawn(io, active_client(server.port(), 10ms, 3, control), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return control.finished; }));
    BOOST_TEST(!control.ec, control.ec.message());
    BOOST_TEST(control.echoes == 3);

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& n) { return n.closed.size() == 2; }));
    c = server.counters();
    BOOST_TEST(c.count(close_cause::handshake_timeout) == 1U);
    BOOST_TEST(c.count(close_cause::client_close) == 1U);
    BOOST_TEST(server.stats().pending == 0U);
    BOOST_TEST(server.stop());
}

// ---- websocket_liveness alone: handshake_step() and Beast's timeouts ------------------------

namespace {

// A session with no peer: its stream is never connected, which is all start(),
// handshake_step() and accepted() need.
struct lone_session : std::enable_shared_from_this<lone_session> {
    using config_type = idlewheel::beast::websocket_liveness_config<lone_session>;
    ws_stream ws;
    idlewheel::beast::websocket_liveness<lone_session> live;
    lone_session(net::io_context& io, const config_type& config) : ws(io), live(config, *this, ws) {}
};

// An io_context run by the test thread, its wheel, and one config with `handshake` as the
// handshake deadline (and idle and heartbeat far away).
struct lone_fixture {
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    idlewheel::liveness_stats stats;
    lone_session::config_type config;
    std::shared_ptr<lone_session> session;

    explicit lone_fixture(std::chrono::nanoseconds handshake)
        : config(wheel,
                 {.handshake_timeout = handshake, .idle_timeout = 60s, .ping_interval = 30s, .pong_timeout = 30s},
                 &stats),
          session(std::make_shared<lone_session>(io, config)) {}

    idlewheel::beast::websocket_liveness<lone_session>& live() { return session->live; }
};

using lone_phase = idlewheel::beast::websocket_liveness<lone_session>::phase;

// Runs the io_context (and so the wheel) for `d` of real time.
void run_for(net::io_context& io, steady_clock::duration d) {
    run_until(
        io, [] { return false; }, d);
}

}  // namespace

// In time: true, still in the handshake, and its deadline exactly where start() put it (not
// re-armed); the upgrade then opens the session.
BOOST_AUTO_TEST_CASE(handshake_step_in_time_goes_on_and_keeps_the_deadline) {
    lone_fixture f(5s);
    f.live().start();
    const auto due = f.live().expiry();
    BOOST_TEST((due != idlewheel::wheel_timer::time_point::max()));
    run_for(f.io, 30ms);  // time passes before the step
    BOOST_TEST(f.live().handshake_step({}));
    BOOST_TEST((f.live().current() == lone_phase::handshake));
    BOOST_TEST((f.live().expiry() == due));
    BOOST_TEST(f.live().handshake_step({}));  // a second step: the same
    BOOST_TEST((f.live().expiry() == due));
    BOOST_TEST(f.live().accepted({}));
    BOOST_TEST((f.live().current() == lone_phase::open));
    f.live().stop();
}

// The deadline from start() bounds the step and the upgrade together: a step in time does not
// give the upgrade a new deadline, and the verdict comes no sooner than the handshake time
// after start(); then the step, or the upgrade, are false.
BOOST_AUTO_TEST_CASE(handshake_step_after_the_deadline_is_false) {
    const auto handshake = 200ms;
    lone_fixture f(handshake);
    const auto t0 = steady_clock::now();
    f.live().start();
    const auto due = f.live().expiry();
    run_for(f.io, handshake / 2);
    BOOST_REQUIRE(f.live().handshake_step({}));
    BOOST_TEST((f.live().expiry() == due));  // not re-armed: the same deadline
    BOOST_REQUIRE(run_until(f.io, [&] { return f.live().has_verdict(); }));
    BOOST_TEST(ms(steady_clock::now() - t0) >= ms(handshake));
    BOOST_TEST((f.live().verdict() == idlewheel::liveness_event::handshake_timeout));
    BOOST_TEST(f.live().expired());
    BOOST_TEST(f.stats.handshake_timeouts == 1U);
    BOOST_TEST(!f.live().handshake_step({}));  // a TLS success reported after the verdict
    BOOST_TEST(!f.live().accepted({}));
    BOOST_TEST((f.live().current() == lone_phase::ended));
}

// On an error: false, and the object stops (its entry leaves the wheel, no verdict ever).
BOOST_AUTO_TEST_CASE(handshake_step_on_an_error_is_false_and_stops) {
    lone_fixture f(100ms);
    f.live().start();
    BOOST_TEST((f.live().expiry() != idlewheel::wheel_timer::time_point::max()));  // in the wheel
    BOOST_TEST(!f.live().handshake_step(net::error::connection_reset));
    BOOST_TEST((f.live().current() == lone_phase::stopped));
    BOOST_TEST((f.live().expiry() == idlewheel::wheel_timer::time_point::max()));  // out of it
    BOOST_TEST(f.wheel.stats().pending == 0U);
    BOOST_TEST(!f.live().handshake_step({}));  // stopped: nothing to go on with
    run_for(f.io, 150ms);
    BOOST_TEST(!f.live().has_verdict());
    BOOST_TEST(f.stats.handshake_timeouts == 0U);
}

// Not started: false (no handshake to step through).
BOOST_AUTO_TEST_CASE(handshake_step_before_start_is_false) {
    lone_fixture f(100ms);
    BOOST_TEST(!f.live().handshake_step({}));
    BOOST_TEST((f.live().current() == lone_phase::stopped));
}

// With the options' idle_in_handshake, a peer that sends nothing is idle before the handshake
// deadline; before the upgrade there is no WebSocket to close, so the socket is closed at once
// (as for a handshake timeout), counted as reader idle only, and the upgrade is refused. Over a
// real loopback connection: the client sees the close no sooner than the idle time.
BOOST_AUTO_TEST_CASE(idle_in_handshake_closes_the_socket_before_the_upgrade) {
    const auto idle = 150ms;
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    idlewheel::liveness_stats stats;
    lone_session::config_type config(
        wheel, {.handshake_timeout = 5s, .idle_timeout = idle, .idle_in_handshake = true}, &stats);
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    auto session = std::make_shared<lone_session>(io, config);
    acceptor.accept(session->ws.next_layer());
    const auto t0 = steady_clock::now();
    session->live.start();
    bool closed = false;
    beast::error_code read_ec;
    steady_clock::duration closed_after{};
    std::array<char, 64> sink{};
    client.async_read_some(net::buffer(sink), [&](beast::error_code ec, std::size_t) {
        read_ec = ec;
        closed_after = steady_clock::now() - t0;
        closed = true;
    });
    BOOST_REQUIRE(run_until(io, [&] { return closed; }, patience));
    BOOST_TEST((read_ec == net::error::eof || read_ec == net::error::connection_reset), read_ec.message());
    BOOST_TEST(ms(closed_after) >= ms(idle));
    BOOST_TEST(ms(closed_after) < ms(idle) + 2500);  // far before the 5 s deadline
    BOOST_TEST((session->live.verdict() == idlewheel::liveness_event::idle));
    BOOST_TEST(!session->live.expired());
    BOOST_TEST(stats.reader_idle == 1U);
    BOOST_TEST(stats.handshake_timeouts == 0U);
    BOOST_TEST(!session->live.accepted({}));  // an upgrade reported now is refused
    BOOST_TEST(!session->ws.next_layer().is_open());
}

// Beast's suggested timeouts set BEFORE start() are harmless: start() turns them off.
BOOST_AUTO_TEST_CASE(beast_timeout_before_start_is_turned_off) {
    lone_fixture f(5s);
    f.session->ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    f.live().start();
    BOOST_TEST(f.live().accepted({}));
    websocket::stream_base::timeout t{};
    f.session->ws.get_option(t);
    BOOST_TEST((t.handshake_timeout == websocket::stream_base::none()));
    BOOST_TEST((t.idle_timeout == websocket::stream_base::none()));
    BOOST_TEST(!t.keep_alive_pings);
    f.live().stop();
}

namespace {

// What accepted(ec) does with a Beast timeout set after start(), in a child process.
idlewheel::test::child_outcome accept_after_late_timeout(const websocket::stream_base::timeout& late,
                                                         boost::system::error_code ec) {
    return idlewheel::test::in_child([late, ec] {
        lone_fixture f(5s);
        f.live().start();
        f.session->ws.set_option(late);
        const bool ok = f.live().accepted(ec);
        websocket::stream_base::timeout t{};
        f.session->ws.get_option(t);  // without the check: turned off again
        const bool off = t.handshake_timeout == websocket::stream_base::none() &&
                         t.idle_timeout == websocket::stream_base::none() && !t.keep_alive_pings;
        ::_exit(off && ok == !ec ? 0 : 3);
    });
}

constexpr std::string_view late_timeout_message =
    "websocket::stream_base::timeout set after websocket_liveness::start(): Beast's own timer would run "
    "beside idlewheel's; remove the set_option, or call start() after it";

void expect_late_timeout_caught(const idlewheel::test::child_outcome& o) {
#if IDLEWHEEL_CHECK_USAGE
    BOOST_TEST(o.aborted);
    BOOST_TEST(o.err.find(late_timeout_message) != std::string::npos, o.err);
#else
    BOOST_TEST(!o.aborted, o.err);
    BOOST_TEST(o.exit_code == 0);  // accepted as usual, Beast's timeouts off again
#endif
}

}  // namespace

// timeout::suggested after start() (Beast's TLS example sets it after the TLS handshake):
// never silent. With IDLEWHEEL_CHECK_USAGE (debug builds) accepted() aborts with the message,
// on success and on error alike; without it, Beast's timeouts are turned off again.
BOOST_AUTO_TEST_CASE(beast_suggested_timeout_after_start_is_caught_on_success) {
    expect_late_timeout_caught(
        accept_after_late_timeout(websocket::stream_base::timeout::suggested(beast::role_type::server), {}));
}

BOOST_AUTO_TEST_CASE(beast_suggested_timeout_after_start_is_caught_on_error) {
    expect_late_timeout_caught(accept_after_late_timeout(
        websocket::stream_base::timeout::suggested(beast::role_type::server), net::error::connection_reset));
}

// Any part of it counts: keep_alive_pings alone would make Beast ping beside us.
BOOST_AUTO_TEST_CASE(beast_keep_alive_pings_after_start_is_caught) {
    expect_late_timeout_caught(
        accept_after_late_timeout({websocket::stream_base::none(), websocket::stream_base::none(), true}, {}));
}
