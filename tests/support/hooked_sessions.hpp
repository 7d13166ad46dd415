// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_HOOKED_SESSIONS_HPP
#define IDLEWHEEL_TESTS_SUPPORT_HOOKED_SESSIONS_HPP

// Sessions whose liveness config calls a hook on them, for the tests of every way to give that
// hook (bind_member<&S::f>(), a lambda: test_bind_member; 1.0's member pointer:
// test_deprecated_names): `hooked` holds a member_liveness, `line` a stream_liveness over a
// socket it opens (never connected: a verdict closes it). Include after Boost.Test.

#include <idlewheel/member_liveness.hpp>
#include <idlewheel/stream_liveness.hpp>

#include "liveness_scene.hpp"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace idlewheel::test::liveness {

struct hooked;
using hooked_config = member_liveness_config<hooked, wheel_type>;

struct hooked {
    hooked(const hooked_config& c, const scene& st) : live(c, *this), stage(&st) {}
    void on_liveness(liveness_event e) { events.emplace_back(e, stage->now_ms()); }
    std::vector<int> padding_before{1, 2, 3};  // the liveness object is not at the session's start
    member_liveness<hooked, wheel_type> live;
    const scene* stage;
    std::vector<std::pair<liveness_event, std::int64_t>> events;  // what on_liveness heard, when
};

struct line;
using line_config = stream_liveness_config<line, net::ip::tcp::socket, wheel_type>;

struct line {
    line(net::io_context& io, const line_config& c) : socket(io), live(c, *this) { socket.open(net::ip::tcp::v4()); }
    void on_liveness(liveness_event e) {
        events.push_back(e);
        socket_open_in_hook = socket.is_open();
    }
    net::ip::tcp::socket socket;
    stream_liveness<line, net::ip::tcp::socket, wheel_type> live;
    std::vector<liveness_event> events;
    bool socket_open_in_hook = true;
};

/// `config` (handshake_timeout 50 ms, its hook hooked::on_liveness) tells each of two sessions,
/// started 20 ms apart, of its own handshake timeout, at its own time.
inline void expect_each_session_hooked(scene& s, const hooked_config& config) {
    const std::int64_t t0 = s.now_ms();
    auto a = std::make_unique<hooked>(config, s);
    auto b = std::make_unique<hooked>(config, s);
    a->live.start_handshake();
    s.step_to(t0 + 20);
    b->live.start_handshake();
    s.step_to(t0 + 100);
    BOOST_TEST_REQUIRE(a->events.size() == 1U);
    BOOST_TEST_REQUIRE(b->events.size() == 1U);
    BOOST_TEST((a->events[0].first == liveness_event::handshake_timeout));
    BOOST_TEST(a->events[0].second == t0 + 50);
    BOOST_TEST(b->events[0].second == t0 + 70);
}

/// `config` (handshake_timeout 30 ms, its hook line::on_liveness) closes the socket, then tells
/// the hook.
inline void expect_socket_closed_then_hooked(scene& s, const line_config& config) {
    line l(s.io, config);
    l.live.start_handshake();
    s.step_to(s.now_ms() + 100);
    BOOST_TEST_REQUIRE(l.events.size() == 1U);
    BOOST_TEST((l.events[0] == liveness_event::handshake_timeout));
    BOOST_TEST(!l.socket_open_in_hook);  // the object acted first, the hook last
}

}  // namespace idlewheel::test::liveness

#endif
