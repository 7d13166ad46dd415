// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_IMPL_TCP_STREAM_HPP
#define IDLEWHEEL_BEAST_IMPL_TCP_STREAM_HPP

// The bodies of idlewheel/beast/tcp_stream.hpp.

#include <algorithm>
#include <initializer_list>

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

// Beast's rule at the start of an operation: its deadline is its direction's expiry as it is
// now (`timed`: reading or writing; a connect's is the write expiry). One that has passed
// closes the socket and fails the operation with error::timeout (the caller posts it); one
// still to come makes sure the node is due no later than it: when the node already is, a
// compare and a store.
template <class Wheel>
bool basic_tcp_stream<Wheel>::begin(std::uint8_t ops, std::uint8_t timed) {
    assert((pending_ & ops) == 0 && "idlewheel::beast::tcp_stream: one read and one write at a time");
    const time_point deadline = timed == reading ? read_expiry_ : write_expiry_;
    if (deadline != time_point::max()) {
        if (deadline <= clock_type::now()) {
            close_socket();
            return false;
        }
        arm(deadline, /*rearm=*/node_.pending());
        timed_ = static_cast<std::uint8_t>(timed_ | timed);
    }
    pending_ = static_cast<std::uint8_t>(pending_ | ops);
    return true;
}

// The operation completed (or was aborted): it is no longer pending, and if its deadline
// fired while it was, its result is error::timeout (Beast reports it even over a success that
// completed in the same turn of the io_context). While the other direction's operation is
// pending the node stays where it is (lazy: if it comes due with nothing left to time, it
// re-arms for what is left or not at all); when none is left it leaves the wheel, so that a
// stream with no operation pending has nothing in the wheel and may be destroyed on any thread
// (a session whose last reference a listener's thread drops, as in Beast's examples).
template <class Wheel>
void basic_tcp_stream<Wheel>::finish(std::uint8_t ops, boost::system::error_code& ec) noexcept {
    pending_ = static_cast<std::uint8_t>(pending_ & ~ops);
    timed_ = static_cast<std::uint8_t>(timed_ & ~ops);
    if (pending_ == 0) {
        if (node_.pending()) node_.cancel();
        armed_at_ = time_point::max();
    }
    if ((timed_out_ & ops) == 0) return;
    timed_out_ = static_cast<std::uint8_t>(timed_out_ & ~ops);
    ec = boost::beast::error::timeout;
}

// Makes sure the node is due no later than `t` (not never): a node already due at or before
// it stays where it is (when it comes due it re-arms for what is left). A first arm counts
// against max_pending; a re-arm (the node is in the wheel, or just fired) never does, as for
// the liveness objects.
template <class Wheel>
void basic_tcp_stream<Wheel>::arm(time_point t, bool rearm) {
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

// The node came due: for the earliest deadline of the pending operations, or for one that has
// since completed (then re-arm for the earliest left, if any). A deadline that has passed
// closes the socket, as Beast's timeout handler does: every pending operation ends, those
// whose deadline passed report error::timeout (finish()), the other direction's what the
// socket says. Runs on the wheel's executor.
template <class Wheel>
void basic_tcp_stream<Wheel>::on_due() {
    armed_at_ = time_point::max();
    if (timed_ == 0) return;  // nothing to time: the next operation arms
    const time_point now = clock_type::now();
    std::uint8_t due = 0;
    time_point next = time_point::max();
    for (const std::uint8_t direction : {reading, writing}) {
        if ((timed_ & direction) == 0) continue;
        const time_point deadline = direction == reading ? read_expiry_ : write_expiry_;
        if (deadline <= now)
            due = static_cast<std::uint8_t>(due | direction);
        else
            next = (std::min)(next, deadline);
    }
    if (due != 0) {
        timed_out_ = static_cast<std::uint8_t>(timed_out_ | due);
        timed_ = static_cast<std::uint8_t>(timed_ & ~due);
        close_socket();  // the pending operations complete with operation_aborted: finish() says which timed out
    }
    // The other direction's operation, if one was pending with a later deadline, completes
    // with operation_aborted from the close; until it has, its deadline is still watched (as
    // Beast's timer is until the operation cancels it).
    if (next == time_point::max()) return;
    try {
        arm(next, /*rearm=*/true);
    } catch (const system_error&) {
        // The wheel was stopped (by a callback of this batch): it watches nothing more, and
        // an exception from here would only leave the io_context's run().
    }
}

}  // namespace idlewheel::beast

#endif
