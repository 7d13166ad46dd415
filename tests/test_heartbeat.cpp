// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/heartbeat.hpp>

// basic_heartbeat on a manual-clock wheel, driven 1 ms at a time with io_context::poll(): the
// sans-I/O ping/pong machine (waiting -> awaiting_pong -> waiting | dead) with exact times.
// The "peer" is the test: it answers a ping by calling on_inbound() at a chosen time.

#include "support/liveness_scene.hpp"

#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE heartbeat
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::heartbeat_event;
using idlewheel::heartbeat_options;
using idlewheel::test::liveness::ceil_to_tick;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::tick_ms;
using idlewheel::test::liveness::wheel_type;
using heartbeat_type = idlewheel::basic_heartbeat<wheel_type>;
using state = heartbeat_type::state;

std::string name(heartbeat_event e) { return e == heartbeat_event::send_ping ? "send_ping" : "dead_peer"; }
std::string name(state s) {
    switch (s) {
        case state::stopped: return "stopped";
        case state::waiting: return "waiting";
        case state::awaiting_pong: return "awaiting_pong";
        case state::dead: return "dead";
    }
    return "?";
}

std::chrono::milliseconds ms(std::int64_t n) { return std::chrono::milliseconds(n); }

using beat = idlewheel::test::liveness::event<heartbeat_event>;

// The receiving end of a heartbeat: records every event with the manual time it came at.
struct recorder : idlewheel::test::liveness::event_log<heartbeat_event> {
    explicit recorder(const scene& s) : stage(&s) {}
    void on_heartbeat(heartbeat_event e) { add(e, false, stage->now_ms()); }
    [[nodiscard]] idlewheel::heartbeat_handler handler() {
        return idlewheel::bind_member<&recorder::on_heartbeat>(this);
    }

    const scene* stage;
};

struct heartbeat_fixture : scene {
    recorder rec{*this};
};

using at_ms = std::vector<std::int64_t>;

}  // namespace

BOOST_AUTO_TEST_SUITE(ping)

// Started at every phase of a tick, with an interval that is and one that is not a whole number
// of ticks: the ping comes at the first boundary at or after start + interval.
BOOST_AUTO_TEST_CASE(a_ping_after_ping_interval_of_silence) {
    for (const std::int64_t interval : {200, 205}) {
        for (std::int64_t phase = 0; phase < tick_ms; ++phase) {
            BOOST_TEST_CONTEXT("interval " << interval << " ms, started at " << phase << " ms") {
                scene s;
                recorder rec(s);
                heartbeat_type hb(s.wheel, rec.handler(), {.ping_interval = ms(interval), .pong_timeout = 100ms}, &s.live);
                BOOST_TEST(name(hb.current()) == name(state::stopped));
                s.step_to(phase);
                hb.start();
                BOOST_TEST(name(hb.current()) == name(state::waiting));
                s.step_to(phase + interval - 1);
                BOOST_TEST(rec.events.empty());
                BOOST_TEST(name(hb.current()) == name(state::waiting));
                s.step_to(phase + interval + tick_ms);
                BOOST_TEST_REQUIRE(rec.events.size() == 1U);
                BOOST_TEST(name(rec.events[0].kind) == name(heartbeat_event::send_ping));
                BOOST_TEST(rec.events[0].at - phase >= interval);
                BOOST_TEST(rec.events[0].at - phase < interval + tick_ms);
                BOOST_TEST(name(hb.current()) == name(state::awaiting_pong));
                BOOST_TEST(s.live.pings_sent == 1U);
                BOOST_TEST(s.live.dead_peers == 0U);
            }
        }
    }
}

// Inbound before the interval is up moves the ping to an interval after it (never earlier,
// less than a tick later), at every phase of a tick.
BOOST_AUTO_TEST_CASE(inbound_postpones_the_ping) {
    for (std::int64_t phase = 0; phase < tick_ms; ++phase) {
        BOOST_TEST_CONTEXT("inbound at " << 150 + phase << " ms") {
            scene s;
            recorder rec(s);
            heartbeat_type hb(s.wheel, rec.handler(), {.ping_interval = 200ms, .pong_timeout = 100ms}, &s.live);
            hb.start();
            const std::int64_t inbound = 150 + phase;
            s.step_to(inbound + 200 + tick_ms, [&](std::int64_t t) {
                if (t == 70 || t == inbound) hb.on_inbound();
            });
            BOOST_TEST_REQUIRE(rec.events.size() == 1U);
            BOOST_TEST(rec.events[0].at - inbound >= 200);
            BOOST_TEST(rec.events[0].at - inbound < 200 + tick_ms);
        }
    }
}

