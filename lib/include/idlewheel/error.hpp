// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_ERROR_HPP
#define IDLEWHEEL_ERROR_HPP

/** @file
 * @brief idlewheel's error codes, in the shape of Beast's core/error.hpp.
 */

#include <idlewheel/detail/asio.hpp>

#include <string>
#include <type_traits>

namespace idlewheel {

/**
 * idlewheel's error codes, in the shape of Beast's core/error.hpp: an enum with its own
 * category, usable wherever an error_code goes (boost::system::error_code, or std::error_code
 * with standalone Asio). Asynchronous results report
 * them; scheduling calls that cannot report through a handler throw
 * system_error carrying them (idlewheel::system_error: the matching type).
 *
 * is_error_code_enum is specialized for it (in boost::system, or std with standalone Asio):
 * an idlewheel::error converts to idlewheel::error_code and compares with one.
 */
enum class error {
    /// The wheel was stopped with stop(): it accepts no new timeouts.
    stopped = 1,
    /// Scheduling would exceed wheel_options::max_pending.
    too_many_pending,
    /// A watched session had no activity of the watched kind for its idle time.
    /// @deprecated Nothing reports it: the liveness verdicts are liveness_event::idle and
    /// idle_watch's reports, and a verdict that closes the socket completes a pending
    /// operation with Asio's operation_aborted. Kept (same value) for 1.x; removed in 2.0.
    idle_timeout [[deprecated("nothing reports error::idle_timeout: see liveness_event::idle")]],
    /// A peer did not answer a heartbeat ping in time.
    /// @deprecated Nothing reports it: the verdict is liveness_event::dead_peer (or
    /// heartbeat_event::dead_peer), and a verdict that closes the socket completes a pending
    /// operation with Asio's operation_aborted. Kept (same value) for 1.x; removed in 2.0.
    dead_peer [[deprecated("nothing reports error::dead_peer: see liveness_event::dead_peer")]],
    /// A handshake (or an operation given a deadline) did not complete in time.
    handshake_timeout,
    /// An operation given a deadline with operation_deadline did not complete in time.
    operation_timeout,
    /// A close handshake given a deadline with operation_deadline did not complete in time
    /// (counted in liveness_stats::close_timeouts; session_liveness's own close deadline is the
    /// verdict liveness_event::close_timeout).
    close_timeout,
};

namespace detail {
class error_category final : public error_category_base {
public:
#if defined(IDLEWHEEL_STANDALONE_ASIO)
    constexpr error_category() noexcept = default;
#else
    // Boost.System compares categories by this id, so copies of the category in different
    // shared objects still compare equal.
    constexpr error_category() noexcept : error_category_base(0x1d1e'3bee'5a4c'0001ULL) {}
#endif
    [[nodiscard]] const char* name() const noexcept override { return "idlewheel"; }
    [[nodiscard]] std::string message(int ev) const override {
        // On the values: the two deprecated enumerators are not named here (no warning in
        // every user's build); they sit between too_many_pending and handshake_timeout.
        constexpr int deprecated_idle_timeout = static_cast<int>(error::too_many_pending) + 1;
        constexpr int deprecated_dead_peer = static_cast<int>(error::too_many_pending) + 2;
        static_assert(deprecated_dead_peer + 1 == static_cast<int>(error::handshake_timeout));
        switch (ev) {
            case static_cast<int>(error::stopped): return "the wheel timer was stopped";
            case static_cast<int>(error::too_many_pending): return "too many pending timeouts (max_pending reached)";
            case deprecated_idle_timeout: return "idle timeout";
            case deprecated_dead_peer: return "peer did not answer a ping in time";
            case static_cast<int>(error::handshake_timeout): return "handshake timeout";
            case static_cast<int>(error::operation_timeout): return "operation timeout";
            case static_cast<int>(error::close_timeout): return "close timeout";
            default: break;
        }
        return "unknown idlewheel error";
    }
};
}  // namespace detail

/// The category of idlewheel::error (name "idlewheel"); one object per program. With Boost,
/// categories compare by a fixed id, so copies in different shared objects compare equal.
[[nodiscard]] inline const error_category_base& error_category() noexcept {
    static const detail::error_category category;
    return category;
}

/// The error_code of `e` (found by argument-dependent lookup: `error_code ec = error::stopped;`).
/// @param e the error.
/// @return the code, in error_category().
[[nodiscard]] inline error_code make_error_code(error e) noexcept { return {static_cast<int>(e), error_category()}; }

namespace detail {
[[noreturn]] inline void throw_error(error e, const char* what) { throw system_error(make_error_code(e), what); }
}  // namespace detail

}  // namespace idlewheel

/// @cond IDLEWHEEL_SPECIALIZATIONS
template <>
struct IDLEWHEEL_ERROR_CODE_ENUM_NAMESPACE::is_error_code_enum<idlewheel::error> : std::true_type {};
/// @endcond

#endif
