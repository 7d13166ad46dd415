// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/session_liveness.hpp>

// session_liveness.hpp's open phase (a part of test_session_liveness, whose first file is
// test_session_liveness.cpp), on the manual clock: idle (never early, at most two ticks late;
// the entry moves lazily) and the heartbeat (an unanswered ping is a dead peer; answered pings
// keep the peer alive, not the session busy; the jitter offset).

#include "support/liveness_scene.hpp"
#include "support/session_scene.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include "support/session_liveness_scene.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace {
using namespace idlewheel::test::session_liveness_scene;  // support/session_liveness_scene.hpp
}  // namespace

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
