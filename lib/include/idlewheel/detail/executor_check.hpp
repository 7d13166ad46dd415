// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_EXECUTOR_CHECK_HPP
#define IDLEWHEEL_DETAIL_EXECUTOR_CHECK_HPP

// The check behind "every call happens on the wheel's executor" (docs/threading.md).
//
// When it runs: IDLEWHEEL_CHECK_EXECUTOR=1, which is the default unless NDEBUG is defined (so
// debug builds check, release builds do not: the check reads thread-local state, which costs
// more than a touch or a per_tick schedule + cancel). Define IDLEWHEEL_CHECK_EXECUTOR=1 to keep
// it in a release build, =0 to drop it from a debug one.
//
// What it checks, on every wheel_timer member that changes the wheel, every cancel of a
// timeout / node / liveness object, and every activity mark of a liveness object:
//  - a call made while the calling thread is not running any Asio handler (main() before
//    run(), after run() returned, a test driving poll()) is allowed, as Asio allows it for its
//    own I/O objects: that is setting up and tearing down;
//  - a call made from inside a handler must be on the wheel's executor: for a wheel on a
//    strand, inside that strand; for a wheel on an io_context's own executor, inside that
//    io_context, AND always on the same thread: the first thread that calls the wheel from
//    inside run() owns it. This is what catches a wheel on an io_context run by several
//    threads (running_in_this_thread() is true on every one of them): the second thread is
//    reported even if the two calls never overlap. A single-threaded io_context moved to
//    another thread later (run() on a new thread after the first returned, whether or not
//    the first thread still exists) is reported too: give such a wheel a strand, which may
//    run on any thread, one at a time.
//  - an executor type the check does not know (a user's own) is not checked, nor is a wheel's
//    any_io_executor with standalone Asio 1.22, whose any_io_executor::target<T>() answers for
//    every T (it cannot tell an io_context executor from a strand; Boost.Asio 1.81 and newer
//    and standalone Asio 1.36 can).
// A violation prints what happened and what to do on stderr and calls std::abort(): the
// program stops at the first misuse, before the wheel's lists can be corrupted.

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/core/check_config.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>


