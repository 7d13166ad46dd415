// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/stream_liveness.hpp>

// stream_liveness, the raw-TCP transport of session_liveness, over a loopback socket on a
// manual-clock wheel: idle close, application pings and a dead peer, the bounded close. Over
// Beast's streams (and TLS) in test_beast_http_timeouts.cpp. Part of the executable
// test_session_liveness (tests/README.md).

#include "support/net.hpp"
#include "support/session_scene.hpp"

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {
using namespace idlewheel::test::session_scene;  // support/session_scene.hpp
}  // namespace

// ---- stream_liveness: the raw-TCP transport over a loopback socket ------------------------

namespace {

using tcp = net::ip::tcp;

struct line_session;
using line_config = idlewheel::stream_liveness_config<line_session, tcp::socket, wheel_type>;

// A line-protocol session whose liveness is a stream_liveness; its hook records the events
// with their times and "sends" an application ping (counts it).
struct line_session {
    line_session(tcp::socket s, const line_config& c, const scene& st)
        : socket(std::move(s)), live(c, *this), stage(&st) {}
    void on_liveness(liveness_event e) { events.push_back({e, stage->now_ms()}); }
    void read() {
        socket.async_read_some(net::buffer(buffer), [this](idlewheel::error_code ec, std::size_t) {
            if (!live.on_read(ec)) return;
            read();
        });
    }
    tcp::socket socket;
    idlewheel::stream_liveness<line_session, tcp::socket, wheel_type> live;
    const scene* stage;
    std::vector<seen> events;
    std::array<char, 64> buffer{};
};

// A connected loopback pair on the scene's io_context (polled, never run: no real time waits).
struct loopback : scene {
    loopback() {
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
        bool accepted = false, connected = false;
        acceptor.async_accept(server_side, [&](idlewheel::error_code ec) { accepted = !ec; });
        client.async_connect(acceptor.local_endpoint(), [&](idlewheel::error_code ec) { connected = !ec; });
        for (int i = 0; i < 100000 && !(accepted && connected); ++i) poll();
        BOOST_TEST_REQUIRE((accepted && connected));
    }
    tcp::socket server_side{io};
    tcp::socket client{io};
};

// Polls until the client's read ends (the server closed or shut down its side); true if it did.
bool client_sees_end(loopback& l) {
    std::array<char, 16> sink{};
    bool ended = false;
    l.client.async_read_some(net::buffer(sink), [&](idlewheel::error_code ec, std::size_t) { ended = static_cast<bool>(ec); });
    for (int i = 0; i < 100000 && !ended; ++i) l.poll();
    return ended;
}

}  // namespace

BOOST_AUTO_TEST_CASE(stream_liveness_closes_an_idle_socket) {
    loopback l;
    line_config config(l.wheel, &line_session::socket, {.idle_timeout = 200ms},
                       idlewheel::bind_member<&line_session::on_liveness>(), &l.live);
    line_session s(std::move(l.server_side), config, l);
    BOOST_TEST(sizeof(s.live) <= 64U);
    s.live.start();
    s.read();
    const std::string_view hello = "hello\n";
    l.step_to(100, [&](std::int64_t t) {
        if (t == 50) net::write(l.client, net::buffer(hello));  // a message: idleness from then
    });
    l.step_to(249);
    BOOST_TEST(s.events.empty());
    BOOST_TEST(s.socket.is_open());
    l.step_to(400);
    BOOST_TEST_REQUIRE(s.events.size() == 1U);
    BOOST_TEST(name(s.events[0].event) == "idle");
    BOOST_TEST(s.events[0].at >= 250);  // never before 200 ms after the message (read at >= 50)
    BOOST_TEST(s.events[0].at <= 250 + 2 * tick_ms);
    BOOST_TEST(!s.socket.is_open());  // closed by the object before the hook heard of it
    BOOST_TEST(client_sees_end(l));
    BOOST_TEST(l.live.reader_idle == 1U);
    BOOST_TEST(l.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(stream_liveness_asks_for_application_pings_and_drops_a_dead_peer) {
    loopback l;
    line_config config(l.wheel, &line_session::socket,
                       {.idle_timeout = 10s, .ping_interval = 100ms, .pong_timeout = 50ms},
                       idlewheel::bind_member<&line_session::on_liveness>(), &l.live);
    BOOST_CHECK_THROW(line_config(l.wheel, &line_session::socket, {.ping_interval = 100ms, .pong_timeout = 50ms}),
                      std::invalid_argument);  // nothing would send the ping
    line_session s(std::move(l.server_side), config, l);
    s.live.start();
    s.read();
    // The peer answers the first two pings ("PONG" 20 ms later), then goes silent.
    std::vector<std::int64_t> answer_at;
    l.step_to(1000, [&](std::int64_t t) {
        if (s.events.size() > answer_at.size() && answer_at.size() < 2 &&
            s.events.back().event == liveness_event::send_ping)
            answer_at.push_back(s.events.back().at + 20);
        for (const auto a : answer_at)
            if (a == t) net::write(l.client, net::buffer(std::string_view("PONG\n")));
    });
    std::vector<std::string> names;
    for (const auto& e : s.events) names.push_back(name(e.event));
    BOOST_TEST(names == (std::vector<std::string>{"send ping", "send ping", "send ping", "dead peer"}),
               boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(s.events.size() == 4U);
    BOOST_TEST(s.events[3].at == s.events[2].at + 50);  // pong_timeout after the unanswered ping
    BOOST_TEST(!s.socket.is_open());
    BOOST_TEST(client_sees_end(l));
    BOOST_TEST(l.live.dead_peers == 1U);
    BOOST_TEST(l.live.pings_sent == 3U);
}

BOOST_AUTO_TEST_CASE(stream_liveness_close_is_bounded_by_the_close_deadline) {
    loopback l;
    line_config config(l.wheel, &line_session::socket, {.idle_timeout = 10s, .close_timeout = 100ms},
                       idlewheel::bind_member<&line_session::on_liveness>(), &l.live);
    line_session s(std::move(l.server_side), config, l);
    s.live.start();
    s.read();
    l.step_to(10);
    BOOST_TEST(s.live.close());   // shuts our side down: the client sees the end
    BOOST_TEST(!s.live.close());  // once
    BOOST_TEST(client_sees_end(l));
    BOOST_TEST(s.socket.is_open());  // the client has not closed its side yet
    l.step_to(200);                  // ... and never does: the close deadline closes the socket
    BOOST_TEST_REQUIRE(s.events.size() == 1U);
    BOOST_TEST(name(s.events[0].event) == "close timeout");
    BOOST_TEST(s.events[0].at == 110);
    BOOST_TEST(!s.socket.is_open());
}

// ---- member_liveness: the hook is a member of the session that holds the object -----------
