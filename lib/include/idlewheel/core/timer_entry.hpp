// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_TIMER_ENTRY_HPP
#define IDLEWHEEL_CORE_TIMER_ENTRY_HPP

// Everything a wheel holds is a timer_entry: a wheel node plus how to fire it. An entry costs
// what the wheel needs and no more (40 bytes on LP64): the wheel it belongs to is its node's
// owner (wheel_core finds itself from it), and how to fire it is found through its kind:
//  - own_entry: the entry carries its fire/discard function (timer_node, the heap entry
//    behind a `timeout` handle, an async_wait operation); 48 bytes;
//  - shared_entry: the function lives in a table shared by every entry of one type, and the
//    entry keeps a pointer to it, which its owner may use for more (a per-thread configuration
//    of many sessions: the one pointer serves both); 48 bytes. A table its owner may destroy
//    before the wheel (a session config: servers tear down in any order) makes its entries
//    kind::liveness: the wheel's destructor lets go of them without calling the table.
// The expiry loop makes one indirect call per entry; no entry needs a virtual destructor.

#include <idlewheel/core/wheel.hpp>

#include <cstdint>

namespace idlewheel::detail {

class wheel_core;

enum class entry_action {
    fire,     // due (or run ahead of time by expire_all): run the callback
    discard,  // the wheel is stopping or being destroyed: never run; release what it holds
};

class timer_entry;
using act_fn = void (*)(timer_entry&, entry_action);

class timer_entry : public wheel_node {
public:
    // liveness: a shared entry whose table (a session config) may be destroyed before the
    // wheel; ~wheel_core lets go of it without calling the table (discard_all_quietly()).
    enum class kind : std::uint8_t { node, handle, wait, shared, liveness };

    timer_entry(const timer_entry&) = delete;
    timer_entry& operator=(const timer_entry&) = delete;

    /// The wheel it was last scheduled on (nullptr before, and once that wheel stopped or
    /// died). Defined in wheel_core.hpp.
    [[nodiscard]] inline wheel_core* core() const noexcept;
    [[nodiscard]] kind entry_kind() const noexcept { return kind_; }
    inline void act(entry_action a);

protected:
    explicit timer_entry(kind k) noexcept : kind_(k) {}
    inline ~timer_entry();  // cancels a pending entry (defined in wheel_core.hpp)

private:
    friend class wheel_core;
    kind kind_;
    bool staged_ = false;  // waiting for the next wake-up to be put in the wheel (clock_read::per_tick)
};

/// An entry that carries its own fire/discard function.
class own_entry : public timer_entry {
protected:
    own_entry(kind k, act_fn how) noexcept : timer_entry(k), act_(how) {}
    ~own_entry() = default;

private:
    friend class timer_entry;
    act_fn act_;
};

/// What entries of one type share: how to fire or discard them.
struct entry_table {
    act_fn act;
};

/// An entry whose fire/discard function is in a table shared by all entries of its type.
class shared_entry : public timer_entry {
public:
    /// True while scheduled and not yet run.
    [[nodiscard]] bool pending() const noexcept { return linked(); }
    /// Unschedules it. True if it was pending. O(1). Defined in wheel_core.hpp.
    inline bool cancel() noexcept;

protected:
    explicit shared_entry(const entry_table* table, kind k = kind::shared) noexcept : timer_entry(k), table_(table) {}
    ~shared_entry() = default;

    const entry_table* table_;  // never null

private:
    friend class timer_entry;
};

inline void timer_entry::act(entry_action a) {
    if (kind_ == kind::shared || kind_ == kind::liveness)
        static_cast<shared_entry&>(*this).table_->act(*this, a);
    else
        static_cast<own_entry&>(*this).act_(*this, a);
}

}  // namespace idlewheel::detail

// core() and the destructor are defined in wheel_core.hpp (they need wheel_core): included
// here, after timer_entry, so that this header compiles on its own (either may come first).
#include <idlewheel/core/wheel_core.hpp>

#endif
