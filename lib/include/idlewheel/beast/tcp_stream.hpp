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
#include <idlewheel/detail/liveness_access.hpp>
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
#include <boost/asio/query.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <boost/system/error_code.hpp>

#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace idlewheel::beast {

template <class Wheel>
class basic_tcp_stream;

namespace detail {

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
    deadline_handler(Stream& stream, std::uint8_t ops, Handler&& handler)
        : handler_(std::move(handler)), stream_(&stream), ops_(ops) {}
    deadline_handler(deadline_handler&& other) noexcept(std::is_nothrow_move_constructible_v<Handler>)
        : handler_(std::move(other.handler_)), stream_(std::exchange(other.stream_, nullptr)), ops_(other.ops_) {}
    deadline_handler(const deadline_handler&) = delete;
    deadline_handler& operator=(const deadline_handler&) = delete;
    deadline_handler& operator=(deadline_handler&&) = delete;
    ~deadline_handler() {
        if (stream_ != nullptr) stream_->abandon(ops_);  // before handler_ (and its session) goes
    }

    template <class... Args>
    void operator()(boost::system::error_code ec, Args&&... args) {
        std::exchange(stream_, nullptr)->finish(ops_, ec);
        std::move(handler_)(ec, std::forward<Args>(args)...);
    }

