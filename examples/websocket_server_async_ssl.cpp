// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Beast's asynchronous WebSocket SSL echo server (example/websocket/server/async-ssl in
// Boost.Beast, as of boost-1.92.0.beta1), with its threading kept: ONE io_context run by N
// threads, a strand per session. Its timeouts are idlewheel's: the stream is Beast's
// websocket::stream<ssl::stream<...>> (Asio's ssl::stream, as in Beast's example) over an
// idlewheel::beast::tcp_stream (no system timer per connection), and per session one
// websocket_liveness on the wheel of the session's strand, from an idlewheel::wheel_pool, does
// the rest: one handshake deadline from the TCP accept to the end of the WebSocket upgrade (the
// TLS handshake included: handshake_step() in its handler), idle close 1000 "idle timeout",
// ping when quiet, drop a dead peer, a deadline on the close handshake.
//
// Against Beast's example, the conversion is the lines marked `// idlewheel` (a test counts
// them). As in examples/http_server_async.cpp, the pool's per-shard liveness configs are made
// in main and reached through a pointer at namespace scope, so that the listener's
// constructor keeps Beast's signature (its ioc_ is then unused): each connection is accepted
// on a pool shard's strand where Beast calls net::make_strand(ioc_), and the accept handler
// carries that shard's config to the session's constructor (nothing looks the shard up again
// from an executor; the stream, an idlewheel::beast::tcp_stream built with Beast's
// constructor, finds its wheel through use_wheel_pool). Beast sets the TCP
// stream's expiry for the TLS handshake (30 s), turns it off after, and sets
// websocket::stream_base::timeout::suggested before async_accept; all three go: start() arms
// the one handshake deadline at accept, and a Beast timeout set after start() would run
// Beast's own timer beside idlewheel's (accepted() reports it: see
// idlewheel/beast/websocket_liveness.hpp). As in examples/websocket_server_async.cpp, every
// way a session ends stops its liveness on the session's strand. Everything else is Beast's
// example (in this repository's layout, not Beast's), but for two commented returns (on_read
// returns after a read error, where Beast's falls through to the echo; the listener stops
// only when its acceptor is closed), plus the marked `// test` lines (optional short times and
// a printed port, so that tests/example_checks/ can drive it), `// tls` lines (the certificate and
// its key come from files: Beast's example compiles in a test certificate; no key is kept in
// this repository) and one `// build` include.
//
//     websocket_server_async_ssl <address> <port> <threads> <cert.pem> <key.pem> [<idle-ms>]
//
// <idle-ms> (test): idle timeout in ms (default 60 000); the handshake deadline is half of
// it, pings go out after a third of it of silence and must be answered within a third.

#include <idlewheel/beast/tcp_stream.hpp>          // idlewheel
#include <idlewheel/beast/websocket_liveness.hpp>  // idlewheel

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // build: Asio is compiled separately (idlewheel_asio), its SSL part here
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using liveness_configs = idlewheel::per_shard<idlewheel::beast::websocket_liveness_config<class session, websocket::stream<ssl::stream<idlewheel::beast::tcp_stream>>>>;  // idlewheel
liveness_configs* configs = nullptr;  // idlewheel: one per pool shard, made in main; Beast's listener stays as it is

// Report a failure
void fail(beast::error_code ec, char const* what) {
    std::cerr << what << ": " << ec.message() << "\n";
}

// Echoes back all received WebSocket messages
class session : public std::enable_shared_from_this<session> {
    websocket::stream<ssl::stream<idlewheel::beast::tcp_stream>> ws_;  // idlewheel: no timer in the stream
    beast::flat_buffer buffer_;
    idlewheel::beast::websocket_liveness<session, decltype(ws_)> live_;  // idlewheel

public:
    // Take ownership of the socket (built on a shard's strand) and that shard's config, both from the accept
    session(tcp::socket&& socket, ssl::context& ctx, const liveness_configs::value_type& config) : ws_(std::move(socket), ctx), live_(config, *this, ws_) {}  // idlewheel

    // Get on the correct executor
    void run() {
        // We need to be executing within a strand to perform async operations on the I/O
        // objects in this session (and on its wheel).
        net::dispatch(ws_.get_executor(), beast::bind_front_handler(&session::on_run, shared_from_this()));
    }

    // Start the asynchronous operation
    void on_run() {
        live_.start();  // idlewheel: the handshake deadline from now, over TLS and the upgrade

        // Perform the SSL handshake
        ws_.next_layer().async_handshake(ssl::stream_base::server,
                                         beast::bind_front_handler(&session::on_handshake, shared_from_this()));
    }

