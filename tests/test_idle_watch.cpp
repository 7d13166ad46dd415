// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/idle_watch.hpp>

// basic_idle_watch on a manual-clock wheel, driven 1 ms at a time with io_context::poll():
// every expectation is an exact time (ms since the wheel's origin), count or flag. The
// precision bounds under test are the header's: a report never comes before the watched kind
// has been quiet for its full time T; it comes less than one tick after that when T is a
// whole number of ticks and wake-ups are on time, less than two ticks otherwise.

#include "support/idle_kinds.hpp"
#include "support/liveness_scene.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE idle_watch
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::idle_kind;
using idlewheel::idle_options;
using idlewheel::test::liveness::ceil_to_tick;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::tick_ms;
using idlewheel::test::liveness::wheel_type;
using watch_type = idlewheel::basic_idle_watch<wheel_type>;

constexpr idle_kind all_kinds[] = {idle_kind::reader, idle_kind::writer, idle_kind::all};

using idlewheel::test::idle_kinds::ms;
using idlewheel::test::idle_kinds::name;
using idlewheel::test::idle_kinds::only;

// Activity that counts for `kind`: for all-idle, reads and writes alternate so that both
// paths are exercised.
void act(watch_type& w, idle_kind kind, std::int64_t t) {
    if (kind == idle_kind::reader || (kind == idle_kind::all && t % 2 == 0))
        w.on_read();
    else
        w.on_write();
}

// The upper bound on (report - last activity - T) that the contract promises with on-time
// wake-ups: strictly less than one tick for a whole number of ticks, two otherwise.
std::int64_t lateness_bound(std::int64_t t_ms) { return t_ms % tick_ms == 0 ? tick_ms : 2 * tick_ms; }

using idle_event = idlewheel::test::liveness::event<idle_kind>;

// The receiving end of a watch: records every report with the manual time it came at.
struct recorder : idlewheel::test::liveness::event_log<idle_kind> {
    explicit recorder(const scene& s) : stage(&s) {}
    void on_idle(idle_kind kind, bool first) { add(kind, first, stage->now_ms()); }
    [[nodiscard]] idlewheel::idle_handler handler() { return idlewheel::bind_member<&recorder::on_idle>(this); }

    const scene* stage;
};

struct idle_fixture : scene {
    recorder rec{*this};
};

using at_ms = std::vector<std::int64_t>;
using flags = std::vector<bool>;

}  // namespace

BOOST_AUTO_TEST_SUITE(precision)

// Each kind, activity at every millisecond phase of a 10 ms tick, T a whole number of ticks
// (200 ms) and not (205 ms), with the wheel asleep between events (it then stamps activity at
// once) and kept busy by another session (it then stamps at the next boundary). The one
// report must come at T after the activity or later, and within the bound.
BOOST_AUTO_TEST_CASE(each_kind_reports_at_T_for_activity_at_every_phase_of_a_tick) {
    for (const idle_kind kind : all_kinds) {
        for (const std::int64_t idle_ms : {200, 205}) {
            for (const bool busy : {false, true}) {
                for (std::int64_t phase = 0; phase < tick_ms; ++phase) {
                    BOOST_TEST_CONTEXT(name(kind) << ", T " << idle_ms << " ms, phase " << phase << " ms, "
                                                  << (busy ? "busy" : "quiet") << " wheel") {
                        scene s;
                        recorder rec(s);
                        watch_type w(s.wheel, rec.handler(), only(kind, idle_ms));
                        // The other session: chatty, never idle, so the wheel wakes every tick.
                        recorder other_rec(s);
                        watch_type other(s.wheel, other_rec.handler(), {.reader = 1s});
                        w.start();
                        other.start();
                        const std::int64_t activity = 100 + phase;
                        auto at = [&](std::int64_t t) {
                            if (t == activity) act(w, kind, t);
                            if (busy) other.on_read();
                        };
                        s.step_to(activity, at);
                        BOOST_TEST(rec.events.empty());
                        s.step_to(activity + idle_ms - 1, at);
                        BOOST_TEST(rec.events.empty());  // never early
                        s.step_to(activity + idle_ms + 3 * tick_ms, at);
                        BOOST_TEST_REQUIRE(rec.events.size() == 1U);
                        const idle_event e = rec.events.front();
                        BOOST_TEST(name(e.kind) == name(kind));
                        BOOST_TEST(e.first);
                        BOOST_TEST(e.at - activity >= idle_ms);
                        BOOST_TEST(e.at - activity < idle_ms + lateness_bound(idle_ms));
                        BOOST_TEST(e.at % tick_ms == 0);  // reports come from tick wake-ups
                        BOOST_TEST(other_rec.events.empty());
                    }
                }
            }
        }
    }
}

