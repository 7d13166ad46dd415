#include "sessions.hpp"
#include "tcp_session.hpp"
#include "web_session.hpp"

namespace demo {

void start_asio_session(listener l, worker& w, boost::asio::ip::tcp::socket socket) {
    if (l == listener::tcp)
        std::make_shared<tcp_session<asio_policy>>(w, std::move(socket))->start();
    else
        std::make_shared<web_session<asio_policy>>(w, std::move(socket))->start();
}

}  // namespace demo
