// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_helpers.hpp>

// The WebSocket helpers, from the header's contract, over a loopback WebSocket on a polled
// io_context (the heartbeat's wheel on the manual clock, so its times are exact):
// idle_close_reason() is 1000 "idle timeout"; async_close_idle() is the close handshake with
// it; report_control_frames() tells the heartbeat of every control frame (and `next`, with
// its kind and payload); drop() closes the lowest socket at once, completes what is pending
// with operation_aborted, and never throws, whatever the layers and if already closed.

#include "support/liveness_scene.hpp"
#include "support/net.hpp"

#include <idlewheel/bind_member.hpp>
#include <idlewheel/heartbeat.hpp>

#define BOOST_TEST_MODULE test_beast_websocket_helpers
#include <boost/test/unit_test.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace websocket = boost::beast::websocket;
using namespace std::chrono_literals;
using tcp = net::ip::tcp;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::wheel_type;
using heartbeat_type = idlewheel::basic_heartbeat<wheel_type>;
using boost::system::error_code;

// A WebSocket pair over loopback on the scene's io_context, handshake done (polled, never run).
struct ws_pair : scene {
    ws_pair() {
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
        acceptor.async_accept(server.next_layer(), [&](error_code ec) { BOOST_TEST_REQUIRE(!ec); });
        client.next_layer().connect(acceptor.local_endpoint());
        poll_until([&] { return server.next_layer().is_open(); });
        bool accepted = false, shook = false;
        server.async_accept([&](error_code ec) { accepted = !ec; });
        client.async_handshake("localhost", "/", [&](error_code ec) { shook = !ec; });
        poll_until([&] { return accepted && shook; });
        BOOST_TEST_REQUIRE((accepted && shook));
    }

    template <class Done>
    void poll_until(Done done) {
        for (int i = 0; i < 200000 && !done(); ++i) poll();
    }

    websocket::stream<tcp::socket> server{io};
    websocket::stream<tcp::socket> client{io};
    boost::beast::flat_buffer server_buffer, client_buffer;
};

struct heartbeat_events {
    std::vector<idlewheel::heartbeat_event> seen;
    void on_event(idlewheel::heartbeat_event e) { seen.push_back(e); }
};

// ... with a heartbeat of 100 ms (ping) + 100 ms (pong) on the server's side, and a read
// pending there (a read is what sees control frames).
struct watched_pair : ws_pair {
    void start_reading() {
        hb.start();
        server.async_read(server_buffer, [](error_code, std::size_t) {});
    }
    heartbeat_events events;
    heartbeat_type hb{wheel, idlewheel::bind_member<&heartbeat_events::on_event>(&events),
                      {.ping_interval = 100ms, .pong_timeout = 100ms}};
};

}  // namespace

BOOST_AUTO_TEST_CASE(the_idle_close_reason_is_1000_idle_timeout) {
    const websocket::close_reason r = idlewheel::beast::idle_close_reason();
    BOOST_TEST(r.code == static_cast<std::uint16_t>(websocket::close_code::normal));
    BOOST_TEST(r.code == 1000U);
    BOOST_TEST(std::string(r.reason.data(), r.reason.size()) == "idle timeout");
}

BOOST_FIXTURE_TEST_CASE(async_close_idle_closes_with_1000_idle_timeout, ws_pair) {
    int closed = 0;
    error_code close_ec = net::error::operation_aborted;
    idlewheel::beast::async_close_idle(server, [&](error_code ec) {
        ++closed;
        close_ec = ec;
    });
    error_code read_ec;
    bool read_done = false;
    client.async_read(client_buffer, [&](error_code ec, std::size_t) {
        read_ec = ec;
        read_done = true;
    });
    poll_until([&] { return read_done && closed > 0; });
    BOOST_TEST_REQUIRE(read_done);
    BOOST_TEST((read_ec == websocket::error::closed));  // the peer saw a close frame ...
    BOOST_TEST(client.reason().code == 1000U);           // ... with the idle reason
    BOOST_TEST(std::string(client.reason().reason.data(), client.reason().reason.size()) == "idle timeout");
    BOOST_TEST(closed == 1);  // the handshake completed (the client answered), once
    BOOST_TEST(!close_ec);
}

