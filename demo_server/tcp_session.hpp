// Raw TCP echo session: echoes bytes as they come, or whole lines (--tcp-echo=lines).
//
// Idle connections hold no read buffer: the session waits for readability and then reads into
// its worker's scratch buffer, so 19 000 quiet clients cost the socket and the session object
// only. Echoed data waits in a queue bounded by --max-backlog (and, for all sessions together,
// --max-backlog-total): a client that never reads is dropped instead of growing the server's
// memory.
//
// A half-close (the client's FIN) ends the input, not the echo: the session stops reading,
// sends what is still queued, then closes (client_close). The drain is bounded: by the queue
// limits, and by --close-timeout without write progress (then the rest is dropped; cause
// client_close all the same, with a log line). Progress is counted per piece of at most 64 KiB
// as the client reads (write_progress.hpp), so a slow but steady reader gets all its echo
// however long the drain. Under --timers=none only the queue limits bound it.
//
// The server's drain (shutdown()) closes a session at once when nothing of its echo is queued.
// With echo queued, every byte read before the drain's turn is echoed first: the session reads
// on (to see the client's FIN) but echoes nothing more, sends what is queued, then its FIN, and
// closes when the client's FIN comes (cause shutdown); --close-timeout without write progress
// bounds it as above (then the rest is dropped with a reset). A session already draining after
// the client's FIN goes on with it (cause client_close).
//
// A close that gives up on the client (idle, a limit, a deadline, an error, the hard stop)
// resets if any echo is left, queued here or unacknowledged in the kernel (reset_if_unsent,
// write_progress.hpp); the normal ends (the client's FIN after its echo, the drain, max lifetime)
// send a FIN behind what the kernel holds.
#ifndef IDLEWHEEL_DEMO_TCP_SESSION_HPP
#define IDLEWHEEL_DEMO_TCP_SESSION_HPP

#include "echo_queue.hpp"
#include "log.hpp"
#include "timers/timer_policy.hpp"
#include "worker.hpp"
#include "write_progress.hpp"

#include <idlewheel/session_liveness.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <memory>
#include <string>

namespace demo {

template <class Policy>
class tcp_session final : public session_base, public std::enable_shared_from_this<tcp_session<Policy>> {
public:
    tcp_session(worker& w, asio::ip::tcp::socket socket) : worker_(w), socket_(std::move(socket)), timers_(w, *this) {}
    tcp_session(const tcp_session&) = delete;
    tcp_session& operator=(const tcp_session&) = delete;

    ~tcp_session() {
        timers_.stop_all();
        worker_.remove(this);
        worker_.counters.closed_as(session_kind::tcp, cause_);
        worker_.release_connection();
        if (!worker_.cfg.quiet) log("tcp session closed: ", to_string(cause_));
    }

    void start() {
        worker_.add(this);
        worker_.counters.opened(session_kind::tcp);
        boost::system::error_code ec;
        socket_.non_blocking(true, ec);
        socket_.set_option(asio::ip::tcp::no_delay(true), ec);
        bound_kernel_unsent(socket_);
        timers_.started();
        wait_readable();
    }

    void shutdown() override {
        if (closed_ || stopping_ || draining_) return;  // draining: the client's FIN came first
        if (echo_.empty()) return finish(close_cause::shutdown, ending::normal);
        stopping_ = true;
        progress_.mark();
        timers_.closing();  // --close-timeout without write progress ends it
    }
    void abort() override { finish(close_cause::shutdown); }
    [[nodiscard]] std::size_t unsent_bytes() const noexcept override { return closed_ ? 0 : echo_.unsent(); }
    void drop_over_budget() override {
        if (!worker_.cfg.quiet)
            log("tcp session dropped: ", echo_.unsent(), " bytes unsent, server over --max-backlog-total");
        finish(close_cause::backlog_budget);
    }

    // Timer callbacks (see timers/timer_policy.hpp).
    void on_idle() { finish(close_cause::idle); }
    void on_max_lifetime() { finish(close_cause::max_lifetime, ending::normal); }
    [[nodiscard]] steady::time_point last_active() const noexcept override { return last_active_; }
    void on_close_timeout() {  // only while draining after the client's FIN, or stopping
        if (!worker_.cfg.quiet)
            log(stopping_ ? "tcp session: the drain's client read nothing or sent no FIN for --close-timeout ("
                          : "tcp session: half-closed client read nothing for --close-timeout (",
                progress_.quiet_ms(), " ms since the last write progress), ", echo_.unsent(), " bytes dropped");
        finish(close_cause::client_close);  // shutdown if stopping_ (finish)
    }
    // --timers=wheel: the hook of the session's idlewheel::member_liveness (timers/wheel_timers.hpp).
    // The `tcp` times have no handshake and no heartbeat: idle and close_timeout only.
    void on_liveness(idlewheel::liveness_event e) {
        if (e == idlewheel::liveness_event::idle) return on_idle();
        if (e == idlewheel::liveness_event::close_timeout) return on_close_timeout();
    }

private:
    void wait_readable() {
        socket_.async_wait(asio::ip::tcp::socket::wait_read,
                           [self = this->shared_from_this()](boost::system::error_code ec) { self->on_readable(ec); });
    }

