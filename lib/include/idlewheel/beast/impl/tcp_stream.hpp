// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_IMPL_TCP_STREAM_HPP
#define IDLEWHEEL_BEAST_IMPL_TCP_STREAM_HPP

// The bodies of idlewheel/beast/tcp_stream.hpp.

#include <algorithm>
#include <initializer_list>

namespace idlewheel::beast {

template <class Wheel, class Executor>
Wheel& basic_tcp_stream<Wheel, Executor>::wheel_of(const executor_type& ex) {
    using service = detail::wheel_service<Wheel>;
    net::execution_context& context = net::query(ex, net::execution::context);
    if (net::has_service<service>(context)) {
        service& found = net::use_service<service>(context);
        if (found.pool != nullptr) {
            // A pool's wheels are basic_wheel_timer<Clock> (any_io_executor): only such a Wheel has one.
            if constexpr (std::is_same_v<Wheel, typename service::pool_type::wheel_type>)
                if (auto* shard = found.pool->find(ex)) return shard->wheel();
            detail::no_wheel_found(
                "idlewheel::beast::tcp_stream: a wheel_pool is registered for this io_context, but the stream's "
                "executor is not one of its shards' strands: accept or build the socket on a shard's executor, "
                "pool.next().get_executor() (where Beast's examples call net::make_strand(ioc)); a coroutine "
                "session accepts on it and is co_spawned on it (docs/beast_coroutines.md); or pass "
                "the wheel to the constructor");
        }
        if (found.wheel != nullptr) return *found.wheel;
    }
    detail::no_wheel_found(
        "idlewheel::beast::tcp_stream: no wheel is registered for the stream's execution context: call "
        "idlewheel::beast::use_wheel(ioc, wheel) (or use_wheel_pool(ioc, pool)) at set-up, or pass the wheel to "
        "the constructor");
}

// Beast's rule at the start of an operation: its deadline is its direction's expiry as it is
// now (`timed`: reading or writing; a connect's is the write expiry), which makes sure the
// node is due no later than it: when the node already is, a compare and a store. False if the
// operation must not start (the caller completes it with error::timeout, as if by post).
template <class Wheel, class Executor>
bool basic_tcp_stream<Wheel, Executor>::begin(std::uint8_t ops, std::uint8_t timed) {
    assert((pending_ & ops) == 0 && "idlewheel::beast::tcp_stream: one read and one write at a time");
    if ((ws_.flags & ws_timed_out) != 0) {  // the WebSocket timeouts fired with nothing pending: this one reports it
        ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_timed_out);
        return false;
    }
    const time_point deadline = timed == reading ? read_expiry_ : write_expiry_;
    if (deadline != time_point::max()) {
        if constexpr (detail::late_transfer_fails) {
            // Beast >= 1.86: a read or write started at or after its deadline closes the
            // socket and completes with error::timeout, as if by post (a connect is started).
            if (ops == timed && deadline <= clock_type::now()) {
                close_socket();  // a pending operation of the other direction ends (operation_aborted)
                if (ws_watching()) ws_.phase = ws_phase::ended;  // Beast's stream fails on its next layer's error
                if ((pending_ & writing) == 0) ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_ping_write);
                if (pending_ == 0) {
                    if (node_.pending()) node_.cancel();
                    armed_at_ = time_point::max();
                }
                return false;
            }
        }
        // Beast < 1.86: a deadline that has passed is armed too (due at the next tick), as
        // Beast's timer wait on an expiry already past: an operation that completes at once
        // (a write with room in the socket's buffer, a read with data waiting) goes through,
        // as with Beast; one still pending at that tick times out.
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
template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::finish(std::uint8_t ops, boost::system::error_code& ec,
                                               std::size_t bytes) noexcept {
    if ((ops & own_write) != 0) ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_ping_write);
    ops = static_cast<std::uint8_t>(ops & (reading | writing));
    pending_ = static_cast<std::uint8_t>(pending_ & ~ops);
    timed_ = static_cast<std::uint8_t>(timed_ & ~ops);
    if (ws_watching()) {
        if (ec) {
            ws_.phase = ws_phase::ended;  // Beast's stream fails on any error of its next layer
        } else if (ws_.phase == ws_phase::handshake) {
            if ((ops & writing) != 0) ws_.flags = static_cast<std::uint8_t>(ws_.flags | ws_write_seen);
            if (bytes != 0 && (ops & reading) != 0) ws_.flags = static_cast<std::uint8_t>(ws_.flags | ws_read_seen);
        } else if (bytes != 0 && (ops & reading) != 0) {
            // A byte from the peer (a frame, a pong, a close): Beast's reset_idle. A store.
            ws_.activity = idlewheel::detail::liveness_access<Wheel>::activity_mark(*wheel_);
            ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_awaiting);
        }
    }
    // With nothing pending the node leaves the wheel, so that the stream may be destroyed on
    // any thread (Beast's listener may drop a session's last reference). While the WebSocket
    // timeouts watch an open or closing stream it stays (a WebSocket keeps a read pending, and
    // Beast's timer runs between operations too); during the handshake it leaves as well
    // (Beast may end a handshake itself, a refused upgrade, with nothing failing here) and the
    // next operation puts it back.
    if (pending_ == 0 && (!ws_watching() || ws_.phase == ws_phase::handshake)) {
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
template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::arm(time_point t, bool rearm) {
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
template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::on_due() {
    armed_at_ = time_point::max();
    if (timed_ == 0 && !ws_watching()) return;  // nothing to time: the next operation arms
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
    if (ws_watching()) next = (std::min)(next, ws_check(now));
    if (next == time_point::max()) return;
    try {
        arm(next, /*rearm=*/true);
    } catch (const system_error&) {
        // The wheel was stopped (by a callback of this batch): it watches nothing more, and
        // an exception from here would only leave the io_context's run().
    }
}

// The WebSocket timeouts (idlewheel/beast/websocket_timeout.hpp), Beast's rules
// (boost/beast/websocket/impl/stream_impl.hpp, update_timer() and timeout_handler) on this
// stream's node: the handshake deadline from set_option(); once open, with keep-alive pings,
// a ping after idle/2 without a byte from the peer and a drop after idle/2 more without one
// (without pings, a drop after idle); while closing, the handshake timeout again. A drop is
// Beast's time_out(): the socket closed, the pending operations ending with
// beast::error::timeout (or the next one, if none is pending).

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::ws_start(void* ws, const detail::websocket_binding* fn, duration handshake,
                                                 duration idle, bool pings) {
    const duration now = elapsed(clock_type::now());
    const bool reopen = ws_.phase == ws_phase::open || ws_.phase == ws_phase::closing;
    ws_.ws = ws;
    ws_.fn = fn;
    ws_.handshake = handshake;
    ws_.idle = idle;
    ws_.flags = static_cast<std::uint8_t>(pings ? ws_pings : 0);
    ws_.verdict = 0;
    if (reopen) {  // set again once open: the new times apply from now
        ws_.activity = idlewheel::detail::liveness_access<Wheel>::activity_mark(*wheel_);
        if (ws_.phase == ws_phase::closing) ws_.since = now;
        if (const time_point next = ws_check(at_elapsed(now)); next != time_point::max())
            arm(next, /*rearm=*/node_.pending());
    } else {
        // The handshake's deadline enters the wheel with its first operation (ws_on_start):
        // a stream with nothing pending stays out of the wheel.
        ws_.phase = ws_phase::handshake;
        ws_.since = now;
    }
}

// An operation starts while the timeouts watch: the handshake is over once Beast's status is
// open (the first read or write after it), and a write on an open stream that Beast no longer
// reports open begins the close (Beast sets closing before it writes the close frame, ours or
// the answer to the peer's). A write started inside ws.async_ping(), inside the completion of
// the ping's own write, or first after a ping that had to wait for its turn, is the ping's.
template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::ws_on_start(std::uint8_t direction, std::uint8_t& ops) {
    if (direction == writing && (ws_.flags & (ws_pinging | ws_ping_queued)) != 0) {
        ops = static_cast<std::uint8_t>(ops | own_write);
        ws_.flags = static_cast<std::uint8_t>((ws_.flags | ws_ping_write) & ~ws_ping_queued);
    }
    const bool open = ws_.fn->is_open(ws_.ws);
    if (ws_.phase == ws_phase::handshake) {
        // Beast reports no closing status: a write on a stream not open, once the handshake
        // has read and written (both roles do both), is a close frame after a handshake that
        // no operation saw end (a close at once after it).
        constexpr auto both = static_cast<std::uint8_t>(ws_read_seen | ws_write_seen);
        if (open)
            ws_open_now(elapsed(clock_type::now()));
        else if (direction == writing && (ws_.flags & both) == both)
            ws_closing_now(elapsed(clock_type::now()));
        else if (ws_.handshake != duration::max())  // the handshake's deadline, back in the wheel if it left
            arm(at_elapsed(ws_rules().phase_deadline(ws_phase::handshake, ws_.since)), /*rearm=*/node_.pending());
    } else if (ws_.phase == ws_phase::open) {
        if (direction == writing && !open) ws_closing_now(elapsed(clock_type::now()));
    } else if (open) {  // closing, yet open: the guess above was a handshake write after all
        ws_open_now(elapsed(clock_type::now()));
    }
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::ws_open_now(duration now) {
    if (ws_.fn->beast_timeouts_on(ws_.ws)) {
#if IDLEWHEEL_CHECK_USAGE
        detail::beast_websocket_timeout_too();
#endif
    }
    ws_.phase = ws_phase::open;
    ws_.activity = now.count();  // the time itself (exact): the clock was read for this
    ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_awaiting);
    // The first look: idleness, or the ping, from now (the rules' answer on a fresh activity).
    idlewheel::detail::liveness_look<duration> look;
    look.now = look.read = look.heard = now;
    const auto first = idlewheel::detail::decide(ws_phase::open, ws_rules(), look);
    if (first.step == idlewheel::detail::liveness_step::wait && first.next == idlewheel::detail::never<duration>())
        return;
    arm(at_elapsed(first.step == idlewheel::detail::liveness_step::wait ? first.next : now), /*rearm=*/true);
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::ws_closing_now(duration now) {
    ws_.phase = ws_phase::closing;
    ws_.since = now;
    if (ws_.handshake == duration::max()) return;
    arm(at_elapsed(ws_rules().phase_deadline(ws_phase::closing, now)), /*rearm=*/true);
}

template <class Wheel, class Executor>
auto basic_tcp_stream<Wheel, Executor>::ws_rules() const noexcept -> idlewheel::detail::liveness_rules<duration> {
    idlewheel::detail::liveness_rules<duration> r;  // duration::max() is the rules' never: off
    r.handshake = r.close = ws_.handshake;
    if (ws_.idle != duration::max()) {
        if ((ws_.flags & ws_pings) != 0)
            r.ping_after = r.pong = ws_.idle / 2;
        else
            r.idle = ws_.idle;
    }
    return r;
}

// The node came due with the timeouts watching: Beast's status moves the phase (the handshake
// is over once Beast reports open, the close has begun once it no longer does), then the
// rules decide (core/liveness_rules.hpp, as for session_liveness) on what this state
// resolves to: the last byte from the peer, the phase's start or the ping's time. Returns
// when to look again (time_point::max(): not at all); a look is never further than the
// activity marks can be resolved exactly (liveness_access::schedule_check's horizon).
template <class Wheel, class Executor>
auto basic_tcp_stream<Wheel, Executor>::ws_check(time_point now_tp) -> time_point {
    using access = idlewheel::detail::liveness_access<Wheel>;
    using step = idlewheel::detail::liveness_step;
    const duration now = elapsed(now_tp);
    const auto horizon = wheel_->tick() * static_cast<typename duration::rep>(
                                              idlewheel::detail::activity_epochs::max_mark_age());
    const auto at = [&](duration e) {
        if (e == idlewheel::detail::never<duration>()) return time_point::max();
        return at_elapsed((std::min)(e, idlewheel::detail::saturating_add(now, horizon)));
    };
    if (ws_.phase != ws_phase::handshake && !socket_.is_open()) {  // closed: Beast's teardown after a clean close, or the session
        ws_.phase = ws_phase::ended;
        return time_point::max();
    }
    if (ws_.phase == ws_phase::handshake && ws_.fn->is_open(ws_.ws))
        ws_open_now(now);
    else if (ws_.phase == ws_phase::open && !ws_.fn->is_open(ws_.ws))
        ws_closing_now(now);
    const idlewheel::detail::liveness_rules<duration> rules = ws_rules();
    idlewheel::detail::liveness_look<duration> look;
    look.now = now;
    if (ws_.phase == ws_phase::open) {
        // One activity: any byte from the peer is a message (Beast's reset_idle) and an answer.
        look.read = look.heard = duration(access::resolve(*wheel_, ws_.activity, now.count()));
        ws_.activity = access::settled(*wheel_, ws_.activity);
        if ((ws_.flags & ws_awaiting) != 0 && look.read >= ws_.since)  // a byte since the ping: answered
            ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_awaiting);
        look.awaiting = (ws_.flags & ws_awaiting) != 0;
        if (look.awaiting) {
            look.heard = ws_.since;
            look.deadline = rules.pong_deadline(ws_.since);
        }
    } else {
        look.deadline = rules.phase_deadline(ws_.phase, ws_.since);
    }
    auto decision = idlewheel::detail::decide(ws_.phase, rules, look);
    if (decision.step == step::send_ping) {
        ws_send_ping(now);
        look.awaiting = true;
        look.heard = now;
        look.deadline = rules.pong_deadline(now);
        decision = idlewheel::detail::decide(ws_.phase, rules, look);
        return at(decision.step == step::wait ? decision.next : now);  // due at once: the next tick
    }
    if (decision.step == step::wait) return at(decision.next);
    ws_time_out(static_cast<liveness_event>(static_cast<unsigned>(decision.step) - 1U));
    return time_point::max();
}

// Quiet for idle/2: Beast's idle ping. It is sent only when no write is pending on this stream
// (Beast then holds no write of its own: the ping writes at once, and this stream knows that
// write as the ping's); otherwise the answer is awaited all the same, as Beast's ping waits
// for the write in progress. Either way a byte from the peer within idle/2 keeps it.
template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::ws_send_ping(duration now) {
    ws_.flags = static_cast<std::uint8_t>(ws_.flags | ws_awaiting);
    ws_.since = now;
    if ((pending_ & writing) != 0 || (ws_.flags & (ws_ping_write | ws_ping_queued)) != 0) return;
    ws_.flags = static_cast<std::uint8_t>(ws_.flags | ws_pinging);
    try {
        ws_.fn->ping(ws_.ws);
    } catch (...) {
        ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_pinging);
        throw;
    }
    ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_pinging);
    // No write started inside async_ping: Beast queued the ping behind a write of its own;
    // the next write started is the ping's (Beast resumes it first).
    if ((ws_.flags & ws_ping_write) == 0) ws_.flags = static_cast<std::uint8_t>(ws_.flags | ws_ping_queued);
}

