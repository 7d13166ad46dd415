// HTTP + WebSocket session on the HTTP port.
//
// HTTP: GET / (the dashboard), GET /stats (JSON); keep-alive. A WebSocket upgrade turns the
// same session into a WebSocket echo (every message echoed back, text or binary).
//
// Liveness: the handshake deadline runs from accept to the end of the first request (or of the
// upgrade) and is not extended by arriving bytes (slowloris); reader idle runs from accept;
// WebSocket sessions also get a heartbeat. Outcomes: idle -> close 1000 "idle timeout"; dead
// peer and handshake timeout -> socket closed; a close handshake that does not finish within
// --close-timeout -> socket closed; message over --max-message-size -> close 1009 (Beast);
// malformed frames -> Beast's protocol close, this session only; unsent echo over
// --max-backlog -> socket closed; malformed HTTP -> 400 and close.
#ifndef IDLEWHEEL_DEMO_WEB_SESSION_HPP
#define IDLEWHEEL_DEMO_WEB_SESSION_HPP

#include "http_routes.hpp"
#include "log.hpp"
#include "timers/timer_policy.hpp"
#include "worker.hpp"

#include <idlewheel/beast.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <string>

namespace demo {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

template <class Policy>
class web_session final : public session_base, public std::enable_shared_from_this<web_session<Policy>> {
public:
    web_session(worker& w, const stats_source& stats, asio::ip::tcp::socket socket)
        : worker_(w), stats_(stats), socket_(std::move(socket)), timers_(w, *this), accepted_at_(steady::now()) {}
    web_session(const web_session&) = delete;
    web_session& operator=(const web_session&) = delete;

    ~web_session() {
        timers_.stop_all();
        worker_.remove(this);
        worker_.counters.closed_as(kind_, cause());
        worker_.release_connection();
        if (!worker_.cfg.quiet && kind_ == session_kind::websocket)
            log("websocket session closed: ", close_cause_names[static_cast<unsigned>(cause())]);
    }

    void start() {
        worker_.add(this);
        worker_.counters.opened(session_kind::http);
        boost::system::error_code ignored;
        socket_.set_option(asio::ip::tcp::no_delay(true), ignored);  // as tcp_session: no Nagle + delayed-ACK stalls on echoes
        timers_.handshake_started(accepted_at_ + worker_.cfg.handshake_timeout);
        timers_.started(false);
        read_request();
    }

    void shutdown() override {
        if (kind_ == session_kind::websocket && ws_ && !closing_) {
            // Mid-upgrade, Beast forbids async_close until async_accept completes: on_accept closes then.
            if (!ws_->is_open()) return;
            return start_close(close_cause::shutdown, {websocket::close_code::going_away, "server shutting down"});
        }
        finish(close_cause::shutdown);
    }
    void abort() override { finish(close_cause::shutdown); }

    // Timer callbacks (see timers/timer_policy.hpp).
    void on_handshake_timeout() { finish(close_cause::handshake_timeout); }
    void on_idle() {
        if (kind_ == session_kind::websocket && ws_ && ws_->is_open())
            start_close(close_cause::idle, idlewheel::beast::idle_close_reason());
        else
            finish(close_cause::idle);
    }
    void send_ping() {
        if (!ws_ || closing_ || ping_in_flight_) return;  // never two pings in flight (Beast's rule)
        ping_in_flight_ = true;
        ws_->async_ping({}, [self = this->shared_from_this()](boost::system::error_code) { self->ping_in_flight_ = false; });
    }
    void on_dead_peer() { finish(close_cause::dead_peer); }
    void on_close_timeout() { finish(close_cause::error); }

private:
    // ---- HTTP -----------------------------------------------------------------------------
    void read_request() {
        parser_.emplace();
        parser_->header_limit(8 * 1024);
        parser_->body_limit(4 * 1024);
        http::async_read(socket_, buffer_, *parser_,
                         [self = this->shared_from_this()](boost::system::error_code ec, std::size_t) { self->on_request(ec); });
    }

    void on_request(boost::system::error_code ec) {
        if (closed_) return;
        if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset)
            return finish(close_cause::client_close);
        if (ec == asio::error::operation_aborted) return finish(close_cause::error);
        if (ec) return reply_bad_request(ec);
        timers_.on_read();
        auto& req = parser_->get();
        if (websocket::is_upgrade(req)) return upgrade(parser_->release());
        timers_.handshake_done();  // one complete request: slowloris is over
        auto res = std::make_shared<http::response<http::string_body>>(route(req, stats_));
        write_response(std::move(res));
    }

    void write_response(std::shared_ptr<http::response<http::string_body>> res) {
        const bool keep_alive = res->keep_alive();
        http::async_write(socket_, *res, [self = this->shared_from_this(), res, keep_alive](boost::system::error_code ec, std::size_t) {
            if (self->closed_) return;
            if (ec) return self->finish(close_cause::error);
            if (!keep_alive) return self->finish(close_cause::client_close);
            self->read_request();
        });
    }

