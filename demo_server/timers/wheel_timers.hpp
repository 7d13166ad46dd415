// --timers=wheel: every session's liveness on its worker's one idlewheel, in ONE
// idlewheel::member_liveness per session (a session_liveness: one wheel entry, 64 bytes): the
// handshake deadline, reader idle, the heartbeat (WebSocket only) and the close deadline are
// its phases. What all the sessions of a type share (times, hook, stats) is one
// member_liveness_config per worker and kind: `tcp`, or `http` and `websocket`, which an HTTP
// session moves to when it upgrades (the times: worker.hpp's liveness_options).
//
// A read is a store (on_read / on_inbound): nothing is re-armed per read; the one entry moves
// only when it comes due. --max-lifetime, which is rare, is a separate operation_deadline
// allocated only when the flag is set.
//
// The liveness object stores no pointer to its session: member_liveness finds the session from
// its own address and calls its hook, Session::on_liveness(liveness_event), which maps the
// verdicts onto the session's timer callbacks (timer_policy.hpp). So a policy object holds the
// liveness and the lifetime pointer only.
#ifndef IDLEWHEEL_DEMO_WHEEL_TIMERS_HPP
#define IDLEWHEEL_DEMO_WHEEL_TIMERS_HPP

#include "timers/timer_policy.hpp"
#include "worker.hpp"

#include <idlewheel/bind_member.hpp>
#include <idlewheel/member_liveness.hpp>
#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/session_liveness.hpp>

#include <memory>

namespace demo {

// One worker's liveness config of one kind for the sessions of type Session: the times, the
// worker's liveness_stats, and the hook, Session::on_liveness. The one place that names the
// hook.
template <class Session>
class session_config : public idlewheel::member_liveness_config<Session> {
public:
    /// @throws std::invalid_argument as member_liveness_config (liveness_options::check rules it out first).
    session_config(worker& w, const idlewheel::session_liveness_options& o)
        : idlewheel::member_liveness_config<Session>(w.wheel, o, idlewheel::bind_member<&Session::on_liveness>(), &w.liveness), owner(w) {}

    worker& owner;
};

// The configs of a raw-TCP session type, and of an HTTP/WebSocket one (worker::per_session_type).
template <class Session>
struct tcp_configs {
    explicit tcp_configs(worker& w) : tcp(w, w.liveness_times.tcp) {}
    session_config<Session> tcp;
};
template <class Session>
struct web_configs {
    explicit web_configs(worker& w) : http(w, w.liveness_times.http), websocket(w, w.liveness_times.websocket) {}
    session_config<Session> http;
    session_config<Session> websocket;
};

// What the TCP and web policies share: the one member_liveness, on a config of the worker, and
// the optional --max-lifetime deadline.
template <class Session>
class wheel_liveness_base {
protected:
    using phase = idlewheel::session_liveness::phase;

    wheel_liveness_base(const session_config<Session>& c, Session& s) noexcept : live_(c, s) {}

    [[nodiscard]] const session_config<Session>& config() const noexcept {
        return static_cast<const session_config<Session>&>(live_.config());
    }
    [[nodiscard]] worker& owner() const noexcept { return config().owner; }

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

    idlewheel::member_liveness<Session> live_;
    std::unique_ptr<idlewheel::operation_deadline> lifetime_;

private:
    void on_lifetime() { live_.owner().on_max_lifetime(); }
};

// Raw TCP, on the worker's `tcp` config: reader idle from started(); closing() (the client
// half-closed, or the server's drain came, with echo still queued) is the close deadline, started
// again on every write progress (session_liveness::on_write_progress: the entry moves only when
// the old deadline comes due).
template <class Session>
class wheel_tcp_timers : private wheel_liveness_base<Session> {
    using base = wheel_liveness_base<Session>;

public:
    wheel_tcp_timers(worker& w, Session& s) : base(w.per_session_type<tcp_configs<Session>>().tcp, s) {}

    void started() {
        base::live_.start();
        base::start_lifetime();
    }
    void on_read() noexcept { base::live_.on_read(); }
    void closing() { base::close_deadline_from_now(); }
    void on_write_progress() noexcept { base::live_.on_write_progress(); }  // a clock read while closing
    void stop_all() noexcept { base::stop_all(); }
};

// HTTP/WebSocket: from accept, the handshake phase on the worker's `http` config (a hard
// deadline to the end of the first request or of the upgrade, and reader idle beside it, each
// its own verdict: session_liveness_options::idle_in_handshake); then reader idle between
// requests, without a heartbeat (an HTTP keep-alive session is never pinged). started(true),
// after an upgrade, re-binds the object to the `websocket` config (member_liveness::rebind):
// reader idle and the heartbeat from now. closing() enters (or starts again) the close deadline.
template <class Session>
class wheel_web_timers : private wheel_liveness_base<Session> {
    using base = wheel_liveness_base<Session>;
    using typename base::phase;

public:
    wheel_web_timers(worker& w, Session& s) : base(w.per_session_type<web_configs<Session>>().http, s) {}

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
        base::live_.rebind(base::owner().template per_session_type<web_configs<Session>>().websocket);
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

struct wheel_policy : policy_of<wheel_tcp_timers, wheel_web_timers> {
    // The HTTP/WebSocket session's transport: the socket, as under --timers=none and asio.
    // Decided (issue 45): the session's liveness is its member_liveness above, which keeps
    // every rule the demo has (web_session.hpp lists what the stream's own deadlines do not
    // give); idlewheel::beast::tcp_stream here would carry a read and a write deadline, a
    // timer_node and the one-line WebSocket timeouts' state, all off, 160 bytes per connection
    // for nothing (248 against the socket's 88), and make this mode's bytes per connection
    // over --timers=none more than its liveness costs. A server that does use the stream's
    // deadlines is examples/beast/ (the converted Beast servers).
    using web_stream = asio::ip::tcp::socket;
    static web_stream make_web_stream(worker&, asio::ip::tcp::socket s) { return s; }
};

}  // namespace demo

#endif
