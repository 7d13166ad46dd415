// --timers=asio: one asio::steady_timer per connection, re-armed on every read, the way Beast
// servers do it today (tcp_stream::expires_after): each read reads the clock, cancels the
// pending wait (posting its aborted handler) and starts a new one. The per-read cost idlewheel
// removes, kept here so the two can be measured on one binary.
#ifndef IDLEWHEEL_DEMO_ASIO_TIMERS_HPP
#define IDLEWHEEL_DEMO_ASIO_TIMERS_HPP

#include "timers/timer_policy.hpp"
#include "worker.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

namespace demo {

// A connection's one steady_timer, armed for the earliest of its deadlines.
template <class Session, std::size_t N>
class earliest_deadline {
public:
    static constexpr steady::time_point never = steady::time_point::max();

    // On the worker's executor, as the session's socket: with --io-threads, the same strand.
    earliest_deadline(worker& w, Session& s) : worker_(w), session_(s), timer_(w.get_executor()) { at_.fill(never); }

    steady::time_point& operator[](std::size_t i) noexcept { return at_[i]; }

    // Arms for the earliest deadline (or disarms); when it passes, `on_due()` runs on the
    // owner, unless the session is gone by then.
    template <class Owner>
    void rearm(Owner* owner, void (Owner::*on_due)()) {
        const auto next = *std::min_element(at_.begin(), at_.end());
        if (next == never) {
            timer_.cancel();
            return;
        }
        worker_.counters.timer_rearms.fetch_add(1, std::memory_order_relaxed);
        timer_.expires_at(next);  // cancels the pending wait: its handler runs with operation_aborted
        timer_.async_wait([weak = session_.weak_from_this(), owner, on_due](boost::system::error_code ec) {
            if (ec == asio::error::operation_aborted) return;
            if (const auto alive = weak.lock()) (owner->*on_due)();
        });
    }
    void cancel_all() {
        at_.fill(never);
        timer_.cancel();
    }
    // Deadline `i`, if set, moves to `later`; the timer stays armed for the earlier time (its
    // handler re-arms). Only for a deadline that can only move later.
    void postpone(std::size_t i, steady::time_point later) noexcept {
        if (at_[i] != never) at_[i] = later;
    }
    // The deadline `i` has passed: true once, and it is cleared.
    bool take_due(std::size_t i, steady::time_point now) noexcept {
        if (now < at_[i]) return false;
        at_[i] = never;
        return true;
    }

private:
    worker& worker_;
    Session& session_;
    asio::steady_timer timer_;
    std::array<steady::time_point, N> at_;
};

template <class Session>
class asio_tcp_timers {
public:
    asio_tcp_timers(worker& w, Session& s) : worker_(w), session_(s), deadlines_(w, s) {}

    void started() {
        deadlines_[lifetime] = lifetime_end(worker_.cfg, steady::now());
        on_read();
    }
    void on_read() {
        deadlines_[idle] = steady::now() + worker_.cfg.idle_timeout;
        deadlines_.rearm(this, &asio_tcp_timers::on_timer);
    }
    void closing() {
        deadlines_[idle] = deadlines_[lifetime] = deadlines_.never;
        deadlines_[drain] = steady::now() + worker_.cfg.close_timeout;
        deadlines_.rearm(this, &asio_tcp_timers::on_timer);
    }
    // Moves the drain deadline later without touching the timer: when the wait armed for the
    // earlier one completes, on_timer finds it not due and re-arms (one timer operation per
    // --close-timeout, not per piece written).
    void on_write_progress() { deadlines_.postpone(drain, steady::now() + worker_.cfg.close_timeout); }
    void stop_all() { deadlines_.cancel_all(); }

private:
    enum : std::size_t { idle, drain, lifetime, count };

    void on_timer() {
        const auto now = steady::now();
        if (deadlines_.take_due(drain, now)) return session_.on_close_timeout();
        if (deadlines_.take_due(lifetime, now)) return session_.on_max_lifetime();
        if (deadlines_.take_due(idle, now)) return session_.on_idle();
        deadlines_.rearm(this, &asio_tcp_timers::on_timer);
    }

    worker& worker_;
    Session& session_;
    earliest_deadline<Session, count> deadlines_;
};

template <class Session>
class asio_web_timers {
public:
    asio_web_timers(worker& w, Session& s) : worker_(w), session_(s), deadlines_(w, s) {}

    void handshake_started(steady::time_point deadline) {
        deadlines_[handshake] = deadline;
        deadlines_[lifetime] = lifetime_end(worker_.cfg, steady::now());
        rearm();
    }
    void handshake_done() {
        deadlines_[handshake] = deadlines_.never;
        rearm();
    }
    void started(bool websocket) {
        websocket_ = websocket;
        if (pings()) offset_ = random_spread(worker_.cfg.ping_jitter);
        on_read();
    }
    void on_read() {
        const auto now = steady::now();
        deadlines_[idle] = now + worker_.cfg.idle_timeout;
        heard(now);
        rearm();
    }
    void on_control() {
        heard(steady::now());
        rearm();
    }
    void closing() {
        deadlines_.cancel_all();
        deadlines_[close] = steady::now() + worker_.cfg.close_timeout;
        rearm();
    }
    void on_write_progress() { deadlines_.postpone(close, steady::now() + worker_.cfg.close_timeout); }  // as TCP's
    void stop_all() { deadlines_.cancel_all(); }

private:
    enum : std::size_t { handshake, idle, ping, pong, close, lifetime, count };

    [[nodiscard]] bool pings() const noexcept { return websocket_ && worker_.cfg.ping_interval.count() > 0; }

    void heard(steady::time_point now) {
        if (!pings()) return;
        deadlines_[ping] = now + worker_.cfg.ping_interval + offset_;
        deadlines_[pong] = deadlines_.never;
    }

    void rearm() { deadlines_.rearm(this, &asio_web_timers::on_timer); }

    void on_timer() {
        const auto now = steady::now();
        if (deadlines_.take_due(close, now)) return session_.on_close_timeout();
        if (deadlines_.take_due(handshake, now)) return session_.on_handshake_timeout();
        if (deadlines_.take_due(lifetime, now)) return session_.on_max_lifetime();
        if (deadlines_.take_due(idle, now)) return session_.on_idle();
        if (deadlines_.take_due(pong, now)) return session_.on_dead_peer();
        if (deadlines_.take_due(ping, now)) {
            deadlines_[pong] = now + worker_.cfg.pong_timeout;
            session_.send_ping();
        }
        rearm();
    }

    worker& worker_;
    Session& session_;
    earliest_deadline<Session, count> deadlines_;
    bool websocket_ = false;
    steady::duration offset_{};
};

struct asio_policy : policy_of<asio_tcp_timers, asio_web_timers> {
    // The HTTP/WebSocket session's transport: the socket. The connection's one timer is
    // earliest_deadline's, re-armed on every read, which is what a Beast server's tcp_stream
    // costs (its one steady_timer, expires_after before each read). Beast's tcp_stream here
    // would hold a second steady_timer, never armed, and make this mode's bytes per connection
    // larger than a Beast server's: --timers=asio is the baseline the wheel is measured against.
    using web_stream = asio::ip::tcp::socket;
    static web_stream make_web_stream(worker&, asio::ip::tcp::socket s) { return s; }
};

}  // namespace demo

#endif
