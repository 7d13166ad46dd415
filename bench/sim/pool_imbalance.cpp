// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel_pool_imbalance: how evenly wheel_pool's round-robin next() spreads sessions over
// its shards when sessions come and go with random lifetimes.
//
// A real wheel_pool of --shards shards on ONE io_context run by --threads threads, on the real
// clock. Two acceptors (each a steady_timer on a strand of its own, firing every millisecond)
// open --rate sessions a second between them, --assignments in all: each new session takes
// pool.next() (from whichever thread runs its acceptor) and starts on its shard's strand,
// where it counts itself and schedules its end on the shard's wheel after an exponentially
// distributed lifetime of mean --mean-lifetime (wheel_timer::schedule; the wheel's 10 ms tick
// rounds it up). A sampler (every --sample-ms) reads the sessions per shard and, once the
// first 3 mean lifetimes are over (the warm-up: the population is then at its steady state,
// rate x mean lifetime), records max / mean and min / mean over the shards.
//
// For reference, every session is also counted on a shard drawn uniformly at random (what a
// hash of the connection would give): the same lifetimes, only the assignment differs.
//
// Output: the steady-state population, then for round robin and random the mean, p50, p99 and
// max of max/mean over the samples (1.000 = perfectly even), and the mean of min/mean.
//
// usage: idlewheel_pool_imbalance [--shards=8] [--threads=2] [--assignments=100000]
//                                 [--rate=10000] [--mean-lifetime-ms=1000] [--sample-ms=10] [--seed=1]

#include <idlewheel/wheel_pool.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

struct options {
    std::size_t shards = 8;
    std::size_t threads = 2;
    std::uint64_t assignments = 100'000;
    double rate = 10'000;             // sessions opened per second
    double mean_lifetime_ms = 1'000;  // exponential
    long sample_ms = 10;
    std::uint64_t seed = 1;
};

bool take(const char* arg, const char* name, std::string& value) {
    const std::size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
    value = arg + n + 1;
    return true;
}

struct ratios {
    std::vector<double> max_over_mean;
    double min_over_mean_sum = 0;

    void add(const std::vector<std::int64_t>& counts) {
        std::int64_t sum = 0, hi = counts[0], lo = counts[0];
        for (const auto c : counts) {
            sum += c;
            hi = std::max(hi, c);
            lo = std::min(lo, c);
        }
        const double mean = static_cast<double>(sum) / static_cast<double>(counts.size());
        if (mean <= 0) return;
        max_over_mean.push_back(static_cast<double>(hi) / mean);
        min_over_mean_sum += static_cast<double>(lo) / mean;
    }
    void print(const char* name) {
        if (max_over_mean.empty()) {
            std::printf("%-12s no samples\n", name);
            return;
        }
        std::vector<double> v = max_over_mean;
        std::sort(v.begin(), v.end());
        double sum = 0;
        for (const double x : v) sum += x;
        const auto at = [&](double q) {
            return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
        };
        std::printf("%-12s max/mean: mean %.3f  p50 %.3f  p99 %.3f  max %.3f | min/mean: mean %.3f\n", name,
                    sum / static_cast<double>(v.size()), at(0.5), at(0.99), v.back(),
                    min_over_mean_sum / static_cast<double>(v.size()));
    }
};

}  // namespace

