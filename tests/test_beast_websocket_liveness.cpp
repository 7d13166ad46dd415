// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_liveness.hpp>

// The liveness layer in a real WebSocket server, over real loopback sockets: the Beast echo
// server of support/ws_echo_server.hpp (idlewheel only, Beast's timeouts off) on a thread of
// its own, and Beast clients that are silent, chatty, deaf to pings, or slow to shake hands
// (support/websocket_liveness_scene.hpp). Every scenario runs twice, once per form of that
// server (its Liveness option): idle_watch + heartbeat + two operation_deadlines per session,
// beast.hpp's rules applied by hand, and one idlewheel::beast::websocket_liveness per session.
//
// Real clocks, so every expectation is a strict lower bound (the library's contract: never
// before the configured time) and a generous upper bound (a loaded 2-core machine, ASan).
// Every wait is bounded by `patience`, which only a failing test reaches: nothing hangs.
//
// This file, the first of the executable (one translation unit with its parts): the open
// phase, where silence is idleness and messages are activity. The parts:
// test_beast_websocket_liveness_handshake.cpp (the handshake deadline, handshake_step(),
// Beast's own timeouts), _heartbeat.cpp (pings and pongs), _close.cpp (the close and stop())
// and _registration.cpp (use_websocket_liveness). First, its size against the figures the
// docs state.

#include "support/net.hpp"
#include "support/ws_echo_server.hpp"

#define BOOST_TEST_MODULE test_beast_websocket_liveness
#include <boost/test/unit_test.hpp>

#include "support/doc_figures.hpp"
#include "support/websocket_liveness_scene.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace {

using namespace idlewheel::test::ws_liveness;  // support/websocket_liveness_scene.hpp

