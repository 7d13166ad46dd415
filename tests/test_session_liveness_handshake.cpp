// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/session_liveness.hpp>

// session_liveness.hpp's handshake phase (a part of test_session_liveness, whose first file is
// test_session_liveness.cpp), on the manual clock: the handshake deadline from start, and idle
// in the handshake phase (session_liveness_options::idle_in_handshake) beside it.

#include "support/liveness_scene.hpp"
#include "support/session_scene.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include "support/session_liveness_scene.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace {
using namespace idlewheel::test::session_liveness_scene;  // support/session_liveness_scene.hpp
}  // namespace

// ---- handshake ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(handshake_deadline_runs_from_start_and_a_late_success_is_refused) {
    session_fixture f({.handshake_timeout = 100ms, .idle_timeout = 1s});
    f.step_to(3);
    f.session->start_handshake();
    BOOST_TEST((f.session->current() == phase::handshake));
    f.step_to(102);
    BOOST_TEST(f.events.empty());  // never early: 3 + 100 = 103
    f.step_to(200);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "handshake timeout");
    BOOST_TEST(f.events[0].at == ceil_to_tick(103));  // the tick boundary at or after the deadline
    BOOST_TEST(f.live.handshake_timeouts == 1U);
    BOOST_TEST(f.session->expired());
    BOOST_TEST((f.session->current() == phase::ended));
    BOOST_TEST(!f.session->handshake_done());  // the success came too late: do not trust it
    BOOST_TEST(f.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(handshake_in_time_starts_idleness_from_then) {
    session_fixture f({.handshake_timeout = 100ms, .idle_timeout = 300ms});
    f.session->start_handshake();
    f.step_to(90);
    BOOST_TEST(f.session->handshake_done());
    BOOST_TEST(f.wheel.pending() == 1U);  // one entry, moved: the handshake deadline is gone
    f.step_to(389);
    BOOST_TEST(f.events.empty());
    f.step_to(500);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "idle");
    BOOST_TEST(f.events[0].at == 390);
    BOOST_TEST(f.live.handshake_timeouts == 0U);
    BOOST_TEST(f.live.reader_idle == 1U);
}

// ---- idle in the handshake phase (session_liveness_options::idle_in_handshake) ---------------

// Nothing arrives: idle comes first (40 ms from start, before the 100 ms deadline). It is the
// idle verdict and nothing else: counted once as reader_idle, never as a handshake timeout; the
// closing phase begins as after an idle in the open phase, close_timeout bounds it, and the
// late handshake success is refused.
BOOST_AUTO_TEST_CASE(idle_in_handshake_comes_first_and_is_only_idle) {
    session_fixture f({.handshake_timeout = 100ms, .idle_timeout = 40ms, .close_timeout = 50ms, .idle_in_handshake = true});
    std::optional<phase> phase_at_idle;
    f.react = [&](liveness_event e) {
        if (e == liveness_event::idle) phase_at_idle = f.session->current();
    };
    f.step_to(3);
    f.session->start_handshake();
    f.step_to(42);
    BOOST_TEST(f.events.empty());  // never early: 3 + 40 = 43
    f.step_to(400);
    BOOST_TEST_REQUIRE(f.events.size() == 2U);
    BOOST_TEST(name(f.events[0].event) == "idle");
    const auto idle_at = f.events[0].at;
    BOOST_TEST(idle_at >= 43);
    BOOST_TEST(idle_at * 1000 <= (43 + 2 * tick_ms) * 1000 + unit_us);  // idle's precision: two ticks (+ a unit)
    BOOST_TEST((phase_at_idle == phase::closing));
    BOOST_TEST(name(f.events[1].event) == "close timeout");  // the close deadline from the verdict
    BOOST_TEST(f.events[1].at >= idle_at + 50);
    BOOST_TEST(f.events[1].at <= idle_at + 50 + tick_ms);
    BOOST_TEST(f.times(liveness_event::handshake_timeout).empty());
    BOOST_TEST(f.live.reader_idle == 1U);
    BOOST_TEST(f.live.handshake_timeouts == 0U);
    BOOST_TEST(f.live.close_timeouts == 1U);
    BOOST_TEST(f.live.operation_timeouts == 0U);
    BOOST_TEST(!f.session->handshake_done());  // too late: closing, then ended
    BOOST_TEST(f.wheel.pending() == 0U);

    // The same without a close deadline: the close has begun and nothing is left to watch.
    session_fixture g({.handshake_timeout = 100ms, .idle_timeout = 40ms, .idle_in_handshake = true});
    g.session->start_handshake();
    g.step_to(400);
    BOOST_TEST_REQUIRE(g.events.size() == 1U);
    BOOST_TEST(name(g.events[0].event) == "idle");
    BOOST_TEST((g.session->current() == phase::closing));
    BOOST_TEST((g.session->verdict() == liveness_event::idle));
    BOOST_TEST(!g.session->expired());  // idle is a close, not a drop
    BOOST_TEST(!g.session->handshake_done());
    BOOST_TEST(!g.session->start_close());  // the close is already under way
    BOOST_TEST(g.live.reader_idle == 1U);
    BOOST_TEST(g.live.handshake_timeouts == 0U);
    BOOST_TEST(g.wheel.pending() == 0U);
}

