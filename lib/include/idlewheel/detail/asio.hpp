// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_ASIO_HPP
#define IDLEWHEEL_DETAIL_ASIO_HPP

// The one place that chooses between Boost.Asio and standalone Asio. Every other header of the
// library names Asio as `net::` and error codes as `idlewheel::error_code`.
//
//  - default: Boost.Asio (Boost 1.81 or newer), boost::system::error_code;
//  - IDLEWHEEL_STANDALONE_ASIO defined: standalone Asio (1.22 or newer), std::error_code; no
//    Boost header is included (the Beast headers, idlewheel/beast.hpp and beast/, which need
//    Beast, say so with #error).
//
// These are the Asio headers the library itself needs, nothing more.
//
// It is also the one place that states the language the library needs: C++17. Every header
// works with C++17; what needs C++20 is only what Asio itself needs it for, coroutines
// (co_await wheel.async_wait(d, net::use_awaitable), cancel_after(..., use_awaitable)).

#if __cplusplus < 201703L && (!defined(_MSVC_LANG) || _MSVC_LANG < 201703L)
#error \
    "idlewheel needs C++17 or newer (-std=c++17); coroutines (co_await with net::use_awaitable) need C++20, as in Asio"
#endif

#if defined(IDLEWHEEL_STANDALONE_ASIO)

#include <asio/any_io_executor.hpp>
#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/associator.hpp>
#include <asio/async_result.hpp>
#include <asio/basic_waitable_timer.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/detail/thread_context.hpp>
#include <asio/dispatch.hpp>
#include <asio/error.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/execution_context.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/strand.hpp>
#include <asio/wait_traits.hpp>

#include <system_error>

namespace idlewheel {
namespace net = ::asio;
using error_code = std::error_code;
using system_error = std::system_error;
using error_category_base = std::error_category;
}  // namespace idlewheel

#define IDLEWHEEL_ERROR_CODE_ENUM_NAMESPACE std

#else

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/detail/thread_context.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/wait_traits.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

namespace idlewheel {
namespace net = ::boost::asio;
using error_code = ::boost::system::error_code;
using system_error = ::boost::system::system_error;
using error_category_base = ::boost::system::error_category;
}  // namespace idlewheel

#define IDLEWHEEL_ERROR_CODE_ENUM_NAMESPACE boost::system

#endif

#include <utility>

namespace idlewheel::detail {

// A handler with its completion argument bound: what asio::append(h, ec) makes (Asio 1.24+;
// standalone Asio 1.22 has it only as experimental). Every association of the handler
// (executor, allocator, cancellation slot, ...) is forwarded through net::associator below.
template <class Handler, class Arg>
struct handler_with_arg {
    Handler handler;
    Arg arg;
    void operator()() { std::move(handler)(std::move(arg)); }
};

}  // namespace idlewheel::detail

template <template <class, class> class Associator, class Handler, class Arg, class DefaultCandidate>
struct idlewheel::net::associator<Associator, idlewheel::detail::handler_with_arg<Handler, Arg>, DefaultCandidate>
    : Associator<Handler, DefaultCandidate> {
    static typename Associator<Handler, DefaultCandidate>::type get(
        const idlewheel::detail::handler_with_arg<Handler, Arg>& h) noexcept {
        return Associator<Handler, DefaultCandidate>::get(h.handler);
    }
    static auto get(const idlewheel::detail::handler_with_arg<Handler, Arg>& h, const DefaultCandidate& c) noexcept
        -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler, c)) {
        return Associator<Handler, DefaultCandidate>::get(h.handler, c);
    }
};

#endif
