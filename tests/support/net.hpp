// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_NET_HPP
#define IDLEWHEEL_TESTS_SUPPORT_NET_HPP

// The one place the tests name Asio, so that the same tests build against Boost.Asio (Boost
// 1.81 to 1.92) and standalone Asio (1.22 to 1.36; IDLEWHEEL_STANDALONE_ASIO), the way the
// library does it in idlewheel/detail/asio.hpp:
//
//  - `net::` is the Asio namespace (boost::asio or asio), `idlewheel::error_code` /
//    `idlewheel::system_error` the error types;
//  - `idlewheel::test::deferred` and `idlewheel::test::as_tuple` are the completion tokens
//    that Asio 1.24 (Boost 1.80) moved out of `experimental`: standalone Asio 1.22 has them
//    only there;
//  - `net::experimental::make_parallel_group` and the awaitable operators are experimental in
//    every supported version.
//
// With IDLEWHEEL_TEST_BOOST_VERSION (set by tests/CMakeLists.txt for every Boost build), and
// IDLEWHEEL_TEST_ASIO_VERSION for standalone Asio, every test checks that it really sees that
// version and not the system's: a stray -I/usr/include would otherwise test the wrong one
// silently.

#include <idlewheel/detail/asio.hpp>

#if defined(IDLEWHEEL_STANDALONE_ASIO)

#include <asio/awaitable.hpp>
#include <asio/bind_allocator.hpp>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/error.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/experimental/parallel_group.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <asio/version.hpp>
#include <asio/write.hpp>
#if defined(IDLEWHEEL_TEST_ASIO_VERSION)
static_assert(ASIO_VERSION == IDLEWHEEL_TEST_ASIO_VERSION,
              "the tests compile against another standalone Asio than the one they were configured for");
#endif
#if ASIO_VERSION < 102400
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/deferred.hpp>
#define IDLEWHEEL_TEST_EXPERIMENTAL_TOKENS 1
#else
#include <asio/as_tuple.hpp>
#include <asio/deferred.hpp>
#endif

#else

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/version.hpp>

#if defined(IDLEWHEEL_TEST_BOOST_VERSION)
static_assert(BOOST_VERSION == IDLEWHEEL_TEST_BOOST_VERSION,
              "the tests compile against another Boost than the one they were configured for");
#endif

#endif

namespace net = idlewheel::net;

namespace idlewheel::test {

#if defined(IDLEWHEEL_TEST_EXPERIMENTAL_TOKENS)
using net::experimental::as_tuple;
using net::experimental::deferred;
#else
using net::as_tuple;
using net::deferred;
#endif

}  // namespace idlewheel::test

#endif
