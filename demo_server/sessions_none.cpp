#include "start_session.hpp"
#include "timers/no_timers.hpp"

template void demo::start_session<demo::no_timers_policy>(demo::listener, demo::worker&, const demo::stats_source&,
                                                          boost::asio::ip::tcp::socket);
