// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_DESTRUCTION_GUARD_HPP
#define IDLEWHEEL_CORE_DESTRUCTION_GUARD_HPP

// "Did the callback I just made destroy me?" (folly's DestructorCheck). An object that calls
// out to code that may destroy it keeps a destruction_notice member; the calling function
// keeps a destruction_guard on its stack and asks destroyed() after each call-out. Guards
// nest (a callback that re-enters the object): a destruction is reported to all of them.
//
// The notice keeps the innermost guard's address as an integer: the guard takes it back when
// it leaves the stack (unless the object died, and with it the notice), which GCC 12's
// -Wdangling-pointer cannot follow through the condition. An integer it does not track.

#include <cstdint>

namespace idlewheel::detail {

class destruction_guard;

class destruction_notice {
public:
    destruction_notice() noexcept = default;
    destruction_notice(const destruction_notice&) = delete;
    destruction_notice& operator=(const destruction_notice&) = delete;
    inline ~destruction_notice();

private:
    friend class destruction_guard;
    [[nodiscard]] destruction_guard* top() const noexcept { return reinterpret_cast<destruction_guard*>(top_); }
    void set_top(destruction_guard* g) noexcept { top_ = reinterpret_cast<std::uintptr_t>(g); }
    std::uintptr_t top_ = 0;  // the innermost guard on the stack, if any
};

class destruction_guard {
public:
    explicit destruction_guard(destruction_notice& n) noexcept : notice_(&n), outer_(n.top()) { n.set_top(this); }
    destruction_guard(const destruction_guard&) = delete;
    destruction_guard& operator=(const destruction_guard&) = delete;
    ~destruction_guard() {
        if (!destroyed_) notice_->set_top(outer_);  // also when unwinding from an exception
    }

    /// True once the watched object has been destroyed: touch none of its members.
    [[nodiscard]] bool destroyed() const noexcept { return destroyed_; }

private:
    friend class destruction_notice;
    destruction_notice* notice_;
    destruction_guard* outer_;
    bool destroyed_ = false;
};

inline destruction_notice::~destruction_notice() {
    for (destruction_guard* g = top(); g != nullptr; g = g->outer_) g->destroyed_ = true;
}

}  // namespace idlewheel::detail

#endif
