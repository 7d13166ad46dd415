// splitmix64 (Steele, Lea, Flood): a tiny, well-spread, reproducible sequence for the
// programs' workloads (bench/netty/NettyTimerBench.java repeats it bit for bit), on the
// library's own (idlewheel/detail/jitter.hpp).
#ifndef IDLEWHEEL_TOOLS_SPLITMIX64_HPP
#define IDLEWHEEL_TOOLS_SPLITMIX64_HPP

#include <idlewheel/detail/jitter.hpp>

#include <cstdint>

namespace tools {

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

}  // namespace tools

#endif
