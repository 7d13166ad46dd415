// Blocking loopback clients for demo_server's black-box tests, every call bounded in time.
//
// Each client owns its io_context and runs it only inside a call, until the operation
// completes or its time limit passes. On a time limit the socket is closed (so the pending
// operation ends with operation_aborted) and the call reports asio::error::timed_out: a test
// never hangs on a silent server. A client is used by one thread.
//
//   tcp_client     raw TCP: write, read_exactly, wait_closed (EOF or reset, with its time)
//   ws_client      Beast WebSocket client: write text/binary, read (message or close reason)
//   http_get       one GET with "Connection: close"
//   fetch_stats    GET /stats parsed with Boost.JSON
#ifndef IDLEWHEEL_TESTS_DEMO_LOOPBACK_CLIENTS_HPP
#define IDLEWHEEL_TESTS_DEMO_LOOPBACK_CLIENTS_HPP

#include "../../support/run_until.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>

namespace demo_test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Milliseconds as a double, for messages and comparisons.
inline double ms(clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

/// Polls `condition` every `period` until it holds or `timeout` passes; returns its last value.
inline bool wait_until(const std::function<bool()>& condition, clock::duration timeout,
                       clock::duration period = 20ms) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        if (condition()) return true;
        if (clock::now() >= deadline) return false;
        std::this_thread::sleep_for(period);
    }
}

using idlewheel::test::run_until;  // bounded: every call of the clients below

/// How a connection ended, seen by a reader.
struct close_result {
    bool closed = false;     ///< the peer closed (EOF) or reset the connection
    error_code ec;           ///< eof, connection_reset, ... or timed_out
    clock::time_point at{};  ///< when the read saw it
    std::string data;        ///< bytes that arrived before
};

/// Reads raw bytes from `socket` (and keeps them) until the peer closes the connection or
/// `timeout` passes (then the socket is closed and ec is timed_out).
inline close_result read_until_closed(asio::io_context& io, tcp::socket& socket, clock::duration timeout) {
    close_result r;
    bool done = false;
    std::array<char, 16 * 1024> buf{};
    std::function<void()> next = [&] {
        socket.async_read_some(asio::buffer(buf), [&](error_code ec, std::size_t n) {
            r.data.append(buf.data(), n);
            if (!ec) return next();
            r.ec = ec;
            r.at = clock::now();
            done = true;
        });
    };
    next();
    if (!run_until(io, done, timeout, [&] {
            error_code ignored;
            socket.close(ignored);
        })) {
        r.ec = asio::error::timed_out;
        return r;
    }
    r.closed = r.ec == asio::error::eof || r.ec == asio::error::connection_reset;
    return r;
}

/// A raw TCP client.
class tcp_client {
public:
    tcp_client() = default;
    explicit tcp_client(const tcp::endpoint& ep, clock::duration timeout = 5s) { connect(ep, timeout); }

    /// Throws boost::system::system_error on failure or timeout.
    void connect(const tcp::endpoint& ep, clock::duration timeout = 5s) {
        error_code ec;
        bool done = false;
        socket_.async_connect(ep, [&](error_code e) {
            ec = e;
            done = true;
        });
        if (!run_until(io_, done, timeout, [this] { close(); })) ec = asio::error::timed_out;
        if (ec) throw boost::system::system_error(ec, "tcp connect");
        socket_.set_option(tcp::no_delay(true));
    }

    /// Writes all of `data`. Throws on failure or timeout.
    void write(std::string_view data, clock::duration timeout = 5s) {
        const auto [ec, n] = run_op(
            [&](auto handler) { asio::async_write(socket_, asio::buffer(data.data(), data.size()), handler); }, timeout);
        if (ec) throw boost::system::system_error(ec, "tcp write");
    }

    /// Reads exactly `n` bytes. Throws on failure, EOF or timeout.
    std::string read_exactly(std::size_t n, clock::duration timeout = 5s) {
        std::string data(n, '\0');
        const auto [ec, got] =
            run_op([&](auto handler) { asio::async_read(socket_, asio::buffer(data.data(), data.size()), handler); }, timeout);
        if (ec) throw boost::system::system_error(ec, "tcp read of " + std::to_string(n) + " bytes (got " + std::to_string(got) + ")");
        return data;
    }

