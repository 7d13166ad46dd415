// Starting a session of the configured kind and timer mode (each mode compiled in its own
// translation unit).
#ifndef IDLEWHEEL_DEMO_SESSIONS_HPP
#define IDLEWHEEL_DEMO_SESSIONS_HPP

#include "worker.hpp"

#include <boost/asio/ip/tcp.hpp>

namespace demo {

enum class listener { tcp, web };

void start_wheel_session(listener l, worker& w, boost::asio::ip::tcp::socket socket);
void start_asio_session(listener l, worker& w, boost::asio::ip::tcp::socket socket);

}  // namespace demo

#endif
