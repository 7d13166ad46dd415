// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_WHEEL_MODEL_HPP
#define IDLEWHEEL_TESTS_SUPPORT_WHEEL_MODEL_HPP

// Differential testing of detail::wheel: a reference model, a harness that applies the same
// operation to the real wheel and to the model and reports the first disagreement, and a
// generator of operations biased towards the ticks where a hierarchical wheel goes wrong
// (level boundaries, equal deadlines, the top of the tick range).
//
// Free of Boost.Test on purpose: test_wheel_differential.cpp drives it from seeded random
// streams, and a libFuzzer target can drive it from its input bytes (the generator only needs
// a callable returning std::uint64_t; every operation is valid whatever its fields hold).
//
// The model is an ordered map keyed by (deadline, insertion number), so it is right by
// inspection; the only rule it shares with the wheel is the clamp of a deadline <= now() to
// now() + 1. Everything else (levels, cascading, occupancy, hints) must agree with it.

#include <idlewheel/core/wheel.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace idlewheel::test {

using tick_type = detail::wheel::tick_type;
inline constexpr tick_type max_tick = detail::wheel::max_tick;

// a + b without wrapping past max_tick.
[[nodiscard]] constexpr tick_type saturating_add(tick_type a, tick_type b) noexcept {
    return b > max_tick - a ? max_tick : a + b;
}

// 64^level, the width of one slot of `level`.
[[nodiscard]] constexpr tick_type slot_width(unsigned level) noexcept {
    return tick_type{1} << (level * detail::wheel::slot_bits);
}

// The first multiple of `width` (a power of two) strictly after `t`, saturated.
[[nodiscard]] constexpr tick_type next_boundary_after(tick_type t, tick_type width) noexcept {
    const tick_type base = t & ~(width - 1);
    return saturating_add(base, width);
}

// ---------------------------------------------------------------------------------------------
// The reference: what wheel promises, computed the slow and obvious way.
class reference_wheel {
public:
    using id_type = std::size_t;

    reference_wheel(std::size_t ids, tick_type now) : now_(now), where_(ids) {}

    [[nodiscard]] tick_type now() const noexcept { return now_; }
    [[nodiscard]] std::size_t size() const noexcept { return pending_.size(); }
    [[nodiscard]] bool empty() const noexcept { return pending_.empty(); }
    [[nodiscard]] bool contains(id_type id) const noexcept { return where_[id].has_value(); }

    [[nodiscard]] std::optional<tick_type> deadline_of(id_type id) const {
        if (!where_[id]) return std::nullopt;
        return (*where_[id])->first.first;
    }

    [[nodiscard]] std::optional<tick_type> earliest() const {
        if (pending_.empty()) return std::nullopt;
        return pending_.begin()->first.first;
    }

    // Returns the deadline after the clamp, which wheel_node::deadline() must report.
    tick_type insert(id_type id, tick_type deadline) {
        if (deadline <= now_) deadline = now_ + 1;
        where_[id] = pending_.emplace(key{deadline, next_sequence_++}, id).first;
        return deadline;
    }

    // Returns whether `id` was pending.
    bool remove(id_type id) {
        if (!where_[id]) return false;
        pending_.erase(*where_[id]);
        where_[id].reset();
        return true;
    }

    void advance(tick_type to, std::vector<id_type>& handed_out) {
        hand_out_through(to, handed_out);
        now_ = to;
    }

    void take_all(std::vector<id_type>& handed_out) { hand_out_through(max_tick, handed_out); }

    // The wheel was destroyed: every pending entry is forgotten; time restarts at `now`.
    void restart(tick_type now, std::vector<id_type>& forgotten) {
        for (const auto& entry : pending_) forgotten.push_back(entry.second);
        for (const auto& entry : pending_) where_[entry.second].reset();
        pending_.clear();
        now_ = now;
    }

private:
    using key = std::pair<tick_type, std::uint64_t>;  // (deadline, insertion number): FIFO
    using map_type = std::map<key, id_type>;

