#include "start_session.hpp"
#include "timers/asio_timers.hpp"

template void demo::start_session<demo::asio_policy>(demo::listener, demo::worker&, const demo::stats_source&,
                                                     boost::asio::ip::tcp::socket);
