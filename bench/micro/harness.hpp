// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BENCH_MICRO_HARNESS_HPP
#define IDLEWHEEL_BENCH_MICRO_HARNESS_HPP

// What every contender's benchmark file shares: an array of non-movable connection objects,
// the one cached background, the expire protocol, and the registration of a family of cases.

#include "alloc_count.hpp"
#include "idle_probe.hpp"
#include "object_array.hpp"
#include "workload.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <utility>

#include <time.h>
#include <vector>

namespace bench {

// Setting up 1 000 000 armed timers takes about a second, and Google Benchmark calls a case's
// function several times (to size its iterations, and once per repetition). So one background
// is kept between those calls; it is rebuilt for another case, another N, or when it is older
// than 10 s (its real-clock timeouts start coming due at 15 s). Only one is alive at a time,
// so a case never pays for another's memory.
class cached_background {
public:
    template <class S>
    static S& get(std::size_t n) {
        static const int tag = 0;
        auto& c = instance();
        const auto now = std::chrono::steady_clock::now();
        if (c.tag_ != &tag || c.n_ != n || now - c.built_ > std::chrono::seconds(10)) {
            c.state_.reset();  // free the old one first
            c.state_ = std::make_unique<holder<S>>(n);
            c.tag_ = &tag;
            c.n_ = n;
            c.built_ = std::chrono::steady_clock::now();
        }
        return static_cast<holder<S>&>(*c.state_).state;
    }
    static void clear() noexcept {
        instance().state_.reset();
        instance().tag_ = nullptr;
    }

private:
    struct holder_base {
        virtual ~holder_base() = default;
    };
    template <class S>
    struct holder final : holder_base {
        explicit holder(std::size_t n) : state(n) {}
        S state;
    };
    static cached_background& instance() {
        static cached_background c;
        return c;
    }

    std::unique_ptr<holder_base> state_;
    const int* tag_ = nullptr;
    std::size_t n_ = 0;
    std::chrono::steady_clock::time_point built_{};
};

// The expire protocol, the same for every contender: arm N timeouts all due at one instant
// T (N sessions idling out together), with T a little ahead; wait, untimed, until T and one
// tick past it have gone by, so everything is due; then time the event loop from its start
// until every callback has run, and report that time divided by N. Contenders whose API
// takes a relative delay arm T - now (clamped at 0 when arming outlasts the lead).
struct expire_plan {
    using clock = std::chrono::steady_clock;
    static constexpr auto lead = std::chrono::milliseconds(20);

    clock::time_point due = clock::now() + lead;

