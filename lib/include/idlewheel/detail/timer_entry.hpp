// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_TIMER_ENTRY_HPP
#define IDLEWHEEL_DETAIL_TIMER_ENTRY_HPP

// Everything a wheel holds is a timer_entry: a wheel node plus how to fire it. The three
// kinds (timer_node, the heap entry behind a `timeout` handle, an async_wait operation) differ
// only in `act_`, so the expiry loop makes one indirect call per entry and no entry needs a
// virtual destructor.

#include <idlewheel/detail/wheel.hpp>

#include <cstdint>

namespace idlewheel::detail {

class wheel_core;

enum class entry_action {
    fire,     // due (or run ahead of time by expire_all): run the callback
    discard,  // the wheel is stopping or being destroyed: never run; release what it holds
};

class timer_entry : public wheel_node {
public:
    using act_fn = void (*)(timer_entry&, entry_action);
    enum class kind : std::uint8_t { node, handle, wait };

    timer_entry(kind k, act_fn how) noexcept : kind_(k), act_(how) {}
    timer_entry(const timer_entry&) = delete;
    timer_entry& operator=(const timer_entry&) = delete;
    inline ~timer_entry();  // cancels a pending entry (defined in wheel_core.hpp)

    /// The wheel it was last scheduled on (nullptr once that wheel stopped or died).
    [[nodiscard]] wheel_core* core() const noexcept { return core_; }
    [[nodiscard]] kind entry_kind() const noexcept { return kind_; }
    void act(entry_action a) { act_(*this, a); }

private:
    friend class wheel_core;
    kind kind_;
    bool staged_ = false;  // waiting for the next wake-up to be put in the wheel (clock_read::per_tick)
    act_fn act_;
    wheel_core* core_ = nullptr;
};

}  // namespace idlewheel::detail

#endif
