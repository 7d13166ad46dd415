// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IMPL_REPEATING_TIMER_HPP
#define IDLEWHEEL_IMPL_REPEATING_TIMER_HPP

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/core/destruction_guard.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/detail/liveness_access.hpp>

#include <limits>
#include <stdexcept>
#include <utility>

namespace idlewheel {

// Deadlines are kept as the wheel's elapsed time (its clock's duration since its origin) and
// placed at their tick (as schedule_tick()): exact in either clock_read mode, and a fixed-rate
// deadline is a sum, never a new clock reading, so it cannot drift. A running timer places its
// node with the liveness layer's re-arm exemption (detail/liveness_access.hpp): never refused
// for max_pending, even while its node is out of the wheel because its round is running.

// The handler run_once_now() posts. It may outlive the timer (a weak reference) and the
// operation that posted it (a generation number: stop, restart, reset cancel it).
template <class Wheel>
struct basic_repeating_timer<Wheel>::run_now_handler {
    std::weak_ptr<basic_repeating_timer*> life;
    std::uint64_t generation;

    void operator()() const {
        basic_repeating_timer* self = nullptr;
        if (auto alive = life.lock()) self = *alive;
        if (self == nullptr || generation != self->generation_ || !self->run_now_posted_) return;
        self->run_now_posted_ = false;
        // The wheel dropped the placeholder (stopped or destroyed): the timer is not running.
        if (!self->node_.pending()) return;
        const duration now = self->wheel_->elapsed_now();
        self->run_round(now, now);
    }
};

template <class Wheel>
template <class Rep, class Period>
basic_repeating_timer<Wheel>::basic_repeating_timer(Wheel& wheel, timer_callback callback,
                                                    std::chrono::duration<Rep, Period> period,
                                                    const repeat_options& options)
    : wheel_(&wheel),
      callback_(callback),
      adjust_(options.adjust),
      period_(validated_period(period)),
      mode_(options.mode) {}

template <class Wheel>
basic_repeating_timer<Wheel>::~basic_repeating_timer() {
    if (destroyed_ != nullptr) *destroyed_ = true;
    // life_ and node_ go with the members: posted handlers see the weak reference expire, and
    // the node unlinks itself.
}

template <class Wheel>
template <class Rep, class Period>
auto basic_repeating_timer<Wheel>::validated_period(std::chrono::duration<Rep, Period> period) -> duration {
    // Checked before the conversion, which makes NaN "never" (a period must be a number).
    if (!(period > std::chrono::duration<Rep, Period>::zero()))
        throw std::invalid_argument("idlewheel::repeating_timer: the period must be > 0");
    return detail::saturating_ceil<duration>(period);
}

template <class Wheel>
auto basic_repeating_timer<Wheel>::next_delay() const noexcept -> duration {
    duration d = period_;
    if (adjust_) d = detail::saturating_ceil<duration>(adjust_(detail::saturating_ceil<std::chrono::nanoseconds>(period_)));
    return d > duration::zero() ? d : duration(1);
}

template <class Wheel>
void basic_repeating_timer<Wheel>::start() {
    if (running()) return;
    start_fresh();
}

template <class Wheel>
bool basic_repeating_timer<Wheel>::stop() noexcept {
    const bool was_running = running();
    ++generation_;
    run_now_posted_ = false;
    in_round_ = false;
    node_.cancel();
    return was_running;
}

template <class Wheel>
void basic_repeating_timer<Wheel>::restart() {
    start_fresh();
}

template <class Wheel>
template <class Rep, class Period>
void basic_repeating_timer<Wheel>::reset(std::chrono::duration<Rep, Period> period) {
    period_ = validated_period(period);
    reset();
}

template <class Wheel>
void basic_repeating_timer<Wheel>::reset() noexcept {
    if (!running()) return;
    try {
        start_fresh();
    } catch (...) {
        // Unreachable: the pending node only moves, which the wheel never refuses. Should it
        // ever fail, stop visibly rather than keep a round that would never be replaced.
        stop();
    }
}

template <class Wheel>
bool basic_repeating_timer<Wheel>::run_once_now() {
    if (!running()) return false;
    if (run_now_posted_) return true;
    if (!life_) life_ = std::make_shared<basic_repeating_timer*>(this);
    const std::uint64_t generation = generation_ + 1;
    net::post(wheel_->get_executor(), run_now_handler{life_, generation});  // may throw: nothing changed yet
    place_hold();                                                           // the node is pending: it only moves
    generation_ = generation;
    run_now_posted_ = true;
    return true;
}

// A round from now (start, restart, reset). Throws only if the node was not pending.
template <class Wheel>
void basic_repeating_timer<Wheel>::start_fresh() {
    ++generation_;
    run_now_posted_ = false;
    place_round(detail::saturating_add(wheel_->elapsed_now(), next_delay()));
}

// Puts the node at `tick`: a move or a re-arm if the timer is running (never refused for
// max_pending), a first arm otherwise (start(), restart() of a stopped timer: may be refused).
template <class Wheel>
void basic_repeating_timer<Wheel>::place_at(typename Wheel::tick_type tick) {
    detail::liveness_access<Wheel>::schedule_own_tick(*wheel_, node_, tick, running());
}

template <class Wheel>
void basic_repeating_timer<Wheel>::place_round(duration deadline) {
    place_at(wheel_->tick_at_or_after(deadline));
    deadline_ = deadline;
    role_ = role::round;
}

template <class Wheel>
void basic_repeating_timer<Wheel>::place_hold() {
    // The last tick: a place that never comes due, but keeps the timer running while a
    // run_once_now() is posted (the wheel's stop() drops it, which the posted run sees).
    place_at((std::numeric_limits<typename Wheel::tick_type>::max)());
    role_ = role::hold;
}

// The node came due (or expire_all() ran it ahead of time).
template <class Wheel>
void basic_repeating_timer<Wheel>::fire() {
    // The node is out of the wheel now: the timer is running its round until it re-arms.
    in_round_ = true;
    if (role_ == role::hold || callbacks_running_ > 0) {
        // expire_all() ran a placeholder (it stays one), or a round came due inside the
        // callback (no reentrant callback: it waits for its deadline). A re-arm: never
        // refused, and the wheel is running, so it is not stopped.
        try {
            if (role_ == role::hold)
                place_hold();
            else
                place_round(deadline_);
        } catch (...) {  // NOLINT(bugprone-empty-catch): unreachable (see above); not running then
        }
        in_round_ = false;
        return;
    }
    run_round(wheel_->elapsed_now(), deadline_);
}

// Runs the callback for a round due at `due`, at `now`. The next round (fixed-rate) is in the
// wheel before the callback runs; a fixed-delay round holds no entry while its callback runs
// (in_round_ keeps it running) and re-arms after it, exempt from max_pending. A callback that
// throws, stops, reschedules or destroys the timer or the wheel finds it consistent.
template <class Wheel>
void basic_repeating_timer<Wheel>::run_round(duration now, duration due) {
    std::uint64_t missed = 0;
    if (mode_ == repeat_mode::fixed_rate) {
        const duration d = next_delay();
        duration base = due;
        if (now > due) {
            // Rounds due + d, due + 2d, ... that are already due by now are coalesced.
            const auto m = (now - due) / d;
            missed = static_cast<std::uint64_t>(m);
            base = due + d * m;  // <= now: no overflow
        }
        place_round(detail::saturating_add(base, d));
        in_round_ = false;
    } else if (!node_.pending()) {
        in_round_ = true;  // a round the wheel ran: its entry is out until after_callback()
    }  // (a posted run_once_now() keeps its placeholder until after_callback() moves it)
    missed_ = missed;
    missed_total_ += missed;
    ++runs_;

    const std::uint64_t generation = generation_;
    bool destroyed = false;
    bool* const outer = std::exchange(destroyed_, &destroyed);  // nested only if the callback polls the io_context
    detail::destruction_guard wheel_watch(detail::liveness_access<Wheel>::destruction(*wheel_));
    ++callbacks_running_;
    try {
        callback_();
    } catch (...) {
        if (destroyed) {
            if (outer != nullptr) *outer = true;
            throw;
        }
        destroyed_ = outer;
        --callbacks_running_;
        after_callback(generation, wheel_watch.destroyed());
        throw;
    }
    if (destroyed) {
        if (outer != nullptr) *outer = true;
        return;
    }
    destroyed_ = outer;
    --callbacks_running_;
    after_callback(generation, wheel_watch.destroyed());
}

template <class Wheel>
void basic_repeating_timer<Wheel>::after_callback(std::uint64_t generation, bool wheel_destroyed) noexcept {
    // Fixed-delay: the next round starts now, unless the callback decided it (stop, restart,
    // reset, run_once_now, start after stop) or the wheel went away (destroyed inside the
    // callback: touch nothing of it; stopped: the re-arm is refused, or a posted run's
    // placeholder was dropped).
    const bool rearm = mode_ == repeat_mode::fixed_delay && generation == generation_ && running();
    if (wheel_destroyed) {
        in_round_ = false;
        return;
    }
    if (rearm) {
        try {
            place_round(detail::saturating_add(wheel_->elapsed_now(), next_delay()));
        } catch (...) {
            // The wheel was stopped inside the callback: the timer ends with it.
            node_.cancel();
        }
    }
    in_round_ = false;
}

}  // namespace idlewheel

#endif
