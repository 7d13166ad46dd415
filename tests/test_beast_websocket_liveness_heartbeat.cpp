// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_liveness.hpp>

// websocket_liveness.hpp's heartbeat (a part of test_beast_websocket_liveness, whose first
// file is test_beast_websocket_liveness.cpp), in both forms of the echo server: a client deaf
// to pings is a dead peer, and a pong is liveness, not activity.

#include "support/net.hpp"
#include "support/ws_echo_server.hpp"

#include <boost/test/unit_test.hpp>

#include "support/websocket_liveness_scene.hpp"

#include <chrono>
#include <optional>

namespace {
using namespace idlewheel::test::ws_liveness;  // support/websocket_liveness_scene.hpp
}  // namespace

// A client that never reads (so never answers a ping) is dropped after about
// ping_interval + pong_timeout, long before the idle time.
BOOST_AUTO_TEST_CASE_TEMPLATE(deaf_client_is_dropped_as_dead_peer, Server, servers) {
    const auto ping_interval = 50ms, pong_timeout = 100ms;
    const auto idle = 5s;
    server_thread<Server> server({.idle_timeout = idle, .heartbeat = {.ping_interval = ping_interval, .pong_timeout = pong_timeout}});
    net::io_context io;
    std::optional<ws_stream> ws;
    net::co_spawn(io, deaf_client(server.port(), ws), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return ws.has_value(); }));

    // The client's io_context does not run meanwhile: it reads nothing at all.
    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    const auto& rec = c.closed.at(0);
    BOOST_TEST(ws_echo::to_string(rec.cause) == "dead peer");
    BOOST_REQUIRE(rec.after_upgrade.has_value());
    BOOST_TEST(ms(*rec.after_upgrade) >= ms(ping_interval + pong_timeout));
    BOOST_TEST(ms(*rec.after_upgrade) < ms(ping_interval + pong_timeout) + 2000);  // idle is 5 s
    BOOST_TEST(c.pings == 1U);  // one ping, unanswered: no second one stacked on it
    const auto s = server.stats();
    BOOST_TEST(s.dead_peers == 1U);
    BOOST_TEST(s.pings_sent == 1U);
    BOOST_TEST(s.reader_idle == 0U);
    BOOST_TEST(s.pending == 0U);

    // Now the client reads: the ping that was never answered, then the dropped connection (no
    // close frame: the server did not shake hands with a dead peer).
    client_result r;
    net::co_spawn(io, read_until_closed(*ws, r, steady_clock::now()), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    BOOST_TEST(r.ec.failed());
    BOOST_TEST((r.ec != websocket::error::closed), r.ec.message());
    BOOST_TEST(r.pings == 1);
    BOOST_TEST(server.stop());
}

// A client that answers pings but sends nothing is closed by the idle timeout only, and
// the pings went on meanwhile: a pong is liveness, not activity.
BOOST_AUTO_TEST_CASE_TEMPLATE(pong_answering_client_is_closed_by_idle_timeout_only, Server, servers) {
    const auto ping_interval = 50ms, pong_timeout = 300ms, idle = 600ms;
    server_thread<Server> server({.idle_timeout = idle, .heartbeat = {.ping_interval = ping_interval, .pong_timeout = pong_timeout}});
    net::io_context io;
    client_result r;
    net::co_spawn(io, silent_client(server.port(), r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    check_idle_close(r, idle);
    BOOST_TEST(r.pings >= 3);  // about idle / ping_interval of them

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    check_idle_record(c.closed.at(0), idle);
    BOOST_TEST(c.pings >= 3U);
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == 1U);
    BOOST_TEST(s.dead_peers == 0U);
    BOOST_TEST(s.pings_sent >= 3U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST(server.stop());
}