    [[nodiscard]] const Handler& handler() const noexcept { return handler_; }

private:
    Handler handler_;
    Stream* stream_;
    std::uint8_t ops_;
};

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
 *
 * @par Thread safety
 * Distinct objects safe; shared objects unsafe. Every call, and every completion handler of
 * its operations, on the stream's executor (the wheel's).
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
 * @par Timeout rules
 * Timeout rules (Beast's, boost/beast/core/basic_stream.hpp and impl/basic_stream.hpp):
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
 *  - an operation started after its deadline passed closes the socket and completes with
 *    error::timeout at once (as if by post, never inside the initiating call).
 * Precision is the wheel's: never before the deadline, at most one tick (plus the io_context's
 * scheduling delay) after it.
 *
 * @par Cost
 * Cost: the stream holds its socket, the two expiries, four small fields and one timer_node
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
 *  - not movable (the wheel points at the node inside it); Beast's is, because its state is
 *    on the heap. websocket::stream and ssl_stream build it in place from a tcp::socket&&,
 *    and release_socket() hands the connection to another stream.
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
 *  - no rate policy; no rebind_executor.
 *  - close() and cancel() also take the node out of the wheel (Beast's leave its timers).
 *  - additions: wheel(), read_expiry() and write_expiry().
 *  - the wheel must outlive the stream's use of it; every call, and every completion handler
 *    of its operations, runs on the stream's executor, which is the wheel's (a shard's strand
 *    for a pool): the wheel's executor check (detail/executor_check.hpp) catches other calls
 *    in debug builds. Beast asks the same of its stream ("within the same implicit or
 *    explicit strand").
 *
 * websocket::stream keeps a steady_timer of its own for its own timeouts
 * (websocket::stream_base::timeout); leave them off and use idlewheel::beast::websocket_liveness
 * (or expires_after() on this stream) for a server without per-connection system timers.
 *
 * @par Composition
 * Composes as Beast's stream does: boost::beast::get_lowest_layer(s) is the stream itself
 * (it has no next_layer()); websocket::stream<tcp_stream> finds teardown / async_teardown,
 * and beast::close_socket() finds beast_close_socket(), by argument-dependent lookup here;
 * ssl_stream<tcp_stream> uses lowest_layer() (the socket), as it does with Beast's.
 */
template <class Wheel>
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
    /// The underlying socket: tcp::socket (Beast's name).
    using socket_type = net::basic_stream_socket<net::ip::tcp, net::any_io_executor>;
    /// The executor of the stream: its socket's. Handlers without an associated executor run
    /// on it.
    using executor_type = socket_type::executor_type;
    /// What boost::asio::ssl::stream asks of its next layer (as of Beast's stream): the socket.
    using lowest_layer_type = socket_type;

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
              std::enable_if_t<!std::is_same_v<std::decay_t<Arg>, basic_tcp_stream> &&
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

    /// Not copyable or movable: the wheel points at the node inside (see Differences).
    basic_tcp_stream(const basic_tcp_stream&) = delete;
    /// Not assignable either.
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
    socket_type release_socket() {
        read_expiry_ = write_expiry_ = time_point::max();
        timed_ = 0;
        node_.cancel();
        return std::move(socket_);
    }

    /// Sets the expiry of each direction (read, write) that has no operation pending to `d`
    /// from now (rounded up; hours::max(), or anything past the clock's range, is never; zero
    /// and negative have passed), for the operations of that direction started from now on; a
    /// pending operation keeps its deadline (Beast's rule). Precondition: not both a read and
    /// a write (or a connect) pending (an assert). Reads the clock, then a store per direction:
    /// the wheel is not touched.
    /// @param d any std::chrono duration.
    template <class Rep, class Period>
    void expires_after(std::chrono::duration<Rep, Period> d) {
        const time_point now = clock_type::now();
        const auto delay = idlewheel::detail::saturating_ceil<duration>(d);
        expires_at(time_point(idlewheel::detail::saturating_add(now.time_since_epoch(), delay)));
    }

    /// Sets the expiry of each direction with no operation pending to `t` (time_point::max():
    /// never; a time that has passed: the next operation of that direction times out at once),
    /// as expires_after(). Precondition: not both directions pending (an assert).
    /// @param t the expiry.
    void expires_at(time_point t) noexcept {
        // As Beast's impl_type::reset(): with a read and a write (or a connect) pending there is
        // no direction left to apply the expiry to.
        assert(pending_ != (reading | writing) &&
               "idlewheel::beast::tcp_stream: expires_*() while a read and a write (or a connect) are both pending");
        if ((pending_ & reading) == 0) read_expiry_ = t;
        if ((pending_ & writing) == 0) write_expiry_ = t;
    }

    /// No expiry for each direction with no operation pending: its operations started from now
    /// on have no deadline; a pending one keeps its deadline (Beast's rule). A store per
    /// direction. Precondition: not both directions pending (an assert).
    void expires_never() noexcept { expires_at(time_point::max()); }

    /// Cancels the pending operations: they complete with net::error::operation_aborted
    /// (unless their deadline fired first: then error::timeout). The expiries stay set for the
    /// next operations; the node leaves the wheel until one starts.
    void cancel() {
        node_.cancel();
        boost::system::error_code ignored;
        socket_.cancel(ignored);
    }

    /// Closes the socket: pending operations complete with net::error::operation_aborted
    /// (unless their deadline fired first). The expiries stay set; the node leaves the wheel.
    void close() {
        node_.cancel();
        close_socket();
    }

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
                       ConnectToken&& token = net::default_completion_token_t<executor_type>()) {
        return net::async_initiate<ConnectToken, void(boost::system::error_code)>(initiate_connect{this}, token, ep);
    }

    /// Connects to the first endpoint of `endpoints` that accepts (net::async_connect), with
    /// the write expiry as its deadline, as the other form. Completion: void(error_code, endpoint_type).
    /// @param endpoints the endpoints, tried in order.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as the first form.
    template <class EndpointSequence, class RangeConnectToken = net::default_completion_token_t<executor_type>,
              std::enable_if_t<net::is_endpoint_sequence<EndpointSequence>::value, int> = 0>
    auto async_connect(const EndpointSequence& endpoints,
                       RangeConnectToken&& token = net::default_completion_token_t<executor_type>()) {
        return net::async_initiate<RangeConnectToken, void(boost::system::error_code, endpoint_type)>(
            initiate_range_connect{this}, token, endpoints);
    }

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
                       IteratorConnectToken&& token = net::default_completion_token_t<executor_type>()) {
        return net::async_initiate<IteratorConnectToken, void(boost::system::error_code, Iterator)>(
            initiate_iterator_connect{this}, token, begin, end);
    }

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
                       RangeConnectToken&& token) {
        return net::async_initiate<RangeConnectToken, void(boost::system::error_code, endpoint_type)>(
            initiate_range_connect{this}, token, endpoints, std::move(connect_condition));
    }

    /// As the iterator form, with a connect condition (above).
    /// @param begin the first endpoint.
    /// @param end past the last.
    /// @param connect_condition the filter.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as the first form.
    template <class Iterator, class ConnectCondition, class IteratorConnectToken,
              std::enable_if_t<!net::is_endpoint_sequence<Iterator>::value, int> = 0>
    auto async_connect(Iterator begin, Iterator end, ConnectCondition connect_condition, IteratorConnectToken&& token) {
        return net::async_initiate<IteratorConnectToken, void(boost::system::error_code, Iterator)>(
            initiate_iterator_connect{this}, token, begin, end, std::move(connect_condition));
    }

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
                         ReadToken&& token = net::default_completion_token_t<executor_type>()) {
        return net::async_initiate<ReadToken, void(boost::system::error_code, std::size_t)>(initiate_read{this}, token,
                                                                                            buffers);
    }

    /// Writes some data (socket::async_write_some) with the write expiry, as it is now, as its
    /// deadline; as async_read_some. One write at a time (a zero-length one while one is
    /// pending: as for reads).
    /// @param buffers the data; the caller keeps it alive until the handler runs.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    /// @throws system_error as async_connect.
    template <class ConstBufferSequence, class WriteToken = net::default_completion_token_t<executor_type>>
    auto async_write_some(const ConstBufferSequence& buffers,
                          WriteToken&& token = net::default_completion_token_t<executor_type>()) {
        return net::async_initiate<WriteToken, void(boost::system::error_code, std::size_t)>(initiate_write{this},
                                                                                             token, buffers);
    }

