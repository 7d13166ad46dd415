// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Beast's asynchronous WebSocket echo server (example/websocket/server/async in Boost.Beast),
// with its threading kept: ONE io_context run by N threads, a strand per session. Its timeouts
// are idlewheel's: per session one websocket_liveness (handshake deadline, idle close 1000
// "idle timeout", ping when quiet, drop a dead peer, a deadline on the close handshake) on
// the wheel of the session's strand, from an idlewheel::wheel_pool. Beast's own timeouts are
// turned off by the liveness object.
//
// Against Beast's example, the conversion is the lines marked `// idlewheel` (a test counts
// them): the session gets its strand from the pool (pool.next() where Beast calls
// net::make_strand(ioc)) and, through the accept handler, that shard's liveness config (on
// the wheel of that strand): nothing looks the shard up again from an executor. Every way a
// session ends stops its liveness on the session's strand (accepted() and on_read() do it on
// an error; a failed write calls stop()): the listener's own reference to a new session is
// dropped on the listener's thread and can be the last one, and a session may be destroyed
// off its strand only once its liveness is stopped (docs/threading.md). Everything else is Beast's
// example, plus the marked `// test` lines: optional short times and a printed port, so that
// tests/example_checks/ can drive it.
//
//     websocket_server_async <address> <port> <threads> [<idle-ms>]
//
// <idle-ms> (test): idle timeout in ms (default 60 000); the handshake deadline is half of
// it, pings go out after a third of it of silence and must be answered within a third.

#include <idlewheel/beast.hpp>  // idlewheel: websocket_liveness, and wheel_pool / per_shard (with tcp_stream)

#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

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
using tcp = boost::asio::ip::tcp;
using liveness_configs = idlewheel::per_shard<idlewheel::beast::websocket_liveness_config<class session, websocket::stream<beast::tcp_stream>>>;  // idlewheel

// Report a failure
void fail(beast::error_code ec, char const* what) {
    std::cerr << what << ": " << ec.message() << "\n";
}

// Echoes back all received WebSocket messages
class session : public std::enable_shared_from_this<session> {
    websocket::stream<beast::tcp_stream> ws_;
    beast::flat_buffer buffer_;
    idlewheel::beast::websocket_liveness<session, websocket::stream<beast::tcp_stream>> live_;  // idlewheel: 64 bytes

public:
    // Take ownership of the socket (built on a shard's strand) and that shard's config, both from the accept
    session(tcp::socket&& socket, const liveness_configs::value_type& config) : ws_(std::move(socket)), live_(config, *this, ws_) {}  // idlewheel

    // Get on the correct executor
    void run() {
        // We need to be executing within a strand to perform async operations on the I/O
        // objects in this session (and on its wheel).
        net::dispatch(ws_.get_executor(), beast::bind_front_handler(&session::on_run, shared_from_this()));
    }

    // Start the asynchronous operation
    void on_run() {
        // Set suggested timeout settings for the websocket
        ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));

        // Set a decorator to change the Server of the handshake
        ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
            res.set(http::field::server, std::string(BOOST_BEAST_VERSION_STRING) + " websocket-server-async");
        }));

        live_.start();  // idlewheel: the handshake deadline from now; Beast's timeouts off
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

        if (ec) return fail(ec, "read");

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
    liveness_configs& configs_;  // idlewheel: where Beast keeps the io_context for make_strand
    tcp::acceptor acceptor_;

public:
    listener(net::io_context& ioc, liveness_configs& configs, tcp::endpoint endpoint) : configs_(configs), acceptor_(ioc) {  // idlewheel
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
        auto& shard = configs_.pool().next();  // idlewheel
        acceptor_.async_accept(shard.get_executor(), beast::bind_front_handler(&listener::on_accept, shared_from_this(), &configs_[shard]));  // idlewheel
    }

    void on_accept(const liveness_configs::value_type* config, beast::error_code ec, tcp::socket socket) {  // idlewheel
        if (ec) {
            fail(ec, "accept");
            if (ec == net::error::operation_aborted) return;  // closed (Beast's example stops at any error: a
                                                              // peer reset before accept would end the server)
        } else {
            // Create the session and run it
            std::make_shared<session>(std::move(socket), *config)->run();  // idlewheel
        }

        // Accept another connection
        do_accept();
    }
};

//------------------------------------------------------------------------------

int main(int argc, char* argv[]) {
    // Check command line arguments.
    if (argc != 4 && argc != 5) {  // test: the optional <idle-ms>
        std::cerr << "Usage: websocket-server-async <address> <port> <threads> [<idle-ms>]\n"
                  << "Example:\n"
                  << "    websocket-server-async 0.0.0.0 8080 1\n";
        return EXIT_FAILURE;
    }
    auto const address = net::ip::make_address(argv[1]);
    auto const port = static_cast<unsigned short>(std::atoi(argv[2]));
    auto const threads = std::max<int>(1, std::atoi(argv[3]));
    const std::chrono::milliseconds idle(argc == 5 ? std::atoi(argv[4]) : 60'000);  // test

    // The io_context is required for all I/O
    net::io_context ioc{threads};

    idlewheel::wheel_pool pool(ioc);  // idlewheel: wheels on strands, 4 per hardware thread
    liveness_configs configs(pool, idlewheel::session_liveness_options{.handshake_timeout = idle / 2, .idle_timeout = idle, .ping_interval = idle / 3, .pong_timeout = idle / 3, .close_timeout = idle / 2});  // idlewheel

    // Create and launch a listening port
    std::make_shared<listener>(ioc, configs, tcp::endpoint{address, port})->run();  // idlewheel

    // Run the I/O service on the requested number of threads
    std::vector<std::thread> v;
    v.reserve(static_cast<std::size_t>(threads - 1));
    for (auto i = threads - 1; i > 0; --i) v.emplace_back([&ioc] { ioc.run(); });
    ioc.run();

    return EXIT_SUCCESS;
}