// Activity anywhere within T, repeatedly, keeps postponing the report; the report then comes
// T after the last activity (within the bound), whatever the activity's phase.
BOOST_AUTO_TEST_CASE(activity_within_T_postpones_the_report_exactly) {
    for (const idle_kind kind : all_kinds) {
        for (const std::int64_t idle_ms : {100, 130, 97}) {
            BOOST_TEST_CONTEXT(name(kind) << ", T " << idle_ms << " ms") {
                scene s;
                recorder rec(s);
                watch_type w(s.wheel, rec.handler(), only(kind, idle_ms));
                w.start();
                // Gaps just under T, at drifting phases: 99, 1, 50, T-1, 33, ... The last
                // activity is at 1000 + something.
                std::vector<std::int64_t> activity;
                for (std::int64_t t = 0, i = 0; t < 1000; ++i) {
                    t += 1 + (i * 37 + 11) % (idle_ms - 1);
                    activity.push_back(t);
                }
                const std::int64_t last = activity.back();
                s.step_to(last + idle_ms + 2 * tick_ms, [&](std::int64_t t) {
                    if (std::find(activity.begin(), activity.end(), t) != activity.end()) act(w, kind, t);
                });
                BOOST_TEST_REQUIRE(rec.events.size() == 1U);
                BOOST_TEST(rec.events[0].at - last >= idle_ms);
                BOOST_TEST(rec.events[0].at - last < idle_ms + lateness_bound(idle_ms));
            }
        }
    }
}

// With nothing at all, a watch started at 0 reports at exactly T (a tick boundary) and then
// every T: the first report of the stretch with first == true, the repeats with false.
BOOST_FIXTURE_TEST_CASE(reports_repeat_every_period_until_activity, idle_fixture) {
    watch_type w(wheel, rec.handler(), {.reader = 100ms}, &live);
    w.start();
    step_to(99);
    BOOST_TEST(rec.events.empty());
    step_to(300);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{100, 200, 300}), boost::test_tools::per_element());
    BOOST_TEST(rec.firsts(idle_kind::reader) == (flags{true, false, false}), boost::test_tools::per_element());

    // Activity starts a new stretch: T after it (rounded up to the tick), first again.
    step_to(345, [&](std::int64_t t) {
        if (t == 345) w.on_read();
    });
    step_to(600);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{100, 200, 300, 450, 550}), boost::test_tools::per_element());
    BOOST_TEST(rec.firsts(idle_kind::reader) == (flags{true, false, false, true, false}), boost::test_tools::per_element());
    BOOST_TEST(live.reader_idle == 5U);
}

