// HTTP + WebSocket session on the HTTP port.
//
// HTTP: GET / (the dashboard), GET /stats (JSON), GET /metrics (Prometheus); keep-alive. A
// WebSocket upgrade turns the same session into a WebSocket echo (every message echoed back,
// text or binary). While the server drains, plain HTTP is still served and an upgrade gets 503
// with Retry-After and Connection: close (upgrade_refused). The drain's 1001 close frame goes
// after the echo of every message read before the drain reached the session (docs/fleet.md,
// "No echo lost"); a message read after that, or once a close handshake has begun, is not
// echoed (counted in messages_unechoed).
//
// Liveness: the handshake deadline runs from accept to the end of the first request (or of the
// upgrade) and is not extended by arriving bytes (slowloris); reader idle runs from accept;
// WebSocket sessions also get a heartbeat. Outcomes: idle -> close 1000 "idle timeout" (an HTTP
// keep-alive connection: closed, http_idle); dead peer and handshake timeout -> socket closed;
// message over --max-message-size -> close 1009 (Beast); malformed frames -> Beast's protocol
// close (1002 / 1007), this session only, protocol_error; unsent echo over --max-backlog (or the
// server's over --max-backlog-total) -> socket closed; malformed HTTP or an upgrade with an
// invalid Sec-WebSocket-Key -> 400 and close.
//
// Every close handshake, whoever started it (us, the peer's close frame, Beast after a protocol
// error), is bounded by --close-timeout, and is counted by what started it, not by the timeout
// (session_stream.hpp). A peer's FIN without a close frame lets the echo already queued go out
// first, bounded like a TCP half-close: --close-timeout without write progress. An echo over
// 64 KiB goes out as fragments of 64 KiB, each one progress (write_progress.hpp).
//
// --tls (Tls = true): the same session over TLS (ssl::stream<session_stream<...>>, tls.hpp's
// context). No TLS state exists until the client's first byte arrives (a wait for readability
// on the bare socket, as nginx does): a connection that sends nothing costs what a plain one
// does. The TLS handshake comes first and counts in the handshake deadline (accept to the end
// of the first request or upgrade, not extended by bytes): a client that never sends its
// ClientHello, sends it a byte at a time, or stops halfway is closed at --handshake-timeout
// (handshake_timeout); one whose handshake fails (plain HTTP, no common version or cipher,
// garbage, a ClientHello over tls.hpp's bounds) is closed at once (tls_failed, one log line).
// After it, everything is as without TLS, but a failure of TLS itself (a fatal alert, a record
// that does not decrypt, a refused renegotiation), before a request or during a wss session,
// is counted tls_failed too and answered with nothing (no 400). A TLS peer that vanishes is
// found by the idle timeout and the heartbeat as a TCP one is. The server closes a connection by
// dropping the socket (as without TLS), without close_notify, except at the end of a WebSocket
// close handshake, where Beast exchanges close_notify within --close-timeout. A peer's FIN or
// close_notify is not held for queued echo under TLS.
//
// A close that gives up on the peer (a verdict: a deadline, a limit, an error, the hard stop)
// resets if any echo is left, queued here or unacknowledged in the kernel (reset_if_unsent,
// write_progress.hpp); the normal ends (the peer's FIN or close, the drain, a close handshake
// done, max lifetime, an answer with Connection: close) send a FIN behind what the kernel holds.
#ifndef IDLEWHEEL_DEMO_WEB_SESSION_HPP
#define IDLEWHEEL_DEMO_WEB_SESSION_HPP

#include "echo_queue.hpp"
#include "http_routes.hpp"
#include "log.hpp"
#include "message_count.hpp"
#include "session_stream.hpp"
#include "timers/timer_policy.hpp"
#include "tls.hpp"
#include "worker.hpp"
#include "write_progress.hpp"

#include <idlewheel/beast.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

