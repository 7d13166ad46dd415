// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// libuv, one uv_timer_t per connection (embedded, as libuv intends: no allocation per timer;
// the loop keeps active timers in an intrusive binary heap). Touch is uv_timer_start() on an
// active timer (it stops and restarts it). libuv computes deadlines from the loop's cached
// time, so no clock is read per operation; nothing here leaves work for the loop, so the loop
// does not run during schedule+cancel and touch.

#include "harness.hpp"

#include <uv.h>

#include <memory>
#include <stdexcept>

namespace bench {
namespace {

std::uint64_t ms(std::chrono::milliseconds d) { return static_cast<std::uint64_t>(d.count()); }

void on_timer(uv_timer_t* t) { ++*static_cast<std::uint64_t*>(t->data); }

// A loop with N timers; the destructor closes every handle and the loop.
struct uv_timers {
    uv_timers(std::size_t n, std::uint64_t* counter) : timers(n) {
        if (uv_loop_init(&loop) != 0) throw std::runtime_error("uv_loop_init failed");
        for (auto& t : timers) {
            uv_timer_init(&loop, &t);
            t.data = counter;
        }
    }
    uv_timers(const uv_timers&) = delete;
    uv_timers& operator=(const uv_timers&) = delete;
    ~uv_timers() {
        for (auto& t : timers) uv_close(reinterpret_cast<uv_handle_t*>(&t), nullptr);
        uv_run(&loop, UV_RUN_DEFAULT);  // finishes the closes
        uv_loop_close(&loop);
    }
    uv_loop_t loop{};
    object_array<uv_timer_t> timers;
};

struct libuv_background {
    explicit libuv_background(std::size_t n) : uv(n, &fired), order(n) {
        uv_timer_init(&uv.loop, &op);
        op.data = &fired;
        background_delays d;
        for (auto& t : uv.timers) uv_timer_start(&t, &on_timer, ms(d.next()), 0);
    }
    ~libuv_background() { uv_close(reinterpret_cast<uv_handle_t*>(&op), nullptr); }
    libuv_background(const libuv_background&) = delete;
    libuv_background& operator=(const libuv_background&) = delete;

    std::uint64_t fired = 0;
    uv_timers uv;
    uv_timer_t op{};
    scattered_order order;
};

void schedule_cancel(benchmark::State& st) {
    auto& s = cached_background::get<libuv_background>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        uv_timer_start(&s.op, &on_timer, ms(op_delay), 0);
        uv_timer_stop(&s.op);
    }
}

void touch(benchmark::State& st) {
    auto& s = cached_background::get<libuv_background>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) uv_timer_start(&s.uv.timers[s.order.next()], &on_timer, ms(op_delay), 0);
}

spent expire_round(std::size_t n) {
    std::uint64_t fired = 0;
    uv_timers uv(n, &fired);
    uv_update_time(&uv.loop);  // every deadline = this cached time + lead: one instant for all
    const auto armed_at = expire_plan::clock::now();
    for (auto& t : uv.timers) uv_timer_start(&t, &on_timer, ms(expire_plan::lead), 0);
    expire_plan::wait_until_due(armed_at + expire_plan::lead);
    const spent s = timed([&] { uv_run(&uv.loop, UV_RUN_DEFAULT); });  // returns when no timer is active
    if (fired != n) throw std::runtime_error("libuv expire: not every callback ran");
    return s;
}

void memory(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0;
        auto f0 = alloc_count::start();
        auto loop = std::make_unique<uv_loop_t>();
        uv_loop_init(loop.get());
        const auto fixed = alloc_count::stop(f0);
        auto w0 = alloc_count::start();
        auto timers = std::make_unique<object_array<uv_timer_t>>(n);
        for (auto& t : *timers) {
            uv_timer_init(loop.get(), &t);
            t.data = &fired;
            uv_timer_start(&t, &on_timer, ms(far_delay), 0);
        }
        const auto window = alloc_count::stop(w0);
        report_memory(st, n, fixed, window, sizeof(uv_timer_t));
        for (auto& t : *timers) uv_close(reinterpret_cast<uv_handle_t*>(&t), nullptr);
        uv_run(loop.get(), UV_RUN_DEFAULT);
        uv_loop_close(loop.get());
    }
}

void idle(benchmark::State& st, std::chrono::milliseconds window) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0;
        uv_timers uv(n, &fired);
        for (auto& t : uv.timers) uv_timer_start(&t, &on_timer, ms(far_delay), 0);
        uv_async_t stop{};
        uv_async_init(&uv.loop, &stop, [](uv_async_t* a) { uv_stop(a->loop); });
        const idle_result r =
            probe_idle([&] { uv_run(&uv.loop, UV_RUN_DEFAULT); }, [&] { uv_async_send(&stop); }, window);
        report_idle(st, r);
        if (fired != 0) st.SetLabel("a callback ran while idle");
        uv_close(reinterpret_cast<uv_handle_t*>(&stop), nullptr);
        uv_run(&uv.loop, UV_RUN_NOWAIT);  // finishes that close while `stop` still exists
    }
}

}  // namespace

void register_libuv(const bench_options& o) {
    add_case(family::schedule_cancel, "libuv", schedule_cancel);
    add_case(family::touch, "libuv", touch);
    add_case(family::expire, "libuv", [](benchmark::State& st) { run_expire(st, expire_round); });
    add_case(family::memory, "libuv", memory);
    const auto window = o.idle_window;
    add_case(family::idle, "libuv", [window](benchmark::State& st) { idle(st, window); });
}

}  // namespace bench
