// Copyright (c) 2016-2019 Vinnie Falco (vinnie dot falco at gmail dot com)
// Copyright (c) 2026 The idlewheel authors (the conversion).
// Distributed under the Boost Software License, Version 1.0. (See accompanying
// file LICENSE_1_0.txt or copy at http://www.boost.org/LICENSE_1_0.txt)
//
// Beast's flagship example, example/advanced/server-flex/advanced_server_flex.cpp (the same file
// in every Boost.Beast release from 1.86 to 1.92.0.beta1): plain and TLS on one port (detected
// with async_detect_ssl), HTTP and WebSocket, CRTP sessions, ONE io_context run by N threads and
// a strand per connection. Its timeouts are Beast's, on the timing wheels of an
// idlewheel::wheel_pool instead of steady_timers per connection:
//  - every beast::tcp_stream is an idlewheel::beast::tcp_stream (the namespace line below makes
//    `beast::tcp_stream` name it): Beast's expires_after() logic is kept as it is, its deadlines
//    now on the timing wheel of the connection's strand. The stream moves as Beast's does (with
//    no operation pending, keeping its expiries): the detector hands it to the HTTP session, the
//    HTTP session to the WebSocket session, and net::ssl::stream<beast::tcp_stream> moves with
//    it, all as in Beast's code;
//  - the strand per connection is a shard's of the pool (pool.next() where Beast calls
//    net::make_strand(ioc)), registered with use_wheel_pool(), so that each stream finds its
//    shard's wheel from its executor;
//  - where the WebSocket sessions call ws.set_option(websocket::stream_base::timeout::suggested(
//    beast::role_type::server)), they call idlewheel::beast::set_option(ws, ...) with the same
//    argument (idlewheel/beast/websocket_timeout.hpp): the handshake deadline, keep-alive pings
//    after idle_timeout / 2 of silence, a drop when idle_timeout / 2 more pass with no byte from
//    the peer, a bound on the close handshake; the pending operation ends with
//    beast::error::timeout, as with Beast, so no handler changes;
//  - Beast's listener keeps its make_shared<...>(...)->run(): a session may end on its strand
//    before the listener's thread drops its reference, which the stream allows (with no
//    operation pending it is in no wheel, and may be destroyed on any thread);
//  - Beast ends by returning from main: the pool goes first (destroying a wheel takes every
//    entry out of it), then the io_context destroys the operations still pending, uncalled, and
//    the sessions with them; each tcp_stream is told its operations were abandoned, so nothing
//    touches a wheel and the lifetime check stays quiet.
// The conversion is the lines marked `// idlewheel` (a test counts them): the include, the
// namespace line, the pool (made and registered in main, reached through a pointer at namespace
// scope so that Beast's listener keeps its constructor), the set_option line and a shard's
// strand for each connection. The lines marked `// cert` load the certificate and key from
// files (Beast's example/common/server_certificate.hpp embeds a key, which we do not ship);
// `// fix` sets the write expiry before each response, as Beast issue 2865 advises (Beast's
// example times out every response after the first 30 s of a keep-alive connection); `// test`
// lets tests/example_checks/ drive it; `// warnings` keeps -Wsign-conversion quiet.
//
//     advanced_server_flex <address> <port> <doc_root> <threads> <cert.pem> <key.pem> [<timeout-ms>]
//
// <cert.pem>, <key.pem>: the server's certificate (chain) and private key, PEM; e.g.
//     openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout key.pem -out cert.pem
// <timeout-ms> (test): replaces Beast's 30 s HTTP expiry (detect, TLS handshake, each request,
// TLS shutdown), and the WebSocket timeouts are websocket::stream_base::timeout{<timeout-ms> / 2,
// <timeout-ms>, true} instead of timeout::suggested(server) (handshake 30 s, idle 300 s, pings
// on): a ping goes out after half of it of silence, and the peer is dropped if nothing comes
// back in the other half. <port> 0 picks a free port; the port is printed (test).
#include <idlewheel/beast/websocket_timeout.hpp>  // idlewheel: set_option(ws, timeout), tcp_stream, wheel_pool

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/make_unique.hpp>
#include <boost/optional.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <vector>

