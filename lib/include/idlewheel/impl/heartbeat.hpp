// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IMPL_HEARTBEAT_HPP
#define IDLEWHEEL_IMPL_HEARTBEAT_HPP

#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/detail/jitter.hpp>
#include <idlewheel/detail/liveness_access.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace idlewheel {

template <class Wheel>
void basic_heartbeat<Wheel>::start() {
    interval_ = next_interval_;
    pong_timeout_ = next_pong_timeout_;
    jitter_ = next_jitter_;
    if (interval_ == duration::zero()) {
        stop();
        return;
    }
    const bool was_running = state_ == state::waiting || state_ == state::awaiting_pong;  // its own entry moves
    state_ = state::waiting;
    const duration now = access::elapsed_now(*wheel_);
    heard_ = now.count();
    const auto spread = static_cast<std::uint64_t>(jitter_.count());
    offset_ = spread == 0
                  ? duration::zero()
                  : duration(static_cast<typename duration::rep>(detail::next_jitter_bits() % (spread + 1)));
    try {
        access::schedule_check(*wheel_, node_, after(now, interval_, offset_), now, /*rearm=*/was_running);
    } catch (...) {
        state_ = state::stopped;
        throw;
    }
}

template <class Wheel>
void basic_heartbeat<Wheel>::stop() noexcept {
    state_ = state::stopped;
    node_.cancel();
}

template <class Wheel>
void basic_heartbeat<Wheel>::set_options(const heartbeat_options& o) {
    if (o.ping_interval > decltype(o.ping_interval)::zero() && o.pong_timeout <= decltype(o.pong_timeout)::zero())
        throw std::invalid_argument("idlewheel::heartbeat: pong_timeout must be > 0 when ping_interval is set");
    next_interval_ = detail::saturating_ceil<duration>(o.ping_interval);
    next_pong_timeout_ = detail::saturating_ceil<duration>(o.pong_timeout);
    next_jitter_ = detail::saturating_ceil<duration>(o.jitter);
}

template <class Wheel>
auto basic_heartbeat<Wheel>::after(duration t, duration a, duration b) noexcept -> duration {
    return detail::saturating_add(detail::saturating_add(t, a), b);
}

template <class Wheel>
auto basic_heartbeat<Wheel>::settle_heard(duration now) noexcept -> duration {
    heard_ = access::settled(*wheel_, heard_);
    return duration(access::resolve(*wheel_, heard_, now.count()));
}

template <class Wheel>
void basic_heartbeat<Wheel>::arm(duration at, duration now) noexcept {
    try {
        access::schedule_check(*wheel_, node_, at, now, /*rearm=*/true);
    } catch (...) {
        state_ = state::stopped;
    }
}

template <class Wheel>
auto basic_heartbeat<Wheel>::next_pong_check(duration now) const noexcept -> duration {
    return std::min(detail::saturating_add(ping_sent_, pong_timeout_), after(now, interval_, offset_));
}

template <class Wheel>
void basic_heartbeat<Wheel>::fire() {
    const duration now = access::wake_elapsed(*wheel_);
    const duration last = settle_heard(now);
    if (state_ == state::waiting) {
        if (now < after(last, interval_, offset_)) {
            arm(after(last, interval_, offset_), now);
            return;
        }
        state_ = state::awaiting_pong;
        ping_sent_ = now;
        arm(next_pong_check(now), now);  // before the handler, which may stop, restart or destroy us
        if (stats_ != nullptr) ++stats_->pings_sent;
        handler_(heartbeat_event::send_ping);
        return;
    }
    if (state_ == state::awaiting_pong) {
        // Activity that resolves to ping_sent_ or later came after the ping: anything that
        // resolved to the ping's own wake-up or earlier would have postponed the ping.
        if (last >= ping_sent_) {
            state_ = state::waiting;  // answered (a pong or anything else)
            arm(after(last, interval_, offset_), now);
            return;
        }
        if (now < detail::saturating_add(ping_sent_, pong_timeout_)) {  // not answered yet, but there is time
            arm(next_pong_check(now), now);
            return;
        }
        state_ = state::dead;
        if (stats_ != nullptr) ++stats_->dead_peers;
        handler_(heartbeat_event::dead_peer);
    }
}

}  // namespace idlewheel

#endif
