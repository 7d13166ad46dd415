// The two ways the demo server keeps time for a session, behind one interface, so that
// --timers=wheel and --timers=asio run exactly the same server:
//
//  wheel_timers: idlewheel — a handshake operation_deadline, an idle_watch (reader idle) and a
//                heartbeat on the worker's shared wheel; a read is a store.
//  asio_timers:  one asio::steady_timer per connection, re-armed on every read, the way Beast
//                servers do it today (tcp_stream::expires_after): each read cancels the
//                pending wait (posting its aborted handler) and starts a new one.
//
// Both call back into the session: on_handshake_timeout(), on_idle(), send_ping(),
// on_dead_peer(), on_close_timeout(). A session calls: handshake_started(deadline),
// handshake_done(), started(websocket), on_read(), on_control(), closing(), stop().
#ifndef IDLEWHEEL_DEMO_SESSION_TIMERS_HPP
#define IDLEWHEEL_DEMO_SESSION_TIMERS_HPP

#include "worker.hpp"

#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/operation_deadline.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <memory>

namespace demo {

using steady = std::chrono::steady_clock;

// The HTTP/WebSocket side needs a deadline (handshake, then close handshake) and a heartbeat;
// raw TCP sessions have neither, and do not pay for them.
template <class Session, bool WebSocket>
class wheel_timers {
public:
    wheel_timers(worker& w, Session& s) : worker_(w), session_(s) {}

    void handshake_started(steady::time_point deadline) {
        if constexpr (WebSocket) deadline_.expires_after(deadline - steady::now(), idlewheel::error::handshake_timeout);
    }
    void handshake_done() noexcept {
        if constexpr (WebSocket) deadline_.cancel();
    }
    void started(bool websocket) {
        idle_.start();
        if constexpr (WebSocket) {
            if (websocket) {
                heartbeat_.set_options({worker_.cfg.ping_interval, worker_.cfg.pong_timeout, worker_.cfg.ping_jitter});
                heartbeat_.start();
            }
        }
    }
    void on_read() noexcept {
        idle_.on_read();
        if constexpr (WebSocket) heartbeat_.on_inbound();
    }
    void on_control() noexcept {
        if constexpr (WebSocket) heartbeat_.on_inbound();
    }
    // The handshake is over (or abandoned) by now, so its deadline object times the close.
    void closing() {
        stop();
        if constexpr (WebSocket) deadline_.expires_after(worker_.cfg.close_timeout, idlewheel::error::operation_timeout);
    }
    void stop() noexcept {
        idle_.stop();
        if constexpr (WebSocket) {
            deadline_.cancel();
            heartbeat_.stop();
        }
    }
    void stop_all() noexcept { stop(); }

private:
    struct absent {};

    void on_deadline() {
        if (deadline_.reason() == idlewheel::error::handshake_timeout)
            session_.on_handshake_timeout();
        else
            session_.on_close_timeout();
    }
    void on_idle(idlewheel::idle_kind, bool) { session_.on_idle(); }
    void on_heartbeat(idlewheel::heartbeat_event e) {
        if (e == idlewheel::heartbeat_event::send_ping)
            session_.send_ping();
        else
            session_.on_dead_peer();
    }

    worker& worker_;
    Session& session_;
    idlewheel::idle_watch idle_{worker_.wheel, idlewheel::idle_member<&wheel_timers::on_idle>(this),
                                {.reader = worker_.cfg.idle_timeout}, &worker_.liveness};
    [[no_unique_address]] std::conditional_t<WebSocket, idlewheel::operation_deadline, absent> deadline_{make_deadline()};
    [[no_unique_address]] std::conditional_t<WebSocket, idlewheel::heartbeat, absent> heartbeat_{make_heartbeat()};

