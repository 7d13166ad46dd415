// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_CANCEL_AFTER_OP_HPP
#define IDLEWHEEL_DETAIL_CANCEL_AFTER_OP_HPP

// The state of one operation started through cancel_after / cancel_at: one block, allocated
// with the handler's associated allocator (Asio's per-thread recycling allocator when that is
// std::allocator, so a steady stream of operations calls malloc zero times). It holds the
// handler, the cancellation signal whose slot the operation sees, and the deadline: the block
// itself is a shared_entry on the shared wheel (its table is one static per operation type),
// so arming and disarming are O(1) relinks and there is no Asio timer per operation. Unlike
// Asio's timed_cancel_op there is no timer wait to complete, so the block is freed as soon as
// the operation completes, before its handler runs.
//
// The wheel tells the entry when it is due (entry_action::fire: emit the cancellation type)
// and when it lets go of it unrun, in stop() or its destructor (entry_action::discard). A
// discarded deadline cancels the operation too, with the same type, posted to the wheel's
// executor: never from inside stop() or the destructor, where an operation's cancellation
// handler calling back into the wheel would find it stopping or half destroyed.
//
// The block may be reached from several frames at once: the deadline (or the outer slot)
// emitting into the operation's signal, the posted emission of a discarded deadline, the
// operation's completion (which an operation may deliver from inside an emit), and the
// initiating function. `busy_` counts those frames (a posted emission counts from the post
// until it ran or was destroyed unrun); a completion that happens inside one calls the handler
// in place and leaves the freeing to the frame.

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/detail/cancel_after_handler.hpp>
#include <idlewheel/detail/entry_access.hpp>
#include <idlewheel/detail/executor_check.hpp>
#include <idlewheel/core/timer_entry.hpp>
#include <idlewheel/core/wheel_core.hpp>
#include <idlewheel/error.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#include <asio/detail/recycling_allocator.hpp>
#include <asio/detail/thread_info_base.hpp>
#else
#include <boost/asio/detail/recycling_allocator.hpp>
#include <boost/asio/detail/thread_info_base.hpp>
#endif

namespace idlewheel::detail {

// A delay, rounded up (never early) and saturated, in the wheel clock's duration.
template <class To, class Rep, class Period>
constexpr To deadline_ceil(std::chrono::duration<Rep, Period> d) noexcept {
    if (!(d > std::chrono::duration<Rep, Period>::zero())) return To::zero();
    using wide = std::chrono::duration<long double, typename To::period>;
    if (std::chrono::duration_cast<wide>(d).count() >= static_cast<long double>(To::max().count())) return To::max();
    return std::chrono::ceil<To>(d);
}

// "d from now" and "at t": how a deadline is put on the wheel.
template <class Wheel>
struct relative_deadline {
    typename Wheel::duration delay;
    bool arm(Wheel& wheel, shared_entry& e) const { return entry_access<Wheel>::schedule_after(wheel, e, delay); }
};

template <class Wheel>
struct absolute_deadline {
    typename Wheel::time_point at;
    bool arm(Wheel& wheel, shared_entry& e) const { return entry_access<Wheel>::schedule_at(wheel, e, at); }
};

template <class Handler, class Wheel, class... Signatures>
class cancel_after_op final : private shared_entry {
public:
    using handler_type = Handler;
    using executor_type = typename Wheel::executor_type;

    // Allocates and constructs the block (rebinding the handler's associated allocator).
    template <class H>
    static cancel_after_op* create(H& handler, net::cancellation_type_t type, Wheel& wheel) {
        op_allocator a(allocator_of(handler));
        cancel_after_op* p = op_traits::allocate(a, 1);
        try {
            op_traits::construct(a, p, std::move(handler), type, std::as_const(wheel));
        } catch (...) {
            op_traits::deallocate(a, p, 1);
            throw;
        }
        return p;
    }

    // The wheel's executor is copied once, straight into the block: a temporary passed in
    // would cost every operation another copy or move and a destruction (for the default
    // any_io_executor, indirect calls each).
    cancel_after_op(Handler&& handler, net::cancellation_type_t type, const Wheel& wheel)
        : shared_entry(&table), handler_(std::move(handler)), type_(type), wheel_executor_(wheel.get_executor()) {}

    // Arms the deadline, connects the outer slot, and starts the operation with the inner
    // handler. If the wheel cannot take the deadline (stopped, or max_pending reached) the
    // operation is cancelled at once, as if its deadline had passed.
    template <class Deadline, class Initiation, class... Args>
    void start(Wheel& wheel, const Deadline& deadline, Initiation&& initiation, Args&&... args) {
        bool armed = false;
        try {
            armed = deadline.arm(wheel, *this);
        } catch (...) {  // std::bad_alloc: the operation is not started, the handler is dropped
            disconnect();
            destroy(this);
            throw;
        }
        auto outer = net::get_associated_cancellation_slot(handler_);
        if (outer.is_connected()) proxy_ = &outer.template emplace<cancel_proxy>(this);
        ++busy_;
        struct leave {
            cancel_after_op* op;
            ~leave() { op->leave_frame(); }
        } frame{this};
        cancel_after_handler<cancel_after_op, Signatures...> inner(this);
        net::async_initiate<cancel_after_handler<cancel_after_op, Signatures...>, Signatures...>(
            std::forward<Initiation>(initiation), inner, std::forward<Args>(args)...);
        if (!armed && !done_) signal_.emit(type_);
    }