// waiting -> awaiting_pong -> (pong) -> waiting, checked at the pong deadline; the next ping is
// an interval after the pong, however late within pong_timeout the pong came.
BOOST_AUTO_TEST_CASE(a_pong_returns_to_waiting_and_the_next_ping_is_an_interval_after_it) {
    for (const std::int64_t pong_delay : {0, 1, 137, 499}) {
        BOOST_TEST_CONTEXT("pong " << pong_delay << " ms after the ping") {
            scene s;
            recorder rec(s);
            heartbeat_type hb(s.wheel, rec.handler(), {.ping_interval = 1000ms, .pong_timeout = 500ms}, &s.live);
            hb.start();
            s.step_to(1000);
            BOOST_TEST_REQUIRE(rec.times(heartbeat_event::send_ping) == (at_ms{1000}), boost::test_tools::per_element());
            BOOST_TEST(name(hb.current()) == name(state::awaiting_pong));
            const std::int64_t pong = 1000 + pong_delay;
            if (pong_delay == 0) hb.on_inbound();  // right after the ping went out
            s.step_to(1500, [&](std::int64_t t) {
                if (t == pong) hb.on_inbound();
            });
            BOOST_TEST(name(hb.current()) == name(state::waiting));
            s.step_to(pong + 1000 + tick_ms);
            const auto pings = rec.times(heartbeat_event::send_ping);
            BOOST_TEST_REQUIRE(pings.size() == 2U);
            BOOST_TEST(pings[1] - pong >= 1000);
            BOOST_TEST(pings[1] - pong <= 1000 + tick_ms);  // the same-instant pong: see the idle tests
            if (pong_delay != 0) BOOST_TEST(pings[1] - pong < 1000 + tick_ms);
            BOOST_TEST(name(hb.current()) == name(state::awaiting_pong));
            BOOST_TEST(rec.times(heartbeat_event::dead_peer).empty());
            BOOST_TEST(s.live.pings_sent == 2U);
            BOOST_TEST(s.live.dead_peers == 0U);
        }
    }
}

// The same when the interval is shorter than the pong timeout: the answer is noticed without
// waiting for the whole pong timeout, and the silence after the pong gets its ping on time.
BOOST_FIXTURE_TEST_CASE(the_next_ping_comes_on_time_when_the_interval_is_shorter_than_the_pong_timeout,
                        heartbeat_fixture) {
    heartbeat_type hb(wheel, rec.handler(), {.ping_interval = 100ms, .pong_timeout = 500ms}, &live);
    hb.start();
    step_to(340, [&](std::int64_t t) {
        if (t == 110 || t == 215) hb.on_inbound();  // pongs 10 ms and 15 ms after the pings
    });
    BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{100, 210, 320}), boost::test_tools::per_element());
    // Then the peer goes silent: dead at the last ping + pong_timeout.
    step_to(1000);
    BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{100, 210, 320}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(heartbeat_event::dead_peer) == (at_ms{820}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(dead_peer)

BOOST_AUTO_TEST_CASE(no_answer_declares_the_peer_dead_at_ping_plus_pong_timeout) {
    for (const std::int64_t pong_timeout : {300, 305}) {
        BOOST_TEST_CONTEXT("pong_timeout " << pong_timeout << " ms") {
            scene s;
            recorder rec(s);
            heartbeat_type hb(s.wheel, rec.handler(), {.ping_interval = 1000ms, .pong_timeout = ms(pong_timeout)}, &s.live);
            hb.start();
            s.step_to(1000 + pong_timeout - 1);
            BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{1000}), boost::test_tools::per_element());
            BOOST_TEST(rec.times(heartbeat_event::dead_peer).empty());
            BOOST_TEST(name(hb.current()) == name(state::awaiting_pong));
            s.step_to(1000 + pong_timeout + tick_ms);
            const auto dead = rec.times(heartbeat_event::dead_peer);
            BOOST_TEST_REQUIRE(dead.size() == 1U);
            BOOST_TEST(dead[0] >= 1000 + pong_timeout);
            BOOST_TEST(dead[0] < 1000 + pong_timeout + tick_ms);
            BOOST_TEST(name(hb.current()) == name(state::dead));
            // Dead is final: no more pings, nothing pending, until start().
            s.step_to(6000, [&](std::int64_t t) {
                if (t == 3000) hb.on_inbound();  // too late: does not revive it
            });
            BOOST_TEST(rec.events.size() == 2U);
            BOOST_TEST(name(hb.current()) == name(state::dead));
            BOOST_TEST(s.wheel.pending() == 0U);
            BOOST_TEST(s.live.pings_sent == 1U);
            BOOST_TEST(s.live.dead_peers == 1U);
            hb.start();  // a new life
            s.step_to(7000);
            BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{1000, 7000}), boost::test_tools::per_element());
        }
    }
}

