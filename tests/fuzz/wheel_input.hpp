// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_FUZZ_WHEEL_INPUT_HPP
#define IDLEWHEEL_TESTS_FUZZ_WHEEL_INPUT_HPP

// The input format of fuzz_wheel, shared with make_corpus (which writes seed inputs):
//
//   [pool] [flags] [start tick: 8 bytes] [draw: 8 bytes]...
//
//  - pool: how many nodes take part, pools[pool % 7] (few nodes make reschedules and cancels
//    of pending nodes common; many fill every level);
//  - flags: bits 0-2 == 7 turns removals off (then next_due() must equal the earliest deadline
//    exactly, through every cascade); bits 3-4 pick how the start tick is read;
//  - each draw is one 64-bit "random" number of operation_generator (support/wheel_model.hpp),
//    little-endian: the input steers every choice the generator makes.

#include "fuzz_input.hpp"
#include "support/wheel_model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace idlewheel::fuzz {

struct wheel_config {
    std::size_t pool;
    test::tick_type start;
    bool removals;
};

inline constexpr std::array<std::size_t, 7> wheel_pools{1, 3, 16, 64, 256, 1024, 4096};

enum class start_shape : std::uint8_t { near_origin, anywhere, near_top, level_boundary };

[[nodiscard]] constexpr std::uint8_t wheel_flags(start_shape s, bool removals) noexcept {
    return static_cast<std::uint8_t>((static_cast<unsigned>(s) << 3) | (removals ? 0U : 7U));
}

inline wheel_config read_wheel_config(fuzz_input& in) {
    using test::max_tick;
    using test::tick_type;
    const std::uint8_t pool = in.byte();
    const std::uint8_t flags = in.byte();
    const std::uint64_t raw = in.u64();
    wheel_config c{wheel_pools[pool % wheel_pools.size()], 0, (flags & 7) != 7};
    switch (static_cast<start_shape>((flags >> 3) & 3)) {
        case start_shape::near_origin:
            c.start = raw % 4096;
            break;
        case start_shape::anywhere:
            c.start = raw;
            break;
        case start_shape::near_top:
            c.start = max_tick - (raw % (tick_type{1} << 24));
            break;
        case start_shape::level_boundary:
            c.start = raw & ~((tick_type{1} << (6 * (raw % 11))) - 1);
            break;
    }
    return c;
}

}  // namespace idlewheel::fuzz

#endif
