// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel, in its three shapes:
//  - idlewheel_handle: wheel_timer::schedule(delay, fn) -> timeout (Netty's newTimeout);
//  - idlewheel_node:   an intrusive timer_node per connection, schedule(node, delay);
//  - idlewheel_watch:  an idle_watch per session (touch = on_read(), a load and a store of the
//    wheel's activity epoch; the wheel closes the epoch once per tick with one clock read and
//    re-arms a watch only when it comes due).
// The handle and node forms run in both clock_read modes (per_schedule: a clock read per
// schedule; per_tick: none, the next wake-up starts the delay).
// Real steady_clock everywhere. The idle_watch touch is measured three ways:
//  - idlewheel_watch (the figure): ops_per_turn(N) touches per real 10 ms tick; after each
//    batch the thread blocks in io_context::run_one() until the wheel's Asio timer really
//    wakes it at the tick boundary, as a server thread does; the thread's CPU time divided by
//    the touches. It includes the epoch's wake-up itself and the lazy re-arms of watches
//    coming due: the background is built on shifted_clock as if its sessions had opened over
//    30 s and then seen 30 s of traffic, so watches come due during the measurement at the
//    steady-state rate. Every other tick has a single touch, which splits that figure into a
//    fixed cost per tick (tick_us) and a marginal cost per touch (marginal_ns_per_touch); and
//    the same thread sleeping on a plain asio::steady_timer to each 10 ms boundary gives the
//    floor under tick_us that any sleeping event loop pays on this machine (sleep_wake_us).
//  - idlewheel_watch_manual: the same on idlewheel::manual_clock, advanced one tick every
//    ops_per_turn(N) touches and polled. A diagnostic: manual_clock tells Asio that every
//    wait is already over, so each poll programs a timerfd 1 ns ahead, which on this VM costs
//    tens of microseconds of CPU (an immediate timer interrupt); a real tick does not.
//  - idlewheel_watch_pure: on_read() alone, never swept (a lower bound).

#include "harness.hpp"
#include "shifted_clock.hpp"

#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <stdexcept>
#include <vector>

