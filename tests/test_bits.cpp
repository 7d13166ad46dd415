// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/core/bits.hpp>

// The wheel's bit operations (core/bits.hpp) against a plain loop that counts bit by bit:
// the compiler builtins the wheel uses, and the portable versions other compilers get, on
// every word with one bit set, every word with its lowest or highest k bits set, and random
// words.

#define BOOST_TEST_MODULE detail_bits
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <random>

namespace {

using idlewheel::detail::countl_zero_nonzero;
using idlewheel::detail::countr_zero_nonzero;
using idlewheel::detail::portable_countl_zero;
using idlewheel::detail::portable_countr_zero;
using idlewheel::detail::rotate_right;

unsigned loop_countl_zero(std::uint64_t x) {
    unsigned n = 0;
    for (std::uint64_t bit = std::uint64_t{1} << 63; (x & bit) == 0; bit >>= 1) ++n;
    return n;
}

unsigned loop_countr_zero(std::uint64_t x) {
    unsigned n = 0;
    for (std::uint64_t bit = 1; (x & bit) == 0; bit <<= 1) ++n;
    return n;
}

std::uint64_t loop_rotate_right(std::uint64_t x, unsigned n) {
    for (unsigned i = 0; i < n; ++i) x = (x >> 1) | ((x & 1U) << 63);
    return x;
}

void check_word(std::uint64_t x) {
    BOOST_TEST_CONTEXT("word " << x) {
        BOOST_TEST(countl_zero_nonzero(x) == loop_countl_zero(x));
        BOOST_TEST(portable_countl_zero(x) == loop_countl_zero(x));
        BOOST_TEST(countr_zero_nonzero(x) == loop_countr_zero(x));
        BOOST_TEST(portable_countr_zero(x) == loop_countr_zero(x));
        for (unsigned n = 0; n < 64; ++n) BOOST_TEST(rotate_right(x, n) == loop_rotate_right(x, n));
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(single_bits_and_runs) {
    for (unsigned k = 0; k < 64; ++k) {
        check_word(std::uint64_t{1} << k);
        const std::uint64_t low = k == 63 ? ~std::uint64_t{0} : (std::uint64_t{1} << (k + 1)) - 1;  // bits 0..k
        check_word(low);
        check_word(~std::uint64_t{0} << k);  // bits k..63
    }
}

BOOST_AUTO_TEST_CASE(random_words) {
    std::mt19937_64 random(20261125);
    for (int i = 0; i < 2000; ++i) {
        std::uint64_t x = random();
        x >>= random() % 64;  // every length of word
        if (x != 0) check_word(x);
    }
}

// Usable where the wheel needs them at compile time (constexpr in C++17).
static_assert(idlewheel::detail::portable_countl_zero(1) == 63);
static_assert(idlewheel::detail::portable_countr_zero(std::uint64_t{1} << 63) == 63);
static_assert(rotate_right(1, 1) == std::uint64_t{1} << 63);
static_assert(rotate_right(0x8000000000000001, 0) == 0x8000000000000001);
