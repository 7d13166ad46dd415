// What the demo's stream layers (session_stream.hpp, message_count.hpp) share: a read that goes
// to the next layer and whose completion the layer sees first, on the executor the caller's
// handler would run on.
#ifndef IDLEWHEEL_DEMO_READ_THROUGH_HPP
#define IDLEWHEEL_DEMO_READ_THROUGH_HPP

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <utility>

namespace demo {

/// next.async_read_some(buffers), completed through `seen(ec, n, buffers, handler)`: the layer
/// looks at (or changes) the result and calls `std::move(handler)(ec, n)`, or keeps the handler
/// to call it later.
template <class Next, class MutableBuffers, class Token, class Seen>
auto async_read_some_through(Next& next, const MutableBuffers& buffers, Token&& token, Seen seen) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [&next, seen](auto handler, const MutableBuffers& b) mutable {
            const auto ex = boost::asio::get_associated_executor(handler, next.get_executor());
            next.async_read_some(
                b, boost::asio::bind_executor(
                       ex, [b, seen, h = std::move(handler)](boost::system::error_code ec, std::size_t n) mutable {
                           seen(ec, n, b, std::move(h));
                       }));
        },
        token, buffers);
}

}  // namespace demo

#endif