    void hand_out_through(tick_type to, std::vector<id_type>& handed_out) {
        auto it = pending_.begin();
        for (; it != pending_.end() && it->first.first <= to; ++it) {
            handed_out.push_back(it->second);
            where_[it->second].reset();
        }
        pending_.erase(pending_.begin(), it);
    }

    tick_type now_;
    std::uint64_t next_sequence_ = 0;
    map_type pending_;
    std::vector<std::optional<map_type::iterator>> where_;
};

// ---------------------------------------------------------------------------------------------
// Operations. Each field is meaningful for some kinds only; any value is accepted.
enum class op_kind : std::uint8_t {
    schedule,     // node, tick = deadline; a node already linked is unlinked first (reschedule)
    cancel,       // node: unlink() from wherever it is
    destroy,      // node: destroy the node object (its destructor unlinks it)
    advance,      // tick = target; raised to now() if below
    take_all,     //
    run_expired,  // tick = how many handed-out nodes to pop and "run", oldest first
    rebuild,      // tick = start of a new wheel; the old one is destroyed with its nodes in it
};

struct operation {
    op_kind kind = op_kind::advance;
    std::size_t node = 0;
    tick_type tick = 0;
};

inline std::string describe(const operation& op) {
    std::ostringstream os;
    switch (op.kind) {
        case op_kind::schedule: os << "schedule(node " << op.node << ", deadline " << op.tick << ")"; break;
        case op_kind::cancel: os << "cancel(node " << op.node << ")"; break;
        case op_kind::destroy: os << "destroy(node " << op.node << ")"; break;
        case op_kind::advance: os << "advance(" << op.tick << ")"; break;
        case op_kind::take_all: os << "take_all()"; break;
        case op_kind::run_expired: os << "run_expired(" << op.tick << ")"; break;
        case op_kind::rebuild: os << "rebuild(start " << op.tick << ")"; break;
    }
    return os.str();
}

// ---------------------------------------------------------------------------------------------
// Applies operations to a detail::wheel with a pool of nodes and to a reference_wheel, and
// compares them after every operation. apply() and check_everything() return an empty string
// when both agree, else a description of the first difference.
class wheel_differential {
public:
    struct counters {
        std::uint64_t operations = 0;
        std::uint64_t schedules = 0;
        std::uint64_t reschedules = 0;  // schedule of a node that was still linked
        std::uint64_t cancels = 0;      // unlink of a linked node
        std::uint64_t destroys = 0;     // destruction of a linked node
        std::uint64_t advances = 0;
        std::uint64_t handed_out = 0;  // by advance and take_all
        std::uint64_t take_alls = 0;
        std::uint64_t rebuilds = 0;
        std::uint64_t exact_hint_checks = 0;  // next_due() compared for equality
        std::size_t max_size = 0;
        std::uint64_t size_sum = 0;  // over operations, for the mean size
    };

    explicit wheel_differential(std::size_t pool_size, tick_type start = 0)
        : model_(pool_size, clamp_start(start)),
          wheel_(std::make_unique<detail::wheel>(clamp_start(start))),
          place_(pool_size, place::none),
          expired_position_(pool_size),
          pool_(pool_size) {}

    [[nodiscard]] std::size_t pool_size() const noexcept { return pool_.size(); }
    [[nodiscard]] tick_type now() const noexcept { return model_.now(); }
    [[nodiscard]] std::size_t size() const noexcept { return model_.size(); }
    [[nodiscard]] bool pending(std::size_t node) const noexcept { return model_.contains(node % pool_.size()); }
    [[nodiscard]] std::optional<tick_type> next_due() const noexcept { return wheel_->next_due(); }
    [[nodiscard]] const counters& stats() const noexcept { return stats_; }

