// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel_sim: many simulated sessions (an idle_watch each, or with
// --object=session_liveness one session_liveness each on one shared config; no sockets) on ONE
// wheel, to see what idle detection costs past the descriptors this machine has.
//
// The model (ratas' test_benchmark.cc shape: knobs on the command line, one result line):
//  - --sessions watched sessions (reader idle --idle seconds), on one wheel with --tick_ms
//    ticks, on one io_context, driven by one thread;
//  - they open during a warm-up of --warmup seconds (evenly spread), then --seconds are
//    measured; every simulated second each session is active with probability --active
//    (an independent draw per session and second) and then touched once (on_read()) at a
//    random tick of that second;
//  - a session quiet for the idle time is kicked by its watch (session_liveness: its idle
//    verdict); it "reconnects" at once (the handler restarts the object), so the population
//    stays the same.
//  - clock: "manual" (idlewheel::manual_clock, advanced one tick at a time and polled: fast,
//    exact) or "real" (steady time, one simulated second per second; the thread sleeps in
//    the io_context between ticks as a server thread does; the warm-up is fast-forwarded).
//
// Reported: CPU seconds (getrusage, user + system, whole process) per simulated second of the
// measured window, as % of one core; the kicks; and a check that they are exactly the
// sessions that went quiet: every kick came at least the idle time after that session's last
// activity (or opening), and at most two ticks after it (manual clock; plus 50 ms of wake-up
// delay, --slack_ms, on the real clock), and at the end no session has been quiet longer than that
// without a kick. The activity schedule is drawn before the measurement and the check runs
// after it, so neither is in the CPU figure. With the manual clock, every poll makes Asio
// program its timerfd 1 ns ahead (manual_clock's contract), which costs real CPU on some
// VMs; the run measures that driver cost alone on an empty wheel for the same ticks (one
// idle_watch touched every tick, in both modes, so the wheel wakes every tick) and reports it
// beside the total. With session_liveness, any event other than idle fails the check.
//
// Exit status: 0 if the check passed, 1 if not, 2 for bad arguments.

#include "../micro/object_array.hpp"
#include "../micro/shifted_clock.hpp"
#include "bench/splitmix64.hpp"

#include <idlewheel/idle_watch.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct options {
    std::size_t sessions = 1'000'000;
    double seconds = 60;
    double warmup = 30;
    double active = 0.10;
    double idle = 30;
    std::int64_t tick_ms = 10;
    std::string clock = "manual";
    std::string json;
    std::string object = "idle_watch";  // or session_liveness
    double slack_ms = 50;               // real clock: wake-up delay allowed on top of two ticks
};

std::chrono::nanoseconds idle_time(const options& o) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(o.idle));
}

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// Who is touched in which tick: drawn up front, so the measured loop only replays it.
struct activity_schedule {
    std::vector<std::vector<std::uint32_t>> by_tick;
    std::size_t touches = 0;
};

