// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/session_liveness.hpp>

// basic_session_liveness on a manual-clock wheel, driven 1 ms at a time (support/liveness_scene):
// the sans-I/O machine of one session (handshake -> open -> closing -> ended) with its one
// wheel entry, its 16 bytes of state, and exact times: never early, at most the contract's
// ticks late. Its transports run over real sockets: stream_liveness in test_stream_liveness.cpp,
// websocket_liveness in test_beast_websocket_liveness.cpp.

#include "support/liveness_scene.hpp"
#include "support/session_scene.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE session_liveness
#include <boost/test/unit_test.hpp>


#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::liveness_event;
using idlewheel::session_liveness_options;
using idlewheel::test::liveness::ceil_to_tick;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::tick_ms;
using idlewheel::test::liveness::wheel_type;
using live_type = idlewheel::basic_session_liveness<wheel_type>;
using config_type = idlewheel::basic_session_liveness_config<wheel_type>;
using phase = live_type::phase;

constexpr std::int64_t unit_us = tick_ms * 1000 / 16;  // times are kept in tick / 16

using idlewheel::test::session_scene::seen;

// One session on the scene's wheel: its events with their times, and what to do on each.
struct session_fixture : scene {
    explicit session_fixture(const session_liveness_options& o, const idlewheel::wheel_options& w = {})
        : scene(w), config(wheel, o, {&on_event, this}, &live) {
        session = std::make_unique<live_type>(config);  // on the heap: ASan sees a use after destruction
    }

    static void on_event(void* context, live_type& s, liveness_event e) {
        auto& self = *static_cast<session_fixture*>(context);
        BOOST_TEST(&s == &*self.session);
        self.events.push_back({e, self.now_ms()});
        if (self.react) self.react(e);
    }

    [[nodiscard]] std::vector<std::int64_t> times(liveness_event e) const {
        std::vector<std::int64_t> out;
        for (const auto& s : events)
            if (s.event == e) out.push_back(s.at);
        return out;
    }

    config_type config;
    std::unique_ptr<live_type> session;
    std::vector<seen> events;
    std::function<void(liveness_event)> react;
};

using idlewheel::test::session_scene::name;

}  // namespace

BOOST_AUTO_TEST_CASE(idle_heartbeat_and_deadlines_fit_in_64_bytes) {
    static_assert(sizeof(live_type) <= 64);
    static_assert(sizeof(idlewheel::session_liveness) <= 64);
    BOOST_TEST(sizeof(idlewheel::session_liveness) <= 64U);
    BOOST_TEST_MESSAGE("sizeof(session_liveness) = " << sizeof(idlewheel::session_liveness));
}

BOOST_AUTO_TEST_CASE(options_out_of_range_are_refused) {
    scene s;
    BOOST_CHECK_THROW(config_type(s.wheel, {.ping_interval = 1s}, config_type::bound_handler{&session_fixture::on_event}), std::invalid_argument);
    BOOST_CHECK_THROW(config_type(s.wheel, {.idle_timeout = 24h * 30}, config_type::bound_handler{&session_fixture::on_event}),
                      std::invalid_argument);
    BOOST_CHECK_NO_THROW(config_type(s.wheel, {.idle_timeout = 24h * 3}, config_type::bound_handler{&session_fixture::on_event}));
}

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

// ---- idle -----------------------------------------------------------------------------------