// The worst on-time case: activity right after the wheel's wake-up at a boundary (the same
// manual instant, a moment later in real time) is stamped at the next boundary, so the report
// comes exactly one tick after T: the inclusive edge of "at most one tick late".
BOOST_FIXTURE_TEST_CASE(activity_just_after_a_wake_up_reports_at_most_one_tick_late, idle_fixture) {
    watch_type w(wheel, rec.handler(), {.reader = 100ms});
    recorder other_rec(*this);
    watch_type other(wheel, other_rec.handler(), {.reader = 50ms});  // makes the wheel wake at 50
    w.start();
    other.start();
    step_to(50);
    BOOST_TEST(other_rec.events.size() == 1U);  // the wheel did wake at 50
    w.on_read();                                // after that wake-up
    step_to(200);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{160}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(kinds)

// Reads do not postpone writer-idle; writes do not postpone reader-idle.
BOOST_FIXTURE_TEST_CASE(reader_and_writer_idle_are_independent, idle_fixture) {
    watch_type reads_only(wheel, rec.handler(), {.reader = 100ms, .writer = 150ms});
    recorder writes_rec(*this);
    watch_type writes_only(wheel, writes_rec.handler(), {.reader = 100ms, .writer = 150ms});
    reads_only.start();
    writes_only.start();
    step_to(320, [&](std::int64_t t) {
        if (t % 5 == 0) {
            reads_only.on_read();
            writes_only.on_write();
        }
    });
    BOOST_TEST(rec.times(idle_kind::reader).empty());
    BOOST_TEST(rec.times(idle_kind::writer) == (at_ms{150, 300}), boost::test_tools::per_element());
    BOOST_TEST(writes_rec.times(idle_kind::writer).empty());
    BOOST_TEST(writes_rec.times(idle_kind::reader) == (at_ms{100, 200, 300}), boost::test_tools::per_element());
}

// All-idle is postponed by either kind: reads for a while, then writes, then nothing.
BOOST_FIXTURE_TEST_CASE(all_idle_is_postponed_by_reads_and_by_writes, idle_fixture) {
    watch_type w(wheel, rec.handler(), {.all = 100ms}, &live);
    w.start();
    step_to(600, [&](std::int64_t t) {
        if (t <= 300 && t % 90 == 0) w.on_read();
        if (t > 300 && t <= 500 && t % 90 == 0) w.on_write();  // 360, 450
    });
    BOOST_TEST(rec.times(idle_kind::all) == (at_ms{550}), boost::test_tools::per_element());
    BOOST_TEST(live.all_idle == 1U);
    BOOST_TEST(live.reader_idle == 0U);
    BOOST_TEST(live.writer_idle == 0U);
}

BOOST_FIXTURE_TEST_CASE(a_kind_set_to_zero_is_off, idle_fixture) {
    watch_type writer_only(wheel, rec.handler(), {.reader = 0ms, .writer = 100ms, .all = 0ms});
    writer_only.start();
    step_to(250);
    BOOST_TEST(rec.times(idle_kind::writer) == (at_ms{100, 200}), boost::test_tools::per_element());
    BOOST_TEST(rec.events.size() == 2U);

    // Nothing watched: start() schedules nothing at all.
    writer_only.stop();
    recorder none_rec(*this);
    watch_type none(wheel, none_rec.handler(), {});
    none.start();
    BOOST_TEST(none.running());
    BOOST_TEST(wheel.pending() == 0U);
    step_to(2000, [&](std::int64_t t) {
        if (t == 1000) none.on_read();
    });
    BOOST_TEST(none_rec.events.empty());
    BOOST_TEST(rec.events.size() == 2U);
}

// observe_output: write progress counts as write activity for writer- and all-idle, only when
// enabled, and never for reader-idle.
BOOST_AUTO_TEST_CASE(write_progress_counts_only_with_observe_output) {
    for (const bool observe : {false, true}) {
        BOOST_TEST_CONTEXT("observe_output " << observe) {
            scene s;
            recorder rec(s);
            watch_type w(s.wheel, rec.handler(), {.reader = 120ms, .writer = 100ms, .all = 150ms, .observe_output = observe});
            w.start();
            BOOST_TEST(w.options().observe_output == observe);
            s.step_to(320, [&](std::int64_t t) {
                if (t % 10 == 3) w.on_write_progress();
            });
            BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{120, 240}), boost::test_tools::per_element());
            if (observe) {
                BOOST_TEST(rec.times(idle_kind::writer).empty());
                BOOST_TEST(rec.times(idle_kind::all).empty());
            } else {
                BOOST_TEST(rec.times(idle_kind::writer) == (at_ms{100, 200, 300}), boost::test_tools::per_element());
                BOOST_TEST(rec.times(idle_kind::all) == (at_ms{150, 300}), boost::test_tools::per_element());
            }
        }
    }
}

