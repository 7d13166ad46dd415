// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TIMEOUT_HPP
#define IDLEWHEEL_TIMEOUT_HPP

/** @file
 * @brief idlewheel::timeout: the handle wheel_timer::schedule() returns (Netty's Timeout).
 */

#include <idlewheel/core/wheel_core.hpp>

#include <cstdint>
#include <optional>
#include <utility>

namespace idlewheel {

namespace detail {

// The heap entry behind a handle: one allocation holding the node, a reference count
// (single-threaded: the wheel's reference while pending, plus one per handle) and the callback.
class timeout_entry : public own_entry {
public:
    enum class state : std::uint8_t { pending, expired, cancelled };

    void add_ref() noexcept { ++refs_; }
    void release() noexcept {
        if (--refs_ == 0) destroy_(this);
    }
    [[nodiscard]] state current() const noexcept { return state_; }

protected:
    using destroy_fn = void (*)(timeout_entry*);
    timeout_entry(act_fn how, destroy_fn destroy) noexcept : own_entry(kind::handle, how), destroy_(destroy) {}
    ~timeout_entry() = default;

    destroy_fn destroy_;
    std::uint32_t refs_ = 1;  // the wheel's
    state state_ = state::pending;
};

template <class F>
class timeout_fn_entry final : public timeout_entry {
public:
    template <class G>
    explicit timeout_fn_entry(G&& g) : timeout_entry(&act, &destroy), fn_(std::forward<G>(g)) {}

private:
    static void destroy(timeout_entry* e) noexcept { delete static_cast<timeout_fn_entry*>(e); }

    static void act(timer_entry& base, entry_action a) {
        auto& self = static_cast<timeout_fn_entry&>(base);
        // Whatever the callback does (throw included), it runs at most once, its captures are
        // released right after, and the wheel's reference goes.
        struct finish {
            timeout_fn_entry& e;
            ~finish() {
                e.fn_.reset();
                e.release();
            }
        } done{self};
        if (a == entry_action::fire) {
            self.state_ = state::expired;
            (*self.fn_)();
        } else {
            self.state_ = state::cancelled;
        }
    }

    std::optional<F> fn_;
};

}  // namespace detail

/**
 * The handle wheel_timer::schedule() returns (Netty's Timeout).
 *
 * A handle refers to one scheduled callback. The wheel keeps the callback alive while it is
 * pending; handles only observe it and can cancel it. Like the wheel, a handle belongs to the
 * wheel's executor: copy, cancel and destroy it there.
 *
 * @par Thread safety
 * Not thread-safe: the reference count is not atomic. cancel() is checked by the executor
 * check (IDLEWHEEL_CHECK_EXECUTOR); copies and destruction are not.
 *
 * Dropping every handle does not cancel the callback: the wheel still runs it.
 */
class timeout {
public:
    /// An empty handle: refers to nothing; cancel() returns false.
    timeout() noexcept = default;

    /// Another handle to the same timeout.
    /// @param other the handle copied.
    timeout(const timeout& other) noexcept : entry_(other.entry_) {
        if (entry_ != nullptr) entry_->add_ref();
    }
    /// Takes the reference of `other`, which becomes empty.
    /// @param other the handle moved from.
    timeout(timeout&& other) noexcept : entry_(std::exchange(other.entry_, nullptr)) {}
    /// Refers to what `other` refers to (copy or move).
    /// @param other the handle assigned.
    /// @return *this.
    timeout& operator=(timeout other) noexcept {
        std::swap(entry_, other.entry_);
        return *this;
    }
    /// Releases the handle's reference; never cancels the callback.
    ~timeout() {
        if (entry_ != nullptr) entry_->release();
    }

    /// Cancels the callback if it has not run yet, releasing it (and what it captured) at
    /// once. O(1). Returns true if this call cancelled it; false if it already ran (or is
    /// running), was cancelled before, was dropped by stop(), or the handle is empty.
    bool cancel() noexcept {
        if (entry_ == nullptr || entry_->current() != detail::timeout_entry::state::pending) return false;
        if (entry_->core() == nullptr || !entry_->core()->cancel(*entry_)) return false;
        entry_->act(detail::entry_action::discard);
        return true;
    }

    /// True once the callback has started running (Netty's isExpired()).
    [[nodiscard]] bool expired() const noexcept { return is(detail::timeout_entry::state::expired); }
    /// True if cancel() succeeded, or stop() / the wheel's destruction dropped it unrun.
    [[nodiscard]] bool cancelled() const noexcept { return is(detail::timeout_entry::state::cancelled); }
    /// True while it waits to run.
    [[nodiscard]] bool pending() const noexcept { return is(detail::timeout_entry::state::pending); }

    /// True if the handle refers to a timeout.
    explicit operator bool() const noexcept { return entry_ != nullptr; }
    /// True if both handles refer to the same timeout (or both are empty).
    /// @param a a handle.
    /// @param b another handle.
    /// @return whether they refer to the same timeout.
    friend bool operator==(const timeout& a, const timeout& b) noexcept { return a.entry_ == b.entry_; }

private:
    template <class, class>
    friend class basic_wheel_timer;
    explicit timeout(detail::timeout_entry* adopted) noexcept : entry_(adopted) {}

    [[nodiscard]] bool is(detail::timeout_entry::state s) const noexcept {
        return entry_ != nullptr && entry_->current() == s;
    }

    detail::timeout_entry* entry_ = nullptr;
};

}  // namespace idlewheel

#endif
