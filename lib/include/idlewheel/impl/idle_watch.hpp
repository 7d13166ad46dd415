// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IMPL_IDLE_WATCH_HPP
#define IDLEWHEEL_IMPL_IDLE_WATCH_HPP

#include <idlewheel/core/destruction_guard.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/detail/liveness_access.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace idlewheel {

template <class Wheel>
void basic_idle_watch<Wheel>::start() {
    // Restarting a running watch (its handler included, while its entry is out of the
    // wheel) moves its own entry: that never counts against max_pending.
    const bool was_running = running_;
    running_ = true;
    ++generation_;
    const duration now = access::elapsed_now(*wheel_);
    for (auto& a : activity_) a = now.count();
    for (auto& e : last_report_) e = never;
    arm_or_stop(now, /*rearm=*/was_running);
}

template <class Wheel>
void basic_idle_watch<Wheel>::stop() noexcept {
    running_ = false;
    ++generation_;
    node_.cancel();
}

template <class Wheel>
void basic_idle_watch<Wheel>::set_options(const idle_options& options) {
    apply(options);
    if (running_) arm_or_stop(access::elapsed_now(*wheel_), /*rearm=*/true);
}

template <class Wheel>
idle_options basic_idle_watch<Wheel>::options() const noexcept {
    return {to_ns(time_[0]), to_ns(time_[1]), to_ns(time_[2]), observe_output_};
}

template <class Wheel>
std::chrono::nanoseconds basic_idle_watch<Wheel>::to_ns(duration d) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(d);
}

template <class Wheel>
void basic_idle_watch<Wheel>::apply(const idle_options& o) noexcept {
    time_[0] = detail::saturating_ceil<duration>(o.reader);
    time_[1] = detail::saturating_ceil<duration>(o.writer);
    time_[2] = detail::saturating_ceil<duration>(o.all);
    observe_output_ = o.observe_output;
}

template <class Wheel>
auto basic_idle_watch<Wheel>::last_activity(unsigned kind, duration now) const noexcept -> duration {
    const auto at = [&](activity_kind a) { return duration(access::resolve(*wheel_, activity_[a], now.count())); };
    const duration r = at(read);
    duration w = at(write);
    if (observe_output_) w = std::max(w, at(progress));
    if (kind == 0) return r;
    if (kind == 1) return w;
    return std::max(r, w);
}

template <class Wheel>
void basic_idle_watch<Wheel>::settle() noexcept {
    for (auto& a : activity_) a = access::settled(*wheel_, a);
}

template <class Wheel>
auto basic_idle_watch<Wheel>::due(unsigned k, duration now) const noexcept -> duration {
    return detail::saturating_add(std::max(last_activity(k, now), last_report_[k]), time_[k]);
}

template <class Wheel>
void basic_idle_watch<Wheel>::arm_for(duration now, bool rearm) {
    settle();
    duration next = duration::max();
    for (unsigned k = 0; k < 3; ++k)
        if (time_[k] != off) next = std::min(next, due(k, now));
    if (next == duration::max()) {
        node_.cancel();
        return;
    }
    access::schedule_check(*wheel_, node_, next, now, rearm);  // sooner if a mark could age out first
}

template <class Wheel>
void basic_idle_watch<Wheel>::arm_or_stop(duration now, bool rearm) {
    try {
        arm_for(now, rearm);
    } catch (...) {
        running_ = false;
        ++generation_;
        throw;
    }
}

template <class Wheel>
void basic_idle_watch<Wheel>::count(unsigned kind) noexcept {
    if (stats_ == nullptr) return;
    if (kind == 0)
        ++stats_->reader_idle;
    else if (kind == 1)
        ++stats_->writer_idle;
    else
        ++stats_->all_idle;
}

template <class Wheel>
void basic_idle_watch<Wheel>::check() {
    if (!running_) return;
    const duration now = access::wake_elapsed(*wheel_);
    settle();  // marks of closed epochs become times once, not at every due() below
    detail::destruction_guard guard(destruction_);
    const std::uint64_t generation = generation_;
    for (unsigned k = 0; k < 3; ++k) {
        if (time_[k] == off || now < due(k, now)) continue;
        // Strictly later than the report: activity after a report is stamped after the
        // wake-up that ran it, even at the same clock reading (see on_wake).
        const bool first = last_activity(k, now) > last_report_[k];
        last_report_[k] = now;
        count(k);
        handler_(static_cast<idle_kind>(k), first);
        if (guard.destroyed()) return;         // the handler closed the session
        if (generation != generation_) break;  // it stopped or restarted the watch
    }
    if (!running_ || generation != generation_) return;
    // Re-arming our own entry never counts against max_pending; only a stopped wheel
    // refuses it, and then the watch ends with the wheel (arm_or_stop; nobody to tell).
    try {
        arm_or_stop(now, /*rearm=*/true);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the watch has stopped, as documented
    }
}

}  // namespace idlewheel

#endif
