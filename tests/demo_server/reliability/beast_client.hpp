// A well-behaved Boost.Beast WebSocket client, every call bounded in time: the "control
// client" that must keep getting its echoes while bad clients are being dealt with.
//
// It owns its io_context and runs it only inside a call; on a time limit the socket is closed
// (the pending operation then ends with operation_aborted) and the call reports timed_out.
#ifndef IDLEWHEEL_TESTS_RELIABILITY_BEAST_CLIENT_HPP
#define IDLEWHEEL_TESTS_RELIABILITY_BEAST_CLIENT_HPP

#include "../../support/run_until.hpp"
#include "raw_socket.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <string>
#include <string_view>

namespace reliability {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

class beast_ws_client {
public:
    /// Connects and upgrades. The error (timed_out if it took longer than `timeout`).
    error_code connect(const std::string& host, unsigned short port, clock::duration timeout = 5s) {
        const tcp::endpoint ep(asio::ip::make_address(host), port);
        return run(timeout, [&](auto done) {
            ws_.next_layer().async_connect(ep, [this, host, port, done](error_code ec) mutable {
                if (ec) return done(ec);
                ws_.next_layer().set_option(tcp::no_delay(true), ec);
                ws_.async_handshake(host + ":" + std::to_string(port), "/", [done](error_code e) mutable { done(e); });
            });
        });
    }

    /// Sends `text` and reads one message; error if it is not the same text.
    error_code echo(std::string_view text, clock::duration timeout = 5s) {
        std::string sent(text);
        auto ec = run(timeout, [&](auto done) {
            ws_.text(true);
            ws_.async_write(asio::buffer(sent), [this, done](error_code e, std::size_t) mutable {
                if (e) return done(e);
                buffer_.clear();
                ws_.async_read(buffer_, [done](error_code e2, std::size_t) mutable { done(e2); });
            });
        });
        if (!ec && beast::buffers_to_string(buffer_.data()) != sent) ec = asio::error::invalid_argument;
        return ec;
    }

    /// Reads one message; websocket::error::closed with reason() set after a close frame.
    error_code read(std::string& into, clock::duration timeout = 5s) {
        buffer_.clear();
        auto ec = run(timeout, [&](auto done) { ws_.async_read(buffer_, [done](error_code e, std::size_t) mutable { done(e); }); });
        if (!ec) into = beast::buffers_to_string(buffer_.data());
        return ec;
    }

    /// A clean close handshake (1000).
    error_code close(clock::duration timeout = 5s) {
        return run(timeout, [&](auto done) { ws_.async_close(websocket::close_code::normal, [done](error_code e) mutable { done(e); }); });
    }

    void drop() noexcept {
        error_code ignored;
        ws_.next_layer().close(ignored);
    }

    websocket::stream<tcp::socket>& stream() noexcept { return ws_; }

private:
    // Starts one operation with a completion `done(error_code)` and runs until it completes or
    // `timeout` passes (then drops the socket, lets the aborted handlers run, reports timed_out).
    template <class Start>
    error_code run(clock::duration timeout, Start&& start) {
        error_code result;
        bool finished = false;
        start([&result, &finished](error_code e) {
            result = e;
            finished = true;
        });
        if (!idlewheel::test::run_until(io_, finished, timeout, [this] { drop(); })) return asio::error::timed_out;
        return result;
    }

    asio::io_context io_{1};
    websocket::stream<tcp::socket> ws_{io_};
    beast::flat_buffer buffer_;
};

}  // namespace reliability

#endif
