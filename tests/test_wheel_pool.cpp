// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_pool.hpp>

// idlewheel::wheel_pool, from its header's contract: shards (a wheel on a strand each), round
// robin, finding a shard from an I/O object's executor, async_for_each / async_stats /
// async_stop (on every shard's strand, completing once, on the handler's executor), the sum
// of wheel_stats (per_shard and liveness_stats have files of their own); then the pool on an
// io_context run by more threads than this machine has cores, with sessions on their shards'
// strands (a ThreadSanitizer build runs this file too: tests/example_checks/tsan_server_async.sh).

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/pool_scene.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE wheel_pool
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::clock_reset;
using idlewheel::test::poll;
using idlewheel::test::pool_scene::manual_pool;
using idlewheel::test::pool_scene::pool_fixture;
using idlewheel::test::pool_scene::shards;

// Runs `f` on shard `s`'s strand (as a session's handler would) and polls it through.
template <class F>
void on_strand(net::io_context& io, manual_pool::shard& s, F f) {
    net::post(s.get_executor(), f);
    poll(io);
}

BOOST_FIXTURE_TEST_CASE(shards_are_distinct_strands_each_with_its_wheel, pool_fixture) {
    BOOST_TEST(pool.size() == 4U);
    for (std::size_t i = 0; i < pool.size(); ++i) {
        BOOST_TEST(pool[i].index() == i);
        for (std::size_t j = 0; j < i; ++j) BOOST_TEST(!(pool[i].get_executor() == pool[j].get_executor()));
        // The wheel's executor is the shard's strand: its wake-ups run there.
        const auto ex = pool[i].wheel().get_executor();
        const auto* strand = ex.target<manual_pool::executor_type>();
        BOOST_REQUIRE(strand != nullptr);
        BOOST_TEST((*strand == pool[i].get_executor()));
    }
}

BOOST_AUTO_TEST_CASE(default_shard_count_is_four_per_hardware_thread) {
    net::io_context io;
    idlewheel::wheel_pool pool(io);
    const unsigned hw = std::thread::hardware_concurrency();
    BOOST_TEST(pool.size() == 4U * (hw != 0 ? hw : 1U));
}

BOOST_AUTO_TEST_CASE(invalid_wheel_options_throw) {
    net::io_context io;
    idlewheel::wheel_pool_options o;
    o.shards = 2;
    o.wheel.tick = 0ns;
    BOOST_CHECK_THROW(idlewheel::wheel_pool(io, o), std::invalid_argument);
}

BOOST_FIXTURE_TEST_CASE(next_is_round_robin, pool_fixture) {
    for (int round = 0; round < 3; ++round)
        for (std::size_t i = 0; i < pool.size(); ++i) BOOST_TEST(pool.next().index() == i);
}

BOOST_FIXTURE_TEST_CASE(next_from_many_threads_hands_out_every_shard_equally, pool_fixture) {
    std::array<std::atomic<int>, 4> got{};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; ++i) got[pool.next().index()].fetch_add(1);
        });
    for (auto& t : threads) t.join();
    for (auto& g : got) BOOST_TEST(g.load() == 1000);
}

BOOST_FIXTURE_TEST_CASE(shard_of_finds_the_shard_of_an_io_object, pool_fixture) {
    for (std::size_t i = 0; i < pool.size(); ++i) {
        net::ip::tcp::socket socket(pool[i].get_executor());  // as async_accept(shard.get_executor()) makes it
        BOOST_TEST(pool.shard_of(socket.get_executor()).index() == i);
        BOOST_TEST(pool.find(pool[i].get_executor()) == &pool[i]);
    }
    // Not a shard's: another strand of the same io_context, the io_context itself, nothing.
    net::ip::tcp::socket own_strand(net::make_strand(io));
    BOOST_TEST(pool.find(own_strand.get_executor()) == nullptr);
    BOOST_CHECK_THROW((void)pool.shard_of(own_strand.get_executor()), std::invalid_argument);
    BOOST_TEST(pool.find(io.get_executor()) == nullptr);
    BOOST_TEST(pool.find(net::any_io_executor()) == nullptr);
}

