// splitmix64 (Steele, Lea, Flood): a tiny, well-spread, reproducible sequence for the
// programs' workloads (bench/netty/NettyTimerBench.java repeats it bit for bit).
#ifndef IDLEWHEEL_TOOLS_SPLITMIX64_HPP
#define IDLEWHEEL_TOOLS_SPLITMIX64_HPP

#include <cstdint>

namespace tools {

class splitmix64 {
public:
    explicit constexpr splitmix64(std::uint64_t seed) noexcept : state_(seed) {}

    constexpr std::uint64_t next() noexcept { return mix(state_ += golden_gamma); }

    /// The output for one state: splitmix64{s}.next() == mix(s + golden_gamma).
    static constexpr std::uint64_t mix(std::uint64_t z) noexcept {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    static constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;

private:
    std::uint64_t state_;
};

}  // namespace tools

#endif
