// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_BITS_HPP
#define IDLEWHEEL_CORE_BITS_HPP

// The three bit operations the wheel needs (core/wheel.hpp), in C++17: <bit>'s
// std::countl_zero / countr_zero / rotr are C++20.
//
// GCC and clang get their builtins (one lzcnt/bsr, tzcnt/bsf instruction). The builtins are
// undefined for 0, and so are these: the wheel only ever asks about a word with a bit set,
// which also spares the zero test std::countl_zero makes. Other compilers get the portable
// versions below (a binary search: six steps, no table), which the tests compare with the
// builtins on every single-bit word and on random ones.

#include <cassert>
#include <cstdint>

namespace idlewheel::detail {

// Leading zero bits of x != 0 (0 to 63), portable.
constexpr unsigned portable_countl_zero(std::uint64_t x) noexcept {
    unsigned n = 0;
    for (unsigned width = 32; width != 0; width /= 2) {
        if ((x >> (64U - width)) == 0) {
            n += width;
            x <<= width;
        }
    }
    return n;
}

// Trailing zero bits of x != 0 (0 to 63), portable.
constexpr unsigned portable_countr_zero(std::uint64_t x) noexcept {
    unsigned n = 0;
    for (unsigned width = 32; width != 0; width /= 2) {
        if ((x & ((std::uint64_t{1} << width) - 1)) == 0) {
            n += width;
            x >>= width;
        }
    }
    return n;
}

// Leading zero bits of x; x must not be 0.
inline unsigned countl_zero_nonzero(std::uint64_t x) noexcept {
    assert(x != 0);
#if defined(__GNUC__) || defined(__clang__)
    static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
    return static_cast<unsigned>(__builtin_clzll(x));
#else
    return portable_countl_zero(x);
#endif
}

// Trailing zero bits of x; x must not be 0.
inline unsigned countr_zero_nonzero(std::uint64_t x) noexcept {
    assert(x != 0);
#if defined(__GNUC__) || defined(__clang__)
    return static_cast<unsigned>(__builtin_ctzll(x));
#else
    return portable_countr_zero(x);
#endif
}

// x rotated right by n bits (n < 64): the form GCC and clang compile to one ror instruction.
constexpr std::uint64_t rotate_right(std::uint64_t x, unsigned n) noexcept {
    return (x >> (n & 63U)) | (x << ((64U - n) & 63U));
}

}  // namespace idlewheel::detail

#endif