namespace bench {
namespace {

namespace asio = boost::asio;
using steady_wheel = idlewheel::wheel_timer;
using manual_wheel = idlewheel::basic_wheel_timer<idlewheel::manual_clock>;

void count_callback(void* counter) { ++*static_cast<std::uint64_t*>(counter); }

// What a handle-form callback captures in a server: a pointer to its session.
struct count_fn {
    std::uint64_t* counter;
    void operator()() const { ++*counter; }
};

struct node_conn {
    explicit node_conn(std::uint64_t* counter) : node{{&count_callback, counter}} {}
    idlewheel::timer_node node;
};

// A session watched for reader idleness; on a report it counts, and kicks (stops) if asked.
template <class Wheel>
struct watch_session {
    watch_session(Wheel& w, std::chrono::nanoseconds reader, std::uint64_t* reports, bool kick)
        : watch(w, idlewheel::bind_member<&watch_session::on_idle>(this), {.reader = reader}),
          reports_(reports),
          kick_(kick) {}
    void on_idle(idlewheel::idle_kind, bool) {
        ++*reports_;
        if (kick_) watch.stop();
    }
    idlewheel::basic_idle_watch<Wheel> watch;
    std::uint64_t* reports_;
    bool kick_;
};

void poll(asio::io_context& io) {
    if (io.stopped()) io.restart();
    io.poll();
}

using shifted_wheel = idlewheel::basic_wheel_timer<shifted_clock>;

// ---- backgrounds -------------------------------------------------------------------------

// With clock_read::per_tick the background's timeouts are staged until the wheel's next
// wake-up: wait for it, so that they are in the wheel like every other contender's.
void settle(steady_wheel& wheel, asio::io_context& io) {
    if (wheel.pending() == 0) return;
    const auto woken = wheel.stats().wakeups;
    while (wheel.stats().wakeups == woken) {
        if (io.stopped()) io.restart();
        io.run_one();
    }
}

template <idlewheel::clock_read Read>
struct basic_handle_background {
    explicit basic_handle_background(std::size_t n) : order(n) {
        background_delays d;
        handles.reserve(n);
        for (std::size_t i = 0; i < n; ++i) handles.push_back(wheel.schedule(d.next(), count_fn{&fired}));
        if (Read == idlewheel::clock_read::per_tick) settle(wheel, io);
    }
    std::uint64_t fired = 0;
    asio::io_context io{1};
    steady_wheel wheel{io, {.clock = Read}};
    std::vector<idlewheel::timeout> handles;
    scattered_order order;
};
using handle_background = basic_handle_background<idlewheel::clock_read::per_schedule>;

template <idlewheel::clock_read Read>
struct basic_node_background {
    explicit basic_node_background(std::size_t n) : conns(n, &fired), op(&fired), order(n) {
        background_delays d;
        for (auto& c : conns) wheel.schedule(c.node, d.next());
        if (Read == idlewheel::clock_read::per_tick) settle(wheel, io);
    }
    std::uint64_t fired = 0;
    asio::io_context io{1};
    steady_wheel wheel{io, {.clock = Read}};
    object_array<node_conn> conns;
    node_conn op;
    scattered_order order;
};
using node_background = basic_node_background<idlewheel::clock_read::per_schedule>;

// N watched sessions with 60 s of history: during the first 30 s they open (N / 3000 a
// tick), then 30 s of traffic at ops_per_turn(N) touches a tick, so that when the
// measurement starts their watches come due at the steady-state rate (not all at once, and
// none of them untouched). `tick()` moves the wheel's clock one tick and runs the loop.
template <class Sessions, class Tick>
void build_history(Sessions& sessions, scattered_order& order, std::size_t per_tick, Tick&& tick) {
    const std::size_t n = sessions.size();
    const std::size_t ticks = static_cast<std::size_t>(op_delay / wheel_tick);
    const std::size_t per_open_tick = n / ticks > 0 ? n / ticks : 1;
    std::size_t opened = 0;
    for (std::size_t f = 0; f < 2 * ticks || opened < n; ++f) {
        for (std::size_t i = 0; i < per_open_tick && opened < n; ++i) sessions[opened++].watch.start();
        for (std::size_t i = 0; i < per_tick; ++i) {
            const std::size_t c = order.next();
            if (c < opened) sessions[c].watch.on_read();
        }
        tick();
    }
}

// The manual-clock background (the diagnostic touch case).
struct watch_background {
    explicit watch_background(std::size_t n)
        : sessions(n, wheel, std::chrono::nanoseconds(op_delay), &reports, false), order(n), per_tick(ops_per_turn(n)) {
        build_history(sessions, order, per_tick, [this] { tick(); });
    }
    void tick() {
        idlewheel::manual_clock::advance(wheel_tick);
        poll(io);
    }
    std::uint64_t reports = 0;
    asio::io_context io{1};
    manual_wheel wheel{io};
    object_array<watch_session<manual_wheel>> sessions;
    scattered_order order;
    std::size_t per_tick;
    std::size_t in_tick = 0;
};

// The live background, on shifted_clock: the history runs in fast-forward. Each fast-forward
// tick jumps the clock and makes the reactor look at its timers at once (a timer due at the
// beginning of time is the earliest, so Asio re-programs its timerfd).
struct live_watch_background {
    explicit live_watch_background(std::size_t n)
        : sessions(n, wheel, std::chrono::nanoseconds(op_delay), &reports, false), order(n), per_tick(ops_per_turn(n)) {
        build_history(sessions, order, per_tick, [this] {
            shifted_clock::jump(wheel_tick);
            kick.expires_at(shifted_clock::time_point::min());
            kick.async_wait([](const boost::system::error_code&) {});
            poll(io);
        });
    }
    std::uint64_t reports = 0;
    asio::io_context io{1};
    shifted_wheel wheel{io};
    asio::basic_waitable_timer<shifted_clock> kick{io};
    object_array<watch_session<shifted_wheel>> sessions;
    scattered_order order;
    std::size_t per_tick;
};

struct watch_background_pure : watch_background {
    using watch_background::watch_background;
};

// ---- schedule + cancel -------------------------------------------------------------------

template <idlewheel::clock_read Read>
void schedule_cancel_handle(benchmark::State& st) {
    auto& s = cached_background::get<basic_handle_background<Read>>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        idlewheel::timeout t = s.wheel.schedule(op_delay, count_fn{&s.fired});
        t.cancel();
    }
}

// With clock_read::per_tick, an operation armed and cancelled within one tick is a push on
// the staging list and an unlink: what is measured here. The wheel's one wake-up per tick
// while anything is scheduled is not (it does not depend on how many were): the touch case
// idlewheel_watch measures that wake-up (tick_us), and bench/results/2026-11-24-micro.md adds it per tick.
template <idlewheel::clock_read Read>
void schedule_cancel_node(benchmark::State& st) {
    auto& s = cached_background::get<basic_node_background<Read>>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        s.wheel.schedule(s.op.node, op_delay);
        s.op.node.cancel();
    }
}