BOOST_FIXTURE_TEST_CASE(a_shard_wheel_runs_its_timeouts_on_the_shard_strand, pool_fixture) {
    std::array<int, 4> fired{};
    std::array<bool, 4> on_own_strand{};
    for (std::size_t i = 0; i < pool.size(); ++i) {
        auto& s = pool[i];
        on_strand(io, s, [&, i] {
            s.wheel().schedule(std::chrono::milliseconds(20 * static_cast<int>(i + 1)), [&, i] {
                ++fired[i];
                on_own_strand[i] = pool[i].get_executor().running_in_this_thread();
            });
        });
    }
    advance_and_poll(io, 45ms);
    BOOST_TEST((fired == std::array<int, 4>{1, 1, 0, 0}));
    advance_and_poll(io, 50ms);
    BOOST_TEST((fired == std::array<int, 4>{1, 1, 1, 1}));
    BOOST_TEST((on_own_strand == std::array<bool, 4>{true, true, true, true}));
}

BOOST_FIXTURE_TEST_CASE(waits_and_repeating_timers_work_unchanged_on_a_shard, pool_fixture) {
    auto& s = pool[2];
    std::optional<idlewheel::error_code> waited;
    bool wait_on_strand = false;
    int rounds = 0;
    idlewheel::basic_repeating_timer<manual_pool::wheel_type> every(s.wheel(), {[](void* n) { ++*static_cast<int*>(n); }, &rounds},
                                                                    10ms);
    on_strand(io, s, [&] {
        s.wheel().async_wait(25ms, [&](idlewheel::error_code ec) {
            waited = ec;
            wait_on_strand = s.get_executor().running_in_this_thread();  // the handler's default executor: the wheel's
        });
        every.start();
    });
    advance_and_poll(io, 55ms);
    BOOST_REQUIRE(waited.has_value());
    BOOST_TEST(!*waited);
    BOOST_TEST(wait_on_strand);
    BOOST_TEST(rounds >= 4);
    BOOST_TEST(rounds <= 5);
    on_strand(io, s, [&] { every.stop(); });
}

BOOST_FIXTURE_TEST_CASE(async_for_each_runs_on_every_strand_then_completes_once, pool_fixture) {
    std::vector<int> visits(pool.size());
    std::vector<bool> on_strand_flags(pool.size());
    int completions = 0;
    bool all_visited_first = false;
    pool.async_for_each(
        [&](manual_pool::shard& s) {
            ++visits[s.index()];
            on_strand_flags[s.index()] = s.get_executor().running_in_this_thread();
        },
        [&] {
            ++completions;
            all_visited_first = std::count(visits.begin(), visits.end(), 1) == static_cast<long>(visits.size());
        });
    BOOST_TEST(completions == 0);  // never inline
    poll(io);
    BOOST_TEST(completions == 1);
    BOOST_TEST(all_visited_first);
    for (bool b : on_strand_flags) BOOST_TEST(b);
}

BOOST_FIXTURE_TEST_CASE(the_completion_runs_on_the_handlers_associated_executor, pool_fixture) {
    auto mine = net::make_strand(io);
    bool on_mine = false;
    pool.async_stats(net::bind_executor(mine, [&](idlewheel::wheel_stats) { on_mine = mine.running_in_this_thread(); }));
    poll(io);
    BOOST_TEST(on_mine);
}

