// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// per_shard moved to <idlewheel/per_shard.hpp>; code that includes only wheel_pool.hpp and
// uses it must still compile (compiled only, as C++17).
#include <idlewheel/wheel_pool.hpp>

#include <cstddef>

std::size_t compat_wheel_pool(idlewheel::wheel_pool& pool) {
    idlewheel::per_shard<int> counts(pool, [](idlewheel::wheel_pool::shard& s) { return static_cast<int>(s.index()); });
    return counts.size();
}
