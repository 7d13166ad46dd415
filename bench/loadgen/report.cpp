#include "report.hpp"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace loadgen {

namespace json = boost::json;

namespace {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string
fmt(const char* format, ...) {
    char buf[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    return buf;
}

const char* yes_no(bool met) { return met ? "met" : "NOT met"; }

void print_window(const std::optional<cost_window>& w, const char* title, std::ostream& out) {
    if (!w) return;
    out << fmt("  %-10s %8.2f %9.0f %7.1f %8.2f %7.2f %7.2f %10.2f %8.2f\n", title, w->seconds, w->messages,
               w->cpu_percent, w->cpu_s, w->cpu_user_s, w->cpu_system_s, w->cpu_us_per_message, w->user_us_per_message);
}

void print_outcomes(const char* role, std::uint64_t count, const std::optional<role_outcomes>& o, std::ostream& out) {
    if (!o) return;
    std::string got;
    const auto add = [&got](const char* what, std::uint64_t n) {
        if (n != 0) got += fmt("%s %llu  ", what, static_cast<unsigned long long>(n));
    };
    add("open", o->open);
    add("connect_failed", o->connect_failed);
    add("handshake_failed", o->handshake_failed);
    add("ws_idle_close", o->ws_idle_close);
    add("ws_other_close", o->ws_other_close);
    add("dropped", o->dropped);
    add("error", o->error);
    std::string verdict = o->role_passed ? "pass" : "FAIL";
    if (o->role_passed && o->expected == "unbounded")
        verdict = fmt("pass (unbounded%s %llu open at the end)",
                      o->ws_idle_close + o->ws_other_close + o->dropped == 0
                          ? ","
                          : fmt(": %llu closed,", static_cast<unsigned long long>(o->ws_idle_close + o->ws_other_close +
                                                                                  o->dropped))
                                .c_str(),
                      static_cast<unsigned long long>(o->open));
    const auto why = [&verdict](const char* what, std::uint64_t n) {
        if (n != 0) verdict += fmt(" %s %llu", what, static_cast<unsigned long long>(n));
    };
    why("false", o->false_kicks);
    why("missed", o->missed_kicks);
    why("wrong", o->wrong_outcomes);
    why("unresolved", o->unresolved);
    why("errors", o->errors);
    out << fmt("           %-7s %7llu  %-22s  %-8s %s\n", role, static_cast<unsigned long long>(count),
               o->expected.c_str(), verdict.c_str(), got.c_str());
}

// Absent figures print as 0 in the side-by-side table, as they did when read from JSON.
double value_or_zero(const std::optional<cost_window>& w, double cost_window::*field) { return w ? (*w).*field : 0; }

}  // namespace

void print_run(const run_result& r, std::ostream& out) {
    const auto& sc = r.scenario;
    const auto& cost = r.server_cost;
    const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
    out << "== loadgen: " << r.label << " (" << sc.protocol << ", " << sc.connections << " connections) ==\n";
    const bool stats = !r.stats.before.empty();
    if (sc.url.empty())
        out << fmt("server     timers=%s threads=%.0f tick=%.0f ms idle-timeout=%.0f ms\n", r.server.timers.c_str(),
                   r.server.threads, r.server.tick_ms, r.server.idle_timeout_ms);
    else
        out << fmt("server     %s, expected: %s; verdicts from the client side%s\n", sc.url.c_str(), sc.expect.c_str(),
                   stats ? fmt(", /stats: timers=%s", r.server.timers.c_str()).c_str() : ", no /stats");
    if (!r.promise.empty()) out << "promise    " << r.promise << "\n";
    out << fmt("mix        idle %llu, active %llu, pinger %llu, dead %llu%s; %s; %llu-byte messages; duration %.0f s\n",
               n(sc.mix.idle), n(sc.mix.active), n(sc.mix.pinger), n(sc.mix.dead),
               sc.mix.stalled != 0 ? fmt(", stalled %llu (handshake deadline %.0f ms)", n(sc.mix.stalled),
                                         sc.handshake_timeout_ms)
                                         .c_str()
                                   : "",
               sc.closed_loop ? "closed loop (next message when the echo arrives)"
                              : fmt("interval %.0f ms", sc.interval_ms).c_str(),
               n(sc.message_size), sc.duration_s);
    out << fmt("connect    %llu up, %llu connect failed, %llu handshake failed; all up after %.2f s (%.0f/s)\n",
               n(r.connect.ready), n(r.connect.connect_failed), n(r.connect.handshake_failed), r.connect.phase_s,
               r.connect.rate_per_s);
    out << "outcomes   role      count  expected                verdict  got\n";
    print_outcomes("idle", sc.mix.idle, r.outcomes.idle, out);
    print_outcomes("active", sc.mix.active, r.outcomes.active, out);
    print_outcomes("pinger", sc.mix.pinger, r.outcomes.pinger, out);
    print_outcomes("dead", sc.mix.dead, r.outcomes.dead, out);
    print_outcomes("stalled", sc.mix.stalled, r.outcomes.stalled, out);
    out << "kick lateness (ms)      n      min      p50      p99      max   reference\n";
    const auto lateness_row = [&](const char* role, const distribution& d, const char* reference) {
        if (d.n == 0) return;
        out << fmt("           %-7s %6llu %8.2f %8.2f %8.2f %8.2f   %s\n", role, n(d.n), d.min, d.p50, d.p99, d.max,
                   reference);
    };
    lateness_row("idle", r.kick_lateness_ms.idle, "its message was written");
    lateness_row("pinger", r.kick_lateness_ms.pinger, "its handshake began");
    // When each role's closes came, against its window (or, unbounded, just when).
    const auto closes_row = [&](const char* role, const std::optional<role_closes>& c) {
        if (!c || c->closed == 0) return;
        const auto& d = c->event == "connect" ? c->after_connect_s
                        : c->event == "message" ? c->after_message_s
                                                : c->after_handshake_s;
        std::string how = c->bare != 0 ? fmt("%llu bare", n(c->bare)) : std::string();
        if (!c->codes.empty()) how += (how.empty() ? "" : ", ") + ("frames " + c->codes);
        out << fmt("closes     %-7s %llu closed %.2f .. %.2f s after %s (p50 %.2f s; %s)%s\n", role, n(c->closed),
                   d.min, d.max, c->event.c_str(), d.p50, how.c_str(),
                   c->promise.find("..") != std::string::npos ? fmt("; promised %s", c->promise.c_str()).c_str() : "");
    };
    closes_row("idle", r.closes.idle);
    closes_row("active", r.closes.active);
    closes_row("pinger", r.closes.pinger);
    closes_row("dead", r.closes.dead);
    closes_row("stalled", r.closes.stalled);
    if (sc.expect == "observe") {
        out << "observed   when each role's connections closed, after each event (s: min .. max):\n";
        const auto observed = [&](const char* role, const std::optional<role_closes>& c) {
            if (!c) return;
            if (c->closed == 0) {
                out << fmt("           %-7s none closed, %llu open at the end\n", role, n(c->open));
                return;
            }
            out << fmt("           %-7s %llu closed (%llu bare%s%s), %llu open; after connect %.2f .. %.2f, handshake "
                       "%.2f .. %.2f, message %.2f .. %.2f\n",
                       role, n(c->closed), n(c->bare), c->codes.empty() ? "" : ", frames ", c->codes.c_str(),
                       n(c->open), c->after_connect_s.min, c->after_connect_s.max, c->after_handshake_s.min,
                       c->after_handshake_s.max, c->after_message_s.min, c->after_message_s.max);
        };
        observed("idle", r.closes.idle);
        observed("active", r.closes.active);
        observed("pinger", r.closes.pinger);
        observed("dead", r.closes.dead);
        observed("stalled", r.closes.stalled);
        std::string fits = r.fits;
        for (std::size_t at = 0; (at = fits.find('\n', at)) != std::string::npos; at += 12) fits.replace(at, 1, "\n           ");
        out << "fits       " << fits << "\n";
    }
    const auto& c = r.checks;
    out << fmt(
        "checks     false kicks %llu (early %llu), missed kicks %llu, wrong outcomes %llu, unresolved %llu, errors "
        "%llu  ->  %s\n",
        n(c.false_kicks), n(c.early_kicks), n(c.missed_kicks), n(c.wrong_outcomes), n(c.unresolved), n(c.errors),
        c.passed ? "PASS" : "FAIL");
    out << fmt("           missed = still open %.0f ms after due (2 ticks + allowance %.0f ms)\n", c.slack_ms,
               sc.allowance_ms);
    out << fmt(
        "           without the allowance (due + 2 ticks exactly, as seen by the client): %llu later, by at most %.2f "
        "ms\n",
        n(c.past_two_ticks), c.past_two_ticks_max_ms);
    for (const auto& p : r.problems)
        out << fmt("  ! %6llu x %s, e.g. %s\n", n(p.count), p.what.c_str(), p.example.c_str());
    out << fmt(
        "echo       %llu sent, %llu echoes to active clients, %.0f echoes/s, rtt p50 %.2f ms p99 %.2f ms max %.2f ms, "
        "%llu late sends\n",
        n(r.echo.sent), n(r.echo.echoed_active), r.echo.echoes_per_s, r.echo.rtt_ms.p50, r.echo.rtt_ms.p99,
        r.echo.rtt_ms.max, n(r.echo.late_sends));
    if (r.reconnect) {
        const auto& rc = *r.reconnect;
        out << fmt(
            "reconnect  %llu reconnects (%llu closes 1001; retried: %llu connect failed, %llu upgrade failed); close -> "
            "up again p50 %.1f ms p99 %.1f ms max %.1f ms (dead clients: p50 %.1f ms, after --close-timeout)\n",
            n(rc.reconnects), n(rc.going_away), n(rc.retry_connect_failed), n(rc.retry_upgrade_failed),
            rc.reconnect_ms.p50, rc.reconnect_ms.p99, rc.reconnect_ms.max, rc.reconnect_dead_ms.p50);
        out << fmt("sequence   %llu messages, %llu echoed in order, %llu resent, %llu pending at the end, %llu out of "
                   "order  ->  echoes lost %llu\n",
                   n(rc.messages), n(rc.echoed_in_order), n(rc.resent), n(rc.pending_at_end), n(rc.echo_mismatch),
                   n(rc.echoes_lost));
    }
    if (!stats) {
        // Any server without --http-port: nothing is known of its cost.
        const auto& cl = r.client;
        out << "server     cost not measured (no /stats: that needs demo_server's --http-port)\n";
        out << fmt(
            "loadgen    %.1f CPU s (%.0f %% of one core, %llu threads); loop lag p50 %.2f ms p99 %.2f ms max %.2f ms\n",
            cl.cpu_s, cl.cpu_percent, n(cl.threads), cl.loop_lag_ms.p50, cl.loop_lag_ms.p99, cl.loop_lag_ms.max);
        if (cl.overloaded)
            out << "warning    loadgen's own loop ran over 100 ms late: it answered pings and read echoes late\n";
        return;
    }
    out << "server CPU window      s  messages   cpu %    cpu s    user     sys us/message  user us\n"
           "  (steady: every connection up -> end; kicks: -> last kick; after: last kick -> end, active clients "
           "only)\n";
    print_window(cost.whole, "whole run", out);
    print_window(cost.steady, "steady", out);
    print_window(cost.full_load, "full load", out);
    print_window(cost.kick_phase, "kicks", out);
    print_window(cost.after_kicks, "after", out);
    if (const auto& iv = cost.steady_intervals)
        out << fmt("  steady, per %.0f ms interval: median %.2f us/message (p10 %.2f, p90 %.2f, %llu intervals)\n",
                   sc.stats_interval_ms, iv->cpu_us_per_message_median, iv->cpu_us_per_message_p10,
                   iv->cpu_us_per_message_p90, n(iv->n));
    out << fmt(
        "memory     RSS before %.1f MB, at full load %.1f MB with %llu connections -> %.0f bytes per connection; at "
        "the end %.1f MB\n",
        cost.rss_before_bytes / 1048576, cost.rss_full_bytes / 1048576, n(cost.connections_at_full),
        cost.rss_bytes_per_connection.value_or(0), cost.rss_after_bytes / 1048576);
    out << fmt("timers     asio timer re-arms %.0f, wheel wake-ups %.0f, wheel worst lateness %.0f us\n",
               cost.asio_timer_rearms, cost.wheel_wakeups, cost.wheel_worst_lateness_us);
    if (const auto& m = r.machine)
        out << fmt(
            "machine    %.0f CPUs, %.0f %% busy during the run (all processes), %.1f %% in interrupts, %.1f %% stolen; "
            "load average at the end %s\n",
            m->cpus, m->busy_percent, m->irq_percent, m->steal_percent, m->loadavg_at_end.c_str());
    const auto& cl = r.client;
    out << fmt(
        "loadgen    %.1f CPU s (%.0f %% of one core, %llu threads); loop lag p50 %.2f ms p99 %.2f ms max %.2f ms\n",
        cl.cpu_s, cl.cpu_percent, n(cl.threads), cl.loop_lag_ms.p50, cl.loop_lag_ms.p99, cl.loop_lag_ms.max);
    if (cl.overloaded)
        out << "warning    loadgen's own loop ran over 100 ms late: it answered pings and read echoes late, so some "
               "lateness,\n"
               "           round trips and even kicks are its own doing (fewer connections, more --threads, or a "
               "quieter machine)\n";
    if (!cost.full_load_valid)
        out << "warning    the server closed connections before every connection was up: no memory-per-connection "
               "figure\n"
               "           (raise --connect-rate or the idle timeout so the connect phase ends before the first "
               "kick)\n";
    if (cost.stats_errors > 0) out << fmt("warning    %llu /stats reads failed\n", n(cost.stats_errors));
}

json::object compare(const run_result& a, const run_result& b, std::ostream& out) {
    const auto ratio = [](double x, double y) { return y != 0 ? x / y : 0.0; };
    json::object ratios;
    using figure = double (*)(const run_result&);
    const auto row = [&](const char* title, const char* key, figure get, const char* format, double unit = 1) {
        const double x = get(a) / unit, y = get(b) / unit;
        const double q = ratio(x, y);
        if (key != nullptr) ratios[key] = q;
        const std::string fx = fmt(format, x), fy = fmt(format, y);
        out << fmt("%-40s %14s %14s %10s\n", title, fx.c_str(), fy.c_str(), y != 0 ? fmt("%.3f", q).c_str() : "-");
    };
    const auto count = [](std::uint64_t v) { return static_cast<double>(v); };
    // clang-format off
    out << fmt("%-40s %14s %14s %10s\n", "", a.label.c_str(), b.label.c_str(), (a.label + "/" + b.label).c_str());
    row("server CPU / echoed msg, steady (us)", "cpu_per_message_steady", [](const run_result& r) { return value_or_zero(r.server_cost.steady, &cost_window::cpu_us_per_message); }, "%.2f");
    row("  same, median of 500 ms intervals (us)", "cpu_per_message_steady_median", [](const run_result& r) { return r.server_cost.steady_intervals ? r.server_cost.steady_intervals->cpu_us_per_message_median : 0; }, "%.2f");
    row("  p10 of 500 ms intervals (us)", "cpu_per_message_steady_p10", [](const run_result& r) { return r.server_cost.steady_intervals ? r.server_cost.steady_intervals->cpu_us_per_message_p10 : 0; }, "%.2f");
    row("  user part, steady (us; sampled split)", "user_per_message_steady", [](const run_result& r) { return value_or_zero(r.server_cost.steady, &cost_window::user_us_per_message); }, "%.2f");
    row("server CPU / echoed msg, whole (us)", "cpu_per_message_whole", [](const run_result& r) { return value_or_zero(r.server_cost.whole, &cost_window::cpu_us_per_message); }, "%.2f");
    row("server CPU / echoed msg, full load (us)", "cpu_per_message_full_load", [](const run_result& r) { return value_or_zero(r.server_cost.full_load, &cost_window::cpu_us_per_message); }, "%.2f");
    row("server CPU / echoed msg, kicks (us)", "cpu_per_message_kick_phase", [](const run_result& r) { return value_or_zero(r.server_cost.kick_phase, &cost_window::cpu_us_per_message); }, "%.2f");
    row("  user part, kicks (us; sampled split)", nullptr, [](const run_result& r) { return value_or_zero(r.server_cost.kick_phase, &cost_window::user_us_per_message); }, "%.2f");
    row("server CPU / echoed msg, after kicks (us)", "cpu_per_message_after_kicks", [](const run_result& r) { return value_or_zero(r.server_cost.after_kicks, &cost_window::cpu_us_per_message); }, "%.2f");
    row("  user part, after kicks (us; sampled split)", nullptr, [](const run_result& r) { return value_or_zero(r.server_cost.after_kicks, &cost_window::user_us_per_message); }, "%.2f");
    row("server CPU seconds, whole run", "cpu_seconds_whole", [](const run_result& r) { return value_or_zero(r.server_cost.whole, &cost_window::cpu_s); }, "%.2f");
    row("  of which user", nullptr, [](const run_result& r) { return value_or_zero(r.server_cost.whole, &cost_window::cpu_user_s); }, "%.2f");
    row("server CPU %, steady", "cpu_percent_steady", [](const run_result& r) { return value_or_zero(r.server_cost.steady, &cost_window::cpu_percent); }, "%.1f");
    row("server CPU %, full load", nullptr, [](const run_result& r) { return value_or_zero(r.server_cost.full_load, &cost_window::cpu_percent); }, "%.1f");
    row("echoed messages, steady", nullptr, [](const run_result& r) { return value_or_zero(r.server_cost.steady, &cost_window::messages); }, "%.0f");
    row("RSS per connection (bytes)", "rss_per_connection", [](const run_result& r) { return r.server_cost.rss_bytes_per_connection.value_or(0); }, "%.0f");
    row("RSS at full load (MB)", nullptr, [](const run_result& r) { return r.server_cost.rss_full_bytes; }, "%.1f", 1048576);
    row("RSS before connecting (MB)", nullptr, [](const run_result& r) { return r.server_cost.rss_before_bytes; }, "%.1f", 1048576);
    row("kick lateness p50 (ms)", "lateness_p50", [](const run_result& r) { return r.kick_lateness_ms.idle.p50; }, "%.2f");
    row("kick lateness p99 (ms)", "lateness_p99", [](const run_result& r) { return r.kick_lateness_ms.idle.p99; }, "%.2f");
    row("kick lateness max (ms)", "lateness_max", [](const run_result& r) { return r.kick_lateness_ms.idle.max; }, "%.2f");
    row("pinger kick lateness p99 (ms)", nullptr, [](const run_result& r) { return r.kick_lateness_ms.pinger.p99; }, "%.2f");
    row("echo rtt p99 (ms)", nullptr, [](const run_result& r) { return r.echo.rtt_ms.p99; }, "%.2f");
    row("loadgen loop lag max (ms)", nullptr, [](const run_result& r) { return r.client.loop_lag_ms.max; }, "%.2f");
    row("machine busy during the run (%)", nullptr, [](const run_result& r) { return r.machine ? r.machine->busy_percent : 0; }, "%.0f");
    row("false kicks", nullptr, [](const run_result& r) { return static_cast<double>(r.checks.false_kicks); }, "%.0f");
    row("missed kicks", nullptr, [](const run_result& r) { return static_cast<double>(r.checks.missed_kicks); }, "%.0f");
    out << fmt("%-40s %14.0f %14.0f\n", "  closed past due + 2 ticks, no allowance", count(a.checks.past_two_ticks), count(b.checks.past_two_ticks));
    out << fmt("%-40s %14.2f %14.2f\n", "  by at most (ms)", a.checks.past_two_ticks_max_ms, b.checks.past_two_ticks_max_ms);
    row("wrong outcomes", nullptr, [](const run_result& r) { return static_cast<double>(r.checks.wrong_outcomes); }, "%.0f");
    out << fmt("%-40s %14.0f %14.0f\n", "unresolved", count(a.checks.unresolved), count(b.checks.unresolved));
    out << fmt("%-40s %14.0f %14.0f\n", "connection errors", count(a.checks.errors), count(b.checks.errors));
    // clang-format on

    const auto clean = [](const run_result& r) { return r.checks.false_kicks == 0 && r.checks.missed_kicks == 0; };
    const double cpu_a = value_or_zero(a.server_cost.steady, &cost_window::cpu_us_per_message);
    const double cpu_b = value_or_zero(b.server_cost.steady, &cost_window::cpu_us_per_message);
    const auto median = [](const run_result& r) {
        return r.server_cost.steady_intervals ? r.server_cost.steady_intervals->cpu_us_per_message_median : 0;
    };
    const double med_a = median(a), med_b = median(b);
    const double rss_a = a.server_cost.rss_bytes_per_connection.value_or(0),
                 rss_b = b.server_cost.rss_bytes_per_connection.value_or(0);
    const bool less_cpu = cpu_a > 0 && cpu_b > 0 && cpu_a < cpu_b;
    const bool less_cpu_median = med_a > 0 && med_b > 0 && med_a < med_b;
    const bool less_memory = rss_a > 0 && rss_b > 0 && rss_a < rss_b;
    const bool memory_measured = rss_a > 0 && rss_b > 0;
    json::object targets{{"less_cpu_per_message", less_cpu},
                         {"less_cpu_per_message_median", less_cpu_median},
                         {"less_memory_per_connection", less_memory},
                         {"no_false_or_missed_kicks", clean(a) && clean(b)},
                         {"all_checks_passed", a.checks.passed && b.checks.passed},
                         {"memory_measured", memory_measured}};
    out << "targets: " << a.label << " uses less CPU per echoed message than " << b.label << ": " << yes_no(less_cpu)
        << " (interval median: " << yes_no(less_cpu_median) << ")"
        << "; less memory per connection: " << (!memory_measured ? "not measured" : yes_no(less_memory))
        << "; 0 false and 0 missed kicks in both: " << yes_no(clean(a) && clean(b)) << "\n";
    return json::object{
        {"runs", json::array{to_json(a), to_json(b)}}, {"ratios", std::move(ratios)}, {"targets", std::move(targets)}};
}

}  // namespace loadgen
