// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel_cancel_after_bench: the cost of a per-operation timeout on an operation that
// completes first (the common case), in ns and malloc calls per operation:
//   baseline            the operation alone, no timeout
//   idlewheel           idlewheel::cancel_after(wheel, 5s, handler)           (default wheel)
//   idlewheel_per_tick  the same on a clock_read::per_tick wheel
//   asio_cancel_after   asio::cancel_after(5s, handler)        (Boost 1.86 or newer headers)
//   steady_timer        hand-written: one steady_timer per connection, expires_after(5s) +
//                       async_wait before the operation, cancel() when it completes
// The operation is the cheapest one that supports per-operation cancellation: it installs a
// handler in its slot (when the slot is connected) and completes as if by post; so every
// figure is the operation's cost plus the timeout's, and the difference to the baseline is
// the timeout's. The argument is the number of operations in flight (connections): each one's
// handler starts the next, inside io_context::run() (Asio's per-thread recycling allocator
// works there). As on a server, one more operation waits all along with its own timeout
// (an idle connection's read), in every case, so that no timer subsystem ever sees an empty
// queue between two operations.
//
// Built header-only (no separately compiled Asio): bench/micro/CMakeLists.txt compiles it
// against the Boost given by IDLEWHEEL_BENCH_BOOST_INCLUDE, e.g. Boost 1.88's headers from
// scripts/fetch_boost.sh, so that asio::cancel_after exists.
//
// Besides Google Benchmark's flags: --check_zero_malloc exits 1 if the idlewheel case made a
// malloc call in steady state (the per_tick case: more than one per 1000 operations, see
// main()); the smoke test runs it.

#include <idlewheel/cancel_after.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <benchmark/benchmark.h>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/version.hpp>
#if BOOST_VERSION >= 108600
#include <boost/asio/cancel_after.hpp>
#define IDLEWHEEL_BENCH_HAVE_ASIO_CANCEL_AFTER 1
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// ---- malloc calls, counted -------------------------------------------------------------
// Every allocation function is replaced (forwarding to glibc's), so Asio's aligned_alloc'ed
// operations are seen too. Compiled out under sanitizers, which own malloc.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IDLEWHEEL_BENCH_COUNT_CALLS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define IDLEWHEEL_BENCH_COUNT_CALLS 0
#endif
#endif
#ifndef IDLEWHEEL_BENCH_COUNT_CALLS
#define IDLEWHEEL_BENCH_COUNT_CALLS 1
#endif

namespace {
std::atomic<std::uint64_t> malloc_calls{0};
}

#if IDLEWHEEL_BENCH_COUNT_CALLS
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);

void* malloc(std::size_t n) {
    malloc_calls.fetch_add(1, std::memory_order_relaxed);
    return __libc_malloc(n);
}
void* calloc(std::size_t count, std::size_t size) {
    malloc_calls.fetch_add(1, std::memory_order_relaxed);
    return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t n) {
    malloc_calls.fetch_add(1, std::memory_order_relaxed);
    return __libc_realloc(p, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
    malloc_calls.fetch_add(1, std::memory_order_relaxed);
    return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) { return memalign(alignment, n); }
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
    void* p = memalign(alignment, n);
    if (p == nullptr) return 12;  // ENOMEM
    *out = p;
    return 0;
}
}
#endif

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

constexpr std::int64_t batch = 100;  // operations per connection and benchmark iteration
constexpr auto timeout = 5s;         // never reached: every operation completes first

// The operation: per-operation cancellation supported, completes as if by post.
struct noop_cancel {
    void operator()(asio::cancellation_type_t) noexcept {}
};

template <class Handler>
struct posted_completion {
    Handler handler;
    asio::cancellation_slot slot;
    void operator()() {
        if (slot.is_connected()) slot.clear();
        std::move(handler)(error_code{});
    }
};

struct initiate_instant_op {
    asio::io_context::executor_type ex;
    using executor_type = asio::io_context::executor_type;
    executor_type get_executor() const noexcept { return ex; }

    template <class Handler>
    void operator()(Handler&& handler) const {
        auto slot = asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected()) slot.template emplace<noop_cancel>();
        asio::post(ex, posted_completion<std::decay_t<Handler>>{std::forward<Handler>(handler), slot});
    }
};

template <class Token>
auto async_instant_op(asio::io_context& io, Token&& token) {
    return asio::async_initiate<Token, void(error_code)>(initiate_instant_op{io.get_executor()}, token);
}