// Messages in the handshake phase start idle again; the deadline does not move: reads every
// 20 ms (idle 40 ms) keep the session from idle, and the handshake deadline still comes at
// 100. Signs of life that are not messages (on_inbound) do not restart idle.
BOOST_AUTO_TEST_CASE(idle_in_handshake_restarts_on_read_and_the_deadline_stays_hard) {
    session_fixture f({.handshake_timeout = 100ms, .idle_timeout = 40ms, .idle_in_handshake = true});
    f.session->start_handshake();
    f.step_to(300, [&](std::int64_t t) {
        if (t % 20 == 0) f.session->on_read();
    });
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "handshake timeout");
    BOOST_TEST(f.events[0].at == ceil_to_tick(100));
    BOOST_TEST(f.live.handshake_timeouts == 1U);
    BOOST_TEST(f.live.reader_idle == 0U);
    BOOST_TEST(f.session->expired());

    // Reads at 20 and 50, then nothing: idle 40 ms after the last one, not after the start.
    session_fixture g({.handshake_timeout = 1s, .idle_timeout = 40ms, .idle_in_handshake = true});
    g.session->start_handshake();
    g.step_to(500, [&](std::int64_t t) {
        if (t == 20 || t == 50) g.session->on_read();
        if (t % 5 == 0) g.session->on_inbound();  // not a message: idleness is not affected
    });
    BOOST_TEST_REQUIRE(g.events.size() == 1U);
    BOOST_TEST(name(g.events[0].event) == "idle");
    BOOST_TEST(g.events[0].at >= 50 + 40);
    BOOST_TEST(g.events[0].at * 1000 <= (50 + 40 + 2 * tick_ms) * 1000 + unit_us);
    BOOST_TEST(g.live.reader_idle == 1U);
}

// Off (the default), or on with no idle_timeout: the handshake phase is as it always was, its
// deadline only, one look at it; idle runs from handshake_done().
BOOST_AUTO_TEST_CASE(idle_in_handshake_off_watches_the_deadline_only) {
    for (const bool with_option : {false, true}) {
        session_fixture f(with_option ? session_liveness_options{.handshake_timeout = 100ms, .idle_in_handshake = true}
                                      : session_liveness_options{.handshake_timeout = 100ms, .idle_timeout = 40ms});
        f.session->start_handshake();
        BOOST_TEST((f.session->expiry() - idlewheel::manual_clock::now() >= 100ms), "armed for the deadline, option " << with_option);
        const auto scheduled_before = f.wheel.stats().scheduled;
        f.step_to(300);
        BOOST_TEST_REQUIRE(f.events.size() == 1U);
        BOOST_TEST(name(f.events[0].event) == "handshake timeout");
        BOOST_TEST(f.events[0].at == ceil_to_tick(100));
        BOOST_TEST(f.live.reader_idle == 0U);
        BOOST_TEST(f.wheel.stats().scheduled == scheduled_before);  // no re-arm on the way
    }
    // Off, with no deadline: nothing to watch, the entry is not in the wheel.
    session_fixture g({.idle_timeout = 40ms});
    g.session->start_handshake();
    BOOST_TEST(g.wheel.pending() == 0U);
    g.step_to(300);
    BOOST_TEST(g.events.empty());
    BOOST_TEST(g.session->handshake_done());  // idle from now
    g.step_to(339);
    BOOST_TEST(g.events.empty());
    g.step_to(400);
    BOOST_TEST_REQUIRE(g.events.size() == 1U);
    BOOST_TEST(g.events[0].at == 340);
}

// Idle with no handshake deadline: the entry is armed by idle alone, and a handshake done in
// time starts idle again from then (the open phase's idle, as without the option).
BOOST_AUTO_TEST_CASE(idle_in_handshake_without_a_handshake_deadline) {
    session_fixture f({.idle_timeout = 40ms, .idle_in_handshake = true});
    f.session->start_handshake();
    BOOST_TEST(f.wheel.pending() == 1U);
    f.step_to(300);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "idle");
    BOOST_TEST(f.events[0].at >= 40);
    BOOST_TEST(f.events[0].at * 1000 <= (40 + 2 * tick_ms) * 1000 + unit_us);
    BOOST_TEST((f.session->current() == phase::closing));
    BOOST_TEST(f.wheel.pending() == 0U);  // close_timeout 0

    session_fixture g({.idle_timeout = 40ms, .idle_in_handshake = true});
    g.session->start_handshake();
    g.step_to(30);
    BOOST_TEST(g.session->handshake_done());
    g.step_to(69);
    BOOST_TEST(g.events.empty());  // 30 + 40
    g.step_to(300);
    BOOST_TEST_REQUIRE(g.events.size() == 1U);
    BOOST_TEST(name(g.events[0].event) == "idle");
    BOOST_TEST(g.events[0].at == 70);
}