    [[nodiscard]] net::cancellation_slot slot() noexcept { return signal_.slot(); }
    [[nodiscard]] const Handler& handler() const noexcept { return handler_; }

    // The operation completed: disarm, then call the handler (after freeing the block,
    // unless a frame is still inside it).
    template <class... Args>
    void complete(Args&&... args) {
        if (known_not_running_in(wheel_executor_)) {
            // The handler's executor is not the wheel's (use_future's handler runs on the
            // system executor): the deadline and `busy_` are the wheel's to touch, so the
            // deadline's removal goes there, and the block is freed there (or by the last
            // frame, a posted emission of a discarded deadline, still holding it).
            if (proxy_ != nullptr) proxy_->op = nullptr;
            proxy_ = nullptr;
            Handler h(std::move(handler_));
            net::post(wheel_executor_, [this] {
                disconnect();
                if (busy_ != 0)
                    done_ = true;
                else
                    destroy(this);
            });
            std::move(h)(std::forward<Args>(args)...);
            return;
        }
        disconnect();
        if (busy_ != 0) {
            done_ = true;
            std::move(handler_)(std::forward<Args>(args)...);
            return;
        }
        Handler h(std::move(handler_));
        destroy(this);
        std::move(h)(std::forward<Args>(args)...);
    }

    // The operation dropped its handler without calling it (io_context shut down).
    void abandon() noexcept {
        disconnect();
        if (busy_ != 0) {
            done_ = true;
            return;
        }
        destroy(this);
    }

private:
    using handler_allocator = net::associated_allocator_t<Handler>;
    using recycling =
        net::detail::get_recycling_allocator<handler_allocator, net::detail::thread_info_base::default_tag>;
    using op_allocator =
        typename std::allocator_traits<typename recycling::type>::template rebind_alloc<cancel_after_op>;
    using op_traits = std::allocator_traits<op_allocator>;

    static typename recycling::type allocator_of(const Handler& h) noexcept {
        return recycling::get(net::get_associated_allocator(h));
    }
    static void destroy(cancel_after_op* p) noexcept {
        op_allocator a(allocator_of(p->handler_));
        op_traits::destroy(a, p);
        op_traits::deallocate(a, p, 1);
    }

    // Forwards the outer handler's cancellation (a co_spawn parent, a parallel_group) to
    // the operation, with the type it was emitted with.
    struct cancel_proxy {
        cancel_after_op* op;
        explicit cancel_proxy(cancel_after_op* o) noexcept : op(o) {}
        void operator()(net::cancellation_type_t type) {
            if (op != nullptr) op->emit(type);
        }
    };

    void emit(net::cancellation_type_t type) {
        ++busy_;
        struct leave {
            cancel_after_op* op;
            ~leave() { op->leave_frame(); }
        } frame{this};
        signal_.emit(type);
    }

    void leave_frame() noexcept {
        if (--busy_ == 0 && done_) destroy(this);
    }

    static const entry_table table;

    // The wheel's call: the deadline passed (fire), or the wheel let go of it unrun (discard).
    static void act(timer_entry& e, entry_action a) {
        auto& self = static_cast<cancel_after_op&>(static_cast<shared_entry&>(e));
        if (a == entry_action::fire)
            self.emit(self.type_);
        else
            self.wheel_gone();
    }

    // A discarded deadline's emission, posted to the wheel's executor; it holds the block
    // (a frame of `busy_`) until it ran or was destroyed unrun (io_context shut down).
    struct posted_cancel {
        cancel_after_op* op;
        explicit posted_cancel(cancel_after_op* o) noexcept : op(o) {}
        posted_cancel(posted_cancel&& other) noexcept : op(std::exchange(other.op, nullptr)) {}
        posted_cancel& operator=(posted_cancel&&) = delete;
        ~posted_cancel() {
            if (op != nullptr) op->leave_frame();
        }
        void operator()() {
            struct leave {
                cancel_after_op* op;
                ~leave() { op->leave_frame(); }
            } frame{std::exchange(op, nullptr)};
            if (!frame.op->done_) frame.op->signal_.emit(frame.op->type_);
        }
    };

    // The wheel was stopped or destroyed with the deadline pending: called from inside
    // stop() or the destructor (noexcept), so the emission is posted.
    void wheel_gone() noexcept {
        ++busy_;
        try {
            net::post(wheel_executor_, posted_cancel(this));
        } catch (...) {
            // No memory to post: cancel here rather than leave the operation without its
            // deadline (the wheel is still whole: its destructor's body has not ended).
            posted_cancel(this)();
        }
    }

    void disconnect() noexcept {
        shared_entry::cancel();
        if (proxy_ != nullptr) proxy_->op = nullptr;
    }

    Handler handler_;
    net::cancellation_signal signal_;
    net::cancellation_type_t type_;
    unsigned busy_ = 0;
    bool done_ = false;
    cancel_proxy* proxy_ = nullptr;
    executor_type wheel_executor_;  // where the deadline lives (the wheel may be gone)
};

template <class Handler, class Wheel, class... Signatures>
const entry_table cancel_after_op<Handler, Wheel, Signatures...>::table{&cancel_after_op::act};

}  // namespace idlewheel::detail

#endif
