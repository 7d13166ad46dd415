// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IMPL_SESSION_LIVENESS_HPP
#define IDLEWHEEL_IMPL_SESSION_LIVENESS_HPP

#include <idlewheel/core/activity_epochs.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/core/liveness_rules.hpp>
#include <idlewheel/detail/jitter.hpp>
#include <idlewheel/detail/liveness_access.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace idlewheel {

// ---- basic_session_liveness_config ----------------------------------------------------------

template <class Wheel>
basic_session_liveness_config<Wheel>::basic_session_liveness_config(Wheel& wheel, const session_liveness_options& options,
                                                                    bound_handler handler, liveness_stats* stats)
    : entry_table{&session_type::act}, wheel_(&wheel), handler_(handler), stats_(stats), options_(options) {
    const duration tick = wheel.tick();
    unit_ = tick.count() % 16 == 0 ? tick / 16 : tick;
    if (options.ping_interval > std::chrono::nanoseconds::zero() &&
        options.pong_timeout <= std::chrono::nanoseconds::zero())
        throw std::invalid_argument("idlewheel::session_liveness: pong_timeout must be > 0 when ping_interval is set");
    handshake_ = units(options.handshake_timeout);
    idle_ = units(options.idle_timeout);
    idle_in_handshake_ = options.idle_in_handshake && idle_ != 0;
    interval_ = units(options.ping_interval);
    pong_ = units(options.pong_timeout);
    jitter_ = units(options.jitter);
    close_ = units(options.close_timeout);
    if (interval_ + jitter_ + pong_ >= limit)
        throw std::invalid_argument(
            "idlewheel::session_liveness: ping_interval + jitter + pong_timeout is too long for the tick");
}

template <class Wheel>
std::uint32_t basic_session_liveness_config<Wheel>::units(std::chrono::nanoseconds t) const {
    const auto d = detail::saturating_ceil<duration>(t);
    if (d <= duration::zero()) return 0;
    const std::uint64_t u =
        detail::ceil_div(static_cast<std::uint64_t>(d.count()), static_cast<std::uint64_t>(unit_.count()));
    if (u >= limit)
        throw std::invalid_argument("idlewheel::session_liveness: a time is too long for the wheel's tick");
    return static_cast<std::uint32_t>(u);
}

// ---- basic_session_liveness -----------------------------------------------------------------

template <class Wheel>
void basic_session_liveness<Wheel>::start_handshake() {
    const duration now = access::elapsed_now(wheel());
    reset(phase::handshake);
    if (config().handshake_ != 0)
        deadline_ = static_cast<std::uint32_t>(rules().phase_deadline(detail::liveness_phase::handshake, ceil_units(now)));
    if (config().idle_in_handshake_) read_ = time31(ceil_units(now));
    arm_first(now);
}

template <class Wheel>
bool basic_session_liveness<Wheel>::handshake_done() {
    if (phase_ != phase::handshake) return false;
    start();
    return true;
}

template <class Wheel>
void basic_session_liveness<Wheel>::start() {
    const duration now = access::elapsed_now(wheel());
    reset(phase::open);
    read_ = heard_ = time31(ceil_units(now));
    arm_first(now);
}

template <class Wheel>
bool basic_session_liveness<Wheel>::start_close() {
    if (phase_ != phase::open) return false;
    enter_closing(access::elapsed_now(wheel()));
    return true;
}

template <class Wheel>
void basic_session_liveness<Wheel>::on_peer_close() {
    flags_ |= peer_closed;
    if (phase_ == phase::open) enter_closing(access::elapsed_now(wheel()));
}

template <class Wheel>
void basic_session_liveness<Wheel>::on_write_progress() noexcept {
    if (phase_ != phase::closing || config().close_ == 0) return;
    deadline_ = static_cast<std::uint32_t>(
        rules().phase_deadline(detail::liveness_phase::closing, ceil_units(access::elapsed_now(wheel()))));
}

template <class Wheel>
void basic_session_liveness<Wheel>::stop() noexcept {
    if (phase_ != phase::ended) phase_ = phase::stopped;
    cancel_entry();
}

template <class Wheel>
void basic_session_liveness<Wheel>::rebind_config(const config_type& next) {
    // Its entry is linked into this wheel: another wheel's config would have it fire there.
    if (next.wheel_ != config().wheel_)
        throw std::invalid_argument("idlewheel::member_liveness::rebind: the config is on another wheel");
    access::check_executor(wheel());
    cancel_entry();
    table_ = &next;
    reset(phase::stopped);
}

template <class Wheel>
typename Wheel::time_point basic_session_liveness<Wheel>::expiry() const noexcept {
    return detail::liveness_access<Wheel>::expiry(wheel(), static_cast<const detail::shared_entry&>(*this));
}

