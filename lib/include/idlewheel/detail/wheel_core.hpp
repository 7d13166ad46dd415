// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_WHEEL_CORE_HPP
#define IDLEWHEEL_DETAIL_WHEEL_CORE_HPP

// The clock-free, Asio-free half of wheel_timer: the wheel, the batch of expired entries being
// run, the counters, and the expiry loop with its safety rules (folly's timeoutExpired):
//  - entries are collected first, then run one at a time, each unlinked before it runs, so a
//    callback may cancel or reschedule anything, including itself and entries of its batch;
//  - if a callback throws, the entries not yet run stay in the batch (none lost, none run
//    twice) and the driver is told to continue them later;
//  - if a callback destroys the wheel, the loop notices and touches nothing more.
// basic_wheel_timer<Clock, Executor> adds the clock and the one Asio timer on top.

#include <idlewheel/detail/wheel.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace idlewheel::detail {

class wheel_core;

// What the liveness layer (idle_watch, heartbeat, operation_deadline) reports, counted per
// wheel by cause.
enum class liveness_event : unsigned { reader_idle, writer_idle, all_idle, ping_sent, dead_peer, handshake_timeout, operation_timeout };

enum class entry_action {
    fire,     // due (or run ahead of time by expire_all): run the callback
    discard,  // the wheel is stopping or being destroyed: never run; release what it holds
};

// Everything the wheel holds is a timer_entry: a node plus how to fire it. The three kinds
// (timer_node, the heap entry behind a `timeout` handle, an async_wait operation) differ only
// in `act_`, so the expiry loop has one indirect call per entry and no virtual destructor.
class timer_entry : public wheel_node {
public:
    using act_fn = void (*)(timer_entry&, entry_action);
    enum class kind : std::uint8_t { node, handle, wait };

    timer_entry(kind k, act_fn how) noexcept : kind_(k), act_(how) {}
    timer_entry(const timer_entry&) = delete;
    timer_entry& operator=(const timer_entry&) = delete;
    inline ~timer_entry();

    [[nodiscard]] wheel_core* core() const noexcept { return core_; }
    [[nodiscard]] kind entry_kind() const noexcept { return kind_; }
    void act(entry_action a) { act_(*this, a); }

private:
    friend class wheel_core;
    kind kind_;
    bool staged_ = false;  // waiting for the next wake-up to be put in the wheel (see stage())
    act_fn act_;
    wheel_core* core_ = nullptr;
};

class wheel_core {
public:
    wheel_core(const wheel_core&) = delete;
    wheel_core& operator=(const wheel_core&) = delete;

    /// Entries scheduled and not yet run: staged, in the wheel, or expired and waiting in the
    /// batch.
    [[nodiscard]] std::size_t pending() const noexcept { return wheel_.size() + batch_size_ + staged_size_; }

    /// Removes a pending entry without running it. False if it was not pending (it ran, is
    /// running, was cancelled, or was never scheduled). O(1).
    bool cancel(timer_entry& e) noexcept {
        if (!e.linked()) return false;
        detach(e);
        ++counters_.cancelled;
        // An epoch touched in this tick still waits to be closed at the next one: the driver
        // must keep that wake-up (later touches of the same epoch do not ask again).
        if (pending() == 0 && !epoch_open()) became_empty();
        return true;
    }

    // ---- Activity marks (idle_watch, heartbeat) -------------------------------------------
    //
    // Recording activity must not read the clock or touch the Asio timer: it is done for every
    // message. So time is cut into epochs: the current epoch stays open while sessions are
    // touched, and the first wake-up after it (the driver is asked for one at the next tick
    // boundary) closes it, reading the clock once and keeping that time in a ring. A touch
    // stores the number of the open epoch; later, when a watch comes due, the mark resolves to
    // the time its epoch was closed: never earlier than the activity (no false idle report),
    // and at most one tick plus the wake-up's delay after it. Nothing is visited per touched
    // session, ever.
    //
    // A mark is a negative int64 (minus the epoch number); a resolved time is >= 0, in the
    // wheel clock's units since its origin. A watch keeps either in the same field.

    static constexpr std::size_t epoch_ring = 8192;  // closed epochs whose end time is kept

    /// The mark of activity now: a load and, once per epoch, a flag store and a request for a
    /// wake-up at the next tick.
    [[nodiscard]] std::int64_t activity_mark() noexcept {
        if (!epoch_touched_) {
            epoch_touched_ = true;
            epoch_needs_closing();
        }
        return -static_cast<std::int64_t>(epoch_);
    }

    /// What `v` (a mark, or a time) stands for as of `now`: a time no earlier than the
    /// activity. A mark of the open epoch resolves to `now` (the activity happened before it).
    /// A mark older than the ring resolves to the oldest kept end, which is later than its own:
    /// late, never early. Users keep marks from getting that old (see max_mark_age()).
    [[nodiscard]] std::int64_t resolve(std::int64_t v, std::int64_t now) const noexcept {
        if (v >= 0) return v;
        auto e = static_cast<std::uint64_t>(-v);
        if (e >= epoch_) return now;
        if (epoch_ - e > epoch_ring) e = epoch_ - epoch_ring;
        return epoch_end_[e % epoch_ring];
    }

    /// `v` as a time if its epoch is closed, else `v` unchanged: what a watch may store. (A
    /// mark of the open epoch must stay a mark: the activity may be later than any "now" the
    /// watch could put in its place.)
    [[nodiscard]] std::int64_t settled(std::int64_t v) const noexcept {
        if (v >= 0 || static_cast<std::uint64_t>(-v) >= epoch_) return v;
        return resolve(v, 0);
    }

