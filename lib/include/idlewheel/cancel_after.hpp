// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CANCEL_AFTER_HPP
#define IDLEWHEEL_CANCEL_AFTER_HPP

/** @file
 * @brief idlewheel::cancel_after / cancel_at: a per-operation timeout as a completion token
 * adapter, on the shared wheel.
 */

#include <idlewheel/wheel_timer.hpp>

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/detail/cancel_after_op.hpp>

#include <chrono>
#include <type_traits>
#include <utility>

namespace idlewheel {

/// A completion token adapter that cancels the operation when a deadline on `Wheel` passes.
/// Made by cancel_after() / cancel_at(); `Deadline` says which (relative or absolute).
/// Its members are public for Asio's async_result (impl/cancel_after.hpp); use the factories.
template <class CompletionToken, class Wheel, class Deadline>
class cancel_deadline_t {
public:
    /// What cancel_after() / cancel_at() make.
    /// @param completion_token the token adapted.
    /// @param wheel the wheel that will hold the deadline.
    /// @param deadline when (detail::relative_deadline or detail::absolute_deadline).
    /// @param type the cancellation type emitted when the deadline passes.
    template <class T>
    cancel_deadline_t(T&& completion_token, Wheel& wheel, const Deadline& deadline, net::cancellation_type_t type)
        : token_(std::forward<T>(completion_token)), wheel_(&wheel), deadline_(deadline), cancel_type_(type) {}

    CompletionToken token_;                 ///< the adapted token
    Wheel* wheel_;                          ///< the wheel that holds the deadline
    Deadline deadline_;                     ///< when the operation is cancelled
    net::cancellation_type_t cancel_type_;  ///< what is emitted then
};

/// The same, without a completion token: the operation's default completion token is used
/// (the one its I/O executor names, for example a socket made with
/// use_awaitable_t<>::as_default_on).
template <class Wheel, class Deadline>
class partial_cancel_deadline {
public:
    /// What the partial forms of cancel_after() / cancel_at() make.
    /// @param wheel the wheel that will hold the deadline.
    /// @param deadline when.
    /// @param type the cancellation type emitted when the deadline passes.
    partial_cancel_deadline(Wheel& wheel, const Deadline& deadline, net::cancellation_type_t type) noexcept
        : wheel_(&wheel), deadline_(deadline), cancel_type_(type) {}

    /// Adapts a completion token: `partial(token)` is cancel_after(wheel, d, type, token).
    /// @param token the completion token.
    /// @return the full adapter.
    template <class CompletionToken>
    [[nodiscard]] cancel_deadline_t<std::decay_t<CompletionToken>, Wheel, Deadline> operator()(
        CompletionToken&& token) const {
        return {std::forward<CompletionToken>(token), *wheel_, deadline_, cancel_type_};
    }

