// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_WHEEL_CORE_HPP
#define IDLEWHEEL_CORE_WHEEL_CORE_HPP

// The clock-free, Asio-free half of wheel_timer: the wheel, the batch of expired entries being
// run, the counters, and the expiry loop with its safety rules (folly's timeoutExpired):
//  - entries are collected first, then run one at a time, each unlinked before it runs, so a
//    callback may cancel or reschedule anything, including itself and entries of its batch;
//  - if a callback throws, the entries not yet run stay in the batch (none lost, none run
//    twice) and the driver is told to continue them later;
//  - if a callback destroys the wheel, the loop notices and touches nothing more.
// basic_wheel_timer<Clock, Executor> adds the clock and the one Asio timer on top.

#include <idlewheel/core/check_config.hpp>
#include <idlewheel/core/destruction_guard.hpp>
#include <idlewheel/core/timer_entry.hpp>
#include <idlewheel/core/wheel.hpp>

#include <cstddef>
#include <cstdint>

// The few functions on the schedule path that the compiler would otherwise keep out of line
// (GCC 12 did for admit(), costing 0.4 ns of a 4 ns per_tick schedule + cancel).
#if defined(__GNUC__) || defined(__clang__)
#define IDLEWHEEL_HOT_INLINE [[gnu::always_inline]] inline
#else
#define IDLEWHEEL_HOT_INLINE inline
#endif

namespace idlewheel::detail {

// The data structure, as the first base of wheel_core: a node's owner (a wheel*) then finds
// its wheel_core without a pointer of its own (a standard-layout struct and its first member
// share an address; a base converts to its derived class).
struct wheel_holder {
    wheel wheel_;
};

class wheel_core : protected wheel_holder {
public:
    wheel_core(const wheel_core&) = delete;
    wheel_core& operator=(const wheel_core&) = delete;

    /// Entries scheduled and not yet run: staged, in the wheel, or expired and waiting in the
    /// batch.
    [[nodiscard]] std::size_t pending() const noexcept { return wheel_.size() + batch_size_ + staged_size_; }

    /// Removes a pending entry without running it. False if it was not pending (it ran, is
    /// running, was cancelled, or was never scheduled). O(1).
    bool cancel(timer_entry& e) noexcept {
#if IDLEWHEEL_CHECK_EXECUTOR
        check_caller();  // a node, handle or liveness object cancelled off the wheel's executor
#endif
        if (!e.linked()) return false;
        detach(e);
        ++counters_.cancelled;
        // A wake-up asked for the next tick (staging, an activity epoch) is kept: entries that
        // are scheduled and cancelled within a tick then cost no Asio timer operation at all.
        if (!next_tick_asked_ && pending() == 0) became_empty();
        return true;
    }

protected:
    // Asks the driver for a wake-up at the next tick boundary (staged entries, and the
    // activity epoch the liveness layer touched, are handled there).
    virtual void wake_next_tick() noexcept = 0;

    // Aborts with a message if called off the driver's executor (detail/executor_check.hpp).
    virtual void check_caller() const noexcept = 0;

    // Asks for the next tick's wake-up, once per tick (the driver clears the flag when it
    // wakes up).
    void ask_next_tick() noexcept {
        if (next_tick_asked_) return;
        next_tick_asked_ = true;
        wake_next_tick();
    }
    bool next_tick_asked_ = false;

    struct counters {
        std::uint64_t scheduled = 0;
        std::uint64_t rescheduled = 0;
        std::uint64_t expired = 0;
        std::uint64_t cancelled = 0;
        std::uint64_t stopped = 0;
        std::uint64_t rejected = 0;
        std::uint64_t wakeups = 0;
        std::uint64_t idle_wakeups = 0;
        std::uint64_t ticks_advanced = 0;
    };

    wheel_core() noexcept = default;
    ~wheel_core() { discard_all_quietly(); }

    // Called when the last pending entry was cancelled: the driver may disarm (unless it
    // still needs the next tick's wake-up for something else).
    virtual void became_empty() noexcept = 0;