    /// Epochs close at most once per tick, so a mark resolves exactly while it is younger
    /// than this many ticks. A watch re-checks at least this often.
    static constexpr std::uint64_t max_mark_age() noexcept { return epoch_ring / 2; }

protected:
    // Closes the open epoch at `now` (the wheel clock's count since origin), if touched.
    void close_epoch(std::int64_t now) noexcept {
        if (!epoch_touched_) return;
        epoch_end_[epoch_ % epoch_ring] = now;
        ++epoch_;
        epoch_touched_ = false;
    }
    [[nodiscard]] bool epoch_open() const noexcept { return epoch_touched_; }

    // The open epoch was touched for the first time: the driver must wake at the next tick.
    virtual void epoch_needs_closing() noexcept = 0;

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
        std::uint64_t events[7] = {};  // by liveness_event
    };

    wheel_core() noexcept = default;
    ~wheel_core() {
        if (destroyed_ != nullptr) *destroyed_ = true;
        discard_all();
    }

    // Called when the last pending entry was cancelled: the driver may disarm.
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
    // now: the entry is appended to a list, and the open epoch is touched so that the driver
    // wakes at the next tick boundary (see activity_mark()). That wake-up reads the clock once
    // for the epoch and puts every staged entry in the wheel at that time + its delay
    // (flush_staged()): never earlier than `delay` after this call, since the reading comes
    // after it, and at most the time to that wake-up later. An entry scheduled and cancelled
    // within one tick never reaches the wheel. Same checks and counters as place().
    bool stage(timer_entry& e, std::uint64_t delay, std::size_t max_pending) noexcept {
        if (!admit(e, max_pending)) return false;
        e.park(delay);
        e.staged_ = true;
        staged_.push_back(e);
        ++staged_size_;
        if (!epoch_touched_) {
            epoch_touched_ = true;
            epoch_needs_closing();
        }
        return true;
    }

    [[nodiscard]] bool has_staged() const noexcept { return staged_size_ != 0; }

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

    // Notices the wheel's destruction while callbacks run (folly's timeoutExpired guard).
    // Watches nest (expire_all() inside a callback); a destruction is reported to all.
    class destruction_watch {
    public:
        explicit destruction_watch(wheel_core& core) noexcept : core_(&core), outer_(core.destroyed_) {
            core.destroyed_ = &destroyed_;
        }
        destruction_watch(const destruction_watch&) = delete;
        destruction_watch& operator=(const destruction_watch&) = delete;
        ~destruction_watch() {
            if (destroyed_) {
                if (outer_ != nullptr) *outer_ = true;
            } else {
                core_->destroyed_ = outer_;
            }
        }
        [[nodiscard]] bool destroyed() const noexcept { return destroyed_; }

    private:
        wheel_core* core_;
        bool* outer_;
        bool destroyed_ = false;
    };

    // Runs up to `budget` entries of the batch, oldest first; `late(e)` sees each before it
    // runs. Stops early if `watch` reports the wheel destroyed: then the caller must touch no
    // member. Exceptions from a callback propagate; the entry that threw has run (once), the
    // rest stay in the batch. Returns how many ran.
    template <class Late>
    std::size_t run_batch(std::size_t budget, const destruction_watch& watch, Late&& late) {
        std::size_t ran = 0;
        while (ran != budget && !batch_.empty()) {
            auto& e = static_cast<timer_entry&>(*batch_.pop_front());
            --batch_size_;
            ++counters_.expired;
            ++ran;
            late(e);
            e.act_(e, entry_action::fire);  // may throw, cancel, reschedule, destroy the wheel
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
            e.core_ = nullptr;
            each(e);
            e.act_(e, entry_action::discard);
            ++n;
        }
        counters_.stopped += n;
        return n;
    }
    std::size_t discard_all() noexcept {
        return discard_all([](timer_entry&) {});
    }

    [[nodiscard]] bool batch_empty() const noexcept { return batch_.empty(); }

    wheel wheel_;
    counters counters_;
    bool stopped_ = false;

private:
    friend class timer_entry;

    // The checks and the bookkeeping of putting `e` anywhere (wheel or staging list): refuses
    // if stopped or full, takes it out of where it was (this wheel or another), counts it.
    bool admit(timer_entry& e, std::size_t max_pending) noexcept {
        const bool moving = e.linked() && e.core_ == this;
        if (stopped_ || (!moving && max_pending != 0 && pending() >= max_pending)) {
            ++counters_.rejected;
            return false;
        }
        if (e.linked()) {
            // Rescheduling a pending entry, possibly from another wheel.
            if (e.core_ == this) {
                detach(e);
                ++counters_.rescheduled;
            } else {
                e.core_->cancel(e);
            }
        }
        e.core_ = this;
        ++counters_.scheduled;
        return true;
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

    hook_list batch_;
    std::size_t batch_size_ = 0;
    hook_list staged_;
    std::size_t staged_size_ = 0;
    std::uint64_t epoch_ = 1;  // the open epoch; 0 is never used, so no mark is 0
    bool epoch_touched_ = false;
    std::array<std::int64_t, epoch_ring> epoch_end_{};
    bool* destroyed_ = nullptr;
};

inline timer_entry::~timer_entry() {
    if (linked() && core_ != nullptr) core_->cancel(*this);
}

}  // namespace idlewheel::detail

#endif
