// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_WHEEL_WATCH_HPP
#define IDLEWHEEL_DETAIL_WHEEL_WATCH_HPP

// How cancel_after learns that a wheel was stopped or destroyed.
//
// A cancel_after deadline is a timer_node, and the wheel drops pending timer_nodes silently
// on stop() and in its destructor (no callback runs). An operation whose deadline was dropped
// that way would wait forever. So each wheel that serves cancel_after has a watch: the list
// of operations whose deadline is pending on it and, while that list is not empty, one
// schedule() timeout at the end of time (the guard) whose callable reports when the wheel
// lets go of it. The wheel destroys that callable synchronously inside stop() and
// ~basic_wheel_timer; the watch then hands its list to one handler posted to the wheel's
// executor, which cancels those operations (never from inside stop() or the destructor: an
// operation's cancellation handler may call back into the wheel). The guard is cancelled as
// soon as the list is empty again, so it never keeps io_context::run() from returning, and
// never outlives the operations it stands for.
//
// The cost: while operations are pending, one more entry in pending() (and the guard's
// handle among what stop() returns); one allocation each time the list goes from empty to
// not empty (a steady stream of concurrent operations, a server's case, allocates nothing).
// A "dropped" notification on timer_node would make all of this unnecessary.
//
// Watches are found by the wheel's address in one process-wide map (a mutex), behind a
// per-thread cache of the last one used. A watch is never freed (a few dozen bytes per wheel
// address ever used); between two operations it holds nothing of its wheel, so a new wheel
// built at the address of a destroyed one simply takes it over.

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/timeout.hpp>

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace idlewheel::detail {

// One link of an operation in a watch's list (circular; a list's head is a link too).
class watch_link {
public:
    watch_link() noexcept = default;
    watch_link(const watch_link&) = delete;
    watch_link& operator=(const watch_link&) = delete;
    ~watch_link() { unlink(); }

    void unlink() noexcept {
        prev_->next_ = next_;
        next_->prev_ = prev_;
        prev_ = next_ = this;
    }

    // What is called on an operation still listed when its wheel let go of its deadline.
    void (*on_wheel_gone)(watch_link&) = nullptr;

private:
    friend class watch;
    friend struct orphans;
    [[nodiscard]] bool alone() const noexcept { return next_ == this; }
    void insert_before(watch_link& pos) noexcept {
        prev_ = pos.prev_;
        next_ = &pos;
        pos.prev_->next_ = this;
        pos.prev_ = this;
    }
    // Moves every link after `from` (a head) behind this head.
    void take_all(watch_link& from) noexcept {
        if (from.alone()) return;
        watch_link* first = from.next_;
        watch_link* last = from.prev_;
        from.prev_ = from.next_ = &from;
        first->prev_ = prev_;
        last->next_ = this;
        prev_->next_ = first;
        prev_ = last;
    }

    watch_link* prev_ = this;
    watch_link* next_ = this;
};

// The operations a stopped or destroyed wheel left behind, cancelled by a posted handler.
struct orphans {
    watch_link head;

    void cancel_all() {
        while (!head.alone()) {
            watch_link& l = *head.next_;
            l.unlink();
            l.on_wheel_gone(l);
        }
    }
};

class watch {
public:
    // The watch of the wheel at `wheel` (made on first use).
    static watch& of(const void* wheel) {
        thread_local const void* last_wheel = nullptr;
        thread_local watch* last_watch = nullptr;
        if (last_wheel == wheel) return *last_watch;
        watch& w = lookup(wheel);
        last_wheel = wheel;
        last_watch = &w;
        return w;
    }

    // Lists an operation whose deadline is now pending on `wheel`, arming the guard if
    // there is none. False if the wheel refuses the guard (stopped, or max_pending reached):
    // then the operation has no deadline and is not listed.
    template <class Wheel>
    bool add(Wheel& wheel, watch_link& l) {
        if (!guard_) {
            try {
                guard_ = wheel.schedule(Wheel::duration::max(),
                                        guard<typename Wheel::executor_type>(this, wheel.get_executor()));
            } catch (const system_error&) {
                return false;
            }
        }
        l.insert_before(head_);
        return true;
    }

    // Takes an operation off the list (its deadline ran, or it completed first); the guard
    // goes with the last one.
    void remove(watch_link& l) noexcept {
        l.unlink();
        if (head_.alone() && guard_) {
            // Not a drop by the wheel: the callable's destructor must not report one.
            timeout g = std::exchange(guard_, timeout{});
            g.cancel();
        }
    }

private:
    watch() noexcept = default;

    static watch& lookup(const void* wheel) {
        static std::mutex mutex;
        // Never destroyed: a wheel with static storage duration may be used after main().
        static auto* const watches = new std::unordered_map<const void*, watch*>;
        std::lock_guard<std::mutex> lock(mutex);
        watch*& w = (*watches)[wheel];
        if (w == nullptr) w = new watch;
        return *w;
    }

    // The guard's callable. Its destructor runs when the wheel lets go of it: stop(), the
    // wheel's destruction, after expire_all() ran it, or our own cancel() (then the watch
    // has already forgotten it: `guard_` no longer refers to it).
    template <class Executor>
    struct guard {
        watch* w;
        Executor ex;
        guard(watch* owner, const Executor& e) : w(owner), ex(e) {}
        guard(guard&& other) noexcept : w(std::exchange(other.w, nullptr)), ex(std::move(other.ex)) {}
        guard& operator=(guard&&) = delete;
        ~guard() {
            if (w != nullptr && w->guard_) w->wheel_let_go(ex);
        }
        void operator()() noexcept {}
    };

    template <class Executor>
    void wheel_let_go(const Executor& ex) noexcept {
        guard_ = timeout{};
        if (head_.alone()) return;
        try {
            struct cancel_later {
                std::unique_ptr<orphans> o;
                void operator()() { o->cancel_all(); }
            };
            auto o = std::make_unique<orphans>();
            o->head.take_all(head_);
            net::post(ex, cancel_later{std::move(o)});
        } catch (...) {
            // Out of memory while the wheel stops: nothing can report it from here, and the
            // listed operations stay without a deadline.
        }
    }

    watch_link head_;
    timeout guard_;
};

}  // namespace idlewheel::detail

#endif
