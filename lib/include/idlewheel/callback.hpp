// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CALLBACK_HPP
#define IDLEWHEEL_CALLBACK_HPP

/** @file
 * @brief idlewheel::callback: the one handler shape of idlewheel, a function pointer and its context.
 */

#include <utility>

namespace idlewheel {

/**
 * The one handler shape of idlewheel: a plain function and the context it is called with,
 * `function(context, args...)`. timer_callback, idle_handler, heartbeat_handler,
 * repeat_adjust and basic_session_liveness_config::bound_handler are callbacks of their
 * signatures. Make one with bind_member<&T::f>(self) (idlewheel/bind_member.hpp), or as an
 * aggregate, `{&function, context}`, where a captureless lambda that takes the context first
 * fits `function`:
 *
 *     idlewheel::timer_node node{{[](void* c) { static_cast<session*>(c)->on_timer(); }, &s}};
 *
 * Two pointers, no allocation; a call is one indirect call. An aggregate: `{&f, context}`
 * and `{}` (both null: no handler) initialize it.
 *
 * @tparam Signature `R(A...)`, or `R(A...) noexcept` for a function that must not throw.
 */
template <class Signature>
struct callback;

/// The callback of signature `R(A...)`.
/// @tparam R what the function returns.
/// @tparam A the arguments after the context.
template <class R, class... A>
struct callback<R(A...)> {
    using function_type = R (*)(void* context, A... args);  ///< The function's type.
    function_type function = nullptr;                       ///< called with `context`, then the arguments
    void* context = nullptr;                                ///< the first argument of `function`

    /// Calls `function(context, args...)` (`function` must not be null).
    /// @param args the arguments.
    /// @return what `function` returns.
    R operator()(A... args) const { return function(context, std::forward<A>(args)...); }
    /// True if `function` is not null.
    [[nodiscard]] constexpr explicit operator bool() const noexcept { return function != nullptr; }
};

/// The callback of signature `R(A...) noexcept`: the function must not throw.
/// @tparam R what the function returns.
/// @tparam A the arguments after the context.
template <class R, class... A>
struct callback<R(A...) noexcept> {
    using function_type = R (*)(void* context, A... args) noexcept;  ///< The function's type.
    function_type function = nullptr;  ///< called with `context`, then the arguments
    void* context = nullptr;           ///< the first argument of `function`

    /// Calls `function(context, args...)` (`function` must not be null).
    /// @param args the arguments.
    /// @return what `function` returns.
    R operator()(A... args) const noexcept { return function(context, std::forward<A>(args)...); }
    /// True if `function` is not null.
    [[nodiscard]] constexpr explicit operator bool() const noexcept { return function != nullptr; }
};

}  // namespace idlewheel

#endif
