// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/tcp_stream.hpp>

// tcp_stream.hpp in the compositions a Beast server uses, on the steady clock (a part of
// test_beast_tcp_stream, whose first file is test_beast_tcp_stream.cpp): websocket::stream
// over it (handshake, echo, and the close through its teardown), websocket_liveness dropping a
// silent peer through it, http::async_read with a client trickling its request, and a
// wheel_pool run by two threads. Real clocks: lower bounds are strict (never early), upper
// bounds generous.
//
// The server side of each composition case is written inline, not taken from the tests' echo
// server (support/ws_echo_server.hpp) on purpose: the stream the server reads and writes
// through (this tcp_stream, under websocket::stream) and each step of its handshake are what
// these cases test, and that server holds a plain socket.

#include <idlewheel/beast/websocket_liveness.hpp>

#include "support/net.hpp"

#include <boost/test/unit_test.hpp>

#include "support/tcp_stream_scene.hpp"  // after Boost.Test

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace idlewheel::test::tcp_stream_scene;  // support/tcp_stream_scene.hpp
namespace websocket = beast::websocket;
namespace http = beast::http;

BOOST_FIXTURE_TEST_CASE(websocket_stream_handshake_echo_and_close, steady_fixture) {
    echo_result client;
    error_code server_end;
    BOOST_TEST(run_both(
        io,
        [&]() -> net::awaitable<void> {
            websocket::stream<idlewheel::beast::tcp_stream> ws(co_await accept_one(acceptor));
            beast::get_lowest_layer(ws).expires_after(patience);
            server_end = co_await accept_and_echo_one_message(ws);
        },
        [&]() -> net::awaitable<void> {
            websocket::stream<idlewheel::beast::tcp_stream> ws(io);
            beast::get_lowest_layer(ws).expires_after(patience);
            auto [cec] = co_await beast::get_lowest_layer(ws).async_connect(acceptor.local_endpoint(), as_result);
            BOOST_REQUIRE_MESSAGE(!cec, cec.message());
            auto [hec] = co_await ws.async_handshake("localhost", "/", as_result);
            BOOST_REQUIRE_MESSAGE(!hec, hec.message());
            beast::get_lowest_layer(ws).expires_never();
            client = co_await send_and_close(ws, "hello");
        }));
    BOOST_TEST(client.echoed == "hello");
    BOOST_CHECK_MESSAGE(!client.close, client.close.message());
    BOOST_CHECK_MESSAGE(server_end == websocket::error::closed, server_end.message());
}

// websocket_liveness over websocket::stream<tcp_stream> (Beast's advanced server's plain WebSocket
// session): a client that connects and never sends its upgrade request is dropped at the handshake
// deadline, through drop() on this stream (its socket closed: the accept ends with an error).
struct liveness_session : std::enable_shared_from_this<liveness_session> {
    websocket::stream<idlewheel::beast::tcp_stream> ws;
    idlewheel::beast::websocket_liveness<liveness_session, websocket::stream<idlewheel::beast::tcp_stream>> live;
    liveness_session(tcp::socket&& s,
                     const idlewheel::beast::websocket_liveness_config<
                         liveness_session, websocket::stream<idlewheel::beast::tcp_stream>>& c)
        : ws(std::move(s)), live(c, *this, ws) {}
};

BOOST_FIXTURE_TEST_CASE(websocket_liveness_drops_a_silent_peer_of_a_websocket_stream_on_this_stream, steady_fixture) {
    constexpr auto limit = 200ms;
    const idlewheel::beast::websocket_liveness_config<liveness_session, websocket::stream<idlewheel::beast::tcp_stream>>
        config(wheel, idlewheel::session_liveness_options{.handshake_timeout = limit, .idle_timeout = 10s});
    error_code accept_ec;
    bool accepted = true, done = false;
    steady_clock::duration took{};
    std::shared_ptr<liveness_session> session;
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());  // and never sends a byte
    acceptor.async_accept([&](error_code ec, tcp::socket s) {
        BOOST_REQUIRE(!ec);
        session = std::make_shared<liveness_session>(std::move(s), config);
        const auto t0 = steady_clock::now();
        session->live.start();
        session->ws.async_accept([&, t0, keep = session](error_code hec) {
            took = steady_clock::now() - t0;
            accept_ec = hec;
            accepted = keep->live.accepted(hec);
            done = true;
        });
    });
    BOOST_TEST(run_until(io, [&] { return done; }));
    BOOST_TEST(!accepted);
    BOOST_TEST(static_cast<bool>(accept_ec));
    BOOST_TEST(session->live.has_verdict());
    BOOST_TEST((session->live.verdict() == idlewheel::liveness_event::handshake_timeout));
    BOOST_TEST(ms(took) >= ms(limit));
    BOOST_TEST(!session->ws.next_layer().socket().is_open());
}

