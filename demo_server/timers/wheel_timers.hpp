// --timers=wheel: every session's liveness on its worker's one idlewheel, in ONE
// idlewheel::session_liveness per session (one wheel entry, 64 bytes): the handshake deadline,
// reader idle, the heartbeat (WebSocket only) and the close deadline are its phases. What all
// the sessions of a kind share (times, handler, stats) is one liveness_config per worker
// (worker.hpp): `tcp`, `http`, and `websocket`, which an HTTP session moves to when it upgrades.
//
// A read is a store (session_liveness::on_read / on_inbound): nothing is re-armed per read; the
// one entry moves only when it comes due. --max-lifetime, which is rare, is a separate
// operation_deadline allocated only when the flag is set.
//
// The liveness object knows no session: the config's handler finds the session from the
// object's address (idlewheel::owner_offset: the offset is learnt from the first session, as
// idlewheel's member_liveness does) and calls it: idle -> Session::on_idle(), send_ping -> send_ping(), dead_peer ->
// on_dead_peer(), handshake_timeout -> on_handshake_timeout(), close_timeout ->
// on_close_timeout(). So a policy object holds the liveness and the lifetime pointer only.
#ifndef IDLEWHEEL_DEMO_WHEEL_TIMERS_HPP
#define IDLEWHEEL_DEMO_WHEEL_TIMERS_HPP

#include "timers/timer_policy.hpp"
#include "worker.hpp"

#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/session_liveness.hpp>

#include <memory>

namespace demo {

// What the TCP and web policies share: the one session_liveness, bound to a config of the
// worker, and the optional --max-lifetime deadline.
template <class Session, class Timers>
class wheel_liveness_base {
protected:
    using phase = idlewheel::session_liveness::phase;

    wheel_liveness_base(liveness_config& c, Session& s) noexcept : live_(c) { bind(c, s); }

    // Binds `c` to this policy's session type (see liveness_config): on the worker's thread,
    // where every session of the config is constructed, so no race; the same values each time.
    void bind(liveness_config& c, Session& s) noexcept {
        c.set_handler(&on_event, nullptr);
        c.session_at.learn(s, live_);
    }

    [[nodiscard]] const liveness_config& config() const noexcept {
        return static_cast<const liveness_config&>(live_.config());
    }
    [[nodiscard]] worker& owner() const noexcept { return config().owner; }
    [[nodiscard]] Session& session() noexcept { return config().session_at.template owner<Session>(live_); }

    // --max-lifetime from now (lengthened by up to --max-lifetime-jitter); nothing if it is off.
    void start_lifetime() {
        worker& w = owner();
        const auto end = lifetime_end(w.cfg, steady::now());
        if (end == steady::time_point::max()) return;
        lifetime_ = std::make_unique<idlewheel::operation_deadline>(
            w.wheel, idlewheel::bind_member<&wheel_liveness_base::on_lifetime>(this),
            idlewheel::error::operation_timeout, &w.liveness);
        lifetime_->expires_after(end - steady::now());
    }
    void stop_lifetime() noexcept {
        if (lifetime_) lifetime_->cancel();
    }

    // The close deadline (--close-timeout) from now: entering the closing phase, or starting
    // it again (the drain made progress). Nothing once the session is stopped or has ended.
    void close_deadline_from_now() {
        switch (live_.current()) {
            case phase::handshake:  // the stream failed mid-upgrade: only the close is left
                (void)live_.handshake_done();
                break;
            case phase::closing:  // start it again: back to open for the instant, then closing
                live_.start();
                break;
            case phase::open: break;
            case phase::stopped:
            case phase::ended: return;
        }
        (void)live_.start_close();  // whoever started the close: the deadline is the same
    }

    void stop_all() noexcept {
        live_.stop();
        stop_lifetime();
    }

    idlewheel::session_liveness live_;
    std::unique_ptr<idlewheel::operation_deadline> lifetime_;

private:
    // The config's handler: to the session (Timers::on_event), last.
    static void on_event(void*, idlewheel::session_liveness& live, idlewheel::liveness_event e) {
        const auto& c = static_cast<const liveness_config&>(live.config());
        Timers::on_event(c, c.session_at.template owner<Session>(live), e);
    }
    void on_lifetime() { session().on_max_lifetime(); }
};

// Raw TCP, on the worker's `tcp` config: reader idle from started(); closing() (the client
// half-closed, or the server's drain came, with echo still queued) is the close deadline, started
// again on every write progress (session_liveness::on_write_progress: the entry moves only when
// the old deadline comes due).
template <class Session>
class wheel_tcp_timers : private wheel_liveness_base<Session, wheel_tcp_timers<Session>> {
    using base = wheel_liveness_base<Session, wheel_tcp_timers<Session>>;
    friend base;

public:
    wheel_tcp_timers(worker& w, Session& s) noexcept : base(w.shared_liveness->tcp, s) {}

