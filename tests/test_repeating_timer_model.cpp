// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/repeating_timer.hpp>

// basic_repeating_timer against a reference model (a source file of the executable
// test_repeating_timer, whose first file is test_repeating_timer.cpp).

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/repeating_scene.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace idlewheel::test::repeating;  // support/repeating_scene.hpp

}  // namespace

// ---------------------------------------------------------------------------------------------
// The model: random operation sequences (seeded) against a reference of when each round must
// run. The reference knows nothing of wheels: a round due at D runs at the first poll at or
// after the tick boundary at or after D; a posted run runs at the next poll; fixed-rate
// deadlines are sums; the adjust hook is a pure function of how often it was called.
BOOST_AUTO_TEST_SUITE(model)

namespace {

std::uint64_t mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::int64_t ceil_to_tick_ns(std::int64_t ns) {
    const std::int64_t t = tick_ms * ms_ns;
    return (ns + t - 1) / t * t;
}

struct reference {
    bool exists = false;
    bool running = false;
    bool posted = false;
    repeat_mode mode = repeat_mode::fixed_delay;
    bool jitter = false;
    std::int64_t period = 0;    // ns
    std::int64_t deadline = 0;  // ns since t0, while running && !posted
    std::uint64_t adjust_calls = 0;
    std::uint64_t runs = 0;
    std::uint64_t missed_total = 0;
    std::uint64_t generation = 0;  // changed by every operation that decides the next round

    std::int64_t delay() {
        if (!jitter) return period;
        const std::uint64_t k = adjust_calls++;
        return period + static_cast<std::int64_t>(mix(k) % static_cast<std::uint64_t>(period / 2 + 1));
    }
    [[nodiscard]] bool due_at(std::int64_t now) const {
        return running && (posted || now >= ceil_to_tick_ns(deadline));
    }
    void start_fresh(std::int64_t now) {
        ++generation;
        posted = false;
        running = true;
        deadline = now + delay();
    }
    void start(std::int64_t now) {
        if (!running) start_fresh(now);
    }
    bool stop() {
        ++generation;
        posted = false;
        return std::exchange(running, false);
    }
    void reset(std::int64_t p, std::int64_t now) {
        period = p;
        if (running) start_fresh(now);
    }
    bool run_once_now() {
        if (!running) return false;
        if (!posted) {
            posted = true;
            ++generation;
        }
        return true;
    }
    // A run at `now`: returns the missed() the callback must see.
    std::uint64_t begin_run(std::int64_t now) {
        const std::int64_t due = posted ? now : deadline;
        posted = false;
        std::uint64_t missed = 0;
        if (mode == repeat_mode::fixed_rate) {
            const std::int64_t d = delay();
            std::int64_t base = due;
            if (now > due) {
                missed = static_cast<std::uint64_t>((now - due) / d);
                base = due + d * static_cast<std::int64_t>(missed);
            }
            deadline = base + d;
        }
        ++runs;
        missed_total += missed;
        return missed;
    }
    void end_run(std::uint64_t generation_at_start, std::int64_t now) {
        if (exists && mode == repeat_mode::fixed_delay && running && generation == generation_at_start)
            deadline = now + delay();
    }
};

std::string describe(const reference& m) {
    std::ostringstream o;
    o << "running " << m.running << " posted " << m.posted << " mode " << static_cast<int>(m.mode) << " period "
      << m.period << " deadline " << m.deadline << " runs " << m.runs;
    return o.str();
}

// The real timer and the reference side by side.
struct harness {
    harness(std::uint64_t seed, const idlewheel::wheel_options& options) : rng(seed), s(options) {}

    std::chrono::nanoseconds adjust(std::chrono::nanoseconds period) noexcept {
        const std::uint64_t k = adjust_calls++;
        return period + std::chrono::nanoseconds(mix(k) % static_cast<std::uint64_t>(period.count() / 2 + 1));
    }

    std::int64_t random_period() {
        switch (rng() % 4) {
            case 0: return static_cast<std::int64_t>(1 + rng() % 9) * ms_ns;              // under a tick
            case 1: return static_cast<std::int64_t>(1 + rng() % 10) * tick_ms * ms_ns;  // whole ticks
            case 2: return static_cast<std::int64_t>(1 + rng() % 200) * ms_ns + static_cast<std::int64_t>(rng() % ms_ns);
            default: return static_cast<std::int64_t>(1 + rng() % 50'000'000);           // any ns up to 50 ms
        }
    }

    void create() {
        m = reference{};
        m.exists = true;
        m.mode = rng() % 2 == 0 ? repeat_mode::fixed_delay : repeat_mode::fixed_rate;
        m.jitter = rng() % 2 == 0;
        m.period = random_period();
        adjust_calls = 0;
        idlewheel::repeat_options o{.mode = m.mode};
        if (m.jitter) o.adjust = idlewheel::bind_member<&harness::adjust>(this);
        timer.emplace(s.wheel, idlewheel::bind_member<&harness::fire>(this), std::chrono::nanoseconds(m.period), o);
    }

