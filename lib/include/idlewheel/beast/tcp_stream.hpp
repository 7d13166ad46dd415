// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_TCP_STREAM_HPP
#define IDLEWHEEL_BEAST_TCP_STREAM_HPP

/** @file
 * @brief idlewheel::beast::tcp_stream: a drop-in for boost::beast::tcp_stream whose timeouts live on the timing wheel.
 */

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#error \
    "idlewheel/beast/tcp_stream.hpp needs Boost.Beast, which works with Boost.Asio only: it cannot be used with IDLEWHEEL_STANDALONE_ASIO"
#endif

#include <idlewheel/core/check_config.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/core/liveness_rules.hpp>
#include <idlewheel/detail/executor_check.hpp>
#include <idlewheel/detail/liveness_access.hpp>
#include <idlewheel/session_liveness.hpp>  // liveness_event: the WebSocket timeouts' verdicts
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_pool.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/query.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <boost/system/error_code.hpp>
#include <boost/version.hpp>

#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace idlewheel::beast {

template <class Wheel, class Executor = net::any_io_executor>
class basic_tcp_stream;

namespace detail {

// Beast's rule for a read or write started at or after its deadline, which Boost 1.86 changed
// (Beast commit 2dcdef3, "Handle expired timers in basic_stream transfer_op"): up to 1.85 the
// operation is started and its timer wait, on an expiry already past, completes after an
// operation that completed at once (a write with room in the send buffer goes through); from
// 1.86 on the socket is closed and the operation completes with error::timeout, as if by post.
// The stream follows the rule of the Boost it is built with.
#if BOOST_VERSION >= 108600
inline constexpr bool late_transfer_fails = true;
#else
inline constexpr bool late_transfer_fails = false;
#endif

// Which wheel the streams of one execution context use: one wheel (use_wheel) or a pool's
// shards (use_wheel_pool). An execution-context service, so that a stream finds it from its
// executor alone.
template <class Wheel>
class wheel_service final : public net::execution_context::service {
public:
    using pool_type = basic_wheel_pool<typename Wheel::clock_type>;
    static inline net::execution_context::id id;  // NOLINT: Asio's service key

    explicit wheel_service(net::execution_context& context) : net::execution_context::service(context) {}

    Wheel* wheel = nullptr;
    pool_type* pool = nullptr;

private:
    void shutdown() override {}
};

// The loud end of a stream destroyed with an operation pending (IDLEWHEEL_CHECK_LIFETIME).
[[noreturn]] inline void destroyed_while_pending() noexcept {
    std::fputs(
        "idlewheel: an idlewheel::beast::tcp_stream was destroyed while one of its operations was pending "
        "(its completion would read the destroyed stream). Keep the session alive from its handlers (each "
        "holds shared_from_this(), as Beast's examples do), or close() the stream and let the pending "
        "handlers run before destroying it (see idlewheel/beast/tcp_stream.hpp)\n",
        stderr);
    std::fflush(stderr);
    std::abort();
}

// A stream built where no wheel can be found: the message is printed on stderr before the
// constructor throws, so that it reaches the operator even from a session whose exception
// nobody looks at (co_spawn(..., detached) swallows it: every connection would be dropped
// without a word). A set-up mistake: one line per connection refused.
[[noreturn]] inline void no_wheel_found(const char* what) {
    std::fprintf(stderr, "idlewheel: %s (the stream's constructor throws std::logic_error)\n", what);
    std::fflush(stderr);
    throw std::logic_error(what);
}

// The loud end of a stream moved with an operation pending (IDLEWHEEL_CHECK_LIFETIME).
[[noreturn]] inline void moved_while_pending() noexcept {
    std::fputs(
        "idlewheel: an idlewheel::beast::tcp_stream was moved while one of its operations was pending (its "
        "completion would read the moved-from stream). Move a stream before starting operations on it (a "
        "coroutine's by-value parameter, Beast's release_stream() hand-over after the read completed)\n",
        stderr);
    std::fflush(stderr);
    std::abort();
}

template <class T>
struct is_basic_tcp_stream : std::false_type {};

template <class T>
struct dependent_false : std::false_type {};

// The handler of a WebSocket teardown on the stream's socket: when it completes (the close is
// over, cleanly or not), the stream's WebSocket timeouts stop watching and its node leaves the
// wheel, on the stream's executor, before the handler runs (after it the session may be
// destroyed anywhere). Every associated characteristic is the handler's (associator below).
// While it is pending the teardown counts as an operation of the stream (the close bound is
// armed for it); destroyed uncalled (an io_context shut down), it tells the stream so first.
template <class Stream, class Handler>
class teardown_handler {
public:
    teardown_handler(Stream& stream, Handler&& handler) : handler_(std::move(handler)), stream_(&stream) {}
    teardown_handler(teardown_handler&& other) noexcept(std::is_nothrow_move_constructible_v<Handler>)
        : handler_(std::move(other.handler_)), stream_(std::exchange(other.stream_, nullptr)) {}
    teardown_handler(const teardown_handler&) = delete;
    teardown_handler& operator=(const teardown_handler&) = delete;
    teardown_handler& operator=(teardown_handler&&) = delete;
    ~teardown_handler() {
        if (stream_ != nullptr) stream_->teardown_done(/*completed=*/false);
    }
    void operator()(boost::system::error_code ec) {
        std::exchange(stream_, nullptr)->teardown_done(/*completed=*/true);
        std::move(handler_)(ec);
    }
    [[nodiscard]] const Handler& handler() const noexcept { return handler_; }

private:
    Handler handler_;
    Stream* stream_;
};

// The handler a stream gives its socket: on completion it tells the stream (which clears the
// operation's pending flags and turns the error into beast::error::timeout if its deadline
// fired), then calls the user's handler. Every associated characteristic (executor,
// allocator, cancellation slot) is the user's handler's (the associator below).
//
// A handler destroyed without being called (its io_context shut down or destroyed with the
// operation pending: a server that stops its io_context and returns from main) tells the
// stream the operation is over (abandon()) before the user's handler, and the session it may
// hold, are destroyed: the stream is then not "destroyed with an operation pending".
template <class Stream, class Handler>
class deadline_handler {
public:
    // From the token as the caller gave it: an rvalue is moved, an lvalue handler copied (as
    // Asio and Beast take a handler passed by lvalue).
    template <class H, std::enable_if_t<std::is_constructible_v<Handler, H&&>, int> = 0>
    deadline_handler(Stream& stream, std::uint8_t ops, H&& handler)
        : handler_(std::forward<H>(handler)), stream_(&stream), ops_(ops) {}
    deadline_handler(deadline_handler&& other) noexcept(std::is_nothrow_move_constructible_v<Handler>)
        : handler_(std::move(other.handler_)), stream_(std::exchange(other.stream_, nullptr)), ops_(other.ops_) {}
    deadline_handler(const deadline_handler&) = delete;
    deadline_handler& operator=(const deadline_handler&) = delete;
    deadline_handler& operator=(deadline_handler&&) = delete;
    ~deadline_handler() {
        if (stream_ != nullptr) stream_->abandon(ops_);  // before handler_ (and its session) goes
    }

