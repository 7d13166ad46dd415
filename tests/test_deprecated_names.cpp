// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/idlewheel.hpp>

// The names 1.0 promised and 1.x deprecates still compile and still do what they did: the four
// member binders (call_member, idle_member, heartbeat_member, adjust_member, now forwarders to
// bind_member), heartbeat_event::peer_dead (an alias of dead_peer), error::idle_timeout and
// error::dead_peer (reported by nothing, kept with their values and messages), and a
// liveness_stats aggregate-initialized as in 1.0 (close_timeouts was added last). Built with
// -Wno-deprecated-declarations (tests/CMakeLists.txt): everywhere else the names warn.

#include "support/liveness_scene.hpp"

#define BOOST_TEST_MODULE deprecated_names
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::wheel_type;

struct target {
    const scene* stage = nullptr;
    std::vector<std::int64_t> fired;
    std::vector<bool> idle_first;
    std::vector<idlewheel::heartbeat_event> beats;
    int adjusted = 0;

    void on_timer() { fired.push_back(stage->now_ms()); }
    void on_idle(idlewheel::idle_kind, bool first) { idle_first.push_back(first); }
    void on_heartbeat(idlewheel::heartbeat_event e) { beats.push_back(e); }
    std::chrono::nanoseconds same(std::chrono::nanoseconds period) noexcept {
        ++adjusted;
        return period;
    }
};

// The old binders still return their own types, usable where 1.0 code used them.
static_assert(std::is_same_v<decltype(idlewheel::call_member<&target::on_timer>(static_cast<target*>(nullptr))),
                             idlewheel::timer_callback>);
static_assert(std::is_same_v<decltype(idlewheel::idle_member<&target::on_idle>(static_cast<target*>(nullptr))),
                             idlewheel::idle_handler>);
static_assert(
    std::is_same_v<decltype(idlewheel::heartbeat_member<&target::on_heartbeat>(static_cast<target*>(nullptr))),
                   idlewheel::heartbeat_handler>);
static_assert(std::is_same_v<decltype(idlewheel::adjust_member<&target::same>(static_cast<target*>(nullptr))),
                             idlewheel::repeat_adjust>);

// The old enumerator is the new one.
static_assert(idlewheel::heartbeat_event::peer_dead == idlewheel::heartbeat_event::dead_peer);

}  // namespace

BOOST_AUTO_TEST_CASE(call_member_still_binds_and_fires) {
    scene s;
    target t;
    t.stage = &s;
    const idlewheel::timer_callback cb = idlewheel::call_member<&target::on_timer>(&t);
    BOOST_TEST(cb.context == static_cast<void*>(&t));
    idlewheel::timer_node node{cb};
    s.wheel.schedule(node, 40ms);
    s.step_to(100);
    BOOST_TEST(t.fired == (std::vector<std::int64_t>{40}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(idle_member_still_binds_and_reports) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_idle_watch<wheel_type> watch{s.wheel, idlewheel::idle_member<&target::on_idle>(&t),
                                                  {.reader = 50ms}};
    watch.start();
    s.step_to(49);
    BOOST_TEST(t.idle_first.empty());
    s.step_to(120);
    BOOST_TEST_REQUIRE(!t.idle_first.empty());
    BOOST_TEST(t.idle_first.front());
}

BOOST_AUTO_TEST_CASE(heartbeat_member_and_peer_dead_still_work) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_heartbeat<wheel_type> hb{s.wheel, idlewheel::heartbeat_member<&target::on_heartbeat>(&t),
                                              {.ping_interval = 50ms, .pong_timeout = 20ms}};
    hb.start();
    s.step_to(300);
    BOOST_TEST_REQUIRE(t.beats.size() == 2U);
    BOOST_TEST((t.beats[0] == idlewheel::heartbeat_event::send_ping));
    // 1.0 code compares with the old word: it still matches what the heartbeat reports.
    BOOST_TEST((t.beats[1] == idlewheel::heartbeat_event::peer_dead));
    switch (t.beats[1]) {  // and a switch written with the old word still takes its case
        case idlewheel::heartbeat_event::send_ping: BOOST_FAIL("send_ping"); break;
        case idlewheel::heartbeat_event::peer_dead: break;
    }
}

BOOST_AUTO_TEST_CASE(adjust_member_still_binds_the_hook) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_repeating_timer<wheel_type> timer{s.wheel, idlewheel::call_member<&target::on_timer>(&t), 30ms,
                                                       {.adjust = idlewheel::adjust_member<&target::same>(&t)}};
    timer.start();
    s.step_to(95);
    BOOST_TEST(t.adjusted >= 1);
    BOOST_TEST(t.fired == (std::vector<std::int64_t>{30, 60, 90}), boost::test_tools::per_element());
    timer.stop();
}

BOOST_AUTO_TEST_CASE(deprecated_error_codes_keep_their_values_and_messages) {
    const idlewheel::error_code idle = idlewheel::error::idle_timeout;
    const idlewheel::error_code dead = idlewheel::error::dead_peer;
    BOOST_TEST(idle.value() == 3);  // 1.0's values: stopped = 1, too_many_pending, idle_timeout, dead_peer
    BOOST_TEST(dead.value() == 4);
    BOOST_TEST(idle.message() == std::string("idle timeout"));
    BOOST_TEST(dead.message() == std::string("peer did not answer a ping in time"));
    BOOST_TEST(std::string(idle.category().name()) == "idlewheel");
    const idlewheel::error_code handshake = idlewheel::error::handshake_timeout;
    BOOST_TEST(handshake.value() == 5);
    BOOST_TEST(handshake.message() == std::string("handshake timeout"));
}

BOOST_AUTO_TEST_CASE(liveness_stats_initialized_as_in_1_0_keeps_its_meaning) {
    const idlewheel::liveness_stats old{1, 2, 3, 4, 5, 6, 7};  // 1.0's seven counters, in order
    BOOST_TEST(old.operation_timeouts == 7U);
    BOOST_TEST(old.close_timeouts == 0U);
}
