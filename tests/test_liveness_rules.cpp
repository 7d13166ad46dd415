// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/core/liveness_rules.hpp>

// core/liveness_rules.hpp: the liveness rules both front doors run (session_liveness and the
// tcp_stream's one-line WebSocket timeouts), sans-I/O: each phase's verdict exactly at its
// time and never before, the order when two are due at one look, when to look next, and the
// saturating arithmetic, in units (std::uint64_t) and in a duration (nanoseconds) alike.

#define BOOST_TEST_MODULE test_liveness_rules
#include <boost/test/unit_test.hpp>

#include <boost/mpl/list.hpp>

#include <chrono>
#include <cstdint>

namespace {

using idlewheel::detail::decide;
using idlewheel::detail::liveness_look;
using idlewheel::detail::liveness_phase;
using idlewheel::detail::liveness_rules;
using idlewheel::detail::liveness_step;
using idlewheel::detail::never;

using times = boost::mpl::list<std::uint64_t, std::chrono::nanoseconds>;

template <class Time>
constexpr Time t(std::int64_t v) {
    return Time(v);
}

template <class Time>
liveness_look<Time> at(std::int64_t now) {
    liveness_look<Time> l;
    l.now = t<Time>(now);
    return l;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(after_saturates_and_a_rule_that_is_off_is_never, Time, times) {
    using idlewheel::detail::after;
    BOOST_TEST((after(t<Time>(5), t<Time>(7)) == t<Time>(12)));
    BOOST_TEST((after(t<Time>(5), Time{}) == t<Time>(5)));  // zero has passed at once
    BOOST_TEST((after(t<Time>(5), never<Time>()) == never<Time>()));
    BOOST_TEST((after(never<Time>() - t<Time>(3), t<Time>(7)) == never<Time>()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(the_handshake_deadline_never_before_it, Time, times) {
    liveness_rules<Time> r;
    r.handshake = t<Time>(100);
    auto l = at<Time>(99);
    l.deadline = r.phase_deadline(liveness_phase::handshake, Time{});
    BOOST_TEST((l.deadline == t<Time>(100)));
    auto d = decide(liveness_phase::handshake, r, l);
    BOOST_TEST((d.step == liveness_step::wait));
    BOOST_TEST((d.next == t<Time>(100)));
    l.now = t<Time>(100);
    BOOST_TEST((decide(liveness_phase::handshake, r, l).step == liveness_step::handshake_timeout));
    r.handshake = never<Time>();  // off: nothing to watch
    BOOST_TEST((decide(liveness_phase::handshake, r, l).next == never<Time>()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(idle_in_the_handshake_and_the_deadline_first_when_both_are_due, Time, times) {
    liveness_rules<Time> r;
    r.handshake = t<Time>(100);
    r.idle = t<Time>(30);
    auto l = at<Time>(29);
    l.deadline = t<Time>(100);
    l.read = Time{};
    BOOST_TEST((decide(liveness_phase::handshake, r, l).next == t<Time>(100)));  // idle not asked for
    r.idle_in_handshake = true;
    BOOST_TEST((decide(liveness_phase::handshake, r, l).next == t<Time>(30)));
    l.now = t<Time>(30);
    BOOST_TEST((decide(liveness_phase::handshake, r, l).step == liveness_step::idle));
    l.now = t<Time>(100);
    BOOST_TEST((decide(liveness_phase::handshake, r, l).step == liveness_step::handshake_timeout));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(open_idle_from_the_last_message_before_the_heartbeat, Time, times) {
    liveness_rules<Time> r;
    r.idle = t<Time>(60);
    r.ping_after = t<Time>(20);
    r.pong = t<Time>(10);
    auto l = at<Time>(69);
    l.read = t<Time>(10);
    l.heard = t<Time>(50);
    auto d = decide(liveness_phase::open, r, l);
    BOOST_TEST((d.step == liveness_step::wait));
    BOOST_TEST((d.next == t<Time>(70)));  // idle at 70, the ping at 70: the earlier look
    l.now = t<Time>(70);
    BOOST_TEST((decide(liveness_phase::open, r, l).step == liveness_step::idle));  // both due: idle
    r.idle = never<Time>();
    BOOST_TEST((decide(liveness_phase::open, r, l).step == liveness_step::send_ping));
    l.now = t<Time>(69);
    BOOST_TEST((decide(liveness_phase::open, r, l).next == t<Time>(70)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(an_unanswered_ping_is_a_dead_peer_at_its_deadline, Time, times) {
    liveness_rules<Time> r;
    r.ping_after = t<Time>(20);
    r.pong = t<Time>(10);
    auto l = at<Time>(39);
    l.awaiting = true;
    l.heard = t<Time>(30);  // the ping's time
    l.deadline = r.pong_deadline(t<Time>(30));
    BOOST_TEST((l.deadline == t<Time>(40)));
    auto d = decide(liveness_phase::open, r, l);
    BOOST_TEST((d.step == liveness_step::wait));
    BOOST_TEST((d.next == t<Time>(40)));
    l.now = t<Time>(40);
    BOOST_TEST((decide(liveness_phase::open, r, l).step == liveness_step::dead_peer));
    r.pong = t<Time>(50);  // a pong deadline past the next ping: the look comes at the ping's time
    l.deadline = r.pong_deadline(t<Time>(30));
    l.now = t<Time>(39);
    BOOST_TEST((decide(liveness_phase::open, r, l).next == t<Time>(50)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(the_close_bound_and_no_rule_in_other_phases, Time, times) {
    liveness_rules<Time> r;
    r.close = t<Time>(5);
    auto l = at<Time>(14);
    l.deadline = r.phase_deadline(liveness_phase::closing, t<Time>(10));
    BOOST_TEST((decide(liveness_phase::closing, r, l).next == t<Time>(15)));
    l.now = t<Time>(15);
    BOOST_TEST((decide(liveness_phase::closing, r, l).step == liveness_step::close_timeout));
    r.close = never<Time>();
    BOOST_TEST((decide(liveness_phase::closing, r, l).next == never<Time>()));
    r = liveness_rules<Time>{t<Time>(1), t<Time>(1), t<Time>(1), t<Time>(1), t<Time>(1), true};
    for (const auto p : {liveness_phase::stopped, liveness_phase::ended}) {
        const auto d = decide(p, r, at<Time>(1000));
        BOOST_TEST((d.step == liveness_step::wait));
        BOOST_TEST((d.next == never<Time>()));
    }
}
