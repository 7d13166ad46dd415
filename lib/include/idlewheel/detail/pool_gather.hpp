// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_POOL_GATHER_HPP
#define IDLEWHEEL_DETAIL_POOL_GATHER_HPP

// How wheel_pool reaches every shard from any thread (async_for_each, async_stats,
// async_stop): a function is posted to each shard's strand, a shared counter counts the shards
// that ran it, and the last one completes the handler as if by post, on the handler's
// associated executor (default: the io_context's), with work counted on that executor until
// then. The initiations take the shards (anything iterable whose elements have get_executor()
// and index()) and the io_context's executor; they know nothing else of the pool.

#include <idlewheel/detail/asio.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace idlewheel::detail {

// Completes `handler` as if by post, on its associated executor (default: the io_context's),
// with work counted on that executor until the completion is posted.
template <class Handler>
struct pool_completion {
    using work_type = decltype(net::prefer(
        std::declval<net::associated_executor_t<Handler, net::io_context::executor_type>>(),
        net::execution::outstanding_work.tracked));
    Handler handler;
    work_type work;

    pool_completion(Handler&& h, const net::io_context::executor_type& io)
        : handler(std::move(h)),
          work(net::prefer(net::get_associated_executor(handler, io), net::execution::outstanding_work.tracked)) {}

    void complete(const net::io_context::executor_type& io) { net::post(io, std::move(handler)); }
    template <class Arg>
    void complete(const net::io_context::executor_type& io, Arg&& arg) {
        net::post(io, handler_with_arg<Handler, std::decay_t<Arg>>{std::move(handler), std::forward<Arg>(arg)});
    }
};

// Posts `st->run(shard)` to every shard's strand; the last shard to finish calls
// `st->finish(io)`. State has an std::atomic<std::size_t> `left`, set to the number of shards.
template <class Shards, class State>
void post_to_every_shard(Shards& shards, const std::shared_ptr<State>& st, const net::io_context::executor_type& io) {
    for (auto& s : shards) {
        net::post(s.get_executor(), [st, &s, io] {
            st->run(s);
            if (st->left.fetch_sub(1, std::memory_order_acq_rel) == 1) st->finish(io);
        });
    }
}

// async_for_each: f(shard&) on every shard's strand, then void().
template <class Shards>
struct initiate_pool_for_each {
    Shards* shards;
    net::io_context::executor_type io;

    template <class Handler, class F>
    void operator()(Handler&& handler, F f) const {
        struct state {
            state(Handler&& h, F fn, const net::io_context::executor_type& ex, std::size_t n)
                : done(std::move(h), ex), f(std::move(fn)), left(n) {}
            void run(typename Shards::value_type& s) { f(s); }
            void finish(const net::io_context::executor_type& ex) { done.complete(ex); }
            pool_completion<std::decay_t<Handler>> done;
            F f;
            std::atomic<std::size_t> left;
        };
        auto st = std::make_shared<state>(std::forward<Handler>(handler), std::move(f), io, shards->size());
        post_to_every_shard(*shards, st, io);
    }
};

// One Result per shard, Op::get(shard&) on its own strand into its own slot, summed with
// Op::add(sum, part) by the last to finish; then void(Result).
template <class Shards, class Result, class Op>
struct initiate_pool_gather {
    Shards* shards;
    net::io_context::executor_type io;

    template <class Handler>
    void operator()(Handler&& handler) const {
        struct state {
            state(Handler&& h, const net::io_context::executor_type& ex, std::size_t n)
                : done(std::move(h), ex), parts(n), left(n) {}
            void run(typename Shards::value_type& s) { parts[s.index()] = Op::get(s); }
            void finish(const net::io_context::executor_type& ex) {
                Result sum{};
                for (auto& p : parts) Op::add(sum, std::move(p));
                done.complete(ex, std::move(sum));
            }
            pool_completion<std::decay_t<Handler>> done;
            std::vector<Result> parts;
            std::atomic<std::size_t> left;
        };
        auto st = std::make_shared<state>(std::forward<Handler>(handler), io, shards->size());
        post_to_every_shard(*shards, st, io);
    }
};

// The two gathers of wheel_pool: every wheel's stats (summed with +=), every wheel's stop()
// (the unrun timeouts, concatenated).
struct pool_stats_of {
    template <class Shard>
    static auto get(Shard& s) { return s.wheel().stats(); }
    template <class Stats>
    static void add(Stats& sum, Stats&& part) { sum += part; }
};
struct pool_stop_of {
    template <class Shard>
    static auto get(Shard& s) { return s.wheel().stop(); }
    template <class Timeouts>
    static void add(Timeouts& sum, Timeouts&& part) {
        for (auto& t : part) sum.push_back(std::move(t));
    }
};

}  // namespace idlewheel::detail

#endif
