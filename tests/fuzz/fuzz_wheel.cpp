// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/core/wheel.hpp>

// libFuzzer target: detail::wheel against the reference model, driven by the input bytes.
//
// The operations and the model are the differential test's (support/wheel_model.hpp): the
// input only replaces its seeded random stream. Each 64-bit draw of operation_generator is 8
// raw input bytes, so the fuzzer steers every choice the generator makes (which operation,
// which node, which level boundary to land on, how far to jump) and the generator keeps its
// bias towards the ticks where a hierarchical wheel goes wrong. The input ends the run.
//
// Input format: wheel_input.hpp.
//
// Any difference, or an assertion of the wheel, aborts with the operations that led to it.
// IDLEWHEEL_FUZZ_TRACE=1 prints every operation (to replay one input by hand).

#include "fuzz_input.hpp"
#include "support/wheel_model.hpp"
#include "wheel_input.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using idlewheel::fuzz::fuzz_input;
using idlewheel::test::operation;
using idlewheel::test::operation_generator;
using idlewheel::test::tick_type;
using idlewheel::test::wheel_differential;

using idlewheel::fuzz::wheel_config;

// check_everything() is O(pool): every 64 operations finds a stray node within a short input.
constexpr std::uint64_t deep_check_every = 64;

bool trace_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("IDLEWHEEL_FUZZ_TRACE");
        return v != nullptr && *v != '\0' && *v != '0';
    }();
    return enabled;
}

class history {
public:
    void add(const operation& op) noexcept { ops_[count_++ % ops_.size()] = op; }

    void print(std::FILE* out) const {
        const std::uint64_t first = count_ > ops_.size() ? count_ - ops_.size() : 0;
        for (std::uint64_t i = first; i < count_; ++i)
            std::fprintf(out, "  op %llu: %s\n", static_cast<unsigned long long>(i),
                         idlewheel::test::describe(ops_[i % ops_.size()]).c_str());
    }

private:
    std::array<operation, 16> ops_{};
    std::uint64_t count_ = 0;
};

[[noreturn]] void fail(const wheel_config& c, const history& h, const std::string& error) {
    std::fprintf(stderr, "\nfuzz_wheel: the wheel and the reference model disagree\n  %s\n", error.c_str());
    std::fprintf(stderr, "pool %zu, start tick %llu, removals %s; last operations (the last one failed):\n", c.pool,
                 static_cast<unsigned long long>(c.start), c.removals ? "on" : "off");
    h.print(stderr);
    std::fflush(stderr);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    const wheel_config config = idlewheel::fuzz::read_wheel_config(in);
    wheel_differential differential(config.pool, config.start);
    operation_generator generator(config.removals);
    history recent;
    const auto draw = [&in] { return in.u64(); };
    if (trace_enabled())
        std::fprintf(stderr, "pool %zu, start %llu, removals %d\n", config.pool,
                     static_cast<unsigned long long>(config.start), config.removals ? 1 : 0);

    for (std::uint64_t step = 0; !in.exhausted(); ++step) {
        const operation op = generator.next(differential, draw);
        recent.add(op);
        if (trace_enabled())
            std::fprintf(stderr, "op %llu: %s\n", static_cast<unsigned long long>(step),
                         idlewheel::test::describe(op).c_str());
        std::string error = differential.apply(op);
        if (error.empty() && (step + 1) % deep_check_every == 0) error = differential.check_everything();
        if (!error.empty()) fail(config, recent, error);
    }
    if (std::string error = differential.check_everything(); !error.empty())
        fail(config, recent, "final check: " + error);
    return 0;
}
