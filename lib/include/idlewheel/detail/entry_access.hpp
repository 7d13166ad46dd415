// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_ENTRY_ACCESS_HPP
#define IDLEWHEEL_DETAIL_ENTRY_ACCESS_HPP

// The narrow, named view an adapter of the timer layer (cancel_after) has of a wheel: putting
// a shared_entry of its own on it, as schedule(timer_node&, ...) / schedule_at() put a node.
// A shared_entry's table is told when it is due (entry_action::fire) and when the wheel lets
// go of it unrun, in stop() or its destructor (entry_action::discard): a timer_node gets no
// such notice. wheel_timer keeps this private because no user of its public API needs it.
// Both functions report a stopped or full wheel (max_pending reached) by returning false, as
// schedule() reports it by throwing, so the adapter decides without an exception.

#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/core/timer_entry.hpp>

#include <cstdint>

namespace idlewheel::detail {

template <class Wheel>
struct entry_access {
    using duration = typename Wheel::duration;
    using time_point = typename Wheel::time_point;

    /// Schedules `e` `delay` from now (already rounded up and saturated to the wheel's
    /// duration). On a clock_read::per_tick wheel it is staged as a schedule() would be, its
    /// delay starting at the next wake-up. False if the wheel is stopped or full.
    [[nodiscard]] static bool schedule_after(Wheel& w, shared_entry& e, duration delay) {
        w.check_executor();
        return w.insert_after(e, delay);
    }

    /// Schedules `e` for `when`, exact at every point of the clock's range (as schedule_at()).
    /// False if the wheel is stopped or full.
    [[nodiscard]] static bool schedule_at(Wheel& w, shared_entry& e, time_point when) {
        w.check_executor();
        const std::uint64_t units = units_after(when, w.origin_);
        const auto deadline = ceil_div(units, static_cast<std::uint64_t>(w.tick_.count()));
        w.prepare_insert();
        if (!w.place(e, deadline, w.max_pending_)) return false;
        w.arm(e.deadline());  // where the wheel placed it (see schedule())
        return true;
    }
};

}  // namespace idlewheel::detail

#endif
