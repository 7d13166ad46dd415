// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BIND_MEMBER_HPP
#define IDLEWHEEL_BIND_MEMBER_HPP

/** @file
 * @brief idlewheel::bind_member: one way to bind a member function to every handler shape.
 */

#include <type_traits>
#include <utility>

namespace idlewheel {

namespace detail {

// The class Member belongs to (T or a base of T): the object is converted to it before ->*,
// which is what the call means anyway, and keeps GCC from seeing a type pun at -O2.
template <class>
struct member_class {};
template <class M, class C>
struct member_class<M C::*> {
    using type = C;
};

template <auto Member, class T>
[[nodiscard]] inline typename member_class<decltype(Member)>::type* bound_object(void* context) noexcept {
    return static_cast<T*>(context);
}

// The call of a handler whose function pointer has type Fn: R(*)(void* context, A...), with or
// without noexcept. call<Member, T> calls (static_cast<T*>(context)->*Member)(a...).
template <class Fn>
struct bind_shape {
    template <auto, class>
    static constexpr bool fits = false;
};

template <class R, class... A>
struct bind_shape<R (*)(void*, A...)> {
    template <auto Member, class T>
    static constexpr bool fits =
        std::is_member_function_pointer_v<decltype(Member)> && std::is_invocable_r_v<R, decltype(Member), T*, A...>;
    template <auto Member, class T>
    static R call(void* context, A... a) {
        return static_cast<R>((bound_object<Member, T>(context)->*Member)(std::forward<A>(a)...));
    }
};

template <class R, class... A>
struct bind_shape<R (*)(void*, A...) noexcept> {
    template <auto Member, class T>
    static constexpr bool fits =
        std::is_member_function_pointer_v<decltype(Member)> && std::is_invocable_r_v<R, decltype(Member), T*, A...>;
    // A member that throws here calls std::terminate (the handler's type says noexcept).
    template <auto Member, class T>
    static R call(void* context, A... a) noexcept {
        return static_cast<R>((bound_object<Member, T>(context)->*Member)(std::forward<A>(a)...));
    }
};

// Handler is a handler shape: a class with `function` (R(*)(void*, A...)) and `context`
// (void*) that Member on a T* can serve.
template <class Handler, auto Member, class T, class = void>
inline constexpr bool bindable_v = false;

template <class Handler, auto Member, class T>
inline constexpr bool bindable_v<Handler, Member, T,
                                 std::void_t<decltype(Handler::function), decltype(Handler::context)>> =
    std::is_class_v<Handler> && std::is_same_v<decltype(Handler::context), void*> && std::is_convertible_v<T*, void*> &&
    bind_shape<decltype(Handler::function)>::template fits<Member, T>;

}  // namespace detail

/**
 * A member function bound to its object, not yet a handler: what bind_member returns. It
 * converts implicitly to every handler shape of idlewheel whose signature the member function
 * serves: timer_callback (`void()`), idle_handler (`void(idle_kind, bool first)`),
 * heartbeat_handler (`void(heartbeat_event)`), repeat_adjust
 * (`std::chrono::nanoseconds(std::chrono::nanoseconds)`, called as noexcept: a member that
 * throws there calls std::terminate) and basic_session_liveness_config::handler
 * (`void(basic_session_liveness<Wheel>&, liveness_event)`). A shape the member cannot serve is
 * a compile error.
 *
 * The handler it converts to is a {function pointer, context} pair, the context being the
 * object: no allocation, and the call is one indirect call, as with a hand-written function.
 *
 * @tparam Member a pointer to a member function of T (or of a base of T).
 * @tparam T the object's type.
 */
template <auto Member, class T>
class member_binding {
public:
    /// The binding of Member to `*self`.
    /// @param self the object; must outlive every call of the handlers made from the binding.
    constexpr explicit member_binding(T* self) noexcept : self_(self) {}

    /// The handler of shape Handler that calls `(self->*Member)(arguments...)`: defined only
    /// for a Handler with members `function` (`R (*)(void* context, A...)`, maybe noexcept) and
    /// `void* context`, when Member called on a T* with A... returns something convertible
    /// to R.
    /// @tparam Handler the handler shape (deduced from the conversion's target).
    /// @return the handler: {the call, the object}.
    template <class Handler, std::enable_if_t<detail::bindable_v<Handler, Member, T>, int> = 0>
    constexpr operator Handler() const noexcept {  // NOLINT(google-explicit-constructor): the point of it
        using shape = detail::bind_shape<decltype(Handler::function)>;
        return Handler{&shape::template call<Member, T>, self_};
    }

    /// The object.
    [[nodiscard]] constexpr T* object() const noexcept { return self_; }

private:
    T* self_;
};

/**
 * Binds the member function Member to `self`, for any handler shape of idlewheel:
 *
 *     struct session {
 *         void on_timer();
 *         void on_idle(idlewheel::idle_kind kind, bool first);
 *         void on_heartbeat(idlewheel::heartbeat_event e);
 *         idlewheel::timer_node timer{idlewheel::bind_member<&session::on_timer>(this)};
 *         idlewheel::idle_watch idle{wheel, idlewheel::bind_member<&session::on_idle>(this), {.reader = 30s}};
 *         idlewheel::heartbeat hb{wheel, idlewheel::bind_member<&session::on_heartbeat>(this), {...}};
 *     };
 *
 * The shape is deduced from where the binding goes (member_binding); the member function's
 * parameters must match it.
 * @tparam Member a pointer to a member function of T.
 * @param self the object; must outlive every call of the handlers made from the binding.
 * @return the binding, which converts to the handler.
 */
template <auto Member, class T>
[[nodiscard]] constexpr member_binding<Member, T> bind_member(T* self) noexcept {
    return member_binding<Member, T>(self);
}

}  // namespace idlewheel

#endif