    template <class... Args>
    void operator()(boost::system::error_code ec, Args... args) {
        // A ping the stream wrote for its WebSocket timeouts is still being written: this
        // failed operation may be the session's last, and the session must outlive the ping
        // (its completion reads the stream). The stream closes the socket (the ping's write
        // ends at once) and this completion goes round once more, as if by post.
        if (ec && deferrals_ < max_deferrals && stream_->wait_for_own_write(ops_)) {
            ++deferrals_;
            const auto ex = stream_->get_executor();  // then the handler's own executor, as every completion
            net::post(ex, net::append(std::move(*this), ec, args...));
            return;
        }
        stream_->check_completion();  // before the stream's state is touched
        std::exchange(stream_, nullptr)->finish(ops_, ec, transferred(args...));
        std::move(handler_)(ec, std::move(args)...);
    }

    [[nodiscard]] const Handler& handler() const noexcept { return handler_; }

private:
    static constexpr std::uint16_t max_deferrals = 1000;  // a bound, never reached: the ping's write ends at once

    [[nodiscard]] static std::size_t transferred() noexcept { return 0; }
    template <class First, class... Rest>
    [[nodiscard]] static std::size_t transferred(const First& first, const Rest&...) noexcept {
        if constexpr (std::is_same_v<First, std::size_t>)
            return first;
        else
            return 0;
    }

    Handler handler_;
    Stream* stream_;
    std::uint8_t ops_;
    std::uint16_t deferrals_ = 0;
};

// What a stream needs of the websocket::stream above it for the WebSocket timeouts
// (idlewheel/beast/websocket_timeout.hpp makes one per websocket::stream type).
struct websocket_binding {
    bool (*is_open)(void* ws) noexcept;  // Beast's status is open
    void (*ping)(void* ws);              // ws.async_ping({}, a handler that does nothing)
    bool (*beast_timeouts_on)(void* ws) noexcept;  // Beast's own timeout option is not "none"
};

// The loud end of Beast's own websocket timeouts set beside the wheel's (IDLEWHEEL_CHECK_USAGE).
[[noreturn]] inline void beast_websocket_timeout_too() noexcept {
    std::fputs(
        "idlewheel: websocket::stream::set_option(stream_base::timeout) was called after "
        "idlewheel::beast::set_option(ws, timeout): Beast's own timer would run beside the wheel's. Set the "
        "timeouts once, with idlewheel::beast::set_option (see idlewheel/beast/websocket_timeout.hpp)\n",
        stderr);
    std::fflush(stderr);
    std::abort();
}

template <class Stream>
struct websocket_timeout_access;

}  // namespace detail

/// Makes `wheel` the wheel of every basic_tcp_stream<Wheel> built on `context` (an
/// io_context run by one thread, or one of an io_context per thread) without a wheel of its
/// own. Call it once per context at set-up, before any stream is built on it; a later call
/// replaces the wheel for streams built afterwards. Not thread-safe against streams being
/// built. `wheel` must outlive those streams' use.
/// @param context the execution context (an io_context).
/// @param wheel the wheel, on that context.
/// @throws std::invalid_argument if `wheel` is not on `context`.
template <class Wheel>
void use_wheel(net::execution_context& context, Wheel& wheel) {
    if (&net::query(wheel.get_executor(), net::execution::context) != &context)
        throw std::invalid_argument("idlewheel::beast::use_wheel: the wheel is not on this execution context");
    net::use_service<detail::wheel_service<Wheel>>(context).wheel = &wheel;
}

/// Makes `pool` the wheels of every basic_tcp_stream<basic_wheel_timer<Clock>> built on `io`
/// (one io_context run by N threads) without a wheel of its own: a stream uses the wheel of
/// the shard whose strand its executor is, so build each connection on
/// `pool.next().get_executor()`. Call it once at set-up, before the threads run; it takes
/// precedence over use_wheel() on the same context. `pool` must outlive the streams' use.
/// @param io the io_context.
/// @param pool the pool, on that io_context.
/// @throws std::invalid_argument if `pool` is not on `io`.
template <class Clock>
void use_wheel_pool(net::io_context& io, basic_wheel_pool<Clock>& pool) {
    if (&net::query(pool[0].get_executor(), net::execution::context) != &io)  // a pool has a shard at least
        throw std::invalid_argument("idlewheel::beast::use_wheel_pool: the pool is not on this io_context");
    net::use_service<detail::wheel_service<typename basic_wheel_pool<Clock>::wheel_type>>(io).pool = &pool;
}

