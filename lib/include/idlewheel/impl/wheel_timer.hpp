// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IMPL_WHEEL_TIMER_HPP
#define IDLEWHEEL_IMPL_WHEEL_TIMER_HPP

#include <idlewheel/detail/asio.hpp>

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>

namespace idlewheel {

namespace detail {

template <class Duration>
Duration validated_tick(std::chrono::nanoseconds tick) {
    const auto t = std::chrono::duration_cast<Duration>(tick);
    if (tick <= std::chrono::nanoseconds::zero() || t <= Duration::zero())
        throw std::invalid_argument("idlewheel: wheel_options::tick must be > 0 (and at least one unit of the clock)");
    return t;
}

inline std::size_t validated_run_bound(std::size_t n) {
    if (n == 0) throw std::invalid_argument("idlewheel: wheel_options::max_run_per_wakeup must be > 0");
    return n;
}

}  // namespace detail

// The Asio timer's handler. It may outlive the wheel (queued when the wheel dies), so it holds
// a weak reference, and a generation number so a wait replaced by an earlier one is ignored
// even if it had already completed successfully (Beast basic_stream's timeout handler).
template <class Clock, class Executor>
struct basic_wheel_timer<Clock, Executor>::wake_handler {
    std::weak_ptr<basic_wheel_timer*> life;
    std::uint64_t generation;

    void operator()(const error_code& ec) const {
        if (ec == net::error::operation_aborted) return;
        basic_wheel_timer* self = nullptr;
        if (auto alive = life.lock()) self = *alive;
        if (self == nullptr || generation != self->generation_) return;
        self->armed_ = false;
        self->on_wake(false);
    }
};

// Posted when a wake-up ran its budget (or a callback threw) with entries left in the batch.
template <class Clock, class Executor>
struct basic_wheel_timer<Clock, Executor>::continue_handler {
    std::weak_ptr<basic_wheel_timer*> life;

    void operator()() const {
        basic_wheel_timer* self = nullptr;
        if (auto alive = life.lock()) self = *alive;
        if (self == nullptr) return;
        self->continuation_posted_ = false;
        self->on_wake(true);
    }
};

template <class Clock, class Executor>
struct basic_wheel_timer<Clock, Executor>::initiate_async_wait {
    basic_wheel_timer* self;

    using executor_type = Executor;
    executor_type get_executor() const noexcept { return self->get_executor(); }

    template <class Handler>
    void operator()(Handler&& handler, duration delay) const {
        static_assert(std::is_invocable_v<std::decay_t<Handler>&, error_code>,
                      "idlewheel::wheel_timer::async_wait: the handler must be callable as void(error_code)");
        self->check_executor();
        using op = detail::wait_op<std::decay_t<Handler>, Executor>;
        op& o = op::create(std::forward<Handler>(handler), self->get_executor());
        if (!self->insert_after(o, delay)) {
            o.complete_posted(self->stopped_ ? error::stopped : error::too_many_pending);
            return;
        }
        o.enable_cancellation();
    }
};

template <class Clock, class Executor>
basic_wheel_timer<Clock, Executor>::basic_wheel_timer(const executor_type& ex, const wheel_options& options)
    : tick_(detail::validated_tick<duration>(options.tick)),
      origin_(Clock::now()),
      max_pending_(options.max_pending),
      max_run_per_wakeup_(detail::validated_run_bound(options.max_run_per_wakeup)),
      per_tick_(options.clock == clock_read::per_tick),
      timer_(ex),
      life_(std::make_shared<basic_wheel_timer*>(this)) {}

template <class Clock, class Executor>
basic_wheel_timer<Clock, Executor>::~basic_wheel_timer() {
    life_.reset();
    discard_all_quietly();  // the session configs may be gone already (teardown in any order)
}

template <class Clock, class Executor>
template <class Rep, class Period, class F>
timeout basic_wheel_timer<Clock, Executor>::schedule(std::chrono::duration<Rep, Period> delay, F&& fn) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>,
                  "idlewheel::wheel_timer::schedule(delay, fn): fn must be callable with no arguments, as fn()");
    check_executor();
    if (stopped_) {
        ++counters_.rejected;
        detail::throw_error(error::stopped, "idlewheel::wheel_timer::schedule");
    }
    auto* entry = new detail::timeout_fn_entry<std::decay_t<F>>(std::forward<F>(fn));
    if (!insert_after(*entry, detail::saturating_ceil<duration>(delay))) {
        entry->release();
        detail::throw_error(error::too_many_pending, "idlewheel::wheel_timer::schedule");
    }
    entry->add_ref();
    return timeout(entry);
}

