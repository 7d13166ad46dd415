// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BENCH_MICRO_WORKLOAD_HPP
#define IDLEWHEEL_BENCH_MICRO_WORKLOAD_HPP

// The one workload every contender runs (ratas' test_benchmark.cc shape: connection-like
// timers, the same knobs for everyone). bench/netty/NettyTimerBench.java repeats these
// constants and the splitmix64 sequence exactly, so the Java harness arms the same delays.
//
//  - Background: N armed timeouts, one per connection, each an idle timeout of the same 30 s
//    armed at a different moment of the last 15 s, so their deadlines are spread over
//    [now + 15 s, now + 30 s] (delay i drawn from splitmix64, whole milliseconds because that
//    is libuv's unit). Nothing comes due while a case runs (a cached background is rebuilt
//    after 10 s, see harness.hpp). libevent's common-timeout mode can only hold timeouts of
//    one duration: there every background timeout is the common 30 s.
//  - schedule+cancel: arm one more 30 s timeout, cancel it (most timeouts never fire).
//  - touch: activity on connection c, c walking all N in a scattered order (a stride
//    coprime to N, so every connection is hit once per N touches and caches do not help).
//  - Loop turns: contenders whose touch or cancel leaves work for the event loop (asio's
//    aborted handler, idlewheel's once-per-tick epoch wake-up) run their loop once every
//    ops_per_turn(N) operations, and that turn is part of the measured time.

#include "bench/splitmix64.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>

namespace bench {

using namespace std::chrono_literals;

inline constexpr std::chrono::milliseconds op_delay = 30s;        // what every op arms
inline constexpr std::chrono::milliseconds background_min = 15s;  // background deadlines ...
inline constexpr std::chrono::milliseconds background_max = 30s;  // ... spread over this range
inline constexpr std::chrono::milliseconds far_delay = 1h;        // idle test: nothing due
inline constexpr std::chrono::milliseconds wheel_tick = 10ms;     // idlewheel's and Netty's tick
inline constexpr std::uint64_t seed = 0x1d1e'b0a7'5eed'0001ULL;

// The delays of the background timeouts, in order: uniform in [15 s, 30 s], whole ms.
class background_delays {
public:
    std::chrono::milliseconds next() noexcept {
        const auto span = static_cast<std::uint64_t>((background_max - background_min).count()) + 1;
        return background_min + std::chrono::milliseconds(static_cast<std::int64_t>(rng_.next() % span));
    }

private:
    program_support::splitmix64 rng_{seed};  // bench/splitmix64.hpp: trivially the same sequence in Java
};

// Visits 0..n-1, each once per n steps, in a scattered order.
class scattered_order {
public:
    explicit scattered_order(std::size_t n) noexcept : n_(n), stride_(stride_for(n)) {}
    std::size_t next() noexcept {
        const std::size_t c = at_;
        at_ += stride_;
        if (at_ >= n_) at_ -= n_;
        return c;
    }

private:
    static std::size_t stride_for(std::size_t n) noexcept {
        if (n < 2) return 0;
        std::size_t s = static_cast<std::size_t>(2654435761ULL % n);  // Knuth's multiplicative constant
        if (s == 0) s = 1;
        while (std::gcd(s, n) != 1) ++s;
        return s;
    }

    std::size_t n_;
    std::size_t stride_;
    std::size_t at_ = 0;
};

// Operations per event-loop turn (and, for idlewheel's touch, per 10 ms tick). A server with
// N connections each sending about one message every 10 s gets N / 1000 messages per tick;
// never fewer than 256, so a turn's fixed cost is not the whole story at small N.
inline std::size_t ops_per_turn(std::size_t n) noexcept { return std::max<std::size_t>(256, n / 1000); }

// The sizes every table is made of (--sizes= narrows them for smoke runs).
inline constexpr std::size_t default_sizes[] = {1'000, 10'000, 100'000, 1'000'000};

}  // namespace bench

#endif
