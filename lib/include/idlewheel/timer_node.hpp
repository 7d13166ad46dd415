// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TIMER_NODE_HPP
#define IDLEWHEEL_TIMER_NODE_HPP

/** @file
 * @brief idlewheel::timer_node: the zero-allocation form of a timeout.
 */

#include <idlewheel/bind_member.hpp>
#include <idlewheel/callback.hpp>
#include <idlewheel/core/wheel_core.hpp>

#include <chrono>

namespace idlewheel {

/// What a timer_node (and a repeating_timer) calls when it fires: `function(context)`
/// (idlewheel::callback; bind_member<&T::f>(self) converts to it).
using timer_callback = callback<void()>;

/// A timer_callback that calls `(self->*Member)()`.
/// @deprecated Use idlewheel::bind_member (the same, for every handler shape); kept for 1.x.
/// @tparam Member a pointer to a member function of T taking no argument.
/// @param self the object; must outlive every firing of the node.
/// @return the callback.
template <auto Member, class T>
[[deprecated("use idlewheel::bind_member")]] [[nodiscard]] constexpr timer_callback call_member(T* self) noexcept {
    return bind_member<Member>(self);
}

/**
 * The zero-allocation form of a timeout. Embed one in a session object
 * and (re)schedule it as often as you like with wheel_timer::schedule(node, delay): each call
 * is a few stores and an O(1) relink, never an allocation.
 *
 *     struct session {
 *         void on_idle();
 *         idlewheel::timer_node idle_timer{idlewheel::bind_member<&session::on_idle>(this)};
 *     };
 *     wheel.schedule(s.idle_timer, 30s);   // arm or re-arm
 *
 * Destroying a node that is pending unlinks it in O(1): its callback never runs afterwards.
 * A node is not copyable or movable (the wheel points at it).
 *
 * @par Thread safety
 * Like its wheel's: schedule, cancel and destroy it on the wheel's executor (cancel() is
 * checked by the executor check, IDLEWHEEL_CHECK_EXECUTOR). Its callback runs there, from the
 * wheel's completion handler, as every wheel callback (wheel_timer, Completion).
 */
class timer_node : private detail::own_entry {
public:
    /// A node that calls `cb` each time it fires; not scheduled.
    /// @param cb what it calls (a bind_member converts to it).
    explicit timer_node(timer_callback cb) noexcept : own_entry(kind::node, &act), callback_(cb) {}

    /// True while scheduled and not yet run.
    [[nodiscard]] bool pending() const noexcept { return linked(); }

    /// Unschedules it. True if it was pending. O(1).
    bool cancel() noexcept { return linked() && core()->cancel(*this); }

    /// Changes what it calls; allowed at any time (even while pending).
    /// @param cb what it calls from now on.
    void set_callback(timer_callback cb) noexcept { callback_ = cb; }

private:
    template <class, class>
    friend class basic_wheel_timer;

    static void act(timer_entry& e, detail::entry_action a) {
        if (a != detail::entry_action::fire) return;
        auto& self = static_cast<timer_node&>(e);
        self.callback_();
    }

    timer_callback callback_;
};

}  // namespace idlewheel

#endif
