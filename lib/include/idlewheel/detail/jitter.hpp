// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_JITTER_HPP
#define IDLEWHEEL_DETAIL_JITTER_HPP

// The library's one pseudo-random source: splitmix64 over a per-thread counter. Cheap,
// deterministic run to run, well spread; used to draw per-session jitter offsets.

#include <cstdint>

namespace idlewheel::detail {

inline constexpr std::uint64_t splitmix64_gamma = 0x9e3779b97f4a7c15ULL;

/// splitmix64's output function (Steele, Lea, Flood): the output for a state `z`.
[[nodiscard]] constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// Advances `state` and returns the next output.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    return splitmix64_mix(state += splitmix64_gamma);
}

[[nodiscard]] inline std::uint64_t next_jitter_bits() noexcept {
    thread_local std::uint64_t state = splitmix64_gamma;
    return splitmix64(state);
}

}  // namespace idlewheel::detail

#endif
