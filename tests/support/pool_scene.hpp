// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_POOL_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_POOL_SCENE_HPP

// A wheel_pool of four shards on the manual clock (test_wheel_pool.cpp, test_per_shard.cpp).

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_pool.hpp>

#include "manual_io.hpp"
#include "net.hpp"

#include <cstddef>

namespace idlewheel::test::pool_scene {

using manual_pool = basic_wheel_pool<manual_clock>;

inline wheel_pool_options shards(std::size_t n) {
    wheel_pool_options o;
    o.shards = n;
    return o;
}

struct pool_fixture : clock_reset {
    net::io_context io;
    manual_pool pool{io, shards(4)};
};

}  // namespace idlewheel::test::pool_scene

#endif
