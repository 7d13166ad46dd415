// --timers=wheel: every session's liveness on its worker's one idlewheel. A read is a store
// (idle_watch::on_read, heartbeat::on_inbound); nothing is re-armed per read.
#ifndef IDLEWHEEL_DEMO_WHEEL_TIMERS_HPP
#define IDLEWHEEL_DEMO_WHEEL_TIMERS_HPP

#include "timers/timer_policy.hpp"
#include "worker.hpp"

#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/operation_deadline.hpp>

#include <memory>

namespace demo {

template <class Timers>
std::unique_ptr<idlewheel::operation_deadline> start_lifetime(worker& w, Timers* t);

// Raw TCP: reader idle; the drain and lifetime deadlines are allocated only when used (a
// session drains, --max-lifetime is set), so the many quiet TCP sessions do not carry them.
template <class Session>
class wheel_tcp_timers {
public:
    wheel_tcp_timers(worker& w, Session& s) : worker_(w), session_(s) {}

    void started() {
        idle_.start();
        lifetime_ = start_lifetime(worker_, this);
    }
    void on_read() noexcept { idle_.on_read(); }
    void closing() {
        idle_.stop();
        if (!drain_)
            drain_ = std::make_unique<idlewheel::operation_deadline>(
                worker_.wheel, idlewheel::call_member<&wheel_tcp_timers::on_drain_deadline>(this),
                idlewheel::error::operation_timeout, &worker_.liveness);
        drain_->expires_after(worker_.cfg.close_timeout, idlewheel::error::operation_timeout);
    }
    void stop_all() noexcept {
        idle_.stop();
        if (drain_) drain_->cancel();
        if (lifetime_) lifetime_->cancel();
    }

private:
    void on_idle(idlewheel::idle_kind, bool) { session_.on_idle(); }
    void on_drain_deadline() { session_.on_close_timeout(); }
    void on_lifetime() { session_.on_max_lifetime(); }

    worker& worker_;
    Session& session_;
    idlewheel::idle_watch idle_{worker_.wheel,
                                idlewheel::idle_member<&wheel_tcp_timers::on_idle>(this),
                                {.reader = worker_.cfg.idle_timeout},
                                &worker_.liveness};
    std::unique_ptr<idlewheel::operation_deadline> drain_;
    std::unique_ptr<idlewheel::operation_deadline> lifetime_;

    template <class Timers>
    friend std::unique_ptr<idlewheel::operation_deadline> start_lifetime(worker& w, Timers* t);
};

// --max-lifetime from now (spread by up to --ping-jitter); nothing if it is off.
template <class Timers>
std::unique_ptr<idlewheel::operation_deadline> start_lifetime(worker& w, Timers* t) {
    const auto end = lifetime_end(w.cfg, steady::now());
    if (end == steady::time_point::max()) return nullptr;
    auto d = std::make_unique<idlewheel::operation_deadline>(w.wheel, idlewheel::call_member<&Timers::on_lifetime>(t),
                                                             idlewheel::error::operation_timeout, &w.liveness);
    d->expires_after(end - steady::now());
    return d;
}

// HTTP/WebSocket: one operation_deadline times the handshake, then (once that is over) the
// close handshake; an idle_watch; a heartbeat once the session is a WebSocket.
template <class Session>
class wheel_web_timers {
public:
    wheel_web_timers(worker& w, Session& s) : worker_(w), session_(s) {}

    void handshake_started(steady::time_point deadline) {
        deadline_.expires_after(deadline - steady::now(), idlewheel::error::handshake_timeout);
        lifetime_ = start_lifetime(worker_, this);
    }
    void handshake_done() noexcept { deadline_.cancel(); }
    void started(bool websocket) {
        idle_.start();
        if (websocket) {
            heartbeat_.set_options({worker_.cfg.ping_interval, worker_.cfg.pong_timeout, worker_.cfg.ping_jitter});
            heartbeat_.start();
        }
    }
    void on_read() noexcept {
        idle_.on_read();
        heartbeat_.on_inbound();
    }
    void on_control() noexcept { heartbeat_.on_inbound(); }
    void closing() {
        idle_.stop();
        heartbeat_.stop();
        if (lifetime_) lifetime_->cancel();
        deadline_.expires_after(worker_.cfg.close_timeout, idlewheel::error::operation_timeout);
    }
    void stop_all() noexcept {
        idle_.stop();
        heartbeat_.stop();
        deadline_.cancel();
        if (lifetime_) lifetime_->cancel();
    }

private:
    void on_deadline() {
        if (deadline_.reason() == idlewheel::error::handshake_timeout)
            session_.on_handshake_timeout();
        else
            session_.on_close_timeout();
    }
    void on_idle(idlewheel::idle_kind, bool) { session_.on_idle(); }
    void on_lifetime() { session_.on_max_lifetime(); }
    void on_heartbeat(idlewheel::heartbeat_event e) {
        if (e == idlewheel::heartbeat_event::send_ping)
            session_.send_ping();
        else
            session_.on_dead_peer();
    }

    worker& worker_;
    Session& session_;
    idlewheel::idle_watch idle_{worker_.wheel,
                                idlewheel::idle_member<&wheel_web_timers::on_idle>(this),
                                {.reader = worker_.cfg.idle_timeout},
                                &worker_.liveness};
    idlewheel::operation_deadline deadline_{worker_.wheel, idlewheel::call_member<&wheel_web_timers::on_deadline>(this),
                                            idlewheel::error::operation_timeout, &worker_.liveness};
    idlewheel::heartbeat heartbeat_{
        worker_.wheel, idlewheel::heartbeat_member<&wheel_web_timers::on_heartbeat>(this), {}, &worker_.liveness};
    std::unique_ptr<idlewheel::operation_deadline> lifetime_;

    template <class Timers>
    friend std::unique_ptr<idlewheel::operation_deadline> start_lifetime(worker& w, Timers* t);
};

struct wheel_policy {
    template <class Session>
    using tcp = wheel_tcp_timers<Session>;
    template <class Session>
    using web = wheel_web_timers<Session>;
};

}  // namespace demo

#endif
