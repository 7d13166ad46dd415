// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel::beast::tcp_stream as C++17: every composition a Beast server uses, instantiated
// (compiled, not run: test_beast_tcp_stream runs them). The header alone is in cpp17_headers.

#include <idlewheel/beast/http_timeouts.hpp>
#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/stream_liveness.hpp>
#include <idlewheel/manual_clock.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <chrono>
#include <cstddef>
#include <ratio>
#include <type_traits>
#include <vector>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using stream = idlewheel::beast::tcp_stream;

static_assert(beast::is_async_stream<stream>::value, "an asynchronous stream, as Beast's");
static_assert(beast::is_sync_stream<stream>::value, "a synchronous stream too (read_some, write_some), as Beast's");
static_assert(std::is_same_v<beast::lowest_layer_type<stream>, stream>, "get_lowest_layer(s) is the stream itself");
static_assert(std::is_same_v<beast::lowest_layer_type<websocket::stream<beast::ssl_stream<stream>>>, stream>,
              "and of a websocket over TLS over it");
static_assert(std::is_nothrow_move_constructible_v<stream>, "movable (with no operation pending), as Beast's");
static_assert(!std::is_move_assignable_v<stream>, "not move-assignable, as Beast's");
static_assert(std::is_same_v<stream::rebind_executor<net::any_io_executor>::other, stream>, "rebind_executor, as Beast's");

[[maybe_unused]] void compositions(net::io_context& ioc, idlewheel::wheel_timer& wheel, net::ssl::context& ctx) {
    using namespace std::chrono_literals;
    idlewheel::beast::use_wheel(ioc, wheel);

    websocket::stream<stream> ws(tcp::socket{ioc});
    beast::get_lowest_layer(ws).expires_after(30s);
    ws.async_accept([](error_code) {});
    ws.async_close(websocket::close_code::normal, [](error_code) {});

    beast::ssl_stream<stream> tls(ioc.get_executor(), ctx);
    beast::get_lowest_layer(tls).expires_after(std::chrono::duration<double>(1.5));
    tls.async_handshake(net::ssl::stream_base::server, [](error_code) {});

    websocket::stream<beast::ssl_stream<stream>> wss(ioc, ctx);
    wss.async_handshake("localhost", "/", [](error_code) {});
    wss.async_close(websocket::close_code::normal, [](error_code) {});

    stream s(wheel);
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::async_read(s, buffer, request, [](error_code, std::size_t) {});
    http::async_write(s, request, [](error_code, std::size_t) {});
    s.async_connect(tcp::endpoint(), [](error_code) {});
    std::vector<tcp::endpoint> endpoints;
    s.async_connect(endpoints, [](error_code, tcp::endpoint) {});
    s.async_connect(endpoints.begin(), endpoints.end(), [](error_code, std::vector<tcp::endpoint>::iterator) {});
    const auto any = [](const error_code&, const tcp::endpoint&) { return true; };
    s.async_connect(endpoints, any, [](error_code, tcp::endpoint) {});
    s.async_connect(endpoints.begin(), endpoints.end(), any, [](error_code, std::vector<tcp::endpoint>::iterator) {});
    s.expires_after(std::chrono::duration<long long, std::ratio<1, 3>>(1));
    s.expires_at(idlewheel::wheel_timer::time_point::max());
    s.expires_never();
    [[maybe_unused]] const idlewheel::wheel_timer::time_point r = s.read_expiry(), w = s.write_expiry();
    beast::close_socket(s);

    idlewheel::basic_wheel_timer<idlewheel::manual_clock> manual(ioc);
    idlewheel::beast::basic_tcp_stream<idlewheel::basic_wheel_timer<idlewheel::manual_clock>> m(manual, ioc);
    m.expires_after(std::chrono::hours::max());

    net::io_context threaded{2};
    idlewheel::wheel_pool pool(threaded);
    idlewheel::beast::use_wheel_pool(threaded, pool);
    stream on_shard(pool.next().get_executor());

    // The HTTP deadlines, over the stream and over TLS over it (C++17: no designated initialisers).
    idlewheel::beast::http_timeouts timeouts;
    timeouts.keep_alive = 60s;
    timeouts.header = std::chrono::milliseconds(10000);
    timeouts.send = 2500ms;
    http::response<http::string_body> response;
    idlewheel::beast::async_read_request(s, buffer, request, timeouts, [](error_code, std::size_t) {});
    idlewheel::beast::async_write_response(s, response, timeouts, [](error_code, std::size_t) {});
    http::request_parser<http::empty_body> parser;
    idlewheel::beast::async_read_request(tls, buffer, parser, timeouts, [](error_code, std::size_t) {});
    http::response_serializer<http::string_body> serializer(response);
    idlewheel::beast::async_write_response(tls, serializer, timeouts, [](error_code, std::size_t) {});
    [[maybe_unused]] const bool is_timeout =
        error_code(idlewheel::beast::http_error::header_timeout) == beast::condition::timeout;
}

// stream_liveness over Beast streams (it closes the socket under them).
struct beast_line_session {
    websocket::stream<beast::ssl_stream<stream>> ws;
    idlewheel::stream_liveness<beast_line_session, websocket::stream<beast::ssl_stream<stream>>> live;
};
[[maybe_unused]] void liveness_over(beast_line_session& session) {
    session.live.drop();
    [[maybe_unused]] const bool closing = session.live.close();
}

}  // namespace