template <class Clock, class Executor>
template <class Rep, class Period>
void basic_wheel_timer<Clock, Executor>::schedule(timer_node& node, std::chrono::duration<Rep, Period> delay) {
    check_executor();
    if (!insert_after(node, detail::saturating_ceil<duration>(delay)))
        detail::throw_error(stopped_ ? error::stopped : error::too_many_pending, "idlewheel::wheel_timer::schedule");
}

// Puts `e` in the wheel `delay` (already rounded up and saturated) from now, or stages it
// for the next wake-up (clock_read::per_tick). False if full or stopped.
template <class Clock, class Executor>
bool basic_wheel_timer<Clock, Executor>::insert_after(detail::timer_entry& e, duration delay) {
    if (per_tick_) return stage(e, static_cast<std::uint64_t>(delay.count()), max_pending_);
    // ceil((elapsed + delay) / tick), and never a tick that has begun: a delay <= 0 made on a
    // tick boundary goes to the next tick, as schedule_at() of a time that has passed does, so
    // everything due at the call runs in call order however far a sleeping wheel lags.
    const auto elapsed = Clock::now() - origin_;
    const auto now_units = elapsed > duration::zero() ? static_cast<std::uint64_t>(elapsed.count()) : 0U;
    const auto t = static_cast<std::uint64_t>(tick_.count());
    const tick_type deadline =
        (std::max)(detail::ceil_div(now_units + static_cast<std::uint64_t>(delay.count()), t), now_units / t + 1);
    prepare_insert();
    if (!place(e, deadline, max_pending_)) return false;
    // The tick the wheel placed it at, not the one asked for: a deadline the wheel has already
    // handed out goes to the next tick, and arming for the one asked for wakes up for nothing.
    arm(e.deadline());
    return true;
}