// The same without a clock read per operation: the deadline tick is computed once per loop
// turn (ops_per_turn(N) operations), as libuv computes deadlines from its loop's cached time,
// plus one tick so that no timeout can fire early (schedule_tick() is the public API for it).
// Shows what the structure costs apart from steady_clock::now().
struct turn_deadline {
    explicit turn_deadline(std::size_t n) : per_turn(ops_per_turn(n)) {}
    template <class Wheel>
    idlewheel::detail::wheel::tick_type get(Wheel& w) {
        if (left == 0) {
            tick = w.deadline_after(op_delay) + 1;
            left = per_turn;
        }
        --left;
        return tick;
    }
    std::size_t per_turn;
    std::size_t left = 0;
    idlewheel::detail::wheel::tick_type tick = 0;
};

void schedule_cancel_node_turn(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    auto& s = cached_background::get<node_background>(n);
    turn_deadline d(n);
    for (auto _ : st) {
        s.wheel.schedule_tick(s.op.node, d.get(s.wheel));
        s.op.node.cancel();
    }
}

// ---- touch -------------------------------------------------------------------------------

void touch_node_turn(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    auto& s = cached_background::get<node_background>(n);
    turn_deadline d(n);
    for (auto _ : st) s.wheel.schedule_tick(s.conns[s.order.next()].node, d.get(s.wheel));
}

// Netty-style: cancel the connection's timeout and schedule a new one.
void touch_handle(benchmark::State& st) {
    auto& s = cached_background::get<handle_background>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        idlewheel::timeout& h = s.handles[s.order.next()];
        h.cancel();
        h = s.wheel.schedule(op_delay, count_fn{&s.fired});
    }
}

// Re-arm the connection's intrusive node (what a per-connection timer does, minus Asio).
void touch_node(benchmark::State& st) {
    auto& s = cached_background::get<node_background>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) s.wheel.schedule(s.conns[s.order.next()].node, op_delay);
}