    // Guaranteed copy elision builds the (immovable) members in place.
    auto make_deadline() {
        if constexpr (WebSocket)
            return idlewheel::operation_deadline{worker_.wheel, idlewheel::call_member<&wheel_timers::on_deadline>(this),
                                                 idlewheel::error::operation_timeout, &worker_.liveness};
        else
            return absent{};
    }
    auto make_heartbeat() {
        if constexpr (WebSocket)
            return idlewheel::heartbeat{worker_.wheel, idlewheel::heartbeat_member<&wheel_timers::on_heartbeat>(this), {},
                                        &worker_.liveness};
        else
            return absent{};
    }
};

template <class Session, bool WebSocket>
class asio_timers {
public:
    asio_timers(worker& w, Session& s) : worker_(w), session_(s), timer_(w.io) {}

    void handshake_started(steady::time_point deadline) {
        handshake_ = deadline;
        rearm();
    }
    void handshake_done() {
        handshake_ = never;
        rearm();
    }
    void started(bool websocket) {
        websocket_ = websocket;
        const auto now = steady::now();
        idle_ = now + worker_.cfg.idle_timeout;
        if (websocket_ && worker_.cfg.ping_interval.count() > 0) {
            offset_ = jitter();
            ping_ = now + worker_.cfg.ping_interval + offset_;
        }
        rearm();
    }
    // The per-read cost idlewheel removes: a clock read and a timer re-arm.
    void on_read() {
        const auto now = steady::now();
        idle_ = now + worker_.cfg.idle_timeout;
        heard(now);
        rearm();
    }
    void on_control() {
        heard(steady::now());
        rearm();
    }
    void closing() {
        handshake_ = idle_ = ping_ = pong_ = never;
        close_ = steady::now() + worker_.cfg.close_timeout;
        rearm();
    }
    void stop() {
        handshake_ = idle_ = ping_ = pong_ = never;
        rearm();
    }
    void stop_all() {
        handshake_ = idle_ = ping_ = pong_ = close_ = never;
        timer_.cancel();
    }

private:
    static constexpr steady::time_point never = steady::time_point::max();

    steady::duration jitter() const {
        const auto spread = static_cast<std::uint64_t>(worker_.cfg.ping_jitter.count());
        if (spread == 0) return {};
        return std::chrono::duration_cast<steady::duration>(
            std::chrono::nanoseconds(static_cast<std::int64_t>(idlewheel::detail::next_jitter_bits() % (spread + 1))));
    }

    void heard(steady::time_point now) {
        if (!websocket_ || worker_.cfg.ping_interval.count() <= 0) return;
        ping_ = now + worker_.cfg.ping_interval + offset_;
        pong_ = never;
    }

    void rearm() {
        const auto next = std::min({handshake_, idle_, ping_, pong_, close_});
        if (next == never) {
            timer_.cancel();
            return;
        }
        worker_.counters.timer_rearms.fetch_add(1, std::memory_order_relaxed);
        timer_.expires_at(next);  // cancels the pending wait: its handler runs with operation_aborted
        timer_.async_wait([weak = session_.weak_from_this(), this](boost::system::error_code ec) {
            if (ec == asio::error::operation_aborted) return;
            const auto alive = weak.lock();
            if (!alive) return;
            on_timer();
        });
    }

    void on_timer() {
        const auto now = steady::now();
        if (now >= close_) {
            close_ = never;
            session_.on_close_timeout();
            return;
        }
        if (now >= handshake_) {
            handshake_ = never;
            session_.on_handshake_timeout();
            return;
        }
        if (now >= idle_) {
            idle_ = never;
            session_.on_idle();
            return;
        }
        if (now >= pong_) {
            pong_ = never;
            session_.on_dead_peer();
            return;
        }
        if (now >= ping_) {
            ping_ = never;
            pong_ = now + worker_.cfg.pong_timeout;
            session_.send_ping();
        }
        rearm();
    }

    worker& worker_;
    Session& session_;
    asio::steady_timer timer_;
    bool websocket_ = false;
    steady::duration offset_{};
    steady::time_point handshake_ = never, idle_ = never, ping_ = never, pong_ = never, close_ = never;
};

struct wheel_policy {
    template <class Session, bool WebSocket>
    using timers = wheel_timers<Session, WebSocket>;
};
struct asio_policy {
    template <class Session, bool WebSocket>
    using timers = asio_timers<Session, WebSocket>;
};

}  // namespace demo

#endif
