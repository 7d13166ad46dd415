// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_WS_ECHO_SERVER_HPP
#define IDLEWHEEL_TESTS_SUPPORT_WS_ECHO_SERVER_HPP

// The tests' one WebSocket echo server (test_beast_websocket_liveness*.cpp run every scenario
// against both of its forms). Its only liveness machinery is idlewheel: the shape of Beast's
// example/websocket/server/async, with Beast's own websocket timeouts left off and one
// idlewheel::wheel_timer (the steady clock) serving every session of the io_context instead.
// What differs between the forms is an option, `ws_echo::server<Liveness>`:
//
//   separate_objects  idle_watch + heartbeat + two operation_deadlines (handshake, close) per
//                     session, with the rules beast.hpp lists applied by hand;
//   one_object        one idlewheel::beast::websocket_liveness per session, which applies them.
//
// Both have the same options, counters and close causes, so a test compares them directly.
//
// A session's life, and what ends it:
//
//   TCP accept ──(handshake deadline: bytes arriving do not extend it)──> drop
//        │ upgrade completes
//        v
//   echo loop: read a message -> write it back -> read ...
//        ├─ idle: no message for idle_timeout -> close 1000 "idle timeout"
//        │                    └─ (close deadline: the peer never answers) -> drop
//        ├─ heartbeat: quiet for ping_interval -> ping; nothing within pong_timeout -> drop
//        └─ the client closes, or an error
//
// Lifetime, the pattern to copy: the liveness objects are members of the session, and their
// callbacks reach it through `this`. That is safe because (1) while the session is alive some
// operation of it is pending and holds its shared_ptr (the handshake, then always a read or
// the write of an echo), and (2) destroying the session destroys the members, which unlinks
// them from the wheel, so no callback can run for a session that is gone. Nothing else
// (no weak_ptr, no per-session Asio timer) is needed.
//
// Threading: one thread runs the io_context, so the sessions need no strand and every call
// into the wheel happens on its executor. Scale with one io_context + server per thread.
//
// (The other servers among the tests are not this one on purpose: test_beast_tcp_stream*.cpp
// write their server side inline, because the stream type the server uses is what they test,
// and tests/cpp17/main.cpp is a C++17 user program, which this C++20 header cannot be.)

#include <idlewheel/beast.hpp>
#include <idlewheel/beast/websocket_liveness.hpp>
#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_timer.hpp>

#include "net.hpp"

#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/error.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <iostream>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace ws_echo {

namespace beast = boost::beast;          // from <boost/beast.hpp>
namespace websocket = beast::websocket;  // from <boost/beast/websocket.hpp>
using tcp = net::ip::tcp;                // from <boost/asio/ip/tcp.hpp>
using steady_clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct server_options {
    std::chrono::nanoseconds tick = 5ms;  ///< the wheel's resolution
    std::chrono::nanoseconds handshake_timeout = 5s;
    /// Which idleness closes a session: reader (no message from the client) or all (no
    /// message either way). Pings and pongs are liveness traffic and never count as activity.
    /// server<one_object> watches "no message from the client" whatever this says:
    /// for an echo server, which writes only in answer to a message, that is also "no message
    /// either way", so both values mean the same there and are counted as reader idle.
    idlewheel::idle_kind idle_kind = idlewheel::idle_kind::reader;
    std::chrono::nanoseconds idle_timeout = 60s;
    idlewheel::heartbeat_options heartbeat{};  ///< ping_interval 0: no pings
    /// How long the peer has to answer our close frame. Beast's handshake_timeout covers this
    /// with its own timeouts on; with them off, nothing would end a close the peer ignores.
    std::chrono::nanoseconds close_timeout = 5s;
    std::size_t max_message = 64 * 1024;  ///< larger messages fail the session (close 1009)
};

/// Why a session ended: the first decision wins (an idle close that then times out is idle).
enum class close_cause : std::size_t { idle, dead_peer, handshake_timeout, client_close, error, shutdown };
inline constexpr std::size_t close_cause_count = 6;

[[nodiscard]] inline const char* to_string(close_cause c) noexcept {
    constexpr std::array<const char*, close_cause_count> names = {
        "idle", "dead peer", "handshake timeout", "client close", "error", "shutdown"};
    return names[static_cast<std::size_t>(c)];
}

