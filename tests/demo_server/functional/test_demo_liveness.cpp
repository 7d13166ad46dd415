// Liveness over real sockets: idle kick (TCP and WebSocket), heartbeat drop of a peer that
// does not answer pings, handshake timeout against a byte-trickling client (slowloris).
//
// Each timed outcome is checked against a strict lower bound measured from a moment taken
// before the client's last action (the server cannot have started its clock earlier), and a
// generous upper bound (`slack`, demo_fixture.hpp).
#include "demo_fixture.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

#include <future>
#include <memory>

namespace bdata = boost::unit_test::data;
using namespace demo_test;

namespace {

constexpr std::string_view empty_ping_frame{"\x89\x00", 2};  // server-to-client: FIN + ping, no mask, no payload

}  // namespace

// demo_idle_kick: silent TCP clients get EOF and WebSocket clients close 1000 "idle timeout", never before
// --idle-timeout; active clients are never kicked.
BOOST_AUTO_TEST_SUITE(idle_kick, *boost::unit_test::label("io_threads"))

// Silent clients of both kinds are kicked once --idle-timeout has passed since their last
// inbound data (TCP: EOF; WebSocket: close 1000 "idle timeout"), never before; meanwhile
// clients that keep sending are never kicked.
BOOST_DATA_TEST_CASE(silent_clients_kicked_active_clients_kept, bdata::make(timer_modes), mode) {
    constexpr auto idle = 600ms;
    demo_server srv(mode, {"--idle-timeout", "600ms", "--ping-interval", "0s"});

    const auto tcp_silent_from = clock::now();
    tcp_client tcp_silent(srv.tcp_endpoint());

    tcp_client tcp_once(srv.tcp_endpoint());
    std::this_thread::sleep_for(100ms);  // the kick counts from the last byte, not from accept
    const auto tcp_once_from = clock::now();
    tcp_once.write("x");
    BOOST_TEST(tcp_once.read_exactly(1) == "x");

    const auto ws_silent_from = clock::now();
    ws_client ws_silent(srv.http_endpoint());

    ws_client ws_once(srv.http_endpoint());
    std::this_thread::sleep_for(100ms);
    const auto ws_once_from = clock::now();
    ws_once.echo("ping me");

    auto f_tcp_silent = std::async(std::launch::async, [&] { return tcp_silent.wait_closed(idle + slack + 1s); });
    auto f_tcp_once = std::async(std::launch::async, [&] { return tcp_once.wait_closed(idle + slack + 1s); });
    auto f_ws_silent = std::async(std::launch::async, [&] { return ws_silent.read(idle + slack + 1s); });
    auto f_ws_once = std::async(std::launch::async, [&] { return ws_once.read(idle + slack + 1s); });

    // Active clients: a message every idle/6 for three idle timeouts (wide margin for a slow
    // machine: a gap of a whole idle timeout would make a kick legitimate).
    tcp_client tcp_active(srv.tcp_endpoint());
    ws_client ws_active(srv.http_endpoint());
    const auto keep_active = [&](int i) {
        const auto text = "still here " + std::to_string(i);
        tcp_active.write(text);
        if (tcp_active.read_exactly(text.size()) != text) throw std::runtime_error("tcp echo differs");
        ws_active.echo(text);
    };
    auto active = std::async(std::launch::async, [&] {
        try {
            const auto until = clock::now() + 3 * idle;
            for (int i = 0; clock::now() < until; ++i) {
                keep_active(i);
                std::this_thread::sleep_for(idle / 6);
            }
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string();
    });

    const auto r_tcp_silent = get_within(f_tcp_silent, 10s);
    BOOST_TEST(r_tcp_silent.closed, "silent TCP client: " << r_tcp_silent.ec.message());
    BOOST_TEST(r_tcp_silent.data.empty());
    BOOST_TEST(ms(r_tcp_silent.at - tcp_silent_from) >= ms(idle), "silent TCP client kicked early");
    BOOST_TEST(ms(r_tcp_silent.at - tcp_silent_from) <= ms(idle + slack), "silent TCP client kicked late");

    const auto r_tcp_once = get_within(f_tcp_once, 10s);
    BOOST_TEST(r_tcp_once.closed, "TCP client: " << r_tcp_once.ec.message());
    BOOST_TEST(ms(r_tcp_once.at - tcp_once_from) >= ms(idle), "TCP client kicked before idle-timeout after its last byte");
    BOOST_TEST(ms(r_tcp_once.at - tcp_once_from) <= ms(idle + slack));

    for (const auto& [m, from, who] : {std::tuple{get_within(f_ws_silent, 10s), ws_silent_from, "silent WebSocket client"},
                                       std::tuple{get_within(f_ws_once, 10s), ws_once_from, "WebSocket client"}}) {
        BOOST_TEST_CONTEXT(who) {
            BOOST_TEST((m.ec == websocket::error::closed), m.ec.message());
            BOOST_TEST(m.reason.code == websocket::close_code::normal);
            BOOST_TEST(std::string(m.reason.reason.c_str()) == "idle timeout");
            BOOST_TEST(ms(m.at - from) >= ms(idle), "kicked early");
            BOOST_TEST(ms(m.at - from) <= ms(idle + slack), "kicked late");
        }
    }

    const auto active_failure = get_within(active, 10s);
    BOOST_TEST_REQUIRE(active_failure.empty(), "active clients: " << active_failure);
    BOOST_TEST(wait_for_count(srv, "closed.idle", 4) == 4);
    keep_active(-1);  // still served, and open (counted) right now
    const auto s = srv.stats();
    BOOST_TEST(integer(s, "open.tcp") == 1);
    BOOST_TEST(integer(s, "open.websocket") == 1);
}

// --timers=none, the benchmark baseline: no idle kick, no ping, no handshake deadline. Silent
// TCP and WebSocket clients and a half-sent request are still connected after several times
// the configured timeouts, and are still served.
BOOST_AUTO_TEST_CASE(timers_none_kicks_nobody) {
    demo_server srv("none", {"--idle-timeout", "300ms", "--ping-interval", "100ms", "--pong-timeout", "100ms",
                             "--handshake-timeout", "300ms"});
    tcp_client tcp_silent(srv.tcp_endpoint());
    ws_client ws_silent(srv.http_endpoint());
    tcp_client half_request(srv.http_endpoint());
    half_request.write("GET / HTTP/1.1\r\nHost: x\r\n");  // never finished
    BOOST_TEST(tcp_silent.quiet_for(1500ms), "a silent TCP client got data or EOF under --timers=none");
    BOOST_TEST(half_request.quiet_for(10ms), "a half-sent request was answered or closed under --timers=none");
    tcp_silent.write("still here");
    BOOST_TEST(tcp_silent.read_exactly(10) == "still here");
    ws_silent.echo("still here");  // a ping would have been answered by Beast, not seen here: check the counter
    const auto s = srv.stats();
    BOOST_TEST(s.at("timers").as_string() == "none");
    BOOST_TEST(integer(s, "open.tcp") == 1);
    BOOST_TEST(integer(s, "open.websocket") == 1);
    BOOST_TEST(integer(s, "open.http") >= 1);  // the half request (and /stats itself)
    for (const auto* cause : {"closed.idle", "closed.dead_peer", "closed.handshake_timeout"}) BOOST_TEST(integer(s, cause) == 0, cause);
    BOOST_TEST(integer(s, "wheel.pings_sent") == 0);
    BOOST_TEST(integer(s, "wheel.scheduled") == 0);
    BOOST_TEST(integer(s, "asio_timer_rearms") == 0);
}

BOOST_AUTO_TEST_SUITE_END()

// demo_heartbeat: a client that does not answer pings is dropped after ping-interval + pong-timeout; one
// that answers is kept until the idle timeout.
BOOST_AUTO_TEST_SUITE(heartbeat, *boost::unit_test::label("io_threads"))

// A WebSocket client that stops reading never answers the server's ping: it is dropped after
// ping-interval + pong-timeout, long before the idle timeout. A client that answers pings but
// sends nothing is alive: it is kicked for idleness (1000) at the idle timeout instead.
BOOST_DATA_TEST_CASE(unanswered_ping_drops_peer_answered_ping_keeps_it, bdata::make(timer_modes), mode) {
    constexpr auto ping_interval = 150ms, pong_timeout = 150ms;
    constexpr std::chrono::milliseconds idle = 2s;
    demo_server srv(mode, {"--ping-interval", "150ms", "--pong-timeout", "150ms", "--ping-jitter", "0s", "--idle-timeout", "2s"});
    BOOST_TEST(integer(srv.stats(), "closed.dead_peer") == 0);

    // The deaf client: after the upgrade it only collects raw bytes, so no pong ever leaves.
    const auto deaf_from = clock::now();
    ws_client deaf(srv.http_endpoint());
    const auto alive_from = clock::now();
    ws_client alive(srv.http_endpoint());  // reads, so Beast answers every ping with a pong

    auto f_deaf = std::async(std::launch::async, [&] { return read_until_closed(deaf.io(), deaf.stream().next_layer(), idle + slack); });
    auto f_alive = std::async(std::launch::async, [&] { return alive.read(idle + slack + 1s); });

    const auto d = get_within(f_deaf, 10s);
    BOOST_TEST(d.closed, "deaf client: " << d.ec.message());
    BOOST_TEST(d.data.find(empty_ping_frame) != std::string::npos, "the deaf client should have received a ping frame");
    BOOST_TEST(ms(d.at - deaf_from) >= ms(ping_interval + pong_timeout), "dropped before ping-interval + pong-timeout");
    BOOST_TEST(ms(d.at - deaf_from) <= ms(ping_interval + pong_timeout + slack), "dropped late");
    BOOST_TEST(ms(d.at - deaf_from) < ms(idle), "a dead peer must go well before the idle timeout");
    BOOST_TEST(wait_for_count(srv, "closed.dead_peer", 1) == 1);

    const auto a = get_within(f_alive, 10s);
    BOOST_TEST((a.ec == websocket::error::closed), a.ec.message());
    BOOST_TEST(a.reason.code == websocket::close_code::normal);
    BOOST_TEST(std::string(a.reason.reason.c_str()) == "idle timeout");
    BOOST_TEST(ms(a.at - alive_from) >= ms(idle), "the pong-answering client was closed before the idle timeout");
    BOOST_TEST(ms(a.at - alive_from) <= ms(idle + slack));

    // The server counts a session when it is gone, a moment after the client saw the close.
    BOOST_TEST(wait_for_count(srv, "closed.idle", 1) == 1);
    BOOST_TEST(integer(srv.stats(), "closed.dead_peer") == 1);
    if (mode == "wheel") {
        // The liveness counters of the wheel (snapshot refreshed every 250 ms).
        BOOST_TEST(wait_for_count(srv, "wheel.dead_peers", 1) == 1);
        // The answering client was pinged many times in 2 s; the deaf one once.
        BOOST_TEST(integer(srv.stats(), "wheel.pings_sent") >= 4);
    }
}

BOOST_AUTO_TEST_SUITE_END()

// demo_handshake_timeout: a byte-trickling upgrade (slowloris) and a silent connection are dropped at
// --handshake-timeout; others are served.
BOOST_AUTO_TEST_SUITE(handshake_timeout)

namespace {

// Sends `request` one byte every `period` on `c` while reading; returns how the connection
// ended and how many bytes were sent before.
std::pair<close_result, std::size_t> trickle(tcp_client& c, const std::string& request, clock::duration period, clock::duration timeout) {
    close_result r;
    bool done = false;
    std::size_t sent = 0;
    asio::steady_timer timer(c.io());
    std::function<void()> send_next = [&] {
        if (done || sent == request.size()) return;
        asio::async_write(c.socket(), asio::buffer(&request[sent], 1), [&](error_code ec, std::size_t) {
            if (ec) return;  // the server is gone: the read below reports how
            ++sent;
            timer.expires_after(period);
            timer.async_wait([&](error_code e) {
                if (!e) send_next();
            });
        });
    };
    std::array<char, 4096> buf{};
    std::function<void()> read_next = [&] {
        c.socket().async_read_some(asio::buffer(buf), [&](error_code ec, std::size_t n) {
            r.data.append(buf.data(), n);
            if (!ec) return read_next();
            r.ec = ec;
            r.at = clock::now();
            r.closed = ec == asio::error::eof || ec == asio::error::connection_reset;
            done = true;
            timer.cancel();
        });
    };
    read_next();
    send_next();
    if (!run_until(c.io(), done, timeout, [&] {
            timer.cancel();
            c.close();
        }))
        r.ec = asio::error::timed_out;
    return {r, sent};
}

}  // namespace

// A slowloris client trickles a WebSocket upgrade one byte every 50 ms: arriving bytes do not
// extend --handshake-timeout, so it is dropped at ~300 ms (the whole request would take
// seconds). A client that sends nothing is dropped the same way. A normal client is served.
BOOST_DATA_TEST_CASE(trickling_client_dropped_at_deadline, bdata::make(timer_modes), mode) {
    constexpr auto handshake = 300ms;
    demo_server srv(mode, {"--handshake-timeout", "300ms", "--idle-timeout", "10s"});
    const std::string upgrade =
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    const auto silent_from = clock::now();
    tcp_client silent(srv.http_endpoint());
    auto f_silent = std::async(std::launch::async, [&] { return silent.wait_closed(handshake + slack + 1s); });

    const auto trickle_from = clock::now();
    tcp_client slow(srv.http_endpoint());
    const auto [r, sent] = trickle(slow, upgrade, 50ms, handshake + slack + 1s);
    BOOST_TEST(r.closed, "trickling client: " << r.ec.message());
    BOOST_TEST(r.data.empty(), "the trickling client got a reply: " << r.data);
    BOOST_TEST(sent < upgrade.size());
    BOOST_TEST_MESSAGE("trickled " << sent << " bytes before the drop");  // the trickle goes on until the drop, however few
    BOOST_TEST(ms(r.at - trickle_from) >= ms(handshake), "dropped before --handshake-timeout");
    BOOST_TEST(ms(r.at - trickle_from) <= ms(handshake + slack), "dropped late: do arriving bytes extend the deadline?");

    const auto s = get_within(f_silent, 10s);
    BOOST_TEST(s.closed, "silent client: " << s.ec.message());
    BOOST_TEST(ms(s.at - silent_from) >= ms(handshake));
    BOOST_TEST(ms(s.at - silent_from) <= ms(handshake + slack));

    BOOST_TEST(wait_for_count(srv, "closed.handshake_timeout", 2) == 2);
    if (mode == "wheel") BOOST_TEST(wait_for_count(srv, "wheel.handshake_timeouts", 2) == 2);

    // Everyone else is served: a WebSocket echo and a page.
    ws_client control(srv.http_endpoint());
    control.echo("served");
    const auto page = http_get(srv.http_endpoint(), "/");
    BOOST_TEST(page.status == 200U);
    BOOST_TEST(integer(srv.stats(), "closed.handshake_timeout") == 2);
}

BOOST_AUTO_TEST_SUITE_END()
