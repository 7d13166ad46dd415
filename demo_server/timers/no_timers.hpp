// --timers=none: no liveness at all. No idle kick, no heartbeat, no handshake or close
// deadline: the same server with nothing that keeps time per session, as the baseline that
// shows what liveness costs (bench/compare.sh). A silent client stays connected until it
// leaves or the server stops (the shutdown's abrupt step is the server's, not a session's).
#ifndef IDLEWHEEL_DEMO_NO_TIMERS_HPP
#define IDLEWHEEL_DEMO_NO_TIMERS_HPP

#include "timers/timer_policy.hpp"
#include "worker.hpp"

namespace demo {

class no_timers {
public:
    template <class Session>
    no_timers(worker&, Session&) noexcept {}

    void handshake_started(steady::time_point) noexcept {}
    void handshake_done() noexcept {}
    void started() noexcept {}
    void started(bool) noexcept {}
    void on_read() noexcept {}
    void on_control() noexcept {}
    void closing() noexcept {}
    void on_write_progress() noexcept {}
    void stop_all() noexcept {}
};

template <class Session>
using no_timers_for = no_timers;
struct no_timers_policy : policy_of<no_timers_for, no_timers_for> {
    // The HTTP/WebSocket session's transport: the socket (no deadline to keep).
    using web_stream = asio::ip::tcp::socket;
    static web_stream make_web_stream(worker&, asio::ip::tcp::socket s) { return s; }
};

static_assert(tcp_timers<no_timers> && web_timers<no_timers>);

}  // namespace demo

#endif