    Wheel* wheel_;                          ///< the wheel that holds the deadline
    Deadline deadline_;                     ///< when the operation is cancelled
    net::cancellation_type_t cancel_type_;  ///< what is emitted then
};

/// What cancel_after(wheel, d, token) returns.
template <class CompletionToken, class Wheel>
using cancel_after_t = cancel_deadline_t<CompletionToken, Wheel, detail::relative_deadline<Wheel>>;
/// What cancel_at(wheel, t, token) returns.
template <class CompletionToken, class Wheel>
using cancel_at_t = cancel_deadline_t<CompletionToken, Wheel, detail::absolute_deadline<Wheel>>;
/// What cancel_after(wheel, d) returns (the partial form).
template <class Wheel>
using partial_cancel_after = partial_cancel_deadline<Wheel, detail::relative_deadline<Wheel>>;
/// What cancel_at(wheel, t) returns (the partial form).
template <class Wheel>
using partial_cancel_at = partial_cancel_deadline<Wheel, detail::absolute_deadline<Wheel>>;

namespace detail {
// Tells cancel_after(wheel, d, token) from cancel_after(wheel, d, type).
template <class T>
using if_completion_token = std::enable_if_t<!std::is_convertible_v<T, net::cancellation_type_t>, int>;
}  // namespace detail

/// Adapts `token` so that the operation it is passed to is cancelled if it has not completed
/// `timeout` after it was started.
///
/// A per-operation timeout as a completion token adapter, on the shared wheel. The
/// wheel-backed form of asio::cancel_after (Asio 1.31, Boost 1.86), with the wheel first:
///
///     co_await sock.async_read_some(buf, idlewheel::cancel_after(wheel, 30s, net::use_awaitable));
///     sock.async_read_some(buf, idlewheel::cancel_after(wheel, 5s, [](error_code ec, std::size_t n) { ... }));
///     auto [ec, n] = co_await sock.async_read_some(buf, idlewheel::cancel_after(wheel, 5s, net::as_tuple(net::use_awaitable)));
///     co_await sock.async_read_some(buf, idlewheel::cancel_after(wheel, 5s));   // socket with a default token
///
/// Asio's adapter constructs a steady_timer for every operation (a timer-queue insertion under
/// the reactor's lock, an aborted wait posted when the operation wins). Here the deadline is a
/// wheel entry in the operation's state, put on the wheel and taken off it again in O(1): no
/// timer, no handler posted, no allocation beyond that one block, which comes from Asio's
/// per-thread recycling allocator (0 malloc calls per operation in steady state).
///
/// @par Cancellation
/// When the deadline passes, the cancellation type (default: terminal) is emitted on the
/// operation's cancellation slot; what that does is the operation's business (a socket read
/// completes with operation_aborted; an operation that does not support the type ignores it,
/// exactly as with Asio's adapter). If the handler the adapter wraps has a cancellation slot
/// of its own (a co_spawn parent, a parallel_group, bind_cancellation_slot), emissions on it
/// are forwarded to the operation too, with their own type: whichever comes first cancels it.
///
/// @par Precision
/// Precision is the wheel's (wheel_timer.hpp): never before the deadline, at most one tick
/// after it (plus the io_context's scheduling delay); cancel_after on a clock_read::per_tick
/// wheel: never before `d` has passed since the call, at most two ticks after. cancel_at is
/// exact in both modes.
///
/// @par Errors
/// Stop and destruction: if the wheel is stopped or destroyed while operations wait on their
/// deadlines, those operations are cancelled (the same emission as a deadline, posted to the
/// wheel's executor, never from inside stop() or the destructor). An operation started on a
/// wheel that cannot take its deadline (stopped, or max_pending reached) is cancelled at once:
/// an operation is never left running without the deadline it asked for. A pending deadline
/// is one entry in pending() and nothing more: stop() returns no handle for it (it is not a
/// schedule() timeout), and pending() is back where it was once the operation completed or
/// its deadline ran.
///
/// @par Thread safety
/// The wheel's: start the operation on the wheel's executor; debug builds assert
/// it. A handler whose associated executor is another one (use_future's handler runs on the
/// system executor) is fine: when the operation completes there, the deadline's removal is
/// posted to the wheel's executor.
///
/// @param wheel The wheel that holds the deadline. It must outlive the call; it may be stopped
/// or destroyed while the operation runs (the operation is then cancelled, see above).
///
/// @param timeout Rounded up to the wheel clock's resolution and saturated (never early);
/// zero or negative: the deadline is the next tick the wheel hands out.
///
/// @param token Any completion token: a callback, use_awaitable, deferred, use_future,
/// as_tuple(...), a bound handler. The adapter's result is what the token's is.
///
/// @return the adapted token.
///
/// The cancellation type emitted on the operation's slot when the deadline passes is
/// net::cancellation_type::terminal here; the overload with a `type` parameter emits partial
/// or total instead.
///
/// @par Completion
/// The handler is called exactly once, with the operation's own completion arguments (a
/// cancelled socket read: net::error::operation_aborted), and never from inside the
/// initiating function unless the operation itself does so. It runs on its associated
/// executor; its associated allocator allocates the adapter's state (Asio's recycling
/// allocator when that is std::allocator), which is freed before the handler is called.
/// Per-operation cancellation: the handler's own cancellation slot, if connected, cancels
/// the operation as well (each emission forwarded with its type).
template <class Clock, class Executor, class Rep, class Period, class CompletionToken,
          detail::if_completion_token<CompletionToken> = 0>
[[nodiscard]] auto cancel_after(basic_wheel_timer<Clock, Executor>& wheel, std::chrono::duration<Rep, Period> timeout,
                                CompletionToken&& token) {
    return cancel_after(wheel, timeout, net::cancellation_type::terminal, std::forward<CompletionToken>(token));
}

/// As above, emitting `type` when the deadline passes.
/// @param wheel the wheel that holds the deadline.
/// @param timeout the time the operation has.
/// @param type net::cancellation_type::terminal, partial or total.
/// @param token any completion token.
/// @return the adapted token.
template <class Clock, class Executor, class Rep, class Period, class CompletionToken>
[[nodiscard]] auto cancel_after(basic_wheel_timer<Clock, Executor>& wheel, std::chrono::duration<Rep, Period> timeout,
                                net::cancellation_type_t type, CompletionToken&& token) {
    using wheel_type = basic_wheel_timer<Clock, Executor>;
    return cancel_after_t<std::decay_t<CompletionToken>, wheel_type>(
        std::forward<CompletionToken>(token), wheel,
        detail::relative_deadline<wheel_type>{detail::deadline_ceil<typename wheel_type::duration>(timeout)}, type);
}

/// The partial form: `op(args..., cancel_after(wheel, 5s))` uses the operation's default
/// completion token. Also callable on a token: `cancel_after(wheel, 5s)(token)`.
/// @param wheel the wheel that holds the deadline.
/// @param timeout the time the operation has.
/// @param type the cancellation type emitted (default terminal).
/// @return the partial adapter.
template <class Clock, class Executor, class Rep, class Period>
[[nodiscard]] auto cancel_after(basic_wheel_timer<Clock, Executor>& wheel, std::chrono::duration<Rep, Period> timeout,
                                net::cancellation_type_t type = net::cancellation_type::terminal) {
    using wheel_type = basic_wheel_timer<Clock, Executor>;
    return partial_cancel_after<wheel_type>(
        wheel, detail::relative_deadline<wheel_type>{detail::deadline_ceil<typename wheel_type::duration>(timeout)},
        type);
}

/// Adapts `token` so that the operation is cancelled if it has not completed by `expiry`, a
/// point of the wheel's clock (exact: no staging even on a clock_read::per_tick wheel).
/// Otherwise as cancel_after().
/// @param wheel the wheel that holds the deadline.
/// @param expiry the time point (rounded up to the wheel's duration); a time that has passed
/// is due now (the first tick that has not begun), as with wheel_timer::schedule_at().
/// @param token any completion token.
/// @return the adapted token.
template <class Clock, class Executor, class Duration, class CompletionToken,
          detail::if_completion_token<CompletionToken> = 0>
[[nodiscard]] auto cancel_at(basic_wheel_timer<Clock, Executor>& wheel, std::chrono::time_point<Clock, Duration> expiry,
                             CompletionToken&& token) {
    return cancel_at(wheel, expiry, net::cancellation_type::terminal, std::forward<CompletionToken>(token));
}

/// As above, emitting `type` when the deadline passes.
/// @param wheel the wheel that holds the deadline.
/// @param expiry the time point.
/// @param type net::cancellation_type::terminal, partial or total.
/// @param token any completion token.
/// @return the adapted token.
template <class Clock, class Executor, class Duration, class CompletionToken>
[[nodiscard]] auto cancel_at(basic_wheel_timer<Clock, Executor>& wheel, std::chrono::time_point<Clock, Duration> expiry,
                             net::cancellation_type_t type, CompletionToken&& token) {
    using wheel_type = basic_wheel_timer<Clock, Executor>;
    return cancel_at_t<std::decay_t<CompletionToken>, wheel_type>(
        std::forward<CompletionToken>(token), wheel,
        detail::absolute_deadline<wheel_type>{std::chrono::ceil<typename wheel_type::duration>(expiry)}, type);
}

/// The partial form of cancel_at().
/// @param wheel the wheel that holds the deadline.
/// @param expiry the time point.
/// @param type the cancellation type emitted (default terminal).
/// @return the partial adapter.
template <class Clock, class Executor, class Duration>
[[nodiscard]] auto cancel_at(basic_wheel_timer<Clock, Executor>& wheel, std::chrono::time_point<Clock, Duration> expiry,
                             net::cancellation_type_t type = net::cancellation_type::terminal) {
    using wheel_type = basic_wheel_timer<Clock, Executor>;
    return partial_cancel_at<wheel_type>(
        wheel, detail::absolute_deadline<wheel_type>{std::chrono::ceil<typename wheel_type::duration>(expiry)}, type);
}

}  // namespace idlewheel

#include <idlewheel/impl/cancel_after.hpp>

#endif