namespace demo {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

template <class Policy, bool Tls = false>
class web_session final : public session_base,
                          public socket_events,
                          public std::enable_shared_from_this<web_session<Policy, Tls>> {
    // The transport is the timer policy's (Policy::web_stream): the socket in every mode
    // (timers/wheel_timers.hpp and asio_timers.hpp say why). The demo does not use the drop-in
    // stream's deadlines (expires_after, and the one-line WebSocket timeouts,
    // idlewheel::beast::set_option): its liveness is its policy's (timers_), because it needs
    // what they do not give: a deadline from accept across the TLS handshake, the request and the upgrade;
    // reader idle that ends a WebSocket with close 1000 "idle timeout" (theirs drop the
    // connection) and an HTTP keep-alive connection as http_idle; a heartbeat of its own times
    // (--ping-interval, --pong-timeout, --ping-jitter; theirs pings at idle_timeout / 2); a close
    // deadline that write progress starts again (a slow reader's drain; theirs bounds the whole
    // close); and every verdict counted in the worker's liveness_stats (/metrics).
    using transport = typename Policy::web_stream;
    using hooked = session_stream<transport>;  // the FIN hold and the teardown hooks (session_stream.hpp)
    // What HTTP runs over, and what the WebSocket stream wraps once the session upgrades.
    using layer = std::conditional_t<Tls, asio::ssl::stream<hooked>, hooked>;

public:
    web_session(worker& w, const stats_source& stats, asio::ip::tcp::socket socket)
        : worker_(w), stats_(stats), timers_(w, *this), accepted_at_(steady::now()) {
        if constexpr (Tls)
            before_hello_.emplace(std::move(socket));  // the TLS state comes with the first byte
        else
            stream_.emplace(Policy::make_web_stream(w, std::move(socket)), *this);
    }
    web_session(const web_session&) = delete;
    web_session& operator=(const web_session&) = delete;

    ~web_session() {
        timers_.stop_all();
        worker_.remove(this);
        worker_.counters.closed_as(kind_, cause());
        worker_.release_connection();
        if (!worker_.cfg.quiet && kind_ == session_kind::websocket)
            log("websocket session closed: ", to_string(cause()));
    }

    void start() {
        worker_.add(this);
        worker_.counters.opened(session_kind::http);
        boost::system::error_code ignored;
        asio::ip::tcp::socket& socket = lowest_socket();
        socket.set_option(asio::ip::tcp::no_delay(true), ignored);  // as tcp_session: no Nagle + delayed-ACK stalls on echoes
        bound_kernel_unsent(socket);
        timers_.handshake_started(accepted_at_ + worker_.cfg.handshake_timeout);
        timers_.started(false);
        if constexpr (Tls) {
            before_hello_->async_wait(
                asio::ip::tcp::socket::wait_read,
                [self = this->shared_from_this()](boost::system::error_code ec) { self->on_first_byte(ec); });
        } else {
            read_request();
        }
    }

    void shutdown() override {
        if (kind_ == session_kind::websocket && ws_) {
            // A close handshake already under way (ours, or Beast answering the peer's close
            // frame and tearing down) is left to finish: its --close-timeout runs already (with
            // --timers=none, the drain's abrupt bound), and it keeps the cause that started it.
            // Cutting it would count a client's own close as shutdown and drop its TCP (TLS:
            // close_notify) teardown half-way.
            if (closing_) return;
            // Mid-upgrade, Beast forbids async_close until async_accept completes: on_accept closes then.
            if (!ws_->is_open()) return;
            return going_away_after_echo(close_cause::shutdown);
        }
        finish(close_cause::shutdown, ending::normal);  // plain HTTP: the drain's end
    }
    void abort() override { finish(close_cause::shutdown); }
    [[nodiscard]] std::size_t unsent_bytes() const noexcept override { return closed_ ? 0 : echo_.unsent(); }
    void drop_over_budget() override {
        if (!worker_.cfg.quiet)
            log("websocket session dropped: ", echo_.unsent(), " bytes unsent, server over --max-backlog-total");
        finish(close_cause::backlog_budget);
    }

    // Timer callbacks (see timers/timer_policy.hpp).
    void on_handshake_timeout() { finish(close_cause::handshake_timeout); }
    void on_idle() {
        if (kind_ == session_kind::http) return finish(close_cause::http_idle);
        if (ws_ && ws_->is_open()) return start_close(close_cause::idle, idlewheel::beast::idle_close_reason());
        finish(close_cause::idle);
    }
    void send_ping() {
        if (!ws_ || closing_ || ping_in_flight_) return;  // never two pings in flight (Beast's rule)
        ping_in_flight_ = true;
        ws_->async_ping(
            {}, [self = this->shared_from_this()](boost::system::error_code) { self->ping_in_flight_ = false; });
    }
    void on_dead_peer() { finish(close_cause::dead_peer); }
    // --max-lifetime: as the drain's turn (1001, after the echo of what was read), so that a
    // client moves to another server (through a balancer: the least loaded) losing nothing.
    void on_max_lifetime() {
        if (kind_ == session_kind::http) return finish(close_cause::max_lifetime, ending::normal);
        if (closing_) return;
        if (ws_ && ws_->is_open()) return going_away_after_echo(close_cause::max_lifetime);
        finish(close_cause::max_lifetime, ending::normal);  // mid-upgrade
    }
    [[nodiscard]] steady::time_point last_active() const noexcept override { return last_active_; }
    [[nodiscard]] bool plain_http() const noexcept override { return kind_ == session_kind::http; }
    void on_close_timeout() {
        if (ws_ && hooks().in_teardown()) {
            // The close frames are exchanged; the peer did not close TCP in time. Beast
            // completes the operation that started the close with its own outcome.
            if (!worker_.cfg.quiet)
                log("websocket: the peer did not end TCP within --close-timeout after the close frames");
            return hooks().end_teardown();
        }
        if (draining_) {
            if (!worker_.cfg.quiet)
                log("websocket: peer sent FIN and read nothing for --close-timeout (", progress_.quiet_ms(),
                    " ms since the last write progress), ", echo_.unsent(), " bytes dropped");
            return finish(close_cause::client_close);
        }
        if (cause_ == close_cause::client_close) {  // its close frame is still unanswered: our echo is stuck
            if (!worker_.cfg.quiet)
                log("websocket: peer sent a close frame and read nothing for --close-timeout (", progress_.quiet_ms(),
                    " ms since the last write progress), ", echo_.unsent(), " bytes dropped");
            return finish(close_cause::client_close);
        }
        finish(close_cause::error);
    }
    // --timers=wheel: the hook of the session's idlewheel::member_liveness (timers/wheel_timers.hpp).
    void on_liveness(idlewheel::liveness_event e) {
        switch (e) {
            case idlewheel::liveness_event::idle: return on_idle();
            case idlewheel::liveness_event::send_ping: return send_ping();
            case idlewheel::liveness_event::dead_peer: return on_dead_peer();
            case idlewheel::liveness_event::handshake_timeout: return on_handshake_timeout();
            case idlewheel::liveness_event::close_timeout: return on_close_timeout();
        }
    }

    // ---- socket_events (session_stream.hpp) -------------------------------------------------
    bool hold_end_of_stream() override {
        if (Tls) return false;  // under TLS the FIN reaches the TLS layer first (session_stream.hpp)
        if (closing_ || closed_ || echo_.empty()) return false;
        draining_ = true;   // FIN without a close frame: send what is queued first
        progress_.mark();
        timers_.closing();  // --close-timeout without write progress ends the drain
        return true;
    }
    void teardown_started() override {
        if (closing_) return;  // our own close: its deadline already runs
        closing_ = true;       // Beast answered the peer's close frame, or failed the stream
        progress_.mark();
        timers_.closing();
    }

private:
    // ---- TLS ------------------------------------------------------------------------------
    // The first byte arrived (or the peer closed): now the TLS state, bounded while the handshake
    // runs (tls.hpp's max_client_hello, max_handshake_input).
    void on_first_byte(boost::system::error_code ec) {
        if constexpr (Tls) {
            if (closed_) return;  // the handshake deadline (or the server's stop) closed the socket
            if (ec) return finish(close_cause::error);
            stream_.emplace(hooked(Policy::make_web_stream(worker_, std::move(*before_hello_)), *this),
                            *worker_.tls_context);
            before_hello_.reset();
            hooks().limit_handshake(max_client_hello, max_handshake_input);
            stream_->async_handshake(asio::ssl::stream_base::server,
                                     [self = this->shared_from_this()](boost::system::error_code handshake_ec) {
                                         self->on_tls_handshake(handshake_ec);
                                     });
        }
    }

    void on_tls_handshake(boost::system::error_code ec) {
        if (closed_) return;  // the handshake deadline (or the server's stop) closed the socket
        if (ec) {
            if (const char* refusal = hooks().handshake_refusal()) {
                if (!worker_.cfg.quiet)
                    log("tls handshake failed: ", refusal, " (ClientHello at most ", max_client_hello, " bytes, ",
                        max_handshake_input, " bytes before the handshake completes)");
                return finish(close_cause::tls_failed);
            }
            // The peer closed before or during its handshake: as a client that goes away.
            if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated)
                return finish(close_cause::client_close, ending::normal);
            if (!worker_.cfg.quiet) log("tls handshake failed: ", ec.message());
            return finish(close_cause::tls_failed);
        }
        hooks().end_handshake_limit();
        read_request();
    }

