// Clients that are too slow, never read, or vanish: each is closed for the right reason, in
// the right time, without costing the server memory, and the control clients are still served.
#include "raw_websocket.hpp"
#include "server_fixture.hpp"

#include <poll.h>

using namespace reliability;

BOOST_AUTO_TEST_SUITE(slowloris, *boost::unit_test::label("io_threads"))

// An upgrade request trickled one byte every 500 ms: arriving bytes must not extend the
// handshake deadline, so the connection goes at --handshake-timeout, request unfinished.
BOOST_AUTO_TEST_CASE(trickled_upgrade_is_closed_by_the_handshake_timeout) {
    server srv({"--handshake-timeout", "1500ms", "--idle-timeout", "30s"});
    const auto before = srv.stats();
    const std::string request = upgrade_request(srv.host(), srv.http_port());

    const auto start = clock::now();  // before the connect: the server's clock starts later
    auto s = raw_socket::connect(srv.host(), srv.http_port());
    std::size_t sent = 0;
    std::optional<clock::time_point> closed_at;
    io_status how = io_status::timeout;
    std::string got;
    const auto give_up = start + 10s;
    while (!closed_at && sent < request.size() && clock::now() < give_up) {
        const auto st = s.send_all(std::string_view(request).substr(sent, 1), 1s);
        if (st != io_status::ok) {
            closed_at = clock::now();
            how = st;
            break;
        }
        ++sent;
        // Wait the rest of the 500 ms for the server's FIN (it sends nothing else).
        how = s.recv_some(got, clock::now() + 500ms);
        if (how != io_status::timeout) closed_at = clock::now();
    }
    BOOST_TEST_REQUIRE(closed_at.has_value(), "not closed within 10 s (" << sent << " of " << request.size() << " bytes sent)");
    const auto elapsed = *closed_at - start;
    BOOST_TEST_MESSAGE("slowloris closed after " << ms(elapsed) << " ms, " << sent << " bytes sent, " << to_string(how));
    BOOST_TEST(sent < request.size(), "the whole request went through before the deadline");
    BOOST_TEST(got.empty(), "the server answered a request it never got whole: " << got);
    BOOST_TEST(ms(elapsed) >= 1500.0);
    BOOST_TEST(ms(elapsed) <= ms(1500ms + slack));

    BOOST_TEST(wait_until([&] { return srv.stats().integer("closed.handshake_timeout") > before.integer("closed.handshake_timeout"); }, 5s));
    const auto after = srv.stats();
    BOOST_TEST(after.integer("closed.handshake_timeout") - before.integer("closed.handshake_timeout") == 1);
    BOOST_TEST(after.integer("closed.idle") == before.integer("closed.idle"));
    RELIABILITY_EXPECT_SERVING(srv, "after slowloris");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(non_reader, *boost::unit_test::label("io_threads"))

// A WebSocket client that keeps sending 32 KB messages and never reads the echoes: once the
// unsent echo passes --max-backlog the server drops it, and its memory does not grow with what
// the client sent.
BOOST_AUTO_TEST_CASE(client_that_never_reads_is_dropped_at_the_backlog_bound) {
    constexpr std::size_t max_backlog = 256 * 1024;
    constexpr std::size_t message = 32 * 1024;
    // Enough data that an unbounded server would grow by far more than the tolerance.
    constexpr std::size_t give_up_after = 64ull * 1024 * 1024;
    constexpr double rss_tolerance = 4.0 * 1024 * 1024;
    server srv({"--max-backlog", std::to_string(max_backlog), "--ping-interval", "0s", "--idle-timeout", "30s"});

    // Warm up: the server has echoed messages of this size to a reading client before, so the
    // RSS baseline already holds what any echo of 32 KB costs.
    {
        beast_ws_client warm;
        BOOST_TEST_REQUIRE(!warm.connect(srv.host(), srv.http_port()));
        for (int i = 0; i < 16; ++i) BOOST_TEST_REQUIRE(!warm.echo(std::string(message, static_cast<char>('a' + i))));
        warm.close();
    }
    RELIABILITY_EXPECT_SERVING(srv, "before the non-reader");
    const auto before = srv.stats();

    // A small receive window so the echoes back up in the server soon.
    auto ws = raw_websocket::connect(srv.host(), srv.http_port(), 5s, 4096);
    const std::string frame = make_frame(opcode::binary, std::string(message, 'x'));
    std::size_t sent = 0;
    io_status last = io_status::ok;
    const auto give_up = clock::now() + 20s;
    while (sent < give_up_after && clock::now() < give_up) {
        last = ws.send_raw(frame, 3s);
        if (last != io_status::ok) break;
        sent += message;
    }
    BOOST_TEST_MESSAGE("non-reader sent " << sent / 1024 << " KB before " << to_string(last));
    BOOST_TEST((last == io_status::reset || last == io_status::error), "the server never dropped the client: " << to_string(last) << " after " << sent / 1024 << " KB");

    BOOST_TEST(wait_until([&] { return srv.stats().integer("closed.backlog") > before.integer("closed.backlog"); }, 5s));
    const auto after = srv.stats();
    BOOST_TEST(after.integer("closed.backlog") - before.integer("closed.backlog") == 1);
    BOOST_TEST(after.integer("open.websocket") == 0);
    const double grew = after.number("process.rss_bytes") - before.number("process.rss_bytes");
    BOOST_TEST_MESSAGE("server RSS " << before.number("process.rss_bytes") / 1048576 << " MB -> " << after.number("process.rss_bytes") / 1048576 << " MB");
    if (rss_is_meaningful)
        BOOST_TEST(grew < rss_tolerance, "server RSS grew by " << grew / 1048576 << " MB while the client pushed " << sent / 1048576 << " MB");
    else
        BOOST_TEST_MESSAGE("sanitizer build: RSS bound not checked");
    RELIABILITY_EXPECT_SERVING(srv, "after the non-reader");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(vanished_peer, *boost::unit_test::label("io_threads"))

namespace {

const std::vector<std::string> heartbeat_args{"--ping-interval", "500ms", "--pong-timeout", "500ms", "--ping-jitter", "0s",
                                              "--idle-timeout", "10s"};
constexpr auto dead_after = 1000ms;  // ping interval + pong timeout
constexpr auto idle_after = 10s;

// Waits (without reading) until the server closes `fd`; when, or nothing within `limit`.
std::optional<clock::time_point> wait_dropped(int fd, clock::duration limit) {
    const auto deadline = clock::now() + limit;
    while (clock::now() < deadline) {
        pollfd p{fd, POLLRDHUP, 0};
        if (::poll(&p, 1, 50) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return clock::now();
    }
    return std::nullopt;
}

void check_dropped_by_heartbeat(server& srv, const stats_doc& before, clock::time_point start, std::optional<clock::time_point> gone) {
    BOOST_TEST_REQUIRE(gone.has_value(), "the silent peer was not dropped");
    const auto elapsed = *gone - start;
    BOOST_TEST_MESSAGE("silent peer dropped after " << ms(elapsed) << " ms");
    BOOST_TEST(ms(elapsed) >= ms(dead_after));
    BOOST_TEST(ms(elapsed) <= ms(dead_after + slack));
    BOOST_TEST(ms(elapsed) < ms(idle_after), "dropped by the idle timeout, not the heartbeat");
    BOOST_TEST(wait_until([&] { return srv.stats().integer("closed.dead_peer") > before.integer("closed.dead_peer"); }, 5s));
    const auto after = srv.stats();
    BOOST_TEST(after.integer("closed.dead_peer") - before.integer("closed.dead_peer") == 1);
    BOOST_TEST(after.integer("closed.idle") == before.integer("closed.idle"));
    // The wheel counts the pings it asked for; asio mode's per-connection timers count none.
    if (timers_mode() == "wheel") BOOST_TEST(after.integer("wheel.pings_sent") > before.integer("wheel.pings_sent"));
}

}  // namespace

// The handshake done by hand on a raw socket, then nothing: no reads, no pongs, no FIN (the
// kernel still ACKs, as for a peer whose process hangs or whose network path died).
BOOST_AUTO_TEST_CASE(silent_raw_socket_is_dropped_by_the_heartbeat) {
    server srv(heartbeat_args);
    const auto before = srv.stats();
    const auto start = clock::now();
    auto ws = raw_websocket::connect(srv.host(), srv.http_port());
    check_dropped_by_heartbeat(srv, before, start, wait_dropped(ws.socket().fd(), idle_after + slack));
    RELIABILITY_EXPECT_SERVING(srv, "after the silent raw peer");
}

// A Beast client that echoes once and then never reads again (Beast answers pings only
// while a read is pending).
BOOST_AUTO_TEST_CASE(beast_client_that_stops_reading_is_dropped_by_the_heartbeat) {
    server srv(heartbeat_args);
    const auto before = srv.stats();
    const auto start = clock::now();
    beast_ws_client ws;
    BOOST_TEST_REQUIRE(!ws.connect(srv.host(), srv.http_port()));
    BOOST_TEST_REQUIRE(!ws.echo("one message, then silence"));
    check_dropped_by_heartbeat(srv, before, start, wait_dropped(ws.stream().next_layer().native_handle(), idle_after + slack));
    RELIABILITY_EXPECT_SERVING(srv, "after the silent Beast peer");
}

BOOST_AUTO_TEST_SUITE_END()
