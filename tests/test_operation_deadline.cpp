// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/operation_deadline.hpp>

// basic_operation_deadline on a manual-clock wheel, driven 1 ms at a time with
// io_context::poll(): a fixed deadline for one operation (a handshake, a read), exact to the
// tick, that activity does not move.

#include "support/liveness_scene.hpp"
#include "support/net.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE operation_deadline
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::tick_ms;
using idlewheel::test::liveness::wheel_type;
using deadline_type = idlewheel::basic_operation_deadline<wheel_type>;
using idlewheel::error_code;

std::chrono::milliseconds ms(std::int64_t n) { return std::chrono::milliseconds(n); }

// The session that owns a deadline: records when its "operation is late" callback ran.
struct session {
    explicit session(scene& s, idlewheel::error cause = idlewheel::error::operation_timeout)
        : stage(&s), deadline(std::in_place, s.wheel, idlewheel::bind_member<&session::on_late>(this), cause, &s.live) {}

    void on_late() {
        late.push_back(stage->now_ms());
        // The callback sees the deadline as expired already: the session can tell why its
        // operation failed from inside it.
        expired_in_callback = deadline->expired();
        if (destroy_in_callback) deadline.reset();
        if (rearm_in_callback) deadline->expires_after(rearm_in_callback_by);
    }

    scene* stage;
    std::vector<std::int64_t> late;
    bool expired_in_callback = false;
    bool destroy_in_callback = false;
    bool rearm_in_callback = false;
    std::chrono::milliseconds rearm_in_callback_by{0};
    std::optional<deadline_type> deadline;
};

using at_ms = std::vector<std::int64_t>;

}  // namespace

BOOST_AUTO_TEST_SUITE(expiry)