/**
 * A TCP stream with Beast's timeout interface, backed by a wheel (see below for the rules and
 * every difference from boost::beast::basic_stream). `Wheel` is a basic_wheel_timer;
 * basic_tcp_stream<basic_wheel_timer<manual_clock>> is what tests use.
 *
 * @tparam Wheel the wheel type (a basic_wheel_timer).
 * @tparam Executor the socket's executor (net::any_io_executor, as Beast's tcp_stream; a
 * coroutine server rebinds it to use_awaitable_t<>::executor_with_default<...>).
 *
 * @par Thread safety
 * Distinct objects safe; shared objects unsafe. Every call, and every completion handler of
 * its operations, on the stream's executor (the wheel's). An operation started inside a
 * handler of another executor (Beast 1.81's http_server_flex starts async_detect_ssl from its
 * listener's strand), whose completion handler has the stream's executor (the default), is
 * carried over to the stream's executor as if by post and started there, in every build. What
 * cannot be carried over (a completion handler bound to another executor, a stream on an
 * io_context's own executor used from two threads) prints what happened on stderr and calls
 * std::abort(), in every build unless IDLEWHEEL_CHECK_STREAM_EXECUTOR is 0.
 *
 * @par Lifetime
 * No operation may be pending when the stream is destroyed (std::abort() with a message when
 * IDLEWHEEL_CHECK_LIFETIME is on, undefined otherwise): keep its owner alive from the
 * handlers, or close() it and let the handlers run first (see Differences below).
 *
 * @par Overview
 * idlewheel::beast::tcp_stream: a drop-in for boost::beast::tcp_stream whose timeouts live on
 * the timing wheel instead of in two steady_timers per stream. A Beast server converts by
 * registering its wheel once and changing a type:
 *
 *     net::io_context ioc;
 *     idlewheel::wheel_timer wheel(ioc);
 *     idlewheel::beast::use_wheel(ioc, wheel);              // once, at set-up
 *     ...
 *     websocket::stream<idlewheel::beast::tcp_stream> ws(std::move(socket));
 *     beast::get_lowest_layer(ws).expires_after(30s);       // as with beast::tcp_stream
 *     ws.async_accept(...);
 *
 * With one io_context run by N threads, register an idlewheel::wheel_pool instead
 * (use_wheel_pool(ioc, pool)) and build each connection on a shard's strand
 * (acceptor.async_accept(pool.next().get_executor(), ...)) where Beast's examples call
 * net::make_strand(ioc): the stream then finds its shard's wheel from its executor. Or pass
 * the wheel to the constructor.
 *
 * @par Timeout rules (Beast's: boost/beast/core/basic_stream.hpp and impl/basic_stream.hpp)
 *  - two expiries, one per direction (read, write). expires_after() / expires_at() /
 *    expires_never() set the expiry of each direction that has NO operation pending; a
 *    direction with one pending keeps the expiry its operation started with. Calling them
 *    while a read and a write (or a connect) are both pending is a precondition violation: an
 *    assert, as Beast's BOOST_ASSERT (with NDEBUG nothing changes then).
 *  - an operation (async_read_some: the read expiry; async_write_some: the write expiry;
 *    async_connect: the write expiry, and it counts as a pending read and write) has the
 *    deadline its direction's expiry had when it started; `never` is no deadline. Bytes
 *    arriving never extend it. After it completes, the expiry stays: the next operation of
 *    that direction started without a new expires_*() has the same absolute deadline.
 *  - when a pending operation's deadline passes, the socket is closed (every pending operation
 *    ends) and the operations whose deadline passed complete with boost::beast::error::timeout,
 *    even one whose success was already queued in the same turn of the io_context; a pending
 *    operation of the other direction whose own deadline has not passed completes with what
 *    the socket reports (net::error::operation_aborted), as with Beast, whose timeout handler
 *    closes the whole socket and flags only its own direction.
 *  - a read or write started at or after its deadline: the stream follows the rule of the
 *    Boost it is built with, which Boost 1.86 changed (both checked side by side with
 *    Beast's own stream by tests/test_beast_late_operation.cpp):
 *    - Boost 1.86 and later: the socket is closed (a pending operation of the other direction
 *      ends with net::error::operation_aborted) and the operation completes with
 *      boost::beast::error::timeout and 0 bytes, as if by post;
 *    - up to Boost 1.85: the operation is started, with its deadline due at the wheel's next
 *      tick: one that completes at once (a write with room in the socket's send buffer, a read
 *      with data already received) completes as the socket reports, and one still pending at
 *      that tick times out as above (Beast's timer wait on an expiry already past completes
 *      after an operation that completed at once). A keep-alive server that sets the expiry
 *      before its read and writes the response after it answers a request that came just
 *      before the deadline.
 *    A connect started after its deadline is started, and times out at the next tick, with
 *    every Boost (Beast checks only reads and writes).
 * Precision is the wheel's: never before the deadline, at most one tick (plus the io_context's
 * scheduling delay) after it.
 *
 * @par Cost
 * The stream holds its socket, the two expiries, four small fields and one timer_node
 * (no steady_timer, nothing allocated). expires_*() is a store per direction, always. Starting
 * an operation with a deadline reads the clock (as Beast does) and makes sure the node is due
 * no later than that deadline: a node already due at or before it is left where it is (when
 * it comes due it re-arms for the remainder: the lazy re-arm of session_liveness), so while
 * one operation stays pending (a WebSocket's read) the deadlines of the others are a compare
 * and a store; only an earlier one moves the node (O(1)). When the last pending operation
 * completes the node leaves the wheel (O(1)): the HTTP pattern, expires_after(30s) before
 * every read, links the node at each read and unlinks it at its completion, and a stream with
 * no operation pending is in no wheel: it may be destroyed on any thread, as Beast's.
 *
 * @par Differences
 * Differences from boost::beast::basic_stream<tcp, any_io_executor, unlimited_rate_policy>:
 *  - movable only with no operation pending (Beast's moves its heap state, so its operations
 *    may be pending); the move keeps the expiries, as Beast's. Move assignment is deleted,
 *    as Beast's. release_socket() resets both expiries to never (Beast's leaves its timers
 *    behind with the old stream: the socket carries no deadline either way).
 *  - the stream must not be destroyed while one of its operations is pending (their
 *    completions read the stream); Beast's keeps its state on the heap, alive for them. With
 *    the library's checks on (IDLEWHEEL_CHECK_LIFETIME, core/check_config.hpp: on unless
 *    NDEBUG) the destructor then prints what happened and calls std::abort(); without them it
 *    is undefined. websocket::stream<tcp_stream> does it if it is destroyed with a read
 *    pending (its operations hold its state, and so this stream, only weakly). What to do:
 *    keep the session alive from its handlers (each handler holds shared_from_this(), as
 *    Beast's examples do), so that it is destroyed after its last completion; or close() the
 *    stream and let the handlers run (they complete with operation_aborted) before destroying
 *    it. Destroying it with no operation pending is safe on any thread (the node is in no
 *    wheel then: Beast's examples drop a session's last reference on the listener's thread,
 *    which may come after the session ended on its strand). An io_context destroyed with operations pending (a server that stops it and
 *    returns from main) is fine too: it destroys them without calling them, each tells the
 *    stream it is over before the handler it holds (and the session) is destroyed, and the
 *    wheel or pool may go first (destroying it takes every node out).
 *  - expires_*() while a read and a write are both pending: an assert, as Beast's.
 *  - any std::chrono duration is accepted (rounded up, saturated: hours::max() or a NaN
 *    never expire; zero and negative have passed); Beast's takes steady_clock::duration.
 *  - no rate policy (Beast's third template parameter); the second is the executor, as
 *    Beast's (rebind_executor, and the converting constructor, which carries no expiry).
 *  - close() and cancel() also take the node out of the wheel (Beast's leave its timers).
 *  - additions: wheel(), read_expiry() and write_expiry().
 *  - the wheel must outlive the stream's use of it; every call, and every completion handler
 *    of its operations, runs on the stream's executor, which is the wheel's (a shard's strand
 *    for a pool): the wheel's executor check (detail/executor_check.hpp) catches other calls
 *    in debug builds. Beast asks the same of its stream ("within the same implicit or
 *    explicit strand").
 *
 * websocket::stream keeps a steady_timer of its own for its own timeouts
 * (websocket::stream_base::timeout): give them to the wheel with
 * idlewheel::beast::set_option(ws, timeout) (idlewheel/beast/websocket_timeout.hpp) where
 * Beast's code calls ws.set_option(timeout), which keeps Beast's timer off and the deadlines in
 * this stream; or leave them off and use idlewheel::beast::websocket_liveness.
 *
 * @par Composition
 * Composes as Beast's stream does: boost::beast::get_lowest_layer(s) is the stream itself
 * (it has no next_layer()); websocket::stream<tcp_stream> finds teardown / async_teardown,
 * and beast::close_socket() finds beast_close_socket(), by argument-dependent lookup here;
 * ssl_stream<tcp_stream> uses lowest_layer() (the socket), as it does with Beast's.
 */