BOOST_FIXTURE_TEST_CASE(stats_count_each_kind, idle_fixture) {
    watch_type w(wheel, rec.handler(), {.reader = 100ms, .writer = 150ms, .all = 200ms}, &live);
    w.start();
    step_to(400);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{100, 200, 300, 400}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(idle_kind::writer) == (at_ms{150, 300}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(idle_kind::all) == (at_ms{200, 400}), boost::test_tools::per_element());
    const auto st = live;
    BOOST_TEST(st.reader_idle == 4U);
    BOOST_TEST(st.writer_idle == 2U);
    BOOST_TEST(st.all_idle == 2U);
    BOOST_TEST(st.pings_sent == 0U);
    BOOST_TEST(st.dead_peers == 0U);
    BOOST_TEST(st.handshake_timeouts == 0U);
    BOOST_TEST(st.operation_timeouts == 0U);
    BOOST_TEST(st.close_timeouts == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(control)

BOOST_FIXTURE_TEST_CASE(reset_restarts_the_stretch, idle_fixture) {
    watch_type w(wheel, rec.handler(), {.reader = 100ms});
    w.start();
    step_to(50);
    w.reset();  // at 50: the next report is 100 ms from now
    step_to(260);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{150, 250}), boost::test_tools::per_element());
    BOOST_TEST(rec.firsts(idle_kind::reader) == (flags{true, false}), boost::test_tools::per_element());
    w.reset();  // at 260, in the middle of a stretch: first flags reset too
    step_to(460);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{150, 250, 360, 460}), boost::test_tools::per_element());
    BOOST_TEST(rec.firsts(idle_kind::reader) == (flags{true, false, true, false}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(stop_prevents_reports_and_start_again_works, idle_fixture) {
    watch_type w(wheel, rec.handler(), {.reader = 100ms, .writer = 100ms});
    w.start();
    step_to(60);
    w.stop();
    BOOST_TEST(!w.running());
    BOOST_TEST(wheel.pending() == 0U);
    step_to(500, [&](std::int64_t t) {
        if (t == 200) w.on_read();  // activity while stopped does not restart anything
    });
    BOOST_TEST(rec.events.empty());
    BOOST_TEST(wheel.pending() == 0U);

    w.start();
    BOOST_TEST(w.running());
    step_to(610);
    BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{600}), boost::test_tools::per_element());
    BOOST_TEST(rec.times(idle_kind::writer) == (at_ms{600}), boost::test_tools::per_element());
    BOOST_TEST(rec.firsts(idle_kind::reader) == (flags{true}), boost::test_tools::per_element());
    w.stop();
    w.stop();  // idempotent
    step_to(1000);
    BOOST_TEST(rec.events.size() == 2U);
}

// A session whose handler does something to its own watch.
struct reacting_session {
    enum class reaction { none, stop, reset, destroy };

    reacting_session(scene& s, const idle_options& o, reaction r) : stage(&s), on_report(r) {
        watch.emplace(s.wheel, idlewheel::bind_member<&reacting_session::on_idle>(this), o, &s.live);
        watch->start();
    }
    void on_idle(idle_kind kind, bool first) {
        events.push_back({kind, first, stage->now_ms()});
        if (on_report == reaction::stop) watch->stop();
        if (on_report == reaction::reset) watch->reset();
        if (on_report == reaction::destroy) watch.reset();  // the session closes: the watch goes
    }

