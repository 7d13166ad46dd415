// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_PER_SHARD_HPP
#define IDLEWHEEL_PER_SHARD_HPP

/** @file
 * @brief idlewheel::per_shard: one object per shard of a wheel_pool.
 *
 * idlewheel/wheel_pool.hpp includes this header at its end, so code that includes only
 * wheel_pool.hpp and uses per_shard keeps compiling; this header includes wheel_pool.hpp
 * (either may come first).
 */

#include <idlewheel/wheel_pool.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <type_traits>

namespace idlewheel {

/// One T per shard of a pool (the liveness config, the liveness_stats, a session list of each
/// shard), each made by `make(shard&)` and used on that shard's strand. T need be neither
/// copyable nor movable: `make` returns it by value and it is built in place.
///
///     idlewheel::per_shard<liveness_config> configs(pool, options);  // liveness_config(shard.wheel(), options)
///     idlewheel::per_shard<idlewheel::liveness_stats> stats(pool, [](auto&) { return idlewheel::liveness_stats(); });
///     live_(configs[shard], *this, ws_)  // in the session's constructor, given the shard of the accept
///     live_(configs.of(ws_.get_executor()), *this, ws_)  // or found again from the executor (a scan)
template <class T, class Clock = std::chrono::steady_clock>
class per_shard {
public:
    using value_type = T;                       ///< The per-shard type.
    using pool_type = basic_wheel_pool<Clock>;  ///< The pool.

    /// Each T is `make(shard)`.
    /// @param pool the pool; must outlive this object.
    /// @param make called once per shard, in index order, on the calling thread.
    template <class Make, std::enable_if_t<std::is_invocable_v<Make&, typename pool_type::shard&>, int> = 0>
    per_shard(pool_type& pool, Make make) : pool_(pool) {
        for (std::size_t i = 0; i < pool.size(); ++i) items_.emplace_back(make, pool[i]);
    }

    /// Each T is `T(shard.wheel(), args...)` (a liveness config: the wheel, then the options).
    /// @param pool the pool; must outlive this object.
    /// @param args the arguments after the wheel.
    template <class... Args, std::enable_if_t<std::is_constructible_v<T, typename pool_type::wheel_type&, const Args&...>, int> = 0>
    per_shard(pool_type& pool, const Args&... args)
        : per_shard(pool, [&](typename pool_type::shard& s) { return T(s.wheel(), args...); }) {}

    /// The T of shard `i` (unchecked).
    /// @param i the index.
    /// @return the T.
    [[nodiscard]] T& operator[](std::size_t i) noexcept { return items_[i].value; }
    /// The T of shard `s`.
    /// @param s a shard of the pool.
    /// @return the T.
    [[nodiscard]] T& operator[](const typename pool_type::shard& s) noexcept { return items_[s.index()].value; }
    /// The T of the shard whose strand `ex` is.
    /// @param ex the executor.
    /// @return the T.
    /// @throws std::invalid_argument as shard_of().
    template <class Executor>
    [[nodiscard]] T& of(const Executor& ex) {
        return items_[pool_.shard_of(ex).index()].value;
    }
    /// The number of Ts (the pool's size()).
    [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
    /// The pool.
    [[nodiscard]] pool_type& pool() const noexcept { return pool_; }

private:
    struct holder {
        template <class Make>
        holder(Make& make, typename pool_type::shard& s) : value(make(s)) {}
        T value;
    };
    pool_type& pool_;
    std::deque<holder> items_;
};

}  // namespace idlewheel

#endif
