// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_JITTER_HPP
#define IDLEWHEEL_DETAIL_JITTER_HPP

// The library's one pseudo-random source: splitmix64 over a per-thread counter. Cheap,
// deterministic run to run, well spread; used to draw per-session jitter offsets.

#include <cstdint>

namespace idlewheel::detail {

[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

[[nodiscard]] inline std::uint64_t next_jitter_bits() noexcept {
    thread_local std::uint64_t state = 0x9e3779b97f4a7c15ULL;
    return splitmix64(state);
}

}  // namespace idlewheel::detail

#endif