    std::string apply(const operation& op) {
        ++stats_.operations;
        std::string error;
        const std::size_t id = op.node % pool_.size();
        switch (op.kind) {
            case op_kind::schedule: error = schedule(id, op.tick); break;
            case op_kind::cancel: error = cancel(id, false); break;
            case op_kind::destroy: error = cancel(id, true); break;
            case op_kind::advance: error = advance(op.tick < now() ? now() : op.tick); break;
            case op_kind::take_all: error = take_all(); break;
            case op_kind::run_expired: error = run_expired(op.tick); break;
            case op_kind::rebuild: error = rebuild(clamp_start(op.tick)); break;
        }
        if (error.empty()) error = check_wheel();
        return error;
    }

    // Every node's state and the whole list of handed-out nodes: O(pool), so call it now and
    // then rather than after each operation.
    std::string check_everything() {
        if (auto error = check_wheel(); !error.empty()) return error;
        for (std::size_t id = 0; id < pool_.size(); ++id) {
            const detail::wheel_node* n = pool_[id].get();
            const bool linked = n != nullptr && n->linked();
            const bool in_wheel = n != nullptr && n->in_wheel();
            switch (place_[id]) {
                case place::none:
                    if (linked || in_wheel) return message("node ", id, " should be unlinked");
                    break;
                case place::wheel:
                    if (!linked || !in_wheel) return message("node ", id, " should be in the wheel");
                    if (n->deadline() != model_.deadline_of(id))
                        return message("node ", id, " deadline ", n->deadline(), " != model ",
                                       model_.deadline_of(id).value_or(0));
                    if (n->deadline() <= now())
                        return message("node ", id, " still in the wheel with deadline ", n->deadline(),
                                       " <= now ", now());
                    break;
                case place::expired:
                    if (!linked || in_wheel) return message("node ", id, " should be in the expired list");
                    break;
            }
        }
        std::vector<std::size_t> actual;
        expired_.for_each([&actual](detail::list_hook& h) { actual.push_back(id_of(h)); });
        const std::vector<std::size_t> expected(model_expired_.begin(), model_expired_.end());
        if (actual != expected)
            return message("expired list differs: wheel ", list(actual), " model ", list(expected));
        return {};
    }

private:
    enum class place : std::uint8_t { none, wheel, expired };

    struct pooled_node : detail::wheel_node {
        explicit pooled_node(std::size_t i) noexcept : id(i) {}
        std::size_t id;
    };

    static std::size_t id_of(const detail::list_hook& h) noexcept {
        return static_cast<const pooled_node&>(static_cast<const detail::wheel_node&>(h)).id;
    }

    // insert() needs now() < max_tick, so a wheel never starts at the very top.
    static tick_type clamp_start(tick_type t) noexcept { return t == max_tick ? max_tick - 1 : t; }

    template <class... Parts>
    static std::string message(const Parts&... parts) {
        std::ostringstream os;
        (os << ... << parts);
        return os.str();
    }