// A pattern of messages: every report comes no sooner than idle after the latest message,
// and at most two ticks (plus one unit) later, as idle_watch's contract says.
BOOST_AUTO_TEST_CASE(idle_is_never_early_and_at_most_two_ticks_late) {
    const std::int64_t idle = 200;
    for (const std::int64_t gap : {37, 150, 199, 201, 333}) {
        session_fixture f({.idle_timeout = std::chrono::milliseconds(idle), .close_timeout = 0ms});
        f.session->start();
        std::int64_t last = 0;
        int reads = 0;
        f.react = [&](liveness_event) {};
        f.step_to(2000, [&](std::int64_t t) {
            if (f.session->current() == phase::open && reads < 5 && t % gap == 0) {
                f.session->on_read();
                last = t;
                ++reads;
            }
        });
        BOOST_TEST_REQUIRE(f.events.size() == 1U, "gap " << gap);
        const auto at = f.events[0].at;
        BOOST_TEST(at >= last + idle, "gap " << gap);
        BOOST_TEST(at * 1000 <= (last + idle + 2 * tick_ms) * 1000 + unit_us, "gap " << gap);
        BOOST_TEST((f.session->current() == phase::closing));
        BOOST_TEST(f.wheel.pending() == 0U);  // close_timeout 0: no deadline on the close
    }
}

BOOST_AUTO_TEST_CASE(messages_keep_a_session_open_and_the_entry_moves_lazily) {
    session_fixture f({.idle_timeout = 100ms});
    f.session->start();
    const auto scheduled_before = f.wheel.stats().scheduled;
    f.step_to(1000, [&](std::int64_t t) {
        if (t % 10 == 5) f.session->on_read();  // 100 messages
    });
    BOOST_TEST(f.events.empty());
    // One re-arm per idle period at most, not one per message.
    BOOST_TEST(f.wheel.stats().scheduled - scheduled_before <= 11U);
    BOOST_TEST(f.wheel.pending() == 1U);
}