BOOST_FIXTURE_TEST_CASE(report_control_frames_keeps_a_pinging_peer_alive, watched_pair) {
    std::vector<std::string> frames;
    idlewheel::beast::report_control_frames(server, hb, [&](websocket::frame_type kind, boost::beast::string_view p) {
        frames.push_back(std::string(kind == websocket::frame_type::ping ? "ping " : "other ") + std::string(p));
    });
    start_reading();
    step_to(100);
    BOOST_TEST_REQUIRE(events.seen.size() == 1U);
    BOOST_TEST((events.seen[0] == idlewheel::heartbeat_event::send_ping));
    // The peer pings (any control frame is "something from the peer"): no dead peer then.
    client.async_ping(websocket::ping_data("p1"), [](error_code) {});
    poll_until([&] { return !frames.empty(); });
    BOOST_TEST_REQUIRE(frames.size() == 1U);
    BOOST_TEST(frames[0] == "ping p1");
    step_to(250);  // past the pong check at 200: heard in time
    for (const auto e : events.seen) BOOST_TEST((e != idlewheel::heartbeat_event::dead_peer));
    BOOST_TEST((hb.current() != heartbeat_type::state::dead));
}

BOOST_FIXTURE_TEST_CASE(without_control_frames_the_same_peer_is_dead, watched_pair) {
    // The control of the test above: nothing reported, the heartbeat declares the peer dead.
    idlewheel::beast::report_control_frames(server, hb);
    start_reading();
    step_to(250);
    BOOST_TEST_REQUIRE(events.seen.size() == 2U);
    BOOST_TEST((events.seen[1] == idlewheel::heartbeat_event::dead_peer));
}

BOOST_FIXTURE_TEST_CASE(report_control_frames_without_next_reports_a_pong, watched_pair) {
    idlewheel::beast::report_control_frames(server, hb);
    start_reading();
    client.async_read(client_buffer, [](error_code, std::size_t) {});  // answers the server's pings
    step_to(100);
    BOOST_TEST_REQUIRE(events.seen.size() == 1U);  // send_ping: the server pings, the client pongs
    bool pinged = false;
    server.async_ping({}, [&](error_code ec) { pinged = !ec; });
    poll_until([&] { return pinged; });
    step_to(250);  // past the pong check at 200: the pong was heard, no dead_peer
    for (const auto e : events.seen) BOOST_TEST((e != idlewheel::heartbeat_event::dead_peer));
    BOOST_TEST((hb.current() != heartbeat_type::state::dead));
}

BOOST_FIXTURE_TEST_CASE(drop_closes_the_socket_and_aborts_what_is_pending, ws_pair) {
    error_code read_ec;
    int reads = 0;
    server.async_read(server_buffer, [&](error_code ec, std::size_t) {
        ++reads;
        read_ec = ec;
    });
    poll();
    static_assert(noexcept(idlewheel::beast::drop(server)));
    idlewheel::beast::drop(server);
    BOOST_TEST(!server.next_layer().is_open());
    poll_until([&] { return reads > 0; });
    BOOST_TEST(reads == 1);
    BOOST_TEST((read_ec == net::error::operation_aborted));
    idlewheel::beast::drop(server);  // already closed: nothing, no throw
    BOOST_TEST(!server.next_layer().is_open());
}

BOOST_AUTO_TEST_CASE(drop_reaches_the_socket_through_the_layers) {
    net::io_context io;
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
    websocket::stream<boost::beast::tcp_stream> ws(io);
    ws.next_layer().socket().connect(acceptor.local_endpoint());
    BOOST_TEST_REQUIRE(ws.next_layer().socket().is_open());
    idlewheel::beast::drop(ws);
    BOOST_TEST(!ws.next_layer().socket().is_open());
    tcp::socket plain(io);
    idlewheel::beast::drop(plain);  // never opened: nothing, no throw
    BOOST_TEST(!plain.is_open());
}
