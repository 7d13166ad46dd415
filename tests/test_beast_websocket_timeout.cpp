// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel/beast/websocket_timeout.hpp: Beast's WebSocket timeouts on the wheel, set in one
// line (idlewheel::beast::set_option(ws, websocket::stream_base::timeout{...})), against Beast's
// rules (boost/beast/websocket/impl/stream_impl.hpp): on idlewheel::manual_clock (exact time,
// no sleeping) over real loopback sockets, a Beast client (websocket::stream<tcp::socket>,
// which answers pings while it reads) on the other end:
//  - the handshake deadline (never before it, the accept ends with beast::error::timeout);
//  - keep-alive pings at idle/2 of silence, answered: never dropped; unanswered: dropped at
//    idle/2 after the ping (dead_peer);
//  - without pings: dropped after idle of silence, each byte from the peer moving it (idle);
//  - the close bound (close_timeout), a clean close (no verdict, nothing left in the wheel);
//  - Beast's own timer left off; Beast's option set after ours caught (in a child);
//  - the session destroyed in its read handler while the stream's own ping is still being
//    written (the write's completion must not read the destroyed stream);
//  - a timeout with no operation pending reported by the next operation (Beast's timed_out);
//  - the size of the state they add to the stream, and the figure the docs state for it.

#include <idlewheel/beast/websocket_timeout.hpp>

#include "support/manual_io.hpp"
#include "support/net.hpp"

#define BOOST_TEST_MODULE test_beast_websocket_timeout
#include <boost/test/unit_test.hpp>

#include "support/doc_figures.hpp"
#include "support/in_child.hpp"  // after Boost.Test

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using idlewheel::liveness_event;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::ms_since;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;

struct outcome {
    int calls = 0;
    error_code ec;
    std::int64_t at_ms = -1;
};

void settle(net::io_context& io) {
    for (int i = 0; i < 8; ++i) idlewheel::test::poll(io);
}

websocket::stream_base::timeout times(std::chrono::milliseconds handshake, std::chrono::milliseconds idle, bool pings) {
    websocket::stream_base::timeout t{};
    t.handshake_timeout = handshake;
    t.idle_timeout = idle;
    t.keep_alive_pings = pings;
    return t;
}

// A server websocket::stream over the wheel's tcp_stream, and a Beast client, connected over
// loopback; time is the manual clock's (t0: the test's start, in ms).
struct ws_fixture : idlewheel::test::wheel_fixture {
    using stream_type = idlewheel::beast::basic_tcp_stream<wheel_type>;
    using server_type = websocket::stream<stream_type>;

    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    websocket::stream<tcp::socket> client{io};
    std::optional<server_type> server;
    beast::flat_buffer server_in, client_in;
    int pings_seen = 0;  // by the client
    std::deque<outcome> outcomes;  // what handlers record outlives them (the destructor's close completes them)

    outcome& fresh() { return outcomes.emplace_back(); }

    ws_fixture() {
        client.next_layer().connect(acceptor.local_endpoint());
        server.emplace(wheel, acceptor.accept());
        client.control_callback([this](websocket::frame_type kind, beast::string_view) {
            if (kind == websocket::frame_type::ping) ++pings_seen;
        });
    }
    ~ws_fixture() {
        if (server) beast::get_lowest_layer(*server).close();
        error_code ignored;
        client.next_layer().close(ignored);
        settle(io);
    }

    stream_type& lowest() { return beast::get_lowest_layer(*server); }

    auto record(outcome& r) {
        return [&r, t0 = t0](error_code ec, auto&&...) {
            ++r.calls;
            r.ec = ec;
            r.at_ms = ms_since(t0);
        };
    }

    // The opening handshake, completed at the current time.
    void open(const websocket::stream_base::timeout& t) {
        idlewheel::beast::set_option(*server, t);
        outcome& accepted = fresh();
        outcome& handshaken = fresh();
        server->async_accept(record(accepted));
        client.async_handshake("localhost", "/", record(handshaken));
        for (int i = 0; i < 1000 && (accepted.calls == 0 || handshaken.calls == 0); ++i) idlewheel::test::poll(io);
        BOOST_REQUIRE(accepted.calls == 1 && handshaken.calls == 1);
        BOOST_REQUIRE_MESSAGE(!accepted.ec, accepted.ec.message());
        BOOST_REQUIRE_MESSAGE(!handshaken.ec, handshaken.ec.message());
    }