template <class Wheel, class Executor>
class basic_tcp_stream {
public:
    /// The wheel type.
    using wheel_type = Wheel;
    /// The clock of the wheel, whose time_point expires_at() takes.
    using clock_type = typename Wheel::clock_type;
    /// The clock's time point: what expires_at() takes and read_expiry() / write_expiry() return.
    using time_point = typename Wheel::time_point;
    /// The clock's duration: what expires_after() rounds any duration up to.
    using duration = typename Wheel::duration;
    /// The protocol (Beast's name).
    using protocol_type = net::ip::tcp;
    /// The endpoint type (Beast's name).
    using endpoint_type = net::ip::tcp::endpoint;
    /// The underlying socket: a tcp::socket on `Executor` (Beast's name).
    using socket_type = net::basic_stream_socket<net::ip::tcp, Executor>;
    /// The executor of the stream: its socket's. Handlers without an associated executor run
    /// on it.
    using executor_type = Executor;
    /// What boost::asio::ssl::stream asks of its next layer (as of Beast's stream): the socket.
    using lowest_layer_type = socket_type;

    /// The bytes of the stream's state for the one-line WebSocket timeouts
    /// (idlewheel::beast::set_option(ws, timeout)) on a 64-bit target: the figure the docs
    /// state. Held to the state's sizeof by a static_assert here and by
    /// tests/test_beast_websocket_timeout.cpp, which also checks the figure in the docs.
    static constexpr std::size_t websocket_state_size = 56;

    /// The stream type on another executor (Beast's and Asio's rebind_executor): what the
    /// coroutine examples spell
    /// `tcp_stream::rebind_executor<net::use_awaitable_t<>::executor_with_default<net::any_io_executor>>::other`,
    /// and what `net::use_awaitable.as_default_on(stream)` makes. Its operations' default
    /// completion token is the executor's (`co_await http::async_read(s, b, req)` needs none).
    /// @tparam Executor1 the other executor type.
    template <class Executor1>
    struct rebind_executor {
        using other = basic_tcp_stream<Wheel, Executor1>;  ///< The stream type on Executor1.
    };

    /// Builds the socket from `args` (as Beast's: a tcp::socket&&, an executor, an execution
    /// context, ...) and finds the wheel from the socket's executor: the pool registered with
    /// use_wheel_pool() for that executor's context (the wheel of the shard whose strand it
    /// is), else the wheel registered with use_wheel(). The lookup is a service lookup, plus
    /// one strand comparison per shard for a pool. Touches no wheel.
    /// @throws std::logic_error if no wheel is registered for the context, or a pool is and
    /// the executor is not one of its shards' strands.
    /// @param arg the socket's first constructor argument.
    /// @param args the others.
    template <class Arg, class... Args,
              std::enable_if_t<!detail::is_basic_tcp_stream<std::decay_t<Arg>>::value &&
                                   !std::is_same_v<std::decay_t<Arg>, Wheel> &&
                                   std::is_constructible_v<socket_type, Arg&&, Args&&...>,
                               int> = 0>
    explicit basic_tcp_stream(Arg&& arg, Args&&... args)
        : socket_(std::forward<Arg>(arg), std::forward<Args>(args)...), wheel_(&wheel_of(socket_.get_executor())) {}

    /// Builds the socket from `args` and uses `wheel`, which must be on the socket's executor
    /// (or, for a wheel on an io_context run by one thread, on a strand of it).
    /// @param wheel the wheel; must outlive the stream's use of it.
    /// @param arg the socket's first constructor argument.
    /// @param args the others.
    template <class Arg, class... Args,
              std::enable_if_t<std::is_constructible_v<socket_type, Arg&&, Args&&...>, int> = 0>
    basic_tcp_stream(Wheel& wheel, Arg&& arg, Args&&... args)
        : socket_(std::forward<Arg>(arg), std::forward<Args>(args)...), wheel_(&wheel) {}

    /// A socket on the wheel's executor, using `wheel`.
    /// @param wheel the wheel; must outlive the stream's use of it.
    explicit basic_tcp_stream(Wheel& wheel) : socket_(wheel.get_executor()), wheel_(&wheel) {}

    /// Moves the connection, its wheel and both expiries (Beast's move keeps them too): a
    /// stream moved into a coroutine by value, returned, or handed from an HTTP session to a
    /// WebSocket session (Beast's advanced_server `release_stream()`) keeps the deadlines it
    /// had. `other` is left as if newly built on the same executor and wheel: no socket open,
    /// both expiries never. No operation of `other` may be pending (their completions would
    /// read `other`): with IDLEWHEEL_CHECK_LIFETIME on, a move with one pending prints what
    /// happened and calls std::abort(); else it is undefined. Beast's may move with operations
    /// pending (they hold its heap state); none of its examples does. Touches no wheel: with
    /// no operation pending the node is in none.
    /// @param other the stream moved from.
    basic_tcp_stream(basic_tcp_stream&& other) noexcept
        : socket_(std::move(other.socket_)),
          wheel_(other.wheel_),
          read_expiry_(std::exchange(other.read_expiry_, time_point::max())),
          write_expiry_(std::exchange(other.write_expiry_, time_point::max())) {
        other.before_move();
    }

