// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// wheel_options::clock_read::per_tick on idlewheel::manual_clock: schedule() and async_wait()
// read no clock; the next wake-up starts their delays. Checked here: the contract (never
// before the delay has passed since the call, at most two ticks after), that a timeout
// scheduled and cancelled within a tick never reaches the wheel, and that every operation the
// default mode supports (handles, nodes, waits, moves, stop, expire_all, max_pending,
// destruction) behaves the same with entries still staged. A randomized run checks both modes
// against the bounds of their contracts.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE clock_read
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using idlewheel::test::session;
using idlewheel::test::tick_ms;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using idlewheel::error_code;

const idlewheel::wheel_options per_tick{.clock = idlewheel::clock_read::per_tick};

struct fixture : idlewheel::test::wheel_fixture {
    fixture() : wheel_fixture(per_tick) {}
};

// Keeps the wheel awake and current: a node re-armed every tick, as a busy server's wheel is.
struct heartbeat {
    explicit heartbeat(wheel_type& w) : wheel(w) { wheel.schedule(node, 1ms); }
    void on_timer() {
        ++beats;
        wheel.schedule(node, 1ms);
    }
    wheel_type& wheel;
    int beats = 0;
    idlewheel::timer_node node{idlewheel::bind_member<&heartbeat::on_timer>(this)};
};

}  // namespace

BOOST_AUTO_TEST_SUITE(contract)

// Every delay from 0 to 120 ms, scheduled at every millisecond phase within a tick, on a wheel
// that is awake (a heartbeat re-arms every tick, so the wheel is never behind the clock and the
// next wake-up is up to a tick away). Time moves 1 ms at a time, so run times are exact.
BOOST_AUTO_TEST_CASE(never_early_and_at_most_two_ticks_late_on_an_awake_wheel) {
    constexpr int max_delay = 120;
    for (int phase = 0; phase < tick_ms; ++phase) {
        manual_clock::reset();
        net::io_context io;
        wheel_type wheel(io, per_tick);
        const auto origin = manual_clock::now();
        heartbeat beat(wheel);
        advance_and_poll(io, 1000ms + std::chrono::milliseconds(phase));
        const std::int64_t start = ms_since(origin);
        const auto wakeups_before = wheel.stats().wakeups;

        std::vector<std::int64_t> fired(max_delay + 1, -1);
        std::vector<int> runs(max_delay + 1, 0);
        std::vector<int> order;
        for (int d = 0; d <= max_delay; ++d) {
            const auto i = static_cast<std::size_t>(d);
            wheel.schedule(std::chrono::milliseconds(d), [&fired, &runs, &order, i, d, origin] {
                ++runs[i];
                fired[i] = ms_since(origin);
                order.push_back(d);
            });
        }
        BOOST_TEST(wheel.pending() == static_cast<std::size_t>(max_delay + 2));  // + the heartbeat
        BOOST_TEST(wheel.stats().wakeups == wakeups_before);  // staging wakes nothing by itself
        advance_and_poll(io, std::chrono::milliseconds(max_delay + 3 * tick_ms));

        // The delays start at the next tick boundary, where the wheel reads the clock.
        const std::int64_t flush = (start / tick_ms + 1) * tick_ms;
        for (int d = 0; d <= max_delay; ++d) {
            BOOST_TEST_CONTEXT("phase " << phase << " ms, delay " << d << " ms") {
                const auto i = static_cast<std::size_t>(d);
                BOOST_TEST(runs[i] == 1);
                BOOST_TEST(fired[i] >= start + d);
                BOOST_TEST(fired[i] <= start + d + 2 * tick_ms);
                // Exactly: the first boundary at or after flush + d that the wheel has not
                // already handed out (the flush's own tick is handed out).
                const std::int64_t due = std::max((flush + d + tick_ms - 1) / tick_ms * tick_ms, flush + tick_ms);
                BOOST_TEST(fired[i] == due);
            }
        }
        for (std::size_t k = 1; k < order.size(); ++k) BOOST_TEST(order[k - 1] < order[k]);  // deadline, then FIFO
        BOOST_TEST(wheel.stats().worst_lateness.count() == 0);
    }
}

// A wheel that has slept (nothing pending) is behind the clock: the wake-up it asks for is in
// the past, so it comes at once and the delays start at the call itself, as exact as the
// default mode.
BOOST_FIXTURE_TEST_CASE(a_sleeping_wheel_starts_delays_at_once, fixture) {
    advance_and_poll(io, 1003ms, 1s);
    session s(t0);
    wheel.schedule(s.node, 25ms);
    BOOST_TEST(wheel.stats().wakeups == 0U);
    poll(io);  // the wake-up asked for (a past boundary) runs now, at 1003 ms
    BOOST_TEST(wheel.stats().wakeups == 1U);
    advance_and_poll(io, 100ms);
    BOOST_TEST(s.fired == (std::vector<std::int64_t>{1030}), boost::test_tools::per_element());
}

