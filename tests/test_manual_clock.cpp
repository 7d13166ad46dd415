// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/manual_clock.hpp>

// idlewheel::manual_clock, from the header's contract: a steady std::chrono clock in
// nanoseconds that starts at one hour and moves only by advance() (atomically, from any
// thread) or reset(); Asio's wait_traits make every wait on it a real wait of zero, so an Asio
// timer on it completes at the first poll() after advance() has passed its expiry, and the
// header's own example (a wheel on this clock) fires at exactly 50 ms.

#include "support/net.hpp"

#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE manual_clock
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <ratio>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;

struct reset_first {
    reset_first() { manual_clock::reset(); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_steady_clock_in_nanoseconds) {
    static_assert(std::is_same_v<manual_clock::duration, std::chrono::nanoseconds>);
    static_assert(std::is_same_v<manual_clock::rep, std::chrono::nanoseconds::rep>);
    static_assert(std::is_same_v<manual_clock::period, std::nano>);
    static_assert(std::is_same_v<manual_clock::time_point, std::chrono::time_point<manual_clock>>);
    static_assert(manual_clock::is_steady);
    const manual_clock::duration d{};
    const manual_clock::time_point t{};
    static_assert(noexcept(manual_clock::now()));
    static_assert(noexcept(manual_clock::advance(d)));
    static_assert(noexcept(manual_clock::reset(t)));
    BOOST_TEST(manual_clock::is_steady);  // odr-used once (clang 14 otherwise reports it unused)
}

BOOST_FIXTURE_TEST_CASE(reset_starts_at_one_hour_and_now_stands_still, reset_first) {
    BOOST_TEST(manual_clock::now().time_since_epoch() == std::chrono::nanoseconds(1h));
    const auto t = manual_clock::now();
    std::this_thread::yield();
    BOOST_TEST((manual_clock::now() == t));  // real time passing moves nothing
}

BOOST_FIXTURE_TEST_CASE(advance_moves_exactly_by_its_argument, reset_first) {
    const auto t0 = manual_clock::now();
    manual_clock::advance(1ns);
    BOOST_TEST((manual_clock::now() - t0).count() == 1);
    manual_clock::advance(0ns);
    BOOST_TEST((manual_clock::now() - t0).count() == 1);
    manual_clock::advance(std::chrono::duration_cast<manual_clock::duration>(1h + 2min + 3s + 4ms + 5us));
    BOOST_TEST((manual_clock::now() - t0) == 1h + 2min + 3s + 4ms + 5us + 1ns);
    // A coarser duration converts exactly: 3 s is 3e9 ns.
    manual_clock::advance(3s);
    BOOST_TEST((manual_clock::now() - t0) == 1h + 2min + 6s + 4ms + 5us + 1ns);
}

BOOST_FIXTURE_TEST_CASE(reset_sets_any_time, reset_first) {
    manual_clock::advance(10s);
    manual_clock::reset(manual_clock::time_point(42ns));
    BOOST_TEST(manual_clock::now().time_since_epoch().count() == 42);
    manual_clock::reset(manual_clock::time_point(24h));
    BOOST_TEST(manual_clock::now().time_since_epoch() == std::chrono::nanoseconds(24h));
    manual_clock::reset();
    BOOST_TEST(manual_clock::now().time_since_epoch() == std::chrono::nanoseconds(1h));
}

BOOST_FIXTURE_TEST_CASE(advance_from_many_threads_loses_nothing, reset_first) {
    const auto t0 = manual_clock::now();
    constexpr int threads = 4;
    constexpr int steps = 10000;
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
        pool.emplace_back([] {
            for (int j = 0; j < steps; ++j) manual_clock::advance(3ns);
        });
    for (auto& t : pool) t.join();
    BOOST_TEST((manual_clock::now() - t0).count() == std::int64_t{threads} * steps * 3);
}

BOOST_AUTO_TEST_CASE(every_wait_is_a_real_wait_of_zero) {
    using traits = idlewheel::net::wait_traits<manual_clock>;
    BOOST_TEST(traits::to_wait_duration(manual_clock::duration(24h)).count() == 0);
    BOOST_TEST(traits::to_wait_duration(manual_clock::duration::max()).count() == 0);
    BOOST_TEST(traits::to_wait_duration(manual_clock::time_point::max()).count() == 0);
    BOOST_TEST(traits::to_wait_duration(manual_clock::now() + 1h).count() == 0);
}

BOOST_FIXTURE_TEST_CASE(an_asio_timer_on_it_completes_at_the_first_poll_past_its_expiry, reset_first) {
    idlewheel::net::io_context io;
    idlewheel::net::basic_waitable_timer<manual_clock> timer(io);
    timer.expires_after(50ms);
    int calls = 0;
    idlewheel::error_code result = idlewheel::net::error::operation_aborted;
    timer.async_wait([&](idlewheel::error_code ec) {
        ++calls;
        result = ec;
    });
    for (int i = 0; i < 49; ++i) {
        manual_clock::advance(1ms);
        io.poll();
    }
    BOOST_TEST(calls == 0);  // 49 ms: not yet, however often it is polled
    io.poll();
    BOOST_TEST(calls == 0);
    manual_clock::advance(1ms);
    io.poll();
    BOOST_TEST(calls == 1);
    BOOST_TEST(!result);
}

BOOST_FIXTURE_TEST_CASE(the_headers_example_fires_at_50_ms, reset_first) {
    idlewheel::net::io_context io;
    idlewheel::basic_wheel_timer<idlewheel::manual_clock> wheel(io);
    bool fired = false;
    wheel.schedule(50ms, [&] { fired = true; });
    idlewheel::manual_clock::advance(49ms);
    io.poll();
    BOOST_TEST(!fired);
    idlewheel::manual_clock::advance(1ms);
    io.poll();
    BOOST_TEST(fired);
}
