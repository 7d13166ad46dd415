// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_WHEEL_POOL_HPP
#define IDLEWHEEL_WHEEL_POOL_HPP

/** @file
 * @brief idlewheel::wheel_pool: wheels for ONE io_context run by N threads.
 *
 * per_shard has its own header, idlewheel/per_shard.hpp, which this header includes at its
 * end: code that includes only this header and uses per_shard compiles.
 */

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/detail/pool_gather.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace idlewheel {

/// Construction options of a wheel_pool.
struct wheel_pool_options {
    /// Number of shards (wheels, each on a strand of its own). 0: four per hardware thread
    /// (std::thread::hardware_concurrency(), at least one).
    std::size_t shards = 0;
    /// The options of every shard's wheel.
    wheel_options wheel{};
};

/**
 * Wheels for ONE io_context run by N threads (the threading of Beast's own example servers:
 * `net::io_context ioc{threads}`, a strand per session). idlewheel::wheel_pool is
 * `basic_wheel_pool<std::chrono::steady_clock>`.
 *
 * @tparam Clock the clock of every shard's wheel.
 *
 * @par Overview
 * A wheel is not thread-safe, and must not be: its hot paths are plain stores. So the pool
 * shards: it holds S wheels, each on a strand of its own (a shard). A session is given a shard
 * where a Beast server calls `net::make_strand(ioc)`, and builds its I/O objects on the
 * shard's executor, so its handlers run on the shard's strand: the same strand as its wheel.
 * A touch stays a store, and every verdict (ping, idle close, drop, the session's hook)
 * already runs on the session's strand. The same split as tokio's per-worker timers,
 * seastar's shards and folly's wheel per EventBase, done with Asio strands.
 *
 *     net::io_context ioc{threads};
 *     idlewheel::wheel_pool pool(ioc);                      // 4 x hardware threads shards
 *     // accept: the connection gets a shard's strand, as it would get net::make_strand(ioc);
 *     // the handler hands the session that shard (its wheel, its per_shard config) with the socket
 *     auto& shard = pool.next();
 *     acceptor.async_accept(shard.get_executor(), [&shard](error_code ec, tcp::socket s) { ... });
 *     // or, from an I/O object built on a shard's executor (scans the shards):
 *     idlewheel::wheel_timer& wheel = pool.shard_of(socket.get_executor()).wheel();
 *
 * Every wheel of the pool is a plain wheel_timer (handles, nodes, async_wait, cancel_after,
 * repeating_timer, every liveness object work unchanged), with the rule every wheel has: use
 * it on its executor, here its shard's strand. Debug builds catch a call from anywhere else
 * (a session on a strand of its own, another shard's strand) and abort with what to do
 * (detail/executor_check.hpp). A session that keeps a private strand is not supported: its
 * liveness would have to cross strands on every touch; build its I/O objects on a shard's
 * executor instead (that executor IS a strand, exactly as net::make_strand would give it).
 *
 * @par Assignment
 * Assignment is round robin (one relaxed atomic increment per next(), from any thread): with
 * S shards and T threads, each thread finds a shard's strand busy with another thread's work
 * only rarely when S is a few times T (the default, 4 x hardware threads), and sessions of
 * like lifetimes spread evenly (bench/results/2026-11-25-wheel-pool.md measures the
 * imbalance). Shards are not pinned to threads: any thread of the io_context runs any
 * strand, so one busy shard never leaves a thread idle while the others have work.
 *
 * @par Thread safety
 * Across shards: next(), shard_of(), operator[], size() and the shards' get_executor() are
 * safe from any thread. Everything else of a shard (its wheel, whatever lives on it) belongs to
 * its strand: reach it with async_for_each (stats, drain, stop), which runs a function on every
 * shard's strand and completes when all have run. Destroy the pool when no handler of its
 * strands can run any more (after the io_context's threads returned from run()), and after
 * everything that uses its wheels.
 */
template <class Clock>
class basic_wheel_pool {
public:
    using clock_type = Clock;  ///< The clock of the wheels.
    /// The executor of a shard: a strand of the io_context, of the type net::make_strand(ioc)
    /// returns.
    using executor_type = net::strand<net::io_context::executor_type>;
    using wheel_type = basic_wheel_timer<Clock>;  ///< A shard's wheel (on executor_type).

    /// One wheel on one strand.
    class alignas(64) shard {
    public:
        /// The strand: build the session's socket / stream on it (for example async_accept(ex, ...)).
        [[nodiscard]] const executor_type& get_executor() const noexcept { return strand_; }
        /// The wheel: use it on get_executor() only.
        [[nodiscard]] wheel_type& wheel() noexcept { return wheel_; }
        /// The wheel (const): use it on get_executor() only.
        [[nodiscard]] const wheel_type& wheel() const noexcept { return wheel_; }
        /// 0 .. size() - 1.
        [[nodiscard]] std::size_t index() const noexcept { return index_; }

        /// A new strand of `io` and a wheel on it (the pool makes its shards).
        /// @param io the io_context.
        /// @param index its index in the pool.
        /// @param options the wheel's options.
        /// @throws std::invalid_argument for invalid options.
        shard(net::io_context& io, std::size_t index, const wheel_options& options)
            : strand_(net::make_strand(io)), wheel_(typename wheel_type::executor_type(strand_), options), index_(index) {}
        shard(const shard&) = delete;             ///< Not copyable (nor movable).
        shard& operator=(const shard&) = delete;  ///< Not copyable (nor movable).

    private:
        executor_type strand_;
        wheel_type wheel_;
        std::size_t index_;
    };

    /// Makes the shards (no thread, nothing armed until used).
    /// @param io the io_context every shard's strand belongs to.
    /// @param options shards (0: four per hardware thread) and every wheel's options.
    /// @throws std::invalid_argument for invalid wheel options.
    explicit basic_wheel_pool(net::io_context& io, const wheel_pool_options& options = wheel_pool_options())
        : io_(io.get_executor()) {
        const std::size_t n = options.shards != 0 ? options.shards : default_shards();
        for (std::size_t i = 0; i < n; ++i) shards_.emplace_back(io, i, options.wheel);
    }

    basic_wheel_pool(const basic_wheel_pool&) = delete;             ///< Not copyable (nor movable).
    basic_wheel_pool& operator=(const basic_wheel_pool&) = delete;  ///< Not copyable (nor movable).

    /// The number of shards. Any thread.
    [[nodiscard]] std::size_t size() const noexcept { return shards_.size(); }
    /// Shard `i` (unchecked: i < size()). Any thread.
    /// @param i the index.
    /// @return the shard.
    [[nodiscard]] shard& operator[](std::size_t i) noexcept { return shards_[i]; }
    /// Shard `i` (const; unchecked: i < size()). Any thread.
    /// @param i the index.
    /// @return the shard.
    [[nodiscard]] const shard& operator[](std::size_t i) const noexcept { return shards_[i]; }

    /// The shard for a new session, round robin. Any thread.
    [[nodiscard]] shard& next() noexcept { return shards_[next_.fetch_add(1, std::memory_order_relaxed) % size()]; }

    /// The shard whose strand `ex` is (the executor of a socket accepted on a shard's
    /// executor, or of a stream built on it), or nullptr. Any thread; O(size()).
    /// @param ex a shard's strand, as executor_type or wrapped in net::any_io_executor, or an
    /// executor derived from either (use_awaitable_t<>::executor_with_default<any_io_executor>,
    /// the executor of a stream made with rebind_executor or as_default_on); any other
    /// executor type finds nothing.
    /// @return the shard, or nullptr.
    template <class Executor>
    [[nodiscard]] shard* find(const Executor& ex) noexcept {
        const executor_type* strand = nullptr;
        // The strand itself, or an executor derived from it or from any_io_executor
        // (use_awaitable_t<>::executor_with_default<...>, as_default_on's executors).
        if constexpr (std::is_base_of_v<executor_type, Executor>) {
            strand = &static_cast<const executor_type&>(ex);
        } else if constexpr (std::is_base_of_v<net::any_io_executor, Executor>) {
            strand = static_cast<const net::any_io_executor&>(ex).template target<executor_type>();
        }
        if (strand == nullptr) return nullptr;
        for (auto& s : shards_)
            if (s.get_executor() == *strand) return &s;
        return nullptr;
    }

    /// As find(), for an executor that must be a shard's.
    /// @param ex the executor.
    /// @return the shard.
    /// @throws std::invalid_argument if it is not (an I/O object not built on a shard's executor).
    template <class Executor>
    [[nodiscard]] shard& shard_of(const Executor& ex) {
        if (shard* s = find(ex)) return *s;
        throw std::invalid_argument(
            "idlewheel::wheel_pool::shard_of: not the executor of one of the pool's shards (build the session's "
            "socket on pool.next().get_executor())");
    }

    /// Runs `f(shard&)` on every shard's strand (posted, never inline), then completes with
    /// void(): after every `f` has returned, on the handler's associated executor (default:
    /// the io_context's). `f` is copied once and shared; the calls may run concurrently on
    /// different threads, so what `f` writes must be per shard (e.g. indexed by
    /// shard.index()) or synchronised. `f` must not throw: an exception leaves that thread's
    /// run() and the completion never comes. Any thread; any completion token.
    /// Per-operation cancellation: not supported (the handler's cancellation slot is not used).
    /// @param f called as f(shard&) on each shard's strand.
    /// @param token the completion token, for the signature void().
    /// @return what the token's async_result makes of it.
    template <class F, class Token>
    auto async_for_each(F f, Token&& token) {
        return net::async_initiate<Token, void()>(detail::initiate_pool_for_each<shards_type>{&shards_, io_}, token, std::move(f));
    }

    /// The sum of every shard's wheel_stats (wheel_stats::operator+=), read on each shard's
    /// strand. Completion: void(wheel_stats), as async_for_each's (on the handler's associated
    /// executor, default the io_context's). Any thread; no per-operation cancellation.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class Token>
    auto async_stats(Token&& token) {
        return net::async_initiate<Token, void(wheel_stats)>(
            detail::initiate_pool_gather<shards_type, wheel_stats, detail::pool_stats_of>{&shards_, io_}, token);
    }

    /// Stops every shard's wheel on its own strand (wheel_timer::stop()). Completion:
    /// void(std::vector<timeout>): every shard's schedule() timeouts that never ran, on the
    /// handler's associated executor (default the io_context's). Any thread; no per-operation
    /// cancellation.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class Token>
    auto async_stop(Token&& token) {
        return net::async_initiate<Token, void(std::vector<timeout>)>(
            detail::initiate_pool_gather<shards_type, std::vector<timeout>, detail::pool_stop_of>{&shards_, io_}, token);
    }

private:
    static std::size_t default_shards() noexcept {
        const unsigned hw = std::thread::hardware_concurrency();
        return 4 * static_cast<std::size_t>(hw != 0 ? hw : 1);
    }

    using shards_type = std::deque<shard>;

    net::io_context::executor_type io_;
    shards_type shards_;  // a deque: shards never move (strands and wheels are not movable)
    std::atomic<std::size_t> next_{0};
};

/// The pool on std::chrono::steady_clock.
using wheel_pool = basic_wheel_pool<std::chrono::steady_clock>;

}  // namespace idlewheel

// per_shard (one T per shard of a pool) has its own header; it is included here so that code
// including only this header keeps compiling.
#include <idlewheel/per_shard.hpp>

#endif