// Issue 20, item 3: a wheel that has never woken up is asleep too. Its first schedule() at
// t = 0 used to wait for the end of tick 0 (a 10 ms timeout fired at 20 ms); now the wake-up
// it asks for comes at once and the delay starts at the call, as on a wheel that slept.
BOOST_FIXTURE_TEST_CASE(a_fresh_wheel_starts_delays_at_once, fixture) {
    session s(t0);
    wheel.schedule(s.node, 10ms);
    BOOST_TEST(wheel.stats().wakeups == 0U);
    poll(io);
    BOOST_TEST(wheel.stats().wakeups == 1U);
    advance_and_poll(io, 50ms);
    BOOST_TEST(s.fired == (std::vector<std::int64_t>{10}), boost::test_tools::per_element());
    // Asleep since (nothing pending): at once again.
    advance_and_poll(io, 3ms);  // 53 ms
    session s2(t0);
    wheel.schedule(s2.node, 10ms);
    advance_and_poll(io, 50ms);
    BOOST_TEST(s2.fired == (std::vector<std::int64_t>{70}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(staging)

// The common case of operation deadlines: armed, and cancelled by the operation completing
// within the same tick. The entry never enters the wheel; one wake-up closes the tick.
BOOST_FIXTURE_TEST_CASE(scheduled_and_cancelled_within_a_tick_never_reaches_the_wheel, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1001ms);
    std::vector<std::unique_ptr<session>> ops;
    for (int i = 0; i < 1000; ++i) ops.push_back(std::make_unique<session>(t0));
    const auto before = wheel.stats();
    for (auto& op : ops) {
        wheel.schedule(op->node, 5s);
        BOOST_TEST(op->node.pending());
        BOOST_TEST(op->node.cancel());
        BOOST_TEST(!op->node.pending());
        BOOST_TEST(!op->node.cancel());
    }
    BOOST_TEST(wheel.pending() == 1U);  // the heartbeat
    const auto after = wheel.stats();
    BOOST_TEST(after.scheduled - before.scheduled == 1000U);
    BOOST_TEST(after.cancelled - before.cancelled == 1000U);
    advance_and_poll(io, 6s);
    for (auto& op : ops) BOOST_TEST(op->fired.empty());
    BOOST_TEST(wheel.pending() == 1U);
}

BOOST_FIXTURE_TEST_CASE(cancel_and_move_after_the_flush, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1000ms);
    session a(t0), b(t0);
    wheel.schedule(a.node, 50ms);
    wheel.schedule(b.node, 50ms);
    advance_and_poll(io, 15ms);  // flushed at 1010 ms: due at 1060
    BOOST_TEST(a.node.pending());
    BOOST_TEST(a.node.cancel());
    wheel.schedule(b.node, 100ms);  // a move: staged again, starts at the next boundary
    BOOST_TEST(wheel.pending() == 2U);
    advance_and_poll(io, 200ms);
    BOOST_TEST(a.fired.empty());
    BOOST_TEST(b.fired == (std::vector<std::int64_t>{1120}), boost::test_tools::per_element());
    const auto s = wheel.stats();
    BOOST_TEST(s.rescheduled >= 1U);
}

BOOST_FIXTURE_TEST_CASE(moving_a_staged_entry_keeps_one_copy, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1000ms);
    session a(t0);
    wheel.schedule(a.node, 30ms);
    wheel.schedule(a.node, 20ms);  // moved while staged
    wheel.schedule(a.node, 40ms);
    BOOST_TEST(wheel.pending() == 2U);
    advance_and_poll(io, 100ms);
    BOOST_TEST(a.fired == (std::vector<std::int64_t>{1050}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 1U);
}

// A node moved from a per_schedule wheel to a per_tick one, and back, staged or not.
BOOST_FIXTURE_TEST_CASE(moving_between_wheels, fixture) {
    wheel_type exact(io);
    session a(t0);
    exact.schedule(a.node, 30ms);
    wheel.schedule(a.node, 30ms);  // from the exact wheel into this one's staging
    BOOST_TEST(exact.pending() == 0U);
    BOOST_TEST(wheel.pending() == 1U);
    exact.schedule(a.node, 20ms);  // out of the staging list
    BOOST_TEST(exact.pending() == 1U);
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 50ms);
    BOOST_TEST(a.fired == (std::vector<std::int64_t>{20}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(handles_report_their_state_while_staged, fixture) {
    int runs = 0;
    auto t = wheel.schedule(20ms, [&runs] { ++runs; });
    BOOST_TEST(t.pending());
    BOOST_TEST(t.cancel());
    BOOST_TEST(t.cancelled());
    BOOST_TEST(!t.pending());
    auto u = wheel.schedule(20ms, [&runs] { ++runs; });
    advance_and_poll(io, 30ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(u.expired());
    BOOST_TEST(!u.cancel());
}

BOOST_FIXTURE_TEST_CASE(async_wait_staged_completes_and_cancels, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1005ms);
    int calls = 0;
    error_code got;
    std::int64_t at = -1;
    wheel.async_wait(30ms, [&](error_code ec) {
        ++calls;
        got = ec;
        at = ms_since(t0);
    });
    net::cancellation_signal sig;
    int aborted = 0;
    wheel.async_wait(30ms, net::bind_cancellation_slot(sig.slot(), [&aborted](error_code ec) {
                         if (ec == net::error::operation_aborted) ++aborted;
                     }));
    BOOST_TEST(wheel.pending() == 3U);
    sig.emit(net::cancellation_type::terminal);  // while staged
    poll(io);
    BOOST_TEST(aborted == 1);
    BOOST_TEST(wheel.pending() == 2U);
    advance_and_poll(io, 100ms);
    BOOST_TEST(calls == 1);
    BOOST_TEST(!got);
    BOOST_TEST(at >= 1035);
    BOOST_TEST(at <= 1035 + 2 * tick_ms);
}

BOOST_FIXTURE_TEST_CASE(max_pending_counts_staged_entries, fixture) {
    wheel_type bounded(io, {.max_pending = 2, .clock = idlewheel::clock_read::per_tick});
    session a(t0), b(t0), c(t0);
    bounded.schedule(a.node, 1s);
    bounded.schedule(b.node, 1s);
    try {
        bounded.schedule(c.node, 1s);
        BOOST_FAIL("a third entry was accepted");
    } catch (const idlewheel::system_error& e) {
        BOOST_TEST((e.code() == make_error_code(idlewheel::error::too_many_pending)));
    }
    bounded.schedule(a.node, 2s);  // a move is never refused
    BOOST_TEST(bounded.pending() == 2U);
    BOOST_TEST(bounded.stats().rejected == 1U);
    error_code got;
    bounded.async_wait(1s, [&got](error_code ec) { got = ec; });
    poll(io);
    BOOST_TEST((got == make_error_code(idlewheel::error::too_many_pending)));
}

BOOST_FIXTURE_TEST_CASE(stop_returns_staged_handles_and_aborts_staged_waits, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1005ms);
    int runs = 0;
    auto flushed = wheel.schedule(1s, [&runs] { ++runs; });
    advance_and_poll(io, 10ms);
    auto staged = wheel.schedule(1s, [&runs] { ++runs; });
    session s(t0);
    wheel.schedule(s.node, 1s);
    error_code got;
    wheel.async_wait(1s, [&got](error_code ec) { got = ec; });
    BOOST_TEST(wheel.pending() == 5U);
    auto unrun = wheel.stop();
    BOOST_TEST(unrun.size() == 2U);  // both handles, staged or not
    BOOST_TEST(staged.cancelled());
    BOOST_TEST(flushed.cancelled());
    BOOST_TEST(!s.node.pending());
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 3s);
    BOOST_TEST(runs == 0);
    BOOST_TEST(s.fired.empty());
    BOOST_TEST((got == net::error::operation_aborted));
}

// expire_all() gives staged entries their deadlines first, so everything runs in deadline order.
BOOST_FIXTURE_TEST_CASE(expire_all_runs_staged_entries_in_deadline_order, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1000ms);
    std::vector<int> order;
    wheel.schedule(50ms, [&order] { order.push_back(50); });
    wheel.schedule(10s, [&order] { order.push_back(10000); });
    advance_and_poll(io, 10ms);  // those two are in the wheel now
    wheel.schedule(20ms, [&order] { order.push_back(20); });
    wheel.schedule(1h, [&order] { order.push_back(3600000); });
    BOOST_TEST(wheel.expire_all() == 5U);  // + the heartbeat
    BOOST_TEST(order == (std::vector<int>{20, 50, 10000, 3600000}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(destroying_the_wheel_with_staged_entries) {
    manual_clock::reset();
    net::io_context io;
    auto wheel = std::make_unique<wheel_type>(io, per_tick);
    int runs = 0;
    auto t = wheel->schedule(10ms, [&runs] { ++runs; });
    session s(manual_clock::now());
    wheel->schedule(s.node, 10ms);
    error_code got;
    wheel->async_wait(10ms, [&got](error_code ec) { got = ec; });
    wheel.reset();
    BOOST_TEST(t.cancelled());
    BOOST_TEST(!s.node.pending());
    advance_and_poll(io, 50ms);
    BOOST_TEST(runs == 0);
    BOOST_TEST((got == net::error::operation_aborted));
}

BOOST_FIXTURE_TEST_CASE(a_callback_staging_more_work, fixture) {
    heartbeat beat(wheel);
    advance_and_poll(io, 1000ms);
    std::vector<std::int64_t> at;
    std::function<void()> again = [&] {
        at.push_back(ms_since(t0));
        if (at.size() < 5) wheel.schedule(30ms, again);
    };
    wheel.schedule(30ms, again);
    advance_and_poll(io, 500ms);
    BOOST_TEST_REQUIRE(at.size() == 5U);
    for (std::size_t k = 1; k < at.size(); ++k) {
        BOOST_TEST(at[k] - at[k - 1] >= 30);
        BOOST_TEST(at[k] - at[k - 1] <= 30 + 2 * tick_ms);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(randomized)

// Nodes scheduled, moved and cancelled at random times with random delays, on both modes, time
// moving 1 ms at a time: every scheduling that is neither cancelled nor replaced runs exactly
// once, never before its delay has passed since the call, and at most one tick (per_schedule)
// or two ticks (per_tick) after. A lone far timeout sometimes keeps the wheel asleep, so both
// the "behind the clock" and the "awake" paths are taken.
BOOST_AUTO_TEST_CASE(both_modes_keep_their_contracts) {
    for (const auto mode : {idlewheel::clock_read::per_schedule, idlewheel::clock_read::per_tick}) {
        for (std::uint32_t seed = 1; seed <= 8; ++seed) {
            BOOST_TEST_CONTEXT("mode " << static_cast<int>(mode) << ", seed " << seed) {
                manual_clock::reset();
                net::io_context io;
                wheel_type wheel(io, {.clock = mode});
                const auto origin = manual_clock::now();
                std::mt19937 rng(seed);

                struct slot {
                    std::int64_t due_earliest = -1;  // call time + delay of the live scheduling
                    int runs = 0;
                    bool live = false;
                    bool bad = false;
                    std::int64_t fired_at = -1;
                    std::int64_t slack = 0;
                };
                constexpr std::size_t n = 64;
                std::vector<slot> slots(n);
                std::vector<std::unique_ptr<idlewheel::timer_node>> nodes;
                const std::int64_t slack = (mode == idlewheel::clock_read::per_tick ? 2 : 1) * tick_ms;
                struct ctx {
                    slot* s;
                    manual_clock::time_point origin;
                };
                std::vector<ctx> ctxs(n);
                for (std::size_t i = 0; i < n; ++i) {
                    ctxs[i] = {&slots[i], origin};
                    nodes.push_back(std::make_unique<idlewheel::timer_node>(idlewheel::timer_callback{
                        [](void* p) {
                            auto& c = *static_cast<ctx*>(p);
                            const std::int64_t now = ms_since(c.origin);
                            ++c.s->runs;
                            c.s->fired_at = now;
                            if (!c.s->live || now < c.s->due_earliest || now > c.s->due_earliest + c.s->slack) c.s->bad = true;
                            c.s->live = false;
                        },
                        &ctxs[i]}));
                }
                int checked = 0, failures = 0;
                for (int step = 0; step < 3000; ++step) {
                    const auto i = static_cast<std::size_t>(rng() % n);
                    switch (rng() % 4) {
                    case 0:
                    case 1: {  // schedule or move
                        const int d = static_cast<int>(rng() % 200);
                        if (slots[i].live) ++checked;  // replaced: that scheduling must not run
                        wheel.schedule(*nodes[i], std::chrono::milliseconds(d));
                        slots[i] = {ms_since(origin) + d, 0, true, slots[i].bad, -1, slack};
                        break;
                    }
                    case 2:
                        if (nodes[i]->cancel()) slots[i].live = false;
                        break;
                    default:
                        advance_and_poll(io, std::chrono::milliseconds(1 + rng() % (rng() % 8 == 0 ? 400 : 12)));
                        break;
                    }
                    for (const auto& s : slots) {
                        if (s.bad) ++failures;
                        if (s.runs > 1) ++failures;
                    }
                    BOOST_TEST_REQUIRE(failures == 0);
                }
                advance_and_poll(io, 300ms);
                for (std::size_t k = 0; k < n; ++k) {
                    BOOST_TEST(!slots[k].live);  // nothing live was missed
                    BOOST_TEST(!slots[k].bad);
                    BOOST_TEST(!nodes[k]->pending());
                }
                BOOST_TEST(wheel.pending() == 0U);
                BOOST_TEST(checked > 0);
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