// clang-format off
namespace beast { using namespace boost::beast; using idlewheel::beast::tcp_stream; }  // idlewheel: Beast's interface, deadlines on the wheel
namespace http = beast::http;            // from <boost/beast/http.hpp>
namespace websocket = beast::websocket;  // from <boost/beast/websocket.hpp>
namespace net = boost::asio;             // from <boost/asio.hpp>
namespace ssl = boost::asio::ssl;        // from <boost/asio/ssl.hpp>
// clang-format on
using tcp = boost::asio::ip::tcp;  // from <boost/asio/ip/tcp.hpp>
idlewheel::wheel_pool* wheels = nullptr;  // idlewheel: the pool main() makes, where Beast's listener makes strands

std::chrono::milliseconds timeout{30'000};  // test: Beast's 30 s, or <timeout-ms>

// Return a reasonable mime type based on the extension of a file.
beast::string_view mime_type(beast::string_view path) {
    using beast::iequals;
    auto const ext = [&path] {
        auto const pos = path.rfind(".");
        if (pos == beast::string_view::npos) return beast::string_view{};
        return path.substr(pos);
    }();
    if (iequals(ext, ".htm")) return "text/html";
    if (iequals(ext, ".html")) return "text/html";
    if (iequals(ext, ".php")) return "text/html";
    if (iequals(ext, ".css")) return "text/css";
    if (iequals(ext, ".txt")) return "text/plain";
    if (iequals(ext, ".js")) return "application/javascript";
    if (iequals(ext, ".json")) return "application/json";
    if (iequals(ext, ".xml")) return "application/xml";
    if (iequals(ext, ".swf")) return "application/x-shockwave-flash";
    if (iequals(ext, ".flv")) return "video/x-flv";
    if (iequals(ext, ".png")) return "image/png";
    if (iequals(ext, ".jpe")) return "image/jpeg";
    if (iequals(ext, ".jpeg")) return "image/jpeg";
    if (iequals(ext, ".jpg")) return "image/jpeg";
    if (iequals(ext, ".gif")) return "image/gif";
    if (iequals(ext, ".bmp")) return "image/bmp";
    if (iequals(ext, ".ico")) return "image/vnd.microsoft.icon";
    if (iequals(ext, ".tiff")) return "image/tiff";
    if (iequals(ext, ".tif")) return "image/tiff";
    if (iequals(ext, ".svg")) return "image/svg+xml";
    if (iequals(ext, ".svgz")) return "image/svg+xml";
    return "application/text";
}

// Append an HTTP rel-path to a local filesystem path.
// The returned path is normalized for the platform.
std::string path_cat(beast::string_view base, beast::string_view path) {
    if (base.empty()) return std::string(path);
    std::string result(base);
#ifdef BOOST_MSVC
    char constexpr path_separator = '\\';
    if (result.back() == path_separator) result.resize(result.size() - 1);
    result.append(path.data(), path.size());
    for (auto& c : result)
        if (c == '/') c = path_separator;
#else
    char constexpr path_separator = '/';
    if (result.back() == path_separator) result.resize(result.size() - 1);
    result.append(path.data(), path.size());
#endif
    return result;
}

// Return a response for the given request.
//
// The concrete type of the response message (which depends on the
// request), is type-erased in message_generator.
template <class Body, class Allocator>
http::message_generator handle_request(beast::string_view doc_root,
                                       http::request<Body, http::basic_fields<Allocator>>&& req) {
    // Returns a bad request response
    auto const bad_request = [&req](beast::string_view why) {
        http::response<http::string_body> res{http::status::bad_request, req.version()};
        res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
        res.set(http::field::content_type, "text/html");
        res.keep_alive(req.keep_alive());
        res.body() = std::string(why);
        res.prepare_payload();
        return res;
    };

    // Returns a not found response
    auto const not_found = [&req](beast::string_view target) {
        http::response<http::string_body> res{http::status::not_found, req.version()};
        res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
        res.set(http::field::content_type, "text/html");
        res.keep_alive(req.keep_alive());
        res.body() = "The resource '" + std::string(target) + "' was not found.";
        res.prepare_payload();
        return res;
    };

    // Returns a server error response
    auto const server_error = [&req](beast::string_view what) {
        http::response<http::string_body> res{http::status::internal_server_error, req.version()};
        res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
        res.set(http::field::content_type, "text/html");
        res.keep_alive(req.keep_alive());
        res.body() = "An error occurred: '" + std::string(what) + "'";
        res.prepare_payload();
        return res;
    };

    // Make sure we can handle the method
    if (req.method() != http::verb::get && req.method() != http::verb::head) return bad_request("Unknown HTTP-method");

    // Request path must be absolute and not contain "..".
    if (req.target().empty() || req.target()[0] != '/' || req.target().find("..") != beast::string_view::npos)
        return bad_request("Illegal request-target");

    // Build the path to the requested file
    std::string path = path_cat(doc_root, req.target());
    if (req.target().back() == '/') path.append("index.html");

    // Attempt to open the file
    beast::error_code ec;
    http::file_body::value_type body;
    body.open(path.c_str(), beast::file_mode::scan, ec);

    // Handle the case where the file doesn't exist
    if (ec == beast::errc::no_such_file_or_directory) return not_found(req.target());

    // Handle an unknown error
    if (ec) return server_error(ec.message());

    // Cache the size since we need it after the move
    auto const size = body.size();

    // Respond to HEAD request
    if (req.method() == http::verb::head) {
        http::response<http::empty_body> res{http::status::ok, req.version()};
        res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
        res.set(http::field::content_type, mime_type(path));
        res.content_length(size);
        res.keep_alive(req.keep_alive());
        return res;
    }

    // Respond to GET request
    http::response<http::file_body> res{std::piecewise_construct, std::make_tuple(std::move(body)),
                                        std::make_tuple(http::status::ok, req.version())};
    res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
    res.set(http::field::content_type, mime_type(path));
    res.content_length(size);
    res.keep_alive(req.keep_alive());
    return res;
}

//------------------------------------------------------------------------------

// Report a failure
void fail(beast::error_code ec, char const* what) {
    // ssl::error::stream_truncated, also known as an SSL "short read",
    // indicates the peer closed the connection without performing the
    // required closing handshake (for example, Google does this to
    // improve performance). Generally this can be a security issue,
    // but if your communication protocol is self-terminated (as
    // it is with both HTTP and WebSocket) then you may simply
    // ignore the lack of close_notify.
    //
    // https://github.com/boostorg/beast/issues/38
    //
    // https://security.stackexchange.com/questions/91435/how-to-handle-a-malicious-ssl-tls-shutdown
    //
    // When a short read would cut off the end of an HTTP message,
    // Beast returns the error beast::http::error::partial_message.
    // Therefore, if we see a short read here, it has occurred
    // after the message has been completed, so it is safe to ignore it.

    if (ec == net::ssl::error::stream_truncated) return;

    std::cerr << what << ": " << ec.message() << "\n";
}

//------------------------------------------------------------------------------

// Echoes back all received WebSocket messages.
// This uses the Curiously Recurring Template Pattern so that
// the same code works with both SSL streams and regular sockets.
template <class Derived>
class websocket_session {
    // Access the derived class, this is part of
    // the Curiously Recurring Template Pattern idiom.
    Derived& derived() { return static_cast<Derived&>(*this); }

    beast::flat_buffer buffer_;

    // Start the asynchronous operation
    template <class Body, class Allocator>
    void do_accept(http::request<Body, http::basic_fields<Allocator>> req) {
        // Set suggested timeout settings for the websocket
        idlewheel::beast::set_option(derived().ws(), websocket::stream_base::timeout::suggested(beast::role_type::server));  // idlewheel: was derived().ws().set_option(...)
        if (timeout != std::chrono::seconds(30)) idlewheel::beast::set_option(derived().ws(), websocket::stream_base::timeout{timeout / 2, timeout, true});  // test: <timeout-ms>

        // Set a decorator to change the Server of the handshake
        derived().ws().set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
            res.set(http::field::server, std::string(BOOST_BEAST_VERSION_STRING) + " advanced-server-flex");
        }));

        // Accept the websocket handshake
        derived().ws().async_accept(
            req, beast::bind_front_handler(&websocket_session::on_accept, derived().shared_from_this()));
    }

