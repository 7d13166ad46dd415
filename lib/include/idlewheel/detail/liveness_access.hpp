// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_LIVENESS_ACCESS_HPP
#define IDLEWHEEL_DETAIL_LIVENESS_ACCESS_HPP

// The narrow, named view the liveness layer (idle_watch, heartbeat, operation_deadline, the
// Beast session liveness) has of a wheel: what wheel_timer keeps private because no other user
// needs it. Times are "elapsed": the wheel clock's duration since the wheel's origin.
//
// The wheel knows nothing of idleness: it only closes activity epochs at its wake-ups (a coarse
// clock that costs one reading per tick) and runs entries. Calls go down from here; the wheel
// calls back only through the timer_node callbacks it was given.

#include <idlewheel/core/activity_epochs.hpp>
#include <idlewheel/core/destruction_guard.hpp>
#include <idlewheel/core/timer_entry.hpp>
#include <idlewheel/timer_node.hpp>

#include <cstdint>

namespace idlewheel::detail {

template <class Wheel>
struct liveness_access {
    using duration = typename Wheel::duration;

    /// What a session stores for "activity now": a load and, once per epoch, a flag store and
    /// a request for a wake-up at the next tick. No clock read, no allocation.
    [[nodiscard]] static std::int64_t activity_mark(Wheel& w) noexcept {
        w.check_executor();  // nothing unless IDLEWHEEL_CHECK_EXECUTOR (debug builds)
        if (w.epochs_.touch()) w.ask_next_tick();
        return w.epochs_.mark();
    }

    /// Checks that the caller runs on the wheel's executor (nothing unless
    /// IDLEWHEEL_CHECK_EXECUTOR): for a call that touches no clock and no entry.
    static void check_executor(const Wheel& w) noexcept { w.check_executor(); }

    /// The same as a compact (32-bit) mark (activity_epochs::compact_mark).
    [[nodiscard]] static std::uint32_t compact_activity_mark(Wheel& w) noexcept {
        w.check_executor();
        if (w.epochs_.touch()) w.ask_next_tick();
        return w.epochs_.compact_mark();
    }

    /// The wheel's activity epochs, read-only (expanding compact marks, asking whether closed).
    [[nodiscard]] static const activity_epochs& epochs(const Wheel& w) noexcept { return w.epochs_; }

    /// A mark (or a time) as a time as of `now` (see activity_epochs::resolve).
    [[nodiscard]] static std::int64_t resolve(const Wheel& w, std::int64_t v, std::int64_t now) noexcept {
        return w.epochs_.resolve(v, now);
    }

    /// A mark of a closed epoch as a time; anything else unchanged (activity_epochs::settled).
    [[nodiscard]] static std::int64_t settled(const Wheel& w, std::int64_t v) noexcept { return w.epochs_.settled(v); }

    /// Clock::now() as elapsed time (reads the clock).
    [[nodiscard]] static duration elapsed_now(const Wheel& w) noexcept { return w.elapsed_now(); }

    /// The time the wheel woke up at: exact inside a callback the wheel runs.
    [[nodiscard]] static duration wake_elapsed(const Wheel& w) noexcept { return w.wake_elapsed(); }

    /// Schedules a liveness object's own node to look again at elapsed time `at`, or sooner:
    /// no later than max_mark_age() ticks after `now`, so the marks it holds still resolve
    /// exactly then. A re-arm (`rearm`: the object is running and its node just fired or is
    /// pending) never counts against max_pending: a running watch never loses its place. A
    /// first arm does, and throws error::too_many_pending like schedule(). Both throw
    /// error::stopped on a stopped wheel.
    /// `Entry` is a timer_node or a shared_entry.
    template <class Entry>
    static void schedule_check(Wheel& w, Entry& node, duration at, duration now, bool rearm) {
        const auto horizon = w.tick_ * static_cast<typename duration::rep>(activity_epochs::max_mark_age());
        if (at - now > horizon) at = now + horizon;
        w.schedule_tick_for(node, w.tick_at_or_after(at), rearm ? 0 : w.max_pending_);
    }

    /// Schedules a liveness object's own node for the start of tick `deadline` (as
    /// schedule_tick()), with the same exemption: a re-arm (`rearm`: the object is running)
    /// never counts against max_pending; a first arm does.
    static void schedule_own_tick(Wheel& w, timer_node& node, typename Wheel::tick_type deadline, bool rearm) {
        w.schedule_tick_for(node, deadline, rearm ? 0 : w.max_pending_);
    }

    /// When a liveness object's own entry is due (wheel_timer::expiry()); time_point::max()
    /// if it is not in the wheel.
    template <class Entry>
    [[nodiscard]] static typename Wheel::time_point expiry(const Wheel& w, const Entry& e) noexcept {
        return w.expiry_of(e);
    }

    /// The executor check's record of the thread that owns a wheel on an io_context's own
    /// executor (detail/executor_check.hpp), for a stream's own check of its callers.
    [[nodiscard]] static auto& owner(Wheel& w) noexcept { return w.owner_; }

    /// The wheel's destruction notice: an object whose callback may destroy the wheel keeps a
    /// destruction_guard on it, and touches the wheel no more once it reports destroyed().
    [[nodiscard]] static destruction_notice& destruction(Wheel& w) noexcept { return w.destruction_; }
};

}  // namespace idlewheel::detail

#endif
