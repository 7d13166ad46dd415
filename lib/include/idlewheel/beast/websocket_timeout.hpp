// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_WEBSOCKET_TIMEOUT_HPP
#define IDLEWHEEL_BEAST_WEBSOCKET_TIMEOUT_HPP

/** @file
 * @brief idlewheel::beast::set_option(ws, timeout): Beast's WebSocket timeouts on the wheel, in one line.
 */

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#error \
    "idlewheel/beast/websocket_timeout.hpp needs Boost.Beast, which works with Boost.Asio only: it cannot be used with IDLEWHEEL_STANDALONE_ASIO"
#endif

#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/core/duration_math.hpp>

#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <optional>
#include <type_traits>

namespace idlewheel::beast {
namespace detail {

template <class Stream>
struct websocket_timeout_access {
    template <class Duration>
    static void start(Stream& s, void* ws, const websocket_binding* fn, Duration handshake, Duration idle, bool pings) {
        using duration = typename Stream::duration;
        const auto convert = [](Duration d) {
            return d == Duration::max() ? duration::max() : idlewheel::detail::saturating_ceil<duration>(d);
        };
        s.ws_start(ws, fn, convert(handshake), convert(idle), pings);
    }
    // The size of the stream's state for these timeouts (Stream::websocket_state_size is its
    // documented value).
    static constexpr std::size_t state_size = sizeof(typename Stream::ws_timeouts);
};

template <class WebSocket>
struct websocket_binding_of {
    static bool is_open(void* ws) noexcept { return static_cast<WebSocket*>(ws)->is_open(); }
    static void ping(void* ws) { static_cast<WebSocket*>(ws)->async_ping({}, [](boost::system::error_code) {}); }
    static bool beast_timeouts_on(void* ws) noexcept {
        using boost::beast::websocket::stream_base;
        stream_base::timeout t{};
        static_cast<WebSocket*>(ws)->get_option(t);
        return t.handshake_timeout != stream_base::none() || t.idle_timeout != stream_base::none() ||
               t.keep_alive_pings;
    }
    static constexpr websocket_binding value{&is_open, &ping, &beast_timeouts_on};
};

template <class WebSocket>
auto& timed_layer(WebSocket& ws) noexcept {
    auto& lowest = boost::beast::get_lowest_layer(ws);
    static_assert(is_basic_tcp_stream<std::decay_t<decltype(lowest)>>::value,
                  "idlewheel::beast::set_option(ws, timeout): the websocket::stream's lowest layer must be an "
                  "idlewheel::beast::tcp_stream (websocket::stream<idlewheel::beast::tcp_stream>, or over "
                  "ssl_stream<idlewheel::beast::tcp_stream>)");
    return lowest;
}

}  // namespace detail

/**
 * Beast's WebSocket timeouts on the wheel: call it where Beast's servers and clients call
 * `ws.set_option(websocket::stream_base::timeout::suggested(role))`, with the same argument,
 * on a websocket::stream whose lowest layer is an idlewheel::beast::tcp_stream (plain, over
 * TLS, flex; callbacks or coroutines):
 *
 *     // Beast:     ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
 *     idlewheel::beast::set_option(ws_, websocket::stream_base::timeout::suggested(beast::role_type::server));
 *
 * Nothing else changes: no handler, no session member, no configuration passed around. The
 * websocket::stream's own timer is never armed (its timeout option is set to none here);
 * the deadlines live in the tcp_stream below it (56 bytes of its state on a 64-bit target,
 * tcp_stream::websocket_state_size, pinned by a test; its one wheel node: no allocation, no
 * timer per connection). Their rules are session_liveness's and websocket_liveness's, written
 * once (core/liveness_rules.hpp), with Beast's times: the close bound is handshake_timeout,
 * and with keep-alive pings the ping comes after idle_timeout / 2 of silence and its answer
 * has idle_timeout / 2.
 *
 * @par Semantics (Beast's, boost/beast/websocket/impl/stream_impl.hpp)
 *  - handshake_timeout: the opening handshake (async_accept / async_handshake) must complete
 *    within it, counted from this call (Beast counts from the start of the handshake
 *    operation: call this right before it, as Beast's examples do); also the bound of the
 *    closing handshake, from the moment Beast starts it (our close frame, or the answer to
 *    the peer's) to the end of its teardown. The end of the handshake is seen at the stream's
 *    next operation (a server reads at once); idleness counts from then.
 *  - a stream with no operation pending during the handshake, or after the connection ended
 *    (an error, a drop, the teardown of a close), is in no wheel: the session may be
 *    destroyed on any thread, as Beast's listener may do; an open stream with nothing pending
 *    stays in its wheel (Beast's timer runs between operations too).
 *  - idle_timeout with keep_alive_pings: when no byte has come from the peer for
 *    idle_timeout / 2, a ping is sent; when no byte comes for idle_timeout / 2 more, the
 *    connection is dropped. A peer that answers pings is never dropped (as with Beast).
 *  - idle_timeout without keep_alive_pings: dropped when no byte has come for idle_timeout.
 *    (Beast counts from the start of the last read operation, which a message trickling in
 *    does not restart: it may drop a peer still sending. This counts from the last byte.)
 *  - none() turns a part off, as with Beast.
 *  - a drop is Beast's: the socket is closed, and the pending operation completes with
 *    boost::beast::error::timeout (if none is pending, the next one started does), so the
 *    handlers written for Beast's timeouts see what they saw. websocket_verdict() on the
 *    tcp_stream says which rule fired (timeout_verdict(ws) below).
 * Precision is the wheel's: never early, at most one tick (plus the io_context's delay) late.
 *
 * @par Requirements
 *  - call it on the stream's executor (its wheel's: a shard's strand with a pool), before the
 *    handshake; calling it again sets the times anew (from now).
 *  - the websocket::stream must stay where it is from this call on (the tcp_stream keeps its
 *    address to send pings and read its status): a member of the session, or a local of the
 *    coroutine, as in every Beast example; move it before, never after.
 *  - keep-alive pings are sent with ws.async_ping(); the application must not send pings of
 *    its own on the same stream (Beast has room for one waiting ping).
 *  - do not also call ws.set_option(websocket::stream_base::timeout) with timeouts on after
 *    this: with the library's checks on (IDLEWHEEL_CHECK_USAGE), the handshake's end prints
 *    what happened and calls std::abort().
 *
 * @param ws the websocket stream.
 * @param timeout Beast's option: handshake_timeout, idle_timeout, keep_alive_pings.
 * @throws system_error as wheel_timer::schedule (error::stopped, error::too_many_pending) if
 * the deadline cannot enter the wheel.
 */
template <class NextLayer, bool Deflate>
void set_option(boost::beast::websocket::stream<NextLayer, Deflate>& ws,
                const boost::beast::websocket::stream_base::timeout& timeout) {
    using boost::beast::websocket::stream_base;
    using ws_type = boost::beast::websocket::stream<NextLayer, Deflate>;
    auto& lowest = detail::timed_layer(ws);
    ws.set_option(stream_base::timeout{stream_base::none(), stream_base::none(), false});
    detail::websocket_timeout_access<std::decay_t<decltype(lowest)>>::start(
        lowest, &ws, &detail::websocket_binding_of<ws_type>::value, timeout.handshake_timeout, timeout.idle_timeout,
        timeout.keep_alive_pings);
}

/// Why the timeouts set with set_option(ws, timeout) dropped the connection (the lowest
/// layer's websocket_verdict()): handshake_timeout, idle, dead_peer or close_timeout;
/// std::nullopt if they did not.
/// @param ws the websocket stream.
/// @return the verdict, or std::nullopt.
template <class NextLayer, bool Deflate>
[[nodiscard]] std::optional<liveness_event> timeout_verdict(const boost::beast::websocket::stream<NextLayer, Deflate>& ws) {
    return detail::timed_layer(const_cast<boost::beast::websocket::stream<NextLayer, Deflate>&>(ws)).websocket_verdict();
}

}  // namespace idlewheel::beast

#endif