    static std::string list(const std::vector<std::size_t>& ids) {
        std::ostringstream os;
        os << '[';
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (i == 16 && ids.size() > 20) {
                os << " ... (" << ids.size() << " in all)";
                break;
            }
            os << (i == 0 ? "" : " ") << ids[i];
        }
        os << ']';
        return os.str();
    }

    // Takes the model's side of a node leaving wherever it was (unlink or destruction).
    void forget(std::size_t id) {
        switch (place_[id]) {
            case place::none: break;
            case place::wheel:
                model_.remove(id);
                // From now on a slot may keep the hint of a node no longer there.
                hint_exact_ = false;
                break;
            case place::expired: model_expired_.erase(expired_position_[id]); break;
        }
        place_[id] = place::none;
    }

    std::string schedule(std::size_t id, tick_type deadline) {
        if (now() == max_tick) return {};  // insert() precondition; only rebuild helps now
        auto& n = pool_[id];
        if (!n) n = std::make_unique<pooled_node>(id);
        if (n->linked()) {
            ++stats_.reschedules;
            n->unlink();
            forget(id);
            if (n->linked()) return message("node ", id, " still linked after unlink()");
        }
        ++stats_.schedules;
        wheel_->insert(*n, deadline);
        const tick_type expected = model_.insert(id, deadline);
        place_[id] = place::wheel;
        if (!n->in_wheel() || !n->linked()) return message("node ", id, " not in the wheel after insert()");
        if (n->deadline() != expected)
            return message("insert(", deadline, ") at now ", now(), ": deadline() ", n->deadline(), ", model ",
                           expected);
        return {};
    }

    std::string cancel(std::size_t id, bool destroy) {
        auto& n = pool_[id];
        if (!n) return {};
        if (n->linked()) ++(destroy ? stats_.destroys : stats_.cancels);
        if (destroy) {
            n.reset();
        } else {
            n->unlink();
            if (n->linked() || n->in_wheel()) return message("node ", id, " still linked after unlink()");
        }
        forget(id);
        return {};
    }

    // Compares what the wheel handed out (in `batch`) with the model, then moves it to the
    // list of expired nodes waiting to be run.
    std::string receive(detail::hook_list& batch, std::size_t count, const char* what, tick_type to) {
        std::vector<std::size_t> actual;
        std::string error;
        batch.for_each([&](detail::list_hook& h) {
            const std::size_t id = id_of(h);
            actual.push_back(id);
            const auto& n = static_cast<const detail::wheel_node&>(h);
            if (error.empty() && (n.in_wheel() || !n.linked()))
                error = message(what, ": node ", id, " handed out but in_wheel() or not linked()");
            if (error.empty() && n.deadline() > to)
                error = message(what, "(", to, "): node ", id, " handed out early, deadline ", n.deadline());
        });
        if (actual != expected_batch_)
            return message(what, "(", to, ") handed out ", list(actual), ", model ", list(expected_batch_));
        if (count != actual.size())
            return message(what, " returned ", count, " but handed out ", actual.size());
        if (!error.empty()) return error;
        for (const std::size_t id : actual) {
            place_[id] = place::expired;
            expired_position_[id] = model_expired_.insert(model_expired_.end(), id);
        }
        stats_.handed_out += actual.size();
        expired_.splice_back(batch);
        return {};
    }

    std::string advance(tick_type to) {
        ++stats_.advances;
        detail::hook_list batch;
        const std::size_t count = wheel_->advance(to, batch);
        expected_batch_.clear();
        model_.advance(to, expected_batch_);
        if (wheel_->now() != to) return message("now() is ", wheel_->now(), " after advance(", to, ")");
        return receive(batch, count, "advance", to);
    }

    std::string take_all() {
        ++stats_.take_alls;
        detail::hook_list batch;
        const std::size_t count = wheel_->take_all(batch);
        expected_batch_.clear();
        model_.take_all(expected_batch_);
        return receive(batch, count, "take_all", max_tick);
    }

    std::string run_expired(tick_type how_many) {
        for (tick_type i = 0; i < how_many && !model_expired_.empty(); ++i) {
            const std::size_t expected = model_expired_.front();
            detail::list_hook* h = expired_.pop_front();
            if (h == nullptr) return message("expired list empty, model expects node ", expected);
            const std::size_t id = id_of(*h);
            if (id != expected) return message("expired list runs node ", id, ", model expects ", expected);
            if (static_cast<detail::wheel_node*>(h)->linked()) return message("node ", id, " linked after pop");
            model_expired_.pop_front();
            place_[id] = place::none;
        }
        if (model_expired_.empty() && !expired_.empty()) return "expired list longer than the model's";
        return {};
    }

    std::string rebuild(tick_type start) {
        ++stats_.rebuilds;
        wheel_.reset();
        std::vector<std::size_t> forgotten;
        model_.restart(start, forgotten);
        for (const std::size_t id : forgotten) {
            place_[id] = place::none;
            const auto& n = pool_[id];
            if (n->linked() || n->in_wheel()) return message("node ", id, " still linked after ~wheel()");
        }
        wheel_ = std::make_unique<detail::wheel>(start);
        hint_exact_ = true;
        return {};
    }

    // The cheap checks run after every operation.
    std::string check_wheel() {
        if (wheel_->now() != now()) return message("now() ", wheel_->now(), ", model ", now());
        if (wheel_->size() != model_.size()) return message("size() ", wheel_->size(), ", model ", model_.size());
        if (wheel_->empty() != model_.empty()) return message("empty() ", wheel_->empty());
        if (model_.size() > stats_.max_size) stats_.max_size = model_.size();
        stats_.size_sum += model_.size();
        const auto due = wheel_->next_due();
        const auto earliest = model_.earliest();
        if (due.has_value() != earliest.has_value())
            return message("next_due() ", due ? "set" : "empty", " but model ", earliest ? "non-empty" : "empty");
        if (earliest) {
            if (*earliest <= now()) return message("model kept deadline ", *earliest, " <= now ", now());
            if (*due <= now() || *due > *earliest)
                return message("next_due() ", *due, " outside (now ", now(), ", earliest ", *earliest, "]");
            // Insertions and advances keep every slot's hint exact; only a removal can leave
            // a hint early, until the wheel has been empty again.
            if (hint_exact_) {
                ++stats_.exact_hint_checks;
                if (*due != *earliest)
                    return message("next_due() ", *due, " != earliest ", *earliest, " though nothing was removed");
            }
        } else {
            hint_exact_ = true;
        }
        return {};
    }

    counters stats_;
    reference_wheel model_;
    std::vector<std::size_t> expected_batch_;  // reused to spare an allocation per advance
    bool hint_exact_ = true;
    std::unique_ptr<detail::wheel> wheel_;
    detail::hook_list expired_;  // handed out, not yet run
    std::list<std::size_t> model_expired_;
    std::vector<place> place_;
    std::vector<std::list<std::size_t>::iterator> expired_position_;
    // Last, so that nodes die first at teardown and unlink themselves from the wheel and the
    // expired list (one more self-unlink path exercised for free).
    std::vector<std::unique_ptr<pooled_node>> pool_;
};

