// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Beast's asynchronous WebSocket echo server (example/websocket/server/async in Boost.Beast),
// with its threading kept: ONE io_context run by N threads, a strand per session. Its timeouts
// are Beast's, on an idlewheel::wheel_pool instead of a steady_timer per connection: the
// stream is websocket::stream<idlewheel::beast::tcp_stream>, and where Beast calls
// ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server)) the
// example calls idlewheel::beast::set_option(ws_, ...) with the same argument
// (idlewheel/beast/websocket_timeout.hpp): the handshake deadline, keep-alive pings after
// idle_timeout / 2 of silence, a drop when idle_timeout / 2 more pass with no byte from the
// peer, a bound on the close handshake; the pending operation ends with beast::error::timeout,
// as with Beast, so no handler changes.
//
// Against Beast's example, the conversion is the lines marked `// idlewheel` (a test counts
// them): the include, the stream's type, the set_option line, the pool (made and registered in
// main, reached through a pointer at namespace scope so that Beast's listener keeps its
// constructor; its ioc_ is then unused), and a shard's strand for each connection
// (pool.next() where Beast calls net::make_strand(ioc)), on which the stream finds its wheel.
// Everything else is Beast's example (in this repository's layout), but for a listener
// that stops when its acceptor is closed, plus the marked `// test` lines: optional short
// times and a printed port, so that tests/example_checks/ can drive it.
//
//     websocket_server_async <address> <port> <threads> [<idle-ms>]
//
// <idle-ms> (test): instead of timeout::suggested(server) (handshake 30 s, idle 300 s, pings
// on), websocket::stream_base::timeout{<idle-ms> / 2, <idle-ms>, true}: the handshake deadline
// is half of it, a ping goes out after half of it of silence, and the peer is dropped if
// nothing comes back in the other half.

#include <idlewheel/beast/websocket_timeout.hpp>  // idlewheel: set_option(ws, timeout), tcp_stream, wheel_pool

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
idlewheel::wheel_pool* wheels = nullptr;  // idlewheel: the pool main() makes, where Beast's listener makes strands
std::chrono::milliseconds test_idle{0};  // test: <idle-ms>, or 0 for Beast's suggested timeouts

// Report a failure
void fail(beast::error_code ec, char const* what) {
    std::cerr << what << ": " << ec.message() << "\n";
}

// Echoes back all received WebSocket messages
class session : public std::enable_shared_from_this<session> {
    websocket::stream<idlewheel::beast::tcp_stream> ws_;  // idlewheel: was websocket::stream<beast::tcp_stream>
    beast::flat_buffer buffer_;

public:
    // Take ownership of the socket
    explicit session(tcp::socket&& socket) : ws_(std::move(socket)) {}

    // Get on the correct executor
    void run() {
        // We need to be executing within a strand to perform async operations on the I/O
        // objects in this session. Although not strictly necessary for single-threaded
        // contexts, this example code is written to be thread-safe by default.
        net::dispatch(ws_.get_executor(), beast::bind_front_handler(&session::on_run, shared_from_this()));
    }

    // Start the asynchronous operation
    void on_run() {
        // Set suggested timeout settings for the websocket
        idlewheel::beast::set_option(ws_, websocket::stream_base::timeout::suggested(beast::role_type::server));  // idlewheel: was ws_.set_option(...)
        if (test_idle.count() != 0) idlewheel::beast::set_option(ws_, websocket::stream_base::timeout{test_idle / 2, test_idle, true});  // test

        // Set a decorator to change the Server of the handshake
        ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
            res.set(http::field::server, std::string(BOOST_BEAST_VERSION_STRING) + " websocket-server-async");
        }));

        // Accept the websocket handshake
        ws_.async_accept(beast::bind_front_handler(&session::on_accept, shared_from_this()));
    }

    void on_accept(beast::error_code ec) {
        if (ec) return fail(ec, "accept");

        // Read a message
        do_read();
    }

    void do_read() {
        // Read a message into our buffer
        ws_.async_read(buffer_, beast::bind_front_handler(&session::on_read, shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        // This indicates that the session was closed
        if (ec == websocket::error::closed) return;

        if (ec) return fail(ec, "read");

        // Echo the message
        ws_.text(ws_.got_text());
        ws_.async_write(buffer_.data(), beast::bind_front_handler(&session::on_write, shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        if (ec) return fail(ec, "write");

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
    tcp::acceptor acceptor_;

public:
    listener(net::io_context& ioc, tcp::endpoint endpoint) : ioc_(ioc), acceptor_(ioc) {
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
        // The new connection gets its own strand
        acceptor_.async_accept(wheels->next().get_executor(), beast::bind_front_handler(&listener::on_accept, shared_from_this()));  // idlewheel: was net::make_strand(ioc_)
    }

    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (ec) {
            fail(ec, "accept");
            if (ec == net::error::operation_aborted) return;  // the acceptor was closed
        } else {
            // Create the session and run it
            std::make_shared<session>(std::move(socket))->run();
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
    if (argc == 5) test_idle = std::chrono::milliseconds(std::atoi(argv[4]));  // test

    // The io_context is required for all I/O
    net::io_context ioc{threads};
    idlewheel::wheel_pool pool(ioc); idlewheel::beast::use_wheel_pool(ioc, pool); wheels = &pool;  // idlewheel

    // Create and launch a listening port
    std::make_shared<listener>(ioc, tcp::endpoint{address, port})->run();

    // Run the I/O service on the requested number of threads
    std::vector<std::thread> v;
    v.reserve(static_cast<std::size_t>(threads - 1));
    for (auto i = threads - 1; i > 0; --i) v.emplace_back([&ioc] { ioc.run(); });
    ioc.run();

    return EXIT_SUCCESS;
}