    // Puts `e` in the wheel at `deadline` (moving it if pending). Checks max_pending.
    // Returns false (and counts a rejection) if the wheel is full or stopped.
    bool place(timer_entry& e, wheel::tick_type deadline, std::size_t max_pending) noexcept {
        if (!admit(e, max_pending)) return false;
        wheel_.insert(e, deadline);
        return true;
    }

    // Staging (wheel_options::clock_read::per_tick). Schedules `e` to fire `delay` (in the
    // wheel clock's units) after the time the next wake-up reads, without reading the clock
    // now: the entry is appended to a list, and the driver is asked for a wake-up at the next
    // tick boundary (ask_next_tick(): once per tick). That wake-up reads the clock once
    // and puts every staged entry in the wheel at that time + its delay
    // (flush_staged()): never earlier than `delay` after this call, since the reading comes
    // after it, and at most the time to that wake-up later. An entry scheduled and cancelled
    // within one tick never reaches the wheel. Same checks and counters as place().
    bool stage(timer_entry& e, std::uint64_t delay, std::size_t max_pending) noexcept {
        if (!admit(e, max_pending)) return false;
        e.park(delay);
        e.staged_ = true;
        staged_.push_back(e);
        ++staged_size_;
        ask_next_tick();
        return true;
    }

    [[nodiscard]] bool has_staged() const noexcept { return staged_size_ != 0; }

    // True if `e` is staged: its deadline() holds its delay, which starts at the next wake-up.
    [[nodiscard]] static bool is_staged(const timer_entry& e) noexcept { return e.staged_; }

    // Puts every staged entry in the wheel at `deadline_of(delay)`, in the order they were
    // staged (so entries due in the same tick keep their schedule order).
    template <class DeadlineOf>
    void flush_staged(DeadlineOf&& deadline_of) noexcept {
        while (list_hook* h = staged_.pop_front()) {
            auto& e = static_cast<timer_entry&>(*h);
            e.staged_ = false;
            --staged_size_;
            wheel_.insert(e, deadline_of(e.deadline()));
        }
    }

    // Advances the wheel to `now_tick`, moving due entries into the batch.
    std::size_t collect(wheel::tick_type now_tick) noexcept {
        if (now_tick <= wheel_.now()) return 0;
        counters_.ticks_advanced += now_tick - wheel_.now();
        const std::size_t n = wheel_.advance(now_tick, batch_);
        batch_size_ += n;
        return n;
    }

    // Moves every pending entry into the batch: the wheel's in deadline order, then the
    // staged ones in schedule order (a driver that wants them in deadline order among the
    // rest, as expire_all() does, flushes them first).
    std::size_t collect_all() noexcept {
        std::size_t n = wheel_.take_all(batch_);
        while (list_hook* h = staged_.pop_front()) {
            static_cast<timer_entry&>(*h).staged_ = false;
            batch_.push_back(*h);
            ++n;
        }
        staged_size_ = 0;
        batch_size_ += n;
        return n;
    }

    // Runs up to `budget` entries of the batch, oldest first; `late(e)` sees each before it
    // runs. Stops early if `watch` reports the wheel destroyed: then the caller must touch no
    // member. Exceptions from a callback propagate; the entry that threw has run (once), the
    // rest stay in the batch. Returns how many ran.
    template <class Late>
    std::size_t run_batch(std::size_t budget, const destruction_guard& watch, Late&& late) {
        std::size_t ran = 0;
        while (ran != budget && !batch_.empty()) {
            auto& e = static_cast<timer_entry&>(*batch_.pop_front());
            --batch_size_;
            ++counters_.expired;
            ++ran;
            late(e);
            e.act(entry_action::fire);  // may throw, cancel, reschedule, destroy the wheel
            if (watch.destroyed()) break;
        }
        return ran;
    }