// Beast's time_out(): the verdict kept, the socket closed; the pending operations complete
// with beast::error::timeout (finish()), or, if none is pending, the next one started.
template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::ws_time_out(liveness_event why) noexcept {
    ws_.verdict = static_cast<std::uint8_t>(static_cast<unsigned>(why) + 1U);
    ws_.phase = ws_phase::ended;
    const auto directions = static_cast<std::uint8_t>(pending_ & (reading | writing));
    if (directions != 0)
        timed_out_ = static_cast<std::uint8_t>(timed_out_ | directions);
    else
        ws_.flags = static_cast<std::uint8_t>(ws_.flags | ws_timed_out);
    close_socket();
}

template <class Wheel, class Executor>
auto basic_tcp_stream<Wheel, Executor>::release_socket() -> socket_type {
    read_expiry_ = write_expiry_ = time_point::max();
    timed_ = 0;
    if (ws_watching()) ws_.phase = ws_phase::ended;
    node_.cancel();
    return std::move(socket_);
}

template <class Wheel, class Executor>
template <class Rep, class Period>
void basic_tcp_stream<Wheel, Executor>::expires_after(std::chrono::duration<Rep, Period> d) {
    const time_point now = clock_type::now();
    const auto delay = idlewheel::detail::saturating_ceil<duration>(d);
    expires_at(time_point(idlewheel::detail::saturating_add(now.time_since_epoch(), delay)));
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::expires_at(time_point t) noexcept {
    // As Beast's impl_type::reset(): with a read and a write (or a connect) pending there is
    // no direction left to apply the expiry to.
    assert(pending_ != (reading | writing) &&
           "idlewheel::beast::tcp_stream: expires_*() while a read and a write (or a connect) are both pending");
    if ((pending_ & reading) == 0) read_expiry_ = t;
    if ((pending_ & writing) == 0) write_expiry_ = t;
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::cancel() {
    node_.cancel();
    boost::system::error_code ignored;
    socket_.cancel(ignored);
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::close() {
    node_.cancel();
    close_socket();
}

template <class Wheel, class Executor>
template <class ConnectToken>
auto basic_tcp_stream<Wheel, Executor>::async_connect(const endpoint_type& ep, ConnectToken&& token) {
    return net::async_initiate<ConnectToken, void(boost::system::error_code)>(initiate_connect{this}, token, ep);
}

template <class Wheel, class Executor>
template <class EndpointSequence, class RangeConnectToken, std::enable_if_t<net::is_endpoint_sequence<EndpointSequence>::value, int>>
auto basic_tcp_stream<Wheel, Executor>::async_connect(const EndpointSequence& endpoints, RangeConnectToken&& token) {
    return net::async_initiate<RangeConnectToken, void(boost::system::error_code, endpoint_type)>(
        initiate_range_connect{this}, token, endpoints);
}

template <class Wheel, class Executor>
template <class Iterator, class IteratorConnectToken, std::enable_if_t<!net::is_endpoint_sequence<Iterator>::value, int>>
auto basic_tcp_stream<Wheel, Executor>::async_connect(Iterator begin, Iterator end, IteratorConnectToken&& token) {
    return net::async_initiate<IteratorConnectToken, void(boost::system::error_code, Iterator)>(
        initiate_iterator_connect{this}, token, begin, end);
}

template <class Wheel, class Executor>
template <class EndpointSequence, class ConnectCondition, class RangeConnectToken, std::enable_if_t<net::is_endpoint_sequence<EndpointSequence>::value, int>>
auto basic_tcp_stream<Wheel, Executor>::async_connect(const EndpointSequence& endpoints, ConnectCondition connect_condition, RangeConnectToken&& token) {
    return net::async_initiate<RangeConnectToken, void(boost::system::error_code, endpoint_type)>(
        initiate_range_connect{this}, token, endpoints, std::move(connect_condition));
}

template <class Wheel, class Executor>
template <class Iterator, class ConnectCondition, class IteratorConnectToken, std::enable_if_t<!net::is_endpoint_sequence<Iterator>::value, int>>
auto basic_tcp_stream<Wheel, Executor>::async_connect(Iterator begin, Iterator end, ConnectCondition connect_condition, IteratorConnectToken&& token) {
    return net::async_initiate<IteratorConnectToken, void(boost::system::error_code, Iterator)>(
        initiate_iterator_connect{this}, token, begin, end, std::move(connect_condition));
}

template <class Wheel, class Executor>
template <class MutableBufferSequence, class ReadToken>
auto basic_tcp_stream<Wheel, Executor>::async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return net::async_initiate<ReadToken, void(boost::system::error_code, std::size_t)>(initiate_read{this}, token,
                                                                                        buffers);
}

template <class Wheel, class Executor>
template <class ConstBufferSequence, class WriteToken>
auto basic_tcp_stream<Wheel, Executor>::async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return net::async_initiate<WriteToken, void(boost::system::error_code, std::size_t)>(initiate_write{this},
                                                                                         token, buffers);
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::teardown_begin() {
    pending_ = static_cast<std::uint8_t>(pending_ | tearing);
    if (!ws_watching()) return;
    if (ws_.phase != ws_phase::closing) ws_closing_now(elapsed(clock_type::now()));
    if (ws_.handshake != duration::max())
        arm(at_elapsed(ws_rules().phase_deadline(ws_phase::closing, ws_.since)), /*rearm=*/node_.pending());
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::teardown_done(bool completed) noexcept {
    pending_ = static_cast<std::uint8_t>(pending_ & ~tearing);
    if (completed && ws_watching()) ws_.phase = ws_phase::ended;
    if (pending_ == 0) {
        if (node_.pending()) node_.cancel();
        armed_at_ = time_point::max();
    }
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::before_move() noexcept {
#if IDLEWHEEL_CHECK_LIFETIME
    if (pending_ != 0) detail::moved_while_pending();
#endif
    node_.cancel();
    armed_at_ = time_point::max();
    read_expiry_ = write_expiry_ = time_point::max();
    timed_ = timed_out_ = 0;
    ws_ = ws_timeouts{};  // the WebSocket timeouts stay with the websocket::stream they were set on
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::abandon(std::uint8_t ops) noexcept {
    if ((ops & own_write) != 0) ws_.flags = static_cast<std::uint8_t>(ws_.flags & ~ws_ping_write);
    ops = static_cast<std::uint8_t>(ops & (reading | writing));
    pending_ = static_cast<std::uint8_t>(pending_ & ~ops);
    timed_ = static_cast<std::uint8_t>(timed_ & ~ops);
    timed_out_ = static_cast<std::uint8_t>(timed_out_ & ~ops);
}

template <class Wheel, class Executor>
bool basic_tcp_stream<Wheel, Executor>::wait_for_own_write(std::uint8_t ops) noexcept {
    if ((ops & own_write) != 0 || (ws_.flags & ws_ping_write) == 0) return false;
    close_socket();  // the ping's write ends at once (with operation_aborted)
    return true;
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::close_socket() noexcept {
    boost::system::error_code ignored;  // closing fails only if already closed
    socket_.close(ignored);
}

template <class Wheel, class Executor>
template <class Handler, class... More>
void basic_tcp_stream<Wheel, Executor>::complete_timed_out(Handler&& handler, More... more) {
    complete_posted(std::forward<Handler>(handler), boost::system::error_code(boost::beast::error::timeout),
                    more...);
}

template <class Wheel, class Executor>
template <class Handler, class... Args>
void basic_tcp_stream<Wheel, Executor>::complete_posted(Handler&& handler, Args... args) {
    net::post(socket_.get_executor(), net::append(std::forward<Handler>(handler), args...));
}

template <class Wheel, class Executor>
template <class Buffers>
bool basic_tcp_stream<Wheel, Executor>::empty_while_pending(std::uint8_t direction, const Buffers& buffers) const noexcept {
    return (pending_ & direction) != 0 && net::buffer_size(buffers) == 0;
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::check_start(const char* what) noexcept {
#if IDLEWHEEL_CHECK_EXECUTOR || IDLEWHEEL_CHECK_STREAM_EXECUTOR
    idlewheel::detail::check_caller(socket_.get_executor(), &idlewheel::detail::liveness_access<Wheel>::owner(*wheel_),
                                    what);
#else
    (void)what;
#endif
}

// Beast's stream starts an operation from wherever it is called (its timer and socket are
// I/O objects, safe to start from another strand); this one's start touches the wheel, which
// belongs to the stream's executor. An operation started inside a handler of another
// executor (Beast 1.81's http_server_flex: detect_session::run() on the listener's strand) is
// therefore carried over, as if by post, and started there, in every build: its completion
// goes where it would have gone. Only when the completion handler would run on that executor
// too (its associated executor is the stream's, the default): a completion bound elsewhere
// could not be made right by a hop, and the check (check_start) reports it at the start.
template <class Wheel, class Executor>
template <class Handler>
bool basic_tcp_stream<Wheel, Executor>::started_elsewhere(const Handler& handler) {
    const executor_type& ex = socket_.get_executor();
    if (!idlewheel::detail::called_off(ex)) return false;
    const auto completes_on = net::get_associated_executor(handler, ex);
    using completion_executor = std::decay_t<decltype(completes_on)>;
    if constexpr (std::is_same_v<completion_executor, executor_type>)
        if (completes_on == ex) return true;
    // A composed operation's intermediate handler carries the stream's executor with work
    // tracked (Asio's composed_work): another type (a strand of a tracked io_context
    // executor inside any_io_executor), the same executor. Compared untracked, both sides.
    using untracked_t = net::execution::outstanding_work_t::untracked_t;
    if constexpr (net::can_prefer<const completion_executor&, untracked_t>::value &&
                  net::can_prefer<const executor_type&, untracked_t>::value) {
        const auto a = net::prefer(completes_on, net::execution::outstanding_work.untracked);
        const auto b = net::prefer(ex, net::execution::outstanding_work.untracked);
        if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::decay_t<decltype(b)>>) return a == b;
    }
    return false;
}

template <class Wheel, class Executor>
template <class Initiation, class Handler, class... Args>
void basic_tcp_stream<Wheel, Executor>::carry_over(const Initiation& initiation, Handler&& handler,
                                                   const Args&... args) {
    net::post(socket_.get_executor(),
              [initiation, h = std::decay_t<Handler>(std::forward<Handler>(handler)), args...]() mutable {
                  initiation(std::move(h), args...);
              });
}

template <class Wheel, class Executor>
void basic_tcp_stream<Wheel, Executor>::check_completion() noexcept {
    check_start("the completion handler of an idlewheel::beast::tcp_stream operation (bound to another executor?)");
}

// The initiations of the asynchronous operations (net::async_initiate).

template <class Wheel, class Executor>
struct basic_tcp_stream<Wheel, Executor>::initiate_read : initiate_base {
    template <class Handler, class Buffers>
    void operator()(Handler&& handler, const Buffers& buffers) const {
        basic_tcp_stream& s = *this->self;
        if (s.started_elsewhere(handler)) return s.carry_over(*this, std::forward<Handler>(handler), buffers);
        s.check_start("idlewheel::beast::tcp_stream::async_read_some");
        if (s.empty_while_pending(reading, buffers))
            return s.complete_posted(std::forward<Handler>(handler), boost::system::error_code(), std::size_t{0});
        std::uint8_t ops = reading;
        if (s.ws_watching()) s.ws_on_start(reading, ops);
        if (!s.begin(reading, reading)) return s.complete_timed_out(std::forward<Handler>(handler), std::size_t{0});
        s.socket_.async_read_some(buffers, wrapped<Handler>(s, ops, std::forward<Handler>(handler)));
    }
};

template <class Wheel, class Executor>
struct basic_tcp_stream<Wheel, Executor>::initiate_write : initiate_base {
    template <class Handler, class Buffers>
    void operator()(Handler&& handler, const Buffers& buffers) const {
        basic_tcp_stream& s = *this->self;
        if (s.started_elsewhere(handler)) return s.carry_over(*this, std::forward<Handler>(handler), buffers);
        s.check_start("idlewheel::beast::tcp_stream::async_write_some");
        if (s.empty_while_pending(writing, buffers))
            return s.complete_posted(std::forward<Handler>(handler), boost::system::error_code(), std::size_t{0});
        std::uint8_t ops = writing;
        if (s.ws_watching()) s.ws_on_start(writing, ops);
        if (!s.begin(writing, writing)) return s.complete_timed_out(std::forward<Handler>(handler), std::size_t{0});
        s.socket_.async_write_some(buffers, wrapped<Handler>(s, ops, std::forward<Handler>(handler)));
    }
};

template <class Wheel, class Executor>
struct basic_tcp_stream<Wheel, Executor>::initiate_connect : initiate_base {
    template <class Handler>
    void operator()(Handler&& handler, const endpoint_type& ep) const {
        basic_tcp_stream& s = *this->self;
        if (s.started_elsewhere(handler)) return s.carry_over(*this, std::forward<Handler>(handler), ep);
        s.check_start("idlewheel::beast::tcp_stream::async_connect");
        if (!s.begin(reading | writing, writing)) return s.complete_timed_out(std::forward<Handler>(handler));
        s.socket_.async_connect(ep, wrapped<Handler>(s, reading | writing, std::forward<Handler>(handler)));
    }
};

template <class Wheel, class Executor>
struct basic_tcp_stream<Wheel, Executor>::initiate_range_connect : initiate_base {
    template <class Handler, class Endpoints, class Condition = always>
    void operator()(Handler&& handler, const Endpoints& endpoints, Condition condition = {}) const {
        basic_tcp_stream& s = *this->self;
        if (s.started_elsewhere(handler))
            return s.carry_over(*this, std::forward<Handler>(handler), endpoints, std::move(condition));
        s.check_start("idlewheel::beast::tcp_stream::async_connect");
        if (!s.begin(reading | writing, writing))
            return s.complete_timed_out(std::forward<Handler>(handler), endpoint_type());
        net::async_connect(s.socket_, endpoints, std::move(condition),
                           wrapped<Handler>(s, reading | writing, std::forward<Handler>(handler)));
    }
};

template <class Wheel, class Executor>
struct basic_tcp_stream<Wheel, Executor>::initiate_iterator_connect : initiate_base {
    template <class Handler, class Iterator, class Condition = always>
    void operator()(Handler&& handler, Iterator begin, Iterator end, Condition condition = {}) const {
        basic_tcp_stream& s = *this->self;
        if (s.started_elsewhere(handler))
            return s.carry_over(*this, std::forward<Handler>(handler), begin, end, std::move(condition));
        s.check_start("idlewheel::beast::tcp_stream::async_connect");
        if (!s.begin(reading | writing, writing)) return s.complete_timed_out(std::forward<Handler>(handler), end);
        net::async_connect(s.socket_, begin, end, std::move(condition),
                           wrapped<Handler>(s, reading | writing, std::forward<Handler>(handler)));
    }
};

// Beast's customization points (found by argument-dependent lookup).

template <class Wheel, class Executor>
void beast_close_socket(basic_tcp_stream<Wheel, Executor>& stream) {
    boost::system::error_code ignored;
    stream.socket().close(ignored);
}

template <class Wheel, class Executor>
void teardown(boost::beast::role_type role, basic_tcp_stream<Wheel, Executor>& stream, boost::system::error_code& ec) {
    using boost::beast::websocket::teardown;
    teardown(role, stream.socket(), ec);
    stream.teardown_done(/*completed=*/true);
}

template <class Wheel, class Executor, class TeardownHandler>
void async_teardown(boost::beast::role_type role, basic_tcp_stream<Wheel, Executor>& stream,
                    TeardownHandler&& handler) {
    using boost::beast::websocket::async_teardown;
    using handler_type = std::decay_t<TeardownHandler>;
    stream.teardown_begin();
    async_teardown(role, stream.socket(),
                   detail::teardown_handler<basic_tcp_stream<Wheel, Executor>, handler_type>(
                       stream, handler_type(std::forward<TeardownHandler>(handler))));
}

}  // namespace idlewheel::beast

#endif
