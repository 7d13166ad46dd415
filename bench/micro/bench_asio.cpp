// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// asio_steady_timer: one boost::asio::steady_timer per connection, the way an Asio server
// watches idleness without idlewheel. Every (re-)arm is expires_after() + async_wait();
// expires_after() on an armed timer aborts the pending wait, whose handler must then run
// (with operation_aborted) before its operation's memory is recycled. The io_context is
// polled once every ops_per_turn(N) operations, and that poll (running the aborted handlers,
// and one epoll_wait of the reactor) is part of the measured time.
// io_context(1): the concurrency hint of a one-thread-per-io_context server.

#include "harness.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <stdexcept>

namespace bench {
namespace {

namespace asio = boost::asio;

struct wait_handler {
    std::uint64_t* fired;
    std::uint64_t* aborted;
    void operator()(const boost::system::error_code& ec) const { ++*(ec ? aborted : fired); }
};

void poll(asio::io_context& io) {
    if (io.stopped()) io.restart();
    io.poll();
}

struct asio_background {
    explicit asio_background(std::size_t n) : timers(n, io), order(n), per_turn(ops_per_turn(n)) {
        background_delays d;
        for (auto& t : timers) {
            t.expires_after(d.next());
            t.async_wait(handler());
        }
    }
    wait_handler handler() { return {&fired, &aborted}; }
    // Counts an operation; every per_turn-th one runs the loop.
    void turn() {
        if (++in_turn == per_turn) {
            in_turn = 0;
            poll(io);
        }
    }
    std::uint64_t fired = 0, aborted = 0;
    asio::io_context io{1};
    object_array<asio::steady_timer> timers;
    asio::steady_timer op{io};
    scattered_order order;
    std::size_t per_turn;
    std::size_t in_turn = 0;
};

void schedule_cancel(benchmark::State& st) {
    auto& s = cached_background::get<asio_background>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        s.op.expires_after(op_delay);
        s.op.async_wait(s.handler());
        s.op.cancel();
        s.turn();
    }
    poll(s.io);  // the last turn's aborted handlers
    st.counters["ops_per_turn"] = benchmark::Counter(static_cast<double>(s.per_turn));
}

void touch(benchmark::State& st) {
    auto& s = cached_background::get<asio_background>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        asio::steady_timer& t = s.timers[s.order.next()];
        t.expires_after(op_delay);  // aborts the pending wait
        t.async_wait(s.handler());
        s.turn();
    }
    poll(s.io);
    st.counters["ops_per_turn"] = benchmark::Counter(static_cast<double>(s.per_turn));
}

spent expire_round(std::size_t n) {
    std::uint64_t fired = 0, aborted = 0;
    asio::io_context io{1};
    object_array<asio::steady_timer> timers(n, io);
    expire_plan plan;
    for (auto& t : timers) {
        t.expires_at(plan.due);
        t.async_wait(wait_handler{&fired, &aborted});
    }
    expire_plan::wait_until_due(std::max(plan.due, expire_plan::clock::now()));
    const spent s = timed([&] { io.run(); });
    if (fired != n) throw std::runtime_error("asio expire: not every handler ran");
    return s;
}

void memory(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0, aborted = 0;
        auto f0 = alloc_count::start();
        auto io = std::make_unique<asio::io_context>(1);
        const auto fixed = alloc_count::stop(f0);
        auto w0 = alloc_count::start();
        auto timers = std::make_unique<object_array<asio::steady_timer>>(n, *io);
        for (auto& t : *timers) {
            t.expires_after(far_delay);
            t.async_wait(wait_handler{&fired, &aborted});
        }
        const auto window = alloc_count::stop(w0);
        report_memory(st, n, fixed, window, sizeof(asio::steady_timer));
        timers.reset();
        io.reset();
    }
}

void idle(benchmark::State& st, std::chrono::milliseconds window) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0, aborted = 0;
        asio::io_context io{1};
        object_array<asio::steady_timer> timers(n, io);
        for (auto& t : timers) {
            t.expires_after(far_delay);
            t.async_wait(wait_handler{&fired, &aborted});
        }
        const idle_result r = probe_idle([&] { io.run(); }, [&] { io.stop(); }, window);
        report_idle(st, r);
        if (fired + aborted != 0) st.SetLabel("a handler ran while idle");
    }
}

}  // namespace

void register_asio(const bench_options& o) {
    add_case(family::schedule_cancel, "asio_steady_timer", schedule_cancel);
    add_case(family::touch, "asio_steady_timer", touch);
    add_case(family::expire, "asio_steady_timer", [](benchmark::State& st) { run_expire(st, expire_round); });
    add_case(family::memory, "asio_steady_timer", memory);
    const auto window = o.idle_window;
    add_case(family::idle, "asio_steady_timer", [window](benchmark::State& st) { idle(st, window); });
}

}  // namespace bench