// ---- heartbeat ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(unanswered_ping_is_a_dead_peer_and_one_ping_only) {
    session_fixture f({.idle_timeout = 5s, .ping_interval = 100ms, .pong_timeout = 50ms});
    f.session->start();
    f.step_to(400);
    BOOST_TEST_REQUIRE(f.events.size() == 2U);
    BOOST_TEST(name(f.events[0].event) == "send ping");
    BOOST_TEST(f.events[0].at == 100);
    BOOST_TEST(f.session->awaiting_pong() == false);  // ended
    BOOST_TEST(name(f.events[1].event) == "dead peer");
    BOOST_TEST(f.events[1].at == 150);  // ping + pong_timeout, never before
    BOOST_TEST(f.live.pings_sent == 1U);
    BOOST_TEST(f.live.dead_peers == 1U);
    BOOST_TEST(f.session->expired());
    BOOST_TEST(f.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(answered_pings_keep_the_peer_alive_but_not_the_session_busy) {
    // A peer that answers every ping 20 ms later but never sends a message: pings go on, and
    // the idle verdict comes from the messages alone.
    session_fixture f({.idle_timeout = 600ms, .ping_interval = 100ms, .pong_timeout = 50ms, .close_timeout = 0ms});
    std::vector<std::int64_t> answer_at;
    f.react = [&](liveness_event e) {
        if (e == liveness_event::send_ping) answer_at.push_back(f.now_ms() + 20);
    };
    f.session->start();
    f.step_to(1000, [&](std::int64_t t) {
        for (auto a : answer_at)
            if (a == t) f.session->on_inbound();
    });
    const auto pings = f.times(liveness_event::send_ping);
    BOOST_TEST(pings.size() >= 4U);
    BOOST_TEST(pings.at(0) == 100);
    for (std::size_t i = 1; i < pings.size(); ++i) {
        // The answer (stamped at the next tick) + ping_interval: never sooner.
        BOOST_TEST(pings[i] >= pings[i - 1] + 20 + 100);
        BOOST_TEST(pings[i] <= pings[i - 1] + 20 + 100 + 2 * tick_ms);
    }
    BOOST_TEST(f.times(liveness_event::dead_peer).empty());
    BOOST_TEST(f.times(liveness_event::idle) == std::vector<std::int64_t>{600}, boost::test_tools::per_element());
    BOOST_TEST(f.live.dead_peers == 0U);
}

BOOST_AUTO_TEST_CASE(jitter_offset_comes_from_the_address_and_delays_the_ping) {
    session_fixture f({.ping_interval = 100ms, .pong_timeout = 50ms, .jitter = 40ms});
    const auto offset = f.session->jitter_offset();
    BOOST_TEST(offset.count() >= 0);
    BOOST_TEST(offset <= 40ms);
    f.session->start();
    f.step_to(200);
    BOOST_TEST_REQUIRE(!f.times(liveness_event::send_ping).empty());
    const auto at = f.times(liveness_event::send_ping).at(0);
    const auto off_ms = std::chrono::duration_cast<std::chrono::microseconds>(offset).count();
    BOOST_TEST(at * 1000 >= 100'000 + off_ms);
    BOOST_TEST(at * 1000 <= 100'000 + off_ms + tick_ms * 1000);
    // Many sessions spread: not all on one offset.
    std::optional<live_type> a, b, c, d;
    a.emplace(f.config);
    b.emplace(f.config);
    c.emplace(f.config);
    d.emplace(f.config);
    const bool all_same = a->jitter_offset() == b->jitter_offset() && b->jitter_offset() == c->jitter_offset() &&
                          c->jitter_offset() == d->jitter_offset();
    BOOST_TEST(!all_same);
}

// ---- close ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(one_close_at_a_time_and_none_after_the_peer_started_one) {
    session_fixture f({.idle_timeout = 1s, .close_timeout = 100ms});
    f.session->start();
    f.step_to(10);
    BOOST_TEST(f.session->start_close());   // ours: send it
    BOOST_TEST(!f.session->start_close());  // never a second one
    f.step_to(109);
    BOOST_TEST(f.events.empty());
    f.step_to(200);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "close timeout");
    BOOST_TEST(f.events[0].at == 110);
    BOOST_TEST(f.live.close_timeouts == 1U);
    BOOST_TEST(f.live.operation_timeouts == 0U);  // a close deadline is not an operation's

    session_fixture g({.idle_timeout = 50ms, .close_timeout = 100ms});
    g.session->start();
    g.step_to(10);
    g.session->on_peer_close();
    BOOST_TEST(g.session->peer_closing());
    BOOST_TEST(!g.session->start_close());  // the peer started it: we never send one
    g.step_to(300);
    // No idle verdict while closing; the close deadline bounds the peer's close too.
    BOOST_TEST_REQUIRE(g.events.size() == 1U);
    BOOST_TEST(name(g.events[0].event) == "close timeout");
    BOOST_TEST(g.events[0].at == 110);
}

BOOST_AUTO_TEST_CASE(idle_starts_the_close_and_its_deadline) {
    session_fixture f({.idle_timeout = 100ms, .ping_interval = 30ms, .pong_timeout = 1s, .close_timeout = 50ms});
    f.react = [&](liveness_event e) {
        if (e == liveness_event::send_ping) f.session->on_inbound();  // pongs at once
    };
    f.session->start();
    f.step_to(300);
    const auto idle = f.times(liveness_event::idle);
    BOOST_TEST(idle == std::vector<std::int64_t>{100}, boost::test_tools::per_element());
    BOOST_TEST(f.times(liveness_event::close_timeout) == std::vector<std::int64_t>{150},
               boost::test_tools::per_element());
    for (const auto p : f.times(liveness_event::send_ping)) BOOST_TEST(p < 100);  // no ping while closing
    BOOST_TEST(!f.session->start_close());
    BOOST_TEST((f.session->verdict() == liveness_event::close_timeout));
}

// Write progress restarts the close deadline (a slow but steady reader is not cut), never
// outside the closing phase, and a session whose progress stops is dropped close_timeout after
// the last progress: never early, at most one tick late.
BOOST_AUTO_TEST_CASE(write_progress_restarts_the_close_deadline) {
    session_fixture f({.idle_timeout = 1s, .close_timeout = 100ms});
    f.session->start();
    f.step_to(50);
    f.session->on_write_progress();  // open: nothing to restart
    f.step_to(60);
    BOOST_TEST(f.session->start_close());
    std::int64_t last = 60;
    for (std::int64_t t = 90; t <= 600; t += 30) {  // progress every 30 ms, far past 100 ms
        f.step_to(t);
        BOOST_TEST_REQUIRE(f.events.empty(), "a draining session was cut at " << t << " ms");
        f.session->on_write_progress();
        last = t;
    }
    BOOST_TEST(f.wheel.pending() == 1U);  // still its one entry, moved only when it came due
    f.step_to(last + 99);
    BOOST_TEST(f.events.empty());  // never early
    f.step_to(last + 200);
    BOOST_TEST_REQUIRE(f.events.size() == 1U);
    BOOST_TEST(name(f.events[0].event) == "close timeout");
    BOOST_TEST(f.events[0].at >= last + 100);
    BOOST_TEST(f.events[0].at <= last + 100 + tick_ms);
    BOOST_TEST(f.live.close_timeouts == 1U);
    BOOST_TEST(f.live.operation_timeouts == 0U);  // a close deadline is not an operation's
    f.session->on_write_progress();  // ended: no deadline comes back
    f.step_to(last + 500);
    BOOST_TEST(f.events.size() == 1U);
    BOOST_TEST(f.wheel.pending() == 0U);

    // close_timeout 0: there is no close deadline to restart.
    session_fixture g({.idle_timeout = 1s, .close_timeout = 0ms});
    g.session->start();
    BOOST_TEST(g.session->start_close());
    g.session->on_write_progress();
    BOOST_TEST(g.wheel.pending() == 0U);
    g.step_to(300);
    BOOST_TEST(g.events.empty());
}

// ---- lifetime -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(the_handler_may_destroy_the_session) {
    for (const auto kind : {liveness_event::send_ping, liveness_event::idle, liveness_event::dead_peer,
                            liveness_event::handshake_timeout, liveness_event::close_timeout}) {
        session_fixture f({.handshake_timeout = 50ms,
                           .idle_timeout = 300ms,
                           .ping_interval = 100ms,
                           .pong_timeout = 50ms,
                           .close_timeout = 50ms});
        f.react = [&](liveness_event e) {
            if (e == kind) f.session.reset();  // ASan: nothing of it is touched afterwards
        };
        if (kind == liveness_event::handshake_timeout) {
            f.session->start_handshake();
        } else if (kind == liveness_event::close_timeout) {
            f.session->start();
            BOOST_TEST(f.session->start_close());
        } else {
            f.session->start();
        }
        if (kind == liveness_event::idle) {
            f.react = [&](liveness_event e) {
                if (e == liveness_event::send_ping && f.session) f.session->on_inbound();
                if (e == liveness_event::idle) f.session.reset();
            };
        }
        f.step_to(1000);
        BOOST_TEST(!f.session, name(kind));
        BOOST_TEST(!f.events.empty());
        BOOST_TEST(name(f.events.back().event) == name(kind));
        BOOST_TEST(f.wheel.pending() == 0U, name(kind));
    }
}