template <class Wheel>
void basic_session_liveness<Wheel>::set_ping_in_flight(bool on) noexcept {
    flags_ = static_cast<std::uint8_t>(on ? flags_ | ping_flight : flags_ & ~ping_flight);
}

template <class Wheel>
auto basic_session_liveness<Wheel>::jitter_offset() const noexcept -> duration {
    return config().unit_ * static_cast<typename duration::rep>(offset_units());
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::ceil_units(duration t) const noexcept {
    if (t <= duration::zero()) return 0;
    return detail::ceil_div(static_cast<std::uint64_t>(t.count()),
                            static_cast<std::uint64_t>(config().unit_.count()));
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::floor_units(duration t) const noexcept {
    if (t <= duration::zero()) return 0;
    return static_cast<std::uint64_t>(t.count()) / static_cast<std::uint64_t>(config().unit_.count());
}

template <class Wheel>
auto basic_session_liveness<Wheel>::at_unit(std::uint64_t u) const noexcept -> duration {
    return config().unit_ * static_cast<typename duration::rep>(u);
}

template <class Wheel>
std::uint32_t basic_session_liveness<Wheel>::time31(std::uint64_t u) noexcept {
    return static_cast<std::uint32_t>(u) & low31;
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::full31(std::uint32_t v, std::uint64_t ref) noexcept {
    const std::uint32_t diff = (v - static_cast<std::uint32_t>(ref)) & low31;
    return diff < (low31 >> 1) + 1U ? ref + diff : ref - ((low31 + 1U) - diff);
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::full32(std::uint32_t v, std::uint64_t ref) noexcept {
    const auto diff = static_cast<std::int32_t>(v - static_cast<std::uint32_t>(ref));
    return diff >= 0 ? ref + static_cast<std::uint64_t>(diff)
                     : ref - static_cast<std::uint64_t>(-static_cast<std::int64_t>(diff));
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::offset_units() const noexcept {
    const std::uint32_t spread = config().jitter_;
    if (spread == 0) return 0;
    std::uint64_t state = reinterpret_cast<std::uintptr_t>(this);
    return detail::splitmix64(state) % (std::uint64_t{spread} + 1U);
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::settle(std::uint32_t& field, duration now, std::uint64_t now_u) const noexcept {
    if (!detail::activity_epochs::is_compact_mark(field)) return full31(field, now_u);
    const auto& epochs = access::epochs(wheel());
    const std::int64_t mark = epochs.expand(field);
    const std::uint64_t u = ceil_units(duration(epochs.resolve(mark, now.count())));
    if (epochs.closed(mark)) field = time31(u);
    return u;
}

template <class Wheel>
void basic_session_liveness<Wheel>::reset(phase p) noexcept {
    phase_ = p;
    flags_ = 0;
    verdict_ = 0;
    read_ = heard_ = deadline_ = 0;
}

template <class Wheel>
void basic_session_liveness<Wheel>::enter_closing(duration now) {
    phase_ = phase::closing;
    flags_ &= static_cast<std::uint8_t>(~awaiting);
    if (config().close_ == 0) {
        cancel_entry();
        return;
    }
    deadline_ = static_cast<std::uint32_t>(rules().phase_deadline(detail::liveness_phase::closing, ceil_units(now)));
    arm(now, full32(deadline_, floor_units(now)));
}

template <class Wheel>
void basic_session_liveness<Wheel>::arm_first(duration now) {
    const std::uint64_t at = next_check(now);
    if (at == never) {
        cancel_entry();
        return;
    }
    try {
        access::schedule_check(wheel(), static_cast<shared_entry&>(*this), at_unit(at), now, /*rearm=*/linked());
    } catch (...) {
        phase_ = phase::stopped;
        throw;
    }
}

template <class Wheel>
void basic_session_liveness<Wheel>::arm(duration now, std::uint64_t at_u) noexcept {
    try {
        access::schedule_check(wheel(), static_cast<shared_entry&>(*this), at_unit(at_u), now, /*rearm=*/true);
    } catch (...) {
        phase_ = phase::stopped;
    }
}

template <class Wheel>
auto basic_session_liveness<Wheel>::rules() const noexcept -> detail::liveness_rules<std::uint64_t> {
    const config_type& c = config();
    const auto on = [](std::uint32_t u) { return u == 0 ? never : std::uint64_t{u}; };
    detail::liveness_rules<std::uint64_t> r;
    r.handshake = on(c.handshake_);
    r.idle = on(c.idle_);
    if (c.interval_ != 0) r.ping_after = c.interval_ + offset_units();
    r.pong = on(c.pong_);
    r.close = on(c.close_);
    r.idle_in_handshake = c.idle_in_handshake_;
    return r;
}

template <class Wheel>
auto basic_session_liveness<Wheel>::look(duration now, std::uint64_t now_u) noexcept -> detail::liveness_look<std::uint64_t> {
    const config_type& c = config();
    detail::liveness_look<std::uint64_t> l;
    l.now = now_u;
    switch (phase_) {
        case phase::handshake:
            if (c.handshake_ != 0) l.deadline = full32(deadline_, now_u);
            if (c.idle_in_handshake_) l.read = settle(read_, now, now_u);
            break;
        case phase::closing:
            if (c.close_ != 0) l.deadline = full32(deadline_, now_u);
            break;
        case phase::open:
            if (c.idle_ != 0) l.read = settle(read_, now, now_u);
            if (c.interval_ != 0) {
                l.awaiting = (flags_ & awaiting) != 0;
                if (l.awaiting) l.deadline = full32(deadline_, now_u);
                l.heard = settle(heard_, now, now_u);  // while awaiting: the ping's time
            }
            break;
        default: break;
    }
    return l;
}

template <class Wheel>
std::uint64_t basic_session_liveness<Wheel>::next_check(duration now) noexcept {
    const std::uint64_t now_u = floor_units(now);
    const auto d = detail::decide(core_phase(), rules(), look(now, now_u));
    return d.step == detail::liveness_step::wait ? d.next : now_u;  // something due: look at once
}

template <class Wheel>
void basic_session_liveness<Wheel>::act(timer_entry& e, detail::entry_action a) {
    auto& self = static_cast<basic_session_liveness&>(e);
    if (a == detail::entry_action::fire)
        self.check();
    else if (self.phase_ != phase::ended)
        self.phase_ = phase::stopped;  // the wheel stopped or died: the session ends with it
}

template <class Wheel>
void basic_session_liveness<Wheel>::conclude(liveness_event e, std::uint64_t liveness_stats::*counter) {
    verdict_ = static_cast<std::uint8_t>(static_cast<unsigned>(e) + 1U);
    phase_ = phase::ended;
    flags_ &= static_cast<std::uint8_t>(~awaiting);
    if (config().stats_ != nullptr) ++(config().stats_->*counter);
    notify(e);
}

template <class Wheel>
void basic_session_liveness<Wheel>::notify(liveness_event e) {
    config().handler_(*this, e);  // last: it may destroy *this
}

template <class Wheel>
void basic_session_liveness<Wheel>::idle_verdict(duration now) {
    enter_closing(now);  // arms the close deadline (a stopped wheel leaves it stopped)
    verdict_ = static_cast<std::uint8_t>(static_cast<unsigned>(liveness_event::idle) + 1U);
    if (config().stats_ != nullptr) ++config().stats_->reader_idle;
    notify(liveness_event::idle);
}

template <class Wheel>
void basic_session_liveness<Wheel>::check() {
    const duration now = access::wake_elapsed(wheel());
    const std::uint64_t now_u = floor_units(now);
    // A ping is answered by anything heard after it (a mark: it was stored after the ping).
    if (phase_ == phase::open && (flags_ & awaiting) != 0 && detail::activity_epochs::is_compact_mark(heard_))
        flags_ &= static_cast<std::uint8_t>(~awaiting);
    const detail::liveness_rules<std::uint64_t> r = rules();
    const auto d = detail::decide(core_phase(), r, look(now, now_u));
    using step = detail::liveness_step;
    switch (d.step) {
        case step::wait:  // an early look (the mark horizon), or activity since: not yet
            if (d.next != never) arm(now, d.next);
            return;
        case step::send_ping: {
            flags_ |= awaiting;
            const std::uint64_t sent = ceil_units(now);
            heard_ = time31(sent);  // any inbound from now on stores a mark: the answer
            deadline_ = static_cast<std::uint32_t>(r.pong_deadline(sent));
            arm(now, next_check(now));  // before the handler, which may stop or destroy us
            if (config().stats_ != nullptr) ++config().stats_->pings_sent;
            return notify(liveness_event::send_ping);
        }
        case step::idle: return idle_verdict(now);
        case step::dead_peer:
            cancel_entry();
            return conclude(liveness_event::dead_peer, &liveness_stats::dead_peers);
        case step::handshake_timeout:
            return conclude(liveness_event::handshake_timeout, &liveness_stats::handshake_timeouts);
        case step::close_timeout: return conclude(liveness_event::close_timeout, &liveness_stats::close_timeouts);
    }
}

}  // namespace idlewheel

#endif
