// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/liveness_stats.hpp>

// idlewheel::liveness_stats, from the header's contract: plain counters, all zero at first,
// summed with += (a pool's sum of its shards); close_timeouts is the last member, so that an
// aggregate initialization written for 1.0 (seven counters) keeps its meaning. Which object
// counts what is tested with each liveness object (test_idle_watch.cpp, test_heartbeat.cpp,
// test_operation_deadline.cpp, test_session_liveness.cpp).

#define BOOST_TEST_MODULE liveness_stats
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

BOOST_AUTO_TEST_CASE(plain_counters_all_zero_at_first) {
    static_assert(std::is_aggregate_v<idlewheel::liveness_stats>);
    static_assert(std::is_trivially_copyable_v<idlewheel::liveness_stats>);
    static_assert(sizeof(idlewheel::liveness_stats) == 8 * sizeof(std::uint64_t), "eight counters");
    const idlewheel::liveness_stats s;
    BOOST_TEST(s.reader_idle == 0U);
    BOOST_TEST(s.writer_idle == 0U);
    BOOST_TEST(s.all_idle == 0U);
    BOOST_TEST(s.pings_sent == 0U);
    BOOST_TEST(s.dead_peers == 0U);
    BOOST_TEST(s.handshake_timeouts == 0U);
    BOOST_TEST(s.operation_timeouts == 0U);
    BOOST_TEST(s.close_timeouts == 0U);
}

BOOST_AUTO_TEST_CASE(liveness_stats_add) {
    idlewheel::liveness_stats a{1, 2, 3, 4, 5, 6, 7, 8};
    idlewheel::liveness_stats b{10, 20, 30, 40, 50, 60, 70, 80};
    a += b;
    BOOST_TEST(a.reader_idle == 11U);
    BOOST_TEST(a.writer_idle == 22U);
    BOOST_TEST(a.all_idle == 33U);
    BOOST_TEST(a.pings_sent == 44U);
    BOOST_TEST(a.dead_peers == 55U);
    BOOST_TEST(a.handshake_timeouts == 66U);
    BOOST_TEST(a.operation_timeouts == 77U);
    BOOST_TEST(a.close_timeouts == 88U);
}

BOOST_AUTO_TEST_CASE(an_initialization_written_for_1_0_keeps_its_meaning) {
    // 1.0 had seven counters, in this order; close_timeouts came after them.
    const idlewheel::liveness_stats s{1, 2, 3, 4, 5, 6, 7};
    BOOST_TEST(s.reader_idle == 1U);
    BOOST_TEST(s.writer_idle == 2U);
    BOOST_TEST(s.all_idle == 3U);
    BOOST_TEST(s.pings_sent == 4U);
    BOOST_TEST(s.dead_peers == 5U);
    BOOST_TEST(s.handshake_timeouts == 6U);
    BOOST_TEST(s.operation_timeouts == 7U);
    BOOST_TEST(s.close_timeouts == 0U);
}

BOOST_AUTO_TEST_CASE(plus_equals_returns_itself_chains_and_adds_itself) {
    static_assert(noexcept(std::declval<idlewheel::liveness_stats&>() += idlewheel::liveness_stats{}));
    idlewheel::liveness_stats sum;
    const idlewheel::liveness_stats one{1, 1, 1, 1, 1, 1, 1, 1};
    BOOST_TEST(&(sum += one) == &sum);
    (sum += one) += one;
    BOOST_TEST(sum.close_timeouts == 3U);
    BOOST_TEST(sum.reader_idle == 3U);
    sum += sum;  // a shard added to itself counts twice
    BOOST_TEST(sum.dead_peers == 6U);
    BOOST_TEST(sum.operation_timeouts == 6U);
    sum += idlewheel::liveness_stats{};  // the neutral element
    BOOST_TEST(sum.pings_sent == 6U);
}

