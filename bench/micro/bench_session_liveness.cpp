// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel_session_bench: what one session's liveness costs, the three separate objects
// (idle_watch + heartbeat + two operation_deadlines: handshake and close, as
// tests/support/ws_echo_server.hpp holds them) against the one session_liveness (the core of
// beast::websocket_liveness and stream_liveness, same size).
//
//  - memory/<kind>/N: N sessions' liveness, each allocated on its own (one `new` per session,
//    as a server's sessions are) and started: sizeof, and the malloc footprint per session
//    (glibc mallinfo2 in-use bytes over the window / N: chunk headers and rounding included;
//    see alloc_count.hpp).
//  - rearm/<kind>/N: the lazy re-arm, per session per idle period, on cold sessions. N
//    sessions with a 1 s idle time (100 ticks of 10 ms) are touched (on_read) every 0.6 s, in
//    N/60 batches per tick; each session's entry comes due 0.4 s after its last touch and
//    re-arms for the remaining time: one re-arm per session per 60 ticks, on a session whose
//    cache lines 2N/3 other sessions' touches have gone through since. A manual clock moves
//    one tick per iteration; only the wheel's wake-up (io_context::poll) is timed, and its
//    time is divided by the re-arms it made (wheel_stats::scheduled). The wake-up also
//    closes the tick's activity epoch and pays manual_clock's poll overhead (a timerfd armed
//    1 ns ahead: tens of microseconds on a VM); empty_poll_us is that overhead measured on
//    an idle wheel, and ns_per_rearm_net subtracts it.

#include "alloc_count.hpp"

#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/operation_deadline.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using steady_wheel = idlewheel::wheel_timer;
using manual_wheel = idlewheel::basic_wheel_timer<idlewheel::manual_clock>;

void ignore_idle(void*, idlewheel::idle_kind, bool) {}
void ignore_beat(void*, idlewheel::heartbeat_event) {}
void ignore_call(void*) {}
template <class Wheel>
void ignore_event(void*, idlewheel::basic_session_liveness<Wheel>&, idlewheel::liveness_event) {}

// The three objects of a session, as the echo server of tests/support holds them.
template <class Wheel>
struct three_objects {
    explicit three_objects(Wheel& w, std::chrono::nanoseconds idle)
        : idle_watch(w, {&ignore_idle, this}, {.reader = idle}),
          beat(w, {&ignore_beat, this}, {.ping_interval = 15s, .pong_timeout = 10s, .jitter = 2s}),
          handshake(w, {&ignore_call, this}, idlewheel::error::handshake_timeout),
          close(w, {&ignore_call, this}) {}
    void start() {
        idle_watch.start();
        beat.start();
    }
    void on_read() noexcept {
        idle_watch.on_read();
        beat.on_inbound();
    }
    idlewheel::basic_idle_watch<Wheel> idle_watch;
    idlewheel::basic_heartbeat<Wheel> beat;
    idlewheel::basic_operation_deadline<Wheel> handshake;
    idlewheel::basic_operation_deadline<Wheel> close;
};

template <class Wheel>
struct one_object {
    using config_type = idlewheel::basic_session_liveness_config<Wheel>;
    one_object(const config_type& c) : live(c) {}
    void start() { live.start(); }
    void on_read() noexcept { live.on_read(); }
    idlewheel::basic_session_liveness<Wheel> live;
};

template <class Wheel>
idlewheel::session_liveness_options options(std::chrono::nanoseconds idle) {
    return {.handshake_timeout = 5s,
            .idle_timeout = idle,
            .ping_interval = 15s,
            .pong_timeout = 10s,
            .jitter = 2s,
            .close_timeout = 5s};
}

template <class Session, class Make>
void memory_case(benchmark::State& st, Make&& make) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        asio::io_context io{1};
        steady_wheel wheel{io};
        std::vector<std::unique_ptr<Session>> sessions;
        sessions.reserve(n);
        const auto w0 = bench::alloc_count::start();
        for (std::size_t i = 0; i < n; ++i) {
            sessions.push_back(make(wheel));
            sessions.back()->start();
        }
        const auto window = bench::alloc_count::stop(w0);
        const auto per = [n](std::int64_t v) {
            return benchmark::Counter(static_cast<double>(v) / static_cast<double>(n));
        };
        st.counters["sizeof"] = benchmark::Counter(static_cast<double>(sizeof(Session)));
        st.counters["malloc_bytes_per_session"] = per(window.footprint);
        st.counters["allocs_per_session"] = per(window.blocks);
        st.counters["pending"] = benchmark::Counter(static_cast<double>(wheel.pending()));
    }
}

void memory_three(benchmark::State& st) {
    memory_case<three_objects<steady_wheel>>(
        st, [](steady_wheel& w) { return std::make_unique<three_objects<steady_wheel>>(w, 60s); });
}