    void on_handshake(beast::error_code ec) {
        if (!live_.handshake_step(ec))  // idlewheel: failed, or past the handshake deadline
            return fail(ec, "handshake");

        // (Beast turns the tcp_stream's timeout off here and sets timeout::suggested: the
        // liveness object does both jobs, and keeps Beast's websocket timeouts off.)

        // Set a decorator to change the Server of the handshake
        ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
            res.set(http::field::server, std::string(BOOST_BEAST_VERSION_STRING) + " websocket-server-async-ssl");
        }));

        // Accept the websocket handshake
        ws_.async_accept(beast::bind_front_handler(&session::on_accept, shared_from_this()));
    }

    void on_accept(beast::error_code ec) {
        if (!live_.accepted(ec))  // idlewheel: failed, or past the handshake deadline
            return fail(ec, "accept");

        // Read a message
        do_read();
    }

    void do_read() {
        // Read a message into our buffer
        ws_.async_read(buffer_, beast::bind_front_handler(&session::on_read, shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        if (!live_.on_read(ec) && !ec) return;  // idlewheel: a store (on an error: stopped); false while closing

        // This indicates that the session was closed
        if (ec == websocket::error::closed) return;

        if (ec) return fail(ec, "read");  // (Beast's example has no return: it would echo after a read error)

        // Echo the message
        ws_.text(ws_.got_text());
        ws_.async_write(buffer_.data(), beast::bind_front_handler(&session::on_write, shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        if (ec) return live_.stop(), fail(ec, "write");  // idlewheel: every end of a session stops it, on its strand

        // Clear the buffer
        buffer_.consume(buffer_.size());

        // Do another read
        do_read();
    }
};

//------------------------------------------------------------------------------

// Accepts incoming connections and launches the sessions
class listener : public std::enable_shared_from_this<listener> {
    net::io_context& ioc_;
    ssl::context& ctx_;
    tcp::acceptor acceptor_;

public:
    listener(net::io_context& ioc, ssl::context& ctx, tcp::endpoint endpoint) : ioc_(ioc), ctx_(ctx), acceptor_(net::make_strand(ioc)) {
        beast::error_code ec;

        // Open the acceptor
        acceptor_.open(endpoint.protocol(), ec);
        if (ec) {
            fail(ec, "open");
            return;
        }

        // Allow address reuse
        acceptor_.set_option(net::socket_base::reuse_address(true), ec);
        if (ec) {
            fail(ec, "set_option");
            return;
        }

        // Bind to the server address
        acceptor_.bind(endpoint, ec);
        if (ec) {
            fail(ec, "bind");
            return;
        }

        // Start listening for connections
        acceptor_.listen(net::socket_base::max_listen_connections, ec);
        if (ec) {
            fail(ec, "listen");
            return;
        }
        std::cout << "listening on port " << acceptor_.local_endpoint().port() << std::endl;  // test
    }

    // Start accepting incoming connections
    void run() { do_accept(); }

private:
    void do_accept() {
        // The new connection gets its own strand: a shard's, the strand of its wheel; the
        // handler carries that shard's config to the session
        auto& shard = configs->pool().next();  // idlewheel: where Beast calls net::make_strand(ioc_)
        acceptor_.async_accept(shard.get_executor(), beast::bind_front_handler(&listener::on_accept, shared_from_this(), &(*configs)[shard]));  // idlewheel
    }

    void on_accept(const liveness_configs::value_type* config, beast::error_code ec, tcp::socket socket) {  // idlewheel
        if (ec) {
            fail(ec, "accept");
            if (ec == net::error::operation_aborted) return;  // closed (Beast's example stops at any error: a
                                                              // peer reset before accept would end the server)
        } else {
            // Create the session and run it
            std::make_shared<session>(std::move(socket), ctx_, *config)->run();  // idlewheel
        }

        // Accept another connection
        do_accept();
    }
};

//------------------------------------------------------------------------------

int main(int argc, char* argv[]) {
    // Check command line arguments.
    if (argc != 6 && argc != 7) {  // tls: the certificate and key files; test: the optional <idle-ms>
        std::cerr << "Usage: websocket-server-async-ssl <address> <port> <threads> <cert.pem> <key.pem> [<idle-ms>]\n"
                  << "Example:\n"
                  << "    websocket-server-async-ssl 0.0.0.0 8080 1 cert.pem key.pem\n";
        return EXIT_FAILURE;
    }
    auto const address = net::ip::make_address(argv[1]);
    auto const port = static_cast<unsigned short>(std::atoi(argv[2]));
    auto const threads = std::max<int>(1, std::atoi(argv[3]));
    const std::chrono::milliseconds idle(argc == 7 ? std::atoi(argv[6]) : 60'000);  // test

    // The io_context is required for all I/O
    net::io_context ioc{threads};

    // The SSL context is required, and holds certificates
    ssl::context ctx{ssl::context::tlsv12};

    // This holds the server's certificate and its key, from files (Beast: load_server_certificate(ctx))
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::single_dh_use);  // tls
    ctx.use_certificate_chain_file(argv[4]);  // tls
    ctx.use_private_key_file(argv[5], ssl::context::file_format::pem);  // tls

    idlewheel::wheel_pool pool(ioc); idlewheel::beast::use_wheel_pool(ioc, pool);  // idlewheel: wheels on strands; the streams find theirs
    liveness_configs shard_configs(pool, idlewheel::session_liveness_options{.handshake_timeout = idle / 2, .idle_timeout = idle, .ping_interval = idle / 3, .pong_timeout = idle / 3, .close_timeout = idle / 2}); configs = &shard_configs;  // idlewheel

    // Create and launch a listening port
    std::make_shared<listener>(ioc, ctx, tcp::endpoint{address, port})->run();

    // Run the I/O service on the requested number of threads
    std::vector<std::thread> v;
    v.reserve(static_cast<std::size_t>(threads - 1));
    for (auto i = threads - 1; i > 0; --i) v.emplace_back([&ioc] { ioc.run(); });
    ioc.run();

    return EXIT_SUCCESS;
}
