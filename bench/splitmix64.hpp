// splitmix64 (Steele, Lea, Flood): a tiny, well-spread, reproducible sequence for the
// programs' workloads (bench/netty/NettyTimerBench.java repeats it bit for bit), on the
// library's own (idlewheel/detail/jitter.hpp): the benchmarks' generator is the one the wheel's
// jitter uses. Bench support, like tests/, may include the library's detail/ headers; the
// demo server, the examples and program_support use the public API only (tests/public_api_only.py).
#ifndef IDLEWHEEL_BENCH_SPLITMIX64_HPP
#define IDLEWHEEL_BENCH_SPLITMIX64_HPP

#include <idlewheel/detail/jitter.hpp>

#include <cstdint>

namespace program_support {

class splitmix64 {
public:
    explicit constexpr splitmix64(std::uint64_t seed) noexcept : state_(seed) {}

    constexpr std::uint64_t next() noexcept { return idlewheel::detail::splitmix64(state_); }

    /// The output for one state: splitmix64{s}.next() == mix(s + golden_gamma).
    static constexpr std::uint64_t mix(std::uint64_t z) noexcept { return idlewheel::detail::splitmix64_mix(z); }

    static constexpr std::uint64_t golden_gamma = idlewheel::detail::splitmix64_gamma;

private:
    std::uint64_t state_;
};

}  // namespace program_support

#endif
