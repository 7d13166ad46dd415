// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_FUZZ_CLANG14_WAIT_OP_SHIM_HPP
#define IDLEWHEEL_TESTS_FUZZ_CLANG14_WAIT_OP_SHIM_HPP

// A finding of fuzz_wheel_timer (README.md, "What it found"), worked around here until the
// library is fixed: detail::wait_op::enable_cancellation() emplaces its cancel_handler, an
// aggregate, into the cancellation slot, and Asio constructs it as handler_(args...): C++20's
// parenthesized aggregate initialization (P0960), which clang implements only from version 16.
// With clang 14 (the fuzz build's compiler) every async_wait() fails to compile.
//
// This partial specialization of Asio's slot storage initializes exactly those handlers (an
// aggregate whose one member is a pointer to an idlewheel entry) with braces; everything else
// is Asio's own code. Remove it once wait_op gives cancel_handler a constructor (or emplaces
// cancel_handler{this}).

#include <idlewheel/detail/timer_entry.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace idlewheel::fuzz {
template <class T>
concept wait_op_cancel_handler = std::is_aggregate_v<T> && requires(T t) {
    requires std::is_pointer_v<decltype(t.op)>;
    requires std::is_base_of_v<idlewheel::detail::timer_entry, std::remove_pointer_t<decltype(t.op)>>;
};
}  // namespace idlewheel::fuzz

#if defined(__clang__) && __clang_major__ < 16
namespace boost::asio::detail {
template <class Handler>
requires idlewheel::fuzz::wait_op_cancel_handler<Handler>
class cancellation_handler<Handler> : public cancellation_handler_base {
public:
    template <class... Args>
    cancellation_handler(std::size_t size, Args&&... args) : handler_{std::forward<Args>(args)...}, size_(size) {}

    void call(cancellation_type_t type) { handler_(type); }

    std::pair<void*, std::size_t> destroy() noexcept {
        std::pair<void*, std::size_t> mem(this, size_);
        this->cancellation_handler::~cancellation_handler();
        return mem;
    }

    Handler& handler() noexcept { return handler_; }

private:
    ~cancellation_handler() = default;

    Handler handler_;
    std::size_t size_;
};
}  // namespace boost::asio::detail
#endif

#endif
