// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_IMPL_TCP_STREAM_HPP
#define IDLEWHEEL_BEAST_IMPL_TCP_STREAM_HPP

// The bodies of idlewheel/beast/tcp_stream.hpp.

#include <algorithm>

namespace idlewheel::beast {

template <class Wheel>
Wheel& basic_tcp_stream<Wheel>::wheel_of(const executor_type& ex) {
    using service = detail::wheel_service<Wheel>;
    net::execution_context& context = net::query(ex, net::execution::context);
    if (net::has_service<service>(context)) {
        service& found = net::use_service<service>(context);
        if (found.pool != nullptr) {
            // A pool's wheels are basic_wheel_timer<Clock> (any_io_executor): only such a Wheel has one.
            if constexpr (std::is_same_v<Wheel, typename service::pool_type::wheel_type>)
                if (auto* shard = found.pool->find(ex)) return shard->wheel();
            throw std::logic_error(
                "idlewheel::beast::tcp_stream: a wheel_pool is registered for this io_context, but the stream's "
                "executor is not one of its shards' strands: build the socket on pool.next().get_executor() (where "
                "Beast's examples call net::make_strand(ioc)), or pass the wheel to the constructor");
        }
        if (found.wheel != nullptr) return *found.wheel;
    }
    throw std::logic_error(
        "idlewheel::beast::tcp_stream: no wheel is registered for the stream's execution context: call "
        "idlewheel::beast::use_wheel(ioc, wheel) (or use_wheel_pool(ioc, pool)) at set-up, or pass the wheel to "
        "the constructor");
}

// Beast's rule at the start of an operation: an expiry that has passed closes the socket and
// fails the operation with error::timeout (the caller posts it); one still to come makes sure
// the node is due no later than it.
template <class Wheel>
bool basic_tcp_stream<Wheel>::begin(std::uint8_t ops) {
    assert((pending_ & ops) == 0 && "idlewheel::beast::tcp_stream: one read and one write at a time");
    if (expiry_ != time_point::max()) {
        if (expiry_ <= clock_type::now()) {
            close_socket();
            return false;
        }
        arm(expiry_, /*rearm=*/node_.pending());
    }
    pending_ = static_cast<std::uint8_t>(pending_ | ops);
    return true;
}

// The operation completed (or was aborted): it is no longer pending, and if the deadline
// fired while it was, its result is error::timeout (Beast reports it even over a success
// that completed in the same turn of the io_context).
template <class Wheel>
void basic_tcp_stream<Wheel>::finish(std::uint8_t ops, boost::system::error_code& ec) noexcept {
    pending_ = static_cast<std::uint8_t>(pending_ & ~ops);
    if ((timed_out_ & ops) == 0) return;
    timed_out_ = static_cast<std::uint8_t>(timed_out_ & ~ops);
    ec = boost::beast::error::timeout;
}

// Makes sure the node is due no later than `t`: a node already due at or before it stays
// where it is (when it comes due it re-arms for what is left). A first arm counts against
// max_pending; a re-arm (an operation is running) never does, as for the liveness objects.
template <class Wheel>
void basic_tcp_stream<Wheel>::arm(time_point t, bool rearm) {
    if (t == time_point::max()) {
        node_.cancel();
        return;
    }
    if (node_.pending() && armed_at_ <= t) return;
    // The tick that begins at or after `t` (never early), exact over the whole clock range,
    // and never one that has begun (a time that has passed is due at the next tick), as
    // wheel_timer::schedule_at() computes it.
    const std::uint64_t units = idlewheel::detail::units_after(t, wheel_->time_of(0));
    const auto tick = (std::max)(idlewheel::detail::ceil_div(units, static_cast<std::uint64_t>(wheel_->tick().count())),
                                 wheel_->current_tick() + 1);
    idlewheel::detail::liveness_access<Wheel>::schedule_own_tick(*wheel_, node_, tick, rearm);
    armed_at_ = t;
}

// The node came due: the deadline of the pending operations, or an earlier one that was
// moved later since (re-arm for the remainder). Runs on the wheel's executor.
template <class Wheel>
void basic_tcp_stream<Wheel>::on_due() {
    armed_at_ = time_point::max();
    if (pending_ == 0 || expiry_ == time_point::max()) return;  // nothing to time: the next operation arms
    if (expiry_ > clock_type::now()) {
        try {
            arm(expiry_, /*rearm=*/true);
        } catch (const system_error&) {
            // The wheel was stopped (by a callback of this batch): it watches nothing more, and
            // an exception from here would only leave the io_context's run().
        }
        return;
    }
    timed_out_ = static_cast<std::uint8_t>(timed_out_ | pending_);
    close_socket();  // the pending operations complete with operation_aborted: finish() says timeout
}

}  // namespace idlewheel::beast

#endif
