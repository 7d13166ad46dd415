// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/core/wheel.hpp>

// Unit tests of the pure wheel: time is a tick passed to advance(), so every expectation is
// exact. The ticks chosen are the ones a hierarchical wheel gets wrong: the first and last
// tick of a slot at every level, starts that are not aligned, the top of the 64-bit range.
// test_wheel_differential.cpp covers the random interleavings.

#define BOOST_TEST_MODULE detail_wheel
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

// next_due() is compared directly in BOOST_TEST, which has to print it on failure.
template <>
struct boost::test_tools::tt_detail::print_log_value<std::optional<std::uint64_t>> {
    void operator()(std::ostream& os, const std::optional<std::uint64_t>& t) {
        if (t)
            os << *t;
        else
            os << "nullopt";
    }
};

namespace {

using idlewheel::detail::hook_list;
using idlewheel::detail::list_hook;
using idlewheel::detail::wheel;
using idlewheel::detail::wheel_node;
using tick_type = wheel::tick_type;

constexpr tick_type max_tick = wheel::max_tick;
// Ticks are nanoseconds in the finest driver we expect.
constexpr tick_type three_years_ns = tick_type{3} * 365 * 24 * 3600 * 1'000'000'000;

// Starts: aligned, small and unaligned, one tick before a level-3 boundary, arbitrary, and
// one whose top digit is about to roll over (so that 64^10 ahead lands in the last slot of
// level 10).
constexpr std::array<tick_type, 5> starts{0, 12345, 64 * 64 * 64 - 1, 0x0123'4567'89ab'cdef, 0xefff'ffff'ffff'fff0};

struct test_node : wheel_node {
    explicit test_node(int i = 0) noexcept : id(i) {}
    int id;
};

constexpr tick_type slot_width(unsigned level) { return tick_type{1} << (level * wheel::slot_bits); }

constexpr tick_type saturating_add(tick_type a, tick_type b) { return b > max_tick - a ? max_tick : a + b; }

// What insert() stores for a requested deadline.
constexpr tick_type effective(tick_type deadline, tick_type now) { return deadline <= now ? now + 1 : deadline; }

std::vector<int> ids(hook_list& list) {
    std::vector<int> out;
    list.for_each([&out](list_hook& h) { out.push_back(static_cast<test_node&>(static_cast<wheel_node&>(h)).id); });
    return out;
}

// Requested deadlines around 64^L ahead of `start`, for every level.
std::vector<tick_type> boundary_deadlines(tick_type start) {
    std::vector<tick_type> out;
    for (unsigned level = 0; level < wheel::levels; ++level) {
        const tick_type ahead = start + slot_width(level);
        out.insert(out.end(), {ahead - 1, ahead, ahead + 1});
        // And around the next multiple of 64^L, where a slot of that level begins: the tick
        // at which a cascade happens.
        const tick_type aligned = saturating_add(start & ~(slot_width(level) - 1), slot_width(level));
        out.insert(out.end(), {aligned - 1, aligned, saturating_add(aligned, 1)});
    }
    return out;
}

// Advances a wheel holding the single node `n` through ascending `targets` and checks that it
// comes out at the first target at or after its deadline, not before and not twice. Also
// checks next_due() stays exact while it waits (nothing was removed).
void expect_fires_exactly_at(wheel& w, test_node& n, const std::vector<tick_type>& targets) {
    const tick_type deadline = n.deadline();
    hook_list out;
    bool fired = false;
    for (const tick_type t : targets) {
        if (t < w.now()) continue;
        const std::size_t handed = w.advance(t, out);
        const bool due = t >= deadline;
        const std::size_t expected = due && !fired ? 1 : 0;
        if (handed != expected || w.now() != t || n.in_wheel() == due || w.size() != (due ? 0U : 1U)) {
            BOOST_ERROR("advance(" << t << ") handed out " << handed << ", expected " << expected << " (deadline "
                                   << deadline << ", now() " << w.now() << ", size() " << w.size() << ")");
            return;
        }
        if (!due && w.next_due() != deadline) {
            BOOST_ERROR("at " << t << " next_due() is " << w.next_due().value_or(0) << ", deadline " << deadline);
            return;
        }
        if (due && !fired) {
            fired = true;
            if (out.front() != &n || !n.linked()) {
                BOOST_ERROR("at " << t << " the node is not at the front of the expired list");
                return;
            }
        }
    }
    BOOST_TEST(fired);
    BOOST_TEST(!w.next_due().has_value());
}

// The ways of getting from `start` to (and past) `deadline`, each of which has to cascade
// differently.
std::vector<std::vector<tick_type>> approaches(tick_type start, tick_type deadline) {
    std::vector<std::vector<tick_type>> paths;
    paths.push_back({deadline});  // one jump
    paths.push_back({deadline - 1, deadline});
    paths.push_back({saturating_add(deadline, 1000)});  // overshoot
    {
        // Big jump to just before the deadline, then tick by tick across it (130 ticks
        // cross at least one level-0 wrap).
        std::vector<tick_type> path;
        for (tick_type t = deadline > start + 130 ? deadline - 130 : start; t <= saturating_add(deadline, 2); ++t) {
            path.push_back(t);
            if (t == max_tick) break;
        }
        paths.push_back(path);
    }
    {
        // Stop exactly at each boundary before the deadline, from the top level down: the
        // node cascades once per level and next_due() must stay on it.
        std::vector<tick_type> path;
        tick_type now = start;
        for (unsigned level = wheel::levels; level-- > 0;) {
            for (;;) {
                const tick_type next = saturating_add(now & ~(slot_width(level) - 1), slot_width(level));
                if (next >= deadline || next == now) break;
                path.push_back(next);
                now = next;
            }
        }
        path.push_back(deadline);
        paths.push_back(path);
    }
    {
        // Halving the remaining distance: jumps of every size, mostly off the boundaries.
        std::vector<tick_type> path;
        for (tick_type now = start; now < deadline;) {
            now += (deadline - now) / 2 + (deadline - now) % 2;
            path.push_back(now);
        }
        paths.push_back(path);
    }
    return paths;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fires_at_exact_tick_at_every_level_boundary) {
    for (const tick_type start : starts) {
        for (const tick_type requested : boundary_deadlines(start)) {
            const tick_type deadline = effective(requested, start);
            const auto paths = approaches(start, deadline);
            for (std::size_t p = 0; p < paths.size(); ++p) {
                BOOST_TEST_CONTEXT("start " << start << ", deadline " << deadline << ", path " << p) {
                    wheel w(start);
                    test_node n;
                    w.insert(n, requested);
                    BOOST_TEST(n.deadline() == deadline);
                    BOOST_TEST(w.next_due() == deadline);
                    expect_fires_exactly_at(w, n, paths[p]);
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(every_tick_of_a_dense_range_fires_on_its_tick) {
    // 300 consecutive deadlines from an unaligned start fill level 0 across its wrap-around
    // and spill into level 1: each tick must hand out exactly its own node.
    for (const tick_type start : starts) {
        BOOST_TEST_CONTEXT("start " << start) {
            wheel w(start);
            std::deque<test_node> nodes;
            for (int i = 0; i < 300; ++i) w.insert(nodes.emplace_back(i), start + 1 + static_cast<tick_type>(i));
            hook_list out;
            for (int i = 0; i < 300; ++i) {
                BOOST_TEST_REQUIRE(w.next_due() == w.now() + 1);
                BOOST_TEST_REQUIRE(w.advance(w.now() + 1, out) == 1U);
                BOOST_TEST_REQUIRE(static_cast<test_node*>(static_cast<wheel_node*>(out.pop_front()))->id == i);
            }
            BOOST_TEST(w.empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(far_node_cascades_down_and_fires_on_its_tick) {
    // A deadline with a non-zero digit at levels 4, 2 and 0 has to move down three times.
    for (const tick_type start : starts) {
        const tick_type deadline = start + 3 * slot_width(4) + 5 * slot_width(2) + 7;
        BOOST_TEST_CONTEXT("start " << start << ", deadline " << deadline) {
            wheel w(start);
            test_node far(1);
            test_node near(2);
            w.insert(far, deadline);
            w.insert(near, start + 10);
            BOOST_TEST(w.next_due() == start + 10);
            hook_list out;
            BOOST_TEST(w.advance(start + 10, out) == 1U);
            BOOST_TEST(out.front() == &near);
            out.clear();
            // Every boundary on the way is a cascade; size() counts the node throughout.
            for (unsigned level = wheel::levels; level-- > 1;) {
                const auto next_boundary = [&] {
                    return saturating_add(w.now() & ~(slot_width(level) - 1), slot_width(level));
                };
                for (tick_type next = next_boundary(); next < deadline; next = next_boundary()) {
                    BOOST_TEST_REQUIRE(w.advance(next, out) == 0U);
                    BOOST_TEST_REQUIRE(w.size() == 1U);
                    BOOST_TEST_REQUIRE(far.in_wheel());
                    BOOST_TEST_REQUIRE(w.next_due() == deadline);
                }
            }
            BOOST_TEST(w.advance(deadline - 1, out) == 0U);
            BOOST_TEST(w.advance(deadline, out) == 1U);
            BOOST_TEST(out.front() == &far);
            BOOST_TEST(w.empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(a_lonely_node_costs_one_wake_up_at_any_distance) {
    // A driver that sleeps until next_due() must not wake up once per level crossed.
    for (const tick_type start : starts) {
        std::vector<tick_type> deadlines = boundary_deadlines(start);
        deadlines.insert(deadlines.end(), {start + 1, start + 4'242'424, saturating_add(start, three_years_ns),
                                           start + 0x0fed'cba9'8765'4321 % (max_tick - start), max_tick});
        for (const tick_type requested : deadlines) {
            BOOST_TEST_CONTEXT("start " << start << ", deadline " << requested) {
                wheel w(start);
                test_node n;
                w.insert(n, requested);
                hook_list out;
                int wake_ups = 0;
                while (const auto due = w.next_due()) {
                    w.advance(*due, out);
                    if (++wake_ups > 100) break;
                }
                BOOST_TEST(wake_ups == 1);
                BOOST_TEST(out.front() == &n);
                BOOST_TEST(w.now() == effective(requested, start));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(a_driver_wakes_once_per_distinct_deadline) {
    // Many nodes at every level, no removal: each wake-up at next_due() hands out exactly the
    // nodes of one deadline, so hints stay exact through cascades.
    for (const tick_type start : starts) {
        BOOST_TEST_CONTEXT("start " << start) {
            wheel w(start);
            std::deque<test_node> nodes;
            std::vector<tick_type> deadlines;
            for (const tick_type d : boundary_deadlines(start)) deadlines.push_back(effective(d, start));
            for (tick_type k = 1; k < 40; ++k) deadlines.push_back(saturating_add(start, k * k * k * k * k * k * k * k));
            for (const tick_type d : deadlines) w.insert(nodes.emplace_back(), d);
            std::sort(deadlines.begin(), deadlines.end());
            deadlines.erase(std::unique(deadlines.begin(), deadlines.end()), deadlines.end());

            hook_list out;
            std::size_t wake_ups = 0;
            while (const auto due = w.next_due()) {
                BOOST_TEST_REQUIRE(wake_ups < deadlines.size());
                BOOST_TEST_REQUIRE(*due == deadlines[wake_ups]);
                const std::size_t handed = w.advance(*due, out);
                BOOST_TEST_REQUIRE(handed >= 1U);
                out.for_each([&](list_hook& h) { BOOST_TEST_REQUIRE(static_cast<wheel_node&>(h).deadline() == *due); });
                out.clear();
                ++wake_ups;
            }
            BOOST_TEST(wake_ups == deadlines.size());
        }
    }
}

BOOST_AUTO_TEST_CASE(next_due_is_never_late_after_a_removal) {
    // Removing the earliest node of a high slot leaves that slot's hint early (documented);
    // the driver then wakes up more than once but never hands the other node out early.
    // Two deadlines in the same level-3 slot; the earlier one goes.
    wheel w(12345);
    const tick_type base = (12345 & ~(slot_width(3) - 1)) + slot_width(3);
    test_node early(1);
    test_node late(2);
    w.insert(early, base + 2 * slot_width(2) + 10);
    w.insert(late, base + 2 * slot_width(2) + 3000);
    early.unlink();
    BOOST_TEST(w.size() == 1U);
    hook_list out;
    int wake_ups = 0;
    while (const auto due = w.next_due()) {
        BOOST_TEST_REQUIRE(*due > w.now());
        BOOST_TEST_REQUIRE(*due <= late.deadline());
        const std::size_t handed = w.advance(*due, out);
        BOOST_TEST_REQUIRE(handed == (*due == late.deadline() ? 1U : 0U));
        BOOST_TEST_REQUIRE(++wake_ups <= static_cast<int>(wheel::levels) + 1);
    }
    BOOST_TEST(out.front() == &late);
    BOOST_TEST(w.now() == late.deadline());
}

BOOST_AUTO_TEST_CASE(far_future_deadlines_saturate_without_overflow) {
    for (const tick_type start : {tick_type{0}, tick_type{12345}, tick_type{5} * 24 * 3600 * 1'000'000'000 + 17,
                                  max_tick - slot_width(10), max_tick - 2}) {
        for (const tick_type deadline : {saturating_add(start, three_years_ns), max_tick}) {
            BOOST_TEST_CONTEXT("start " << start << ", deadline " << deadline) {
                // take_all hands it out and leaves time alone.
                {
                    wheel w(start);
                    test_node n;
                    w.insert(n, deadline);
                    BOOST_TEST(n.deadline() == deadline);
                    BOOST_TEST(w.next_due() == deadline);
                    hook_list out;
                    BOOST_TEST(w.take_all(out) == 1U);
                    BOOST_TEST(out.front() == &n);
                    BOOST_TEST(w.now() == start);
                    BOOST_TEST(w.empty());
                }
                // advance(max_tick) hands it out; one tick earlier does not.
                {
                    wheel w(start);
                    test_node n;
                    w.insert(n, deadline);
                    hook_list out;
                    BOOST_TEST(w.advance(deadline - 1, out) == 0U);
                    BOOST_TEST(w.next_due() == deadline);
                    BOOST_TEST(w.advance(max_tick, out) == 1U);
                    BOOST_TEST(out.front() == &n);
                    BOOST_TEST(w.now() == max_tick);
                    BOOST_TEST(!w.next_due().has_value());
                }
            }
        }
    }
    // The very last tick: one tick ahead of a wheel at max_tick - 1, also when clamped.
    wheel w(max_tick - 1);
    test_node last(1);
    test_node clamped(2);
    w.insert(last, max_tick);
    w.insert(clamped, 0);
    BOOST_TEST(clamped.deadline() == max_tick);
    BOOST_TEST(w.next_due() == max_tick);
    hook_list out;
    BOOST_TEST(w.advance(max_tick, out) == 2U);
    BOOST_TEST(ids(out) == (std::vector<int>{1, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(deadline_at_or_before_now_is_clamped_to_the_next_tick) {
    for (const tick_type start : {tick_type{0}, tick_type{12345}, max_tick - 2}) {
        BOOST_TEST_CONTEXT("start " << start) {
            wheel w(start);
            hook_list out;
            // Also once time has moved by advance() rather than by the constructor.
            w.advance(start + 1, out);
            const tick_type now = w.now();
            test_node zero(1);
            test_node before(2);
            test_node at_now(3);
            w.insert(zero, 0);
            w.insert(before, now - 1);
            w.insert(at_now, now);
            for (const test_node* n : {&zero, &before, &at_now}) BOOST_TEST(n->deadline() == now + 1);
            BOOST_TEST(w.next_due() == now + 1);
            BOOST_TEST(w.advance(now, out) == 0U);  // a zero advance hands nothing out
            BOOST_TEST(w.advance(now + 1, out) == 3U);
            BOOST_TEST(ids(out) == (std::vector<int>{1, 2, 3}), boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(unlink_from_every_level_clears_bookkeeping) {
    for (const tick_type start : {tick_type{0}, tick_type{12345}}) {
        for (unsigned level = 0; level < wheel::levels; ++level) {
            BOOST_TEST_CONTEXT("start " << start << ", level " << level) {
                // `gone` sits alone in its slot, `stays` in a later slot of a higher level.
                const tick_type gone_at = start + slot_width(level) + 1;
                const tick_type stays_at = level + 1 < wheel::levels ? start + 2 * slot_width(level + 1) : max_tick;
                wheel w(start);
                test_node gone(1);
                test_node stays(2);
                w.insert(gone, gone_at);
                w.insert(stays, stays_at);
                BOOST_TEST(w.size() == 2U);
                BOOST_TEST(w.next_due() == gone_at);

                gone.unlink();
                BOOST_TEST(!gone.linked());
                BOOST_TEST(!gone.in_wheel());
                BOOST_TEST(w.size() == 1U);
                // A stale occupancy bit would still point at gone's slot.
                BOOST_TEST(w.next_due() == stays_at);
                gone.unlink();  // twice is harmless
                BOOST_TEST(w.size() == 1U);

                hook_list out;
                BOOST_TEST(w.advance(gone_at, out) == 0U);
                BOOST_TEST(out.empty());

                stays.unlink();
                BOOST_TEST(w.empty());
                BOOST_TEST(w.size() == 0U);
                BOOST_TEST(!w.next_due().has_value());
                BOOST_TEST(w.advance(max_tick, out) == 0U);

                // The node is reusable, in the same wheel.
                wheel again(start);
                again.insert(gone, gone_at);
                BOOST_TEST(again.next_due() == gone_at);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(unlink_from_a_shared_slot_keeps_the_others) {
    wheel w;
    test_node a(1);
    test_node b(2);
    test_node c(3);
    const tick_type slot_start = 5 * slot_width(2);
    w.insert(a, slot_start + 100);
    w.insert(b, slot_start + 200);
    w.insert(c, slot_start + 100);
    a.unlink();
    BOOST_TEST(w.size() == 2U);
    const auto due = w.next_due();
    BOOST_TEST_REQUIRE(due.has_value());
    BOOST_TEST(*due <= slot_start + 100);
    hook_list out;
    BOOST_TEST(w.advance(slot_start + 199, out) == 1U);
    BOOST_TEST(ids(out) == (std::vector<int>{3}), boost::test_tools::per_element());
    BOOST_TEST(w.advance(slot_start + 200, out) == 1U);
    BOOST_TEST(ids(out) == (std::vector<int>{3, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(unlink_from_the_expired_list) {
    wheel w(12345);
    test_node a(1);
    test_node b(2);
    test_node c(3);
    for (test_node* n : {&a, &b, &c}) w.insert(*n, 20000);
    hook_list out;
    BOOST_TEST(w.advance(20000, out) == 3U);
    BOOST_TEST(w.empty());
    // Cancelling a handed-out node that has not run yet: it leaves the list, the wheel's size
    // is not touched again.
    b.unlink();
    BOOST_TEST(!b.linked());
    BOOST_TEST(w.size() == 0U);
    BOOST_TEST(ids(out) == (std::vector<int>{1, 3}), boost::test_tools::per_element());
    // And it can be scheduled again.
    w.insert(b, 20001);
    BOOST_TEST(w.size() == 1U);
    BOOST_TEST(w.advance(20001, out) == 1U);
    BOOST_TEST(ids(out) == (std::vector<int>{1, 3, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(node_destructor_unlinks_from_the_wheel) {
    for (unsigned level = 0; level < wheel::levels; ++level) {
        BOOST_TEST_CONTEXT("level " << level) {
            wheel w(12345);
            const tick_type later = max_tick - 1;
            test_node survivor(2);
            w.insert(survivor, later);
            auto doomed = std::make_unique<test_node>(1);
            w.insert(*doomed, 12345 + slot_width(level) + 1);
            BOOST_TEST(w.size() == 2U);
            doomed.reset();
            BOOST_TEST(w.size() == 1U);
            BOOST_TEST(w.next_due() == later);
            hook_list out;
            BOOST_TEST(w.advance(max_tick, out) == 1U);
            BOOST_TEST(ids(out) == (std::vector<int>{2}), boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(node_destructor_unlinks_from_the_expired_list) {
    wheel w;
    test_node a(1);
    auto doomed = std::make_unique<test_node>(2);
    test_node c(3);
    w.insert(a, 70);
    w.insert(*doomed, 70);
    w.insert(c, 70);
    hook_list out;
    BOOST_TEST(w.advance(100, out) == 3U);
    doomed.reset();
    BOOST_TEST(ids(out) == (std::vector<int>{1, 3}), boost::test_tools::per_element());

    // The list going first is just as safe: it detaches what it still holds.
    test_node d(4);
    auto list = std::make_unique<hook_list>();
    w.insert(d, 200);
    w.advance(200, *list);
    BOOST_TEST(d.linked());
    list.reset();
    BOOST_TEST(!d.linked());
}

BOOST_AUTO_TEST_CASE(equal_deadlines_come_out_in_insertion_order) {
    for (const tick_type start : starts) {
        BOOST_TEST_CONTEXT("start " << start) {
            // D is a level-2 (or higher) deadline at first.
            const tick_type deadline = (start & ~(slot_width(2) - 1)) + 5 * slot_width(2) + 10 * slot_width(1) + 7;
            wheel w(start);
            test_node first(1);
            test_node moved(2);
            test_node middle(3);
            test_node direct(4);
            test_node other(5);
            hook_list out;
            w.insert(first, deadline);
            w.insert(moved, deadline);
            // When D is within the next 64^2 ticks it lives in level 1.
            w.advance(deadline - 3 * slot_width(1), out);
            w.insert(middle, deadline);
            // Now D is within level 0's span: first, moved and middle have cascaded there,
            // and `direct` goes straight into level 0.
            w.advance(deadline - 2, out);
            BOOST_TEST(out.empty());
            w.insert(direct, deadline);
            w.insert(other, deadline + 1);
            // Rescheduling is unlink + insert: it goes to the back.
            moved.unlink();
            w.insert(moved, deadline);
            BOOST_TEST(w.advance(deadline + 1, out) == 5U);
            BOOST_TEST(ids(out) == (std::vector<int>{1, 3, 4, 2, 5}), boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(many_equal_deadlines_inserted_over_time_keep_their_order) {
    wheel w(12345);
    const tick_type deadline = 12345 + 3 * slot_width(3) + 1;
    std::deque<test_node> nodes;
    hook_list out;
    int next_id = 0;
    // Insert a few at a time while time approaches D, so they arrive from every level.
    for (tick_type step = slot_width(3); step > 0; step /= 2) {
        for (int i = 0; i < 3; ++i) w.insert(nodes.emplace_back(next_id++), deadline);
        if (w.now() + step < deadline) w.advance(deadline - step, out);
    }
    BOOST_TEST(out.empty());
    BOOST_TEST(w.advance(deadline, out) == nodes.size());
    std::vector<int> expected(nodes.size());
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int>(i);
    BOOST_TEST(ids(out) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(take_all_hands_out_everything_in_deadline_order) {
    wheel w(12345);
    hook_list out;
    w.advance(20000, out);  // a now() that is neither the constructor's nor aligned
    const tick_type now = w.now();
    std::deque<test_node> nodes;
    // Out of order, at several levels, some sharing a deadline, one clamped.
    const std::vector<tick_type> deadlines{
        max_tick, now + slot_width(5), now + 3, now + slot_width(1), now + 3, now + three_years_ns, 0, now + slot_width(5),
    };
    for (std::size_t i = 0; i < deadlines.size(); ++i) w.insert(nodes.emplace_back(static_cast<int>(i)), deadlines[i]);
    BOOST_TEST(w.size() == deadlines.size());

    BOOST_TEST(w.take_all(out) == deadlines.size());
    BOOST_TEST(ids(out) == (std::vector<int>{6, 2, 4, 3, 1, 7, 5, 0}), boost::test_tools::per_element());
    BOOST_TEST(w.now() == now);
    BOOST_TEST(w.empty());
    BOOST_TEST(!w.next_due().has_value());
    for (const test_node& n : nodes) {
        BOOST_TEST(n.linked());
        BOOST_TEST(!n.in_wheel());
    }
    // Nothing more to take.
    BOOST_TEST(w.take_all(out) == 0U);
    BOOST_TEST(out.front() == &nodes[6]);
    out.clear();

    // The wheel keeps working from where it was.
    test_node again(9);
    w.insert(again, now + 5);
    BOOST_TEST(w.next_due() == now + 5);
    BOOST_TEST(w.advance(now + 4, out) == 0U);
    BOOST_TEST(w.advance(now + 5, out) == 1U);
    BOOST_TEST(out.front() == &again);
}

BOOST_AUTO_TEST_CASE(wheel_destructor_detaches_its_nodes) {
    test_node level0(1);
    test_node level3(2);
    test_node level10(3);
    test_node handed_out(4);
    hook_list out;
    {
        wheel w(100);
        w.insert(handed_out, 101);
        w.advance(101, out);
        w.insert(level0, 110);
        w.insert(level3, 101 + slot_width(3));
        w.insert(level10, max_tick);
    }
    for (const test_node* n : {&level0, &level3, &level10}) {
        BOOST_TEST(!n->linked());
        BOOST_TEST(!n->in_wheel());
    }
    // A node already handed out belongs to the caller's list, not to the wheel.
    BOOST_TEST(handed_out.linked());
    BOOST_TEST(ids(out) == (std::vector<int>{4}), boost::test_tools::per_element());

    // The nodes stay usable, in another wheel, and die after the wheel without harm.
    wheel other;
    other.insert(level3, 5);
    BOOST_TEST(other.size() == 1U);
}
