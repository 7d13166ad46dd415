// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// A few checks on the real std::chrono::steady_clock, the one thing manual_clock cannot show:
// that the wheel's arithmetic agrees with the Asio timer it sleeps on. They must never flake on
// a loaded 2-core machine, so "not early" is exact (it holds by construction) while "not late"
// only has to hold within a bound no scheduler delay reaches; io_context::run() returning at
// all is part of every check (nothing is left armed). About half a second in all.

#include "support/net.hpp"

#define BOOST_TEST_MODULE realtime
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr auto tick = 5ms;
constexpr auto late_bound = 500ms;  // far above any scheduling delay; only catches "forgotten"
constexpr auto run_bound = 5s;      // run_for() instead of run(): a bug fails instead of hanging

std::int64_t us(steady::duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); }

}  // namespace

BOOST_AUTO_TEST_CASE(a_timeout_is_not_early_and_not_forgotten) {
    net::io_context io;
    idlewheel::wheel_timer wheel(io, {.tick = tick});
    int calls = 0;
    steady::time_point fired;
    const auto start = steady::now();
    wheel.schedule(50ms, [&] {
        ++calls;
        fired = steady::now();
    });
    io.run_for(run_bound);
    BOOST_TEST(io.stopped());  // it ran out of work: nothing was left armed
    BOOST_TEST(calls == 1);
    BOOST_TEST(us(fired - start) >= us(50ms));
    BOOST_TEST(us(fired - start) < us(50ms + late_bound));
    BOOST_TEST(wheel.stats().wakeups == 1U);  // the Asio timer only completes once it is due
    BOOST_TEST(wheel.stats().worst_lateness < std::chrono::nanoseconds(late_bound));
}

BOOST_AUTO_TEST_CASE(a_thousand_random_timeouts_none_early) {
    net::io_context io;
    idlewheel::wheel_timer wheel(io, {.tick = tick});
    struct record {
        steady::duration delay{};
        steady::time_point start;
        steady::time_point fired;
        int calls = 0;
        idlewheel::error_code ec;
    };
    std::vector<record> r(1000);
    std::mt19937 random(20260121);  // fixed: a failure replays
    std::uniform_int_distribution<int> delay_us(0, 100'000);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i].delay = std::chrono::microseconds(delay_us(random));
        r[i].start = steady::now();
        // Every fourth one is an async_wait: same wheel, other completion path.
        if (i % 4 == 3) {
            wheel.async_wait(r[i].delay, [&r, i](idlewheel::error_code ec) {
                ++r[i].calls;
                r[i].ec = ec;
                r[i].fired = steady::now();
            });
        } else {
            wheel.schedule(r[i].delay, [&r, i] {
                ++r[i].calls;
                r[i].fired = steady::now();
            });
        }
    }
    io.run_for(run_bound);
    BOOST_TEST(io.stopped());

    std::size_t wrong_count = 0;
    std::size_t early = 0;
    std::size_t late = 0;
    std::size_t failed = 0;
    std::ostringstream first;
    for (std::size_t i = 0; i < r.size(); ++i) {
        const auto took = r[i].fired - r[i].start;
        const bool bad_count = r[i].calls != 1;
        const bool is_early = !bad_count && took < r[i].delay;
        const bool is_late = !bad_count && took >= r[i].delay + late_bound;
        wrong_count += bad_count ? 1U : 0U;
        early += is_early ? 1U : 0U;
        late += is_late ? 1U : 0U;
        failed += r[i].ec ? 1U : 0U;
        if ((bad_count || is_early || is_late || r[i].ec) && first.tellp() == 0)
            first << "#" << i << ": delay " << us(r[i].delay) << " us, calls " << r[i].calls << ", took " << us(took)
                  << " us, " << r[i].ec.message();
    }
    BOOST_TEST_INFO("first bad timeout: " << first.str());
    BOOST_TEST(wrong_count == 0U);
    BOOST_TEST_INFO("first bad timeout: " << first.str());
    BOOST_TEST(early == 0U);
    BOOST_TEST_INFO("first bad timeout: " << first.str());
    BOOST_TEST(late == 0U);
    BOOST_TEST(failed == 0U);
    BOOST_TEST(wheel.stats().expired == r.size());
    BOOST_TEST(wheel.pending() == 0U);
}

// Netty's HashedWheelTimer wakes every tick, forever: 40 times in 200 ms at this tick. An idle
// wheel, or one whose only timeout is far away or was cancelled, must not wake at all.
BOOST_AUTO_TEST_CASE(an_idle_wheel_does_not_wake) {
    net::io_context io;
    idlewheel::wheel_timer empty(io, {.tick = tick});
    idlewheel::wheel_timer far(io, {.tick = tick});
    idlewheel::wheel_timer cancelled(io, {.tick = tick});
    int fired = 0;
    auto far_away = far.schedule(10min, [&fired] { ++fired; });
    auto gone = cancelled.schedule(20ms, [&fired] { ++fired; });
    BOOST_TEST(gone.cancel());
    auto guard = net::make_work_guard(io);  // keep run_for() running its full time
    io.run_for(200ms);
    BOOST_TEST(fired == 0);
    BOOST_TEST(empty.stats().wakeups == 0U);
    BOOST_TEST(far.stats().wakeups == 0U);
    BOOST_TEST(cancelled.stats().wakeups == 0U);
    BOOST_TEST(far_away.pending());
}

// Draining, stopping or cancelling everything leaves no Asio wait behind: run() returns at
// once instead of sleeping until the hour-long timeout it no longer has.
BOOST_AUTO_TEST_CASE(nothing_left_armed_after_drain_stop_or_cancel) {
    for (const std::string how : {"expire_all", "stop", "cancel"}) {
        BOOST_TEST_CONTEXT(how) {
            net::io_context io;
            idlewheel::wheel_timer wheel(io, {.tick = tick});
            int ran = 0;
            auto h = wheel.schedule(1h, [&ran] { ++ran; });
            net::post(io, [&] {
                if (how == "expire_all") BOOST_TEST(wheel.expire_all() == 1U);
                if (how == "stop") BOOST_TEST(wheel.stop().size() == 1U);
                if (how == "cancel") BOOST_TEST(h.cancel());
            });
            const auto start = steady::now();
            io.run_for(run_bound);
            BOOST_TEST(io.stopped());
            BOOST_TEST(us(steady::now() - start) < us(late_bound));
            BOOST_TEST(ran == (how == "expire_all" ? 1 : 0));
            BOOST_TEST(wheel.stats().wakeups == 0U);
        }
    }
}