// idle_watch::on_read() with its share of a real tick: the epoch's wake-up, lazy re-arms. Ticks
// alternate between ops_per_turn(N) touches and a single touch, so one run also separates
// the fixed cost of a tick (wake-up, timer interrupt, Asio dispatch, the re-arms of watches
// coming due, all independent of traffic) from the marginal cost of a touch.
void touch_watch_live(benchmark::State& st, std::size_t ticks) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        live_watch_background s(n);
        const auto real_tick = [&s](std::size_t touches) {
            for (std::size_t i = 0; i < touches; ++i) s.sessions[s.order.next()].watch.on_read();
            // Block until the wheel's timer wakes the thread at the tick boundary. run_one() may
            // first return for the aborted wait an earlier arming replaced.
            const std::uint64_t woken = s.wheel.stats().wakeups;
            while (s.wheel.stats().wakeups == woken) {
                if (s.io.stopped()) s.io.restart();
                s.io.run_one();
            }
            s.io.poll();  // continuations, if a wake-up had more than its bound to run
        };
        for (int i = 0; i < 4; ++i) real_tick(s.per_tick);  // catch up with the fast-forward, untimed
        const std::uint64_t reports_before = s.reports;
        const auto stats_before = s.wheel.stats();
        spent busy, quiet;  // ticks with per_tick touches, ticks with one
        const std::size_t pairs = ticks / 2 > 0 ? ticks / 2 : 1;
        for (std::size_t i = 0; i < pairs; ++i) {
            const spent b = timed([&] { real_tick(s.per_tick); });
            const spent q = timed([&] { real_tick(1); });
            busy.cpu += b.cpu;
            busy.wall += b.wall;
            quiet.cpu += q.cpu;
            quiet.wall += q.wall;
        }
        const auto stats_after = s.wheel.stats();
        const double p = static_cast<double>(pairs);
        const double k = static_cast<double>(s.per_tick);
        // The floor under tick_us: the same thread sleeping on a plain asio::steady_timer until
        // the next 10 ms boundary and waking, with no wheel and no work. What remains of tick_us
        // above it is the wheel's own work per tick.
        spent floor;
        {
            asio::io_context quiet_io{1};  // its own loop: the wheel's wake-ups do not land here
            asio::steady_timer pace(quiet_io);
            auto next = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < 2 * pairs; ++i) {
                next += wheel_tick;
                const spent f = timed([&] {
                    pace.expires_at(next);
                    bool done = false;
                    pace.async_wait([&done](const boost::system::error_code&) { done = true; });
                    while (!done) {
                        if (quiet_io.stopped()) quiet_io.restart();
                        quiet_io.run_one();
                    }
                });
                floor.cpu += f.cpu;
            }
        }
        st.counters["sleep_wake_us"] = benchmark::Counter(floor.cpu * 1e6 / (2 * p));
        st.counters["ns_per_touch"] = benchmark::Counter(busy.cpu * 1e9 / (p * k));
        st.counters["marginal_ns_per_touch"] = benchmark::Counter((busy.cpu - quiet.cpu) * 1e9 / (p * (k - 1)));
        st.counters["tick_us"] = benchmark::Counter(quiet.cpu * 1e6 / p);
        st.counters["touches_per_tick"] = benchmark::Counter(k);
        st.counters["ticks"] = benchmark::Counter(2 * p);
        st.counters["wall_s"] = benchmark::Counter(busy.wall + quiet.wall);
        st.counters["wakeups"] = benchmark::Counter(static_cast<double>(stats_after.wakeups - stats_before.wakeups));
        st.counters["rearms"] = benchmark::Counter(static_cast<double>(stats_after.scheduled - stats_before.scheduled));
        st.counters["idle_reports"] = benchmark::Counter(static_cast<double>(s.reports - reports_before));
    }
}

// The same on manual_clock (see the top of this file: a diagnostic, not the figure).
void touch_watch(benchmark::State& st) {
    auto& s = cached_background::get<watch_background>(static_cast<std::size_t>(st.range(0)));
    const std::uint64_t reports_before = s.reports;
    for (auto _ : st) {
        s.sessions[s.order.next()].watch.on_read();
        if (++s.in_tick == s.per_tick) {
            s.in_tick = 0;
            s.tick();
        }
    }
    st.counters["touches_per_tick"] = benchmark::Counter(static_cast<double>(s.per_tick));
    st.counters["idle_reports"] = benchmark::Counter(static_cast<double>(s.reports - reports_before));
}