// ---------------------------------------------------------------------------------------------
// Turns a stream of 64-bit random numbers into operations. Plain uniform ticks would almost
// never land on a level boundary or repeat a deadline, which is where a wheel breaks, so the
// choices are weighted towards those. Operations that empty the wheel (take_all, rebuild,
// jumps of years) are rare on purpose: the wheel has to fill up, thousands of nodes over all
// levels, for cascades and shared slots to get exercised.
class operation_generator {
public:
    // Without removals (no cancel, destroy or reschedule of a pending node) every next_due()
    // is compared for equality with the earliest deadline, not just bounded by it.
    explicit operation_generator(bool removals = true) noexcept : removals_(removals) {}

    template <class Random>
    operation next(const wheel_differential& d, Random&& random) {
        operation op;
        op.node = static_cast<std::size_t>(random() % d.pool_size());
        if (d.now() == max_tick) {  // nothing can be inserted any more: start a new wheel
            op.kind = op_kind::rebuild;
            op.tick = start_tick(random);
            return op;
        }
        const auto roll = random() % 100'000;
        const bool harmless = removals_ || !d.pending(op.node);  // touching it removes nothing
        if (roll < 42'000 && harmless) {
            op.kind = op_kind::schedule;
            op.tick = deadline(d.now(), random);
            recent_[recent_next_++ % recent_.size()] = op.tick;
        } else if (roll < 72'000) {
            op.kind = op_kind::advance;
            op.tick = advance_target(d, random);
        } else if (roll < 82'000 && harmless) {
            op.kind = op_kind::cancel;
        } else if (roll < 86'000 && harmless) {
            op.kind = op_kind::destroy;
        } else if (roll < 99'996) {
            op.kind = op_kind::run_expired;
            op.tick = random() % 8 == 0 ? max_tick : random() % 16;
        } else if (roll < 99'998) {
            op.kind = op_kind::take_all;
        } else {
            op.kind = op_kind::rebuild;
            op.tick = start_tick(random);
        }
        return op;
    }

private:
    template <class Random>
    static unsigned random_level(Random& random) {
        return static_cast<unsigned>(random() % detail::wheel::levels);
    }

