// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_OPERATION_DEADLINE_HPP
#define IDLEWHEEL_OPERATION_DEADLINE_HPP

/** @file
 * @brief idlewheel::operation_deadline: a deadline for one operation, on the shared wheel.
 */

#include <idlewheel/error.hpp>
#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <idlewheel/detail/asio.hpp>

#include <chrono>

namespace idlewheel {

/**
 * A deadline for one operation — "the handshake must complete
 * within 5 s", "this read must complete within 30 s" — on the shared wheel. The wheel-backed
 * equivalent of beast::tcp_stream::expires_after(): arming and cancelling are O(1) relinks,
 * never a system timer operation. (idlewheel::operation_deadline is
 * `basic_operation_deadline<wheel_timer>`.)
 *
 * @tparam Wheel the wheel type (a basic_wheel_timer).
 *
 *     idlewheel::operation_deadline handshake{wheel, idlewheel::bind_member<&session::on_late>(this),
 *                                             idlewheel::error::handshake_timeout};
 *     handshake.expires_after(5s);          // from accept
 *     ws.async_accept(...);                 // bytes arriving do NOT extend a deadline
 *     ... on completion: handshake.cancel();
 *     void on_late() { socket.close(); }    // the pending operation fails with operation_aborted;
 *                                           // handshake.expired() tells the session why
 *
 * Destroying it while armed unlinks it: the callback never runs for a destroyed owner.
 *
 * @par Completion
 * The callback runs on the wheel's executor, from the wheel's completion handler (a wheel
 * callback: wheel_timer, Completion), once per expiry; expired() is already true inside it.
 *
 * @par Thread safety
 * Like the wheel, the deadline belongs to the wheel's executor: arm, cancel and destroy it
 * there (checked with IDLEWHEEL_CHECK_EXECUTOR).
 *
 * @par Precision
 * Precision is the wheel's (wheel_timer.hpp): on a wheel built with clock_read::per_tick,
 * expires_after() reads no clock and an operation that completes within the same tick costs a
 * push and an unlink; the deadline may then expire up to two ticks after `d`, never before.
 *
 * @par Errors
 * Limits: arming an unarmed deadline counts against wheel_options::max_pending (it throws
 * error::too_many_pending past it); re-arming an armed one moves its own entry and never does.
 * Expiries are counted, by cause, in the liveness_stats given at construction (none if null).
 *
 * A deadline can expire after the operation succeeded but before its completion handler ran
 * (both were due in the same turn of the io_context). A completion handler should therefore
 * check expired() before trusting a success: if it is set, the socket is already being closed.
 */
template <class Wheel>
class basic_operation_deadline {
public:
    /// `cause` names what expiry means (error::handshake_timeout, error::close_timeout or
    /// error::operation_timeout); it is counted by cause in `*stats` (if not null:
    /// handshake_timeouts, close_timeouts, operation_timeouts for any other cause) and returned
    /// by reason(). Not armed.
    /// @param wheel the wheel; must outlive the deadline.
    /// @param on_expire what an expiry calls (typically: close the socket).
    /// @param cause the error expiry means.
    /// @param stats the counters, or null; must outlive the deadline.
    basic_operation_deadline(Wheel& wheel, timer_callback on_expire, error cause = error::operation_timeout,
                             liveness_stats* stats = nullptr) noexcept
        : wheel_(&wheel), on_expire_(on_expire), cause_(cause), stats_(stats) {}
    basic_operation_deadline(const basic_operation_deadline&) = delete;             ///< Not copyable (nor movable).
    basic_operation_deadline& operator=(const basic_operation_deadline&) = delete;  ///< Not copyable (nor movable).

    /// Arms (or re-arms) the deadline `d` from now (from the next tick on a per_tick wheel);
    /// clears expired().
    /// @throws system_error as wheel_timer::schedule does (error::too_many_pending only when
    /// it was not armed).
    /// @param d the time the operation has (any std::chrono duration; wheel_timer::schedule()).
    template <class Rep, class Period>
    void expires_after(std::chrono::duration<Rep, Period> d) {
        expired_ = false;
        wheel_->schedule(node_, d);
    }

    /// Re-arms for another operation of a different kind (one deadline object can serve a
    /// session's handshake and, later, its close handshake).
    /// @param d the time the operation has.
    /// @param cause the error expiry means from now on (kept even if arming throws).
    /// @throws system_error as expires_after(d).
    template <class Rep, class Period>
    void expires_after(std::chrono::duration<Rep, Period> d, error cause) {
        cause_ = cause;
        expires_after(d);
    }

    /// The operation completed in time. True if the deadline was armed. O(1).
    bool cancel() noexcept { return node_.cancel(); }

    /// True while armed and not expired.
    [[nodiscard]] bool armed() const noexcept { return node_.pending(); }
    /// When the armed deadline expires (wheel_timer::expiry(): the start of its deadline tick,
    /// never before `d` after expires_after(), less than a tick after it; on a per_tick wheel
    /// before the next wake-up started it, the earliest it can be). time_point::max() if not
    /// armed.
    [[nodiscard]] typename Wheel::time_point expiry() const noexcept { return wheel_->expiry(node_); }
    /// True once the deadline passed (its callback has run), until the next expires_after().
    [[nodiscard]] bool expired() const noexcept { return expired_; }
    /// make_error_code(cause) if expired(), else success: what the operation's failure means.
    [[nodiscard]] error_code reason() const noexcept { return expired_ ? make_error_code(cause_) : error_code{}; }

private:
    void fire() {
        expired_ = true;
        if (stats_ != nullptr)
            ++(cause_ == error::handshake_timeout ? stats_->handshake_timeouts
               : cause_ == error::close_timeout   ? stats_->close_timeouts
                                                  : stats_->operation_timeouts);
        on_expire_();
    }

    Wheel* wheel_;
    timer_callback on_expire_;
    error cause_;
    liveness_stats* stats_;
    bool expired_ = false;
    timer_node node_{bind_member<&basic_operation_deadline::fire>(this)};
};

/// The operation deadline for idlewheel::wheel_timer (steady_clock).
using operation_deadline = basic_operation_deadline<wheel_timer>;

}  // namespace idlewheel

#endif