BOOST_AUTO_TEST_CASE(destroying_a_running_session_unlinks_its_entry) {
    session_fixture f({.idle_timeout = 100ms, .ping_interval = 50ms, .pong_timeout = 50ms});
    f.session->start();
    BOOST_TEST(f.wheel.pending() == 1U);
    f.session.reset();
    BOOST_TEST(f.wheel.pending() == 0U);
    f.step_to(500);
    BOOST_TEST(f.events.empty());
}

BOOST_AUTO_TEST_CASE(stop_and_restart) {
    session_fixture f({.idle_timeout = 100ms, .ping_interval = 60ms, .pong_timeout = 30ms});
    f.session->start();
    f.step_to(50);
    f.session->stop();
    BOOST_TEST((f.session->current() == phase::stopped));
    BOOST_TEST(f.wheel.pending() == 0U);
    f.step_to(400);
    BOOST_TEST(f.events.empty());
    f.session->start();  // everything from now again
    f.step_to(459);
    BOOST_TEST(f.events.empty());
    // Stopped inside its own handler: nothing more (no dead peer after the ping).
    f.react = [&](liveness_event) { f.session->stop(); };
    f.step_to(1000);
    BOOST_TEST(f.times(liveness_event::send_ping) == std::vector<std::int64_t>{460}, boost::test_tools::per_element());
    BOOST_TEST(f.events.size() == 1U);
    BOOST_TEST(f.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(a_stopped_wheel_ends_the_session) {
    session_fixture f({.idle_timeout = 100ms});
    f.session->start();
    (void)f.wheel.stop();
    BOOST_TEST((f.session->current() == phase::stopped));
    BOOST_CHECK_THROW(f.session->start(), idlewheel::system_error);
    f.step_to(300);
    BOOST_TEST(f.events.empty());
}

// ---- max_pending ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_running_session_keeps_its_place_on_a_full_wheel) {
    session_fixture f({.handshake_timeout = 50ms,
                       .idle_timeout = 400ms,
                       .ping_interval = 100ms,
                       .pong_timeout = 50ms,
                       .close_timeout = 100ms},
                      {.max_pending = 1});
    std::vector<idlewheel::timeout> taken;
    int refused = 0;
    f.react = [&](liveness_event e) {
        if (e == liveness_event::send_ping) f.session->on_inbound();
        try {
            taken.push_back(f.wheel.schedule(1h, [] {}));  // the wheel is full: refused
        } catch (const idlewheel::system_error&) {
            ++refused;
        }
    };
    f.session->start_handshake();  // 1 of 1
    BOOST_CHECK_THROW((void)f.wheel.schedule(1ms, [] {}), idlewheel::system_error);
    std::optional<live_type> other(f.config);
    BOOST_CHECK_EXCEPTION(other->start(), idlewheel::system_error, [](const idlewheel::system_error& e) {
        return e.code() == idlewheel::make_error_code(idlewheel::error::too_many_pending);
    });
    BOOST_TEST((other->current() == phase::stopped));
    f.step_to(20);
    BOOST_TEST(f.session->handshake_done());  // moves its own entry
    f.step_to(2000);
    BOOST_TEST(f.times(liveness_event::send_ping).size() >= 3U);
    BOOST_TEST(f.times(liveness_event::idle).size() == 1U);
    BOOST_TEST(f.times(liveness_event::close_timeout).size() == 1U);
    // Every handler found the wheel full (the session's entry holds the one place) except the
    // last: the close timeout ended the session, and its entry left the wheel.
    BOOST_TEST(taken.size() == 1U);
    BOOST_TEST(refused == static_cast<int>(f.events.size()) - 1);
    BOOST_TEST(f.wheel.stats().rejected >= f.events.size());
}

// ---- compact marks (core/activity_epochs.hpp) ----------------------------------------

BOOST_AUTO_TEST_CASE(compact_marks_expand_to_their_epoch) {
    idlewheel::detail::activity_epochs e;
    const auto m1 = e.compact_mark();
    BOOST_TEST(idlewheel::detail::activity_epochs::is_compact_mark(m1));
    BOOST_TEST(e.expand(m1) == e.mark());
    BOOST_TEST(!e.closed(e.expand(m1)));
    (void)e.touch();
    e.close(1000);
    BOOST_TEST(e.closed(e.expand(m1)));
    BOOST_TEST(e.resolve(e.expand(m1), 5000) == 1000);
    // A mark of a later epoch expands to that epoch, not to an earlier one.
    for (int i = 0; i < 3; ++i) {
        (void)e.touch();
        e.close(2000 + i);
    }
    const auto m2 = e.compact_mark();
    (void)e.touch();
    e.close(3000);
    BOOST_TEST(e.resolve(e.expand(m2), 9000) == 3000);
}
