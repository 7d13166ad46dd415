// The definition of start_session<Policy> (declared in sessions.hpp); included only by the
// translation units that instantiate it.
#ifndef IDLEWHEEL_DEMO_START_SESSION_HPP
#define IDLEWHEEL_DEMO_START_SESSION_HPP

#include "sessions.hpp"
#include "tcp_session.hpp"
#include "web_session.hpp"

#include <memory>

namespace demo {

template <class Policy>
void start_session(listener l, worker& w, const stats_source& stats, boost::asio::ip::tcp::socket socket) {
    if (l == listener::tcp)
        std::make_shared<tcp_session<Policy>>(w, std::move(socket))->start();
    else if (w.tls_context != nullptr)
        std::make_shared<web_session<Policy, true>>(w, stats, std::move(socket))->start();
    else
        std::make_shared<web_session<Policy, false>>(w, stats, std::move(socket))->start();
}

}  // namespace demo

#endif
