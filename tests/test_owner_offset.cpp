// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/owner_offset.hpp>

// idlewheel::owner_offset (public since the demo server uses it): learnt from one owner, it
// finds the owner of every other object's member of that type, for a session that is not
// standard-layout; and the way the demo uses it, a config of its own shared by the sessions of
// a type, whose handler finds the session of the session_liveness that came due.

#define BOOST_TEST_MODULE owner_offset
#include <boost/test/unit_test.hpp>

#include "support/liveness_scene.hpp"

#include <idlewheel/session_liveness.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::wheel_type;

// Not standard-layout (a base with a virtual function, members before the one looked for).
struct base_with_vtable {
    virtual ~base_with_vtable() = default;
    std::string padding = "before the member";
};
struct owner_type : base_with_vtable, std::enable_shared_from_this<owner_type> {
    int before = 1;
    double member = 0.0;
    int after = 2;
};

}  // namespace

BOOST_AUTO_TEST_CASE(owner_and_member_are_found_for_every_object_of_the_type) {
    const idlewheel::owner_offset at;
    BOOST_TEST(at.offset() == idlewheel::owner_offset::unknown);
    std::vector<std::unique_ptr<owner_type>> owners;
    for (int i = 0; i < 4; ++i) owners.push_back(std::make_unique<owner_type>());
    at.learn(*owners[2], owners[2]->member);  // any one of them
    at.learn(*owners[0], owners[0]->member);  // again, from another: the same offset, kept
    const auto expected = reinterpret_cast<std::uintptr_t>(&owners[0]->member) - reinterpret_cast<std::uintptr_t>(owners[0].get());
    BOOST_TEST(expected != 0U);
    BOOST_TEST(at.offset() == expected);
    for (auto& o : owners) {
        BOOST_TEST(&at.owner<owner_type>(o->member) == o.get());
        BOOST_TEST(&at.member<double>(*o) == &o->member);
        const owner_type& constant = *o;
        BOOST_TEST(&at.owner<const owner_type>(constant.member) == o.get());
    }
}

// The demo server's shape: one config of its own per session type, no pointer in the session.
namespace {

struct hooked_config : idlewheel::basic_session_liveness_config<wheel_type> {
    hooked_config(wheel_type& wheel, const idlewheel::session_liveness_options& o, idlewheel::liveness_stats* stats)
        : basic_session_liveness_config(wheel, o, {&on_event, nullptr}, stats) {}
    static void on_event(void*, idlewheel::basic_session_liveness<wheel_type>& live, idlewheel::liveness_event e);
    idlewheel::owner_offset session_at;
};

struct hooked_session : std::enable_shared_from_this<hooked_session> {
    hooked_session(hooked_config& c, const scene& st) : stage(&st), live(c) { c.session_at.learn(*this, live); }
    std::string name = "padding before the member";
    const scene* stage;
    idlewheel::basic_session_liveness<wheel_type> live;
    std::vector<std::int64_t> handshake_timeouts_at;
};

void hooked_config::on_event(void*, idlewheel::basic_session_liveness<wheel_type>& live, idlewheel::liveness_event e) {
    const auto& c = static_cast<const hooked_config&>(live.config());
    hooked_session& s = c.session_at.owner<hooked_session>(live);
    if (e == idlewheel::liveness_event::handshake_timeout) s.handshake_timeouts_at.push_back(s.stage->now_ms());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_config_of_the_applications_own_finds_the_session_of_the_event) {
    scene s;
    hooked_config config(s.wheel, {.handshake_timeout = 50ms}, &s.live);
    auto a = std::make_shared<hooked_session>(config, s);
    auto b = std::make_shared<hooked_session>(config, s);
    a->live.start_handshake();
    s.step_to(20);
    b->live.start_handshake();
    s.step_to(100);
    BOOST_TEST_REQUIRE(a->handshake_timeouts_at.size() == 1U);
    BOOST_TEST_REQUIRE(b->handshake_timeouts_at.size() == 1U);
    BOOST_TEST(a->handshake_timeouts_at[0] == 50);
    BOOST_TEST(b->handshake_timeouts_at[0] == 70);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
}
