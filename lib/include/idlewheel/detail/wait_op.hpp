// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_WAIT_OP_HPP
#define IDLEWHEEL_DETAIL_WAIT_OP_HPP

// The pending state of one wheel_timer::async_wait: the handler, outstanding work on its
// associated executor, and a cancellation handler in its associated slot — the pattern of
// Asio's deadline_timer_service, on the wheel. Allocated with the handler's associated
// allocator and freed before the handler is called, so the handler may start the next wait
// into the same memory.

#include <idlewheel/core/wheel_core.hpp>

#include <idlewheel/detail/asio.hpp>

#include <memory>
#include <utility>

namespace idlewheel::detail {

template <class Handler, class IoExecutor>
class wait_op final : public own_entry {
public:
    template <class H>
    static wait_op& create(H&& handler, const IoExecutor& io_ex) {
        auto alloc = net::get_associated_allocator(handler);
        op_allocator a(alloc);
        wait_op* p = op_traits::allocate(a, 1);
        try {
            op_traits::construct(a, p, std::forward<H>(handler), io_ex);
        } catch (...) {
            op_traits::deallocate(a, p, 1);
            throw;
        }
        return *p;
    }

    // Connects the handler's cancellation slot, if it has one. Call once it is in the wheel.
    void enable_cancellation() {
        if (slot_.is_connected()) slot_.template emplace<cancel_handler>(this);
    }

    // Completes with `ec` as if by post (never inside the caller's frame).
    void complete_posted(error_code ec) { finish(ec, /*clear_slot=*/true); }

    template <class H>
    wait_op(H&& handler, const IoExecutor& io_ex)
        : own_entry(kind::wait, &act),
          handler_(std::forward<H>(handler)),
          io_ex_(io_ex),
          work_(net::prefer(net::get_associated_executor(handler_, io_ex), net::execution::outstanding_work.tracked)),
          slot_(net::get_associated_cancellation_slot(handler_)) {}

private:
    using handler_allocator = net::associated_allocator_t<Handler>;
    using op_allocator = typename std::allocator_traits<handler_allocator>::template rebind_alloc<wait_op>;
    using op_traits = std::allocator_traits<op_allocator>;
    using work_type = std::decay_t<decltype(net::prefer(std::declval<net::associated_executor_t<Handler, IoExecutor>>(),
                                                        net::execution::outstanding_work.tracked))>;

    // Lives in the handler's cancellation slot. Timer waits have no side effects, so every
    // cancellation type (terminal, partial, total) is honoured, as for Asio's timers.
    struct cancel_handler {
        explicit cancel_handler(wait_op* o) noexcept : op(o) {}  // emplace() constructs with (): clang < 16 needs it
        wait_op* op;
        void operator()(net::cancellation_type_t type) {
            if (op == nullptr || (type & (net::cancellation_type::terminal | net::cancellation_type::partial |
                                          net::cancellation_type::total)) == net::cancellation_type::none)
                return;
            wait_op* o = std::exchange(op, nullptr);  // a second emit finds nothing to do
            if (o->core() == nullptr || !o->core()->cancel(*o)) return;
            // We are running inside the slot: it must not be cleared from here.
            o->finish(net::error::operation_aborted, /*clear_slot=*/false);
        }
    };

    static void act(timer_entry& e, entry_action a) {
        auto& self = static_cast<wait_op&>(e);
        self.finish(a == entry_action::fire ? error_code{} : error_code(net::error::operation_aborted),
                    /*clear_slot=*/true);
    }

    // Every completion is posted to the wheel's executor, never run inside the wheel's own
    // handler, as an Asio timer's completion is queued: a wait handler then runs as a handler
    // of its own (dispatched from there to its associated executor), so an exception it throws
    // leaves io_context::run() on its own, one per run(), none captured inside another
    // handler's frame and lost.
    void finish(error_code ec, bool clear_slot) {
        if (clear_slot && slot_.is_connected()) slot_.clear();
        Handler handler(std::move(handler_));
        IoExecutor io_ex(std::move(io_ex_));
        work_type work(std::move(work_));  // outstanding work until the post below has its own
        op_allocator a(net::get_associated_allocator(handler));
        op_traits::destroy(a, this);
        op_traits::deallocate(a, this, 1);
        // The memory is free before the upcall, so the handler may start the next wait in it.
        net::post(io_ex, handler_with_arg<Handler, error_code>{std::move(handler), ec});
    }

    Handler handler_;
    IoExecutor io_ex_;
    work_type work_;
    net::cancellation_slot slot_;
};

}  // namespace idlewheel::detail

#endif
