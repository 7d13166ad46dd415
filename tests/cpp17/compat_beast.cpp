// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// idlewheel/beast.hpp used to hold the websocket helpers alone (now in
// beast/websocket_helpers.hpp, and beast.hpp the umbrella); code that includes it for them must
// still compile (compiled only, as C++17).
#include <idlewheel/beast.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/websocket/stream.hpp>

void compat_beast(boost::beast::websocket::stream<boost::asio::ip::tcp::socket>& ws, idlewheel::heartbeat& hb) {
    idlewheel::beast::report_control_frames(ws, hb);
    idlewheel::beast::async_close_idle(ws, [](boost::system::error_code) {});
    idlewheel::beast::drop(ws);
    (void)idlewheel::beast::idle_close_reason();
}
