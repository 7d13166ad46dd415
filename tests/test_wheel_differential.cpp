// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/core/wheel.hpp>

// detail::wheel against a reference model (support/wheel_model.hpp) over millions of random
// operations, compared after every one. The unit suite (test_wheel.cpp) pins the cases we
// thought of; this one finds the interleavings nobody thought of.
//
// Seeds are fixed so that CI is reproducible. IDLEWHEEL_SEED=<number> adds a run with that
// seed (to replay a failure), IDLEWHEEL_SEED=random adds one with a fresh seed (printed on
// failure), and IDLEWHEEL_STEPS=<number> changes the steps per seed (for a long soak).

#include "support/wheel_model.hpp"

#define BOOST_TEST_MODULE wheel_differential
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

namespace {

namespace utf = boost::unit_test;
namespace data = boost::unit_test::data;
using idlewheel::test::operation;
using idlewheel::test::operation_generator;
using idlewheel::test::tick_type;
using idlewheel::test::wheel_differential;

// Enough nodes that every level holds some at once and a big jump hands out thousands.
constexpr std::size_t default_pool = 4096;
constexpr std::uint64_t default_steps = 3'000'000;
// check_everything() is O(pool): often enough to catch a stray node, rarely enough to be cheap.
constexpr std::uint64_t deep_check_every = 4096;

struct run_profile {
    std::uint64_t seed;
    std::size_t pool;
    bool removals;
};

std::ostream& operator<<(std::ostream& os, const run_profile& p) {
    return os << "seed " << p.seed << ", pool " << p.pool << (p.removals ? "" : ", no removals");
}

// A small pool keeps the wheel nearly empty, so the "wheel became empty, hints are exact
// again" path and single-node cascades get most of the traffic. Without removals, every
// next_due() must equal the earliest deadline exactly, through every cascade.
constexpr std::array<run_profile, 7> fixed_profiles{{
    {1, default_pool, true},
    {2, default_pool, true},
    {0x5eed, default_pool, true},
    {20260101, default_pool, true},
    {0xdeadbeef, default_pool, true},
    {7, 64, true},
    {11, default_pool, false},
}};

std::optional<std::uint64_t> number_from_environment(const char* name) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return std::nullopt;
    char* end = nullptr;
    const std::uint64_t value = std::strtoull(text, &end, 0);
    if (*end != '\0') return std::nullopt;
    return value;
}

std::uint64_t steps_per_run() { return number_from_environment("IDLEWHEEL_STEPS").value_or(default_steps); }

// The start tick comes from the seed, so that a seed alone replays a run.
tick_type start_tick(std::mt19937_64& random) {
    switch (random() % 4) {
        case 0: return 0;
        case 1: return 12345;
        case 2: return idlewheel::test::max_tick - (tick_type{1} << 20);
        default: return random();
    }
}

std::string replay_hint(const run_profile& profile) {
    std::ostringstream os;
    if (profile.pool == default_pool && profile.removals)
        os << "replay with IDLEWHEEL_SEED=" << profile.seed;
    else
        os << "deterministic: rerun this test case to replay";
    return os.str();
}

void run(const run_profile& profile) {
    std::mt19937_64 random(profile.seed);
    const tick_type start = start_tick(random);
    wheel_differential differential(profile.pool, start);
    operation_generator generator(profile.removals);
    // The operations just before a failure, for the report.
    std::array<operation, 12> history{};
    const std::uint64_t steps = steps_per_run();

    for (std::uint64_t step = 0; step < steps; ++step) {
        const operation op = generator.next(differential, [&random] { return random(); });
        history[step % history.size()] = op;
        std::string error = differential.apply(op);
        if (error.empty() && (step + 1) % deep_check_every == 0) error = differential.check_everything();
        if (!error.empty()) {
            std::ostringstream recent;
            for (std::uint64_t h = step + 1 > history.size() ? step + 1 - history.size() : 0; h <= step; ++h)
                recent << "\n  step " << h << ": " << idlewheel::test::describe(history[h % history.size()]);
            BOOST_TEST_CONTEXT(profile << ", start tick " << start << ", step " << step << " ("
                                       << idlewheel::test::describe(op) << "); " << replay_hint(profile)
                                       << "; last operations:" << recent.str()) {
                BOOST_FAIL(error);
            }
        }
    }
    if (const std::string error = differential.check_everything(); !error.empty())
        BOOST_ERROR(profile << ", final check: " << error);

    const auto& s = differential.stats();
    BOOST_TEST_MESSAGE(profile << ", start " << start << ": " << s.operations << " operations, " << s.schedules
                               << " schedules (" << s.reschedules << " reschedules), " << s.cancels << " cancels, "
                               << s.destroys << " destroys, " << s.advances << " advances, " << s.handed_out
                               << " handed out, " << s.take_alls << " take_all, " << s.rebuilds << " rebuilds, "
                               << s.exact_hint_checks << " exact next_due checks, size mean "
                               << s.size_sum / (s.operations == 0 ? 1 : s.operations) << " max " << s.max_size);
    // Guards the generator: a run that never fills the wheel or never hands anything out
    // would pass while testing nothing. (Short runs, IDLEWHEEL_STEPS=1000, are not judged.)
    if (steps >= 100'000) {
        BOOST_TEST(s.handed_out > steps / 5);
        BOOST_TEST(s.max_size > profile.pool / 8);
        if (profile.removals)
            BOOST_TEST(s.cancels + s.destroys + s.reschedules > steps / 50);
        else
            BOOST_TEST(s.exact_hint_checks > steps / 2);
    }
}

// Drawn once, so that the precondition and the test case see the same "random" seed.
std::optional<std::uint64_t> seed_from_environment() {
    static const std::optional<std::uint64_t> seed = []() -> std::optional<std::uint64_t> {
        const char* text = std::getenv("IDLEWHEEL_SEED");
        if (text == nullptr || *text == '\0') return std::nullopt;
        if (std::string(text) == "random") {
            std::random_device device;
            return (std::uint64_t{device()} << 32) | device();
        }
        return number_from_environment("IDLEWHEEL_SEED");
    }();
    return seed;
}

boost::test_tools::assertion_result environment_has_seed(utf::test_unit_id) {
    const char* text = std::getenv("IDLEWHEEL_SEED");
    boost::test_tools::assertion_result result(text != nullptr && *text != '\0');
    result.message() << "IDLEWHEEL_SEED is not set (a number, or \"random\")";
    return result;
}

}  // namespace

BOOST_DATA_TEST_CASE(matches_reference_model, data::make(fixed_profiles), profile) { run(profile); }

BOOST_AUTO_TEST_CASE(matches_reference_model_with_seed_from_environment, *utf::precondition(environment_has_seed)) {
    const auto seed = seed_from_environment();
    if (!seed) BOOST_FAIL("IDLEWHEEL_SEED must be a number (decimal, 0x hex) or \"random\"");
    const run_profile profile{*seed, default_pool, true};
    BOOST_TEST_MESSAGE("IDLEWHEEL_SEED run: " << profile);
    run(profile);
}
