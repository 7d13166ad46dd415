// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_EXECUTOR_CHECK_HPP
#define IDLEWHEEL_DETAIL_EXECUTOR_CHECK_HPP

// Debug check behind "every call happens on the wheel's executor". A call is wrong when the
// calling thread is inside some io_context's run() (it is running a handler) and that handler
// is not running on the wheel's executor: the classic bug of a multi-threaded server touching
// another thread's wheel. Calls made outside any run() (setting up in main() before run(),
// tests) are allowed, as Asio allows them for its own I/O objects.

#include <idlewheel/detail/asio.hpp>

namespace idlewheel::detail {

// True when `ex` can tell that the caller is not running on it; false when it is, or when it
// cannot tell (an executor type we do not know).
template <class Executor>
bool known_not_running_in(const Executor& ex) noexcept {
    using io_ex = net::io_context::executor_type;
    using strand_ex = net::strand<io_ex>;
    if constexpr (std::is_same_v<Executor, io_ex> || std::is_same_v<Executor, strand_ex>) {
        return !ex.running_in_this_thread();
    } else if constexpr (std::is_same_v<Executor, net::any_io_executor>) {
        if (const auto* e = ex.template target<io_ex>()) return !e->running_in_this_thread();
        if (const auto* s = ex.template target<strand_ex>()) return !s->running_in_this_thread();
        return false;
    } else {
        return false;
    }
}

template <class Executor>
bool called_from_foreign_handler(const Executor& ex) noexcept {
    if (net::detail::thread_context::top_of_thread_call_stack() == nullptr) return false;
    return known_not_running_in(ex);
}

}  // namespace idlewheel::detail

#endif