    /// Reads whatever arrives within `timeout` (at most `max` bytes, at least one); the error
    /// if the read failed (asio::error::timed_out if nothing came).
    std::pair<error_code, std::string> read_some(clock::duration timeout, std::size_t max = 64 * 1024) {
        std::string data(max, '\0');
        const auto [ec, got] =
            run_op([&](auto handler) { socket_.async_read_some(asio::buffer(data.data(), data.size()), handler); }, timeout);
        data.resize(got);
        return {ec, std::move(data)};
    }

    /// Reads (and keeps) everything until the peer closes the connection or `timeout` passes.
    close_result wait_closed(clock::duration timeout) { return read_until_closed(io_, socket_, timeout); }

    /// True if nothing arrives (no data, no EOF) for `d`; what does arrive stays unread.
    bool quiet_for(clock::duration d) {
        bool done = false;
        socket_.async_wait(tcp::socket::wait_read, [&](error_code) { done = true; });
        return !run_until(io_, done, d, [this] {
            error_code ignored;
            socket_.cancel(ignored);
        });
    }

    void close() noexcept {
        error_code ignored;
        socket_.close(ignored);
    }

    tcp::socket& socket() noexcept { return socket_; }
    asio::io_context& io() noexcept { return io_; }

    /// Runs one asynchronous operation `start(handler)` with handler void(error_code, size_t).
    template <class Start>
    std::pair<error_code, std::size_t> run_op(Start&& start, clock::duration timeout) {
        error_code ec;
        std::size_t n = 0;
        bool done = false;
        start([&](error_code e, std::size_t k) {
            ec = e;
            n = k;
            done = true;
        });
        if (!run_until(io_, done, timeout, [this] { close(); })) ec = asio::error::timed_out;
        return {ec, n};
    }

private:
    asio::io_context io_{1};
    tcp::socket socket_{io_};
};

/// A Boost.Beast WebSocket client.
class ws_client {
public:
    struct message {
        error_code ec;                      ///< websocket::error::closed after a close frame
        std::string data;
        bool text = false;
        websocket::close_reason reason;     ///< the server's close frame, when ec == closed
        clock::time_point at{};             ///< when the read completed
    };

    ws_client() = default;
    explicit ws_client(const tcp::endpoint& ep, clock::duration timeout = 5s) { connect(ep, timeout); }

    /// TCP connect plus the WebSocket upgrade of `target`. Throws on failure or timeout.
    void connect(const tcp::endpoint& ep, clock::duration timeout = 5s, const std::string& target = "/") {
        error_code ec;
        bool done = false;
        ws_.next_layer().async_connect(ep, [&](error_code e) {
            ec = e;
            if (ec) {
                done = true;
                return;
            }
            ws_.async_handshake(ep.address().to_string() + ":" + std::to_string(ep.port()), target, [&](error_code e2) {
                ec = e2;
                done = true;
            });
        });
        if (!run_until(io_, done, timeout, [this] { drop(); })) ec = asio::error::timed_out;
        if (ec) throw boost::system::system_error(ec, "websocket connect");
        ws_.next_layer().set_option(tcp::no_delay(true));
    }

    /// Sends one message. Throws on failure or timeout.
    void write(std::string_view data, bool text = true, clock::duration timeout = 5s) {
        ws_.text(text);
        error_code ec;
        bool done = false;
        ws_.async_write(asio::buffer(data.data(), data.size()), [&](error_code e, std::size_t) {
            ec = e;
            done = true;
        });
        if (!run_until(io_, done, timeout, [this] { drop(); })) ec = asio::error::timed_out;
        if (ec) throw boost::system::system_error(ec, "websocket write");
    }

    /// Reads one message (answering pings meanwhile, as Beast does while a read is pending).
    message read(clock::duration timeout = 5s) {
        message m;
        bool done = false;
        buffer_.clear();
        ws_.async_read(buffer_, [&](error_code e, std::size_t) {
            m.ec = e;
            m.at = clock::now();
            done = true;
        });
        if (!run_until(io_, done, timeout, [this] { drop(); })) m.ec = asio::error::timed_out;
        if (!m.ec) {
            m.data = beast::buffers_to_string(buffer_.data());
            m.text = ws_.got_text();
        }
        if (m.ec == websocket::error::closed) m.reason = ws_.reason();
        return m;
    }

