// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/per_shard.hpp>

// idlewheel::per_shard, from the header's contract: one T per shard of a wheel_pool, built in
// place (T need be neither copyable nor movable) by make(shard), called once per shard in
// index order on the calling thread, or as T(shard.wheel(), args...); found by index, by
// shard, or from a shard strand's executor (of(), which throws as shard_of() for any other).
// Included first, before wheel_pool.hpp: the header brings the pool itself.

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/pool_scene.hpp"

#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/manual_clock.hpp>

#define BOOST_TEST_MODULE per_shard
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using idlewheel::manual_clock;
using idlewheel::test::clock_reset;
using idlewheel::test::pool_scene::manual_pool;
using idlewheel::test::pool_scene::pool_fixture;
using idlewheel::test::pool_scene::shards;

}  // namespace

// Neither copyable nor movable: built in place from what make returns.
struct pinned {
    pinned(manual_pool::wheel_type& w, int v) : wheel(&w), value(v) {}
    pinned(const pinned&) = delete;
    pinned& operator=(const pinned&) = delete;
    manual_pool::wheel_type* wheel;
    int value;
};

BOOST_FIXTURE_TEST_CASE(per_shard_builds_one_in_place_for_each_shard, pool_fixture) {
    idlewheel::per_shard<pinned, manual_clock> made(pool, [](manual_pool::shard& s) {
        return pinned(s.wheel(), static_cast<int>(s.index()) * 10);
    });
    idlewheel::per_shard<pinned, manual_clock> forwarded(pool, 7);  // pinned(shard.wheel(), 7)
    BOOST_TEST(made.size() == pool.size());
    BOOST_TEST(&made.pool() == &pool);
    for (std::size_t i = 0; i < pool.size(); ++i) {
        BOOST_TEST(made[i].wheel == &pool[i].wheel());
        BOOST_TEST(made[i].value == static_cast<int>(i) * 10);
        BOOST_TEST(&made[pool[i]] == &made[i]);
        BOOST_TEST(&made.of(pool[i].get_executor()) == &made[i]);
        BOOST_TEST(forwarded[i].wheel == &pool[i].wheel());
        BOOST_TEST(forwarded[i].value == 7);
    }
    net::ip::tcp::socket elsewhere(net::make_strand(io));
    BOOST_CHECK_THROW((void)made.of(elsewhere.get_executor()), std::invalid_argument);
}


BOOST_FIXTURE_TEST_CASE(make_is_called_once_per_shard_in_index_order_on_the_calling_thread, pool_fixture) {
    std::vector<std::size_t> order;
    std::vector<std::thread::id> threads;
    idlewheel::per_shard<std::size_t, manual_clock> indexes(pool, [&](manual_pool::shard& s) {
        order.push_back(s.index());
        threads.push_back(std::this_thread::get_id());
        return s.index();
    });
    BOOST_TEST(order == (std::vector<std::size_t>{0, 1, 2, 3}), boost::test_tools::per_element());
    for (const auto& id : threads) BOOST_TEST((id == std::this_thread::get_id()));
    for (std::size_t i = 0; i < pool.size(); ++i) BOOST_TEST(indexes[i] == i);
}

BOOST_FIXTURE_TEST_CASE(one_liveness_stats_per_shard_as_the_header_shows, pool_fixture) {
    idlewheel::per_shard<idlewheel::liveness_stats, manual_clock> stats(pool,
                                                                        [](auto&) { return idlewheel::liveness_stats(); });
    BOOST_TEST(stats.size() == 4U);
    stats[pool[2]].dead_peers = 3;  // one shard's counters are its own
    BOOST_TEST(stats[2].dead_peers == 3U);
    BOOST_TEST(stats[1].dead_peers == 0U);
    BOOST_TEST(&stats.of(pool[3].get_executor()) == &stats[3]);
    BOOST_CHECK_THROW((void)stats.of(io.get_executor()), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_pool_of_one_shard) {
    clock_reset reset;
    net::io_context io;
    manual_pool pool{io, shards(1)};
    idlewheel::per_shard<int, manual_clock> one(pool, [](manual_pool::shard&) { return 5; });
    BOOST_TEST(one.size() == 1U);
    BOOST_TEST(one[0] == 5);
    BOOST_TEST(&one.of(pool[0].get_executor()) == &one[0]);
}