BOOST_FIXTURE_TEST_CASE(async_stats_sums_every_shard, pool_fixture) {
    // Shard i: i + 1 timeouts, of which one fires and (for i > 0) one is cancelled.
    std::vector<idlewheel::timeout> keep;
    for (std::size_t i = 0; i < pool.size(); ++i) {
        auto& s = pool[i];
        on_strand(io, s, [&, i] {
            s.wheel().schedule(10ms, [] {});
            for (std::size_t k = 0; k < i; ++k) keep.push_back(s.wheel().schedule(1h, [] {}));
            if (i > 0) keep.back().cancel();
        });
    }
    advance_and_poll(io, 30ms);
    idlewheel::wheel_stats expected;
    for (std::size_t i = 0; i < pool.size(); ++i) expected += pool[i].wheel().stats();  // no thread runs: allowed
    std::optional<idlewheel::wheel_stats> got;
    pool.async_stats([&](idlewheel::wheel_stats s) { got = s; });
    poll(io);
    BOOST_REQUIRE(got.has_value());
    BOOST_TEST(got->scheduled == 4U + (0U + 1U + 2U + 3U));
    BOOST_TEST(got->expired == 4U);
    BOOST_TEST(got->cancelled == 3U);
    BOOST_TEST(got->pending == 0U + 0U + 1U + 2U);
    BOOST_TEST(got->scheduled == expected.scheduled);
    BOOST_TEST(got->wakeups == expected.wakeups);
    BOOST_TEST(got->lateness_count == expected.lateness_count);
}

BOOST_AUTO_TEST_CASE(wheel_stats_add_counters_and_buckets_and_keep_the_worst_lateness) {
    idlewheel::wheel_stats a;
    a.pending = 1;
    a.scheduled = 2;
    a.rescheduled = 3;
    a.expired = 4;
    a.cancelled = 5;
    a.stopped = 6;
    a.rejected = 7;
    a.wakeups = 8;
    a.idle_wakeups = 9;
    a.ticks_advanced = 10;
    a.worst_lateness = 5ms;
    a.lateness_count[0] = 1;
    a.lateness_count.back() = 2;
    a.lateness_sum = 7ms;
    idlewheel::wheel_stats b = a;
    b.worst_lateness = 9ms;
    b.lateness_count[3] = 4;
    idlewheel::wheel_stats sum = a;
    sum += b;
    BOOST_TEST(sum.pending == 2U);
    BOOST_TEST(sum.scheduled == 4U);
    BOOST_TEST(sum.rescheduled == 6U);
    BOOST_TEST(sum.expired == 8U);
    BOOST_TEST(sum.cancelled == 10U);
    BOOST_TEST(sum.stopped == 12U);
    BOOST_TEST(sum.rejected == 14U);
    BOOST_TEST(sum.wakeups == 16U);
    BOOST_TEST(sum.idle_wakeups == 18U);
    BOOST_TEST(sum.ticks_advanced == 20U);
    BOOST_TEST((sum.worst_lateness == 9ms));
    BOOST_TEST(sum.lateness_count[0] == 2U);
    BOOST_TEST(sum.lateness_count[3] == 4U);
    BOOST_TEST(sum.lateness_count.back() == 4U);
    BOOST_TEST((sum.lateness_sum == 14ms));
    b += idlewheel::wheel_stats{};  // the neutral element
    BOOST_TEST((b.worst_lateness == 9ms));
}

BOOST_FIXTURE_TEST_CASE(async_stop_stops_every_shard_and_returns_what_never_ran, pool_fixture) {
    std::vector<idlewheel::timeout> handles;
    idlewheel::timer_node node{idlewheel::timer_callback{[](void*) {}, nullptr}};
    for (std::size_t i = 0; i < pool.size(); ++i) {
        auto& s = pool[i];
        on_strand(io, s, [&, i] {
            for (std::size_t k = 0; k <= i; ++k) handles.push_back(s.wheel().schedule(1s, [] {}));
            if (i == 2) s.wheel().schedule(node, 1s);
        });
    }
    std::optional<std::size_t> unrun;
    pool.async_stop([&](std::vector<idlewheel::timeout> v) {
        unrun = v.size();
        for (auto& t : v) BOOST_TEST(t.cancelled());
    });
    poll(io);
    BOOST_REQUIRE(unrun.has_value());
    BOOST_TEST(*unrun == 1U + 2U + 3U + 4U);  // the handles; the node is unscheduled, not returned
    BOOST_TEST(!node.pending());
    for (auto& h : handles) BOOST_TEST(h.cancelled());
    bool refused = false;
    on_strand(io, pool[1], [&] {
        try {
            pool[1].wheel().schedule(1s, [] {});
        } catch (const idlewheel::system_error& e) {
            refused = e.code() == idlewheel::error::stopped;
        }
    });
    BOOST_TEST(refused);
    advance_and_poll(io, 2s, 100ms);
}