/// One ended session.
struct session_record {
    close_cause cause;
    steady_clock::duration after_accept;                  ///< from the TCP accept to the decision to close
    std::optional<steady_clock::duration> after_upgrade;  ///< from the upgrade to it, if there was one
};

/// What the server saw. Owned by the io_context's thread: read it there (or after run()).
struct server_counters {
    std::size_t accepted = 0;       ///< TCP connections
    std::size_t upgraded = 0;       ///< WebSocket handshakes completed
    std::size_t open = 0;           ///< sessions alive now
    std::size_t echoed = 0;         ///< messages read (and written back)
    std::size_t pings = 0;          ///< pings written
    std::size_t pings_skipped = 0;  ///< send_ping while a ping was still in flight, or closing
    std::vector<session_record> closed;  ///< in the order the sessions ended

    [[nodiscard]] std::size_t count(close_cause c) const {
        return static_cast<std::size_t>(
            std::count_if(closed.begin(), closed.end(), [c](const session_record& r) { return r.cause == c; }));
    }
};

/// What a session keeps of its own life, in the server's counters: open from construction to
/// destruction, then one session_record; the upgrade; the first verdict, which is the cause
/// (what follows from it, e.g. the aborted read, is not). Both session classes hold one.
class session_timeline {
public:
    explicit session_timeline(server_counters& counters) : counters_(counters) { ++counters_.open; }
    session_timeline(const session_timeline&) = delete;
    session_timeline& operator=(const session_timeline&) = delete;
    ~session_timeline() {
        std::optional<steady_clock::duration> after_upgrade;
        if (upgraded_at_) after_upgrade = decided_at_ - *upgraded_at_;
        counters_.closed.push_back({cause_.value_or(close_cause::error), decided_at_ - accepted_at_, after_upgrade});
        --counters_.open;
    }

    /// `at`: no later than the moment the liveness starts its idle clock (a lower bound checked
    /// against this record must not count from a later point than the library does).
    void upgraded(steady_clock::time_point at) {
        ++counters_.upgraded;
        upgraded_at_ = at;
    }
    /// The session's verdict if it is the first; true if it was (false: an earlier one stands).
    bool decide(close_cause cause) {
        if (cause_) return false;
        cause_ = cause;
        decided_at_ = steady_clock::now();
        return true;
    }

private:
    server_counters& counters_;
    steady_clock::time_point accepted_at_ = steady_clock::now();
    std::optional<steady_clock::time_point> upgraded_at_;
    steady_clock::time_point decided_at_{};
    std::optional<close_cause> cause_;
};

/// Reports a failure nobody asked for (Beast example's fail()). Outcomes the server chose
/// (idle, dead peer, handshake timeout, shutdown) and clean closes are not failures.
inline void fail(beast::error_code ec, const char* what) {
    std::cerr << "ws_echo: " << what << ": " << ec.message() << "\n";
}

// How a session holds its liveness: the option that tells the two forms of the server apart
// (tag types, not an enum, so that Boost.Test names a templated case by them).
struct separate_objects {};  ///< idle_watch + heartbeat + two operation_deadlines, beast.hpp's rules by hand
struct one_object {};        ///< one idlewheel::beast::websocket_liveness

/// The echo server, in the form `Liveness` names (see the top of this file): the wheel, the
/// listener on 127.0.0.1, the accept loop (backing off on the wheel after an error), stop()
/// and the counters are the same in both; the session class is one per style, below.
template <class Liveness = separate_objects>
class server {
    static_assert(std::is_same_v<Liveness, separate_objects> || std::is_same_v<Liveness, one_object>);

public:
    /// Whether the server counts reader and all idleness apart (one_object counts every idle
    /// close as reader idle: see server_options::idle_kind).
    static constexpr bool distinguishes_idle_kinds = std::is_same_v<Liveness, separate_objects>;

    /// Binds 127.0.0.1 on a free port and listens. Call run() to start accepting.
    server(net::io_context& ioc, const server_options& options)
        : options_(options), wheel_(ioc, {.tick = options.tick}), config_(make_config(*this, options)), acceptor_(ioc) {
        const tcp::endpoint endpoint{net::ip::address_v4::loopback(), 0};
        acceptor_.open(endpoint.protocol());
        acceptor_.set_option(net::socket_base::reuse_address(true));
        acceptor_.bind(endpoint);
        acceptor_.listen(net::socket_base::max_listen_connections);
        port_ = acceptor_.local_endpoint().port();
    }
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// Starts accepting. Before the io_context runs, or on its thread.
    void run() { do_accept(); }

