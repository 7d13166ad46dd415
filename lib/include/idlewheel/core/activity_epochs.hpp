// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_ACTIVITY_EPOCHS_HPP
#define IDLEWHEEL_CORE_ACTIVITY_EPOCHS_HPP

// Activity epochs: how recording activity costs a store and no clock read.
//
// Recording activity is done for every message, so it must not read the clock or touch the
// Asio timer. Time is cut into epochs: the current epoch stays open while it is touched, and
// the first wake-up of the wheel after it (the wheel is asked for one at the next tick
// boundary when an epoch is first touched) closes it, reading the clock once and keeping that
// time in a ring. A touch stores the number of the open epoch (a "mark"); later, when a watch
// comes due, the mark resolves to the time its epoch was closed: never earlier than the
// activity (no false idle report), and at most one tick plus the wake-up's delay after it.
// Nothing is visited per touched session, ever.
//
// A mark is a negative int64 (minus the epoch number); a resolved time is >= 0, in the wheel
// clock's units since its origin. A watch keeps either in the same field.
//
// The component knows no clock and no Asio: the wheel closes epochs at its wake-ups; the
// liveness layer makes and resolves marks (through detail::liveness_access).

#include <array>
#include <cstddef>
#include <cstdint>

namespace idlewheel::detail {

class activity_epochs {
public:
    static constexpr std::size_t ring = 8192;  // closed epochs whose end time is kept

    /// Epochs close at most once per tick, so a mark resolves exactly while it is younger
    /// than this many ticks. A watch re-checks at least this often.
    static constexpr std::uint64_t max_mark_age() noexcept { return ring / 2; }

    /// Marks the open epoch as used. True if this is its first use: then the owner must make
    /// sure a wake-up closes it at the next tick boundary (a return value, not an upcall).
    [[nodiscard]] bool touch() noexcept {
        if (touched_) return false;
        touched_ = true;
        return true;
    }

    /// The mark of the open epoch (what a session stores for "activity now").
    [[nodiscard]] std::int64_t mark() const noexcept { return -static_cast<std::int64_t>(epoch_); }

    /// True while the open epoch has been touched and not closed.
    [[nodiscard]] bool open() const noexcept { return touched_; }

    /// Closes the open epoch at time `now`, if it was touched.
    void close(std::int64_t now) noexcept {
        if (!touched_) return;
        end_[epoch_ % ring] = now;
        ++epoch_;
        touched_ = false;
    }

    /// What `v` (a mark, or a time) stands for as of `now`: a time no earlier than the
    /// activity. A mark of the open epoch resolves to `now` (the activity happened before it).
    /// A mark older than the ring resolves to the oldest kept end, which is later than its own:
    /// late, never early. Users keep marks from getting that old (see max_mark_age()).
    [[nodiscard]] std::int64_t resolve(std::int64_t v, std::int64_t now) const noexcept {
        if (v >= 0) return v;
        auto e = static_cast<std::uint64_t>(-v);
        if (e >= epoch_) return now;
        if (epoch_ - e > ring) e = epoch_ - ring;
        return end_[e % ring];
    }

    /// `v` as a time if its epoch is closed, else `v` unchanged: what a watch may store. (A
    /// mark of the open epoch must stay a mark: the activity may be later than any "now" the
    /// watch could put in its place.)
    [[nodiscard]] std::int64_t settled(std::int64_t v) const noexcept {
        if (v >= 0 || static_cast<std::uint64_t>(-v) >= epoch_) return v;
        return resolve(v, 0);
    }

    // Compact (32-bit) marks, for liveness state that must fit a few bytes per session: the
    // top bit set, the low 31 bits of the epoch number below it. The full number is the latest
    // epoch up to the open one with those low bits, so a compact mark expands exactly while it
    // is younger than 2^31 epochs: far beyond max_mark_age(), which users keep to anyway. A
    // 32-bit field without the top bit holds whatever else its owner stores (a time in its
    // own units, say).
    static constexpr std::uint32_t compact_mark_bit = 0x8000'0000U;

    /// The compact mark of the open epoch.
    [[nodiscard]] std::uint32_t compact_mark() const noexcept {
        return compact_mark_bit | static_cast<std::uint32_t>(epoch_ & (compact_mark_bit - 1U));
    }

    /// True if the 32-bit value is a compact mark.
    [[nodiscard]] static constexpr bool is_compact_mark(std::uint32_t v) noexcept {
        return (v & compact_mark_bit) != 0;
    }

    /// A compact mark as a full mark (what resolve() and settled() take).
    [[nodiscard]] std::int64_t expand(std::uint32_t compact) const noexcept {
        const std::uint64_t low = compact & (compact_mark_bit - 1U);
        const std::uint64_t age = (epoch_ - low) & (compact_mark_bit - 1U);
        return -static_cast<std::int64_t>(epoch_ - age);
    }

    /// True if the full mark `v` belongs to an epoch already closed (it resolves to a fixed time).
    [[nodiscard]] bool closed(std::int64_t v) const noexcept {
        return v < 0 && static_cast<std::uint64_t>(-v) < epoch_;
    }

private:
    std::uint64_t epoch_ = 1;  // the open epoch; 0 is never used, so no mark is 0
    bool touched_ = false;
    std::array<std::int64_t, ring> end_{};
};

}  // namespace idlewheel::detail

#endif
