// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_DURATION_MATH_HPP
#define IDLEWHEEL_CORE_DURATION_MATH_HPP

// The arithmetic behind "never early, never overflowed": a user's delay of any chrono type
// becomes the clock's duration rounded up and saturated; ticks are counted with one ceiling
// division. Nothing here goes through std::chrono's common_type, whose conversions overflow
// silently for periods that are not a whole number of the target's (duration<int64_t,
// ratio<1, 3>> of 5e9 s, say).

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ratio>
#include <type_traits>

namespace idlewheel::detail {

// ceil(a / b) for b > 0.
[[nodiscard]] constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept {
    return a / b + (a % b != 0 ? 1U : 0U);
}

// A user's delay as the duration To (signed rep), rounded up (a timeout must never be early)
// and saturated instead of overflowed: zero or negative is 0, too large for To (or infinite,
// or NaN: a delay that is not a number never comes due) is To::max().
template <class To, class Rep, class Period>
[[nodiscard]] constexpr To saturating_ceil(std::chrono::duration<Rep, Period> d) noexcept {
    using to_rep = typename To::rep;
    static_assert(std::is_signed_v<to_rep>, "idlewheel: the clock's duration must have a signed rep");
    // How many To units one unit of Period is: num / den, reduced.
    using ratio = std::ratio_divide<Period, typename To::period>;
    constexpr auto max = std::numeric_limits<to_rep>::max();
    if constexpr (std::is_floating_point_v<Rep>) {
        const Rep v = d.count();
        if (std::isnan(v)) return To::max();
        if (!(v > 0)) return To::zero();
        if (std::isinf(v)) return To::max();
#if defined(__SIZEOF_INT128__)
        if constexpr (std::numeric_limits<Rep>::digits <= 64 && std::numeric_limits<Rep>::radix == 2) {
            // Exactly: v = m * 2^e with an integer m, so that a value a hair above a whole
            // number of units is never rounded down onto it (long double arithmetic can).
            __extension__ typedef unsigned __int128 wide;  // __extension__: no -Wpedantic warning
            constexpr int digits = std::numeric_limits<Rep>::digits;
            int exp = 0;
            const Rep frac = std::frexp(v, &exp);                                 // v = frac * 2^exp, frac in [0.5, 1)
            const auto m = static_cast<std::uint64_t>(std::ldexp(frac, digits));  // exact
            const int e = exp - digits;                                           // v = m * 2^e
            const wide num = static_cast<wide>(m) * static_cast<wide>(ratio::num);  // < 2^127
            const wide den = static_cast<wide>(ratio::den);
            wide units = 0;
            if (e >= 0) {
                if (e >= 64 || num > (~wide{0} >> 1 >> e)) return To::max();
                const wide scaled = num << e;
                units = scaled / den + (scaled % den != 0 ? 1U : 0U);
            } else {
                const int k = -e;
                // den * 2^k; once it passes num, v is less than one unit: that is one unit.
                if (k >= 127 || den > (~wide{0} >> 1 >> k)) return To(1);
                const wide div = den << k;
                units = num / div + (num % div != 0 ? 1U : 0U);
            }
            if (units >= static_cast<wide>(max)) return To::max();
            return To(static_cast<to_rep>(units));
        } else
#endif
        {
            const long double units = std::ceil(static_cast<long double>(v) * static_cast<long double>(ratio::num) /
                                                static_cast<long double>(ratio::den));
            if (!(units < static_cast<long double>(max))) return To::max();
            return To(static_cast<to_rep>(units));
        }
    } else {
        static_assert(std::is_integral_v<Rep>, "idlewheel: a delay's rep must be an integer or floating-point type");
        if (!(d.count() > 0)) return To::zero();
#if defined(__SIZEOF_INT128__)
        if constexpr (sizeof(Rep) <= 8 && sizeof(to_rep) <= 8) {
            // count * num fits: both below 2^64, ratio::num below 2^63.
            __extension__ typedef unsigned __int128 wide;  // __extension__: no -Wpedantic warning
            const wide product =
                static_cast<wide>(static_cast<std::uint64_t>(d.count())) * static_cast<wide>(ratio::num);
            const wide den = static_cast<wide>(ratio::den);
            const wide units = product / den + (product % den != 0 ? 1U : 0U);
            if (units >= static_cast<wide>(max)) return To::max();
            return To(static_cast<to_rep>(units));
        } else
#endif
        {
            // No 128-bit integer (or an unusually wide rep): long double has at least 64
            // mantissa bits on the platforms that lack __int128 here; round up, then compare.
            const long double units =
                std::ceil(static_cast<long double>(d.count()) * static_cast<long double>(ratio::num) /
                          static_cast<long double>(ratio::den));
            if (!(units < static_cast<long double>(max))) return To::max();
            return To(static_cast<to_rep>(units));
        }
    }
}

// a + b for durations with b >= 0, saturating at Duration::max().
template <class Duration>
[[nodiscard]] constexpr Duration saturating_add(Duration a, Duration b) noexcept {
    return a > Duration::max() - b ? Duration::max() : a + b;
}

// How far `when` lies after `origin`, as an unsigned count of the clock's units: 0 if it is
// not after it. Exact for every pair of time points (no signed overflow at the limits).
template <class TimePoint>
[[nodiscard]] constexpr std::uint64_t units_after(TimePoint when, TimePoint origin) noexcept {
    const auto w = when.time_since_epoch().count();
    const auto o = origin.time_since_epoch().count();
    if (!(w > o)) return 0;
    return static_cast<std::uint64_t>(w) - static_cast<std::uint64_t>(o);  // modulo 2^64: exact
}

}  // namespace idlewheel::detail

#endif
