// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BIND_MEMBER_HPP
#define IDLEWHEEL_BIND_MEMBER_HPP

/** @file
 * @brief idlewheel::bind_member: one way to bind a member function to every handler and hook of idlewheel.
 *
 * @par One callback idiom
 * Every handler idlewheel calls is an idlewheel::callback (callback.hpp): a function pointer
 * and its context, the shape of timer_callback, idle_handler, heartbeat_handler,
 * repeat_adjust and basic_session_liveness_config::bound_handler. The three configs that
 * find their session from the liveness object's address (member_liveness_config,
 * stream_liveness_config, beast::websocket_liveness_config) need no context: their hook is a
 * plain `void (*)(Session&, liveness_event)`. One word makes both:
 *  - `bind_member<&T::f>(self)`: the member function on `self`, for a callback (the context is
 *    `self`);
 *  - `bind_member<&Session::f>()`, no object: the member function on the object the caller
 *    passes, for a hook. A config given it calls the member directly from its own handler
 *    (one indirect call per event, as a hand-written handler), not through a member pointer.
 * A captureless lambda fits wherever its signature is the function pointer's (C++17 converts
 * it): `{[](void* context, ...) {...}, context}` for a callback, `[](Session& s,
 * idlewheel::liveness_event e) {...}` for a hook. Nothing allocates and nothing is a
 * std::function: a handler is two pointers, a hook one function pointer (or nothing at all
 * with bind_member<&Session::f>()), kept in the config: no session grows by a byte.
 *
 * Why not folly's virtual `Callback` base (HHWheelTimer::Callback): every entry would carry a
 * vtable pointer, and a session deriving from it is one callback only (an idle_watch, a
 * heartbeat and a timer in one session would each need a wrapper); a {function, context} pair
 * is the same single indirect call. Why not 1.0's member pointers (`hook_type`, `&Session::f`
 * as a runtime value): a second idiom, twice a function pointer's size, called through a
 * check for virtual members; they still compile in 1.x, deprecated; 2.0 drops them.
 */

#include <idlewheel/callback.hpp>

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

// A plain function pointer R(*)(S&, A...) whose call<Member> calls (s.*Member)(a...).
template <class Fn>
struct hook_shape {
    template <auto>
    static constexpr bool fits = false;
};

template <class R, class S, class... A>
struct hook_shape<R (*)(S&, A...)> {
    template <auto Member>
    static constexpr bool fits = std::is_member_function_pointer_v<decltype(Member)> &&
                                 std::is_base_of_v<typename member_class<decltype(Member)>::type, S> &&
                                 std::is_invocable_r_v<R, decltype(Member), S&, A...>;
    template <auto Member>
    static R call(S& object, A... a) {
        using C = typename member_class<decltype(Member)>::type;
        return static_cast<R>((static_cast<C&>(object).*Member)(std::forward<A>(a)...));
    }
};

}  // namespace detail

/**
 * A member function bound to its object, not yet a handler: what bind_member(self) returns.
 * It converts implicitly to every callback of idlewheel whose signature the member function
 * serves: timer_callback (`void()`), idle_handler (`void(idle_kind, bool first)`),
 * heartbeat_handler (`void(heartbeat_event)`), repeat_adjust
 * (`std::chrono::nanoseconds(std::chrono::nanoseconds) noexcept`: a member that throws there
 * calls std::terminate), basic_session_liveness_config::bound_handler
 * (`void(basic_session_liveness<Wheel>&, liveness_event)`), and any callback<Sig>. A shape the
 * member cannot serve is a compile error.
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

/**
 * A member function not bound to any object: the object comes with each call. What
 * bind_member<&Session::f>() returns, for the hooks of member_liveness_config,
 * stream_liveness_config and beast::websocket_liveness_config, which find the session
 * themselves: a config given a member_hook calls `(session.*Member)(event)` directly, with
 * Member known at compile time. It also converts implicitly to a plain function pointer
 * `R (*)(S&, A...)` for any S derived from (or equal to) Member's class, when Member called on
 * an S with A... returns something convertible to R: the function calls the member.
 *
 * An empty object: no storage, nothing to outlive.
 *
 * @tparam Member a pointer to a member function.
 */
template <auto Member>
struct member_hook {
    static_assert(std::is_member_function_pointer_v<decltype(Member)>,
                  "idlewheel::member_hook / bind_member<Member>(): Member must be a pointer to a member function");

    /// The class Member belongs to.
    using class_type = typename detail::member_class<decltype(Member)>::type;

    /// Calls Member on `object` with `args`: the member, called directly.
    /// @tparam S the object's type (Member's class or derived from it).
    /// @tparam A the arguments.
    /// @param object the object.
    /// @param args the arguments.
    /// @return what the member returns.
    template <class S, class... A>
    static decltype(auto) call(S& object, A... args) {
        return (static_cast<class_type&>(object).*Member)(std::forward<A>(args)...);
    }

    /// The plain function `R (*)(S&, A...)` that calls Member on its first argument with the
    /// others: defined for a Fn of that form that Member serves.
    /// @tparam Fn the function pointer type (deduced from the conversion's target).
    /// @return the function.
    template <class Fn, std::enable_if_t<detail::hook_shape<Fn>::template fits<Member>, int> = 0>
    constexpr operator Fn() const noexcept {  // NOLINT(google-explicit-constructor): the point of it
        return &detail::hook_shape<Fn>::template call<Member>;
    }
};

/**
 * The member function Member, for a hook that is given its object at each call (the configs
 * whose liveness object finds its session: member_liveness_config, stream_liveness_config,
 * beast::websocket_liveness_config):
 *
 *     struct session {
 *         void on_liveness(idlewheel::liveness_event e);
 *         idlewheel::member_liveness<session> live;
 *     };
 *     idlewheel::member_liveness_config<session> config(wheel, options,
 *         idlewheel::bind_member<&session::on_liveness>());
 *
 * @tparam Member a pointer to a member function.
 * @return the hook (member_hook), which converts to a plain function pointer too.
 */
template <auto Member>
[[nodiscard]] constexpr member_hook<Member> bind_member() noexcept {
    return {};
}

}  // namespace idlewheel

#endif
