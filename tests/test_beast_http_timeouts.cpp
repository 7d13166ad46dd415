// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel::beast::async_read_request / async_write_response (beast/http_timeouts.hpp) against
// their contract, on idlewheel::manual_clock (exact time, no sleeping) over real loopback
// sockets: each phase's deadline (keep-alive, header, body, send) passes exactly at its tick,
// never before; trickled header bytes do not extend the header deadline; a pipelined request
// skips the keep-alive phase; a slow but steady reader is served and a stalled one is cut by
// the send deadline, counted from the last progress; zero is "no deadline"; the codes compare
// equal to beast::condition::timeout; the stream's expiry is left at never. And stream_liveness
// over Beast streams (idlewheel's tcp_stream, Beast's tcp_stream, websocket::stream over them):
// its verdicts close the socket under them, close() shuts its sending side down.

#include <idlewheel/beast/http_timeouts.hpp>
#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/stream_liveness.hpp>

#include "support/manual_io.hpp"
#include "support/net.hpp"

#define BOOST_TEST_MODULE test_beast_http_timeouts
#include <boost/test/unit_test.hpp>

#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // Asio is compiled separately (idlewheel_asio): its SSL part here, once
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::ms_since;
using idlewheel::beast::http_error;
using idlewheel::beast::http_timeouts;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;

struct outcome {
    int calls = 0;
    error_code ec;
    std::size_t bytes = 0;
    std::int64_t at_ms = -1;
};

void settle(net::io_context& io) {
    for (int i = 0; i < 8; ++i) idlewheel::test::poll(io);
}

// A server-side stream on the manual wheel, connected over loopback to `peer` (the client).
struct http_fixture : idlewheel::test::wheel_fixture {
    using stream_type = idlewheel::beast::basic_tcp_stream<wheel_type>;

    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    tcp::socket peer{io};
    std::optional<stream_type> stream;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;

    http_fixture() {
        peer.connect(acceptor.local_endpoint());
        stream.emplace(wheel, acceptor.accept());
    }
    ~http_fixture() {
        stream->close();
        settle(io);
    }
    stream_type& s() { return *stream; }

    auto record(outcome& r) {
        return [&r, t0 = t0](error_code ec, std::size_t n) {
            ++r.calls;
            r.ec = ec;
            r.bytes = n;
            r.at_ms = ms_since(t0);
        };
    }
    void read_request(outcome& r, const http_timeouts& t) {
        idlewheel::beast::async_read_request(s(), buffer, req, t, record(r));
    }
    void send(const std::string& bytes) { net::write(peer, net::buffer(bytes)); }

    void advance_to(std::int64_t t_ms) { advance_and_poll(io, std::chrono::milliseconds(t_ms - ms_since(t0))); }

    // Pending (and the socket open) 1 ms before `due_ms`; completed exactly at it with `code`,
    // which is also a beast::condition::timeout, and the socket closed.
    void expect_cut_at(const outcome& r, std::int64_t due_ms, http_error code) {
        advance_to(due_ms - 1);
        BOOST_TEST(r.calls == 0);
        BOOST_TEST(s().socket().is_open());
        advance_to(due_ms);
        settle(io);
        BOOST_TEST(r.calls == 1);
        BOOST_CHECK_MESSAGE(r.ec == code, r.ec.message());
        BOOST_TEST((r.ec == beast::condition::timeout));
        BOOST_TEST(r.at_ms == due_ms);
        BOOST_TEST(!s().socket().is_open());
    }
};

const std::string get = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string post_head = "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n";

}  // namespace

BOOST_FIXTURE_TEST_SUITE(manual_clock_contract, http_fixture)

BOOST_AUTO_TEST_CASE(a_connection_that_sends_nothing_is_cut_at_the_keep_alive_deadline) {
    outcome r;
    read_request(r, {.keep_alive = 100ms, .header = 50ms});
    expect_cut_at(r, 100, http_error::keep_alive_timeout);
    BOOST_TEST(r.ec.message() == "keep-alive timeout: no request began in time");
    BOOST_TEST(r.ec.category().name() == std::string("idlewheel.http"));
}