// Armed at every phase of a tick, for deadlines that are and are not a whole number of ticks:
// it runs once, never before arm time + T, less than a tick after it.
BOOST_AUTO_TEST_CASE(expires_at_T_never_early_at_most_one_tick_late) {
    for (const std::int64_t timeout : {1, 50, 55, 100, 109}) {
        for (std::int64_t phase = 0; phase < tick_ms; ++phase) {
            BOOST_TEST_CONTEXT("T " << timeout << " ms, armed at " << 100 + phase << " ms") {
                scene s;
                session op(s);
                const std::int64_t armed_at = 100 + phase;
                s.step_to(armed_at);
                op.deadline->expires_after(ms(timeout));
                BOOST_TEST(op.deadline->armed());
                BOOST_TEST(!op.deadline->expired());
                s.step_to(armed_at + timeout - 1);
                BOOST_TEST(op.late.empty());
                BOOST_TEST(!op.deadline->expired());
                s.step_to(armed_at + timeout + 2 * tick_ms);
                BOOST_TEST_REQUIRE(op.late.size() == 1U);
                BOOST_TEST(op.late[0] - armed_at >= timeout);
                BOOST_TEST(op.late[0] - armed_at < timeout + tick_ms);
                BOOST_TEST(op.expired_in_callback);
                BOOST_TEST(op.deadline->expired());
                BOOST_TEST(!op.deadline->armed());
                BOOST_TEST(s.live.operation_timeouts == 1U);
                BOOST_TEST(s.live.handshake_timeouts == 0U);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(cancel_before_T_prevents_it_and_returns_true) {
    for (const std::int64_t cancel_at : {1, 50, 99}) {
        BOOST_TEST_CONTEXT("cancelled at " << cancel_at << " ms of 100") {
            scene s;
            session op(s);
            op.deadline->expires_after(100ms);
            s.step_to(cancel_at);
            BOOST_TEST(op.deadline->cancel());
            BOOST_TEST(!op.deadline->armed());
            BOOST_TEST(!op.deadline->cancel());  // nothing left to cancel
            BOOST_TEST(s.wheel.pending() == 0U);
            s.step_to(1000);
            BOOST_TEST(op.late.empty());
            BOOST_TEST(!op.deadline->expired());
            BOOST_TEST(!op.deadline->reason());
            BOOST_TEST(s.live.operation_timeouts == 0U);
        }
    }
    // Never armed: nothing to cancel.
    scene s;
    session op(s);
    BOOST_TEST(!op.deadline->cancel());
    BOOST_TEST(!op.deadline->armed());
}

// The operation completes just after the deadline ran: too late, cancel() says so and the
// session can still tell why its operation failed.
BOOST_AUTO_TEST_CASE(cancel_after_expiry_returns_false_and_reason_tells_the_cause) {
    for (const auto cause :
         {idlewheel::error::handshake_timeout, idlewheel::error::close_timeout, idlewheel::error::operation_timeout}) {
        BOOST_TEST_CONTEXT("cause " << make_error_code(cause).message()) {
            scene s;
            session op(s, cause);
            BOOST_TEST(!op.deadline->reason());  // success while not expired
            op.deadline->expires_after(5s);
            s.step_to(4999);
            BOOST_TEST(!op.deadline->reason());
            s.step_to(5000);
            BOOST_TEST(op.late == (at_ms{5000}), boost::test_tools::per_element());
            BOOST_TEST(!op.deadline->cancel());
            BOOST_TEST(op.deadline->expired());  // cancel() after expiry does not clear it
            const error_code ec = op.deadline->reason();
            BOOST_TEST(ec == make_error_code(cause));
            BOOST_TEST((ec.category() == idlewheel::error_category()));
            BOOST_TEST(ec.message() == (cause == idlewheel::error::handshake_timeout ? "handshake timeout"
                                        : cause == idlewheel::error::close_timeout ? "close timeout"
                                                                                   : "operation timeout"));
            const auto st = s.live;
            BOOST_TEST(st.handshake_timeouts == (cause == idlewheel::error::handshake_timeout ? 1U : 0U));
            BOOST_TEST(st.close_timeouts == (cause == idlewheel::error::close_timeout ? 1U : 0U));
            BOOST_TEST(st.operation_timeouts == (cause == idlewheel::error::operation_timeout ? 1U : 0U));
        }
    }
}

BOOST_AUTO_TEST_CASE(stats_count_by_cause) {
    scene s;
    session handshake1(s, idlewheel::error::handshake_timeout);
    session handshake2(s, idlewheel::error::handshake_timeout);
    session read1(s);
    session read2(s);
    session read3(s);
    handshake1.deadline->expires_after(100ms);
    handshake2.deadline->expires_after(100ms);
    read1.deadline->expires_after(200ms);
    read2.deadline->expires_after(200ms);
    read3.deadline->expires_after(200ms);
    s.step_to(150);
    BOOST_TEST(read3.deadline->cancel());  // completed in time: not counted
    s.step_to(300);
    const auto st = s.live;
    BOOST_TEST(st.handshake_timeouts == 2U);
    BOOST_TEST(st.operation_timeouts == 2U);
    BOOST_TEST(st.reader_idle + st.writer_idle + st.all_idle + st.pings_sent + st.dead_peers == 0U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rearm)

BOOST_AUTO_TEST_CASE(expires_after_again_resets_expired_and_arms_from_now) {
    scene s;
    session op(s, idlewheel::error::handshake_timeout);
    op.deadline->expires_after(100ms);
    s.step_to(150);
    BOOST_TEST(op.deadline->expired());
    op.deadline->expires_after(30ms);  // at 150
    BOOST_TEST(!op.deadline->expired());
    BOOST_TEST(!op.deadline->reason());
    BOOST_TEST(op.deadline->armed());
    s.step_to(300);
    BOOST_TEST(op.late == (at_ms{100, 180}), boost::test_tools::per_element());
    BOOST_TEST(op.deadline->expired());
    BOOST_TEST(s.live.handshake_timeouts == 2U);
}

// Re-arming a pending deadline replaces it (shorter or longer): it runs once, at the new time.
BOOST_AUTO_TEST_CASE(expires_after_while_armed_replaces_the_deadline) {
    for (const std::int64_t new_timeout : {30, 300}) {
        BOOST_TEST_CONTEXT("re-armed at 50 ms for " << new_timeout << " ms") {
            scene s;
            session op(s);
            op.deadline->expires_after(100ms);
            s.step_to(50);
            op.deadline->expires_after(ms(new_timeout));
            BOOST_TEST(s.wheel.pending() == 1U);
            s.step_to(1000);
            BOOST_TEST(op.late == (at_ms{50 + new_timeout}), boost::test_tools::per_element());
        }
    }
}

// The callback arms the next operation's deadline (a session that retries).
BOOST_AUTO_TEST_CASE(the_callback_may_rearm_it) {
    scene s;
    session op(s);
    op.rearm_in_callback = true;
    op.rearm_in_callback_by = 70ms;
    op.deadline->expires_after(100ms);
    s.step_to(350);
    BOOST_TEST(op.late == (at_ms{100, 170, 240, 310}), boost::test_tools::per_element());
    BOOST_TEST(!op.deadline->expired());  // re-armed inside the callback
    BOOST_TEST(op.deadline->armed());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(activity)

// "Bytes arriving do not extend it": the same session's idle watch sees a read every
// millisecond, and the handshake deadline still expires at exactly 200 ms. The idle watch,
// for its part, never reports.
BOOST_AUTO_TEST_CASE(bytes_arriving_do_not_extend_the_deadline) {
    scene s;
    session op(s, idlewheel::error::handshake_timeout);
    struct idle_count {
        int reports = 0;
        void on_idle(idlewheel::idle_kind, bool) { ++reports; }
    } idle_reports;
    idlewheel::basic_idle_watch<wheel_type> idle(s.wheel, idlewheel::bind_member<&idle_count::on_idle>(&idle_reports),
                                                 {.reader = 50ms, .all = 50ms});
    idle.start();
    op.deadline->expires_after(200ms);
    s.step_to(500, [&](std::int64_t) {
        idle.on_read();
        idle.on_write();
    });
    BOOST_TEST(op.late == (at_ms{200}), boost::test_tools::per_element());
    BOOST_TEST(op.deadline->reason() == make_error_code(idlewheel::error::handshake_timeout));
    BOOST_TEST(idle_reports.reports == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lifetime)

BOOST_AUTO_TEST_CASE(destroyed_while_armed_it_never_calls_back) {
    scene s;
    session op(s);
    session other(s);
    op.deadline->expires_after(100ms);
    other.deadline->expires_after(100ms);
    s.step_to(99);
    op.deadline.reset();
    BOOST_TEST(s.wheel.pending() == 1U);
    s.step_to(1000);
    BOOST_TEST(op.late.empty());
    BOOST_TEST(other.late == (at_ms{100}), boost::test_tools::per_element());
    BOOST_TEST(s.live.operation_timeouts == 1U);
    BOOST_TEST(s.wheel.stats().cancelled == 1U);
}

// The session closes (and its deadline goes) from the deadline's own callback, and another
// deadline of the same batch goes with it: no crash (ASan checks), no call for the second.
BOOST_AUTO_TEST_CASE(destroyed_in_its_own_callback_or_by_a_neighbour_of_its_batch) {
    scene s;
    session first(s);
    std::optional<session> second;
    second.emplace(s);
    first.destroy_in_callback = true;
    first.deadline->expires_after(100ms);
    second->deadline->expires_after(100ms);  // same tick, after `first`
    struct closer {
        std::optional<session>* victim;
        void run() { victim->reset(); }
    } close_second{&second};
    // A callback in the same tick, scheduled between them: it closes the second session.
    idlewheel::timer_node node{idlewheel::bind_member<&closer::run>(&close_second)};
    s.wheel.schedule(node, 100ms);
    // Re-schedule the second deadline behind the closer (FIFO within a tick).
    second->deadline->expires_after(100ms);
    s.step_to(500);
    BOOST_TEST(first.late == (at_ms{100}), boost::test_tools::per_element());
    BOOST_TEST(!first.deadline.has_value());
    BOOST_TEST(!second.has_value());
    BOOST_TEST(s.wheel.pending() == 0U);
    BOOST_TEST(s.live.operation_timeouts == 1U);
}

BOOST_AUTO_TEST_SUITE_END()