    scene* stage;
    reaction on_report;
    std::vector<idle_event> events;
    std::optional<watch_type> watch;
};

// Every kind is due at the same check: a stop, or a destruction, in the first report's handler
// ends that check (no second kind reported); a reset starts a new stretch from then.
BOOST_AUTO_TEST_CASE(the_handler_may_stop_reset_or_destroy_its_watch) {
    using reaction = reacting_session::reaction;
    const idle_options every_kind{.reader = 100ms, .writer = 100ms, .all = 100ms};
    {
        scene s;
        reacting_session stopper(s, every_kind, reaction::stop);
        s.step_to(500);
        BOOST_TEST_REQUIRE(stopper.events.size() == 1U);
        BOOST_TEST(stopper.events[0].at == 100);
        BOOST_TEST(!stopper.watch->running());
        BOOST_TEST(s.wheel.pending() == 0U);
        stopper.watch->start();  // start again works after a stop from the handler
        s.step_to(600);
        BOOST_TEST(stopper.events.size() == 2U);
        BOOST_TEST(stopper.events.back().at == 600);
        BOOST_TEST(stopper.events.back().first);
    }
    {
        scene s;
        reacting_session resetter(s, {.reader = 100ms}, reaction::reset);
        s.step_to(350);
        BOOST_TEST_REQUIRE(resetter.events.size() == 3U);
        for (std::size_t i = 0; i < 3; ++i) {
            BOOST_TEST(resetter.events[i].at == static_cast<std::int64_t>(100 * (i + 1)));
            BOOST_TEST(resetter.events[i].first);  // a reset starts a new stretch each time
        }
        BOOST_TEST(s.live.reader_idle == 3U);
    }
    {
        scene s;
        reacting_session closing(s, every_kind, reaction::destroy);
        reacting_session bystander(s, every_kind, reaction::none);  // due in the same batch, after it
        s.step_to(300);
        BOOST_TEST_REQUIRE(closing.events.size() == 1U);
        BOOST_TEST(name(closing.events[0].kind) == name(idle_kind::reader));
        BOOST_TEST(!closing.watch.has_value());
        BOOST_TEST(bystander.events.size() == 9U);  // three kinds at 100, 200, 300
        BOOST_TEST(s.live.reader_idle == 4U);
        BOOST_TEST(s.live.writer_idle == 3U);
        BOOST_TEST(s.live.all_idle == 3U);
    }
}

// One session's handler closes another session whose check is in the same batch, later: that
// one never reports.
BOOST_FIXTURE_TEST_CASE(a_handler_may_destroy_another_watch_of_the_same_batch, idle_fixture) {
    std::optional<watch_type> victim;
    recorder victim_rec(*this);
    struct closer {
        std::optional<watch_type>* victim;
        int reports = 0;
        void on_idle(idle_kind, bool) {
            ++reports;
            victim->reset();
        }
    } killer{&victim};
    watch_type first(wheel, idlewheel::bind_member<&closer::on_idle>(&killer), {.reader = 100ms});
    victim.emplace(wheel, victim_rec.handler(), idle_options{.reader = 100ms});
    first.start();
    victim->start();  // due at the same tick, behind `first`
    step_to(300);
    BOOST_TEST(killer.reports == 3);
    BOOST_TEST(victim_rec.events.empty());
    BOOST_TEST(wheel.pending() == 1U);
}