    void on_readable(boost::system::error_code ec) {
        if (closed_) return;
        if (ec) return finish(close_cause::error);
        auto& scratch = worker_.scratch;
        const std::size_t n = socket_.read_some(asio::buffer(scratch), ec);
        if (ec == asio::error::would_block) return wait_readable();
        if (ec == asio::error::eof) return end_of_input();
        if (ec) return finish(close_cause::error);
        if (stopping_) return wait_readable();  // read after the drain's turn: not echoed
        timers_.on_read();
        last_active_ = worker_.coarse_now.load(std::memory_order_relaxed);
        worker_.counters.bytes.fetch_add(n, std::memory_order_relaxed);
        if (worker_.cfg.tcp_echo == tcp_echo_mode::bytes) {
            worker_.counters.messages.fetch_add(1, std::memory_order_relaxed);
            enqueue(std::string(scratch.data(), n));
        } else if (!split_lines(scratch.data(), n)) {
            return;  // line too long: finished
        }
        if (echo_.unsent() > worker_.cfg.max_backlog) return finish(close_cause::backlog);
        if (worker_.over_backlog_budget()) {
            worker_.enforce_backlog_budget();
            if (closed_) return;
        }
        wait_readable();
    }

    // The client's FIN: no more input. Echo still queued is sent first.
    void end_of_input() {
        if (stopping_) {
            if (fin_sent_) return finish(close_cause::shutdown, ending::normal);  // both FINs: done
            draining_ = true;  // reading no more; the rest of the echo, then close
            return;
        }
        if (echo_.empty()) return finish(close_cause::client_close, ending::normal);
        draining_ = true;
        progress_.mark();
        timers_.closing();  // --close-timeout without write progress ends the drain
    }

    // Appends to the partial line and echoes every complete one. False if a line is too long.
    bool split_lines(const char* data, std::size_t n) {
        partial_.append(data, n);
        std::size_t begin = 0;
        for (std::size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', begin)) {
            if (nl - begin > worker_.cfg.max_message_size) {  // the same limit whether or not the line came in one read
                finish(close_cause::too_big);
                return false;
            }
            worker_.counters.messages.fetch_add(1, std::memory_order_relaxed);
            enqueue(partial_.substr(begin, nl + 1 - begin));
            begin = nl + 1;
        }
        partial_.erase(0, begin);
        if (partial_.size() > worker_.cfg.max_message_size) {
            finish(close_cause::too_big);
            return false;
        }
        return true;
    }

    void enqueue(std::string data) {
        echo_.push({std::move(data)});
        if (!writing_) write_next();
    }

    // The rest of the front buffer, a piece at a time: every piece that goes out is progress.
    void write_next() {
        writing_ = true;
        socket_.async_write_some(
            echo_.next_piece(),
            [self = this->shared_from_this()](boost::system::error_code ec, std::size_t n) { self->on_write(ec, n); });
    }

    void on_write(boost::system::error_code ec, std::size_t n) {
        writing_ = false;
        if (closed_) return;
        if (ec) return finish(close_cause::error);
        const bool whole = echo_.written(n);
        if (draining_ || stopping_) {
            progress_.mark();
            timers_.on_write_progress();  // the drain deadline starts again
        }
        if (!whole) return write_next();
        if (!echo_.empty()) {
            write_next();
        } else if (draining_) {
            finish(close_cause::client_close, ending::normal);  // everything echoed: now close (shutdown if stopping_)
        } else if (stopping_) {
            // Everything read before the drain's turn is echoed: our FIN after it, then the
            // client's (read on, discarded); --close-timeout from this last progress bounds it.
            fin_sent_ = true;
            boost::system::error_code ignored;
            socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
        }
    }

    static_assert(tcp_timers<typename Policy::template tcp<tcp_session>>);

    // normal: the client's FIN, the drain or max lifetime ends it, with nothing queued; give_up:
    // a verdict on the client, which resets if any echo is left (the header's comment).
    enum class ending { normal, give_up };

    void finish(close_cause cause, ending how = ending::give_up) {
        if (closed_) return;
        closed_ = true;
        cause_ = stopping_ ? close_cause::shutdown : cause;  // the drain started this close, however it ends
        timers_.stop_all();
        echo_.leave_budget();  // out of the server's budget now; freed with the session
        boost::system::error_code ignored;
        // Echo left unsent is abandoned: reset instead of a FIN queued behind it, so the client
        // learns at once and the kernel frees the socket's buffers too (no orphan).
        if (how == ending::give_up || echo_.unsent() > 0) reset_if_unsent(socket_, echo_.unsent());
        socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);  // pending operations complete with operation_aborted
    }

    worker& worker_;
    asio::ip::tcp::socket socket_;
    [[no_unique_address]] typename Policy::template tcp<tcp_session> timers_;
    struct outgoing {
        std::string data;
    };
    echo_queue<outgoing> echo_{worker_};
    std::string partial_;
    close_cause cause_ = close_cause::error;
    steady::time_point last_active_ = worker_.coarse_now.load(std::memory_order_relaxed);
    progress_stamp progress_;  // while draining: the last write progress, for the drop's log line
    bool writing_ = false;
    bool draining_ = false;  // the client half-closed: sending the rest, reading no more
    bool stopping_ = false;  // the server's drain came with echo queued: sending it, echoing no more
    bool fin_sent_ = false;  // stopping_, everything sent: our FIN is out, waiting for the client's
    bool closed_ = false;
};

}  // namespace demo

#endif