private:
    template <class, class>
    friend class detail::deadline_handler;

    static constexpr std::uint8_t reading = 1, writing = 2;

    static Wheel& wheel_of(const executor_type& ex);
    template <class Handler>
    using wrapped = detail::deadline_handler<basic_tcp_stream, std::decay_t<Handler>>;

    bool begin(std::uint8_t ops, std::uint8_t timed);
    void finish(std::uint8_t ops, boost::system::error_code& ec) noexcept;
    void abandon(std::uint8_t ops) noexcept {
        pending_ = static_cast<std::uint8_t>(pending_ & ~ops);
        timed_ = static_cast<std::uint8_t>(timed_ & ~ops);
        timed_out_ = static_cast<std::uint8_t>(timed_out_ & ~ops);
    }
    void arm(time_point t, bool rearm);
    void on_due();
    void close_socket() noexcept {
        boost::system::error_code ignored;  // closing fails only if already closed
        socket_.close(ignored);
    }

    // Completes `handler` with error::timeout (and `more` zero-initialised values), as if by
    // post: the expiry had passed when the operation was started.
    template <class Handler, class... More>
    void complete_timed_out(Handler&& handler, More... more) {
        complete_posted(std::forward<Handler>(handler), boost::system::error_code(boost::beast::error::timeout),
                        more...);
    }
    template <class Handler, class... Args>
    void complete_posted(Handler&& handler, Args... args) {
        net::post(socket_.get_executor(), net::append(std::forward<Handler>(handler), args...));
    }

    // Beast's workaround (its issue 2065): ssl::stream completes an operation that needs no
    // I/O "as if posted" by a zero-length read on its next layer, which may come while a read
    // of its own is pending. A zero-length transfer while its direction is pending completes
    // with success and 0 bytes, as if by post, and leaves the pending one alone.
    template <class Buffers>
    [[nodiscard]] bool empty_while_pending(std::uint8_t direction, const Buffers& buffers) const noexcept {
        return (pending_ & direction) != 0 && net::buffer_size(buffers) == 0;
    }

    struct initiate_base {
        basic_tcp_stream* self;
        using executor_type = typename basic_tcp_stream::executor_type;
        [[nodiscard]] executor_type get_executor() const noexcept { return self->get_executor(); }
    };
    struct initiate_read : initiate_base {
        template <class Handler, class Buffers>
        void operator()(Handler&& handler, const Buffers& buffers) const {
            basic_tcp_stream& s = *this->self;
            if (s.empty_while_pending(reading, buffers))
                return s.complete_posted(std::forward<Handler>(handler), boost::system::error_code(), std::size_t{0});
            if (!s.begin(reading, reading)) return s.complete_timed_out(std::forward<Handler>(handler), std::size_t{0});
            s.socket_.async_read_some(buffers, wrapped<Handler>(s, reading, std::forward<Handler>(handler)));
        }
    };
    struct initiate_write : initiate_base {
        template <class Handler, class Buffers>
        void operator()(Handler&& handler, const Buffers& buffers) const {
            basic_tcp_stream& s = *this->self;
            if (s.empty_while_pending(writing, buffers))
                return s.complete_posted(std::forward<Handler>(handler), boost::system::error_code(), std::size_t{0});
            if (!s.begin(writing, writing)) return s.complete_timed_out(std::forward<Handler>(handler), std::size_t{0});
            s.socket_.async_write_some(buffers, wrapped<Handler>(s, writing, std::forward<Handler>(handler)));
        }
    };
    struct initiate_connect : initiate_base {
        template <class Handler>
        void operator()(Handler&& handler, const endpoint_type& ep) const {
            basic_tcp_stream& s = *this->self;
            if (!s.begin(reading | writing, writing)) return s.complete_timed_out(std::forward<Handler>(handler));
            s.socket_.async_connect(ep, wrapped<Handler>(s, reading | writing, std::forward<Handler>(handler)));
        }
    };
    // Connects with net::async_connect, which stops at a socket the deadline closed.
    struct always {
        template <class Endpoint>
        bool operator()(const boost::system::error_code&, const Endpoint&) const noexcept {
            return true;
        }
    };
    struct initiate_range_connect : initiate_base {
        template <class Handler, class Endpoints, class Condition = always>
        void operator()(Handler&& handler, const Endpoints& endpoints, Condition condition = {}) const {
            basic_tcp_stream& s = *this->self;
            if (!s.begin(reading | writing, writing))
                return s.complete_timed_out(std::forward<Handler>(handler), endpoint_type());
            net::async_connect(s.socket_, endpoints, std::move(condition),
                               wrapped<Handler>(s, reading | writing, std::forward<Handler>(handler)));
        }
    };
    struct initiate_iterator_connect : initiate_base {
        template <class Handler, class Iterator, class Condition = always>
        void operator()(Handler&& handler, Iterator begin, Iterator end, Condition condition = {}) const {
            basic_tcp_stream& s = *this->self;
            if (!s.begin(reading | writing, writing)) return s.complete_timed_out(std::forward<Handler>(handler), end);
            net::async_connect(s.socket_, begin, end, std::move(condition),
                               wrapped<Handler>(s, reading | writing, std::forward<Handler>(handler)));
        }
    };

    socket_type socket_;  // first: the wheel is found from its executor
    Wheel* wheel_;
    time_point read_expiry_ = time_point::max();   // the pending read's deadline, or the next one's
    time_point write_expiry_ = time_point::max();  // the pending write's (or connect's), or the next one's
    time_point armed_at_ = time_point::max();      // what the node was last scheduled for
    std::uint8_t pending_ = 0;                     // reading | writing: operations in flight (a connect is both)
    std::uint8_t timed_ = 0;      // the directions whose pending operation has a deadline (a connect: writing)
    std::uint8_t timed_out_ = 0;  // of those, the ones whose deadline fired (finish() reports timeout)
    timer_node node_{bind_member<&basic_tcp_stream::on_due>(this)};
};