// on_read() alone: the store (and, the first time in a tick, the list link). Never swept here,
// so after N touches every one is a store into an already linked watch: a lower bound only.
void touch_watch_pure(benchmark::State& st) {
    auto& s = cached_background::get<watch_background_pure>(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) s.sessions[s.order.next()].watch.on_read();
}

// ---- expire ------------------------------------------------------------------------------

spent expire_handle_round(std::size_t n) {
    std::uint64_t fired = 0;
    asio::io_context io{1};
    steady_wheel wheel{io};
    expire_plan plan;
    for (std::size_t i = 0; i < n; ++i)
        (void)wheel.schedule(plan.delay(), count_fn{&fired});  // handle dropped: freed after it runs
    expire_plan::wait_until_due(std::max(plan.due, expire_plan::clock::now()));
    const spent s = timed([&] { io.run(); });
    if (fired != n) throw std::runtime_error("expire_handle: not every callback ran");
    return s;
}

spent expire_node_round(std::size_t n) {
    std::uint64_t fired = 0;
    asio::io_context io{1};
    steady_wheel wheel{io};
    object_array<node_conn> conns(n, &fired);
    expire_plan plan;
    for (auto& c : conns) wheel.schedule(c.node, plan.delay());
    expire_plan::wait_until_due(std::max(plan.due, expire_plan::clock::now()));
    const spent s = timed([&] { io.run(); });
    if (fired != n) throw std::runtime_error("expire_node: not every callback ran");
    return s;
}

// N watches report reader idle and kick their session (stop()). start() reads the clock, so
// their deadlines are "lead after each start", all past when the loop runs.
spent expire_watch_round(std::size_t n) {
    std::uint64_t reports = 0;
    asio::io_context io{1};
    steady_wheel wheel{io};
    object_array<watch_session<steady_wheel>> sessions(n, wheel, std::chrono::nanoseconds(expire_plan::lead), &reports,
                                                       true);
    for (auto& s : sessions) s.watch.start();
    expire_plan::wait_until_due(expire_plan::clock::now() + expire_plan::lead);
    const spent s = timed([&] { io.run(); });
    if (reports != n) throw std::runtime_error("expire_watch: not every watch reported");
    return s;
}

// ---- memory ------------------------------------------------------------------------------

void memory_handle(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0;
        auto f0 = alloc_count::start();
        auto io = std::make_unique<asio::io_context>(1);
        auto wheel = std::make_unique<steady_wheel>(*io);
        const auto fixed = alloc_count::stop(f0);
        auto w0 = alloc_count::start();
        std::vector<idlewheel::timeout> handles;
        handles.reserve(n);
        for (std::size_t i = 0; i < n; ++i) handles.push_back(wheel->schedule(far_delay, count_fn{&fired}));
        const auto window = alloc_count::stop(w0);
        report_memory(st, n, fixed, window, sizeof(idlewheel::timeout));
    }
}

void memory_node(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t fired = 0;
        auto f0 = alloc_count::start();
        auto io = std::make_unique<asio::io_context>(1);
        auto wheel = std::make_unique<steady_wheel>(*io);
        const auto fixed = alloc_count::stop(f0);
        auto w0 = alloc_count::start();
        auto conns = std::make_unique<object_array<node_conn>>(n, &fired);
        for (auto& c : *conns) wheel->schedule(c.node, far_delay);
        const auto window = alloc_count::stop(w0);
        report_memory(st, n, fixed, window, sizeof(node_conn));
    }
}

void memory_watch(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        std::uint64_t reports = 0;
        auto f0 = alloc_count::start();
        auto io = std::make_unique<asio::io_context>(1);
        auto wheel = std::make_unique<steady_wheel>(*io);
        const auto fixed = alloc_count::stop(f0);
        auto w0 = alloc_count::start();
        auto sessions = std::make_unique<object_array<watch_session<steady_wheel>>>(
            n, *wheel, std::chrono::nanoseconds(op_delay), &reports, false);
        for (auto& s : *sessions) s.watch.start();
        const auto window = alloc_count::stop(w0);
        report_memory(st, n, fixed, window, sizeof(idlewheel::idle_watch));
    }
}