int main(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string v;
        if (take(argv[i], "--shards", v))
            o.shards = std::stoul(v);
        else if (take(argv[i], "--threads", v))
            o.threads = std::stoul(v);
        else if (take(argv[i], "--assignments", v))
            o.assignments = std::stoull(v);
        else if (take(argv[i], "--rate", v))
            o.rate = std::stod(v);
        else if (take(argv[i], "--mean-lifetime-ms", v))
            o.mean_lifetime_ms = std::stod(v);
        else if (take(argv[i], "--sample-ms", v))
            o.sample_ms = std::stol(v);
        else if (take(argv[i], "--seed", v))
            o.seed = std::stoull(v);
        else {
            std::fprintf(stderr, "idlewheel_pool_imbalance: unknown argument %s (see the top of pool_imbalance.cpp)\n",
                         argv[i]);
            return 2;
        }
    }
    if (o.shards == 0 || o.threads == 0 || o.rate <= 0 || o.mean_lifetime_ms <= 0 || o.sample_ms <= 0) {
        std::fprintf(stderr,
                     "idlewheel_pool_imbalance: shards, threads, rate, mean lifetime and sample period must be > 0\n");
        return 2;
    }

    asio::io_context io{static_cast<int>(o.threads)};
    idlewheel::wheel_pool_options po;
    po.shards = o.shards;
    idlewheel::wheel_pool pool(io, po);

    // Sessions per shard: written on the shards' strands, read by the sampler.
    std::vector<std::atomic<std::int64_t>> round_robin(o.shards), random(o.shards);
    std::atomic<std::uint64_t> assigned{0}, ended{0};

    const auto start = clock_type::now();
    const auto warmup = std::chrono::duration<double, std::milli>(3 * o.mean_lifetime_ms);
    ratios rr_stats, random_stats;
    std::atomic<bool> done{false};

    // Opens one session: round robin for real (its shard's strand and wheel), random in the
    // shadow counts; both end after the same lifetime.
    const auto open = [&](std::size_t shadow, std::chrono::microseconds lifetime) {
        auto& s = pool.next();
        asio::post(s.get_executor(), [&, &s = s, shadow, lifetime] {
            round_robin[s.index()].fetch_add(1, std::memory_order_relaxed);
            random[shadow].fetch_add(1, std::memory_order_relaxed);
            (void)s.wheel().schedule(lifetime, [&, &s = s, shadow] {
                round_robin[s.index()].fetch_sub(1, std::memory_order_relaxed);
                random[shadow].fetch_sub(1, std::memory_order_relaxed);
                ended.fetch_add(1, std::memory_order_relaxed);
            });
        });
    };

    // Two acceptors, each opening its share of the rate on time (catching up when late).
    struct acceptor {
        explicit acceptor(asio::io_context& ctx, std::uint64_t seed) : timer(asio::make_strand(ctx)), rng(seed) {}
        asio::steady_timer timer;
        std::mt19937_64 rng;
        std::uint64_t opened = 0;
    };
    constexpr std::size_t acceptors = 2;
    std::vector<std::unique_ptr<acceptor>> accs;
    for (std::size_t a = 0; a < acceptors; ++a) accs.push_back(std::make_unique<acceptor>(io, o.seed * 1000 + a));
    const std::uint64_t share = o.assignments / acceptors;
    const double rate_each = o.rate / acceptors;
    std::exponential_distribution<double> lifetime_ms(1.0 / o.mean_lifetime_ms);

    std::function<void(acceptor&)> accept_tick = [&](acceptor& a) {
        const double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
        const auto due = std::min<std::uint64_t>(share, static_cast<std::uint64_t>(elapsed * rate_each));
        std::uniform_int_distribution<std::size_t> pick(0, o.shards - 1);
        for (; a.opened < due; ++a.opened) {
            auto dist = lifetime_ms;  // a copy per draw: the two acceptors may run at once
            const auto life = std::chrono::microseconds(static_cast<std::int64_t>(dist(a.rng) * 1000.0));
            open(pick(a.rng), life);
            assigned.fetch_add(1, std::memory_order_relaxed);
        }
        if (a.opened == share) return;
        a.timer.expires_after(std::chrono::milliseconds(1));
        a.timer.async_wait([&, &a = a](const boost::system::error_code& ec) {
            if (!ec) accept_tick(a);
        });
    };
    for (auto& a : accs) asio::post(a->timer.get_executor(), [&, &a = *a] { accept_tick(a); });

    // The sampler: until every assignment is made.
    asio::steady_timer sampler(asio::make_strand(io));
    std::vector<std::int64_t> rr(o.shards), rnd(o.shards);
    double population_sum = 0;
    std::uint64_t samples = 0;
    std::function<void()> sample = [&] {
        const auto now = clock_type::now();
        if (now - start >= warmup) {
            std::int64_t total = 0;
            for (std::size_t i = 0; i < o.shards; ++i) {
                rr[i] = round_robin[i].load(std::memory_order_relaxed);
                rnd[i] = random[i].load(std::memory_order_relaxed);
                total += rr[i];
            }
            rr_stats.add(rr);
            random_stats.add(rnd);
            population_sum += static_cast<double>(total);
            ++samples;
        }
        if (assigned.load(std::memory_order_relaxed) >= share * acceptors) {
            done = true;
            io.stop();
            return;
        }
        sampler.expires_after(std::chrono::milliseconds(o.sample_ms));
        sampler.async_wait([&](const boost::system::error_code& ec) {
            if (!ec) sample();
        });
    };
    asio::post(sampler.get_executor(), sample);

    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < o.threads; ++t) threads.emplace_back([&] { io.run(); });
    for (auto& t : threads) t.join();
    const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();

    std::printf(
        "wheel_pool: %zu shards, %zu threads, %llu assignments (round robin, pool.next()) at %.0f/s over %.1f s; "
        "exponential lifetimes, mean %.0f ms; %llu sessions ended before the end\n",
        o.shards, o.threads, static_cast<unsigned long long>(assigned.load()), o.rate, seconds, o.mean_lifetime_ms,
        static_cast<unsigned long long>(ended.load()));
    if (samples == 0) {
        std::printf("no sample after the warm-up (%.0f ms): raise --assignments or lower --mean-lifetime-ms\n",
                    warmup.count());
        return 1;
    }
    std::printf(
        "steady state: %llu samples every %ld ms after a %.0f ms warm-up; %.0f sessions open on average, %.1f per "
        "shard\n",
        static_cast<unsigned long long>(samples), o.sample_ms, warmup.count(),
        population_sum / static_cast<double>(samples),
        population_sum / static_cast<double>(samples) / static_cast<double>(o.shards));
    rr_stats.print("round robin");
    random_stats.print("random");
    return done ? 0 : 1;
}