void memory_one(benchmark::State& st) {
    std::unique_ptr<idlewheel::session_liveness_config> config;
    memory_case<one_object<steady_wheel>>(st, [&config](steady_wheel& w) {
        if (!config)
            config = std::make_unique<idlewheel::session_liveness_config>(
                w, options<steady_wheel>(60s),
                idlewheel::session_liveness_config::bound_handler{&ignore_event<steady_wheel>, nullptr});
        return std::make_unique<one_object<steady_wheel>>(*config);
    });
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void poll(asio::io_context& io) {
    if (io.stopped()) io.restart();
    io.poll();
}

constexpr std::size_t touch_period = 60;  // ticks between a session's touches; idle is 100 ticks

template <class Session, class Make>
void rearm_case(benchmark::State& st, Make&& make) {
    const auto n = static_cast<std::size_t>(st.range(0));
    idlewheel::manual_clock::reset();
    // The poll overhead of the manual clock, on an idle wheel of its own (before the measured
    // wheel exists: its sessions must not see this time pass).
    double empty = 0;
    {
        asio::io_context quiet_io{1};
        manual_wheel quiet{quiet_io};
        idlewheel::timer_node far{{&ignore_call, nullptr}};
        quiet.schedule(far, 1h);
        for (int i = 0; i < 100; ++i) {
            idlewheel::manual_clock::advance(10ms);
            // A touch asks for the epoch's wake-up, as every tick of the measured wheel has one.
            (void)idlewheel::detail::liveness_access<manual_wheel>::compact_activity_mark(quiet);
            const double t0 = thread_cpu_seconds();
            poll(quiet_io);
            empty += thread_cpu_seconds() - t0;
        }
        empty /= 100;
    }
    asio::io_context io{1};
    manual_wheel wheel{io};
    std::vector<std::unique_ptr<Session>> sessions;
    sessions.reserve(n);
    for (std::size_t i = 0; i < n; ++i) sessions.push_back(make(wheel));
    // Started spread over one touch period, as sessions open over time.
    std::size_t tick = 0;
    const auto step = [&](bool timed) {
        idlewheel::manual_clock::advance(10ms);
        ++tick;
        const std::size_t group = tick % touch_period;
        for (std::size_t i = group; i < n; i += touch_period) {
            if (tick <= touch_period)
                sessions[i]->start();
            else
                sessions[i]->on_read();
        }
        if (!timed) {
            poll(io);
            return 0.0;
        }
        const double t0 = thread_cpu_seconds();
        poll(io);
        return thread_cpu_seconds() - t0;
    };
    for (std::size_t i = 0; i < 4 * touch_period; ++i) step(false);  // steady state: every session re-arms
    const auto before = wheel.stats();
    double spent = 0;
    std::size_t ticks = 0;
    for (auto _ : st) {
        const double s = step(true);
        st.SetIterationTime(s);
        spent += s;
        ++ticks;
    }
    const auto after = wheel.stats();
    const double rearms = static_cast<double>(after.scheduled - before.scheduled);
    st.counters["rearms_per_tick"] = benchmark::Counter(rearms / static_cast<double>(ticks));
    st.counters["ns_per_rearm"] = benchmark::Counter(spent * 1e9 / rearms);
    st.counters["empty_poll_us"] = benchmark::Counter(empty * 1e6);
    st.counters["ns_per_rearm_net"] = benchmark::Counter((spent - empty * static_cast<double>(ticks)) * 1e9 / rearms);
    st.counters["expired"] = benchmark::Counter(static_cast<double>(after.expired - before.expired));
    if (after.expired - before.expired != after.scheduled - before.scheduled)
        st.SkipWithError("a session did something else than re-arm (idle report, ping): the workload is broken");
}

void rearm_three(benchmark::State& st) {
    rearm_case<three_objects<manual_wheel>>(
        st, [](manual_wheel& w) { return std::make_unique<three_objects<manual_wheel>>(w, 1s); });
}

void rearm_one(benchmark::State& st) {
    std::unique_ptr<idlewheel::basic_session_liveness_config<manual_wheel>> config;
    rearm_case<one_object<manual_wheel>>(st, [&config](manual_wheel& w) {
        if (!config)
            config = std::make_unique<idlewheel::basic_session_liveness_config<manual_wheel>>(
                w, options<manual_wheel>(1s),
                idlewheel::basic_session_liveness_config<manual_wheel>::bound_handler{&ignore_event<manual_wheel>,
                                                                                      nullptr});
        return std::make_unique<one_object<manual_wheel>>(*config);
    });
}

}  // namespace

BENCHMARK(memory_three)->Name("memory/three_objects")->Arg(100'000)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(memory_one)->Name("memory/session_liveness")->Arg(100'000)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(rearm_three)
    ->Name("rearm/three_objects")
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Iterations(600)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(rearm_one)
    ->Name("rearm/session_liveness")
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Iterations(600)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