    /// Rebinds the executor (Beast's converting constructor): the connection of `other`, a
    /// stream on another executor type, on this stream's executor type, with the same wheel.
    /// As Beast's, the expiries are not carried: both are never (set them again). The same
    /// rule as the move for pending operations.
    /// @param other the stream rebound.
    template <class Executor1, std::enable_if_t<!std::is_same_v<Executor1, Executor> &&
                                                    std::is_constructible_v<socket_type, typename basic_tcp_stream<
                                                                                             Wheel, Executor1>::socket_type&&>,
                                                int> = 0>
    explicit basic_tcp_stream(basic_tcp_stream<Wheel, Executor1>&& other)
        : socket_(std::move(other.socket())), wheel_(&other.wheel()) {
        other.before_move();
    }

    /// Refuses, with a message that names the fix, a socket whose executor does not convert to
    /// a stream typed on an io_context's own executor (Beast's advanced_server_flex_awaitable
    /// types its coroutines on net::io_context::executor_type, while a wheel_pool's sockets
    /// are on a shard's strand).
    /// @param socket the socket.
    template <class Executor1,
              std::enable_if_t<std::is_base_of_v<net::io_context::executor_type, Executor> &&
                                   !std::is_constructible_v<socket_type, net::basic_stream_socket<net::ip::tcp, Executor1>&&>,
                               int> = 0>
    explicit basic_tcp_stream(net::basic_stream_socket<net::ip::tcp, Executor1>&& socket)
        : socket_(refused(std::move(socket))), wheel_(nullptr) {}

    /// Not copyable.
    basic_tcp_stream(const basic_tcp_stream&) = delete;
    /// Not assignable (Beast's move assignment is deleted too).
    basic_tcp_stream& operator=(const basic_tcp_stream&) = delete;

    /// Closes the socket (by destroying it) and takes the node out of the wheel in O(1): no
    /// timeout runs for a destroyed stream. No operation may be pending: with
    /// IDLEWHEEL_CHECK_LIFETIME on, one that is prints a message and calls std::abort() (see
    /// the top).
    ~basic_tcp_stream() {
#if IDLEWHEEL_CHECK_LIFETIME
        if (pending_ != 0) detail::destroyed_while_pending();
#endif
    }

    /// The executor of the stream (its socket's). Any thread.
    [[nodiscard]] executor_type get_executor() noexcept { return socket_.get_executor(); }

    /// The underlying socket. Operations started on it directly have no deadline.
    [[nodiscard]] socket_type& socket() noexcept { return socket_; }
    /// The underlying socket (const).
    [[nodiscard]] const socket_type& socket() const noexcept { return socket_; }

    /// The socket, for boost::asio::ssl::stream (Beast's stream has the same).
    [[nodiscard]] lowest_layer_type& lowest_layer() noexcept { return socket_; }
    /// The socket (const), for boost::asio::ssl::stream.
    [[nodiscard]] const lowest_layer_type& lowest_layer() const noexcept { return socket_; }

    /// The wheel the deadlines are on (an addition to Beast's interface).
    [[nodiscard]] Wheel& wheel() const noexcept { return *wheel_; }

    /// The read expiry (an addition): the deadline of the pending read if one is pending (a
    /// pending connect's is the write expiry), else the one the next async_read_some will
    /// have; time_point::max() for none.
    [[nodiscard]] time_point read_expiry() const noexcept { return read_expiry_; }

    /// Why the WebSocket timeouts (idlewheel::beast::set_option(ws, timeout), in
    /// idlewheel/beast/websocket_timeout.hpp) dropped the connection: handshake_timeout,
    /// idle (no byte for idle_timeout, pings off), dead_peer (no byte for idle_timeout / 2
    /// after a keep-alive ping) or close_timeout; std::nullopt if they did not (not set, still
    /// watching, or the connection ended otherwise). An addition to Beast's interface, whose
    /// stream says only beast::error::timeout.
    /// @return the verdict, or std::nullopt.
    [[nodiscard]] std::optional<liveness_event> websocket_verdict() const noexcept {
        if (ws_.verdict == 0) return std::nullopt;
        return static_cast<liveness_event>(ws_.verdict - 1U);
    }

    /// The write expiry (an addition): the deadline of the pending write or connect if one is
    /// pending, else the one the next async_write_some or async_connect will have;
    /// time_point::max() for none.
    [[nodiscard]] time_point write_expiry() const noexcept { return write_expiry_; }

    /// Moves the socket out (to give the connection to another stream), after setting both
    /// expiries to never and taking the node out of the wheel. Operations still pending on the
    /// socket have no deadline any more; they complete as the socket's own would (with
    /// error::timeout only if their deadline had already fired) and still call into this
    /// stream: it must outlive them.
    /// @return the socket.
    socket_type release_socket();

    /// Sets the expiry of each direction (read, write) that has no operation pending to `d`
    /// from now (rounded up; hours::max(), or anything past the clock's range, is never; zero
    /// and negative have passed), for the operations of that direction started from now on; a
    /// pending operation keeps its deadline (Beast's rule). Precondition: not both a read and
    /// a write (or a connect) pending (an assert). Reads the clock, then a store per direction:
    /// the wheel is not touched.
    /// @param d any std::chrono duration.
    template <class Rep, class Period>
    void expires_after(std::chrono::duration<Rep, Period> d);

    /// Sets the expiry of each direction with no operation pending to `t` (time_point::max():
    /// never; a time that has passed: the next operation of that direction times out at once),
    /// as expires_after(). Precondition: not both directions pending (an assert).
    /// @param t the expiry.
    void expires_at(time_point t) noexcept;

    /// No expiry for each direction with no operation pending: its operations started from now
    /// on have no deadline; a pending one keeps its deadline (Beast's rule). A store per
    /// direction. Precondition: not both directions pending (an assert).
    void expires_never() noexcept { expires_at(time_point::max()); }

