// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// 1.0's <idlewheel/beast/websocket_liveness.hpp> brought wheel_pool and per_shard with it (the
// examples' one-config-per-shard pattern): code that includes only it must still compile
// (compiled only, as C++17).
#include <idlewheel/beast/websocket_liveness.hpp>

#include <cstddef>

std::size_t compat_websocket_liveness(idlewheel::wheel_pool& pool) {
    idlewheel::per_shard<int> counts(pool, [](idlewheel::wheel_pool::shard& s) { return static_cast<int>(s.index()); });
    return counts.size() + pool.size();
}
