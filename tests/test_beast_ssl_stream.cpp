// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel::beast::ssl_stream (beast/ssl_stream.hpp), a source file of the executable
// test_beast_tcp_stream (the first is test_beast_tcp_stream.cpp; they compile in parallel): the
// compositions over TLS, on the steady clock: ssl_stream (a throwaway self-signed certificate
// made here with OpenSSL's C API), WebSocket over TLS, the hand-over of an ssl_stream into a
// websocket::stream, and a TLS handshake deadline. The helpers are those of
// test_beast_tcp_stream_compositions.cpp (support/tcp_stream_scene.hpp). Real clocks: lower
// bounds are strict (never early), upper bounds generous. As there, each server side is
// written inline, not taken from support/ws_echo_server.hpp, on purpose: the TLS stream under
// test (its handshake, its move into a websocket::stream) is the server's own stream.

#include <idlewheel/beast/ssl_stream.hpp>

#include <idlewheel/beast/tcp_stream.hpp>
// Second: its names must still resolve after this header's idlewheel::beast::detail (they did not).
#include <idlewheel/beast/websocket_liveness.hpp>

#include "support/net.hpp"

#include <boost/test/unit_test.hpp>

#include "support/tcp_stream_scene.hpp"  // after Boost.Test

#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // Asio is compiled separately (idlewheel_asio): its SSL part here, once
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

using namespace idlewheel::test::tcp_stream_scene;  // support/tcp_stream_scene.hpp
namespace websocket = beast::websocket;
namespace http = beast::http;

// A throwaway self-signed certificate and key, made in memory for one test run.
struct tls_identity {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, &EVP_PKEY_free};
    std::unique_ptr<X509, decltype(&X509_free)> cert{nullptr, &X509_free};

    tls_identity() {
        key.reset(EVP_EC_gen("P-256"));
        BOOST_REQUIRE(key);
        cert.reset(X509_new());
        BOOST_REQUIRE(cert);
        X509* x = cert.get();
        BOOST_REQUIRE(X509_set_version(x, 2) == 1);
        BOOST_REQUIRE(ASN1_INTEGER_set(X509_get_serialNumber(x), 1) == 1);
        BOOST_REQUIRE(X509_gmtime_adj(X509_getm_notBefore(x), -60) != nullptr);
        BOOST_REQUIRE(X509_gmtime_adj(X509_getm_notAfter(x), 3600) != nullptr);
        BOOST_REQUIRE(X509_set_pubkey(x, key.get()) == 1);
        X509_NAME* name = X509_get_subject_name(x);
        const unsigned char cn[] = "localhost";
        BOOST_REQUIRE(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0) == 1);
        BOOST_REQUIRE(X509_set_issuer_name(x, name) == 1);
        BOOST_REQUIRE(X509_sign(x, key.get(), EVP_sha256()) > 0);
    }

    void use_in(net::ssl::context& ctx) const {
        BOOST_REQUIRE(SSL_CTX_use_certificate(ctx.native_handle(), cert.get()) == 1);
        BOOST_REQUIRE(SSL_CTX_use_PrivateKey(ctx.native_handle(), key.get()) == 1);
    }
};

struct tls_fixture : steady_fixture {
    tls_identity identity;
    net::ssl::context server_ctx{net::ssl::context::tls_server};
    net::ssl::context client_ctx{net::ssl::context::tls_client};
    tls_fixture() {
        identity.use_in(server_ctx);
        client_ctx.set_verify_mode(net::ssl::verify_none);  // self-signed: the test checks the plumbing, not trust
    }
};

// The client's connect to `server`, TLS handshake and WebSocket handshake, on a
// websocket::stream over TLS over the tcp_stream (its deadline `patience`).
template <class WebSocket>
net::awaitable<void> tls_websocket_handshake(WebSocket& ws, tcp::endpoint server) {
    beast::get_lowest_layer(ws).expires_after(patience);
    auto [cec] = co_await beast::get_lowest_layer(ws).async_connect(server, as_result);
    BOOST_REQUIRE_MESSAGE(!cec, cec.message());
    auto [tec] = co_await ws.next_layer().async_handshake(net::ssl::stream_base::client, as_result);
    BOOST_REQUIRE_MESSAGE(!tec, tec.message());
    auto [hec] = co_await ws.async_handshake("localhost", "/", as_result);
    BOOST_REQUIRE_MESSAGE(!hec, hec.message());
}

BOOST_FIXTURE_TEST_CASE(ssl_stream_handshake_and_echo, tls_fixture) {
    std::string echoed;
    bool server_done = false, client_done = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            beast::ssl_stream<idlewheel::beast::tcp_stream> tls(co_await accept_one(acceptor), server_ctx);
            beast::get_lowest_layer(tls).expires_after(patience);
            auto [hec] = co_await tls.async_handshake(net::ssl::stream_base::server, as_result);
            BOOST_REQUIRE_MESSAGE(!hec, hec.message());
            char data[5];
            auto [rec, n] = co_await net::async_read(tls, net::buffer(data), as_result);
            BOOST_REQUIRE_MESSAGE(!rec, rec.message());
            auto [wec, m] = co_await net::async_write(tls, net::buffer(data, n), as_result);
            BOOST_REQUIRE(!wec);
            server_done = true;
        },
        rethrow);
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            beast::ssl_stream<idlewheel::beast::tcp_stream> tls(io, client_ctx);
            beast::get_lowest_layer(tls).expires_after(patience);
            auto [cec] = co_await beast::get_lowest_layer(tls).async_connect(acceptor.local_endpoint(), as_result);
            BOOST_REQUIRE(!cec);
            auto [hec] = co_await tls.async_handshake(net::ssl::stream_base::client, as_result);
            BOOST_REQUIRE_MESSAGE(!hec, hec.message());
            auto [wec, n] = co_await net::async_write(tls, net::buffer("hello", 5), as_result);
            BOOST_REQUIRE(!wec);
            char data[5];
            auto [rec, m] = co_await net::async_read(tls, net::buffer(data), as_result);
            BOOST_REQUIRE_MESSAGE(!rec, rec.message());
            echoed.assign(data, m);
            client_done = true;
        },
        rethrow);
    BOOST_TEST(run_until(io, [&] { return server_done && client_done; }));
    BOOST_TEST(echoed == "hello");
}

