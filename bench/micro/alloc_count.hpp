// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BENCH_MICRO_ALLOC_COUNT_HPP
#define IDLEWHEEL_BENCH_MICRO_ALLOC_COUNT_HPP

// Memory per armed timeout, measured the same way for every C and C++ contender, over a
// window that creates the N per-connection objects and arms them (the loop, base or wheel
// itself is created before the window and reported apart as its fixed cost):
//  - footprint: glibc's mallinfo2() in-use bytes (uordblks + hblkhd) after minus before:
//    everything malloc holds, its per-chunk header and rounding included;
//  - counted: this binary replaces malloc & co. (forwarding to glibc's own), so it sees every
//    allocation, whoever makes it: C++ new, Asio's aligned_alloc'ed wait operations, libevent
//    and libuv. It counts blocks and usable bytes still allocated at the end of the window.
// Under a sanitizer (which owns malloc) the replacement is compiled out and counted reads 0;
// only smoke runs use such builds.

#include <cstddef>
#include <cstdint>

namespace bench::alloc_count {

struct snapshot {
    std::int64_t footprint = 0;  ///< mallinfo2 uordblks + hblkhd
    std::int64_t usable = 0;     ///< counted: usable bytes of blocks allocated and not freed
    std::int64_t blocks = 0;     ///< counted: blocks allocated and not freed
};

/// True when malloc is replaced (not under a sanitizer).
bool counting_available() noexcept;

/// Starts a window and returns its baseline; stop() returns what the window kept.
snapshot start() noexcept;
snapshot stop(const snapshot& baseline) noexcept;

}  // namespace bench::alloc_count

#endif
