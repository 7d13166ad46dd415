// Starting a session of the listener's kind under a timer policy. One template
// (start_session.hpp), instantiated once per policy, each in its own translation unit so the
// three compile in parallel: sessions_wheel.cpp, sessions_asio.cpp, sessions_none.cpp.
#ifndef IDLEWHEEL_DEMO_SESSIONS_HPP
#define IDLEWHEEL_DEMO_SESSIONS_HPP

#include "config.hpp"
#include "http_routes.hpp"
#include "worker.hpp"

#include <boost/asio/ip/tcp.hpp>

namespace demo {

enum class listener { tcp, web };

struct wheel_policy;
struct asio_policy;
struct no_timers_policy;

template <class Policy>
void start_session(listener l, worker& w, const stats_source& stats, boost::asio::ip::tcp::socket socket);

extern template void start_session<wheel_policy>(listener, worker&, const stats_source&, boost::asio::ip::tcp::socket);
extern template void start_session<asio_policy>(listener, worker&, const stats_source&, boost::asio::ip::tcp::socket);
extern template void start_session<no_timers_policy>(listener, worker&, const stats_source&,
                                                     boost::asio::ip::tcp::socket);

using session_starter = void (*)(listener, worker&, const stats_source&, boost::asio::ip::tcp::socket);

inline session_starter session_starter_for(timer_mode m) noexcept {
    switch (m) {
        case timer_mode::wheel: return &start_session<wheel_policy>;
        case timer_mode::asio: return &start_session<asio_policy>;
        case timer_mode::none: break;
    }
    return &start_session<no_timers_policy>;
}

}  // namespace demo

#endif