BOOST_AUTO_TEST_CASE(a_peer_that_closes_between_requests_is_end_of_stream) {
    outcome r;
    read_request(r, {.keep_alive = 100ms});
    advance_to(20);
    peer.shutdown(tcp::socket::shutdown_send);
    advance_to(30);
    settle(io);
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(r.ec == http::error::end_of_stream, r.ec.message());
}

BOOST_AUTO_TEST_CASE(trickled_header_bytes_do_not_extend_the_header_deadline) {
    outcome r;
    read_request(r, {.keep_alive = 100ms, .header = 200ms});
    // The first byte at 50 ms: the header deadline runs from then (250 ms), not from the last
    // byte; a byte every 10 ms until then, never the end of the header.
    std::size_t sent = 0;
    const std::string slow = "GET /slow HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    for (std::int64_t t = 50; t < 250; t += 10) {
        advance_to(t);
        if (sent < slow.size()) send(slow.substr(sent++, 1));
    }
    BOOST_TEST(sent > 10U);
    expect_cut_at(r, 250, http_error::header_timeout);
}

BOOST_AUTO_TEST_CASE(a_stalled_body_is_cut_at_the_body_deadline_from_the_end_of_the_header) {
    outcome r;
    read_request(r, {.keep_alive = 100ms, .header = 50ms, .body = 300ms});
    advance_to(20);
    send(post_head + "12345");  // half the body, then nothing
    advance_to(40);
    BOOST_TEST(r.calls == 0);
    expect_cut_at(r, 320, http_error::body_timeout);  // not the header's 70 ms, not keep-alive's
}

BOOST_AUTO_TEST_CASE(a_request_in_time_is_read_and_leaves_the_stream_without_a_deadline) {
    outcome r;
    read_request(r, {.keep_alive = 100ms, .header = 50ms, .body = 50ms});
    advance_to(90);
    send(post_head + "1234567890");
    advance_to(91);
    settle(io);
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(!r.ec, r.ec.message());
    BOOST_TEST(r.bytes == post_head.size() + 10);
    BOOST_TEST(req.method() == http::verb::post);
    BOOST_TEST(req.target() == "/up");
    BOOST_TEST(req.body() == "1234567890");
    BOOST_TEST((s().read_expiry() == stream_type::time_point::max()));
    BOOST_TEST((s().write_expiry() == stream_type::time_point::max()));
    advance_to(1000);  // nothing left armed cuts the connection later
    BOOST_TEST(s().socket().is_open());
}

BOOST_AUTO_TEST_CASE(a_pipelined_request_skips_the_keep_alive_phase) {
    outcome first, second, third;
    send(get + get + "GET /b HT");  // two whole requests and the start of a third, at once
    read_request(first, {.keep_alive = 100ms, .header = 50ms});
    settle(io);
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(!first.ec);
    read_request(second, {.keep_alive = 100ms, .header = 50ms});
    settle(io);
    BOOST_TEST(second.calls == 1);
    BOOST_TEST(!second.ec);
    BOOST_TEST(req.target() == "/a");
    // The third began already: its header deadline runs from now (50 ms), not keep-alive's.
    advance_to(10);
    read_request(third, {.keep_alive = 100ms, .header = 50ms});
    expect_cut_at(third, 60, http_error::header_timeout);
}

BOOST_AUTO_TEST_CASE(zero_and_negative_durations_are_no_deadline) {
    outcome r;
    read_request(r, {.keep_alive = 0ms, .header = -5ms, .body = 0ms});
    advance_to(5000);
    BOOST_TEST(r.calls == 0);
    BOOST_TEST(wheel.pending() == 0U);  // nothing armed
    send(post_head + "1234567890");
    advance_to(5001);
    settle(io);
    BOOST_TEST(r.calls == 1);
    BOOST_TEST(!r.ec);
}

BOOST_AUTO_TEST_CASE(the_parser_overload_honours_the_parsers_limits) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(4);
    outcome r;
    idlewheel::beast::async_read_request(s(), buffer, parser, {.keep_alive = 100ms}, record(r));
    send(post_head + "1234567890");
    advance_to(1);
    settle(io);
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(r.ec == http::error::body_limit, r.ec.message());
}

