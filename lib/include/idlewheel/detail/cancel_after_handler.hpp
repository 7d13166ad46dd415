// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_CANCEL_AFTER_HANDLER_HPP
#define IDLEWHEEL_DETAIL_CANCEL_AFTER_HANDLER_HPP

// The handler an operation started through cancel_after / cancel_at sees in place of the
// user's: it points at the operation's block (detail/cancel_after_op.hpp, the `Op` here), hands
// the operation the block's cancellation slot, and forwards the completion to the block, which
// frees itself and calls the user's handler. One operator() per completion signature. Every
// other association (executor, allocator, immediate executor, ...) is the user's handler's,
// through the associator specialisation at the end. Dropping the handler unrun (an operation
// that never completes) tells the block it was abandoned.

#include <idlewheel/detail/asio.hpp>

#include <utility>

namespace idlewheel::detail {

template <class Op, class... Signatures>
class cancel_after_handler;

// The handler the operation sees: its cancellation slot is the block's signal; every other
// association (executor, allocator, ...) is the outer handler's (see the associator below).
template <class Op, class R, class... Args>
class cancel_after_handler<Op, R(Args...)> {
public:
    using cancellation_slot_type = net::cancellation_slot;

    explicit cancel_after_handler(Op* op) noexcept : op_(op) {}
    cancel_after_handler(cancel_after_handler&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    cancel_after_handler& operator=(cancel_after_handler&&) = delete;
    ~cancel_after_handler() {
        if (op_ != nullptr) op_->abandon();
    }

    [[nodiscard]] cancellation_slot_type get_cancellation_slot() const noexcept { return op_->slot(); }

    void operator()(Args... args) { std::exchange(op_, nullptr)->complete(std::forward<Args>(args)...); }

    Op* op_;
};

template <class Op, class R, class... Args, class... Signatures>
class cancel_after_handler<Op, R(Args...), Signatures...> : public cancel_after_handler<Op, Signatures...> {
public:
    using cancel_after_handler<Op, Signatures...>::cancel_after_handler;
    using cancel_after_handler<Op, Signatures...>::operator();

    void operator()(Args... args) { std::exchange(this->op_, nullptr)->complete(std::forward<Args>(args)...); }
};

}  // namespace idlewheel::detail

template <template <class, class> class Associator, class Op, class... Signatures, class DefaultCandidate>
struct idlewheel::net::associator<Associator, idlewheel::detail::cancel_after_handler<Op, Signatures...>,
                                  DefaultCandidate> : Associator<typename Op::handler_type, DefaultCandidate> {
    static typename Associator<typename Op::handler_type, DefaultCandidate>::type get(
        const idlewheel::detail::cancel_after_handler<Op, Signatures...>& h) noexcept {
        return Associator<typename Op::handler_type, DefaultCandidate>::get(h.op_->handler());
    }
    static auto get(const idlewheel::detail::cancel_after_handler<Op, Signatures...>& h,
                    const DefaultCandidate& c) noexcept
        -> decltype(Associator<typename Op::handler_type, DefaultCandidate>::get(h.op_->handler(), c)) {
        return Associator<typename Op::handler_type, DefaultCandidate>::get(h.op_->handler(), c);
    }
};

#endif
