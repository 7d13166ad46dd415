// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_liveness.hpp>

// websocket_liveness.hpp's close (a part of test_beast_websocket_liveness, whose first file
// is test_beast_websocket_liveness.cpp), in both forms of the echo server: an idle close the
// peer never answers is dropped after close_timeout, and stop() ends every open session.

#include "support/net.hpp"
#include "support/ws_echo_server.hpp"

#include <boost/test/unit_test.hpp>

#include "support/websocket_liveness_scene.hpp"

#include <chrono>
#include <optional>

namespace {
using namespace idlewheel::test::ws_liveness;  // support/websocket_liveness_scene.hpp
}  // namespace

// An idle close the peer never answers (it reads nothing) ends with a drop after close_timeout:
// Beast's own close has no timeout when its timeouts are off.
BOOST_AUTO_TEST_CASE_TEMPLATE(unanswered_idle_close_is_dropped_after_close_timeout, Server, servers) {
    const auto idle = 100ms, close_timeout = 200ms;
    server_thread<Server> server({.idle_timeout = idle, .close_timeout = close_timeout});
    net::io_context io;
    std::optional<ws_stream> ws;
    const auto t0 = steady_clock::now();
    net::co_spawn(io, deaf_client(server.port(), ws), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return ws.has_value(); }));

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    BOOST_TEST(ms(steady_clock::now() - t0) >= ms(idle + close_timeout));
    const auto c = server.counters();
    check_idle_record(c.closed.at(0), idle);
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == 1U);
    BOOST_TEST(s.close_timeouts == 1U);  // the close deadline
    BOOST_TEST(s.operation_timeouts == 0U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST(server.stop());
}

// stop() ends every open session at once, and the server's io_context returns.
BOOST_AUTO_TEST_CASE_TEMPLATE(stop_ends_open_sessions, Server, servers) {
    server_thread<Server> server({.idle_timeout = 60s, .heartbeat = {.ping_interval = 10s, .pong_timeout = 10s}});
    net::io_context io;
    std::vector<client_result> clients(3);
    for (auto& r : clients) net::co_spawn(io, silent_client(server.port(), r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] {
        return std::all_of(clients.begin(), clients.end(), [](const client_result& r) { return r.reading; });
    }));

    BOOST_TEST(server.stop());
    BOOST_REQUIRE(run_until(io, [&] {
        return std::all_of(clients.begin(), clients.end(), [](const client_result& r) { return r.finished; });
    }));
    for (const auto& r : clients) BOOST_TEST(r.ec.failed());
    const auto c = server.counters();  // the server's thread has ended: read directly
    BOOST_TEST(c.open == 0U);
    BOOST_TEST(c.count(close_cause::shutdown) == 3U);
    BOOST_TEST(server.stats().pending == 0U);
}
