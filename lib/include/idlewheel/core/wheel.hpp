// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_WHEEL_HPP
#define IDLEWHEEL_CORE_WHEEL_HPP

// The pure data structure under wheel_timer: a hierarchical timing wheel counted in ticks.
// No clock, no Asio, no allocation; time is an argument (ratas' advance(), Seastar's
// expire(now)), so its tests are exact.
//
// Layout (the Linux / tokio scheme). 11 levels of 64 slots; slot s of level L holds nodes
// whose deadline shares every digit above L (base 64) with now() and has digit L equal to s.
// A level's slots are 64^L ticks wide, so 11 levels cover the whole 64-bit tick range: any
// deadline a uint64 can hold has a place, and "years ahead" needs no special case. Each level
// keeps a 64-bit occupancy mask, so finding the next non-empty slot is a rotate and a
// count-trailing-zeros per level, never a scan.
//
// Invariants (checked by the differential test against a multimap model):
//  - every node in level L has deadline > now(), and its slot at L is ahead of now()'s digit;
//  - a node in level 0 fires at exactly its deadline tick; a node in a higher level is moved
//    down ("cascaded") when advance() reaches its slot's first tick, and fires later at its
//    exact tick, never early;
//  - nodes due at the same tick come out in the order they were inserted (FIFO).