    /// Cancels the pending operations: they complete with net::error::operation_aborted
    /// (unless their deadline fired first: then error::timeout). The expiries stay set for the
    /// next operations; the node leaves the wheel until one starts.
    void cancel();

    /// Closes the socket: pending operations complete with net::error::operation_aborted
    /// (unless their deadline fired first). The expiries stay set; the node leaves the wheel.
    void close();

    /// Connects the socket (synchronously; no deadline, as with Beast's connect()).
    /// @param ep the endpoint.
    /// @throws boost::system::system_error the socket's error.
    void connect(const endpoint_type& ep) { socket_.connect(ep); }
    /// Connects the socket (synchronously; no deadline).
    /// @param ep the endpoint.
    /// @param ec set to the socket's error.
    void connect(const endpoint_type& ep, boost::system::error_code& ec) { socket_.connect(ep, ec); }

    /// Reads some data synchronously: no deadline, as with Beast's stream.
    /// @param buffers where the data goes.
    /// @return the bytes read.
    /// @throws boost::system::system_error the socket's error.
    template <class MutableBufferSequence>
    std::size_t read_some(const MutableBufferSequence& buffers) {
        return socket_.read_some(buffers);
    }
    /// Reads some data synchronously: no deadline.
    /// @param buffers where the data goes.
    /// @param ec set to the socket's error.
    /// @return the bytes read.
    template <class MutableBufferSequence>
    std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
        return socket_.read_some(buffers, ec);
    }
    /// Writes some data synchronously: no deadline, as with Beast's stream.
    /// @param buffers the data.
    /// @return the bytes written.
    /// @throws boost::system::system_error the socket's error.
    template <class ConstBufferSequence>
    std::size_t write_some(const ConstBufferSequence& buffers) {
        return socket_.write_some(buffers);
    }
    /// Writes some data synchronously: no deadline.
    /// @param buffers the data.
    /// @param ec set to the socket's error.
    /// @return the bytes written.
    template <class ConstBufferSequence>
    std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
        return socket_.write_some(buffers, ec);
    }

    /// Connects to `ep` (socket::async_connect) with the write expiry as its deadline; counts
    /// as both a read and a write (as Beast's, whose connect waits on its write timer).
    /// Completion: void(error_code): success, beast::error::timeout if the deadline passed
    /// (the socket is then closed), or the socket's error. The handler is called exactly once, never inside this call, on its
    /// associated executor (default: the stream's), with its associated allocator;
    /// per-operation cancellation is the socket's (the handler's cancellation slot is
    /// forwarded to it). No other operation may be pending.
    /// @throws system_error as the wheel's schedule (error::stopped, error::too_many_pending)
    /// if the deadline cannot enter the wheel; then nothing was started.
    /// @param ep the endpoint.
    /// @param token the completion token (default: the executor's default token).
    /// @return what the token's async_result makes of it.
    template <class ConnectToken = net::default_completion_token_t<executor_type>>
    auto async_connect(const endpoint_type& ep,
                       ConnectToken&& token = net::default_completion_token_t<executor_type>());

    /// Connects to the first endpoint of `endpoints` that accepts (net::async_connect), with
    /// the write expiry as its deadline, as the other form. Completion: void(error_code, endpoint_type).
    /// @param endpoints the endpoints, tried in order.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as the first form.
    template <class EndpointSequence, class RangeConnectToken = net::default_completion_token_t<executor_type>,
              std::enable_if_t<net::is_endpoint_sequence<EndpointSequence>::value, int> = 0>
    auto async_connect(const EndpointSequence& endpoints,
                       RangeConnectToken&& token = net::default_completion_token_t<executor_type>());

    /// Connects to the first endpoint in [begin, end) that accepts, as the other forms.
    /// Completion: void(error_code, Iterator).
    /// @param begin the first endpoint.
    /// @param end past the last.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as the first form.
    template <class Iterator, class IteratorConnectToken = net::default_completion_token_t<executor_type>,
              std::enable_if_t<!net::is_endpoint_sequence<Iterator>::value, int> = 0>
    auto async_connect(Iterator begin, Iterator end,
                       IteratorConnectToken&& token = net::default_completion_token_t<executor_type>());

    /// As the endpoint-sequence form, trying only the endpoints for which
    /// `connect_condition(error_code, endpoint_type)` returns true (net::async_connect's rule).
    /// @param endpoints the endpoints, tried in order.
    /// @param connect_condition the filter.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as the first form.
    template <class EndpointSequence, class ConnectCondition, class RangeConnectToken,
              std::enable_if_t<net::is_endpoint_sequence<EndpointSequence>::value, int> = 0>
    auto async_connect(const EndpointSequence& endpoints, ConnectCondition connect_condition,
                       RangeConnectToken&& token);

    /// As the iterator form, with a connect condition (above).
    /// @param begin the first endpoint.
    /// @param end past the last.
    /// @param connect_condition the filter.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as the first form.
    template <class Iterator, class ConnectCondition, class IteratorConnectToken,
              std::enable_if_t<!net::is_endpoint_sequence<Iterator>::value, int> = 0>
    auto async_connect(Iterator begin, Iterator end, ConnectCondition connect_condition, IteratorConnectToken&& token);

    /// Reads some data (socket::async_read_some) with the read expiry, as it is now, as its
    /// deadline. Completion: void(error_code, std::size_t bytes): beast::error::timeout if the
    /// deadline passed while it was pending (the socket is then closed; bytes is what the
    /// socket reported) or had passed when it started (bytes 0); else the socket's result
    /// (operation_aborted if the socket was closed, by close() or by the write's deadline). Called exactly once,
    /// never inside this call, on the handler's associated executor (default: the stream's),
    /// with its associated allocator; per-operation cancellation is the socket's (the slot is
    /// forwarded): operation_aborted. One read at a time, except that a zero-length read while
    /// one is pending completes with success and 0 bytes, as if by post, and leaves the pending
    /// one alone (as Beast's, for ssl::stream).
    /// @param buffers where the data goes; the caller keeps them alive until the handler runs.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as async_connect.
    template <class MutableBufferSequence, class ReadToken = net::default_completion_token_t<executor_type>>
    auto async_read_some(const MutableBufferSequence& buffers,
                         ReadToken&& token = net::default_completion_token_t<executor_type>());

    /// Writes some data (socket::async_write_some) with the write expiry, as it is now, as its
    /// deadline; as async_read_some. One write at a time (a zero-length one while one is
    /// pending: as for reads).
    /// @param buffers the data; the caller keeps it alive until the handler runs.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as async_connect.
    template <class ConstBufferSequence, class WriteToken = net::default_completion_token_t<executor_type>>
    auto async_write_some(const ConstBufferSequence& buffers,
                          WriteToken&& token = net::default_completion_token_t<executor_type>());