    void fire() {
        const std::int64_t now = s.now_ns();
        BOOST_TEST_REQUIRE(m.due_at(now), "a run the reference did not expect at " << now << ": " << describe(m));
        const bool was_posted = m.posted;
        const std::int64_t due = m.deadline;
        if (!was_posted) {
            // Never early; at most one tick late, plus the time the io_context was not
            // polled (one step of the clock, and callbacks that took time).
            BOOST_TEST_REQUIRE(now >= due);
            BOOST_TEST_REQUIRE(now - due < tick_ms * ms_ns + jump_ns);
            if (jump_ns <= ms_ns) ++on_time_runs;
        }
        const std::uint64_t missed = m.begin_run(now);
        BOOST_TEST_REQUIRE(timer->missed() == missed);
        BOOST_TEST_REQUIRE(timer->runs() == m.runs);
        BOOST_TEST_REQUIRE(timer->running());
        const std::uint64_t generation = m.generation;
        ++runs_seen;
        // What the callback does.
        const auto action = rng() % 40;
        if (action == 0) {
            m.exists = false;
            m.running = false;
            timer.reset();
            return;
        }
        bool throw_after = false;
        switch (action) {
            case 1: BOOST_TEST_REQUIRE(timer->stop() == m.stop()); break;
            case 2: m.start_fresh(s.now_ns()); timer->restart(); break;
            case 3: {
                const auto p = random_period();
                m.reset(p, s.now_ns());
                timer->reset(std::chrono::nanoseconds(p));
                break;
            }
            case 4: BOOST_TEST_REQUIRE(timer->run_once_now() == m.run_once_now()); break;
            case 5: throw_after = true; break;
            case 6: {
                BOOST_TEST_REQUIRE(timer->stop() == m.stop());
                m.start(s.now_ns());
                timer->start();
                break;
            }
            case 7: case 8: {
                const auto work = std::chrono::nanoseconds(static_cast<std::int64_t>(rng() % (30 * ms_ns)));
                manual_clock::advance(work);  // a slow callback
                jump_ns += work.count();
                break;
            }
            case 9: m.start(s.now_ns()); timer->start(); break;  // running: nothing
            default: break;
        }
        m.end_run(generation, s.now_ns());
        if (throw_after) {
            ++thrown_expected;
            throw std::runtime_error("model");
        }
    }

    void check_state() {
        BOOST_TEST_REQUIRE(timer.has_value() == m.exists);
        if (!m.exists) return;
        BOOST_TEST_REQUIRE(timer->running() == m.running, describe(m));
        BOOST_TEST_REQUIRE(timer->runs() == m.runs);
        BOOST_TEST_REQUIRE(timer->missed_total() == m.missed_total);
        if (m.jitter) BOOST_TEST_REQUIRE(adjust_calls == m.adjust_calls, "the adjust hook was not called once per round");
        BOOST_TEST_REQUIRE(s.wheel.pending() == (m.running ? 1U : 0U));
    }

    void settle() {
        thrown_seen += s.settle();
        // Nothing the reference expects at this time is left undone.
        BOOST_TEST_REQUIRE(!m.due_at(s.now_ns()), "a run the reference expected did not happen: " << describe(m)
                                                                                                    << " now " << s.now_ns());
        check_state();
    }

    void step() {
        const auto op = rng() % 100;
        const std::int64_t now = s.now_ns();
        jump_ns = 0;
        if (!m.exists) {
            create();
        } else if (op < 70) {
            jump_ns = ms_ns;
            manual_clock::advance(1ms);
        } else if (op < 75) {
            jump_ns = static_cast<std::int64_t>(1 + rng() % (50 * ms_ns));  // a busy io_context
            manual_clock::advance(std::chrono::nanoseconds(jump_ns));
        } else if (op < 80) {
            m.start(now);
            timer->start();
        } else if (op < 83) {
            BOOST_TEST_REQUIRE(timer->stop() == m.stop());
        } else if (op < 86) {
            m.start_fresh(now);
            timer->restart();
        } else if (op < 90) {
            const auto p = random_period();
            m.reset(p, now);
            timer->reset(std::chrono::nanoseconds(p));
        } else if (op < 92) {
            m.reset(m.period, now);
            timer->reset();
        } else if (op < 98) {
            BOOST_TEST_REQUIRE(timer->run_once_now() == m.run_once_now());
        } else {
            m = reference{};
            timer.reset();
        }
        settle();
    }

    std::mt19937_64 rng;
    scene s;
    reference m;
    std::optional<timer_type> timer;
    std::uint64_t adjust_calls = 0;
    std::int64_t jump_ns = 0;  // how far the clock moved since the step began
    std::uint64_t on_time_runs = 0;
    std::size_t thrown_expected = 0;
    std::size_t thrown_seen = 0;
    std::uint64_t runs_seen = 0;
};

}  // namespace

BOOST_AUTO_TEST_CASE(random_operation_sequences_against_the_reference) {
    std::uint64_t runs = 0;
    for (std::uint64_t seed = 1; seed <= 24; ++seed) {
        BOOST_TEST_CONTEXT("seed " << seed) {
            // Half the seeds on a clock_read::per_tick wheel: rounds are exact there too.
            harness h(seed, {.clock = seed % 2 == 0 ? idlewheel::clock_read::per_tick : idlewheel::clock_read::per_schedule});
            for (int i = 0; i < 10'000; ++i) h.step();
            BOOST_TEST(h.thrown_seen == h.thrown_expected);
            BOOST_TEST(h.on_time_runs > 0U);
            runs += h.runs_seen;
        }
    }
    BOOST_TEST(runs > 10'000U);  // the sequences do exercise the rounds
}

BOOST_AUTO_TEST_SUITE_END()