// The send deadline counts progress: each piece written restarts it. The reader takes what
// it can every 40 ms (slow but steady; the kernel moves the data on in real time, so each turn
// waits, in real time, until the server wrote its next piece): the 8 MiB response takes far
// longer than `send` and is served. Then a reader that stops: cut exactly `send` after the
// last piece was written (the expiry each piece set), never before.
BOOST_AUTO_TEST_CASE(the_send_deadline_counts_write_progress) {
    const http_timeouts t{.send = 100ms};
    http::response<http::string_body> res{http::status::ok, 11};
    res.body() = std::string(8 << 20, 'r');
    res.prepare_payload();
    s().socket().set_option(net::socket_base::send_buffer_size(16 << 10));  // the kernel takes little at once
    peer.non_blocking(true);
    std::vector<char> chunk(64 << 10);
    auto read_some = [&] {
        error_code ignored;
        return peer.read_some(net::buffer(chunk), ignored);
    };
    auto reader_turn = [&](const outcome& w) {  // reads until the server made progress (or ended)
        const auto before = s().write_expiry();
        const auto give_up = std::chrono::steady_clock::now() + 2s;
        while (std::chrono::steady_clock::now() < give_up && w.calls == 0 && s().write_expiry() == before) {
            read_some();
            idlewheel::test::poll(io);
            std::this_thread::sleep_for(200us);
        }
    };
    {
        outcome w;
        idlewheel::beast::async_write_response(s(), res, t, record(w));
        std::set<stream_type::time_point> restarts;
        for (std::int64_t now = 0; w.calls == 0 && now < 60000; now += 1) {
            advance_to(now);
            if (now % 40 == 0) reader_turn(w);
            restarts.insert(s().write_expiry());
        }
        BOOST_TEST(w.calls == 1);
        BOOST_CHECK_MESSAGE(!w.ec, w.ec.message());
        BOOST_TEST(w.bytes > res.body().size());
        BOOST_TEST(w.at_ms > 3 * 100);     // longer than the send deadline: progress counted
        BOOST_TEST(restarts.size() > 3U);  // ... restarted by each piece
        BOOST_TEST((s().write_expiry() == stream_type::time_point::max()));
        const auto quiet = std::chrono::steady_clock::now() + 200ms;  // the rest of the response
        while (std::chrono::steady_clock::now() < quiet) read_some();
    }
    outcome w;
    const std::int64_t start = ms_since(t0);
    idlewheel::beast::async_write_response(s(), res, t, record(w));
    for (std::int64_t now = start; now < start + 200; ++now) {  // a little, then never again
        advance_to(now);
        if (now % 40 == 0) reader_turn(w);
    }
    BOOST_TEST_REQUIRE(w.calls == 0);
    auto last_expiry = s().write_expiry();
    for (std::int64_t now = start + 200; w.calls == 0 && now < start + 5000; ++now) {
        last_expiry = s().write_expiry();
        advance_to(now);
    }
    BOOST_TEST_REQUIRE(w.calls == 1);
    BOOST_CHECK_MESSAGE(w.ec == http_error::send_timeout, w.ec.message());
    BOOST_TEST((w.ec == beast::condition::timeout));
    const auto due = std::chrono::duration_cast<std::chrono::milliseconds>(last_expiry - t0).count();
    BOOST_TEST(due > start + 100);                               // it was restarted by progress
    BOOST_TEST(w.at_ms >= due);                                  // never before send after the last piece
    BOOST_TEST(w.at_ms <= idlewheel::test::ceil_to_tick(due));   // at its tick
    BOOST_TEST(!s().socket().is_open());
}