BOOST_FIXTURE_TEST_CASE(websocket_over_ssl_stream_handshake_and_echo, tls_fixture) {
    using wss = websocket::stream<beast::ssl_stream<idlewheel::beast::tcp_stream>>;
    echo_result client;
    BOOST_TEST(run_both(
        io,
        [&]() -> net::awaitable<void> {
            wss ws(co_await accept_one(acceptor), server_ctx);
            beast::get_lowest_layer(ws).expires_after(patience);
            auto [tec] = co_await ws.next_layer().async_handshake(net::ssl::stream_base::server, as_result);
            BOOST_REQUIRE_MESSAGE(!tec, tec.message());
            co_await accept_and_echo_one_message(ws);
        },
        [&]() -> net::awaitable<void> {
            wss ws(io, client_ctx);
            co_await tls_websocket_handshake(ws, acceptor.local_endpoint());
            client = co_await send_and_close(ws, "over tls");
        }));
    BOOST_TEST(client.echoed == "over tls");
}

// idlewheel::beast::ssl_stream<tcp_stream> moves (a pointer move: the tcp_stream stays where it
// is); since the tcp_stream moves too (with no operation pending), asio's ssl::stream<tcp_stream>
// and Beast's ssl_stream move as well: the hand-over of Beast's advanced server, a TLS handshake
// on one object, then a websocket::stream built from it by moving.
static_assert(std::is_nothrow_move_constructible_v<idlewheel::beast::ssl_stream<idlewheel::beast::tcp_stream>>);
static_assert(std::is_nothrow_move_constructible_v<idlewheel::beast::tcp_stream>);
static_assert(std::is_move_constructible_v<net::ssl::stream<idlewheel::beast::tcp_stream>>);
static_assert(!std::is_move_assignable_v<idlewheel::beast::tcp_stream>);  // as Beast's

BOOST_FIXTURE_TEST_CASE(idlewheel_ssl_stream_moves_into_a_websocket_stream_after_its_handshake, tls_fixture) {
    using tls_stream = idlewheel::beast::ssl_stream<idlewheel::beast::tcp_stream>;
    echo_result client;
    bool same_tcp_stream = false;
    BOOST_TEST(run_both(
        io,
        [&]() -> net::awaitable<void> {
            tls_stream tls(co_await accept_one(acceptor), server_ctx);
            beast::get_lowest_layer(tls).expires_after(patience);
            auto [tec] = co_await tls.async_handshake(net::ssl::stream_base::server, as_result);
            BOOST_REQUIRE_MESSAGE(!tec, tec.message());
            const idlewheel::beast::tcp_stream* before = &beast::get_lowest_layer(tls);
            websocket::stream<tls_stream> ws(std::move(tls));
            same_tcp_stream = before == &beast::get_lowest_layer(ws);
            co_await accept_and_echo_one_message(ws);
        },
        [&]() -> net::awaitable<void> {
            websocket::stream<tls_stream> ws(io, client_ctx);
            co_await tls_websocket_handshake(ws, acceptor.local_endpoint());
            client = co_await send_and_close(ws, "moved");
            BOOST_CHECK_MESSAGE(!client.close, client.close.message());  // the TLS teardown found by lookup
        }));
    BOOST_TEST(same_tcp_stream);
    BOOST_TEST(client.echoed == "moved");
}

BOOST_FIXTURE_TEST_CASE(tls_handshake_times_out_when_the_peer_never_says_hello, tls_fixture) {
    constexpr auto limit = 200ms;
    error_code server_ec;
    steady_clock::duration took{};
    bool server_done = false;
    tcp::socket silent(io);
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            beast::ssl_stream<idlewheel::beast::tcp_stream> tls(co_await accept_one(acceptor), server_ctx);
            const auto start = steady_clock::now();
            beast::get_lowest_layer(tls).expires_after(limit);
            std::tie(server_ec) = co_await tls.async_handshake(net::ssl::stream_base::server, as_result);
            took = steady_clock::now() - start;
            server_done = true;
        },
        rethrow);
    silent.connect(acceptor.local_endpoint());  // and never sends a ClientHello
    BOOST_TEST(run_until(io, [&] { return server_done; }));
    BOOST_CHECK_MESSAGE(is_timeout(server_ec), server_ec.message());
    BOOST_TEST(ms(took) >= ms(limit));
    BOOST_TEST(ms(took) < ms(limit + 2s));
}

}  // namespace
