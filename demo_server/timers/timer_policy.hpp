// What a timer policy gives the demo's sessions, so --timers=wheel|asio|none run exactly the
// same server. A policy names two classes, and the transport of the HTTP/WebSocket sessions
// (Policy::web_stream, made by Policy::make_web_stream(worker&, socket): web_session.hpp):
//
//  Policy::tcp<Session>  raw TCP: reader idle, and a deadline for draining the echo after the
//                        client half-closed (--close-timeout without write progress: it
//                        starts again at every on_write_progress()); --max-lifetime from accept. Calls
//                        Session::on_idle(), on_close_timeout(), on_max_lifetime().
//  Policy::web<Session>  HTTP/WebSocket: a handshake deadline (accept to the end of the request
//                        or upgrade; bytes do not extend it), reader idle, a heartbeat once the
//                        session is a WebSocket, a close-handshake deadline (started again by
//                        write progress, as TCP's); --max-lifetime from
//                        accept. Calls Session::on_handshake_timeout(), on_idle(), send_ping(),
//                        on_dead_peer(), on_close_timeout(), on_max_lifetime().
//
// The wheel policy's liveness object calls them through one hook, Session::on_liveness(
// idlewheel::liveness_event) (idlewheel::member_liveness's), which each session maps onto them;
// its --max-lifetime deadline calls on_max_lifetime().
//
// The policies: wheel_timers.hpp (idlewheel, one wheel per worker thread), asio_timers.hpp (one
// steady_timer per connection re-armed on every read, as Beast servers do it), no_timers.hpp
// (no liveness at all: the benchmark baseline).
#ifndef IDLEWHEEL_DEMO_TIMER_POLICY_HPP
#define IDLEWHEEL_DEMO_TIMER_POLICY_HPP

#include <chrono>
#include <concepts>
#include <cstdint>
#include <random>

namespace demo {

using steady = std::chrono::steady_clock;

/// A uniformly random duration in [0, spread]: per-session offsets (ping jitter, lifetime
/// spread), so sessions accepted together do not all act in one tick.
inline steady::duration random_spread(std::chrono::nanoseconds spread) {
    if (spread.count() <= 0) return {};
    thread_local std::minstd_rand bits{std::random_device{}()};
    return std::chrono::duration_cast<steady::duration>(
        std::chrono::nanoseconds(std::uniform_int_distribution<std::int64_t>(0, spread.count())(bits)));
}

/// When a session accepted at `accepted` reaches --max-lifetime (never, if it is 0).
template <class Config>
steady::time_point lifetime_end(const Config& cfg, steady::time_point accepted) {
    if (cfg.max_lifetime.count() <= 0) return steady::time_point::max();
    return accepted + std::chrono::duration_cast<steady::duration>(cfg.max_lifetime) + random_spread(cfg.max_lifetime_jitter);
}

template <class T>
concept tcp_timers = requires(T t) {
    t.started();   // the session is open: reader idle (and --max-lifetime) run from now
    t.on_read();   // inbound data
    t.closing();   // the session is draining before its close: idle off, --close-timeout on
    t.on_write_progress();  // part of the echo went out: while draining, --close-timeout starts again
    t.stop_all();  // the session is finished: nothing more will be called back
};

template <class T>
concept web_timers = requires(T t, steady::time_point deadline, bool websocket) {
    t.handshake_started(
        deadline);  // accept: the request / upgrade must be complete by `deadline`; --max-lifetime starts
    t.handshake_done();
    t.started(websocket);  // reader idle from now; with `websocket`, the heartbeat too
    t.on_read();           // a request or a message
    t.on_control();        // a ping or pong: the peer lives (not activity for idleness)
    t.closing();           // close handshake under way: only --close-timeout is left
    t.on_write_progress();  // part of the echo went out: while closing, --close-timeout starts again
    t.stop_all();
};

// A policy from its two classes: `struct wheel_policy : policy_of<wheel_tcp_timers,
// wheel_web_timers> {};` (a struct of its own, so sessions.hpp can declare it).
template <template <class> class Tcp, template <class> class Web>
struct policy_of {
    template <class Session>
    using tcp = Tcp<Session>;
    template <class Session>
    using web = Web<Session>;
};

}  // namespace demo

#endif