// Through a TLS layer: the deadline is set on the lowest layer (compiles: Stream may be any
// stream over idlewheel::beast::tcp_stream).
BOOST_AUTO_TEST_CASE(the_operations_take_a_tls_stream_over_the_drop_in) {
    using tls_stream = beast::ssl_stream<stream_type>;
    auto instantiate = [](tls_stream& tls, beast::flat_buffer& b, http::request<http::string_body>& rq,
                          http::response<http::string_body>& rs) {
        idlewheel::beast::async_read_request(tls, b, rq, {}, [](error_code, std::size_t) {});
        idlewheel::beast::async_write_response(tls, rs, {}, [](error_code, std::size_t) {});
    };
    BOOST_TEST(sizeof(instantiate) > 0U);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- stream_liveness over Beast streams ---------------------------------------------------

namespace {

using wheel_type = idlewheel::test::wheel_fixture::wheel_type;

template <class Stream>
struct beast_session {
    using config_type = idlewheel::stream_liveness_config<beast_session, Stream, wheel_type>;
    template <class... Args>
    beast_session(const config_type& c, Args&&... args) : stream(std::forward<Args>(args)...), live(c, *this) {}
    void on_liveness(idlewheel::liveness_event e) { events.push_back(e); }
    Stream stream;
    idlewheel::stream_liveness<beast_session, Stream, wheel_type> live;
    std::vector<idlewheel::liveness_event> events;
};

struct pair_fixture : idlewheel::test::wheel_fixture {
    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    tcp::socket peer{io};
    tcp::socket accept() {
        peer.connect(acceptor.local_endpoint());
        return acceptor.accept();
    }
    // The client's read ends (the server closed or shut down its side).
    bool peer_sees_end() {
        std::array<char, 16> sink{};
        bool ended = false;
        peer.async_read_some(net::buffer(sink), [&](error_code ec, std::size_t) { ended = static_cast<bool>(ec); });
        for (int i = 0; i < 100000 && !ended; ++i) idlewheel::test::poll(io);
        return ended;
    }
};

template <class Session, class Socket>
void idle_verdict_closes_the_socket(pair_fixture& f, Session& s, Socket& socket) {
    s.live.start();
    advance_and_poll(f.io, 199ms);
    BOOST_TEST(socket.is_open());
    advance_and_poll(f.io, 20ms);
    BOOST_TEST_REQUIRE(s.events.size() == 1U);
    BOOST_TEST((s.events[0] == idlewheel::liveness_event::idle));
    BOOST_TEST(!socket.is_open());
    BOOST_TEST(f.peer_sees_end());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(stream_liveness_over_beast_streams, pair_fixture)

BOOST_AUTO_TEST_CASE(over_the_drop_in_stream) {
    using S = beast_session<idlewheel::beast::basic_tcp_stream<wheel_type>>;
    S::config_type config(wheel, &S::stream, {.idle_timeout = 200ms}, idlewheel::bind_member<&S::on_liveness>());
    S s(config, wheel, accept());
    idle_verdict_closes_the_socket(*this, s, s.stream.socket());
}

BOOST_AUTO_TEST_CASE(over_beasts_tcp_stream) {
    using S = beast_session<beast::tcp_stream>;
    S::config_type config(wheel, &S::stream, {.idle_timeout = 200ms}, idlewheel::bind_member<&S::on_liveness>());
    S s(config, accept());
    idle_verdict_closes_the_socket(*this, s, s.stream.socket());
}

BOOST_AUTO_TEST_CASE(over_a_websocket_stream_over_the_drop_in) {
    using S = beast_session<beast::websocket::stream<idlewheel::beast::basic_tcp_stream<wheel_type>>>;
    S::config_type config(wheel, &S::stream, {.idle_timeout = 200ms}, idlewheel::bind_member<&S::on_liveness>());
    S s(config, wheel, accept());
    idle_verdict_closes_the_socket(*this, s, s.stream.next_layer().socket());
}

BOOST_AUTO_TEST_CASE(over_tls_close_shuts_the_tcp_sending_side_down) {
    using S = beast_session<beast::ssl_stream<beast::tcp_stream>>;
    net::ssl::context ctx(net::ssl::context::tls_server);
    S::config_type config(wheel, &S::stream, {.idle_timeout = 10s, .close_timeout = 100ms},
                          idlewheel::bind_member<&S::on_liveness>());
    S s(config, accept(), ctx);
    s.live.start();
    BOOST_TEST(s.live.close());
    BOOST_TEST(peer_sees_end());                              // the sending side is shut down
    BOOST_TEST(beast::get_lowest_layer(s.stream).socket().is_open());  // ... the socket is not closed
    advance_and_poll(io, 120ms);
    BOOST_TEST_REQUIRE(s.events.size() == 1U);
    BOOST_TEST((s.events[0] == idlewheel::liveness_event::close_timeout));
    BOOST_TEST(!beast::get_lowest_layer(s.stream).socket().is_open());
}

BOOST_AUTO_TEST_SUITE_END()
