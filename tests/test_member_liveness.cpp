// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/member_liveness.hpp>

// member_liveness: a session_liveness that is a member of its session and calls it back. Part
// of the executable test_session_liveness (tests/README.md).

#include "support/net.hpp"
#include "support/session_scene.hpp"

#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

namespace {
using namespace idlewheel::test::session_scene;  // support/session_scene.hpp
}  // namespace

namespace {
struct hooked_session {
    hooked_session(const idlewheel::member_liveness_config<hooked_session, wheel_type>& c, const scene& st)
        : live(c, *this), stage(&st) {}
    void on_liveness(liveness_event e) { events.push_back({e, stage->now_ms()}); }
    std::string name_before = "padding before the member";
    idlewheel::member_liveness<hooked_session, wheel_type> live;
    const scene* stage;
    std::vector<seen> events;
};
}  // namespace

BOOST_AUTO_TEST_CASE(member_liveness_calls_the_session_that_holds_it) {
    scene s;
    idlewheel::member_liveness_config<hooked_session, wheel_type> config(s.wheel, {.handshake_timeout = 50ms},
                                                                         idlewheel::bind_member<&hooked_session::on_liveness>(), &s.live);
    auto a = std::make_unique<hooked_session>(config, s);
    auto b = std::make_unique<hooked_session>(config, s);
    BOOST_TEST(sizeof(a->live) <= 64U);
    BOOST_TEST(&a->live.owner() == a.get());
    BOOST_TEST(&b->live.owner() == b.get());
    a->live.start_handshake();
    s.step_to(20);
    b->live.start_handshake();
    s.step_to(100);
    BOOST_TEST_REQUIRE(a->events.size() == 1U);
    BOOST_TEST_REQUIRE(b->events.size() == 1U);
    BOOST_TEST(name(a->events[0].event) == "handshake timeout");
    BOOST_TEST(a->events[0].at == 50);
    BOOST_TEST(b->events[0].at == 70);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
}