// Never completes by itself: completes (as if by post) when its slot is emitted.
struct initiate_idle_op {
    asio::io_context::executor_type ex;
    using executor_type = asio::io_context::executor_type;
    executor_type get_executor() const noexcept { return ex; }

    template <class Handler>
    struct on_cancel {
        Handler handler;
        asio::io_context::executor_type ex;
        asio::cancellation_slot slot;
        void operator()(asio::cancellation_type_t) {
            asio::post(ex, posted_completion<Handler>{std::move(handler), slot});
        }
    };

    template <class Handler>
    void operator()(Handler&& handler) const {
        auto slot = asio::get_associated_cancellation_slot(handler);
        slot.template emplace<on_cancel<std::decay_t<Handler>>>(std::forward<Handler>(handler), ex, slot);
    }
};

template <class Token>
auto async_idle_op(asio::io_context& io, Token&& token) {
    return asio::async_initiate<Token, void(error_code)>(initiate_idle_op{io.get_executor()}, token);
}

std::map<std::string, double>& mallocs_by_case() {
    static std::map<std::string, double> m;
    return m;
}

// Keeps `state.range(0)` operations in flight (each connection's handler starts its next
// operation) for the whole case; an iteration is `batch` operations per connection. The
// malloc calls are counted from the third iteration on: steady state.
template <class Start>
void run_chains(benchmark::State& state, const std::string& name, asio::io_context& io, Start&& start) {
    const auto in_flight = static_cast<std::int64_t>(state.range(0));
    struct chains {
        Start& start;
        std::int64_t done = 0;
        std::int64_t running = 0;
        bool stopping = false;
        void next() {
            ++done;
            if (stopping) {
                --running;
                return;
            }
            start([this] { next(); });
        }
    } c{start};
    c.running = in_flight;
    c.done = -in_flight;  // the first next() of each connection starts it
    for (std::int64_t i = 0; i < in_flight; ++i) asio::post(io, [&] { c.next(); });
    const auto run_ops = [&](std::int64_t n) {
        const std::int64_t target = c.done + n;
        while (c.done < target) io.run_one();  // the idle operation keeps run_one() from returning 0
    };
    run_ops(2 * batch * in_flight);  // warm the recycling caches and the timer queues
    const std::uint64_t before = malloc_calls.load(std::memory_order_relaxed);
    std::int64_t ops = 0;
    for (auto _ : state) {
        run_ops(batch * in_flight);
        ops += batch * in_flight;
    }
    const std::uint64_t calls = malloc_calls.load(std::memory_order_relaxed) - before;
    c.stopping = true;
    while (c.running > 0) io.run_one();
    state.SetItemsProcessed(ops);
    // Seconds per operation, printed with an SI prefix ("130n" = 130 ns).
    state.counters["time_per_op"] =
        benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    const double per_op = ops > 0 ? static_cast<double>(calls) / static_cast<double>(ops) : 0.0;
    state.counters["mallocs_per_op"] = per_op;
    mallocs_by_case()[name + "/" + std::to_string(in_flight)] = per_op;
}

// The idle connection's read, with its timeout (`arm(token)` adapts the token), cancelled
// through its outer slot when the case ends.
template <class Arm>
struct idle_connection {
    asio::io_context& io;
    asio::cancellation_signal stop;
    idle_connection(asio::io_context& context, Arm&& arm) : io(context) {
        async_idle_op(io, arm(asio::bind_cancellation_slot(stop.slot(), [](error_code) {})));
    }
    ~idle_connection() {
        stop.emit(asio::cancellation_type::terminal);
        io.restart();
        io.poll();
    }
};
template <class Arm>
idle_connection(asio::io_context&, Arm&&) -> idle_connection<Arm>;

void baseline(benchmark::State& state) {
    asio::io_context io(1);
    asio::steady_timer idle_timer(io);
    idle_timer.expires_after(5min);
    idle_timer.async_wait([](error_code) {});
    run_chains(state, "baseline", io, [&](auto next) { async_instant_op(io, [next](error_code) { next(); }); });
    idle_timer.cancel();
    io.restart();
    io.poll();
}