// Per-session options: a shorter time, a longer time, and a time that has already passed.
BOOST_AUTO_TEST_CASE(set_options_takes_effect_at_once) {
    {  // shorter, not yet passed: 1000 -> 400 at 100
        scene s;
        recorder rec(s);
        watch_type w(s.wheel, rec.handler(), {.reader = 1000ms});
        w.start();
        s.step_to(100);
        w.set_options({.reader = 400ms});
        BOOST_TEST(w.options().reader.count() == std::chrono::nanoseconds(400ms).count());
        s.step_to(1100);
        BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{400, 800}), boost::test_tools::per_element());
    }
    {  // longer: 200 -> 700 at 100; nothing at 200
        scene s;
        recorder rec(s);
        watch_type w(s.wheel, rec.handler(), {.reader = 200ms});
        w.start();
        s.step_to(100);
        w.set_options({.reader = 700ms});
        s.step_to(800);
        BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{700}), boost::test_tools::per_element());
    }
    // Already passed: 1000 -> 200 at 300 (+ phase). Not from inside set_options(); by the next
    // tick boundary; first == true.
    for (std::int64_t phase = 0; phase < tick_ms; ++phase) {
        BOOST_TEST_CONTEXT("set_options at " << 300 + phase << " ms") {
            scene s;
            recorder rec(s);
            watch_type w(s.wheel, rec.handler(), {.reader = 1000ms});
            w.start();
            s.step_to(300 + phase);
            w.set_options({.reader = 200ms, .writer = 50ms});
            BOOST_TEST(rec.events.empty());
            s.step_to(300 + phase + tick_ms);
            BOOST_TEST_REQUIRE(rec.times(idle_kind::reader).size() == 1U);
            const std::int64_t at = rec.times(idle_kind::reader).front();
            BOOST_TEST(at >= 300 + phase);
            BOOST_TEST(at <= ceil_to_tick(300 + phase + 1));
            BOOST_TEST(rec.firsts(idle_kind::reader) == (flags{true}), boost::test_tools::per_element());
            BOOST_TEST(rec.times(idle_kind::writer).size() == 1U);  // the new kind too
        }
    }
    {  // while stopped: applies on start()
        scene s;
        recorder rec(s);
        watch_type w(s.wheel, rec.handler(), {.reader = 1000ms});
        w.set_options({.writer = 300ms});
        BOOST_TEST(s.wheel.pending() == 0U);
        s.step_to(100);
        w.start();
        s.step_to(1500);
        BOOST_TEST(rec.times(idle_kind::reader).empty());
        BOOST_TEST(rec.times(idle_kind::writer) == (at_ms{400, 700, 1000, 1300}), boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lifetime)

BOOST_FIXTURE_TEST_CASE(a_watch_destroyed_before_its_deadline_never_reports, idle_fixture) {
    std::optional<watch_type> w;
    w.emplace(wheel, rec.handler(), idle_options{.reader = 100ms, .writer = 100ms, .all = 100ms});
    w->start();
    step_to(99);
    BOOST_TEST(wheel.pending() == 1U);
    w.reset();
    BOOST_TEST(wheel.pending() == 0U);
    step_to(1000);
    BOOST_TEST(rec.events.empty());
    BOOST_TEST(wheel.stats().cancelled == 1U);
}

// A touched watch sits in the wheel's list of touched sessions until the next sweep; destroying
// it there must unlink it (ASan reports it if the sweep still walks it), and must not disturb
// the stamps of the others.
BOOST_FIXTURE_TEST_CASE(destroying_a_touched_unstamped_watch_is_safe, idle_fixture) {
    recorder keeper_rec(*this);
    watch_type keeper(wheel, keeper_rec.handler(), {.reader = 100ms});
    std::optional<watch_type> before, after;  // linked in the touched list ahead of / behind keeper
    before.emplace(wheel, rec.handler(), idle_options{.reader = 100ms});
    after.emplace(wheel, rec.handler(), idle_options{.reader = 100ms});
    keeper.start();
    before->start();
    after->start();
    step_to(45);
    before->on_read();
    keeper.on_read();
    after->on_read();
    before.reset();
    after.reset();
    step_to(400);
    BOOST_TEST(rec.events.empty());
    BOOST_TEST(keeper_rec.times(idle_kind::reader) == (at_ms{150, 250, 350}), boost::test_tools::per_element());

    // The only touched one destroyed: the wheel wakes for nothing, and carries on.
    std::optional<watch_type> lone;
    lone.emplace(wheel, rec.handler(), idle_options{.reader = 30ms});
    lone->start();
    step_to(403);
    lone->on_write();
    lone->on_read();
    lone.reset();
    step_to(600, [&](std::int64_t t) {
        if (t == 505) keeper.on_read();
    });
    BOOST_TEST(rec.events.empty());
    BOOST_TEST(keeper_rec.times(idle_kind::reader) == (at_ms{150, 250, 350, 450}), boost::test_tools::per_element());
    step_to(610);
    BOOST_TEST(keeper_rec.times(idle_kind::reader).back() == 610);
}

// A session that closes after its first report, with its repeat check armed and a touch not
// stamped yet: both links go with the watch, and the wheel is left empty.
BOOST_FIXTURE_TEST_CASE(a_watch_destroyed_between_reports_leaves_nothing_behind, idle_fixture) {
    std::optional<watch_type> w;
    w.emplace(wheel, rec.handler(), idle_options{.reader = 100ms});
    w->start();
    step_to(150);
    BOOST_TEST(rec.events.size() == 1U);
    w->on_read();
    w.reset();
    step_to(1000);
    BOOST_TEST(rec.events.size() == 1U);
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(no_false_kick)

// Activity at the deadline, before the wheel's wake-up at that instant, is stamped by that
// wake-up's sweep before the check runs: no report.
BOOST_AUTO_TEST_CASE(activity_in_the_deadline_tick_prevents_the_report) {
    for (const std::int64_t activity : {90, 95, 99, 100}) {
        BOOST_TEST_CONTEXT("activity at " << activity << " ms, deadline 100 ms") {
            scene s;
            recorder rec(s);
            watch_type w(s.wheel, rec.handler(), {.reader = 100ms});
            w.start();
            s.step_to(activity + 100 + tick_ms, [&](std::int64_t t) {
                if (t == activity) w.on_read();
            });
            BOOST_TEST_REQUIRE(rec.events.size() == 1U);
            BOOST_TEST(rec.events[0].at > 100);  // not at the deadline the activity beat
            BOOST_TEST(rec.events[0].at - activity >= 100);
            BOOST_TEST(rec.events[0].at - activity < 100 + tick_ms);
        }
    }
}

// The same, with the activity recorded inside the very wake-up that runs the check, by a
// callback that runs just before it (same deadline tick, scheduled first: the wheel runs a
// tick's entries in FIFO order). The touch is not stamped yet when the watch checks; it must
// count as "now". Without it (the control) the watch reports at 100.
BOOST_AUTO_TEST_CASE(unstamped_activity_in_the_same_wake_up_prevents_the_report) {
    for (const bool touch : {false, true}) {
        BOOST_TEST_CONTEXT((touch ? "touched" : "control")) {
            scene s;
            recorder rec(s);
            std::optional<watch_type> w;
            w.emplace(s.wheel, rec.handler(), idle_options{.reader = 100ms, .all = 100ms});
            struct toucher {
                std::optional<watch_type>* watch;
                bool enabled;
                int runs = 0;
                void run() {
                    ++runs;
                    if (enabled) (*watch)->on_read();
                }
            } earlier{&w, touch};
            idlewheel::timer_node node{idlewheel::bind_member<&toucher::run>(&earlier)};
            s.wheel.schedule(node, 100ms);
            w->start();
            s.step_to(100);
            BOOST_TEST(earlier.runs == 1);
            if (!touch) {
                BOOST_TEST(rec.events.size() == 2U);
            } else {
                BOOST_TEST(rec.events.empty());
                // The touch is stamped at the next boundary (it came after this wake-up's
                // sweep), so the report is at most one tick after T from the touch.
                s.step_to(300);
                BOOST_TEST(rec.times(idle_kind::reader) == (at_ms{210}), boost::test_tools::per_element());
                BOOST_TEST(rec.times(idle_kind::all) == (at_ms{210}), boost::test_tools::per_element());
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