private:
    template <class, class>
    friend class detail::deadline_handler;
    template <class, class>
    friend class basic_tcp_stream;
    friend struct detail::websocket_timeout_access<basic_tcp_stream>;
    template <class, class>
    friend class detail::teardown_handler;
    template <class W, class E, class H>
    friend void async_teardown(boost::beast::role_type, basic_tcp_stream<W, E>&, H&&);
    template <class W, class E>
    friend void teardown(boost::beast::role_type, basic_tcp_stream<W, E>&, boost::system::error_code&);

    // Beast's WebSocket teardown (the socket's shutdown, then reads until the peer's FIN)
    // starts: it counts as an operation, and the close bound of the WebSocket timeouts, if
    // they watch, is armed for it.
    void teardown_begin();
    // It is over (`completed`), or its handler was destroyed uncalled: nothing more to watch.
    void teardown_done(bool completed) noexcept;

    // The moved-from side of a move: no operation may be pending; the node leaves the wheel
    // (it is in none with no operation pending: a handler destroyed uncalled, abandon(), may
    // leave it there).
    void before_move() noexcept;

    static constexpr std::uint8_t reading = 1, writing = 2;
    static constexpr std::uint8_t tearing = 8;  // in pending_: Beast's WebSocket teardown is under way
    static constexpr std::uint8_t own_write = 4;  // in a handler's ops: a write of the WebSocket timeouts' ping

    // The refused conversion above: its message, and nothing else to read.
    template <class Executor1>
    [[noreturn]] static socket_type refused(net::basic_stream_socket<net::ip::tcp, Executor1>&&) {
        static_assert(detail::dependent_false<Executor1>::value,
                      "idlewheel::beast::tcp_stream: a stream typed on net::io_context::executor_type cannot take a "
                      "socket accepted on a wheel_pool shard's strand: make the coroutines' executor_type a strand, "
                      "idlewheel::wheel_pool::executor_type (net::strand<net::io_context::executor_type>), and co_spawn "
                      "the listener on net::make_strand(ioc) (docs/beast_coroutines.md)");
        std::abort();
    }
    static Wheel& wheel_of(const executor_type& ex);
    template <class Handler>
    using wrapped = detail::deadline_handler<basic_tcp_stream, std::decay_t<Handler>>;

    bool begin(std::uint8_t ops, std::uint8_t timed);
    void finish(std::uint8_t ops, boost::system::error_code& ec, std::size_t bytes) noexcept;
    void abandon(std::uint8_t ops) noexcept;

    // The WebSocket timeouts (websocket_timeout.hpp): Beast's handshake deadline, idle timeout
    // with keep-alive pings and close bound, on this stream's node. Their rules are
    // session_liveness's (core/liveness_rules.hpp: the phases, and decide() at every look);
    // this state keeps Beast's two durations and what a look resolves (websocket_state_size).
    using ws_phase = idlewheel::detail::liveness_phase;
    static constexpr std::uint8_t ws_pings = 1;        // keep-alive pings (Beast's keep_alive_pings)
    static constexpr std::uint8_t ws_awaiting = 2;     // a ping was sent (or due) at `since`: an answer awaited
    static constexpr std::uint8_t ws_ping_write = 4;   // the ping's write is pending on the socket
    static constexpr std::uint8_t ws_ping_queued = 8;  // the ping waits inside Beast for its turn to write
    static constexpr std::uint8_t ws_pinging = 16;     // inside ws.async_ping(): a write started now is the ping's
    static constexpr std::uint8_t ws_timed_out = 32;   // timed out with no operation pending: the next one reports it
    static constexpr std::uint8_t ws_read_seen = 64;    // handshake: a read completed (the request, or the answer)
    static constexpr std::uint8_t ws_write_seen = 128;  // handshake: a write completed (the answer, or the request)
    struct ws_timeouts {
        void* ws = nullptr;                                 // the websocket::stream (it must not move)
        const detail::websocket_binding* fn = nullptr;      // what this stream calls on it
        std::int64_t activity = 0;                          // the last byte received: a mark or an elapsed time
        duration since{};                                   // elapsed: the phase began, or the ping was sent
        duration handshake = duration::max();               // Beast's handshake_timeout (also bounds the close)
        duration idle = duration::max();                    // Beast's idle_timeout
        ws_phase phase = ws_phase::stopped;                 // stopped: not watching
        std::uint8_t flags = 0;
        std::uint8_t verdict = 0;  // 0, or 1 + liveness_event
    };
    static_assert(sizeof(void*) != 8 || sizeof(ws_timeouts) == websocket_state_size,
                  "idlewheel::beast::tcp_stream: the WebSocket timeouts' state changed size: update "
                  "websocket_state_size and the figures the docs state (tests/test_beast_websocket_timeout.cpp)");

    [[nodiscard]] bool ws_watching() const noexcept {
        return ws_.phase != ws_phase::stopped && ws_.phase != ws_phase::ended;
    }
    // Beast's times as the rules: the handshake timeout bounds the close too; with keep-alive
    // pings, a ping after idle / 2 of silence and idle / 2 for its answer, else idleness.
    [[nodiscard]] idlewheel::detail::liveness_rules<duration> ws_rules() const noexcept;
    [[nodiscard]] duration elapsed(time_point t) const noexcept { return t - wheel_->time_of(0); }
    [[nodiscard]] time_point at_elapsed(duration e) const noexcept { return wheel_->time_of(0) + e; }
    void ws_start(void* ws, const detail::websocket_binding* fn, duration handshake, duration idle, bool pings);
    void ws_on_start(std::uint8_t direction, std::uint8_t& ops);
    void ws_open_now(duration now);
    void ws_closing_now(duration now);
    [[nodiscard]] time_point ws_check(time_point now);
    void ws_time_out(liveness_event why) noexcept;
    void ws_send_ping(duration now);
    [[nodiscard]] bool wait_for_own_write(std::uint8_t ops) noexcept;
    void arm(time_point t, bool rearm);
    void on_due();
    void close_socket() noexcept;

    // Completes `handler` with error::timeout (and `more` zero-initialised values), as if by
    // post: the expiry had passed when the operation was started.
    template <class Handler, class... More>
    void complete_timed_out(Handler&& handler, More... more);
    template <class Handler, class... Args>
    void complete_posted(Handler&& handler, Args... args);

    // Beast's workaround (its issue 2065): ssl::stream completes an operation that needs no
    // I/O "as if posted" by a zero-length read on its next layer, which may come while a read
    // of its own is pending. A zero-length transfer while its direction is pending completes
    // with success and 0 bytes, as if by post, and leaves the pending one alone.
    template <class Buffers>
    [[nodiscard]] bool empty_while_pending(std::uint8_t direction, const Buffers& buffers) const noexcept;

    struct initiate_base {
        basic_tcp_stream* self;
        using executor_type = typename basic_tcp_stream::executor_type;
        [[nodiscard]] executor_type get_executor() const noexcept { return self->get_executor(); }
    };
    // An operation runs on the stream's executor (its wheel's): one started inside another
    // executor's handler is carried over first (started_elsewhere, carry_over), as if by
    // post. What cannot be carried over (a completion handler bound to another executor, a
    // stream on an io_context's executor used from two threads) is checked in every build
    // (IDLEWHEEL_CHECK_STREAM_EXECUTOR): it prints which call, where the wheel is, where the
    // caller runs and what to do in that case, then aborts (detail/executor_check.hpp).
    void check_start(const char* what) noexcept;
    void check_completion() noexcept;  // the same, where a completion runs (deadline_handler)
    template <class Handler>
    [[nodiscard]] bool started_elsewhere(const Handler& handler);
    template <class Initiation, class Handler, class... Args>
    void carry_over(const Initiation& initiation, Handler&& handler, const Args&... args);
    struct initiate_read;
    struct initiate_write;
    struct initiate_connect;
    // Connects with net::async_connect, which stops at a socket the deadline closed.
    struct always {
        template <class Endpoint>
        bool operator()(const boost::system::error_code&, const Endpoint&) const noexcept {
            return true;
        }
    };
    struct initiate_range_connect;
    struct initiate_iterator_connect;

    socket_type socket_;  // first: the wheel is found from its executor
    Wheel* wheel_;
    time_point read_expiry_ = time_point::max();   // the pending read's deadline, or the next one's
    time_point write_expiry_ = time_point::max();  // the pending write's (or connect's), or the next one's
    time_point armed_at_ = time_point::max();      // what the node was last scheduled for
    std::uint8_t pending_ = 0;                     // reading | writing: operations in flight (a connect is both)
    std::uint8_t timed_ = 0;      // the directions whose pending operation has a deadline (a connect: writing)
    std::uint8_t timed_out_ = 0;  // of those, the ones whose deadline fired (finish() reports timeout)
    ws_timeouts ws_;
    timer_node node_{bind_member<&basic_tcp_stream::on_due>(this)};
};