// Any inbound answers a ping, however late within the pong timeout: right after the ping in
// the same instant, one ms before the deadline, at the deadline before the wheel's wake-up, and
// inside the wake-up that checks, before the check (not stamped yet). Without it (the control)
// the peer is dead at 1500.
BOOST_AUTO_TEST_CASE(any_inbound_within_pong_timeout_answers_the_ping) {
    enum class when { never, same_instant, one_ms_before, at_deadline, inside_the_check_wake_up };
    for (const when w :
         {when::never, when::same_instant, when::one_ms_before, when::at_deadline, when::inside_the_check_wake_up}) {
        BOOST_TEST_CONTEXT("case " << static_cast<int>(w)) {
            scene s;
            recorder rec(s);
            heartbeat_type hb(s.wheel, rec.handler(), {.ping_interval = 1000ms, .pong_timeout = 500ms}, &s.live);
            // A callback due at the pong deadline's tick, scheduled before the heartbeat re-arms
            // for that tick at the ping, so it runs first in that wake-up (FIFO within a tick).
            struct frame_reader {
                heartbeat_type* hb;
                bool enabled;
                void run() {
                    if (enabled) hb->on_inbound();
                }
            } reader{&hb, w == when::inside_the_check_wake_up};
            idlewheel::timer_node node{idlewheel::bind_member<&frame_reader::run>(&reader)};
            s.wheel.schedule(node, 1500ms);
            hb.start();
            s.step_to(1000);
            BOOST_TEST_REQUIRE(rec.events.size() == 1U);
            if (w == when::same_instant) hb.on_inbound();
            s.step_to(1600, [&](std::int64_t t) {
                if ((w == when::one_ms_before && t == 1499) || (w == when::at_deadline && t == 1500)) hb.on_inbound();
            });
            if (w == when::never) {
                BOOST_TEST(rec.times(heartbeat_event::dead_peer) == (at_ms{1500}), boost::test_tools::per_element());
                BOOST_TEST(name(hb.current()) == name(state::dead));
            } else {
                BOOST_TEST(rec.times(heartbeat_event::dead_peer).empty());
                BOOST_TEST(name(hb.current()) == name(state::waiting));
            }
        }
    }
}

// The split Beast's timeouts cannot make: a peer that answers every ping but never sends an
// application message is alive for the heartbeat forever; only the session's own reader-idle
// watch (10 s here) closes it. The control peer, which does not answer, is dead at the first
// ping + pong_timeout, long before.
struct ws_session {
    ws_session(scene& s, bool answers_pings) : stage(&s), answers(answers_pings) {
        hb.start();
        idle.start();
    }

    void on_heartbeat(heartbeat_event e) {
        if (e == heartbeat_event::send_ping) {
            pings.push_back(stage->now_ms());
            if (answers) pong_at = stage->now_ms() + 50;  // the peer's pong arrives 50 ms later
        } else {
            close("peer dead");
        }
    }
    void on_idle(idlewheel::idle_kind, bool) { close("idle"); }
    void on_frame(bool is_pong) {
        hb.on_inbound();               // any frame answers the heartbeat
        if (!is_pong) idle.on_read();  // only messages count as application activity
    }
    void close(const char* why) {
        closed_at = stage->now_ms();
        reason = why;
        hb.stop();
        idle.stop();
    }