    /// On the io_context's thread: stops accepting and drops every session. Once their
    /// pending operations have completed (at once, with operation_aborted) nothing is left:
    /// io_context::run() returns.
    void stop() {
        beast::error_code ignored;
        acceptor_.close(ignored);
        // Sessions leave the set only when their handlers are done.
        for (session* s : sessions_) s->shut_down();
    }

    /// The port run() accepts on; fixed at construction, so any thread may read it.
    [[nodiscard]] unsigned short port() const noexcept { return port_; }
    [[nodiscard]] const server_counters& counters() const noexcept { return counters_; }
    [[nodiscard]] const idlewheel::wheel_timer& wheel() const noexcept { return wheel_; }
    [[nodiscard]] const idlewheel::liveness_stats& liveness() const noexcept { return live_; }

private:
    // One class per style, below: a constructor (server&, tcp::socket&&), run(), shut_down();
    // it registers in sessions_.
    class session;

    struct no_config {};
    using config_type = std::conditional_t<std::is_same_v<Liveness, one_object>,
                                           idlewheel::beast::websocket_liveness_config<session>, no_config>;
    static config_type make_config(server& self, const server_options& o);

    void do_accept() { acceptor_.async_accept(beast::bind_front_handler(&server::on_accept, this)); }

    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (!acceptor_.is_open()) return;  // stopped (this accept may have completed just before)
        if (ec) {
            fail(ec, "accept");
            // Out of descriptors (or the like): retrying at once would spin. The wheel is
            // right here, so back off on it.
            wheel_.async_wait(50ms, [this](idlewheel::error_code wait_ec) {
                if (wait_ec != net::error::operation_aborted && acceptor_.is_open()) do_accept();
            });
            return;
        }
        ++counters_.accepted;
        std::make_shared<session>(*this, std::move(socket))->run();
        do_accept();
    }

    server_options options_;
    idlewheel::wheel_timer wheel_;    // one for every session of this io_context
    idlewheel::liveness_stats live_;  // what every session's liveness decided
    // one_object: shared by every session. Not [[no_unique_address]]: that would move the one
    // make_config() returns, and a config does not move.
    config_type config_;
    server_counters counters_;
    std::unordered_set<session*> sessions_;  // the live ones, for stop()
    tcp::acceptor acceptor_;
    unsigned short port_ = 0;
};

