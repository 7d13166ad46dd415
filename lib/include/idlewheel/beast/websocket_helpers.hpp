// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_WEBSOCKET_HELPERS_HPP
#define IDLEWHEEL_BEAST_WEBSOCKET_HELPERS_HPP

/** @file
 * @brief idlewheel/beast/websocket_helpers.hpp: glue between idlewheel's liveness objects and boost::beast::websocket::stream.
 *
 *  - report_control_frames(ws, hb): every pong (and ping, and close) the peer sends counts as
 *    inbound for the heartbeat. Beast calls the control callback while a read is pending,
 *    which an echo-style session always has.
 *  - async_close_idle(ws, handler): the idle-kick outcome, a close handshake with
 *    1000 (normal) "idle timeout".
 *  - drop(stream): the dead-peer and handshake-timeout outcome: the socket is closed at once,
 *    and every pending operation on it completes with operation_aborted.
 *
 * Leave Beast's own websocket timeouts off (websocket::stream_base::timeout::none(), the
 * default for a stream you construct yourself): idlewheel replaces them. Three things Beast
 * then no longer does for you, and a session must:
 *  - bound the close handshake: with its timeouts off, Beast's close waits for the peer's
 *    close frame forever. Arm an operation_deadline when you start a close and drop() the
 *    stream when it expires (demo_server/web_session.hpp does).
 *  - start one close only: Beast asserts on a second async_close. Before async_close_idle,
 *    check that no close is under way (your own flag, and ws.is_open()): the peer may have
 *    started one.
 *  - one ping at a time: Beast forbids a second async_ping while one is pending; keep a "ping
 *    in flight" flag and skip send_ping while it is set. Do not report your pings to an
 *    idle_watch as writes (on_write()): all-idle would then never fire (Netty's trap too).
 *
 * beast::websocket_liveness applies all of this for you. These functions used to be all of
 * idlewheel/beast.hpp; that header is now the umbrella of the Beast headers and still brings
 * them (CHANGELOG.md, Unreleased).
 */

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#error \
    "idlewheel/beast/websocket_helpers.hpp needs Boost.Beast, which works with Boost.Asio only: it cannot be used with IDLEWHEEL_STANDALONE_ASIO"
#endif

#include <idlewheel/detail/lowest_socket.hpp>
#include <idlewheel/heartbeat.hpp>

#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/system/error_code.hpp>

#include <type_traits>
#include <utility>

namespace idlewheel::beast {

/// The close reason of an idle kick: 1000 (normal), "idle timeout".
[[nodiscard]] inline boost::beast::websocket::close_reason idle_close_reason() {
    return {boost::beast::websocket::close_code::normal, "idle timeout"};
}

/// Reports every control frame from the peer to `hb` (replaces ws's control callback; the
/// callback holds only a reference, so installing it does not allocate). `hb` must outlive
/// the stream's reads.
/// @param ws the websocket stream.
/// @param hb the heartbeat told of every control frame (heartbeat::on_inbound()).
template <class NextLayer, bool Deflate, class Wheel>
void report_control_frames(boost::beast::websocket::stream<NextLayer, Deflate>& ws, basic_heartbeat<Wheel>& hb) {
    ws.control_callback([&hb](boost::beast::websocket::frame_type, boost::beast::string_view) { hb.on_inbound(); });
}

/// The same, then calls `next(kind, payload)` for every control frame, for an application that
/// wants to see them too. `next` is stored in the stream's type-erased callback.
/// @param ws the websocket stream.
/// @param hb the heartbeat told of every control frame.
/// @param next called as next(boost::beast::websocket::frame_type, boost::beast::string_view).
template <class NextLayer, bool Deflate, class Wheel, class Next>
void report_control_frames(boost::beast::websocket::stream<NextLayer, Deflate>& ws, basic_heartbeat<Wheel>& hb,
                           Next next) {
    static_assert(std::is_invocable_v<Next&, boost::beast::websocket::frame_type, boost::beast::string_view>,
                  "idlewheel::beast::report_control_frames(ws, hb, next): next must be callable as "
                  "next(boost::beast::websocket::frame_type, boost::beast::string_view)");
    ws.control_callback([&hb, next = std::move(next)](boost::beast::websocket::frame_type kind,
                                                      boost::beast::string_view payload) mutable {
        hb.on_inbound();
        next(kind, payload);
    });
}

/// Starts the idle-kick close handshake: 1000 "idle timeout". Completion: void(error_code).
/// Only if no close is under way (see idlewheel/beast/websocket_helpers.hpp), and with a deadline on it.
/// It is websocket::stream::async_close: its handler, executor, cancellation and errors.
/// @param ws the websocket stream.
/// @param token the completion token.
/// @return what the token's async_result makes of it.
template <class NextLayer, bool Deflate, class CompletionToken>
auto async_close_idle(boost::beast::websocket::stream<NextLayer, Deflate>& ws, CompletionToken&& token) {
    return ws.async_close(idle_close_reason(), std::forward<CompletionToken>(token));
}

/// Closes the lowest layer's socket at once (dead peer, handshake timeout). Pending operations
/// complete with operation_aborted. Never throws.
/// @param stream any stream over a TCP socket (reached as Beast's get_lowest_layer() does).
template <class Stream>
void drop(Stream& stream) noexcept {
    boost::system::error_code ignored;  // closing can only fail if already closed
    idlewheel::detail::lowest_socket(stream).close(ignored);
}

}  // namespace idlewheel::beast

#endif
