// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BENCH_MICRO_SHIFTED_CLOCK_HPP
#define IDLEWHEEL_BENCH_MICRO_SHIFTED_CLOCK_HPP

#include <chrono>

namespace bench {

// steady_clock plus an offset that only grows: a background is built on it in fast-forward
// (as if its sessions had been open for a while), then it runs in real time.
struct shifted_clock {
    using duration = std::chrono::steady_clock::duration;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<shifted_clock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept {
        return time_point(std::chrono::steady_clock::now().time_since_epoch() + offset());
    }
    static void jump(duration d) noexcept { offset() += d; }

private:
    static duration& offset() noexcept {
        static duration d{};
        return d;
    }
};

}  // namespace bench

#endif
