// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_SESSION_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_SESSION_SCENE_HPP

// What the files of the executable test_session_liveness share (test_session_liveness*.cpp,
// test_stream_liveness.cpp, test_member_liveness.cpp): a liveness event with the manual time
// it came at, and events compared as their names (a failed expectation prints them).

#include <idlewheel/session_liveness.hpp>

#include "liveness_scene.hpp"

#include <chrono>
#include <cstdint>
#include <string>

// With the names the tests use unqualified (test_stream_liveness.cpp and
// test_member_liveness.cpp say `using namespace` this namespace).
namespace idlewheel::test::session_scene {

using namespace std::chrono_literals;
using idlewheel::liveness_event;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::tick_ms;
using idlewheel::test::liveness::wheel_type;

struct seen {
    liveness_event event;
    std::int64_t at;
};

inline std::string name(liveness_event e) { return idlewheel::to_string(e); }

}  // namespace idlewheel::test::session_scene

#endif
