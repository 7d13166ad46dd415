// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_IDLE_KINDS_HPP
#define IDLEWHEEL_TESTS_SUPPORT_IDLE_KINDS_HPP

// What the files of the executable test_idle_watch share (test_idle_watch.cpp,
// test_idle_watch_model.cpp): kinds compared as their names, and the options that watch one
// kind only.

#include <idlewheel/idle_watch.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace idlewheel::test::idle_kinds {

// Kinds compared as their names, so that a failed expectation prints something readable.
inline std::string name(idle_kind k) { return idlewheel::to_string(k); }

inline std::chrono::milliseconds ms(std::int64_t n) { return std::chrono::milliseconds(n); }

inline idle_options only(idle_kind kind, std::int64_t t_ms) {
    idle_options o;
    if (kind == idle_kind::reader) o.reader = ms(t_ms);
    if (kind == idle_kind::writer) o.writer = ms(t_ms);
    if (kind == idle_kind::all) o.all = ms(t_ms);
    return o;
}

}  // namespace idlewheel::test::idle_kinds

#endif