    void advance_to(std::int64_t t_ms) { advance_and_poll(io, std::chrono::milliseconds(t_ms - ms_since(t0))); }
    void settle_at(std::int64_t t_ms) {
        advance_to(t_ms);
        settle(io);
    }
};

bool is_timeout(const error_code& ec) { return ec == beast::error::timeout; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(manual_clock_rules, ws_fixture)

BOOST_AUTO_TEST_CASE(the_handshake_deadline_drops_a_silent_client_never_before_it) {
    idlewheel::beast::set_option(*server, times(100ms, 1000ms, true));
    outcome& accepted = fresh();
    server->async_accept(record(accepted));
    settle_at(99);
    BOOST_TEST(accepted.calls == 0);
    BOOST_TEST(lowest().socket().is_open());
    settle_at(100);
    BOOST_TEST(accepted.calls == 1);
    BOOST_CHECK_MESSAGE(is_timeout(accepted.ec), accepted.ec.message());  // what Beast's handler sees
    BOOST_TEST(accepted.at_ms == 100);
    BOOST_TEST((idlewheel::beast::timeout_verdict(*server) == liveness_event::handshake_timeout));
    BOOST_TEST(wheel.pending() == 0U);
}

// Beast ends a handshake itself (a plain HTTP request, no upgrade: it answers and fails the
// accept) with nothing failing on the stream: the stream must still leave the wheel once
// nothing is pending, so that the session may be destroyed on any thread (Beast's listener
// may drop its last reference).
BOOST_AUTO_TEST_CASE(a_handshake_beast_refuses_leaves_nothing_in_the_wheel) {
    idlewheel::beast::set_option(*server, times(100ms, 1000ms, true));
    outcome& accepted = fresh();
    server->async_accept(record(accepted));
    net::write(client.next_layer(), net::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
    for (int i = 0; i < 1000 && accepted.calls == 0; ++i) idlewheel::test::poll(io);
    BOOST_TEST(accepted.calls == 1);
    BOOST_TEST(accepted.ec.failed());
    BOOST_TEST(!is_timeout(accepted.ec));
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(beasts_own_timer_stays_off) {
    idlewheel::beast::set_option(*server, websocket::stream_base::timeout::suggested(beast::role_type::server));
    websocket::stream_base::timeout t{};
    server->get_option(t);
    BOOST_TEST((t.handshake_timeout == websocket::stream_base::none()));
    BOOST_TEST((t.idle_timeout == websocket::stream_base::none()));
    BOOST_TEST(!t.keep_alive_pings);
    BOOST_TEST(wheel.pending() == 0U);  // nothing pending: the handshake's deadline enters with its first operation
    outcome& accepted = fresh();
    server->async_accept(record(accepted));
    BOOST_TEST(wheel.pending() == 1U);  // the stream's one node
}

BOOST_AUTO_TEST_CASE(keep_alive_pings_keep_a_peer_that_answers) {
    open(times(100ms, 1000ms, true));
    outcome& server_read = fresh();
    outcome& client_read = fresh();
    server->async_read(server_in, record(server_read));
    client.async_read(client_in, record(client_read));  // a reading Beast client answers pings
    settle_at(499);
    BOOST_TEST(pings_seen == 0);  // not before idle/2 of silence
    settle_at(500);
    BOOST_TEST(pings_seen == 1);
    settle_at(5000);
    BOOST_TEST(pings_seen >= 9);  // one per idle/2 (each answered, so never dropped)
    BOOST_TEST(pings_seen <= 10);
    BOOST_TEST(server_read.calls == 0);
    BOOST_TEST(!idlewheel::beast::timeout_verdict(*server).has_value());
    BOOST_TEST(lowest().socket().is_open());
}

BOOST_AUTO_TEST_CASE(a_peer_that_answers_nothing_is_dropped_idle_over_two_after_the_ping) {
    open(times(100ms, 1000ms, true));
    outcome& server_read = fresh();
    server->async_read(server_in, record(server_read));  // the client reads nothing: no pong
    settle_at(999);
    BOOST_TEST(server_read.calls == 0);
    settle_at(1000);
    BOOST_TEST(server_read.calls == 1);
    BOOST_CHECK_MESSAGE(is_timeout(server_read.ec), server_read.ec.message());
    BOOST_TEST(server_read.at_ms == 1000);
    BOOST_TEST((idlewheel::beast::timeout_verdict(*server) == liveness_event::dead_peer));
    BOOST_TEST(!lowest().socket().is_open());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(without_pings_silence_for_idle_drops_and_each_message_moves_it) {
    open(times(100ms, 300ms, false));
    outcome& first = fresh();
    server->async_read(server_in, record(first));
    settle_at(200);
    outcome& sent = fresh();
    client.async_write(net::buffer(std::string("hello")), record(sent));
    settle(io);
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(!first.ec);
    outcome& second = fresh();
    server->async_read(server_in, record(second));
    settle_at(499);
    BOOST_TEST(second.calls == 0);  // the message at 200 moved it: not before 500
    settle_at(500 + std::chrono::duration_cast<std::chrono::milliseconds>(wheel.tick()).count());
    BOOST_TEST(second.calls == 1);  // within a tick of 500
    BOOST_CHECK_MESSAGE(is_timeout(second.ec), second.ec.message());
    BOOST_TEST(second.at_ms >= 500);
    BOOST_TEST((idlewheel::beast::timeout_verdict(*server) == liveness_event::idle));
}

BOOST_AUTO_TEST_CASE(a_close_the_peer_never_answers_is_bounded_by_the_handshake_timeout) {
    open(times(100ms, 10000ms, true));
    settle_at(50);
    outcome& closed = fresh();
    server->async_close(websocket::close_code::normal, record(closed));  // the client never reads it
    settle_at(149);
    BOOST_TEST(closed.calls == 0);
    settle_at(150);
    BOOST_TEST(closed.calls == 1);
    BOOST_CHECK_MESSAGE(is_timeout(closed.ec), closed.ec.message());
    BOOST_TEST((idlewheel::beast::timeout_verdict(*server) == liveness_event::close_timeout));
}

BOOST_AUTO_TEST_CASE(a_clean_close_leaves_no_verdict_and_nothing_in_the_wheel) {
    open(times(100ms, 1000ms, true));
    outcome& server_read = fresh();
    outcome& client_closed = fresh();
    server->async_read(server_in, record(server_read));
    client.async_close(websocket::close_code::normal, record(client_closed));
    for (int i = 0; i < 1000 && (server_read.calls == 0 || client_closed.calls == 0); ++i) idlewheel::test::poll(io);
    BOOST_TEST(server_read.calls == 1);
    BOOST_CHECK_MESSAGE(server_read.ec == websocket::error::closed, server_read.ec.message());
    BOOST_TEST(client_closed.calls == 1);
    BOOST_TEST(wheel.pending() == 0U);  // the teardown's end took the stream out of the wheel at once
    settle_at(2000);
    BOOST_TEST(!idlewheel::beast::timeout_verdict(*server).has_value());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(a_timeout_with_nothing_pending_is_reported_by_the_next_operation) {
    open(times(100ms, 300ms, false));
    outcome& first = fresh();
    server->async_read(server_in, record(first));  // the handshake's end is seen here (t = 0)
    settle_at(100);
    outcome& sent = fresh();
    client.async_write(net::buffer(std::string("hi")), record(sent));
    settle(io);
    BOOST_TEST(first.calls == 1);  // and no read after it: nothing pending from here
    settle_at(399);
    BOOST_TEST(lowest().socket().is_open());  // not before idle after the message
    settle_at(400 + std::chrono::duration_cast<std::chrono::milliseconds>(wheel.tick()).count());
    BOOST_TEST(!lowest().socket().is_open());  // dropped with nothing pending (Beast's time_out)
    BOOST_TEST((idlewheel::beast::timeout_verdict(*server) == liveness_event::idle));
    outcome& late = fresh();
    server->async_read(server_in, record(late));
    settle(io);
    BOOST_TEST(late.calls == 1);
    BOOST_CHECK_MESSAGE(is_timeout(late.ec), late.ec.message());
}

// The stream's own ping is being written (the client reads nothing and the socket's send
// buffer is full) when the client half-closes the connection: the server's read fails and its
// handler destroys the session. The ping's write must not complete into the destroyed
// stream: the read's completion waits until it has (with IDLEWHEEL_CHECK_LIFETIME, a stream
// destroyed with its ping's write pending aborts).
BOOST_AUTO_TEST_CASE(the_session_destroyed_while_its_ping_is_written_is_safe) {
    open(times(100ms, 1000ms, true));
    // Fill the server's send buffer (the client reads nothing).
    {
        auto& sock = lowest().socket();
        sock.non_blocking(true);
        std::vector<char> junk(65536, 'j');
        error_code ec;
        while (!ec) sock.write_some(net::buffer(junk), ec);
        sock.non_blocking(false);
    }
    outcome& server_read = fresh();
    bool destroyed = false;
    server->async_read(server_in, [&](error_code ec, std::size_t) {
        ++server_read.calls;
        server_read.ec = ec;
        server.reset();  // the session's last handler: its stream goes
        destroyed = true;
    });
    settle_at(500);  // the ping: its write cannot complete
    BOOST_TEST(server_read.calls == 0);
    // The client half-closes (its FIN), still reading nothing: the server's read ends (eof)
    // while the ping's write stays pending.
    client.next_layer().shutdown(tcp::socket::shutdown_send);
    for (int i = 0; i < 1000 && !destroyed; ++i) idlewheel::test::poll(io);
    BOOST_TEST(destroyed);
    BOOST_TEST(server_read.ec.failed());
    settle(io);
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(beasts_option_set_after_ours_is_caught_at_the_handshakes_end) {
    const idlewheel::test::child_outcome caught = idlewheel::test::in_child([] {
        ws_fixture f;
        idlewheel::beast::set_option(*f.server, times(100ms, 1000ms, true));
        f.server->set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
        outcome& accepted = f.fresh();
        outcome& handshaken = f.fresh();
        f.server->async_accept(f.record(accepted));
        f.client.async_handshake("localhost", "/", f.record(handshaken));
        for (int i = 0; i < 1000 && (accepted.calls == 0 || handshaken.calls == 0); ++i) idlewheel::test::poll(f.io);
        outcome& r = f.fresh();
        f.server->async_read(f.server_in, f.record(r));  // the handshake is over here
        f.settle_at(10);
    });
#if IDLEWHEEL_CHECK_USAGE
    BOOST_TEST(caught.aborted, "did not abort (exit " << caught.exit_code << "): " << caught.err);
    BOOST_TEST(caught.err.find("Beast's own timer would run beside the wheel's") != std::string::npos, caught.err);
#else
    BOOST_TEST(!caught.aborted, caught.err);
#endif
}

// The state the one-line timeouts add to a tcp_stream has the size its documented constant
// says (on a 64-bit target), and every figure the docs give for it is that size: a field
// added to the state fails here until the constant and the docs say so.
BOOST_AUTO_TEST_CASE(the_states_size_is_the_figure_the_docs_state) {
    using stream = idlewheel::beast::tcp_stream;
    constexpr std::size_t measured = idlewheel::beast::detail::websocket_timeout_access<stream>::state_size;
    BOOST_TEST_MESSAGE("sizeof(the WebSocket timeouts' state) = " << measured);
    if constexpr (sizeof(void*) == 8) BOOST_TEST(measured == stream::websocket_state_size);
    // "the tcp_stream below it (56 bytes of its state, ...)", "the `tcp_stream` under it (56 bytes, ...)"
    const std::regex figure(R"(tcp_stream`? (?:below|under) it \((\d+) bytes)");
    const auto found = idlewheel::test::doc_figures(figure);
    int in_headers = 0;
    for (const auto& f : found) {
        BOOST_TEST_MESSAGE(f.file << " states " << f.value << " bytes");
        BOOST_TEST_INFO(f.file);
        BOOST_TEST(static_cast<std::size_t>(f.value) == stream::websocket_state_size);
        if (f.file.rfind("lib/include/", 0) == 0) ++in_headers;
    }
    BOOST_TEST(in_headers >= 1);  // websocket_timeout.hpp's contract states it
}