    // Level L with probability 2^-(L+1): jumps to low-level boundaries are common, to the
    // top ones rare.
    template <class Random>
    static unsigned geometric_level(Random& random) {
        const auto level = static_cast<unsigned>(std::countr_zero(random() | (tick_type{1} << 63)));
        return level < detail::wheel::levels ? level : detail::wheel::levels - 1;
    }

    // -1, 0 or +1 around a tick, saturated at both ends.
    template <class Random>
    static tick_type around(tick_type t, Random& random) {
        switch (random() % 3) {
            case 0: return t == 0 ? 0 : t - 1;
            case 1: return t;
            default: return saturating_add(t, 1);
        }
    }

    // A distance below 2^max_bits spread evenly over magnitudes rather than values.
    template <class Random>
    static tick_type log_uniform(Random& random, unsigned max_bits = 64) {
        const auto bits = static_cast<unsigned>(random() % max_bits);
        return random() & ((tick_type{2} << bits) - 1);
    }

    template <class Random>
    tick_type deadline(tick_type now, Random& random) {
        const auto roll = random() % 100;
        if (roll < 8) {  // at or before now: clamped to now + 1
            switch (random() % 4) {
                case 0: return 0;
                case 1: return now;
                case 2: return now == 0 ? 0 : now - 1;
                default: return now == 0 ? 0 : random() % now;
            }
        }
        if (roll < 23) return saturating_add(now, 1 + random() % 64);
        if (roll < 38) return around(saturating_add(now, slot_width(random_level(random))), random);
        if (roll < 53) return around(next_boundary_after(now, slot_width(random_level(random))), random);
        if (roll < 70) return recent_[random() % recent_.size()];  // equal deadlines: FIFO
        if (roll < 85) return saturating_add(now, log_uniform(random));
        if (roll < 88) return max_tick - random() % 3;
        if (roll < 90) return random();
        return saturating_add(now, 1 + random() % 4096);
    }

    template <class Random>
    tick_type advance_target(const wheel_differential& d, Random& random) {
        const tick_type now = d.now();
        const auto due = d.next_due();
        const auto roll = random() % 100'000;
        if (roll < 8'000) return now;
        if (roll < 23'000) return now + 1;
        if (roll < 38'000) return saturating_add(now, 2 + random() % 64);
        if (roll < 58'000 && due) return *due;  // what a driver sleeping until next_due() does
        if (roll < 63'000 && due) return *due - 1;
        if (roll < 78'000) return around(next_boundary_after(now, slot_width(geometric_level(random))), random);
        if (roll < 93'000) return saturating_add(now, log_uniform(random, 24));
        if (roll < 99'000) {  // a deadline scheduled lately, if not too far: FIFO batches
            const tick_type recent = recent_[random() % recent_.size()];
            return recent - now < (tick_type{1} << 32) ? recent : now;  // past or too far: stay
        }
        // Jumps that empty most of the wheel, about once per 30 000 operations.
        if (roll < 99'006) return saturating_add(now, log_uniform(random));
        if (roll < 99'009) {  // uniform over [now, max_tick]
            const tick_type span = max_tick - now;
            return now + (span == max_tick ? random() : random() % (span + 1));
        }
        if (roll < 99'011) return max_tick;
        return saturating_add(now, 2 + random() % 64);
    }

    template <class Random>
    static tick_type start_tick(Random& random) {
        switch (random() % 5) {
            case 0: return 0;
            case 1: return random() % 100000;
            case 2: return around(next_boundary_after(random(), slot_width(random_level(random))), random);
            case 3: return max_tick - 1 - random() % 100000;
            default: return random();
        }
    }

    bool removals_;
    std::array<tick_type, 16> recent_{};
    std::size_t recent_next_ = 0;
};

}  // namespace idlewheel::test

#endif