private:
    void on_accept(beast::error_code ec) {
        if (ec) return fail(ec, "accept");

        // Read a message
        do_read();
    }

    void do_read() {
        // Read a message into our buffer
        derived().ws().async_read(buffer_,
                                  beast::bind_front_handler(&websocket_session::on_read, derived().shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        // This indicates that the websocket_session was closed
        if (ec == websocket::error::closed) return;

        if (ec) return fail(ec, "read");

        // Echo the message
        derived().ws().text(derived().ws().got_text());
        derived().ws().async_write(
            buffer_.data(), beast::bind_front_handler(&websocket_session::on_write, derived().shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        if (ec) return fail(ec, "write");

        // Clear the buffer
        buffer_.consume(buffer_.size());

        // Do another read
        do_read();
    }

public:
    // Start the asynchronous operation
    template <class Body, class Allocator>
    void run(http::request<Body, http::basic_fields<Allocator>> req) {
        // Accept the WebSocket upgrade request
        do_accept(std::move(req));
    }
};

//------------------------------------------------------------------------------

// Handles a plain WebSocket connection
class plain_websocket_session : public websocket_session<plain_websocket_session>,
                                public std::enable_shared_from_this<plain_websocket_session> {
    websocket::stream<beast::tcp_stream> ws_;

public:
    // Create the session
    explicit plain_websocket_session(beast::tcp_stream&& stream) : ws_(std::move(stream)) {}

    // Called by the base class
    websocket::stream<beast::tcp_stream>& ws() { return ws_; }
};

//------------------------------------------------------------------------------

// Handles an SSL WebSocket connection
class ssl_websocket_session
    : public websocket_session<ssl_websocket_session>,
      public std::enable_shared_from_this<ssl_websocket_session> {
    websocket::stream<ssl::stream<beast::tcp_stream>> ws_;

public:
    // Create the ssl_websocket_session
    explicit ssl_websocket_session(ssl::stream<beast::tcp_stream>&& stream) : ws_(std::move(stream)) {}

    // Called by the base class
    websocket::stream<ssl::stream<beast::tcp_stream>>& ws() { return ws_; }
};

//------------------------------------------------------------------------------

template <class Body, class Allocator>
void make_websocket_session(beast::tcp_stream stream, http::request<Body, http::basic_fields<Allocator>> req) {
    std::make_shared<plain_websocket_session>(std::move(stream))->run(std::move(req));
}

template <class Body, class Allocator>
void make_websocket_session(ssl::stream<beast::tcp_stream> stream,
                            http::request<Body, http::basic_fields<Allocator>> req) {
    std::make_shared<ssl_websocket_session>(std::move(stream))->run(std::move(req));
}

//------------------------------------------------------------------------------

// Handles an HTTP server connection.
// This uses the Curiously Recurring Template Pattern so that
// the same code works with both SSL streams and regular sockets.
template <class Derived>
class http_session {
    std::shared_ptr<std::string const> doc_root_;

    // Access the derived class, this is part of
    // the Curiously Recurring Template Pattern idiom.
    Derived& derived() { return static_cast<Derived&>(*this); }

    static constexpr std::size_t queue_limit = 8;  // max responses
    std::queue<http::message_generator> response_queue_;

    // The parser is stored in an optional container so we can
    // construct it from scratch it at the beginning of each new message.
    boost::optional<http::request_parser<http::string_body>> parser_;

protected:
    beast::flat_buffer buffer_;

public:
    // Construct the session
    http_session(beast::flat_buffer buffer, std::shared_ptr<std::string const> const& doc_root)
        : doc_root_(doc_root), buffer_(std::move(buffer)) {}

    void do_read() {
        // Construct a new parser for each message
        parser_.emplace();

        // Apply a reasonable limit to the allowed size
        // of the body in bytes to prevent abuse.
        parser_->body_limit(10000);

        // Set the timeout.
        beast::get_lowest_layer(derived().stream()).expires_after(timeout);  // test

        // Read a request using the parser-oriented interface
        http::async_read(derived().stream(), buffer_, *parser_,
                         beast::bind_front_handler(&http_session::on_read, derived().shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        // This means they closed the connection
        if (ec == http::error::end_of_stream) return derived().do_eof();

        if (ec) return fail(ec, "read");

        // See if it is a WebSocket Upgrade
        if (websocket::is_upgrade(parser_->get())) {
            // Disable the timeout.
            // The websocket::stream uses its own timeout settings.
            beast::get_lowest_layer(derived().stream()).expires_never();

            // Create a websocket session, transferring ownership
            // of both the socket and the HTTP request.
            return make_websocket_session(derived().release_stream(), parser_->release());
        }

        // Send the response
        queue_write(handle_request(*doc_root_, parser_->release()));

        // If we aren't at the queue limit, try to pipeline another request
        if (response_queue_.size() < queue_limit) do_read();
    }

    void queue_write(http::message_generator response) {
        // Allocate and store the work
        response_queue_.push(std::move(response));

        // If there was no previous work, start the write loop
        if (response_queue_.size() == 1) do_write();
    }

    // Called to start/continue the write-loop. Should not be called when
    // write_loop is already active.
    void do_write() {
        if (!response_queue_.empty()) {
            bool keep_alive = response_queue_.front().keep_alive();

            // Beast issue 2865: do_read() sets the expiry while a write is pending, which leaves the
            // write expiry where the first request put it: every later response would time out
            beast::get_lowest_layer(derived().stream()).expires_after(timeout);  // fix: Beast issue 2865

            beast::async_write(
                derived().stream(), std::move(response_queue_.front()),
                beast::bind_front_handler(&http_session::on_write, derived().shared_from_this(), keep_alive));
        }
    }

    void on_write(bool keep_alive, beast::error_code ec, std::size_t bytes_transferred) {
        boost::ignore_unused(bytes_transferred);

        if (ec) return fail(ec, "write");

        if (!keep_alive) {
            // This means we should close the connection, usually because
            // the response indicated the "Connection: close" semantic.
            return derived().do_eof();
        }

        // Resume the read if it has been paused
        if (response_queue_.size() == queue_limit) do_read();

        response_queue_.pop();

        do_write();
    }
};

//------------------------------------------------------------------------------

// Handles a plain HTTP connection
class plain_http_session : public http_session<plain_http_session>,
                           public std::enable_shared_from_this<plain_http_session> {
    beast::tcp_stream stream_;

public:
    // Create the session
    plain_http_session(beast::tcp_stream&& stream, beast::flat_buffer&& buffer,
                       std::shared_ptr<std::string const> const& doc_root)
        : http_session<plain_http_session>(std::move(buffer), doc_root),
          stream_(std::move(stream)) {}

    // Start the session
    void run() { this->do_read(); }

    // Called by the base class
    beast::tcp_stream& stream() { return stream_; }

    // Called by the base class
    beast::tcp_stream release_stream() { return std::move(stream_); }

    // Called by the base class
    void do_eof() {
        // Send a TCP shutdown
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ec);

        // At this point the connection is closed gracefully
    }
};

//------------------------------------------------------------------------------

// Handles an SSL HTTP connection
class ssl_http_session : public http_session<ssl_http_session>, public std::enable_shared_from_this<ssl_http_session> {
    ssl::stream<beast::tcp_stream> stream_;

public:
    // Create the http_session
    ssl_http_session(beast::tcp_stream&& stream, ssl::context& ctx, beast::flat_buffer&& buffer,
                     std::shared_ptr<std::string const> const& doc_root)
        : http_session<ssl_http_session>(std::move(buffer), doc_root),
          stream_(std::move(stream), ctx) {}

    // Start the session
    void run() {
        // Set the timeout.
        beast::get_lowest_layer(stream_).expires_after(timeout);  // test

        // Perform the SSL handshake
        // Note, this is the buffered version of the handshake.
        stream_.async_handshake(ssl::stream_base::server, buffer_.data(),
                                beast::bind_front_handler(&ssl_http_session::on_handshake, shared_from_this()));
    }

    // Called by the base class
    ssl::stream<beast::tcp_stream>& stream() { return stream_; }

    // Called by the base class
    ssl::stream<beast::tcp_stream> release_stream() { return std::move(stream_); }

    // Called by the base class
    void do_eof() {
        // Set the timeout.
        beast::get_lowest_layer(stream_).expires_after(timeout);  // test

        // Perform the SSL shutdown
        stream_.async_shutdown(beast::bind_front_handler(&ssl_http_session::on_shutdown, shared_from_this()));
    }

private:
    void on_handshake(beast::error_code ec, std::size_t bytes_used) {
        if (ec) return fail(ec, "handshake");

        // Consume the portion of the buffer used by the handshake
        buffer_.consume(bytes_used);

        do_read();
    }

    void on_shutdown(beast::error_code ec) {
        if (ec) return fail(ec, "shutdown");

        // At this point the connection is closed gracefully
    }
};

//------------------------------------------------------------------------------

// Detects SSL handshakes
class detect_session : public std::enable_shared_from_this<detect_session> {
    beast::tcp_stream stream_;
    ssl::context& ctx_;
    std::shared_ptr<std::string const> doc_root_;
    beast::flat_buffer buffer_;

public:
    explicit detect_session(tcp::socket&& socket, ssl::context& ctx, std::shared_ptr<std::string const> const& doc_root)
        : stream_(std::move(socket)), ctx_(ctx), doc_root_(doc_root) {}

    // Launch the detector
    void run() {
        // We need to be executing within a strand to perform async operations
        // on the I/O objects in this session. Although not strictly necessary
        // for single-threaded contexts, this example code is written to be
        // thread-safe by default.
        net::dispatch(stream_.get_executor(),
                      beast::bind_front_handler(&detect_session::on_run, this->shared_from_this()));
    }

    void on_run() {
        // Set the timeout.
        stream_.expires_after(timeout);  // test

        beast::async_detect_ssl(stream_, buffer_,
                                beast::bind_front_handler(&detect_session::on_detect, this->shared_from_this()));
    }

    void on_detect(beast::error_code ec, bool result) {
        if (ec) return fail(ec, "detect");

        if (result) {
            // Launch SSL session
            std::make_shared<ssl_http_session>(std::move(stream_), ctx_, std::move(buffer_), doc_root_)->run();
            return;
        }

        // Launch plain session
        std::make_shared<plain_http_session>(std::move(stream_), std::move(buffer_), doc_root_)->run();
    }
};

// Accepts incoming connections and launches the sessions
class listener : public std::enable_shared_from_this<listener> {
    net::io_context& ioc_;
    ssl::context& ctx_;
    tcp::acceptor acceptor_;
    std::shared_ptr<std::string const> doc_root_;

public:
    listener(net::io_context& ioc, ssl::context& ctx, tcp::endpoint endpoint,
             std::shared_ptr<std::string const> const& doc_root)
        : ioc_(ioc), ctx_(ctx), acceptor_(net::make_strand(ioc)), doc_root_(doc_root) {
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
        // The new connection gets its own strand: a shard's, the strand of its wheel
        acceptor_.async_accept(wheels->next().get_executor(), beast::bind_front_handler(&listener::on_accept, shared_from_this()));  // idlewheel: was net::make_strand(ioc_)
    }

    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (ec) {
            fail(ec, "accept");
        } else {
            // Create the detector http_session and run it
            std::make_shared<detect_session>(std::move(socket), ctx_, doc_root_)->run();
        }

        // Accept another connection
        do_accept();
    }
};

//------------------------------------------------------------------------------

int main(int argc, char* argv[]) {
    // Check command line arguments.
    if (argc != 7 && argc != 8) {  // cert; test: the optional <timeout-ms>
        std::cerr << "Usage: advanced-server-flex <address> <port> <doc_root> <threads> <cert.pem> <key.pem> "
                     "[<timeout-ms>]\n"  // cert
                  << "Example:\n"
                  << "    advanced-server-flex 0.0.0.0 8080 . 1 cert.pem key.pem\n";  // cert
        return EXIT_FAILURE;
    }
    auto const address = net::ip::make_address(argv[1]);
    auto const port = static_cast<unsigned short>(std::atoi(argv[2]));
    auto const doc_root = std::make_shared<std::string>(argv[3]);
    auto const threads = std::max<int>(1, std::atoi(argv[4]));
    if (argc == 8) timeout = std::chrono::milliseconds(std::atoi(argv[7]));  // test

    // The io_context is required for all I/O
    net::io_context ioc{threads};

    // The strands of the connections, each with its timing wheel (4 per hardware thread); the
    // streams built on them find their wheel
    idlewheel::wheel_pool pool(ioc); idlewheel::beast::use_wheel_pool(ioc, pool); wheels = &pool;  // idlewheel

    // The SSL context is required, and holds certificates
    ssl::context ctx{ssl::context::tlsv12};

    // The certificate and key used by the server, from files
    ctx.use_certificate_chain_file(argv[5]);               // cert
    ctx.use_private_key_file(argv[6], ssl::context::pem);  // cert

    // Create and launch a listening port
    std::make_shared<listener>(ioc, ctx, tcp::endpoint{address, port}, doc_root)->run();

    // Capture SIGINT and SIGTERM to perform a clean shutdown
    net::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](beast::error_code const&, int) {
        // Stop the `io_context`. This will cause `run()`
        // to return immediately, eventually destroying the
        // `io_context` and all of the sockets in it.
        ioc.stop();
    });

    // Run the I/O service on the requested number of threads
    std::vector<std::thread> v;
    v.reserve(static_cast<std::size_t>(threads - 1));  // warnings
    for (auto i = threads - 1; i > 0; --i) v.emplace_back([&ioc] { ioc.run(); });
    ioc.run();

    // (If we get here, it means we got a SIGINT or SIGTERM)

    // Block until all the threads exit
    for (auto& t : v) t.join();

    return EXIT_SUCCESS;
}