activity_schedule draw_schedule(const options& o, std::size_t ticks_per_second, std::size_t total_ticks) {
    activity_schedule s;
    s.by_tick.resize(total_ticks);
    program_support::splitmix64 rng{0x51'3e55'1075'0001ULL};
    const auto threshold = static_cast<std::uint64_t>(o.active * 18446744073709551615.0);
    const std::size_t seconds = (total_ticks + ticks_per_second - 1) / ticks_per_second;
    for (std::size_t sec = 0; sec < seconds; ++sec) {
        for (std::size_t i = 0; i < o.sessions; ++i) {
            if (rng.next() >= threshold) continue;
            const std::size_t t = sec * ticks_per_second + rng.next() % ticks_per_second;
            if (t < total_ticks) {
                s.by_tick[t].push_back(static_cast<std::uint32_t>(i));
                ++s.touches;
            }
        }
    }
    return s;
}

struct kick {
    std::uint32_t session;
    std::int64_t at;  // elapsed ns on the wheel's clock
};

// What both simulations share: the wheel, when each session opened, the kicks.
template <class Wheel>
struct simulation_base {
    simulation_base(asio::io_context& io, const options& o, std::chrono::nanoseconds tick)
        : wheel(io, idlewheel::wheel_options{.tick = tick}), opened_at(o.sessions, -1) {
        kicks.reserve(o.sessions);
    }
    void record_kick(std::uint32_t id) { kicks.push_back({id, wheel.wake_elapsed().count()}); }

    Wheel wheel;
    std::vector<std::int64_t> opened_at;
    std::vector<kick> kicks;
};

// --object=idle_watch: an idle_watch per session (208 bytes: the watch and its own entry).
template <class Wheel>
struct watch_simulation : simulation_base<Wheel> {
    struct session {
        session(Wheel& w, watch_simulation* sim, std::chrono::nanoseconds idle)
            : watch(w, idlewheel::bind_member<&session::on_idle>(this), {.reader = idle}), sim_(sim) {}
        void on_idle(idlewheel::idle_kind, bool) { sim_->kicked(*this); }
        idlewheel::basic_idle_watch<Wheel> watch;
        watch_simulation* sim_;
    };

    watch_simulation(asio::io_context& io, const options& o, std::chrono::nanoseconds tick)
        : simulation_base<Wheel>(io, o, tick), sessions(o.sessions, this->wheel, this, idle_time(o)) {}

    void kicked(session& s) {
        this->record_kick(static_cast<std::uint32_t>(&s - sessions.begin()));
        s.watch.start();  // the client reconnects: a new session in its place
    }
    void open(std::size_t i) {
        this->opened_at[i] = this->wheel.elapsed_now().count();  // read first: the watch's own start is not earlier
        sessions[i].watch.start();
    }
    void touch(std::size_t i) noexcept { sessions[i].watch.on_read(); }

    bench::object_array<session> sessions;
};

// --object=session_liveness: a session_liveness per session (64 bytes, its own entry), all on
// ONE config (reader idle only: the same workload), whose handler is told of the kicks.
template <class Wheel>
struct liveness_simulation : simulation_base<Wheel> {
    using live_type = idlewheel::basic_session_liveness<Wheel>;

    liveness_simulation(asio::io_context& io, const options& o, std::chrono::nanoseconds tick)
        : simulation_base<Wheel>(io, o, tick),
          config(this->wheel, {.idle_timeout = idle_time(o)}, {&on_event, this}),
          sessions(o.sessions, config) {}

    static void on_event(void* context, live_type& s, idlewheel::liveness_event e) {
        auto& self = *static_cast<liveness_simulation*>(context);
        if (e != idlewheel::liveness_event::idle) {
            ++self.unexpected;  // the config has no heartbeat, handshake or close deadline
            return;
        }
        self.record_kick(static_cast<std::uint32_t>(&s - self.sessions.begin()));
        s.start();  // the client reconnects: a new session in its place (the handler may restart it)
    }
    void open(std::size_t i) {
        this->opened_at[i] = this->wheel.elapsed_now().count();  // read first: the object's own start is not earlier
        sessions[i].start();
    }
    void touch(std::size_t i) noexcept { sessions[i].on_read(); }

    idlewheel::basic_session_liveness_config<Wheel> config;
    bench::object_array<live_type> sessions;
    std::size_t unexpected = 0;
};

struct check_result {
    std::size_t kicks = 0, early = 0, late = 0, missed = 0;
    double worst_late_ms = 0;  // kick - (last activity + idle), worst
};

// Replays every session's timeline (openings, touches, kicks) and judges each kick.
check_result check(const options& o, const activity_schedule& sched, const std::vector<std::int64_t>& touch_time,
                   const std::vector<std::int64_t>& opened_at, std::vector<kick> kicks, std::int64_t end,
                   std::int64_t slack_ns, std::int64_t tick_ns) {
    check_result r;
    r.kicks = kicks.size();
    const auto idle_ns = static_cast<std::int64_t>(o.idle * 1e9);
    const std::int64_t allowed = 2 * tick_ns + slack_ns;
    // Every session's touches, in time order (CSR: session s owns when[start[s] .. stop[s])).
    std::vector<std::size_t> start(o.sessions + 1, 0);
    for (const auto& t : sched.by_tick)
        for (const std::uint32_t s : t) ++start[s + 1];
    for (std::size_t i = 1; i <= o.sessions; ++i) start[i] += start[i - 1];
    std::vector<std::int64_t> when(start[o.sessions]);
    std::vector<std::size_t> stop(start.begin(), start.end() - 1);
    for (std::size_t t = 0; t < sched.by_tick.size() && t < touch_time.size(); ++t)
        for (const std::uint32_t s : sched.by_tick[t])
            if (opened_at[s] >= 0 && opened_at[s] <= touch_time[t]) when[stop[s]++] = touch_time[t];

    std::sort(kicks.begin(), kicks.end(), [](const kick& a, const kick& b) {
        return a.session != b.session ? a.session < b.session : a.at < b.at;
    });
    std::size_t k = 0;
    for (std::size_t s = 0; s < o.sessions; ++s) {
        if (opened_at[s] < 0) continue;
        std::int64_t last = opened_at[s];
        std::size_t a = start[s];
        const std::size_t a_end = stop[s];
        for (; k < kicks.size() && kicks[k].session == s; ++k) {
            // Activity before the kick moves "last" (a touch at the kick's own time comes
            // after it: the kick ran when the clock reached that time, before that tick's
            // touches).
            while (a < a_end && when[a] < kicks[k].at) last = std::max(last, when[a++]);
            const std::int64_t quiet = kicks[k].at - last;
            if (quiet < idle_ns) ++r.early;
            if (quiet > idle_ns + allowed) ++r.late;
            r.worst_late_ms = std::max(r.worst_late_ms, static_cast<double>(quiet - idle_ns) / 1e6);
            last = kicks[k].at;  // reconnected
        }
        while (a < a_end) last = std::max(last, when[a++]);
        if (end - last > idle_ns + allowed) ++r.missed;
    }
    return r;
}

struct run_result {
    double cpu_s = 0, sim_s = 0, wall_s = 0, driver_cpu_s = 0;
    std::size_t touches = 0, kicks_measured = 0, unexpected = 0;
    idlewheel::wheel_stats stats_measured;
    check_result check;
};

idlewheel::wheel_stats minus(const idlewheel::wheel_stats& a, const idlewheel::wheel_stats& b) {
    idlewheel::wheel_stats d = a;
    d.scheduled -= b.scheduled;
    d.expired -= b.expired;
    d.wakeups -= b.wakeups;
    d.idle_wakeups -= b.idle_wakeups;
    d.ticks_advanced -= b.ticks_advanced;
    return d;
}

// Drives `sim` through warm-up + measured ticks; `step(t)` moves time past tick t and runs
// the loop; `fast(t)` does the same during the warm-up.
template <class Sim, class Step, class Fast>
run_result drive(const options& o, Sim& sim, const activity_schedule& sched, std::size_t warm_ticks,
                 std::size_t total_ticks, std::vector<std::int64_t>& touch_time, Step&& step, Fast&& fast) {
    run_result r;
    touch_time.assign(total_ticks, 0);
    std::size_t opened = 0;
    double cpu0 = 0;
    auto wall0 = std::chrono::steady_clock::now();
    idlewheel::wheel_stats stats0{};
    std::size_t kicks0 = 0;
    for (std::size_t t = 0; t < total_ticks; ++t) {
        if (t == warm_ticks) {
            cpu0 = cpu_seconds();
            wall0 = std::chrono::steady_clock::now();
            stats0 = sim.wheel.stats();
            kicks0 = sim.kicks.size();
        }
        if (t < warm_ticks || opened < o.sessions) {
            // Open sessions evenly over the warm-up (all at once if there is none).
            const std::size_t target =
                warm_ticks == 0 ? o.sessions : std::min(o.sessions, (t + 1) * o.sessions / warm_ticks);
            while (opened < target) sim.open(opened++);
        }
        for (const std::uint32_t s : sched.by_tick[t])
            if (sim.opened_at[s] >= 0) sim.touch(s);
        touch_time[t] = sim.wheel.elapsed_now().count();  // at or after every touch of tick t
        if (t >= warm_ticks) {
            r.touches += sched.by_tick[t].size();
            step(t);
        } else {
            fast(t);
        }
    }
    r.cpu_s = cpu_seconds() - cpu0;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.stats_measured = minus(sim.wheel.stats(), stats0);
    r.kicks_measured = sim.kicks.size() - kicks0;
    return r;
}

// Liveness events other than idle (none expected: reader idle only).
template <class Sim>
std::size_t unexpected_events(const Sim& sim) {
    if constexpr (requires { sim.unexpected; })
        return sim.unexpected;
    else
        return 0;
}

template <template <class> class Simulation>
int run_with(const options& o) {
    const auto tick = std::chrono::milliseconds(o.tick_ms);
    const auto ticks_per_second = static_cast<std::size_t>(1000 / o.tick_ms);
    const auto warm_ticks = static_cast<std::size_t>(o.warmup * static_cast<double>(ticks_per_second) + 0.5);
    const auto measured_ticks = static_cast<std::size_t>(o.seconds * static_cast<double>(ticks_per_second) + 0.5);
    const std::size_t total_ticks = warm_ticks + measured_ticks;
    const activity_schedule sched = draw_schedule(o, ticks_per_second, total_ticks);
    const std::int64_t tick_ns = std::chrono::nanoseconds(tick).count();

    run_result r;
    std::vector<std::int64_t> touch_time;
    std::int64_t end = 0;
    std::int64_t slack_ns = 0;
    if (o.clock == "manual") {
        idlewheel::manual_clock::reset();
        asio::io_context io{1};
        Simulation<idlewheel::basic_wheel_timer<idlewheel::manual_clock>> sim(io, o, tick);
        const auto advance = [&](std::size_t) {
            idlewheel::manual_clock::advance(tick);
            if (io.stopped()) io.restart();
            io.poll();
        };
        r = drive(o, sim, sched, warm_ticks, total_ticks, touch_time, advance, advance);
        end = sim.wheel.elapsed_now().count();
        r.check = check(o, sched, touch_time, sim.opened_at, sim.kicks, end, 0, tick_ns);
        r.unexpected = unexpected_events(sim);
        // The driver alone: one watch touched every tick (so the wheel wakes every tick, as in
        // the simulation), same number of ticks.
        {
            asio::io_context io2{1};
            idlewheel::basic_wheel_timer<idlewheel::manual_clock> w2(io2, idlewheel::wheel_options{.tick = tick});
            idlewheel::basic_idle_watch<decltype(w2)> watch(w2, {[](void*, idlewheel::idle_kind, bool) {}, nullptr},
                                                            {.reader = idle_time(o)});
            watch.start();
            const double c0 = cpu_seconds();
            for (std::size_t t = 0; t < measured_ticks; ++t) {
                watch.on_read();
                idlewheel::manual_clock::advance(tick);
                if (io2.stopped()) io2.restart();
                io2.poll();
            }
            r.driver_cpu_s = cpu_seconds() - c0;
        }
    } else if (o.clock == "real") {
        asio::io_context io{1};
        Simulation<idlewheel::basic_wheel_timer<bench::shifted_clock>> sim(io, o, tick);
        asio::basic_waitable_timer<bench::shifted_clock> kick_reactor(io);
        const auto fast = [&](std::size_t) {
            bench::shifted_clock::jump(tick);
            kick_reactor.expires_at(bench::shifted_clock::time_point::min());  // Asio looks at its timers now
            kick_reactor.async_wait([](const boost::system::error_code&) {});
            if (io.stopped()) io.restart();
            io.poll();
        };
        bench::shifted_clock::time_point next{};
        bool started = false;
        const auto step = [&](std::size_t) {
            if (!started) {
                next = bench::shifted_clock::now();
                started = true;
            }
            next += tick;
            if (io.stopped()) io.restart();
            io.run_until(next);  // sleeps in epoll_wait; the wheel's timer wakes it at its tick
            io.poll();
        };
        r = drive(o, sim, sched, warm_ticks, total_ticks, touch_time, step, fast);
        end = sim.wheel.elapsed_now().count();
        slack_ns = static_cast<std::int64_t>(o.slack_ms * 1e6);
        r.check = check(o, sched, touch_time, sim.opened_at, sim.kicks, end, slack_ns, tick_ns);
        r.unexpected = unexpected_events(sim);
    } else {
        std::cerr << "idlewheel_sim: --clock must be manual or real\n";
        return 2;
    }
    r.sim_s = static_cast<double>(measured_ticks) * std::chrono::duration<double>(tick).count();

    const double percent = r.cpu_s / r.sim_s * 100;
    const double driver_percent = r.driver_cpu_s / r.sim_s * 100;
    const bool ok = r.check.early == 0 && r.check.late == 0 && r.check.missed == 0 && r.unexpected == 0;
    // The target: 5 % of one core with an idle_watch per session (issue 2), 2 % with the one
    // session_liveness per session (issue 15).
    const double target = o.object == "session_liveness" ? 2 : 5;
    std::printf(
        "idlewheel_sim object=%s clock=%s sessions=%zu idle=%gs active=%g%%/s tick=%lldms warmup=%gs measured=%gs: "
        "cpu=%.3fs (%.2f%% of one core; target < %g%%: %s), wall=%.2fs, touches=%zu, wakeups=%llu, callbacks=%llu, "
        "kicks=%zu (all %zu: early=%zu late=%zu missed=%zu, worst lateness %.1f ms, other events %zu) %s",
        o.object.c_str(), o.clock.c_str(), o.sessions, o.idle, o.active * 100, static_cast<long long>(o.tick_ms),
        o.warmup, r.sim_s, r.cpu_s, percent, target, percent < target ? "met" : "MISSED", r.wall_s, r.touches,
        static_cast<unsigned long long>(r.stats_measured.wakeups),
        static_cast<unsigned long long>(r.stats_measured.expired), r.kicks_measured, r.check.kicks, r.check.early,
        r.check.late, r.check.missed, r.check.worst_late_ms, r.unexpected, ok ? "CHECK OK" : "CHECK FAILED");
    if (o.clock == "manual")
        std::printf(" [manual-clock driver alone: %.3fs = %.2f%%]", r.driver_cpu_s, driver_percent);
    std::printf("\n");
    if (!o.json.empty()) {
        std::ofstream out(o.json);
        out << "{\"object\": \"" << o.object << "\", \"clock\": \"" << o.clock << "\", \"sessions\": " << o.sessions
            << ", \"idle_s\": " << o.idle << ", \"active_per_s\": " << o.active << ", \"tick_ms\": " << o.tick_ms
            << ", \"warmup_s\": " << o.warmup << ", \"sim_s\": " << r.sim_s << ", \"cpu_s\": " << r.cpu_s
            << ", \"cpu_percent\": " << percent << ", \"driver_cpu_s\": " << r.driver_cpu_s
            << ", \"driver_cpu_percent\": " << driver_percent << ", \"wall_s\": " << r.wall_s
            << ", \"touches\": " << r.touches << ", \"wakeups\": " << r.stats_measured.wakeups
            << ", \"callbacks\": " << r.stats_measured.expired << ", \"kicks_measured\": " << r.kicks_measured
            << ", \"kicks\": " << r.check.kicks << ", \"early\": " << r.check.early << ", \"late\": " << r.check.late
            << ", \"missed\": " << r.check.missed << ", \"worst_late_ms\": " << r.check.worst_late_ms
            << ", \"check_ok\": " << (ok ? "true" : "false") << "}\n";
    }
    return ok ? 0 : 1;
}

bool take(const char* arg, const char* name, std::string& value) {
    const std::size_t len = std::strlen(name);
    if (std::strncmp(arg, name, len) != 0 || arg[len] != '=') return false;
    value = arg + len + 1;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string v;
        try {
            if (take(argv[i], "--sessions", v))
                o.sessions = std::stoul(v);
            else if (take(argv[i], "--seconds", v))
                o.seconds = std::stod(v);
            else if (take(argv[i], "--warmup", v))
                o.warmup = std::stod(v);
            else if (take(argv[i], "--active", v))
                o.active = std::stod(v);
            else if (take(argv[i], "--idle", v))
                o.idle = std::stod(v);
            else if (take(argv[i], "--tick_ms", v))
                o.tick_ms = std::stoll(v);
            else if (take(argv[i], "--clock", v))
                o.clock = v;
            else if (take(argv[i], "--json", v))
                o.json = v;
            else if (take(argv[i], "--slack_ms", v))
                o.slack_ms = std::stod(v);
            else if (take(argv[i], "--object", v))
                o.object = v;
            else
                throw std::invalid_argument(argv[i]);
        } catch (const std::exception&) {
            std::cerr << "idlewheel_sim: bad argument " << argv[i]
                      << "\nusage: idlewheel_sim [--sessions=1000000] [--seconds=60] [--warmup=30] [--active=0.10]"
                         " [--idle=30] [--tick_ms=10] [--clock=manual|real] [--slack_ms=50] [--json=FILE]"
                         " [--object=idle_watch|session_liveness]\n";
            return 2;
        }
    }
    if (o.sessions == 0 || o.sessions > 0xffffffffULL || o.tick_ms <= 0 || 1000 % o.tick_ms != 0 || o.seconds <= 0 ||
        o.warmup < 0 || o.active < 0 || o.active > 1 || o.idle <= 0 ||
        (o.object != "idle_watch" && o.object != "session_liveness")) {
        std::cerr
            << "idlewheel_sim: out-of-range option (tick_ms must divide 1000; object idle_watch or session_liveness)\n";
        return 2;
    }
    return o.object == "session_liveness" ? run_with<liveness_simulation>(o) : run_with<watch_simulation>(o);
}