    /// Sends a message and returns the echo; throws if the echo differs in any way.
    void echo(std::string_view data, bool text = true, clock::duration timeout = 5s) {
        write(data, text, timeout);
        const auto m = read(timeout);
        if (m.ec) throw boost::system::system_error(m.ec, "websocket read of the echo");
        if (m.data != data || m.text != text) throw std::runtime_error("websocket echo differs from what was sent");
    }

    /// Closes the socket at once (no close handshake).
    void drop() noexcept {
        error_code ignored;
        ws_.next_layer().close(ignored);
    }

    websocket::stream<tcp::socket>& stream() noexcept { return ws_; }
    asio::io_context& io() noexcept { return io_; }

private:
    asio::io_context io_{1};
    websocket::stream<tcp::socket> ws_{io_};
    beast::flat_buffer buffer_;
};

struct http_result {
    error_code ec;
    unsigned status = 0;
    std::string body;
    std::string content_type;
};

/// One request (HTTP/1.1, Connection: close) to `target`, bounded by `timeout`.
inline http_result http_get(const tcp::endpoint& ep, const std::string& target, clock::duration timeout = 5s,
                            http::verb method = http::verb::get) {
    http_result r;
    tcp_client c;
    try {
        c.connect(ep, timeout);
    } catch (const boost::system::system_error& e) {
        r.ec = e.code();
        return r;
    }
    http::request<http::empty_body> req{method, target, 11};
    req.set(http::field::host, ep.address().to_string() + ":" + std::to_string(ep.port()));
    req.keep_alive(false);
    auto [ec, n] = c.run_op([&](auto handler) { http::async_write(c.socket(), req, handler); }, timeout);
    if (ec) {
        r.ec = ec;
        return r;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.skip(method == http::verb::head);  // a reply to HEAD has a Content-Length but no body
    parser.body_limit(16 * 1024 * 1024);
    std::tie(ec, n) = c.run_op([&](auto handler) { http::async_read(c.socket(), buffer, parser, handler); }, timeout);
    r.ec = ec;
    if (!ec) {
        auto& res = parser.get();
        r.status = res.result_int();
        r.body = std::move(res.body());
        r.content_type = std::string(res[http::field::content_type]);
    }
    return r;
}

/// GET /stats, parsed. Throws (with the reason) if the request fails or the body is not a
/// JSON object.
inline json::object fetch_stats(const tcp::endpoint& ep, clock::duration timeout = 5s) {
    const auto r = http_get(ep, "/stats", timeout);
    if (r.ec) throw boost::system::system_error(r.ec, "GET /stats");
    if (r.status != 200) throw std::runtime_error("GET /stats: status " + std::to_string(r.status));
    error_code ec;
    auto v = json::parse(r.body, ec);
    if (ec || !v.is_object()) throw std::runtime_error("GET /stats: not a JSON object: " + r.body);
    return std::move(v.as_object());
}

/// The JSON value at a dotted path ("closed.idle"). Throws std::runtime_error if missing.
inline const json::value& at_path(const json::object& doc, std::string_view path) {
    const json::object* o = &doc;
    for (;;) {
        const auto dot = path.find('.');
        const auto key = path.substr(0, dot);
        const auto* v = o->if_contains(key);
        if (v == nullptr) throw std::runtime_error("/stats has no '" + std::string(key) + "'");
        if (dot == std::string_view::npos) return *v;
        if (!v->is_object()) throw std::runtime_error("/stats: '" + std::string(key) + "' is not an object");
        o = &v->as_object();
        path.remove_prefix(dot + 1);
    }
}

/// An integer at `path` (int64 or uint64 in the document). Throws if it is anything else.
inline std::int64_t integer(const json::object& doc, std::string_view path) {
    const auto& v = at_path(doc, path);
    if (v.is_int64()) return v.as_int64();
    if (v.is_uint64()) return static_cast<std::int64_t>(v.as_uint64());
    throw std::runtime_error("/stats: '" + std::string(path) + "' is not an integer: " + json::serialize(v));
}

/// A number (integer or double) at `path`.
inline double number(const json::object& doc, std::string_view path) {
    const auto& v = at_path(doc, path);
    if (v.is_double()) return v.as_double();
    return static_cast<double>(integer(doc, path));
}

}  // namespace demo_test

#endif
