// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// libevent 2.1, one evtimer (event_new with fd -1) per connection:
//  - libevent:        plain timeouts: a min-heap of every pending event;
//  - libevent_common: event_base_init_common_timeout(), libevent's optimisation for many
//    timeouts of one duration: a FIFO queue per duration, only its head in the heap. Every
//    timeout must then have that duration, so this contender's background is N timeouts of
//    the common 30 s (not spread over [15 s, 30 s]), and its expire round arms them relative
//    to the moment of arming.
// Touch is event_add() on a pending event, which moves it. No libevent operation here leaves
// work for the loop, so the loop does not run during schedule+cancel and touch.
// Single-threaded base (no evthread locking), epoll backend, default (coarse) monotonic clock.

#include "harness.hpp"

#include <event2/event.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace bench {
namespace {

timeval to_timeval(std::chrono::microseconds d) {
    timeval tv{};
    tv.tv_sec = static_cast<decltype(tv.tv_sec)>(d.count() / 1'000'000);
    tv.tv_usec = static_cast<decltype(tv.tv_usec)>(d.count() % 1'000'000);
    return tv;
}

void on_timer(evutil_socket_t, short, void* counter) { ++*static_cast<std::uint64_t*>(counter); }

struct base_deleter {
    void operator()(event_base* b) const noexcept { event_base_free(b); }
};
using base_ptr = std::unique_ptr<event_base, base_deleter>;

// N timer events on a base, freed (and so unscheduled) before the base.
struct timer_events {
    timer_events(event_base* base, std::size_t n, std::uint64_t* counter) {
        events.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            event* e = evtimer_new(base, &on_timer, counter);
            if (e == nullptr) throw std::runtime_error("evtimer_new failed");
            events.push_back(e);
        }
    }
    timer_events(const timer_events&) = delete;
    timer_events& operator=(const timer_events&) = delete;
    ~timer_events() {
        for (event* e : events) event_free(e);
    }
    std::vector<event*> events;
};

base_ptr new_base() {
    base_ptr b(event_base_new());
    if (!b) throw std::runtime_error("event_base_new failed");
    return b;
}

// The timeval to arm for `d`: the duration itself, or the base's common timeout of it.
const timeval* timeout_for(event_base* base, std::chrono::microseconds d, bool common, timeval& storage) {
    storage = to_timeval(d);
    if (!common) return &storage;
    const timeval* ct = event_base_init_common_timeout(base, &storage);
    if (ct == nullptr) throw std::runtime_error("event_base_init_common_timeout failed");
    return ct;
}

template <bool Common>
struct libevent_background {
    explicit libevent_background(std::size_t n) : base(new_base()), events(base.get(), n, &fired), order(n) {
        op = evtimer_new(base.get(), &on_timer, &fired);
        op_tv = timeout_for(base.get(), op_delay, Common, op_storage);
        background_delays d;
        for (event* e : events.events) {
            timeval tv = to_timeval(d.next());
            if (event_add(e, Common ? op_tv : &tv) != 0) throw std::runtime_error("event_add failed");
        }
    }
    ~libevent_background() { event_free(op); }
    libevent_background(const libevent_background&) = delete;
    libevent_background& operator=(const libevent_background&) = delete;

    std::uint64_t fired = 0;
    base_ptr base;
    timer_events events;
    event* op = nullptr;
    timeval op_storage{};
    const timeval* op_tv = nullptr;
    scattered_order order;
};

template <bool Common>
void schedule_cancel(benchmark::State& st) {
    auto& s = cached_background::get<libevent_background<Common>>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        event_add(s.op, s.op_tv);
        event_del(s.op);
    }
}

template <bool Common>
void touch(benchmark::State& st) {
    auto& s = cached_background::get<libevent_background<Common>>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) event_add(s.events.events[s.order.next()], s.op_tv);
}

template <bool Common>
spent expire_round(std::size_t n) {
    std::uint64_t fired = 0;
    base_ptr base = new_base();
    timer_events events(base.get(), n, &fired);
    expire_plan plan;
    auto latest = plan.due;
    if constexpr (Common) {
        timeval storage{};
        const timeval* ct = timeout_for(base.get(), expire_plan::lead, true, storage);
        for (event* e : events.events) event_add(e, ct);
        latest = expire_plan::clock::now() + expire_plan::lead;
    } else {
        for (event* e : events.events) {
            const timeval tv = to_timeval(plan.delay<std::chrono::microseconds>());
            event_add(e, &tv);
        }
        latest = std::max(plan.due, expire_plan::clock::now());
    }
    expire_plan::wait_until_due(latest);
    const spent s = timed([&] { event_base_loop(base.get(), 0); });  // returns when nothing is pending
    if (fired != n) throw std::runtime_error("libevent expire: not every callback ran");
    return s;
}

template <bool Common>
void memory(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0;
        auto f0 = alloc_count::start();
        base_ptr base = new_base();
        timeval storage{};
        const timeval* tv = timeout_for(base.get(), far_delay, Common, storage);
        const auto fixed = alloc_count::stop(f0);
        auto w0 = alloc_count::start();
        auto events = std::make_unique<timer_events>(base.get(), n, &fired);
        for (event* e : events->events) event_add(e, tv);
        const auto window = alloc_count::stop(w0);
        report_memory(st, n, fixed, window, event_get_struct_event_size());
        events.reset();
    }
}

template <bool Common>
void idle(benchmark::State& st, std::chrono::milliseconds window) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0;
        base_ptr base = new_base();
        timeval storage{};
        const timeval* tv = timeout_for(base.get(), far_delay, Common, storage);
        timer_events events(base.get(), n, &fired);
        for (event* e : events.events) event_add(e, tv);
        // Stopping from another thread without evthread locking: a pipe the loop watches.
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
        event* stop = event_new(
            base.get(), fds[0], EV_READ,
            [](evutil_socket_t, short, void* b) { event_base_loopbreak(static_cast<event_base*>(b)); }, base.get());
        event_add(stop, nullptr);
        const idle_result r = probe_idle([&] { event_base_dispatch(base.get()); },
                                         [&] { [[maybe_unused]] auto w = ::write(fds[1], "x", 1); }, window);
        report_idle(st, r);
        if (fired != 0) st.SetLabel("a callback ran while idle");
        event_free(stop);
        ::close(fds[0]);
        ::close(fds[1]);
    }
}

}  // namespace

void register_libevent(const bench_options& o) {
    add_case(family::schedule_cancel, "libevent", schedule_cancel<false>);
    add_case(family::schedule_cancel, "libevent_common", schedule_cancel<true>);
    add_case(family::touch, "libevent", touch<false>);
    add_case(family::touch, "libevent_common", touch<true>);
    add_case(family::expire, "libevent", [](benchmark::State& st) { run_expire(st, expire_round<false>); });
    add_case(family::expire, "libevent_common", [](benchmark::State& st) { run_expire(st, expire_round<true>); });
    add_case(family::memory, "libevent", memory<false>);
    add_case(family::memory, "libevent_common", memory<true>);
    const auto window = o.idle_window;
    add_case(family::idle, "libevent", [window](benchmark::State& st) { idle<false>(st, window); });
    add_case(family::idle, "libevent_common", [window](benchmark::State& st) { idle<true>(st, window); });
}

}  // namespace bench