namespace idlewheel::detail {

[[noreturn]] inline void executor_misuse(const char* what) noexcept {
    std::fprintf(stderr, "idlewheel: %s (see docs/threading.md)\n", what);
    std::fflush(stderr);
    std::abort();
}

// A number for the calling thread, never given to another thread of the process (a
// std::thread::id may be reused once its thread has exited, which would let a wheel moved to a
// new thread pass unseen).
inline std::uint64_t this_thread_token() noexcept {
    static std::atomic<std::uint64_t> next{1};
    thread_local const std::uint64_t token = next.fetch_add(1, std::memory_order_relaxed);
    return token;
}

// The thread that owns a wheel on a plain io_context executor (see the top of this header).
// An atomic so that the check itself is not a data race when two threads misuse a wheel.
class owner_thread {
public:
    /// True if the calling thread owns it (becoming the owner if there was none yet).
    bool claim() noexcept {
        const auto me = this_thread_token();
        auto owner = owner_.load(std::memory_order_relaxed);
        if (owner == me) return true;
        if (owner == 0) return owner_.compare_exchange_strong(owner, me) || owner == me;
        return false;
    }

private:
    std::atomic<std::uint64_t> owner_{0};
};

inline constexpr const char* misuse_two_threads =
    "a wheel_timer on an io_context's own executor was called from two different threads: that io_context "
    "is run by several threads, and a wheel is not thread-safe. Give each thread its own io_context and wheel, "
    "or use idlewheel::wheel_pool (one wheel per strand, sessions on their wheel's strand)";

// True when `ex` can tell that the caller is not running on it; false when it is, or when it
// cannot tell (an executor type we do not know). Not a check: cancel_after uses it to decide
// whether a completion must hop to the wheel's executor.
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

// True when the caller runs inside a handler that `ex` can tell is not its own (a strand the
// caller is not in, an io_context the caller does not run): the case idlewheel::beast::tcp_stream
// carries an operation over from. False outside any handler (setting up), on `ex`, or when the
// executor type cannot tell (a user's own, standalone Asio 1.22's any_io_executor): then the
// check (check_caller) has the last word.
template <class Executor>
bool called_off(const Executor& ex) noexcept {
    using io_ex = net::io_context::executor_type;
    using strand_ex = net::strand<io_ex>;
    if (net::detail::thread_context::top_of_thread_call_stack() == nullptr) return false;
    if constexpr (std::is_base_of_v<strand_ex, Executor>) {
        return !static_cast<const strand_ex&>(ex).running_in_this_thread();
    } else if constexpr (std::is_base_of_v<io_ex, Executor>) {
        return !static_cast<const io_ex&>(ex).running_in_this_thread();
    } else if constexpr (std::is_base_of_v<net::any_io_executor, Executor>) {
        const net::any_io_executor& any = ex;
        const auto* io = any.template target<io_ex>();
        const auto* strand = any.template target<strand_ex>();
        if (io != nullptr && strand != nullptr) return false;  // standalone Asio 1.22: cannot tell
        if (strand != nullptr) return !strand->running_in_this_thread();
        if (io != nullptr) return !io->running_in_this_thread();
        return false;
    } else {
        return false;
    }
}

// The message for a call from outside a wheel's strand: what was called, where the wheel is,
// where the caller runs, and what to do in that case (the causes differ: an operation started
// from another strand, a coroutine running on the io_context itself, another io_context).
[[noreturn]] inline void strand_misuse(const char* what, const void* strand_io, bool same_io) noexcept {
    std::fprintf(stderr,
                 "idlewheel: %s was called from a handler that is not running on the wheel's executor. The wheel "
                 "is on a strand of io_context %p (a wheel_pool shard's, or your own); the caller runs %s. %s "
                 "(see docs/threading.md)\n",
                 what, strand_io,
                 same_io ? "on that io_context, outside that strand" : "on another io_context, or on none",
                 same_io ? "Either the operation was started from another strand (the listener's, another "
                           "session's: hand the socket over and start from the session's own strand, "
                           "net::dispatch(stream.get_executor(), ...)), or a coroutine runs on the io_context "
                           "itself (co_spawn the session on its shard's executor: "
                           "co_spawn(shard.get_executor(), session(...)), as docs/beast_coroutines.md "
                           "shows), or a completion handler was bound to another executor"
                         : "Give each io_context its own wheel (or pool), and call a wheel from its own io_context's "
                           "handlers only");
    std::fflush(stderr);
    std::abort();
}

// The same for a wheel on an io_context's own executor, called from another io_context's handler.
[[noreturn]] inline void io_misuse(const char* what) noexcept {
    std::fprintf(stderr,
                 "idlewheel: %s was called from a handler that is not running on the wheel's executor: the wheel "
                 "is on an io_context's own executor and the caller runs on another io_context (or a strand "
                 "of it that the check cannot see into). Call a wheel from its own io_context's handlers only; "
                 "with idlewheel::wheel_pool, build each session's I/O objects on its shard's executor "
                 "(shard.get_executor()), so the session and its wheel share one strand (see docs/threading.md)\n",
                 what);
    std::fflush(stderr);
    std::abort();
}

inline constexpr const char* wheel_call = "a wheel_timer (or a timeout, node or liveness object of it)";

// Checks a call on a wheel bound to `ex` (see the top of this header). `owner` is the wheel's
// (null: the io_context's thread is not checked, as for a stream's own call, which reaches the
// wheel's check next); `what` names the call for the message.
template <class Executor>
void check_caller(const Executor& ex, owner_thread* owner, const char* what = wheel_call) noexcept {
    using io_ex = net::io_context::executor_type;
    using strand_ex = net::strand<io_ex>;
    if (net::detail::thread_context::top_of_thread_call_stack() == nullptr) return;  // not in a handler
    const io_ex* io = nullptr;
    const strand_ex* strand = nullptr;
    if constexpr (std::is_base_of_v<io_ex, Executor>) {
        io = &ex;
    } else if constexpr (std::is_base_of_v<strand_ex, Executor>) {
        strand = &ex;
    } else if constexpr (std::is_base_of_v<net::any_io_executor, Executor>) {
        const net::any_io_executor& any = ex;
        io = any.template target<io_ex>();
        strand = any.template target<strand_ex>();
        // Standalone Asio 1.22's any_io_executor answers target<T>() for any T: it cannot tell an
        // io_context executor from a strand, so there is nothing this check can rely on.
        if (io != nullptr && strand != nullptr) return;
    }
    if (strand != nullptr) {
        if (!strand->running_in_this_thread()) {
            const io_ex inner = strand->get_inner_executor();
            strand_misuse(what, &net::query(inner, net::execution::context), inner.running_in_this_thread());
        }
    } else if (io != nullptr) {
        if (!io->running_in_this_thread()) io_misuse(what);
        if (owner != nullptr && !owner->claim()) executor_misuse(misuse_two_threads);
    }
}

}  // namespace idlewheel::detail

#endif