    // A failure of TLS itself, not of what runs over it: an alert from the peer, a record that
    // does not decrypt, a refused renegotiation (OpenSSL's errors, Asio's TLS stream errors;
    // stream_truncated, a FIN without close_notify, is taken as the peer's close before this).
    static bool tls_failure(const boost::system::error_code& ec) noexcept {
        return Tls && (ec.category() == asio::error::get_ssl_category() ||
                       ec.category() == asio::ssl::error::get_stream_category());
    }

    // After the handshake: tls_failed, never an HTTP answer (the TLS stream is broken).
    void fail_tls(const char* during, const boost::system::error_code& ec) {
        if (!worker_.cfg.quiet) log("tls failed after the handshake, ", during, ": ", ec.message());
        finish(close_cause::tls_failed);
    }

    // ---- HTTP -----------------------------------------------------------------------------
    void read_request() {
        parser_.emplace();
        parser_->header_limit(8 * 1024);
        parser_->body_limit(4 * 1024);
        http::async_read(
            *stream_, buffer_, *parser_,
            [self = this->shared_from_this()](boost::system::error_code ec, std::size_t) { self->on_request(ec); });
    }

    void on_request(boost::system::error_code ec) {
        if (closed_) return;
        if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
            ec == asio::ssl::error::stream_truncated)  // TLS: the peer closed TCP without close_notify
            return finish(close_cause::client_close, ending::normal);
        if (ec == asio::error::operation_aborted) return finish(close_cause::error);
        if (tls_failure(ec)) return fail_tls("reading a request", ec);
        if (ec) return reply_bad_request(ec.message());
        timers_.on_read();
        last_active_ = worker_.coarse_now.load(std::memory_order_relaxed);
        auto& req = parser_->get();
        if (websocket::is_upgrade(req)) {
            if (worker_.draining) return reply_unavailable();
            // Beast 1.81 checks only that the key is there and at most 24 characters.
            if (!valid_websocket_key(req[http::field::sec_websocket_key]))
                return reply_bad_request("invalid Sec-WebSocket-Key (RFC 6455 4.2.1: the base64 of 16 bytes)");
            return upgrade(parser_->release());
        }
        timers_.handshake_done();  // one complete request: slowloris is over
        auto res = std::make_shared<http::response<http::string_body>>(route(req, stats_));
        write_response(std::move(res));
    }

    void write_response(std::shared_ptr<http::response<http::string_body>> res) {
        const bool keep_alive = res->keep_alive();
        http::async_write(
            *stream_, *res,
            [self = this->shared_from_this(), res, keep_alive](boost::system::error_code ec, std::size_t) {
                if (self->closed_) return;
                if (self->tls_failure(ec)) return self->fail_tls("writing a response", ec);
                if (ec) return self->finish(close_cause::error);
                if (!keep_alive) return self->finish(close_cause::client_close, ending::normal);
                self->read_request();
            });
    }

    // Sec-WebSocket-Key: 22 base64 characters and "==" (16 bytes encoded).
    static bool valid_websocket_key(beast::string_view key) noexcept {
        constexpr beast::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        if (key.size() != 24 || key.substr(22) != "==") return false;
        for (std::size_t i = 0; i < 22; ++i)
            if (alphabet.find(key[i]) == beast::string_view::npos) return false;
        return true;
    }

    void reply_bad_request(const std::string& why) {
        set_cause(close_cause::bad_request);
        if (!worker_.cfg.quiet) log("bad HTTP request: ", why);
        auto res = std::make_shared<http::response<http::string_body>>(http::status::bad_request, 11);
        res->set(http::field::content_type, "text/plain");
        res->keep_alive(false);
        res->body() = "bad request: " + why + "\n";
        res->prepare_payload();
        write_response(std::move(res));
    }

    // The server drains: no new WebSocket. The client is told to go elsewhere (or come back
    // after the restart) and the connection is closed.
    void reply_unavailable() {
        set_cause(close_cause::upgrade_refused);
        timers_.handshake_done();
        auto res = std::make_shared<http::response<http::string_body>>(http::status::service_unavailable, 11);
        res->set(http::field::server, "idlewheel demo_server");
        res->set(http::field::content_type, "text/plain");
        res->set(http::field::retry_after, "1");
        res->keep_alive(false);
        res->body() = "server shutting down: no new WebSocket sessions\n";
        res->prepare_payload();
        write_response(std::move(res));
    }

    // ---- WebSocket ------------------------------------------------------------------------
    void upgrade(http::request<http::empty_body> req) {
        worker_.counters.became(session_kind::http, session_kind::websocket);
        kind_ = session_kind::websocket;
        ws_.emplace(std::move(*stream_), worker_.cfg.max_message_size);
        stream_.reset();
        ws_->set_option(
            websocket::stream_base::timeout{websocket::stream_base::none(), websocket::stream_base::none(), false});
        ws_->read_message_max(worker_.cfg.max_message_size);
        ws_->control_callback([this](websocket::frame_type kind, beast::string_view) {
            if (kind == websocket::frame_type::close) return peer_sent_close();
            timers_.on_control();
        });
        buffer_.clear();
        ws_->async_accept(req,
                          [self = this->shared_from_this()](boost::system::error_code ec) { self->on_accept(ec); });
    }

    // The peer's close frame arrived (Beast's read saw it). Beast answers it only once it holds
    // the write, which an echo stuck behind a peer that does not read keeps: so the close
    // deadline starts here, not at Beast's teardown, and the close is the client's from now on
    // (client_close, however the socket then ends). Our own close already under way keeps its
    // cause and its deadline. No more echo goes out after the piece being written: Beast's
    // answer is next.
    void peer_sent_close() {
        if (closing_ || closed_) return;
        closing_ = true;
        set_cause(close_cause::client_close);
        progress_.mark();
        timers_.closing();
    }

    void on_accept(boost::system::error_code ec) {
        if (closed_) return;
        if (tls_failure(ec)) return fail_tls("answering the upgrade", ec);
        if (ec) return finish(close_cause::error);
        timers_.handshake_done();
        if (worker_.draining) return shutdown();  // the server began stopping during the upgrade: 1001 now
        timers_.started(true);
        read_message();
    }

    void read_message() {
        ws_->async_read(buffer_, [self = this->shared_from_this()](boost::system::error_code ec, std::size_t n) {
            self->on_message(ec, n);
        });
    }

    void on_message(boost::system::error_code ec, std::size_t n) {
        if (closed_) return;
        if (ec) {
            if (ec == websocket::error::closed) return finish(close_cause::client_close, ending::normal);
            if (ec == websocket::error::message_too_big) return finish(close_cause::too_big);  // Beast sent 1009
            if (ec == asio::error::eof)  // FIN, queued echo sent first
                return finish(close_cause::client_close, ending::normal);
            if (ec == asio::ssl::error::stream_truncated)  // TLS: FIN, no close_notify
                return finish(close_cause::client_close, ending::normal);
            if (ec == websocket::condition::protocol_violation) {  // Beast sent 1002 / 1007
                if (!worker_.cfg.quiet) log("websocket protocol error: ", ec.message());
                return finish(close_cause::protocol_error);
            }
            if (tls_failure(ec)) return fail_tls("reading a message", ec);
            if (ec != asio::error::operation_aborted && !worker_.cfg.quiet)
                log("websocket read failed: ", ec.message());
            return finish(close_cause::error);
        }
        timers_.on_read();
        last_active_ = worker_.coarse_now.load(std::memory_order_relaxed);
        ++delivered_;
        worker_.counters.messages.fetch_add(1, std::memory_order_relaxed);
        worker_.counters.bytes.fetch_add(n, std::memory_order_relaxed);
        if (!closing_ && !close_after_echo_)
            enqueue(beast::buffers_to_string(buffer_.data()), ws_->got_text());
        else  // read after our close frame (or the drain's) was decided: not echoed (the client has to send it again)
            worker_.counters.messages_unechoed.fetch_add(1, std::memory_order_relaxed);
        buffer_.consume(buffer_.size());
        if (buffer_.capacity() > 16 * 1024) buffer_.shrink_to_fit();  // a big message should not pin memory
        if (echo_.unsent() > worker_.cfg.max_backlog) return finish(close_cause::backlog);
        if (worker_.over_backlog_budget()) {
            worker_.enforce_backlog_budget();
            if (closed_) return;
        }
        // Once our close handshake is under way, Beast's close operation reads (and discards)
        // until the peer's close frame itself: no new read. A new read could deadlock with it
        // (Beast 1.81): if the peer's close frame is already buffered, the read defers itself
        // holding the read lock (control callback set); the close op, its close frame written,
        // then waits for the read lock and the read for the write lock. Neither ever completes,
        // not even when the socket is dropped, and the session (and shutdown) hangs forever.
        if (closing_) return;
        read_message();
    }

    void enqueue(std::string data, bool text) {
        echo_.push({std::move(data), text});
        if (!writing_) write_next();
    }

    // The front message's next fragment (the whole message if it is at most write_piece): every
    // fragment that goes out is progress. Pings and our close frame may go between fragments.
    void write_next() {
        writing_ = true;
        if (echo_.front_sent() == 0) ws_->text(echo_.front().text);
        ws_->async_write_some(
            echo_.next_piece_ends_message(), echo_.next_piece(),
            [self = this->shared_from_this()](boost::system::error_code ec, std::size_t n) { self->on_write(ec, n); });
    }

    void on_write(boost::system::error_code ec, std::size_t n) {
        writing_ = false;
        if (closed_) return;
        if (tls_failure(ec)) return fail_tls("writing a message", ec);
        if (ec) return finish(close_cause::error);
        const bool whole = echo_.written(n);
        if (draining_ || closing_) {
            progress_.mark();
            timers_.on_write_progress();  // the close deadline starts again
        }
        if (!whole) {
            if (!closing_) write_next();  // closing: our close frame goes next, mid-message or not
            return;
        }
        if (echo_.empty() && close_after_echo_ && !draining_)
            return start_close(after_echo_cause_, going_away(after_echo_cause_));
        if (!echo_.empty() && !closing_) {
            write_next();
        } else if (echo_.empty() && draining_) {
            hooks().release_end_of_stream();  // everything echoed: Beast may see the FIN now
        }
    }

    // A 1001 close (the drain's turn, --max-lifetime) that keeps every message already read:
    // with echo still queued the close waits until the queue is empty (on_write). Reading goes
    // on meanwhile (the peer's own close frame or FIN must be seen), but what is read from now
    // on is not echoed (counted in messages_unechoed, as after the close frame): otherwise a
    // client that never pauses would keep the queue full and get no 1001 before the drain's
    // abrupt bound (--close-timeout after the spread). The first cause asked for is kept.
    void going_away_after_echo(close_cause cause) {
        if (close_after_echo_) return;
        if (!echo_.empty()) {
            close_after_echo_ = true;
            after_echo_cause_ = cause;
            return;
        }
        start_close(cause, going_away(cause));
    }

    void start_close(close_cause cause, websocket::close_reason reason) {
        if (closing_ || closed_) return;
        closing_ = true;
        set_cause(cause);
        if (reason.code == websocket::close_code::going_away)
            worker_.counters.going_away.fetch_add(1, std::memory_order_relaxed);
        progress_.mark();
        timers_.closing();  // the close handshake gets --close-timeout, then the socket goes
        // Done (both close frames, the teardown): a normal end, whatever cause started it.
        ws_->async_close(reason, [self = this->shared_from_this()](boost::system::error_code ec) {
            self->finish(close_cause::error, ec ? ending::give_up : ending::normal);
        });
    }

    // ---- common ---------------------------------------------------------------------------
    // The one place that decides why the session ends: the first cause named wins. A close we
    // started (idle, shutdown, a bad request) keeps its cause however the socket then ends;
    // `finish(c)` names `c` only for a session that had no cause yet.
    void set_cause(close_cause c) noexcept {
        if (!cause_) cause_ = c;
    }
    [[nodiscard]] close_cause cause() const noexcept { return cause_.value_or(close_cause::error); }

    // normal: the peer's FIN or close, the drain, a close handshake done, max lifetime, an answer
    // with Connection: close; give_up: a verdict on the peer, which resets if any echo is left
    // (the header's comment).
    enum class ending { normal, give_up };

    void finish(close_cause cause, ending how = ending::give_up) {
        set_cause(cause);
        if (closed_) return;
        closed_ = true;
        timers_.stop_all();
        echo_.leave_budget();  // out of the server's budget now; freed with the session
        // Not echoed: what is still queued, and what Beast read but never handed on (the
        // messages its close operation discarded after our close frame, or left in its buffer);
        // the latter are messages read too (so that messages less messages_unechoed is what
        // went out).
        if (kind_ == session_kind::websocket) {
            // Every frame passes the counting layer, so it never counts fewer than delivered_;
            // the guard keeps a miscount from wrapping the counters round.
            const std::uint64_t counted = ws_->next_layer().messages_read();
            const std::uint64_t undelivered = counted > delivered_ ? counted - delivered_ : 0;
            worker_.counters.messages.fetch_add(undelivered, std::memory_order_relaxed);
            worker_.counters.messages_unechoed.fetch_add(echo_.size() + undelivered, std::memory_order_relaxed);
        }
        // Echo abandoned: reset rather than a FIN queued behind it (as tcp_session), so no orphan.
        if (how == ending::give_up || echo_.unsent() > 0) reset_if_unsent(lowest_socket(), echo_.unsent());
        if (ws_) {
            idlewheel::beast::drop(*ws_);
            hooks().release_end_of_stream();  // a held FIN completes Beast's read now
        } else if (stream_) {
            idlewheel::beast::drop(*stream_);
        } else {
            idlewheel::beast::drop(lowest_socket());  // --tls, before the first byte
        }
    }

    static websocket::close_reason going_away(close_cause why) {
        return {websocket::close_code::going_away, why == close_cause::max_lifetime ? "max lifetime" : "server shutting down"};
    }

    // The hooks' layer (not before the first byte under --tls).
    [[nodiscard]] hooked& hooks() noexcept {
        if (ws_) return hooks_of(ws_->next_layer().next_layer());
        return hooks_of(*stream_);
    }

    [[nodiscard]] asio::ip::tcp::socket& lowest_socket() noexcept {
        if constexpr (Tls) {
            if (!ws_ && !stream_) return *before_hello_;
        }
        return hooks().socket();
    }

    struct outgoing {
        std::string data;
        bool text;
    };

    static_assert(web_timers<typename Policy::template web<web_session>>);

    worker& worker_;
    const stats_source& stats_;
    // --tls: the accepted socket until its first byte arrives (then moved into stream_).
    [[no_unique_address]] std::conditional_t<Tls, std::optional<asio::ip::tcp::socket>, std::monostate> before_hello_;
    std::optional<layer> stream_;  // HTTP (TLS: from the first byte); moved into ws_ at the upgrade
    std::optional<websocket::stream<message_counting_stream<layer>>> ws_;
    [[no_unique_address]] typename Policy::template web<web_session> timers_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::empty_body>> parser_;
    echo_queue<outgoing> echo_{worker_};
    std::uint64_t delivered_ = 0;  // messages Beast handed to on_message (against ws_'s count of messages read)
    steady::time_point accepted_at_;
    steady::time_point last_active_ = worker_.coarse_now.load(std::memory_order_relaxed);
    progress_stamp progress_;  // while draining or closing: the last write progress, for the drop's log line
    session_kind kind_ = session_kind::http;
    std::optional<close_cause> cause_;
    bool closing_ = false;   // a close handshake is under way: no new read, no more echo
    bool close_after_echo_ = false;  // a 1001 was asked for: it goes once the queue is empty; nothing more is queued
    close_cause after_echo_cause_ = close_cause::shutdown;  // what asked for it (the drain, --max-lifetime)
    bool draining_ = false;  // the peer sent FIN: sending what is queued, then closing
    bool closed_ = false;
    bool writing_ = false;
    bool ping_in_flight_ = false;
};

}  // namespace demo

#endif