    void reply_bad_request(boost::system::error_code ec) {
        set_cause(close_cause::bad_request);
        if (!worker_.cfg.quiet) log("bad HTTP request: ", ec.message());
        auto res = std::make_shared<http::response<http::string_body>>(http::status::bad_request, 11);
        res->set(http::field::content_type, "text/plain");
        res->keep_alive(false);
        res->body() = "bad request: " + ec.message() + "\n";
        res->prepare_payload();
        write_response(std::move(res));
    }

    // ---- WebSocket ------------------------------------------------------------------------
    void upgrade(http::request<http::empty_body> req) {
        worker_.counters.became(session_kind::http, session_kind::websocket);
        kind_ = session_kind::websocket;
        ws_.emplace(std::move(socket_));
        ws_->set_option(websocket::stream_base::timeout{websocket::stream_base::none(), websocket::stream_base::none(), false});
        ws_->read_message_max(worker_.cfg.max_message_size);
        ws_->control_callback([this](websocket::frame_type, beast::string_view) { timers_.on_control(); });
        buffer_.clear();
        ws_->async_accept(req, [self = this->shared_from_this()](boost::system::error_code ec) { self->on_accept(ec); });
    }

    void on_accept(boost::system::error_code ec) {
        if (closed_) return;
        if (ec) return finish(close_cause::error);
        timers_.handshake_done();
        if (worker_.stopping) return shutdown();  // the server began stopping during the upgrade: 1001 now
        timers_.started(true);
        read_message();
    }

    void read_message() {
        ws_->async_read(buffer_, [self = this->shared_from_this()](boost::system::error_code ec, std::size_t n) { self->on_message(ec, n); });
    }

    void on_message(boost::system::error_code ec, std::size_t n) {
        if (closed_) return;
        if (ec) {
            if (ec == websocket::error::closed) return finish(close_cause::client_close);
            if (ec == websocket::error::message_too_big) return finish(close_cause::too_big);  // Beast sent 1009
            if (ec != asio::error::operation_aborted && !worker_.cfg.quiet) log("websocket read failed: ", ec.message());
            return finish(close_cause::error);
        }
        timers_.on_read();
        worker_.counters.messages.fetch_add(1, std::memory_order_relaxed);
        worker_.counters.bytes.fetch_add(n, std::memory_order_relaxed);
        if (!closing_) enqueue(beast::buffers_to_string(buffer_.data()), ws_->got_text());
        buffer_.consume(buffer_.size());
        if (buffer_.capacity() > 16 * 1024) buffer_.shrink_to_fit();  // a big message should not pin memory
        if (queued_ > worker_.cfg.max_backlog) return finish(close_cause::backlog);
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
        queued_ += data.size();
        queue_.push_back({std::move(data), text});
        if (!writing_) write_next();
    }

    void write_next() {
        writing_ = true;
        ws_->text(queue_.front().text);
        ws_->async_write(asio::buffer(queue_.front().data), [self = this->shared_from_this()](boost::system::error_code ec, std::size_t) {
            self->on_write(ec);
        });
    }

    void on_write(boost::system::error_code ec) {
        writing_ = false;
        if (closed_) return;
        if (ec) return finish(close_cause::error);
        queued_ -= queue_.front().data.size();
        queue_.pop_front();
        if (!queue_.empty() && !closing_) write_next();
    }

    void start_close(close_cause cause, websocket::close_reason reason) {
        if (closing_ || closed_) return;
        closing_ = true;
        set_cause(cause);
        timers_.closing();  // the close handshake gets --close-timeout, then the socket goes
        ws_->async_close(reason, [self = this->shared_from_this()](boost::system::error_code) { self->finish(close_cause::error); });
    }

    // ---- common ---------------------------------------------------------------------------
    // The one place that decides why the session ends: the first cause named wins. A close we
    // started (idle, shutdown, a bad request) keeps its cause however the socket then ends;
    // `finish(c)` names `c` only for a session that had no cause yet.
    void set_cause(close_cause c) noexcept {
        if (!cause_) cause_ = c;
    }
    [[nodiscard]] close_cause cause() const noexcept { return cause_.value_or(close_cause::error); }

    void finish(close_cause cause) {
        set_cause(cause);
        if (closed_) return;
        closed_ = true;
        timers_.stop_all();
        if (ws_)
            idlewheel::beast::drop(*ws_);
        else
            idlewheel::beast::drop(socket_);
    }

    struct outgoing {
        std::string data;
        bool text;
    };

    static_assert(web_timers<typename Policy::template web<web_session>>);

    worker& worker_;
    const stats_source& stats_;
    asio::ip::tcp::socket socket_;
    std::optional<websocket::stream<asio::ip::tcp::socket>> ws_;
    [[no_unique_address]] typename Policy::template web<web_session> timers_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::empty_body>> parser_;
    std::deque<outgoing> queue_;
    std::size_t queued_ = 0;
    steady::time_point accepted_at_;
    session_kind kind_ = session_kind::http;
    std::optional<close_cause> cause_;
    bool closing_ = false;
    bool closed_ = false;
    bool writing_ = false;
    bool ping_in_flight_ = false;
};

}  // namespace demo

#endif