/// The stream on std::chrono::steady_clock: the drop-in for boost::beast::tcp_stream.
using tcp_stream = basic_tcp_stream<wheel_timer>;

/// Closes the stream's socket: what boost::beast::close_socket() calls (found by
/// argument-dependent lookup), as for Beast's stream.
/// @param stream the stream.
template <class Wheel>
void beast_close_socket(basic_tcp_stream<Wheel>& stream) {
    boost::system::error_code ignored;
    stream.socket().close(ignored);
}

/// The WebSocket teardown of the connection (websocket::stream calls it by
/// argument-dependent lookup): the socket's, as for Beast's stream. No deadline.
/// @param role client or server.
/// @param stream the stream.
/// @param ec set to the result.
template <class Wheel>
void teardown(boost::beast::role_type role, basic_tcp_stream<Wheel>& stream, boost::system::error_code& ec) {
    using boost::beast::websocket::teardown;
    teardown(role, stream.socket(), ec);
}

/// The asynchronous WebSocket teardown: the socket's, as for Beast's stream. No deadline.
/// @param role client or server.
/// @param stream the stream.
/// @param handler called with void(error_code), as by the socket's teardown.
template <class Wheel, class TeardownHandler>
void async_teardown(boost::beast::role_type role, basic_tcp_stream<Wheel>& stream, TeardownHandler&& handler) {
    using boost::beast::websocket::async_teardown;
    async_teardown(role, stream.socket(), std::forward<TeardownHandler>(handler));
}

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
/// @endcond

#include <idlewheel/beast/impl/tcp_stream.hpp>

#endif