// Both due at one look: the handshake deadline is the verdict, whether the two times are equal
// or idle's falls earlier in the tick the deadline ends.
BOOST_AUTO_TEST_CASE(idle_in_handshake_and_the_deadline_due_together_is_a_handshake_timeout) {
    for (const auto idle : {40ms, 35ms, 31ms}) {
        session_fixture f({.handshake_timeout = 40ms, .idle_timeout = idle, .idle_in_handshake = true});
        f.session->start_handshake();
        f.step_to(300);
        BOOST_TEST_REQUIRE(f.events.size() == 1U, "idle " << idle.count());
        BOOST_TEST(name(f.events[0].event) == "handshake timeout", "idle " << idle.count());
        BOOST_TEST(f.events[0].at == 40);
        BOOST_TEST(f.live.handshake_timeouts == 1U);
        BOOST_TEST(f.live.reader_idle == 0U);
        BOOST_TEST((f.session->current() == phase::ended));
    }
}

// Extremes: idle far longer than the deadline (only the deadline is ever seen); idle of one
// tick, and of one unit (tick / 16), never early and within its two ticks; a read each tick
// keeps a one-tick idle away until the deadline.
BOOST_AUTO_TEST_CASE(idle_in_handshake_extreme_times) {
    {
        session_fixture f({.handshake_timeout = 100ms, .idle_timeout = 24h * 3, .idle_in_handshake = true});
        f.session->start_handshake();
        f.step_to(300);
        BOOST_TEST_REQUIRE(f.events.size() == 1U);
        BOOST_TEST(name(f.events[0].event) == "handshake timeout");
        BOOST_TEST(f.events[0].at == 100);
        BOOST_TEST(f.live.reader_idle == 0U);
        BOOST_TEST(f.wheel.pending() == 0U);
    }
    for (const std::chrono::microseconds idle : {std::chrono::microseconds(tick_ms * 1000), std::chrono::microseconds(unit_us)}) {
        session_fixture f({.handshake_timeout = 1s, .idle_timeout = idle, .idle_in_handshake = true});
        f.step_to(5);
        f.session->start_handshake();
        f.step_to(300);
        BOOST_TEST_REQUIRE(f.events.size() == 1U, "idle " << idle.count() << " us");
        BOOST_TEST(name(f.events[0].event) == "idle");
        BOOST_TEST(f.events[0].at * 1000 >= 5000 + idle.count());
        BOOST_TEST(f.events[0].at * 1000 <= 5000 + idle.count() + 2 * tick_ms * 1000 + unit_us);
        BOOST_TEST(f.live.reader_idle == 1U);
        BOOST_TEST(f.live.handshake_timeouts == 0U);
    }
    {
        session_fixture f({.handshake_timeout = 100ms, .idle_timeout = std::chrono::milliseconds(tick_ms),
                           .idle_in_handshake = true});
        f.session->start_handshake();
        f.step_to(300, [&](std::int64_t t) {
            if (t % tick_ms == 0) f.session->on_read();
        });
        BOOST_TEST_REQUIRE(f.events.size() == 1U);
        BOOST_TEST(name(f.events[0].event) == "handshake timeout");
        BOOST_TEST(f.events[0].at == 100);
    }
    {
        // Idle longer than an activity mark may live (max_mark_age ticks, 41 s at 10 ms): the
        // entry looks early and settles the handshake phase's reads as it does the open phase's.
        session_fixture f({.handshake_timeout = 200s, .idle_timeout = 60s, .idle_in_handshake = true});
        f.session->start_handshake();
        f.step_to(200'000, [&](std::int64_t t) {
            if (t == 1'000 || t == 45'000) f.session->on_read();
        });
        BOOST_TEST_REQUIRE(f.events.size() == 1U);
        BOOST_TEST(name(f.events[0].event) == "idle");
        BOOST_TEST(f.events[0].at >= 105'000);
        BOOST_TEST(f.events[0].at * 1000 <= (105'000 + 2 * tick_ms) * 1000 + unit_us);
    }
}

// A restart after an idle verdict starts idle from the new start_handshake(), not from the
// old session's last read.
BOOST_AUTO_TEST_CASE(idle_in_handshake_restarts_with_the_session) {
    session_fixture f({.handshake_timeout = 1s, .idle_timeout = 40ms, .idle_in_handshake = true});
    f.session->start_handshake();
    f.step_to(100);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    f.session->start_handshake();  // at 100
    f.step_to(139);
    BOOST_TEST(f.events.size() == 1U);
    f.step_to(300);
    BOOST_TEST_REQUIRE(f.events.size() == 2U);
    BOOST_TEST(name(f.events[1].event) == "idle");
    BOOST_TEST(f.events[1].at >= 140);
    BOOST_TEST(f.live.reader_idle == 2U);
}
