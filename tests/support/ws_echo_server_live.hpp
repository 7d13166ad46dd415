// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_WS_ECHO_SERVER_LIVE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_WS_ECHO_SERVER_LIVE_HPP

// The echo server of ws_echo_server.hpp (same options, counters and causes), written with the
// one liveness object per session, idlewheel::beast::websocket_liveness, instead of the three
// separate objects and the rules beast.hpp lists: the object arms the handshake deadline at
// accept, sends at most one ping, closes once (and never after the peer started a close),
// bounds the close handshake, and drops the socket on a verdict. The session only reports
// what it decided (on_liveness) and asks the object whether to go on (accepted(), on_read()).
//
// Idleness is "no message from the client" (reader idle); for an echo server, which writes
// only in answer to a message, that is also "no message either way" (all idle), so both
// server_options::idle_kind values mean the same here and are counted as reader_idle.

#include "ws_echo_server.hpp"

#include <idlewheel/beast/websocket_liveness.hpp>
#include <idlewheel/session_liveness.hpp>

namespace ws_echo_live {

using ws_echo::close_cause;
using ws_echo::fail;
using ws_echo::server_counters;
using ws_echo::server_options;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using steady_clock = std::chrono::steady_clock;

class server : public ws_echo::server_base<server> {
public:
    /// This server counts every idle close as reader idle (see the top of this file).
    static constexpr bool distinguishes_idle_kinds = false;

    server(net::io_context& ioc, const server_options& options);

private:
    friend class ws_echo::server_base<server>;
    class session;

    idlewheel::beast::websocket_liveness_config<session> config_;  // shared by every session
};

class server::session : public std::enable_shared_from_this<session> {
public:
    session(server& owner, tcp::socket&& socket) : ws_(std::move(socket)), server_(owner), live_(owner.config_, *this) {
        server_.sessions_.insert(this);
        ++server_.counters_.open;
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    ~session() {
        const auto cause = cause_.value_or(close_cause::error);
        std::optional<steady_clock::duration> after_upgrade;
        if (upgraded_at_) after_upgrade = decided_at_ - *upgraded_at_;
        server_.counters_.closed.push_back({cause, decided_at_ - accepted_at_, after_upgrade});
        --server_.counters_.open;
        server_.sessions_.erase(this);
    }

    void run() {
        live_.start();  // the handshake deadline runs from the accept, before the HTTP read
        ws_.read_message_max(server_.options_.max_message);
        ws_.async_accept(beast::bind_front_handler(&session::on_accept, shared_from_this()));
    }

    void shut_down() {
        decide(close_cause::shutdown);
        live_.drop();
    }

    // What the liveness object decided (it has already acted on it).
    void on_liveness(idlewheel::liveness_event e) {
        switch (e) {
            case idlewheel::liveness_event::send_ping: ++server_.counters_.pings; break;
            case idlewheel::liveness_event::idle: decide(close_cause::idle); break;
            case idlewheel::liveness_event::dead_peer: decide(close_cause::dead_peer); break;
            case idlewheel::liveness_event::handshake_timeout: decide(close_cause::handshake_timeout); break;
            case idlewheel::liveness_event::close_timeout: break;  // the cause stays what started the close
        }
    }

    websocket::stream<tcp::socket> ws_;  // before live_: the object's owner holds the stream

private:
    void decide(close_cause cause) {
        if (cause_) return;
        cause_ = cause;
        decided_at_ = steady_clock::now();
    }

    void on_accept(beast::error_code ec) {
        if (!live_.accepted(ec)) {
            if (ec && !live_.has_verdict()) {
                decide(close_cause::error);
                fail(ec, "accept");
            }
            return;
        }
        ++server_.counters_.upgraded;
        upgraded_at_ = steady_clock::now();
        do_read();
    }

    void do_read() { ws_.async_read(buffer_, beast::bind_front_handler(&session::on_read, shared_from_this())); }

    void on_read(beast::error_code ec, std::size_t) {
        if (!live_.on_read(ec)) {
            if (ec == websocket::error::closed) return decide(close_cause::client_close);
            if (ec && !cause_) {
                decide(close_cause::error);
                fail(ec, "read");
            }
            return;
        }
        ++server_.counters_.echoed;
        ws_.text(ws_.got_text());
        ws_.async_write(buffer_.data(), beast::bind_front_handler(&session::on_write, shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t bytes) {
        if (ec) {
            live_.stop();
            if (cause_) return;
            decide(close_cause::error);
            return fail(ec, "write");
        }
        buffer_.consume(bytes);
        do_read();
    }

    server& server_;
    idlewheel::beast::websocket_liveness<session> live_;
    beast::flat_buffer buffer_;
    steady_clock::time_point accepted_at_ = steady_clock::now();
    std::optional<steady_clock::time_point> upgraded_at_;
    steady_clock::time_point decided_at_{};
    std::optional<close_cause> cause_;
};

inline idlewheel::session_liveness_options liveness_options_for(const server_options& o) {
    return {.handshake_timeout = o.handshake_timeout,
            .idle_timeout = o.idle_timeout,
            .ping_interval = o.heartbeat.ping_interval,
            .pong_timeout = o.heartbeat.pong_timeout,
            .jitter = o.heartbeat.jitter,
            .close_timeout = o.close_timeout};
}

inline server::server(net::io_context& ioc, const server_options& options)
    : server_base(ioc, options),
      config_(wheel_, &session::ws_, liveness_options_for(options), &live_, &session::on_liveness) {}

}  // namespace ws_echo_live

#endif
