// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_HPP
#define IDLEWHEEL_BEAST_HPP

/** @file
 * @brief idlewheel/beast.hpp: every Beast header of idlewheel in one include (but the TLS one).
 *
 * The umbrella of idlewheel/beast/, as <boost/beast.hpp> is Beast's: beast::tcp_stream,
 * beast::set_option(ws, timeout) (the WebSocket timeouts on the wheel),
 * beast::http_timeouts, beast::websocket_liveness and the websocket helpers
 * (report_control_frames(), async_close_idle(), drop(), idle_close_reason(): this header
 * used to hold only those, so code that includes it for them compiles unchanged). idlewheel/beast/ssl_stream.hpp needs OpenSSL and is left out, as Beast keeps
 * <boost/beast/ssl.hpp> apart: include it yourself. Needs Boost.Beast, so Boost.Asio (not with
 * IDLEWHEEL_STANDALONE_ASIO). Nothing in the library includes this header.
 */

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#error \
    "idlewheel/beast.hpp needs Boost.Beast, which works with Boost.Asio only: it cannot be used with IDLEWHEEL_STANDALONE_ASIO"
#endif

#include <idlewheel/beast/http_timeouts.hpp>
#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/beast/websocket_helpers.hpp>
#include <idlewheel/beast/websocket_liveness.hpp>
#include <idlewheel/beast/websocket_timeout.hpp>

#endif