// The shape the pool is for: one io_context run by more threads than cores, sessions on their
// shards' strands, each with an idle watch touched on every "message" and a deadline node
// re-armed and cancelled, connections churning. Every count is exact.
struct fake_session : std::enable_shared_from_this<fake_session> {
    fake_session(idlewheel::wheel_pool::shard& s, idlewheel::liveness_stats& st, std::atomic<int>& idles)
        : shard(s),
          watch(s.wheel(), idlewheel::bind_member<&fake_session::on_idle>(this), reader_idle(), &st),
          idle_count(idles) {}
    static idlewheel::idle_options reader_idle() {
        idlewheel::idle_options o;
        o.reader = 30ms;
        return o;
    }
    void on_idle(idlewheel::idle_kind, bool) {
        idle_count.fetch_add(1);
        watch.stop();
    }
    void start(int messages) {
        net::dispatch(shard.get_executor(), [self = shared_from_this(), messages] {
            self->watch.start();
            self->step(messages);
        });
    }
    void step(int left) {
        if (left == 0) return;  // goes quiet: the watch reports it idle
        watch.on_read();        // a message
        shard.wheel().schedule(deadline, 1s);
        net::post(shard.get_executor(), [self = shared_from_this(), left] {
            self->deadline.cancel();
            self->step(left - 1);
        });
    }
    idlewheel::wheel_pool::shard& shard;
    idlewheel::idle_watch watch;
    static inline std::atomic<int> deadlines_fired{0};
    idlewheel::timer_node deadline{idlewheel::timer_callback{[](void*) { deadlines_fired.fetch_add(1); }, nullptr}};
    std::atomic<int>& idle_count;
};

BOOST_AUTO_TEST_CASE(one_io_context_on_four_threads_with_sessions_on_shard_strands) {
    net::io_context io(4);
    idlewheel::wheel_pool pool(io, shards(8));
    idlewheel::per_shard<idlewheel::liveness_stats> stats(pool, [](auto&) { return idlewheel::liveness_stats(); });
    std::atomic<int> idles{0};
    constexpr int sessions = 400;
    auto work = net::make_work_guard(io);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&] { io.run(); });
    std::vector<std::shared_ptr<fake_session>> alive;  // until the threads are joined
    for (int i = 0; i < sessions; ++i) {
        auto& s = pool.next();
        alive.push_back(std::make_shared<fake_session>(s, stats[s], idles));
        alive.back()->start(i % 50);
    }
    const auto limit = std::chrono::steady_clock::now() + 30s;
    while (idles.load() < sessions && std::chrono::steady_clock::now() < limit) std::this_thread::sleep_for(5ms);
    BOOST_TEST(idles.load() == sessions);
    // The sums, each part read on its own strand.
    std::promise<idlewheel::liveness_stats> sum;
    auto parts = std::make_shared<std::vector<idlewheel::liveness_stats>>(pool.size());
    pool.async_for_each([&stats, parts](idlewheel::wheel_pool::shard& s) { (*parts)[s.index()] = stats[s]; },
                        [&sum, parts] {
                            idlewheel::liveness_stats total;
                            for (auto& p : *parts) total += p;
                            sum.set_value(total);
                        });
    BOOST_TEST(sum.get_future().get().reader_idle == static_cast<std::uint64_t>(sessions));
    std::promise<idlewheel::wheel_stats> wheel_sum;
    pool.async_stats([&](idlewheel::wheel_stats w) { wheel_sum.set_value(w); });
    const auto w = wheel_sum.get_future().get();
    BOOST_TEST(w.pending == 0U);
    std::uint64_t messages = 0;
    for (int i = 0; i < sessions; ++i) messages += static_cast<std::uint64_t>(i % 50);
    BOOST_TEST(w.cancelled >= messages);  // every deadline cancelled, none fired
    BOOST_TEST(fake_session::deadlines_fired.load() == 0);
    work.reset();
    for (auto& t : threads) t.join();
}

}  // namespace