    // Delay from now to the common deadline, never negative.
    template <class D = std::chrono::nanoseconds>
    [[nodiscard]] D delay() const {
        const auto d = due - clock::now();
        return d > clock::duration::zero() ? std::chrono::ceil<D>(d) : D::zero();
    }
    // Blocks until everything armed at or before now is due for every contender (idlewheel
    // rounds deadlines up to its 10 ms tick; libevent's common timeouts are relative).
    static void wait_until_due(clock::time_point latest_deadline) {
        std::this_thread::sleep_until(latest_deadline + wheel_tick + std::chrono::milliseconds(5));
    }
};

// How many expire rounds a case runs: about a million callbacks in all, at least one round,
// at most `cap` (20; smoke runs pass fewer).
inline std::int64_t expire_rounds(std::size_t n, std::int64_t cap) {
    const auto r = static_cast<std::int64_t>(1'000'000 / n);
    return r < 1 ? 1 : (r > cap ? cap : r);
}

// CPU seconds of the calling thread (what Google Benchmark's "CPU" column counts too): robust
// against other processes on a shared 2-core machine, and honest for loops that sleep.
inline double thread_cpu_seconds() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Seconds spent by `f()`: thread CPU time, and wall time.
struct spent {
    double cpu = 0;
    double wall = 0;
};
template <class F>
spent timed(F&& f) {
    const double c0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    spent s;
    s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.cpu = thread_cpu_seconds() - c0;
    return s;
}

// Runs one expire case: `round(n)` arms, waits and runs one round, returning what its event
// loop spent. Reports the loop's CPU time as manual time, and per timer as counters.
template <class Round>
void run_expire(benchmark::State& st, Round&& round) {
    const auto n = static_cast<std::size_t>(st.range(0));
    spent total;
    std::uint64_t timers = 0;
    for (auto _ : st) {
        const spent s = round(n);
        st.SetIterationTime(s.cpu);
        total.cpu += s.cpu;
        total.wall += s.wall;
        timers += n;
    }
    st.counters["ns_per_timer"] = benchmark::Counter(total.cpu * 1e9 / static_cast<double>(timers));
    st.counters["wall_ns_per_timer"] = benchmark::Counter(total.wall * 1e9 / static_cast<double>(timers));
    st.SetItemsProcessed(static_cast<std::int64_t>(timers));
}

// Memory counters of one case: `fixed` is the window that built the loop / wheel / base,
// `window` the one that built and armed the N connection objects.
inline void report_memory(benchmark::State& st, std::size_t n, const alloc_count::snapshot& fixed,
                          const alloc_count::snapshot& window, std::size_t object_bytes) {
    const auto per = [n](std::int64_t v) {
        return benchmark::Counter(static_cast<double>(v) / static_cast<double>(n));
    };
    st.counters["bytes_per_timeout"] = per(window.footprint);
    st.counters["counted_bytes_per_timeout"] = per(window.usable);
    st.counters["allocs_per_timeout"] = per(window.blocks);
    st.counters["object_bytes"] = benchmark::Counter(static_cast<double>(object_bytes));
    st.counters["fixed_bytes"] = benchmark::Counter(static_cast<double>(fixed.footprint));
    if (!alloc_count::counting_available()) st.SetLabel("malloc not replaced (sanitizer build): counted = 0");
}

// Idle counters of one case. `loop_wakeups` is the loop's own count where it has one
// (idlewheel's stats().wakeups), or -1.
inline void report_idle(benchmark::State& st, const idle_result& r, std::int64_t loop_wakeups = -1) {
    st.counters["wakeups_per_s"] = benchmark::Counter(static_cast<double>(r.voluntary) / r.seconds);
    st.counters["wakeups"] = benchmark::Counter(static_cast<double>(r.voluntary));
    st.counters["window_s"] = benchmark::Counter(r.seconds);
    if (loop_wakeups >= 0) st.counters["loop_wakeups"] = benchmark::Counter(static_cast<double>(loop_wakeups));
}

// The families of cases, by name: "<family>/<contender>/<N>".
struct bench_options {
    std::vector<std::size_t> sizes;
    std::chrono::milliseconds idle_window{1000};
    std::size_t live_ticks = 100;  ///< real 10 ms ticks of the live idle_watch touch case
    std::int64_t max_rounds = 20;  ///< expire rounds per case, at most
};

using case_fn = std::function<void(benchmark::State&)>;

enum class family { schedule_cancel, touch, expire, memory, idle };

inline const char* name_of(family f) {
    switch (f) {
        case family::schedule_cancel: return "schedule_cancel";
        case family::touch: return "touch";
        case family::expire: return "expire";
        case family::memory: return "memory";
        case family::idle: return "idle";
    }
    return "?";
}

// How Google Benchmark runs a case: timed (it picks iterations and repetitions; the loop
// body is one operation), rounds (expire: a fixed number of rounds, manual time), or once
// (a fixed plan that reports its figures as counters).
enum class plan { timed, rounds, once };

inline plan default_plan(family f) {
    switch (f) {
        case family::schedule_cancel:
        case family::touch: return plan::timed;
        case family::expire: return plan::rounds;
        case family::memory:
        case family::idle: return plan::once;
    }
    return plan::once;
}

// Collects one case per size; register_cases() hands them to Google Benchmark ordered by
// family, then N, then contender, so the console shows contenders side by side.
struct pending_case {
    family f;
    std::string contender;
    case_fn fn;
    plan how;
};
inline std::vector<pending_case>& pending_cases() {
    static std::vector<pending_case> v;
    return v;
}
inline void add_case(family f, const std::string& contender, case_fn fn) {
    pending_cases().push_back({f, contender, std::move(fn), default_plan(f)});
}
inline void add_case(family f, const std::string& contender, case_fn fn, plan how) {
    pending_cases().push_back({f, contender, std::move(fn), how});
}
inline void register_cases(const bench_options& o) {
    for (const family f : {family::schedule_cancel, family::touch, family::expire, family::memory, family::idle}) {
        for (const std::size_t n : o.sizes) {
            for (const pending_case& c : pending_cases()) {
                if (c.f != f) continue;
                const std::string name = std::string(name_of(f)) + "/" + c.contender;
                auto* b = benchmark::RegisterBenchmark(name.c_str(), c.fn)->Arg(static_cast<std::int64_t>(n));
                switch (c.how) {
                    case plan::timed: b->Unit(benchmark::kNanosecond); break;
                    case plan::rounds:
                        b->UseManualTime()
                            ->Iterations(expire_rounds(n, o.max_rounds))
                            ->Repetitions(1)
                            ->Unit(benchmark::kMillisecond);
                        break;
                    case plan::once: b->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond); break;
                }
            }
        }
    }
}

// Everything a contender file registers.
void register_idlewheel(const bench_options& o);
void register_asio(const bench_options& o);
void register_libevent(const bench_options& o);
void register_libuv(const bench_options& o);

}  // namespace bench

#endif
