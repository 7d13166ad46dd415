// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// 1.x's argument order for stream_liveness_config, the stats before the hook: it compiles, and
// warns (the deprecated constructor is chosen by the arguments' types), so that under
// -Werror=deprecated-declarations it is refused with the message naming the one order.
#include <idlewheel/stream_liveness.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

struct session {
    boost::asio::ip::tcp::socket socket;
    idlewheel::stream_liveness<session> live;
    void on_liveness(idlewheel::liveness_event) {}
};

void old_order(idlewheel::wheel_timer& wheel, idlewheel::liveness_stats& stats) {
    const idlewheel::stream_liveness_config<session> config(wheel, &session::socket, {}, &stats,
                                                            idlewheel::bind_member<&session::on_liveness>());
    (void)config;
}
