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

// Raw TCP: reader idle; the drain deadline is allocated only when a session drains, so the
// many quiet TCP sessions do not carry it.
template <class Session>
class wheel_tcp_timers {
public:
    wheel_tcp_timers(worker& w, Session& s) : worker_(w), session_(s) {}

    void started() { idle_.start(); }
    void on_read() noexcept { idle_.on_read(); }
    void closing() {
        idle_.stop();
        if (!drain_)
            drain_ = std::make_unique<idlewheel::operation_deadline>(
                worker_.wheel, idlewheel::call_member<&wheel_tcp_timers::on_drain_deadline>(this), idlewheel::error::operation_timeout,
                &worker_.liveness);
        drain_->expires_after(worker_.cfg.close_timeout, idlewheel::error::operation_timeout);
    }
    void stop_all() noexcept {
        idle_.stop();
        if (drain_) drain_->cancel();
    }

private:
    void on_idle(idlewheel::idle_kind, bool) { session_.on_idle(); }
    void on_drain_deadline() { session_.on_close_timeout(); }

    worker& worker_;
    Session& session_;
    idlewheel::idle_watch idle_{worker_.wheel, idlewheel::idle_member<&wheel_tcp_timers::on_idle>(this),
                                {.reader = worker_.cfg.idle_timeout}, &worker_.liveness};
    std::unique_ptr<idlewheel::operation_deadline> drain_;
};

// HTTP/WebSocket: one operation_deadline times the handshake, then (once that is over) the
// close handshake; an idle_watch; a heartbeat once the session is a WebSocket.
template <class Session>
class wheel_web_timers {
public:
    wheel_web_timers(worker& w, Session& s) : worker_(w), session_(s) {}

    void handshake_started(steady::time_point deadline) {
        deadline_.expires_after(deadline - steady::now(), idlewheel::error::handshake_timeout);
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
        deadline_.expires_after(worker_.cfg.close_timeout, idlewheel::error::operation_timeout);
    }
    void stop_all() noexcept {
        idle_.stop();
        heartbeat_.stop();
        deadline_.cancel();
    }

private:
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
    idlewheel::idle_watch idle_{worker_.wheel, idlewheel::idle_member<&wheel_web_timers::on_idle>(this),
                                {.reader = worker_.cfg.idle_timeout}, &worker_.liveness};
    idlewheel::operation_deadline deadline_{worker_.wheel, idlewheel::call_member<&wheel_web_timers::on_deadline>(this),
                                            idlewheel::error::operation_timeout, &worker_.liveness};
    idlewheel::heartbeat heartbeat_{worker_.wheel, idlewheel::heartbeat_member<&wheel_web_timers::on_heartbeat>(this), {},
                                    &worker_.liveness};
};

struct wheel_policy {
    template <class Session>
    using tcp = wheel_tcp_timers<Session>;
    template <class Session>
    using web = wheel_web_timers<Session>;
};

}  // namespace demo

#endif
