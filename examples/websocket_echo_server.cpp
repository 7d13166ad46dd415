// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// A Beast WebSocket echo server in C++20 coroutines, with every timeout on one idlewheel per
// io_context thread: per session ONE websocket_liveness (handshake deadline from accept, idle
// close 1000 "idle timeout", ping when quiet, drop a dead peer, a deadline on the close
// handshake), and idlewheel::cancel_after for a per-operation timeout (here the echo's write:
// a client that stops reading cannot hold it forever). Beast's own timeouts stay off.
//
//     websocket_echo_server [port]      serve on 127.0.0.1:port (default 8080) until killed
//     websocket_echo_server --smoke     serve on a free port, echo one message to a client, exit
//
// The idlewheel part is marked `// idlewheel`, plus the one cancel_after call.

#include <idlewheel/beast/websocket_liveness.hpp>  // idlewheel
#include <idlewheel/idlewheel.hpp>                 // idlewheel

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
constexpr auto as_result = net::as_tuple(net::use_awaitable);

struct session;
using liveness_config = idlewheel::beast::websocket_liveness_config<session>;  // idlewheel

struct session : std::enable_shared_from_this<session> {
    session(tcp::socket s, const liveness_config& c) : ws(std::move(s)), live(c, *this) {}  // idlewheel
    websocket::stream<tcp::socket> ws;
    idlewheel::beast::websocket_liveness<session> live;  // idlewheel: 64 bytes, one wheel entry
};

net::awaitable<void> run_session(std::shared_ptr<session> s, idlewheel::wheel_timer& wheel) {
    s->live.start();  // idlewheel: the handshake deadline runs from the accept
    auto [ec] = co_await s->ws.async_accept(as_result);
    if (!s->live.accepted(ec)) co_return;  // idlewheel: failed, or too late
    beast::flat_buffer buffer;
    for (;;) {
        auto [read_ec, n] = co_await s->ws.async_read(buffer, as_result);
        if (!s->live.on_read(read_ec)) co_return;  // idlewheel: a store; false once closed or closing
        s->ws.text(s->ws.got_text());
        auto [wec, n_out] = co_await s->ws.async_write(buffer.data(), idlewheel::cancel_after(wheel, 10s, as_result));
        if (wec) co_return;  // failed, or cancelled after 10 s: the client does not read
        buffer.consume(n_out);
    }
}

net::awaitable<void> listen(tcp::acceptor& acceptor, idlewheel::wheel_timer& wheel, const liveness_config& config) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(as_result);
        if (ec) co_return;  // closed
        auto s = std::make_shared<session>(std::move(socket), config);
        net::co_spawn(acceptor.get_executor(), run_session(std::move(s), wheel), net::detached);
    }
}

// --smoke: one client over loopback sends a message, checks the echo, closes; then the
// server stops accepting and the io_context runs out of work.
net::awaitable<void> smoke_client(tcp::acceptor& acceptor, bool& ok) {
    websocket::stream<tcp::socket> ws(co_await net::this_coro::executor);
    co_await ws.next_layer().async_connect(acceptor.local_endpoint(), net::use_awaitable);
    co_await ws.async_handshake("127.0.0.1", "/", net::use_awaitable);
    const std::string_view text = "hello, idlewheel";
    co_await ws.async_write(net::buffer(text), net::use_awaitable);
    beast::flat_buffer buffer;
    co_await ws.async_read(buffer, net::use_awaitable);
    ok = beast::buffers_to_string(buffer.data()) == text;
    co_await ws.async_close(websocket::close_code::normal, net::use_awaitable);
    acceptor.close();
}

int main(int argc, char** argv) {
    const bool smoke = argc > 1 && std::string_view(argv[1]) == "--smoke";
    const auto port = static_cast<unsigned short>(smoke || argc < 2 ? (smoke ? 0 : 8080) : std::atoi(argv[1]));
    try {
        net::io_context io{1};
        idlewheel::wheel_timer wheel(io);       // idlewheel: one per io_context thread
        idlewheel::liveness_stats stats;        // idlewheel: outcomes by cause
        const liveness_config config(wheel, &session::ws,  // idlewheel: shared by every session
                                     {.handshake_timeout = 5s, .idle_timeout = 60s, .ping_interval = 15s,
                                      .pong_timeout = 10s, .jitter = 2s, .close_timeout = 5s}, &stats);
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), port});
        net::co_spawn(io, listen(acceptor, wheel, config), net::detached);
        bool ok = !smoke;
        const auto rethrow = [](std::exception_ptr e) {
            if (e) std::rethrow_exception(e);
        };
        if (smoke) net::co_spawn(io, smoke_client(acceptor, ok), rethrow);
        std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
        io.run();
        std::printf("echo %s; idle closes %llu, dead peers %llu, handshake timeouts %llu\n", ok ? "ok" : "FAILED",
                    static_cast<unsigned long long>(stats.reader_idle),
                    static_cast<unsigned long long>(stats.dead_peers),
                    static_cast<unsigned long long>(stats.handshake_timeouts));
        return ok ? EXIT_SUCCESS : EXIT_FAILURE;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "websocket_echo_server: %s\n", e.what());
        return EXIT_FAILURE;
    }
}