template <>
class server<separate_objects>::session : public std::enable_shared_from_this<session> {
public:
    session(server<separate_objects>& owner, tcp::socket&& socket)
        : server_(owner),
          ws_(std::move(socket)),
          handshake_(owner.wheel_, idlewheel::bind_member<&session::on_handshake_late>(this),
                     idlewheel::error::handshake_timeout, &owner.live_),
          close_deadline_(owner.wheel_, idlewheel::bind_member<&session::on_close_late>(this),
                          idlewheel::error::close_timeout, &owner.live_),
          idle_(owner.wheel_, idlewheel::bind_member<&session::on_idle>(this), idle_options_for(owner.options_),
                &owner.live_),
          heartbeat_(owner.wheel_, idlewheel::bind_member<&session::on_heartbeat>(this), owner.options_.heartbeat,
                     &owner.live_) {
        server_.sessions_.insert(this);
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    // The last pending operation has completed. The liveness members are destroyed after this
    // body, which unlinks them from the wheel.
    ~session() {
        server_.sessions_.erase(this);
    }

    void run() {
        // The handshake deadline runs from the accept: a client that trickles its upgrade
        // request a byte at a time must not keep the session forever.
        handshake_.expires_after(server_.options_.handshake_timeout);
        // idlewheel does the timing: Beast's handshake, idle and keep-alive timeouts stay off.
        ws_.set_option(websocket::stream_base::timeout{websocket::stream_base::none(), websocket::stream_base::none(), false});
        ws_.read_message_max(server_.options_.max_message);
        // Pongs (and any control frame) prove the peer alive; they are not messages, so they
        // feed the heartbeat only, never the idle watch.
        idlewheel::beast::report_control_frames(ws_, heartbeat_);
        ws_.async_accept(beast::bind_front_handler(&session::on_accept, shared_from_this()));
    }

    void shut_down() {
        timeline_.decide(close_cause::shutdown);
        idlewheel::beast::drop(ws_);
    }

private:
    static idlewheel::idle_options idle_options_for(const server_options& o) {
        idlewheel::idle_options watch;
        switch (o.idle_kind) {
            case idlewheel::idle_kind::reader: watch.reader = o.idle_timeout; break;
            case idlewheel::idle_kind::writer: watch.writer = o.idle_timeout; break;
            case idlewheel::idle_kind::all: watch.all = o.idle_timeout; break;
        }
        return watch;
    }

    // Nothing may report once the session is on its way out.
    void stop_watching() noexcept {
        idle_.stop();
        heartbeat_.stop();
    }

    void on_accept(beast::error_code ec) {
        // The deadline may have fired after the upgrade completed but before this handler
        // ran; its verdict stands (the socket is already closed).
        if (handshake_.expired()) return;
        handshake_.cancel();
        if (ec) {
            timeline_.decide(close_cause::error);
            return fail(ec, "accept");
        }
        timeline_.upgraded(steady_clock::now());  // before idle_.start(): see session_timeline::upgraded
        idle_.start();
        heartbeat_.start();
        do_read();
    }

    void do_read() {
        // This pending read is what keeps the session (and so its liveness members) alive.
        ws_.async_read(buffer_, beast::bind_front_handler(&session::on_read, shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t) {
        if (ec) {
            stop_watching();
            // websocket::error::closed: the peer's close (or our idle close done); otherwise, if a
            // verdict came first, we dropped it: the read was aborted on purpose
            if (ec == websocket::error::closed) timeline_.decide(close_cause::client_close);
            else if (timeline_.decide(close_cause::error)) fail(ec, "read");
            return;
        }
        idle_.on_read();  // stores; no timer is touched
        heartbeat_.on_inbound();
        ++server_.counters_.echoed;
        ws_.text(ws_.got_text());
        ws_.async_write(buffer_.data(), beast::bind_front_handler(&session::on_write, shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t bytes) {
        if (ec) {
            stop_watching();
            if (timeline_.decide(close_cause::error)) fail(ec, "write");
            return;
        }
        idle_.on_write();
        buffer_.consume(bytes);
        do_read();
    }

    void on_handshake_late() {
        timeline_.decide(close_cause::handshake_timeout);
        idlewheel::beast::drop(ws_);  // the pending accept completes with operation_aborted
    }

    void on_idle(idlewheel::idle_kind, bool) {
        // A close the client started may be under way (Beast asserts on a second close).
        if (closing_ || !ws_.is_open()) return;
        timeline_.decide(close_cause::idle);
        closing_ = true;
        stop_watching();
        close_deadline_.expires_after(server_.options_.close_timeout);
        // The pending read completes with websocket::error::closed once the client answers.
        idlewheel::beast::async_close_idle(ws_, beast::bind_front_handler(&session::on_close, shared_from_this()));
    }

    void on_close(beast::error_code ec) {
        // In the usual order the pending read finishes the handshake and this one is aborted.
        if (ec && ec != net::error::operation_aborted && ec != websocket::error::closed) fail(ec, "close");
    }

    void on_close_late() { idlewheel::beast::drop(ws_); }  // the cause stays "idle"

    void on_heartbeat(idlewheel::heartbeat_event event) {
        if (event == idlewheel::heartbeat_event::dead_peer) {
            timeline_.decide(close_cause::dead_peer);
            stop_watching();
            return idlewheel::beast::drop(ws_);
        }
        // A ping still queued behind a write the peer does not drain is enough: never stack
        // a second one (Beast allows one pending ping).
        if (closing_ || ping_in_flight_ || !ws_.is_open()) {
            ++server_.counters_.pings_skipped;
            return;
        }
        ping_in_flight_ = true;
        ++server_.counters_.pings;
        ws_.async_ping({}, beast::bind_front_handler(&session::on_ping, shared_from_this()));
    }

    void on_ping(beast::error_code) {
        // A failed ping needs no verdict of its own: the pending read fails too.
        ping_in_flight_ = false;
    }

    server<separate_objects>& server_;
    websocket::stream<tcp::socket> ws_;  // no beast::tcp_stream: it would carry a timer per session
    beast::flat_buffer buffer_;
    idlewheel::operation_deadline handshake_;
    idlewheel::operation_deadline close_deadline_;
    idlewheel::idle_watch idle_;
    idlewheel::heartbeat heartbeat_;
    session_timeline timeline_{server_.counters_};
    bool ping_in_flight_ = false;
    bool closing_ = false;
};

template <>
inline server<separate_objects>::config_type server<separate_objects>::make_config(server&, const server_options&) {
    return {};
}

/// The same server on one idlewheel::beast::websocket_liveness per session, instead of the
/// separate objects and the rules beast.hpp lists: the object arms the handshake deadline at
/// accept, sends at most one ping, closes once (and never after the peer started a close),
/// bounds the close handshake, and drops the socket on a verdict. The session only reports
/// what it decided (on_liveness) and asks the object whether to go on (accepted(), on_read()).
template <>
class server<one_object>::session : public std::enable_shared_from_this<session> {
public:
    session(server<one_object>& owner, tcp::socket&& socket)
        : ws_(std::move(socket)), server_(owner), live_(owner.config_, *this) {
        server_.sessions_.insert(this);
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    ~session() {
        server_.sessions_.erase(this);
    }

    void run() {
        live_.start();  // the handshake deadline runs from the accept, before the HTTP read
        ws_.read_message_max(server_.options_.max_message);
        ws_.async_accept(beast::bind_front_handler(&session::on_accept, shared_from_this()));
    }

    void shut_down() {
        timeline_.decide(close_cause::shutdown);
        live_.drop();
    }

    // What the liveness object decided (it has already acted on it).
    void on_liveness(idlewheel::liveness_event e) {
        switch (e) {
            case idlewheel::liveness_event::send_ping: ++server_.counters_.pings; break;
            case idlewheel::liveness_event::idle: timeline_.decide(close_cause::idle); break;
            case idlewheel::liveness_event::dead_peer: timeline_.decide(close_cause::dead_peer); break;
            case idlewheel::liveness_event::handshake_timeout: timeline_.decide(close_cause::handshake_timeout); break;
            case idlewheel::liveness_event::close_timeout: break;  // the cause stays what started the close
        }
    }

    websocket::stream<tcp::socket> ws_;  // before live_: the object's owner holds the stream

private:
    void on_accept(beast::error_code ec) {
        const auto upgraded_at = steady_clock::now();  // before accepted(): idle runs from inside it
        if (!live_.accepted(ec)) {
            if (ec && !live_.has_verdict()) {
                timeline_.decide(close_cause::error);
                fail(ec, "accept");
            }
            return;
        }
        timeline_.upgraded(upgraded_at);
        do_read();
    }

    void do_read() { ws_.async_read(buffer_, beast::bind_front_handler(&session::on_read, shared_from_this())); }

    void on_read(beast::error_code ec, std::size_t) {
        if (!live_.on_read(ec)) {
            if (ec == websocket::error::closed) timeline_.decide(close_cause::client_close);
            else if (ec && timeline_.decide(close_cause::error)) fail(ec, "read");
            return;
        }
        ++server_.counters_.echoed;
        ws_.text(ws_.got_text());
        ws_.async_write(buffer_.data(), beast::bind_front_handler(&session::on_write, shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t bytes) {
        if (ec) {
            live_.stop();
            if (timeline_.decide(close_cause::error)) fail(ec, "write");
            return;
        }
        buffer_.consume(bytes);
        do_read();
    }

    server<one_object>& server_;
    idlewheel::beast::websocket_liveness<session> live_;
    beast::flat_buffer buffer_;
    session_timeline timeline_{server_.counters_};
};

template <>
inline server<one_object>::config_type server<one_object>::make_config(server& self, const server_options& o) {
    return {self.wheel_, &session::ws_,
            idlewheel::session_liveness_options{.handshake_timeout = o.handshake_timeout,
                                                .idle_timeout = o.idle_timeout,
                                                .ping_interval = o.heartbeat.ping_interval,
                                                .pong_timeout = o.heartbeat.pong_timeout,
                                                .jitter = o.heartbeat.jitter,
                                                .close_timeout = o.close_timeout},
            idlewheel::bind_member<&session::on_liveness>(), &self.live_};
}

}  // namespace ws_echo

#endif