BOOST_FIXTURE_TEST_CASE(http_read_times_out_while_a_client_trickles_its_request, steady_fixture) {
    constexpr auto limit = 300ms;
    error_code server_ec;
    steady_clock::duration took{};
    std::size_t sent = 0;
    bool server_done = false, client_done = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            idlewheel::beast::tcp_stream stream(co_await accept_one(acceptor));
            const auto start = steady_clock::now();
            stream.expires_after(limit);
            beast::flat_buffer buffer;
            http::request<http::string_body> request;
            std::tie(server_ec, std::ignore) = co_await http::async_read(stream, buffer, request, as_result);
            took = steady_clock::now() - start;
            server_done = true;
        },
        rethrow);
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            tcp::socket client(io);
            co_await client.async_connect(acceptor.local_endpoint(), as_result);
            const std::string request =
                "GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
            net::steady_timer pause(io);
            for (char c : request) {  // a byte every 40 ms: about 3 s for the whole request
                auto [wec, n] = co_await net::async_write(client, net::buffer(&c, 1), as_result);
                if (wec || server_done) break;
                sent += n;
                pause.expires_after(40ms);
                co_await pause.async_wait(as_result);
            }
            client_done = true;
        },
        rethrow);
    BOOST_TEST(run_until(io, [&] { return server_done && client_done; }));
    BOOST_CHECK_MESSAGE(is_timeout(server_ec), server_ec.message());
    BOOST_TEST(ms(took) >= ms(limit));      // never early
    BOOST_TEST(ms(took) < ms(limit + 2s));  // a generous bound for a busy machine
    BOOST_TEST(sent >= 3U);                 // bytes did arrive, and did not extend it
}

// ---------------------------------------------------------------------------------------------
// One io_context, two threads, a wheel_pool: streams on shard strands

BOOST_AUTO_TEST_CASE(pool_streams_on_shard_strands_time_out_on_two_threads) {
    constexpr int n = 8;
    net::io_context io{2};
    idlewheel::wheel_pool_options options;
    options.shards = 4;
    idlewheel::wheel_pool pool(io, options);
    idlewheel::beast::use_wheel_pool(io, pool);
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});

    std::vector<tcp::socket> peers;
    std::vector<std::unique_ptr<idlewheel::beast::tcp_stream>> streams;
    for (int i = 0; i < n; ++i) {
        peers.emplace_back(io);
        peers.back().connect(acceptor.local_endpoint());
        auto& shard = pool.next();
        tcp::socket accepted(shard.get_executor());
        acceptor.accept(accepted);
        streams.push_back(std::make_unique<idlewheel::beast::tcp_stream>(std::move(accepted)));
        BOOST_TEST(&streams.back()->wheel() == &shard.wheel());
    }

    std::vector<std::array<char, 64>> buffers(n);
    std::vector<std::int64_t> took(n, -1);  // each written by its own stream's handler
    std::vector<error_code> results(n);
    std::atomic<int> done{0};
    for (int i = 0; i < n; ++i) {
        auto& s = *streams[static_cast<std::size_t>(i)];
        net::post(s.get_executor(), [&, i, &s = s] {
            const auto start = steady_clock::now();
            const auto limit = 100ms + 10ms * i;
            s.expires_after(limit);
            s.async_read_some(net::buffer(buffers[static_cast<std::size_t>(i)]),
                              [&, i, start](error_code ec, std::size_t) {
                                  took[static_cast<std::size_t>(i)] = ms(steady_clock::now() - start);
                                  results[static_cast<std::size_t>(i)] = ec;
                                  done.fetch_add(1, std::memory_order_release);
                              });
        });
    }
    std::thread a([&] { io.run(); });
    std::thread b([&] { io.run(); });
    const auto give_up = steady_clock::now() + patience;
    while (done.load(std::memory_order_acquire) != n && steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
    io.stop();
    a.join();
    b.join();
    BOOST_TEST(done.load() == n);
    for (int i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        BOOST_CHECK_MESSAGE(is_timeout(results[k]), "stream " << i << ": " << results[k].message());
        BOOST_TEST(took[k] >= 100 + 10 * i);
        BOOST_TEST(took[k] < 100 + 10 * i + 2000);
    }
    streams.clear();  // nothing pending: every read completed
}

}  // namespace