    // Takes every pending entry out and discards it (stop(), destruction). Handles see
    // cancelled(); async waits complete with operation_aborted; nodes become idle.
    template <class Each>
    std::size_t discard_all(Each&& each) noexcept {
        collect_all();
        std::size_t n = 0;
        while (list_hook* h = batch_.pop_front()) {
            auto& e = static_cast<timer_entry&>(*h);
            --batch_size_;
            e.set_owner(nullptr);
            each(e);
            e.act(entry_action::discard);
            ++n;
        }
        counters_.stopped += n;
        return n;
    }
    std::size_t discard_all() noexcept {
        return discard_all([](timer_entry&) {});
    }

    // What the wheel's destructor does: as discard_all(), but a kind::liveness entry is let go
    // of without a call through its table (its config may already be destroyed: a server's
    // configs, pool and wheels may go in any order). Its owner is not told (it goes on
    // reporting the phase it had); it touches no wheel from then on (its entry is unlinked).
    std::size_t discard_all_quietly() noexcept {
        collect_all();
        std::size_t n = 0;
        while (list_hook* h = batch_.pop_front()) {
            auto& e = static_cast<timer_entry&>(*h);
            --batch_size_;
            e.set_owner(nullptr);
            if (e.entry_kind() != timer_entry::kind::liveness) e.act(entry_action::discard);
            ++n;
        }
        counters_.stopped += n;
        return n;
    }

    [[nodiscard]] bool batch_empty() const noexcept { return batch_.empty(); }

    destruction_notice destruction_;  // tells run_batch() (through its guard) that a callback destroyed the wheel

    counters counters_;
    bool stopped_ = false;

private:
    friend class timer_entry;

    // The checks and the bookkeeping of putting `e` anywhere (wheel or staging list): refuses
    // if stopped or full, takes it out of where it was (this wheel or another), counts it.
    // Kept small for the common cases (a new entry, one of this wheel's moving) so that it
    // inlines into schedule; the rest is in admit_rare().
    IDLEWHEEL_HOT_INLINE bool admit(timer_entry& e, std::size_t max_pending) noexcept {
        wheel_core* const from = e.linked() ? e.core() : nullptr;
        if (stopped_) return reject();
        if (from == this) {  // rescheduling a pending entry of this wheel: never refused as full
            detach(e);
            ++counters_.rescheduled;
        } else if (from != nullptr || (max_pending != 0 && pending() >= max_pending)) {
            if (!admit_rare(e, from, max_pending)) return false;
        }
        e.set_owner(&wheel_);
        ++counters_.scheduled;
        return true;
    }

    // admit() for an entry of another wheel, or with max_pending to check.
    bool admit_rare(timer_entry& e, wheel_core* from, std::size_t max_pending) noexcept {
        if (max_pending != 0 && pending() >= max_pending) return reject();
        if (from != nullptr) from->cancel(e);  // an entry of another wheel
        return true;
    }

    bool reject() noexcept {
        ++counters_.rejected;
        return false;
    }

    void detach(timer_entry& e) noexcept {
        if (e.staged_) {
            e.staged_ = false;
            --staged_size_;
        } else if (!e.in_wheel()) {
            --batch_size_;  // it was expired, waiting in the batch
        }
        e.unlink();
    }

    [[nodiscard]] static wheel_core* of(wheel* w) noexcept {
        return static_cast<wheel_core*>(reinterpret_cast<wheel_holder*>(w));
    }

    hook_list batch_;
    std::size_t batch_size_ = 0;
    hook_list staged_;
    std::size_t staged_size_ = 0;
};

inline wheel_core* timer_entry::core() const noexcept { return owner() != nullptr ? wheel_core::of(owner()) : nullptr; }

inline timer_entry::~timer_entry() {
    if (!linked()) return;
    if (wheel_core* c = core()) c->cancel(*this);
}

inline bool shared_entry::cancel() noexcept {
    if (!linked()) return false;
    wheel_core* c = core();
    return c != nullptr && c->cancel(*this);
}

}  // namespace idlewheel::detail

#endif