#include <idlewheel/core/bits.hpp>
#include <idlewheel/core/intrusive_list.hpp>

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace idlewheel::detail {

class wheel;

// Intrusive entry. A node is in at most one place: a wheel slot (in_wheel()), a list of
// expired nodes handed out by advance() (linked() but not in_wheel()), or nowhere.
// unlink() takes it out of either in O(1); the destructor does the same.
class wheel_node : public list_hook {
public:
    using tick_type = std::uint64_t;

    wheel_node() noexcept = default;
    ~wheel_node() { unlink(); }

    [[nodiscard]] bool linked() const noexcept { return hook_linked(); }
    [[nodiscard]] bool in_wheel() const noexcept { return in_wheel_; }
    // The wheel it was last put in; kept while it is handed out by advance() (its owner may
    // still need to know), cleared when that wheel is destroyed with the node in a slot.
    [[nodiscard]] wheel* owner() const noexcept { return owner_; }
    // The tick it was inserted for (after clamping); meaningful once inserted.
    [[nodiscard]] tick_type deadline() const noexcept { return deadline_; }
    // While the node is not in a wheel, its owner may keep a value in the deadline's place
    // (wheel_core keeps a staged entry's delay there); insert() overwrites it.
    void park(tick_type value) noexcept {
        assert(!in_wheel());
        deadline_ = value;
    }

    inline void unlink() noexcept;

    // Claims (or releases) a node that is not in a wheel's slot for wheel `w`.
    void set_owner(wheel* w) noexcept {
        assert(!in_wheel());
        owner_ = w;
    }

private:
    friend class wheel;
    wheel* owner_ = nullptr;
    tick_type deadline_ = 0;
    std::uint32_t index_ = 0;  // level * 64 + slot, while in_wheel()
    bool in_wheel_ = false;    // derived classes may keep a few bytes of their own after it
};

class wheel {
public:
    using tick_type = std::uint64_t;
    static constexpr unsigned slot_bits = 6;
    static constexpr unsigned slots_per_level = 1U << slot_bits;
    static constexpr unsigned levels = (64 + slot_bits - 1) / slot_bits;  // 11
    static constexpr tick_type max_tick = std::numeric_limits<tick_type>::max();

    explicit wheel(tick_type now = 0) noexcept : now_(now) {}
    wheel(const wheel&) = delete;
    wheel& operator=(const wheel&) = delete;

    // Detaches every node still in the wheel (they become unlinked; none is run).
    ~wheel() {
        for (unsigned i = 0; i < levels * slots_per_level; ++i) {
            slots_[i].for_each([](list_hook& h) {
                auto& n = static_cast<wheel_node&>(h);
                n.owner_ = nullptr;
                n.in_wheel_ = false;
            });
            slots_[i].clear();
        }
    }

    [[nodiscard]] tick_type now() const noexcept { return now_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

    // Puts an unlinked node in the wheel to fire at tick `deadline`. A deadline at or before
    // now() means "as soon as possible": it is treated as now() + 1, the next tick advance()
    // can reach, so nothing is ever handed out before its deadline. O(1).
    // Requires now() < max_tick (a wheel whose time reached the last tick takes nothing more).
    void insert(wheel_node& node, tick_type deadline) noexcept {
        assert(!node.linked());
        assert(now_ != max_tick);
        if (deadline <= now_) deadline = now_ + 1;
        node.deadline_ = deadline;
        link(node);
    }

    // The first tick at which advance() has work: a node to hand out or a slot to cascade.
    // No node is due before it. Empty when the wheel is empty. O(levels).
    //
    // For a slot above level 0 this is not the slot's first tick but the smallest deadline
    // ever inserted into it since it was last emptied (a hint kept on insert). The hint can
    // only be too early (a node with that deadline may have been removed since), never too
    // late, so a driver that sleeps until next_due() wakes at most once more per level a
    // timeout crosses, and usually exactly once: when it is due.
    [[nodiscard]] std::optional<tick_type> next_due() const noexcept {
        const auto e = next_expiration();
        if (!e) return std::nullopt;
        if (e->level == 0) return e->start;
        const tick_type hint = hints_[index(e->level, e->slot)];
        return hint > e->start ? hint : e->start;
    }

    // Moves time to tick `to` (>= now()) and appends every node with deadline <= `to` to
    // `expired`, in deadline order (FIFO within a tick). The nodes stay linked in `expired`
    // (so they can still be unlinked, that is, cancelled, before the caller runs them) but no
    // longer belong to the wheel. O(1) amortised per node and per level it crosses.
    // Returns the number of nodes handed out.
    std::size_t advance(tick_type to, hook_list& expired) noexcept {
        assert(to >= now_);
        std::size_t handed_out = 0;
        while (const auto e = next_expiration()) {
            if (e->start > to) break;
            now_ = e->start;
            if (e->level == 0) {
                handed_out += take_slot(e->slot, expired);
            } else {
                // Cascade: every node of the slot moves to a lower level relative to the
                // slot's first tick (or to level 0's current slot if due right now). The
                // nodes stay in_wheel() all along: one pass over them.
                hook_list batch;
                batch.splice_back(slots_[index(e->level, e->slot)]);
                occupied_[e->level] &= ~(std::uint64_t{1} << e->slot);
                while (list_hook* h = batch.pop_front()) {
                    --size_;
                    link(static_cast<wheel_node&>(*h));
                }
            }
        }
        now_ = to;
        return handed_out;
    }

    // Takes every node out of the wheel, appending them to `out` in deadline order (FIFO
    // within a tick), and leaves now() where it was. For stop() and "run everything now".
    std::size_t take_all(hook_list& out) noexcept {
        const tick_type saved = now_;
        const std::size_t n = advance(max_tick, out);
        assert(empty());
        now_ = saved;
        return n;
    }

private:
    friend class wheel_node;

    struct expiration {
        unsigned level;
        unsigned slot;
        tick_type start;  // first tick of the slot
    };

    static constexpr unsigned index(unsigned level, unsigned slot) noexcept { return level * slots_per_level + slot; }

    static unsigned level_for(tick_type now, tick_type when) noexcept {
        // The highest base-64 digit in which `when` differs from `now`; "| mask" puts
        // everything within the current 64 ticks in level 0.
        const tick_type differing = (now ^ when) | (slots_per_level - 1);
        const unsigned significant = 63U - countl_zero_nonzero(differing);
        return significant / slot_bits;
    }

    void link(wheel_node& node) noexcept {
        const tick_type when = node.deadline_ < now_ ? now_ : node.deadline_;
        const unsigned level = level_for(now_, when);
        const auto slot = static_cast<unsigned>((when >> (level * slot_bits)) & (slots_per_level - 1));
        const unsigned i = index(level, slot);
        const std::uint64_t bit = std::uint64_t{1} << slot;
        if ((occupied_[level] & bit) == 0) {
            occupied_[level] |= bit;
            hints_[i] = node.deadline_;
        } else if (node.deadline_ < hints_[i]) {
            hints_[i] = node.deadline_;
        }
        slots_[i].push_back(node);
        node.owner_ = this;
        node.in_wheel_ = true;
        node.index_ = i;
        ++size_;
    }

    void unlinked_from(unsigned i) noexcept {
        --size_;
        if (slots_[i].empty()) occupied_[i / slots_per_level] &= ~(std::uint64_t{1} << (i % slots_per_level));
    }

    // Appends level 0's slot `slot` to `out`; its nodes no longer belong to the wheel.
    std::size_t take_slot(unsigned slot, hook_list& out) noexcept {
        std::size_t n = 0;
        slots_[slot].for_each([&n](list_hook& h) {
            static_cast<wheel_node&>(h).in_wheel_ = false;
            ++n;
        });
        out.splice_back(slots_[slot]);
        occupied_[0] &= ~(std::uint64_t{1} << slot);
        size_ -= n;
        return n;
    }

    // The earliest non-empty slot: lower levels always come first, because every node of
    // level L is due before the first tick of any occupied slot of level L+1.
    [[nodiscard]] std::optional<expiration> next_expiration() const noexcept {
        for (unsigned level = 0; level < levels; ++level) {
            const std::uint64_t occ = occupied_[level];
            if (occ == 0) continue;
            const unsigned shift = level * slot_bits;
            const auto now_slot = static_cast<unsigned>((now_ >> shift) & (slots_per_level - 1));
            const auto ahead = countr_zero_nonzero(rotate_right(occ, now_slot));
            const unsigned slot = (now_slot + ahead) & (slots_per_level - 1);
            const unsigned range_bits = shift + slot_bits;  // bits spanned by the whole level
            const tick_type level_start = range_bits >= 64 ? 0 : now_ & ~((tick_type{1} << range_bits) - 1);
            const tick_type start = level_start + (tick_type{slot} << shift);
            // A slot behind now() would mean a node was left in the past: never happens,
            // because advance() drains every slot whose first tick it passes.
            assert(start >= now_ || level == 0);
            assert(level == 0 || start > now_);
            return expiration{level, slot, start};
        }
        return std::nullopt;
    }

    tick_type now_;
    std::size_t size_ = 0;
    std::array<std::uint64_t, levels> occupied_{};
    std::array<tick_type, levels * slots_per_level> hints_{};
    std::array<hook_list, levels * slots_per_level> slots_{};
};

inline void wheel_node::unlink() noexcept {
    if (!hook_linked()) return;
    unlink_hook();
    if (in_wheel_) {
        owner_->unlinked_from(index_);
        in_wheel_ = false;
    }
}

}  // namespace idlewheel::detail

#endif