    scene* stage;
    bool answers;
    std::vector<std::int64_t> pings;
    std::int64_t pong_at = -1;
    std::int64_t closed_at = -1;
    std::string reason;
    heartbeat_type hb{stage->wheel, idlewheel::bind_member<&ws_session::on_heartbeat>(this),
                      {.ping_interval = 1s, .pong_timeout = 500ms}, &stage->live};
    idlewheel::basic_idle_watch<wheel_type> idle{stage->wheel, idlewheel::bind_member<&ws_session::on_idle>(this),
                                                 {.reader = 10s}, &stage->live};
};

BOOST_AUTO_TEST_CASE(a_peer_that_answers_pings_is_alive_until_the_idle_watch_closes_it) {
    scene s;
    ws_session answering(s, true);
    ws_session silent(s, false);
    s.step_to(12'000, [&](std::int64_t t) {
        if (t == answering.pong_at) answering.on_frame(true);
    });
    BOOST_TEST(answering.reason == "idle");
    BOOST_TEST(answering.closed_at == 10'000);
    // A pong 50 ms after each ping, the next ping an interval after the pong.
    BOOST_TEST(answering.pings == (at_ms{1000, 2050, 3100, 4150, 5200, 6250, 7300, 8350, 9400}),
               boost::test_tools::per_element());
    BOOST_TEST(silent.reason == "peer dead");
    BOOST_TEST(silent.closed_at == 1500);
    BOOST_TEST(silent.pings == (at_ms{1000}), boost::test_tools::per_element());
    const auto st = s.live;
    BOOST_TEST(st.pings_sent == 10U);
    BOOST_TEST(st.dead_peers == 1U);
    BOOST_TEST(st.reader_idle == 1U);
    BOOST_TEST(s.wheel.pending() == 0U);  // both closed: nothing left behind
}

// Application messages answer pings too, and also postpone the idle watch.
BOOST_AUTO_TEST_CASE(application_messages_answer_pings_and_keep_the_session_open) {
    scene s;
    ws_session chatty(s, false);
    s.step_to(15'000, [&](std::int64_t t) {
        if (t % 1200 == 0) chatty.on_frame(false);  // a message every 1.2 s, no pongs
    });
    BOOST_TEST(chatty.closed_at == -1);
    BOOST_TEST(chatty.pings.size() == 12U);  // each silence of 1 s gets a ping, which the next message answers
    BOOST_TEST(s.live.dead_peers == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(control)

BOOST_FIXTURE_TEST_CASE(stop_and_start, heartbeat_fixture) {
    heartbeat_type hb(wheel, rec.handler(), {.ping_interval = 1000ms, .pong_timeout = 300ms}, &live);
    hb.start();
    step_to(900);
    hb.stop();  // before the ping
    BOOST_TEST(name(hb.current()) == name(state::stopped));
    BOOST_TEST(wheel.pending() == 0U);
    step_to(3000, [&](std::int64_t t) {
        if (t == 2000) hb.on_inbound();
    });
    BOOST_TEST(rec.events.empty());

    hb.start();  // at 3000
    step_to(4100);
    BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{4000}), boost::test_tools::per_element());
    hb.stop();  // while awaiting the pong: no death
    step_to(6000);
    BOOST_TEST(rec.events.size() == 1U);
    BOOST_TEST(live.dead_peers == 0U);
    hb.stop();  // idempotent
    BOOST_TEST(name(hb.current()) == name(state::stopped));
}

// A handler that stops, restarts or destroys its own heartbeat.
struct reacting_session {
    enum class reaction { stop, restart, destroy };
    reacting_session(scene& s, reaction r) : stage(&s), on_ping(r) {
        hb.emplace(s.wheel, idlewheel::bind_member<&reacting_session::on_heartbeat>(this),
                   heartbeat_options{.ping_interval = 100ms, .pong_timeout = 50ms}, &s.live);
        hb->start();
    }
    void on_heartbeat(heartbeat_event e) {
        events.push_back({e, false, stage->now_ms()});
        if (on_ping == reaction::stop) hb->stop();
        if (on_ping == reaction::restart) hb->start();
        if (on_ping == reaction::destroy) hb.reset();
    }
    scene* stage;
    reaction on_ping;
    std::vector<beat> events;
    std::optional<heartbeat_type> hb;
};