template <class Server>
void silent_client_is_closed_for_idleness(idlewheel::idle_kind kind) {
    const auto idle = 200ms;
    server_thread<Server> server({.idle_kind = kind, .idle_timeout = idle});
    net::io_context io;
    client_result r;
    net::co_spawn(io, silent_client(server.port(), r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    check_idle_close(r, idle);

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    check_idle_record(c.closed.at(0), idle);
    const auto s = server.stats();
    if constexpr (distinguishes_idle_kinds<Server>) {
        BOOST_TEST(s.reader_idle == (kind == idlewheel::idle_kind::reader ? 1U : 0U));
        BOOST_TEST(s.all_idle == (kind == idlewheel::idle_kind::all ? 1U : 0U));
    } else {
        BOOST_TEST(s.reader_idle == 1U);
    }
    BOOST_TEST(s.pending == 0U);  // the session's nodes left the wheel with it
    BOOST_TEST(server.stop());
}

struct sized_session : std::enable_shared_from_this<sized_session> {};

}  // namespace

// The whole liveness of a session in one member of 64 bytes or less, as its contract says,
// and each "websocket_liveness<...> live; // N bytes" the docs show is its size: a field
// added to it fails here until the docs say so.
BOOST_AUTO_TEST_CASE(its_size_is_the_figure_the_docs_state) {
    constexpr std::size_t size = sizeof(idlewheel::beast::websocket_liveness<sized_session>);
    static_assert(size <= 64);
    BOOST_TEST_MESSAGE("sizeof(websocket_liveness) = " << size);
    const auto at_most = idlewheel::test::doc_figures(std::regex(R"(in one member of (\d+) bytes or less)"));
    BOOST_TEST(at_most.size() >= 1U);  // websocket_liveness.hpp's contract
    for (const auto& f : at_most) {
        BOOST_TEST_MESSAGE(f.file << " states at most " << f.value << " bytes");
        BOOST_TEST_INFO(f.file);
        BOOST_TEST(size <= static_cast<std::size_t>(f.value));
    }
    const auto shown = idlewheel::test::doc_figures(std::regex(R"(websocket_liveness<[^;]*> live_?; // (?:idlewheel: )?(\d+) bytes)"));
    for (const auto& f : shown) {
        BOOST_TEST_MESSAGE(f.file << " states " << f.value << " bytes");
        BOOST_TEST_INFO(f.file);
        BOOST_TEST(size == static_cast<std::size_t>(f.value));
    }
}

// A silent client is closed with 1000 "idle timeout", not before the idle time.
BOOST_AUTO_TEST_CASE_TEMPLATE(silent_client_closed_by_reader_idle, Server, servers) {
    silent_client_is_closed_for_idleness<Server>(idlewheel::idle_kind::reader);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(silent_client_closed_by_all_idle, Server, servers) {
    silent_client_is_closed_for_idleness<Server>(idlewheel::idle_kind::all);
}

// A client that sends every T/4 for 3T is never closed and gets every echo back.
BOOST_AUTO_TEST_CASE_TEMPLATE(active_client_is_never_closed, Server, servers) {
    const auto idle = 400ms;
    const int messages = 13;  // at 0, T/4, ..., 3T
    server_thread<Server> server({.idle_timeout = idle});
    net::io_context io;
    client_result r;
    net::co_spawn(io, active_client(server.port(), idle / 4, messages, r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    BOOST_TEST(!r.ec, r.ec.message());  // its own close went through: the server never closed it
    BOOST_TEST(r.echoes == messages);
    BOOST_TEST(ms(r.lifetime) >= ms(3 * idle));

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    BOOST_TEST(ws_echo::to_string(c.closed.at(0).cause) == "client close");
    BOOST_TEST(c.echoed == static_cast<std::size_t>(messages));
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == 0U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST(server.stop());
}

// 200 clients at once, half silent, half active: exactly the silent ones are closed for
// idleness, and the wheel is empty once they are all gone.
BOOST_AUTO_TEST_CASE_TEMPLATE(many_clients_only_the_silent_ones_are_closed, Server, servers) {
    const auto idle = 400ms;
    const int messages = 13;  // every idle/4 for 3 idle times
    constexpr std::size_t half = 100;
    server_thread<Server> server({.idle_timeout = idle, .heartbeat = {.ping_interval = 100ms, .pong_timeout = 1s}});
    net::io_context io;
    std::vector<client_result> silent(half), active(half);
    for (std::size_t i = 0; i < half; ++i) {
        net::co_spawn(io, silent_client(server.port(), silent[i]), rethrow);
        net::co_spawn(io, active_client(server.port(), idle / 4, messages, active[i]), rethrow);
    }
    const auto all_finished = [](const std::vector<client_result>& v) {
        return std::all_of(v.begin(), v.end(), [](const client_result& r) { return r.finished; });
    };
    BOOST_REQUIRE(run_until(io, [&] { return all_finished(silent) && all_finished(active); }, 3 * patience));

    int pings = 0;
    for (const auto& r : silent) {
        check_idle_close(r, idle);
        pings += r.pings;
    }
    BOOST_TEST(pings > 0);
    for (const auto& r : active) {
        BOOST_TEST(!r.ec, r.ec.message());
        BOOST_TEST(r.echoes == messages);
    }

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.open == 0 && c.closed.size() == 2 * half; }));
    const auto c = server.counters();
    BOOST_TEST(c.accepted == 2 * half);
    BOOST_TEST(c.upgraded == 2 * half);
    BOOST_TEST(c.count(close_cause::idle) == half);
    BOOST_TEST(c.count(close_cause::client_close) == half);
    for (const auto& rec : c.closed)
        if (rec.cause == close_cause::idle) check_idle_record(rec, idle);
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == half);
    BOOST_TEST(s.dead_peers == 0U);
    BOOST_TEST(s.handshake_timeouts == 0U);
    BOOST_TEST(s.pings_sent > 0U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST_MESSAGE("200 sessions: " << s.wakeups << " wake-ups (" << s.idle_wakeups << " idle), worst lateness "
                                        << ms(s.worst_lateness) << " ms, " << s.pings_sent << " pings");
    BOOST_TEST(server.stop());
}