// ---- idle wake-ups -----------------------------------------------------------------------

template <class Arm>
void idle_case(benchmark::State& st, std::chrono::milliseconds window, Arm&& arm) {
    for (auto _ : st) {
        asio::io_context io{1};
        steady_wheel wheel{io};
        auto keep = arm(wheel);  // the armed timeouts, alive for the window
        const auto before = wheel.stats().wakeups;
        const idle_result r = probe_idle([&] { io.run(); }, [&] { io.stop(); }, window);
        report_idle(st, r, static_cast<std::int64_t>(wheel.stats().wakeups - before));
    }
}

}  // namespace

void register_idlewheel(const bench_options& o) {
    using idlewheel::clock_read;
    add_case(family::schedule_cancel, "idlewheel_handle", schedule_cancel_handle<clock_read::per_schedule>);
    add_case(family::schedule_cancel, "idlewheel_node", schedule_cancel_node<clock_read::per_schedule>);
    add_case(family::schedule_cancel, "idlewheel_handle_per_tick", schedule_cancel_handle<clock_read::per_tick>);
    add_case(family::schedule_cancel, "idlewheel_node_per_tick", schedule_cancel_node<clock_read::per_tick>);
    add_case(family::schedule_cancel, "idlewheel_node_turn", schedule_cancel_node_turn);

    const std::size_t live_ticks = o.live_ticks;
    add_case(
        family::touch, "idlewheel_watch", [live_ticks](benchmark::State& st) { touch_watch_live(st, live_ticks); },
        plan::once);
    add_case(family::touch, "idlewheel_watch_manual", touch_watch);
    add_case(family::touch, "idlewheel_watch_pure", touch_watch_pure);
    add_case(family::touch, "idlewheel_node", touch_node);
    add_case(family::touch, "idlewheel_node_turn", touch_node_turn);
    add_case(family::touch, "idlewheel_handle", touch_handle);

    add_case(family::expire, "idlewheel_handle", [](benchmark::State& st) { run_expire(st, expire_handle_round); });
    add_case(family::expire, "idlewheel_node", [](benchmark::State& st) { run_expire(st, expire_node_round); });
    add_case(family::expire, "idlewheel_watch", [](benchmark::State& st) { run_expire(st, expire_watch_round); });

    add_case(family::memory, "idlewheel_handle", memory_handle);
    add_case(family::memory, "idlewheel_node", memory_node);
    add_case(family::memory, "idlewheel_watch", memory_watch);

    const auto window = o.idle_window;
    add_case(family::idle, "idlewheel_handle", [window](benchmark::State& st) {
        static std::uint64_t fired = 0;
        idle_case(st, window, [&st](steady_wheel& w) {
            std::vector<idlewheel::timeout> v;
            for (std::int64_t i = 0; i < st.range(0); ++i) v.push_back(w.schedule(far_delay, count_fn{&fired}));
            return v;
        });
    });
    add_case(family::idle, "idlewheel_node", [window](benchmark::State& st) {
        static std::uint64_t fired = 0;
        idle_case(st, window, [&st](steady_wheel& w) {
            auto conns = std::make_unique<object_array<node_conn>>(static_cast<std::size_t>(st.range(0)), &fired);
            for (auto& c : *conns) w.schedule(c.node, far_delay);
            return conns;
        });
    });
    add_case(family::idle, "idlewheel_watch", [window](benchmark::State& st) {
        static std::uint64_t reports = 0;
        idle_case(st, window, [&st](steady_wheel& w) {
            auto s = std::make_unique<object_array<watch_session<steady_wheel>>>(
                static_cast<std::size_t>(st.range(0)), w, std::chrono::nanoseconds(far_delay), &reports, false);
            for (auto& x : *s) x.watch.start();
            return s;
        });
    });
}

}  // namespace bench