    void started() {
        base::live_.start();
        base::start_lifetime();
    }
    void on_read() noexcept { base::live_.on_read(); }
    void closing() { base::close_deadline_from_now(); }
    void on_write_progress() noexcept { base::live_.on_write_progress(); }  // a clock read while closing
    void stop_all() noexcept { base::stop_all(); }

private:
    // The `tcp` config has no handshake and no heartbeat: idle and close_timeout only.
    static void on_event(const liveness_config&, Session& s, idlewheel::liveness_event e) {
        if (e == idlewheel::liveness_event::idle) return s.on_idle();
        if (e == idlewheel::liveness_event::close_timeout) return s.on_close_timeout();
    }
};

// HTTP/WebSocket: from accept, the handshake phase on the worker's `http` config (a hard
// deadline to the end of the first request or of the upgrade, and reader idle beside it, each
// its own verdict: session_liveness_options::idle_in_handshake); then reader idle between
// requests, without a heartbeat (an HTTP keep-alive session is never pinged). started(true),
// after an upgrade, replaces the object with one on the `websocket` config: reader idle and the
// heartbeat from now. closing() enters (or starts again) the close deadline.
template <class Session>
class wheel_web_timers : private wheel_liveness_base<Session, wheel_web_timers<Session>> {
    using base = wheel_liveness_base<Session, wheel_web_timers<Session>>;
    friend base;
    using typename base::phase;

public:
    wheel_web_timers(worker& w, Session& s) noexcept : base(w.shared_liveness->http, s) {}

    // The session passes accept + --handshake-timeout, and calls this at accept: the config's
    // handshake_timeout from now is that same deadline (rounded up to the wheel's unit).
    void handshake_started(steady::time_point) {
        base::live_.start_handshake();
        base::start_lifetime();
    }
    void handshake_done() noexcept { (void)base::live_.handshake_done(); }  // false: not in its handshake
    void started(bool websocket) {
        // At accept (websocket false) reader idle already runs: the `http` config's idle_in_handshake.
        if (!websocket || base::live_.current() != phase::open) return;
        liveness_config& c = base::owner().shared_liveness->websocket;
        Session& s = base::session();
        std::destroy_at(&this->live_);  // unlinks its entry (not running: we are not in its handler)
        std::construct_at(&this->live_, c);
        base::bind(c, s);
        base::live_.start();
    }
    void on_read() noexcept { base::live_.on_read(); }
    void on_control() noexcept { base::live_.on_inbound(); }
    void closing() {
        base::stop_lifetime();
        base::close_deadline_from_now();
    }
    void on_write_progress() noexcept { base::live_.on_write_progress(); }
    void stop_all() noexcept { base::stop_all(); }

private:
    static void on_event(const liveness_config&, Session& s, idlewheel::liveness_event e) {
        switch (e) {
            case idlewheel::liveness_event::idle: return s.on_idle();
            case idlewheel::liveness_event::send_ping: return s.send_ping();
            case idlewheel::liveness_event::dead_peer: return s.on_dead_peer();
            case idlewheel::liveness_event::handshake_timeout: return s.on_handshake_timeout();
            case idlewheel::liveness_event::close_timeout: return s.on_close_timeout();
        }
    }
};

// What a session pays for its liveness in this mode: the object and the lifetime pointer, 64 + 8
// bytes on LP64, TCP and web alike. (Before the session_liveness, a TCP session's timers took
// 224 bytes: an idle_watch, the drain and lifetime pointers and two references; a web session's
// 504: an idle_watch, an operation_deadline, a heartbeat, the lifetime pointer and two references.)
struct wheel_timers_size_probe;
static_assert(sizeof(wheel_tcp_timers<wheel_timers_size_probe>) ==
              sizeof(idlewheel::session_liveness) + sizeof(std::unique_ptr<idlewheel::operation_deadline>));
static_assert(sizeof(wheel_web_timers<wheel_timers_size_probe>) ==
              sizeof(idlewheel::session_liveness) + sizeof(std::unique_ptr<idlewheel::operation_deadline>));

struct wheel_policy {
    template <class Session>
    using tcp = wheel_tcp_timers<Session>;
    template <class Session>
    using web = wheel_web_timers<Session>;
};

}  // namespace demo

#endif
