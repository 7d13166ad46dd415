// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_SESSION_LIVENESS_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_SESSION_LIVENESS_SCENE_HPP

// What the parts of session_liveness.hpp's tests share (test_session_liveness.cpp,
// test_session_liveness_handshake.cpp, test_session_liveness_open.cpp, in the executable
// test_session_liveness): one basic_session_liveness on the scene's manual-clock wheel, its
// events with their times, and what to do on each.

#include <idlewheel/session_liveness.hpp>

#include "liveness_scene.hpp"
#include "session_scene.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

// The names the tests use unqualified (they say `using namespace idlewheel::test::session_liveness_scene;`).
namespace idlewheel::test::session_liveness_scene {

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

inline constexpr std::int64_t unit_us = tick_ms * 1000 / 16;  // times are kept in tick / 16

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

}  // namespace idlewheel::test::session_liveness_scene

#endif
