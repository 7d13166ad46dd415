// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_INTRUSIVE_LIST_HPP
#define IDLEWHEEL_CORE_INTRUSIVE_LIST_HPP

// A circular doubly-linked list with a sentinel. A hook that is not in a list points at
// itself, so unlinking needs neither the list nor a branch on "am I first or last": that is
// what makes cancel O(1) from anywhere (a wheel slot, or a batch of expired entries that is
// being run).

#include <cassert>

namespace idlewheel::detail {

class list_hook {
public:
    list_hook() noexcept = default;
    list_hook(const list_hook&) = delete;
    list_hook& operator=(const list_hook&) = delete;
    ~list_hook() { unlink_hook(); }

    [[nodiscard]] bool hook_linked() const noexcept { return next_ != this; }

    void unlink_hook() noexcept {
        prev_->next_ = next_;
        next_->prev_ = prev_;
        next_ = prev_ = this;
    }

private:
    friend class hook_list;
    list_hook* next_ = this;
    list_hook* prev_ = this;
};

// The list owns nothing: destroying it only detaches the hooks still in it.
class hook_list {
public:
    hook_list() noexcept = default;
    hook_list(const hook_list&) = delete;
    hook_list& operator=(const hook_list&) = delete;
    ~hook_list() { clear(); }

    [[nodiscard]] bool empty() const noexcept { return !head_.hook_linked(); }
    [[nodiscard]] list_hook* front() const noexcept { return empty() ? nullptr : head_.next_; }

    void push_back(list_hook& h) noexcept {
        assert(!h.hook_linked());
        h.prev_ = head_.prev_;
        h.next_ = &head_;
        head_.prev_->next_ = &h;
        head_.prev_ = &h;
    }

    list_hook* pop_front() noexcept {
        list_hook* h = front();
        if (h != nullptr) h->unlink_hook();
        return h;
    }

    // Moves every hook of `other` to the back of this list, in order. O(1).
    void splice_back(hook_list& other) noexcept {
        if (other.empty()) return;
        list_hook* first = other.head_.next_;
        list_hook* last = other.head_.prev_;
        other.head_.next_ = other.head_.prev_ = &other.head_;
        first->prev_ = head_.prev_;
        last->next_ = &head_;
        head_.prev_->next_ = first;
        head_.prev_ = last;
    }

    void clear() noexcept {
        while (pop_front() != nullptr) {}
    }

    // Visits every hook; `f` must not unlink hooks other than the one it is given.
    template <class F>
    void for_each(F&& f) {
        for (list_hook* h = head_.next_; h != &head_;) {
            list_hook* next = h->next_;
            f(*h);
            h = next;
        }
    }

private:
    list_hook head_;
};

}  // namespace idlewheel::detail

#endif
