// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_LOWEST_SOCKET_HPP
#define IDLEWHEEL_DETAIL_LOWEST_SOCKET_HPP

// The socket under a stream, found as Beast's get_lowest_layer() finds the lowest layer (down
// through next_layer()), then its socket() if it has one (Beast's tcp_stream,
// idlewheel::beast::tcp_stream), or the lowest layer itself (a socket). Needs no Beast: the
// liveness objects close the connection through it, with Boost.Asio or standalone Asio.

#include <type_traits>
#include <utility>

namespace idlewheel::detail {

template <class S, class = void>
struct stream_has_next_layer : std::false_type {};
template <class S>
struct stream_has_next_layer<S, std::void_t<decltype(std::declval<S&>().next_layer())>> : std::true_type {};
template <class S, class = void>
struct stream_has_socket : std::false_type {};
template <class S>
struct stream_has_socket<S, std::void_t<decltype(std::declval<S&>().socket())>> : std::true_type {};

// The socket under a stream: down through next_layer(), then socket() (Beast's tcp_stream,
// idlewheel::beast::tcp_stream), or the stream itself (a socket).
template <class S>
auto& lowest_socket(S& stream) noexcept {
    if constexpr (stream_has_next_layer<S>::value)
        return lowest_socket(stream.next_layer());
    else if constexpr (stream_has_socket<S>::value)
        return stream.socket();
    else
        return stream;
}

}  // namespace idlewheel::detail

#endif