/// The stream on std::chrono::steady_clock: the drop-in for boost::beast::tcp_stream.
using tcp_stream = basic_tcp_stream<wheel_timer>;

namespace detail {
template <class Wheel, class Executor>
struct is_basic_tcp_stream<basic_tcp_stream<Wheel, Executor>> : std::true_type {};
}  // namespace detail

/// Closes the stream's socket: what boost::beast::close_socket() calls (found by
/// argument-dependent lookup), as for Beast's stream.
/// @param stream the stream.
template <class Wheel, class Executor>
void beast_close_socket(basic_tcp_stream<Wheel, Executor>& stream);

/// The WebSocket teardown of the connection (websocket::stream calls it by
/// argument-dependent lookup): the socket's, as for Beast's stream. No deadline of its own;
/// the one-line WebSocket timeouts' close bound covers it, and end when it is over.
/// @param role client or server.
/// @param stream the stream.
/// @param ec set to the result.
template <class Wheel, class Executor>
void teardown(boost::beast::role_type role, basic_tcp_stream<Wheel, Executor>& stream, boost::system::error_code& ec);

/// The asynchronous WebSocket teardown: the socket's, as for Beast's stream. No deadline of its
/// own: the one-line WebSocket timeouts' close bound covers it, and they end when it completes
/// (the stream then leaves the wheel, before the handler runs).
/// @param role client or server.
/// @param stream the stream.
/// @param handler called with void(error_code), as by the socket's teardown.
template <class Wheel, class Executor, class TeardownHandler>
void async_teardown(boost::beast::role_type role, basic_tcp_stream<Wheel, Executor>& stream,
                    TeardownHandler&& handler);

}  // namespace idlewheel::beast

// The socket sees the user's handler's executor, allocator and cancellation slot (every
// associator), as Asio's own binders forward them.
/// @cond IDLEWHEEL_SPECIALIZATIONS
template <template <class, class> class Associator, class Stream, class Handler, class DefaultCandidate>
struct boost::asio::associator<Associator, idlewheel::beast::detail::deadline_handler<Stream, Handler>,
                               DefaultCandidate> : Associator<Handler, DefaultCandidate> {
    static typename Associator<Handler, DefaultCandidate>::type get(
        const idlewheel::beast::detail::deadline_handler<Stream, Handler>& h) noexcept {
        return Associator<Handler, DefaultCandidate>::get(h.handler());
    }
    static auto get(const idlewheel::beast::detail::deadline_handler<Stream, Handler>& h,
                    const DefaultCandidate& c) noexcept
        -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler(), c)) {
        return Associator<Handler, DefaultCandidate>::get(h.handler(), c);
    }
};
template <template <class, class> class Associator, class Stream, class Handler, class DefaultCandidate>
struct boost::asio::associator<Associator, idlewheel::beast::detail::teardown_handler<Stream, Handler>,
                               DefaultCandidate> : Associator<Handler, DefaultCandidate> {
    static typename Associator<Handler, DefaultCandidate>::type get(
        const idlewheel::beast::detail::teardown_handler<Stream, Handler>& h) noexcept {
        return Associator<Handler, DefaultCandidate>::get(h.handler());
    }
    static auto get(const idlewheel::beast::detail::teardown_handler<Stream, Handler>& h,
                    const DefaultCandidate& c) noexcept -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler(), c)) {
        return Associator<Handler, DefaultCandidate>::get(h.handler(), c);
    }
};
/// @endcond

#include <idlewheel/beast/impl/tcp_stream.hpp>

#endif