// Staged entries start their delay at `start` (a clock reading taken after they were staged).
template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::flush_staged_at(duration start) noexcept {
    const auto s = start > duration::zero() ? static_cast<std::uint64_t>(start.count()) : 0U;
    const auto t = static_cast<std::uint64_t>(tick_.count());
    flush_staged([s, t](std::uint64_t delay) {
        return detail::ceil_div(s + delay, t);  // both below 2^63: the sum cannot overflow
    });
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::schedule_at(timer_node& node, time_point when) {
    // Straight from `when` to its tick, without `when - now()` (which overflows for times
    // near time_point::min() or max()): a time at or before the origin is tick 0, which has
    // passed, so the wheel places it at the next tick it hands out: due now.
    // A time that has passed goes to the first tick that has not begun (one clock read), not
    // to the next tick a sleeping wheel hands out: everything due at the call then runs in
    // call order with schedule(0) and other past times (the rule at the top of the header).
    const std::uint64_t units = detail::units_after(when, origin_);
    const tick_type deadline = detail::ceil_div(units, static_cast<std::uint64_t>(tick_.count()));
    schedule_tick(node, (std::max)(deadline, current_tick() + 1));
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::schedule_tick(timer_node& node, tick_type deadline) {
    schedule_tick_for(node, deadline, max_pending_);
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::schedule_entry(detail::timer_entry& e, tick_type deadline,
                                                        std::size_t max_pending) {
    check_executor();
    prepare_insert();
    if (!place(e, deadline, max_pending))
        detail::throw_error(stopped_ ? error::stopped : error::too_many_pending, "idlewheel::wheel_timer::schedule");
    arm(e.deadline());  // where the wheel placed it (see schedule())
}

template <class Clock, class Executor>
template <class Rep, class Period, class Token>
auto basic_wheel_timer<Clock, Executor>::async_wait(std::chrono::duration<Rep, Period> delay, Token&& token) {
    return net::async_initiate<Token, void(error_code)>(initiate_async_wait{this}, token,
                                                        detail::saturating_ceil<duration>(delay));
}

template <class Clock, class Executor>
std::vector<timeout> basic_wheel_timer<Clock, Executor>::stop() {
    check_executor();
    std::vector<timeout> unrun;
    unrun.reserve(pending());
    stopped_ = true;
    discard_all([&unrun](detail::timer_entry& e) {
        if (e.entry_kind() != detail::timer_entry::kind::handle) return;
        auto& entry = static_cast<detail::timeout_entry&>(e);
        entry.add_ref();
        unrun.push_back(timeout(&entry));  // capacity reserved: cannot throw
    });
    disarm();
    return unrun;
}

template <class Clock, class Executor>
std::size_t basic_wheel_timer<Clock, Executor>::expire_all() {
    check_executor();
    // Staged entries join the others in deadline order: give them their deadlines first.
    if (has_staged()) flush_staged_at(elapsed_now());
    if (running_) return collect_all();  // the running batch will reach them
    collect_all();
    running_ = true;
    detail::destruction_guard watch(destruction_);
    struct finish {
        basic_wheel_timer& self;
        const detail::destruction_guard& watch;
        ~finish() {
            if (watch.destroyed()) return;
            self.running_ = false;
            self.run_and_rearm_after();
        }
    } done{*this, watch};
    return run_batch((std::numeric_limits<std::size_t>::max)(), watch, [](detail::timer_entry&) {});
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::set_expire_immediately(bool on) {
    check_executor();
    expire_immediately_ = on;
    if (on && pending() != 0 && !stopped_) arm(wheel_.now() + 1);  // the next tick runs them all
}

template <class Clock, class Executor>
wheel_stats basic_wheel_timer<Clock, Executor>::stats() const noexcept {
    wheel_stats s;
    s.pending = pending();
    s.scheduled = counters_.scheduled;
    s.rescheduled = counters_.rescheduled;
    s.expired = counters_.expired;
    s.cancelled = counters_.cancelled;
    s.stopped = counters_.stopped;
    s.rejected = counters_.rejected;
    s.wakeups = counters_.wakeups;
    s.idle_wakeups = counters_.idle_wakeups;
    s.ticks_advanced = counters_.ticks_advanced;
    s.worst_lateness = worst_lateness_;
    s.lateness_count = lateness_count_;
    s.lateness_sum = lateness_sum_;
    return s;
}

template <class Clock, class Executor>
template <class Rep, class Period>
auto basic_wheel_timer<Clock, Executor>::deadline_after(std::chrono::duration<Rep, Period> delay) const noexcept
    -> tick_type {
    // ceil((elapsed + delay) / tick): both terms are below 2^63, so the sum fits a uint64.
    const auto elapsed = Clock::now() - origin_;
    const auto e = elapsed > duration::zero() ? static_cast<std::uint64_t>(elapsed.count()) : 0U;
    const auto d = static_cast<std::uint64_t>(detail::saturating_ceil<duration>(delay).count());
    return detail::ceil_div(e + d, static_cast<std::uint64_t>(tick_.count()));
}

template <class Clock, class Executor>
auto basic_wheel_timer<Clock, Executor>::current_tick() const noexcept -> tick_type {
    const auto elapsed = Clock::now() - origin_;
    if (elapsed <= duration::zero()) return 0;
    return static_cast<tick_type>(elapsed.count()) / static_cast<tick_type>(tick_.count());
}

template <class Clock, class Executor>
auto basic_wheel_timer<Clock, Executor>::tick_at_or_after(duration e) const noexcept -> tick_type {
    if (e <= duration::zero()) return 0;
    return detail::ceil_div(static_cast<tick_type>(e.count()), static_cast<tick_type>(tick_.count()));
}

template <class Clock, class Executor>
auto basic_wheel_timer<Clock, Executor>::time_of(tick_type tick) const noexcept -> time_point {
    // max() - origin, without overflow for an origin before the clock's epoch.
    const tick_type room = detail::units_after(time_point::max(), origin_) / static_cast<tick_type>(tick_.count());
    if (tick > room) return time_point::max();
    return origin_ + tick_ * static_cast<typename duration::rep>(tick);
}

template <class Clock, class Executor>
auto basic_wheel_timer<Clock, Executor>::expiry_of(const detail::timer_entry& e) const noexcept -> time_point {
    if (!e.linked() || e.core() != static_cast<const detail::wheel_core*>(this)) return time_point::max();
    if (!is_staged(e)) return time_of(e.deadline());
    // Staged: deadline() is its delay, which starts at the next wake-up, not before now.
    const auto elapsed = elapsed_now();
    const auto now_units = elapsed > duration::zero() ? static_cast<std::uint64_t>(elapsed.count()) : 0U;
    const auto t = static_cast<std::uint64_t>(tick_.count());
    return time_of((std::max)(detail::ceil_div(now_units + e.deadline(), t), now_units / t + 1));
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::became_empty() noexcept {
    // The last entry was cancelled, and no wake-up is asked for the next tick (wheel_core
    // calls this only then; an activity epoch touched in this tick always asked for one).
    assert(!epochs_.open());
    disarm();
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::disarm() noexcept {
    // Nothing left: do not wake for nothing. Cancelling a timer reports no error in Asio.
    next_tick_asked_ = false;  // the next ask must arm again
    if (!armed_) return;
    armed_ = false;
    ++generation_;
    try {
        timer_.cancel();
    } catch (...) {
        // The stale wait is ignored through the generation number anyway.
    }
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::wake_next_tick() noexcept {
    // One wake-up at the next tick boundary gives staged entries their deadlines and closes
    // the activity epoch touched since the last one. If the wheel is behind the clock (it
    // sleeps when idle) that boundary is in the past and the wake-up comes at once, which only
    // makes the reading exact. A wheel that has never woken up counts as asleep too: its
    // first ask is served at once, not at the end of tick 0 (docs/precision.md's "at once if the
    // wheel was asleep" holds for a fresh wheel).
    try {
        arm(counters_.wakeups == 0 ? wheel_.now() : wheel_.now() + 1);
    } catch (...) {
        // Arming can only fail on allocation failure; the wake-up then comes with the next
        // one asked for, which makes deadlines later, never early.
    }
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::prepare_insert() noexcept {
    // An empty wheel may be far behind the clock (it does not wake when idle): catching up
    // costs nothing then, and keeps new entries in low levels (fewer cascades).
    if (wheel_.empty()) collect(current_tick());
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::arm(tick_type due) {
    // Inside the expiry loop, or with a continuation queued, the loop re-arms when it ends.
    if (running_ || continuation_posted_) return;
    if (expire_immediately_ && due > wheel_.now() + 1) due = wheel_.now() + 1;  // the switch
    if (armed_ && armed_tick_ <= due) return;
    armed_ = true;
    armed_tick_ = due;
    ++generation_;
    timer_.expires_at(time_of(due));  // cancels a later wait, whose handler is then ignored
    timer_.async_wait(wake_handler{life_, generation_});
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::on_wake(bool continuation) {
    ++counters_.wakeups;
    next_tick_asked_ = false;  // this is that wake-up
    // One clock read serves the epoch, the wheel's advance and every callback of the batch.
    wake_elapsed_ = elapsed_now();
    // Activity of this epoch may have come after callbacks that an earlier wake-up ran at the
    // same clock reading (a continuation, a coarse clock): stamp it strictly later than that
    // wake-up, so "after a report" and "before a report" never tie. Still never early.
    epochs_.close(std::max(wake_elapsed_.count(), last_wake_.count() + 1));
    last_wake_ = wake_elapsed_;
    collect(wake_elapsed_ > duration::zero()
                ? static_cast<tick_type>(wake_elapsed_.count()) / static_cast<tick_type>(tick_.count())
                : 0U);
    // Everything staged since the last wake-up was staged before this clock reading.
    if (has_staged()) flush_staged_at(wake_elapsed_);
    // The switch: a wake-up takes everything pending into its batch. A continuation only
    // finishes that batch (and runs what the clock made due): what the batch's callbacks
    // scheduled, liveness objects re-arming included, waits for the next tick's wake-up, so
    // each entry runs at most once per tick and the wheel sleeps between ticks.
    if (expire_immediately_ && !continuation) collect_all();
    const std::uint64_t expired_before = counters_.expired;
    running_ = true;
    detail::destruction_guard watch(destruction_);
    struct finish {
        basic_wheel_timer& self;
        const detail::destruction_guard& watch;
        std::uint64_t expired_before;
        ~finish() {
            if (watch.destroyed()) return;
            if (self.counters_.expired == expired_before) ++self.counters_.idle_wakeups;
            self.running_ = false;
            self.run_and_rearm_after();
        }
    } done{*this, watch, expired_before};
    const time_point now = origin_ + wake_elapsed_;
    run_batch(max_run_per_wakeup_, watch, [this, now](detail::timer_entry& e) {
        const auto late = std::chrono::duration_cast<std::chrono::nanoseconds>(now - time_of(e.deadline()));
        if (late < std::chrono::nanoseconds::zero()) return;  // run ahead of time (the switch)
        if (late > worst_lateness_) worst_lateness_ = late;
        std::size_t bucket = 0;
        while (bucket != wheel_stats::lateness_bounds.size() && late > wheel_stats::lateness_bounds[bucket]) ++bucket;
        ++lateness_count_[bucket];
        lateness_sum_ = detail::saturating_add(lateness_sum_, late);
    });
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::run_and_rearm_after() {
    if (!batch_empty()) {
        if (!continuation_posted_) {
            continuation_posted_ = true;
            net::post(timer_.get_executor(), continue_handler{life_});
        }
        return;
    }
    if (stopped_) return;
    // An open epoch, or entries staged by this batch's callbacks, need the next tick's wake-up;
    // so does anything pending while the switch is on.
    const bool next_tick = epochs_.open() || has_staged() || (expire_immediately_ && pending() != 0);
    next_tick_asked_ = next_tick;  // what was asked during the batch is settled here
    if (next_tick) arm(wheel_.now() + 1);
    if (const auto due = wheel_.next_due())
        arm(*due);
    else if (!next_tick)
        disarm();  // expire_all() may have emptied the wheel under an armed wait
}

template <class Clock, class Executor>
void basic_wheel_timer<Clock, Executor>::check_executor() const noexcept {
#if IDLEWHEEL_CHECK_EXECUTOR
    detail::check_caller(timer_.get_executor(), &owner_);
#endif
}

}  // namespace idlewheel

#endif