template <idlewheel::clock_read Read>
void idlewheel_cancel_after(benchmark::State& state) {
    asio::io_context io(1);
    idlewheel::wheel_timer wheel(io, {.clock = Read});
    {
        idle_connection idle(io, [&](auto token) { return idlewheel::cancel_after(wheel, 5min, std::move(token)); });
        run_chains(state, Read == idlewheel::clock_read::per_tick ? "idlewheel_per_tick" : "idlewheel", io,
                   [&](auto next) {
                       async_instant_op(io, idlewheel::cancel_after(wheel, timeout, [next](error_code) { next(); }));
                   });
    }
    benchmark::DoNotOptimize(wheel.pending());
}

#if defined(IDLEWHEEL_BENCH_HAVE_ASIO_CANCEL_AFTER)
void asio_cancel_after(benchmark::State& state) {
    asio::io_context io(1);
    idle_connection idle(io, [&](auto token) { return asio::cancel_after(5min, std::move(token)); });
    run_chains(state, "asio_cancel_after", io,
               [&](auto next) { async_instant_op(io, asio::cancel_after(timeout, [next](error_code) { next(); })); });
}
#endif

// Hand-written, as Beast servers do it today: one steady_timer per connection, re-armed for
// every operation and cancelled when it completes.
void steady_timer(benchmark::State& state) {
    asio::io_context io(1);
    asio::steady_timer idle_timer(io);
    idle_timer.expires_after(5min);
    idle_timer.async_wait([](error_code) {});
    std::vector<std::unique_ptr<asio::steady_timer>> timers;
    for (std::int64_t i = 0; i < state.range(0); ++i) timers.push_back(std::make_unique<asio::steady_timer>(io));
    std::size_t next_timer = 0;
    run_chains(state, "steady_timer", io, [&](auto next) {
        asio::steady_timer& timer = *timers[next_timer];
        next_timer = (next_timer + 1) % timers.size();
        timer.expires_after(timeout);
        timer.async_wait([](error_code) {});
        async_instant_op(io, [&timer, next](error_code) {
            timer.cancel();
            next();
        });
    });
    idle_timer.cancel();
    io.restart();
    io.poll();
}

}  // namespace

BENCHMARK(baseline)->Name("cancel_after/baseline")->Arg(1)->Arg(1000);
BENCHMARK(idlewheel_cancel_after<idlewheel::clock_read::per_schedule>)
    ->Name("cancel_after/idlewheel")
    ->Arg(1)
    ->Arg(1000);
BENCHMARK(idlewheel_cancel_after<idlewheel::clock_read::per_tick>)
    ->Name("cancel_after/idlewheel_per_tick")
    ->Arg(1)
    ->Arg(1000);
#if defined(IDLEWHEEL_BENCH_HAVE_ASIO_CANCEL_AFTER)
BENCHMARK(asio_cancel_after)->Name("cancel_after/asio_cancel_after")->Arg(1)->Arg(1000);
#endif
BENCHMARK(steady_timer)->Name("cancel_after/steady_timer")->Arg(1)->Arg(1000);

int main(int argc, char** argv) {
    bool check_zero_malloc = false;
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--check_zero_malloc") == 0)
            check_zero_malloc = true;
        else
            argv[kept++] = argv[i];
    }
    argc = kept;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    std::cout << "Boost " << BOOST_VERSION / 100000 << '.' << BOOST_VERSION / 100 % 1000
#if !defined(IDLEWHEEL_BENCH_HAVE_ASIO_CANCEL_AFTER)
              << " (no asio::cancel_after: Boost 1.86 or newer needed for that case)"
#endif
              << ", malloc calls counted: " << (IDLEWHEEL_BENCH_COUNT_CALLS ? "yes" : "no") << '\n';
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (check_zero_malloc && IDLEWHEEL_BENCH_COUNT_CALLS) {
        int seen = 0;
        for (const auto& [name, per_op] : mallocs_by_case()) {
            if (name.find("idlewheel") == std::string::npos) continue;
            ++seen;
            // A per_tick wheel wakes once per tick while entries are staged, and its Asio
            // timer's wait may miss the recycling cache then: calls per tick, not per
            // operation (about one per 16 000 operations here).
            const double allowed = name.find("per_tick") != std::string::npos ? 1e-3 : 0.0;
            if (per_op > allowed) {
                std::cerr << name << ": " << per_op << " malloc calls per operation (expected " << allowed << ")\n";
                return 1;
            }
        }
        if (seen == 0) {
            std::cerr << "--check_zero_malloc: no idlewheel case ran\n";
            return 1;
        }
        std::cout << "check_zero_malloc: " << seen << " idlewheel cases passed\n";
    }
    return 0;
}