BOOST_AUTO_TEST_CASE(the_handler_may_stop_restart_or_destroy_its_heartbeat) {
    using reaction = reacting_session::reaction;
    for (const reaction r : {reaction::stop, reaction::restart, reaction::destroy}) {
        BOOST_TEST_CONTEXT("reaction " << static_cast<int>(r)) {
            scene s;
            reacting_session session(s, r);
            s.step_to(1000);
            if (r == reaction::restart) {
                // Every ping restarts the wait: a ping every 100 ms, never a death.
                BOOST_TEST(session.events.size() == 10U);
                for (const auto& b : session.events) BOOST_TEST(name(b.kind) == name(heartbeat_event::send_ping));
                BOOST_TEST(s.live.dead_peers == 0U);
            } else {
                BOOST_TEST_REQUIRE(session.events.size() == 1U);
                BOOST_TEST(session.events[0].at == 100);
                BOOST_TEST(s.wheel.pending() == 0U);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(lifetime_destroyed_heartbeats_never_call_back) {
    scene s;
    recorder rec(s);
    std::optional<heartbeat_type> before_ping, awaiting, touched;
    const heartbeat_options o{.ping_interval = 100ms, .pong_timeout = 50ms};
    before_ping.emplace(s.wheel, rec.handler(), o);
    awaiting.emplace(s.wheel, rec.handler(), o);
    touched.emplace(s.wheel, rec.handler(), o);
    before_ping->start();
    awaiting->start();
    touched->start();
    s.step_to(99);
    before_ping.reset();
    s.step_to(120);
    BOOST_TEST(rec.events.size() == 2U);  // the pings of the other two
    awaiting.reset();                      // while its pong deadline is pending
    touched->on_inbound();                 // linked in the wheel's touched list, not stamped yet
    touched.reset();
    s.step_to(1000);
    BOOST_TEST(rec.events.size() == 2U);
    BOOST_TEST(s.wheel.pending() == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(options)

BOOST_FIXTURE_TEST_CASE(pong_timeout_must_be_positive_when_enabled, heartbeat_fixture) {
    const auto make = [this](const heartbeat_options& o) { heartbeat_type hb(wheel, rec.handler(), o, &live); };
    BOOST_CHECK_THROW(make({.ping_interval = 1s, .pong_timeout = 0s}), std::invalid_argument);
    BOOST_CHECK_THROW(make({.ping_interval = 1s, .pong_timeout = -1ms}), std::invalid_argument);
    BOOST_CHECK_THROW(make({.ping_interval = 1ns}), std::invalid_argument);
    BOOST_CHECK_NO_THROW(make({}));                                       // disabled: nothing to answer
    BOOST_CHECK_NO_THROW(make({.ping_interval = 1s, .pong_timeout = 1ns}));

    // A rejected set_options leaves the heartbeat as it was.
    heartbeat_type hb(wheel, rec.handler(), {.ping_interval = 300ms, .pong_timeout = 100ms}, &live);
    hb.start();
    BOOST_CHECK_THROW(hb.set_options({.ping_interval = 50ms, .pong_timeout = 0ms}), std::invalid_argument);
    hb.start();
    step_to(450);
    BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{300}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(heartbeat_event::dead_peer) == (at_ms{400}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ping_interval_zero_disables_the_heartbeat) {
    for (const heartbeat_options o : {heartbeat_options{}, heartbeat_options{.pong_timeout = 1s, .jitter = 1s}}) {
        scene s;
        recorder rec(s);
        heartbeat_type hb(s.wheel, rec.handler(), o, &s.live);
        hb.start();
        BOOST_TEST(name(hb.current()) == name(state::stopped));
        BOOST_TEST(s.wheel.pending() == 0U);
        s.step_to(10'000, [&](std::int64_t t) {
            if (t == 5000) hb.on_inbound();
        });
        BOOST_TEST(rec.events.empty());
        BOOST_TEST(s.live.pings_sent == 0U);
    }
    // Disabling a running heartbeat: set_options, then start() (options apply from start()).
    scene s;
    recorder rec(s);
    heartbeat_type hb(s.wheel, rec.handler(), {.ping_interval = 1s, .pong_timeout = 500ms}, &s.live);
    hb.start();
    s.step_to(500);
    hb.set_options({});
    hb.start();
    BOOST_TEST(name(hb.current()) == name(state::stopped));
    s.step_to(10'000);
    BOOST_TEST(rec.events.empty());
    BOOST_TEST(s.wheel.pending() == 0U);
}

// "The times apply from the next start()": a running heartbeat keeps its schedule until then.
BOOST_FIXTURE_TEST_CASE(new_times_apply_from_the_next_start, heartbeat_fixture) {
    heartbeat_type hb(wheel, rec.handler(), {.ping_interval = 1000ms, .pong_timeout = 400ms}, &live);
    hb.start();
    step_to(500);
    hb.set_options({.ping_interval = 2000ms, .pong_timeout = 100ms});
    step_to(1500);
    BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{1000}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(heartbeat_event::dead_peer) == (at_ms{1400}), boost::test_tools::per_element());
    hb.start();  // at 1500: now 2000 / 100
    step_to(4000);
    BOOST_TEST(rec.times(heartbeat_event::send_ping) == (at_ms{1000, 3500}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(heartbeat_event::dead_peer) == (at_ms{1400, 3600}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(jitter)

// 20 000 sessions opened in the same tick (at 3 ms). With a 500 ms jitter their first pings
// spread over many ticks, each within [interval, interval + jitter + one tick] of the start and
// at the first boundary at or after start + interval + its own offset. Without jitter they all
// ping in one tick.
struct pinging_session {
    pinging_session(scene& s, const heartbeat_options& o)
        : stage(&s), hb(s.wheel, idlewheel::bind_member<&pinging_session::on_heartbeat>(this), o, &s.live) {}
    void on_heartbeat(heartbeat_event e) {
        if (e == heartbeat_event::send_ping) pings.push_back(stage->now_ms());
    }
    scene* stage;
    std::vector<std::int64_t> pings;
    heartbeat_type hb;
};

BOOST_AUTO_TEST_CASE(jitter_spreads_the_pings_of_sessions_opened_together) {
    constexpr std::size_t sessions = 20'000;
    constexpr std::int64_t start = 3;
    for (const std::int64_t jitter : {500, 0}) {
        BOOST_TEST_CONTEXT("jitter " << jitter << " ms") {
            scene s;
            std::deque<pinging_session> all;  // not movable: a deque never moves its elements
            s.step_to(start);
            for (std::size_t i = 0; i < sessions; ++i) {
                all.emplace_back(s, heartbeat_options{.ping_interval = 1s, .pong_timeout = 1s, .jitter = ms(jitter)});
                all.back().hb.start();
            }
            s.step_to(start + 1000 + jitter + 2 * tick_ms);

            std::set<std::int64_t> ticks;
            std::size_t wrong = 0, out_of_range = 0, off_offset = 0;
            std::chrono::nanoseconds lowest = std::chrono::nanoseconds::max(), highest{0};
            for (const auto& p : all) {
                if (p.pings.size() != 1U) {
                    ++wrong;
                    continue;
                }
                const std::int64_t at = p.pings[0];
                ticks.insert(at);
                if (at - start < 1000 || at - start > 1000 + jitter + tick_ms) ++out_of_range;
                // Exactly at the first boundary at or after start + interval + offset.
                const auto offset = p.hb.jitter_offset();
                lowest = std::min(lowest, offset);
                highest = std::max(highest, offset);
                const auto due = ms(start + 1000) + offset;
                if (ms(at) < due || ms(at) >= due + ms(tick_ms)) ++off_offset;
            }
            BOOST_TEST(wrong == 0U);
            BOOST_TEST(out_of_range == 0U);
            BOOST_TEST(off_offset == 0U);
            BOOST_TEST(s.live.pings_sent == sessions);
            if (jitter == 0) {
                BOOST_TEST(ticks.size() == 1U);
                BOOST_TEST(*ticks.begin() == ceil_to_tick(start + 1000));
                BOOST_TEST(highest.count() == 0);
            } else {
                BOOST_TEST(ticks.size() >= 40U);
                BOOST_TEST(lowest.count() >= 0);
                BOOST_TEST(highest <= std::chrono::nanoseconds(ms(jitter)));
                BOOST_TEST(highest - lowest > std::chrono::nanoseconds(ms(jitter * 9 / 10)));  // really spread
            }
            all.clear();  // before the wheel
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
