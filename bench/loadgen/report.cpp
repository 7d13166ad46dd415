#include "report.hpp"

#include "json_util.hpp"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace loadgen {

namespace json = boost::json;

namespace {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string fmt(const char* format, ...) {
    char buf[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    return buf;
}

std::string str(std::string_view s) { return std::string(s); }

const char* role_keys[] = {"idle", "active", "pinger", "dead"};

void print_window(const json::object& r, const char* key, const char* title, std::ostream& out) {
    const auto& w = object_at(r, {"server_cost", key});
    if (w.empty()) return;
    out << fmt("  %-10s %8.2f %9.0f %7.1f %8.2f %7.2f %7.2f %10.2f %8.2f\n", title, number(w, {"seconds"}), number(w, {"messages"}),
               number(w, {"cpu_percent"}), number(w, {"cpu_s"}), number(w, {"cpu_user_s"}), number(w, {"cpu_system_s"}),
               number(w, {"cpu_us_per_message"}), number(w, {"user_us_per_message"}));
}

}  // namespace

void print_run(const json::object& r, std::ostream& out) {
    const bool ok = number(r, {"checks", "passed"}) != 0;
    out << "== loadgen: " << str(string_at(r, {"label"})) << " ("
        << str(string_at(r, {"scenario", "protocol"})) << ", " << number(r, {"scenario", "connections"}) << " connections) ==\n";
    out << fmt("server     timers=%s threads=%.0f tick=%.0f ms idle-timeout=%.0f ms\n", str(string_at(r, {"server", "timers"})).c_str(),
               number(r, {"server", "threads"}), number(r, {"server", "tick_ms"}), number(r, {"server", "idle_timeout_ms"}));
    out << fmt("mix        idle %.0f, active %.0f, pinger %.0f, dead %.0f; interval %.0f ms; %.0f-byte messages; duration %.0f s\n",
               number(r, {"scenario", "mix", "idle"}), number(r, {"scenario", "mix", "active"}), number(r, {"scenario", "mix", "pinger"}),
               number(r, {"scenario", "mix", "dead"}), number(r, {"scenario", "interval_ms"}), number(r, {"scenario", "message_size"}),
               number(r, {"scenario", "duration_s"}));
    out << fmt("connect    %.0f up, %.0f connect failed, %.0f handshake failed; all up after %.2f s (%.0f/s)\n", number(r, {"connect", "ready"}),
               number(r, {"connect", "connect_failed"}), number(r, {"connect", "handshake_failed"}), number(r, {"connect", "phase_s"}),
               number(r, {"connect", "rate_per_s"}));
    out << "outcomes   role      count  expected        got\n";
    for (const char* role : role_keys) {
        const auto& o = object_at(r, {"outcomes", role});
        if (o.empty()) continue;
        std::string got;
        for (const auto& kv : o) {
            if (kv.key() == "expected") continue;
            got += str(kv.key()) + " " + fmt("%.0f", as_number(&kv.value())) + "  ";
        }
        out << fmt("           %-7s %7.0f  %-14s  %s\n", role, number(r, {"scenario", "mix", role}), str(string_at(o, {"expected"})).c_str(), got.c_str());
    }
    out << "kick lateness (ms)      n      min      p50      p99      max   reference\n";
    const auto lateness_row = [&](const char* role, const char* reference) {
        const auto& s = object_at(r, {"kick_lateness_ms", role});
        if (number(s, {"n"}) == 0) return;
        out << fmt("           %-7s %6.0f %8.2f %8.2f %8.2f %8.2f   %s\n", role, number(s, {"n"}), number(s, {"min"}), number(s, {"p50"}),
                   number(s, {"p99"}), number(s, {"max"}), reference);
    };
    lateness_row("idle", "its message was written");
    lateness_row("pinger", "its handshake began");
    const auto& dead = object_at(r, {"dead_detection_s"});
    if (number(dead, {"n"}) > 0)
        out << fmt("dead drop  %.0f dropped %.2f .. %.2f s after the handshake (p50 %.2f s; due after ping-interval %.0f ms + jitter <= %.0f ms + pong-timeout %.0f ms)\n",
                   number(dead, {"n"}), number(dead, {"min"}), number(dead, {"max"}), number(dead, {"p50"}),
                   number(r, {"scenario", "ping_interval_ms"}), number(r, {"scenario", "ping_jitter_ms"}), number(r, {"scenario", "pong_timeout_ms"}));
    out << fmt("checks     false kicks %.0f (early %.0f), missed kicks %.0f, wrong outcomes %.0f, unresolved %.0f, errors %.0f  ->  %s\n",
               number(r, {"checks", "false_kicks"}), number(r, {"checks", "early_kicks"}), number(r, {"checks", "missed_kicks"}),
               number(r, {"checks", "wrong_outcomes"}), number(r, {"checks", "unresolved"}), number(r, {"checks", "errors"}), ok ? "PASS" : "FAIL");
    out << fmt("           missed = still open %.0f ms after due (2 ticks + allowance %.0f ms)\n", number(r, {"checks", "slack_ms"}),
               number(r, {"scenario", "allowance_ms"}));
    out << fmt("           without the allowance (due + 2 ticks exactly, as seen by the client): %.0f later, by at most %.2f ms\n",
               number(r, {"checks", "past_two_ticks"}), number(r, {"checks", "past_two_ticks_max_ms"}));
    for (const auto& p : array_at(r, {"problems"})) {
        if (!p.is_object()) continue;
        out << fmt("  ! %6.0f x %s, e.g. %s\n", number(p.get_object(), {"count"}), str(string_at(p.get_object(), {"what"})).c_str(),
                   str(string_at(p.get_object(), {"example"})).c_str());
    }
    out << fmt("echo       %.0f sent, %.0f echoes to active clients, %.0f echoes/s, rtt p50 %.2f ms p99 %.2f ms max %.2f ms, %.0f late sends\n",
               number(r, {"echo", "sent"}), number(r, {"echo", "echoed_active"}), number(r, {"echo", "echoes_per_s"}),
               number(r, {"echo", "rtt_ms", "p50"}), number(r, {"echo", "rtt_ms", "p99"}), number(r, {"echo", "rtt_ms", "max"}),
               number(r, {"echo", "late_sends"}));
    out << "server CPU window      s  messages   cpu %    cpu s    user     sys us/message  user us\n"
           "  (steady: every connection up -> end; kicks: -> last kick; after: last kick -> end, active clients only)\n";
    print_window(r, "whole", "whole run", out);
    print_window(r, "steady", "steady", out);
    print_window(r, "full_load", "full load", out);
    print_window(r, "kick_phase", "kicks", out);
    print_window(r, "after_kicks", "after", out);
    const auto& cost = object_at(r, {"server_cost"});
    const auto& iv = object_at(cost, {"steady_intervals"});
    if (!iv.empty())
        out << fmt("  steady, per %.0f ms interval: median %.2f us/message (p10 %.2f, p90 %.2f, %.0f intervals)\n",
                   number(r, {"scenario", "stats_interval_ms"}), number(iv, {"cpu_us_per_message_median"}), number(iv, {"cpu_us_per_message_p10"}),
                   number(iv, {"cpu_us_per_message_p90"}), number(iv, {"n"}));
    out << fmt("memory     RSS before %.1f MB, at full load %.1f MB with %.0f connections -> %.0f bytes per connection; at the end %.1f MB\n",
               number(cost, {"rss_before_bytes"}) / 1048576, number(cost, {"rss_full_bytes"}) / 1048576, number(cost, {"connections_at_full"}),
               number(cost, {"rss_bytes_per_connection"}), number(cost, {"rss_after_bytes"}) / 1048576);
    out << fmt("timers     asio timer re-arms %.0f, wheel wake-ups %.0f, wheel worst lateness %.0f us\n", number(cost, {"asio_timer_rearms"}),
               number(cost, {"wheel_wakeups"}), number(cost, {"wheel_worst_lateness_us"}));
    const auto& machine = object_at(r, {"machine"});
    if (!machine.empty())
        out << fmt("machine    %.0f CPUs, %.0f %% busy during the run (all processes), %.1f %% in interrupts, %.1f %% stolen; load average at the end %s\n",
                   number(machine, {"cpus"}), number(machine, {"busy_percent"}), number(machine, {"irq_percent"}), number(machine, {"steal_percent"}),
                   str(string_at(machine, {"loadavg_at_end"})).c_str());
    const auto& client = object_at(r, {"client"});
    out << fmt("loadgen    %.1f CPU s (%.0f %% of one core, %.0f threads); loop lag p50 %.2f ms p99 %.2f ms max %.2f ms\n", number(client, {"cpu_s"}),
               number(client, {"cpu_percent"}), number(client, {"threads"}), number(client, {"loop_lag_ms", "p50"}),
               number(client, {"loop_lag_ms", "p99"}), number(client, {"loop_lag_ms", "max"}));
    if (number(client, {"overloaded"}) != 0)
        out << "warning    loadgen's own loop ran over 100 ms late: it answered pings and read echoes late, so some lateness,\n"
               "           round trips and even kicks are its own doing (fewer connections, more --threads, or a quieter machine)\n";
    if (number(cost, {"full_load_valid"}) == 0)
        out << "warning    the server closed connections before every connection was up: no memory-per-connection figure\n"
               "           (raise --connect-rate or the idle timeout so the connect phase ends before the first kick)\n";
    if (number(cost, {"stats_errors"}) > 0) out << fmt("warning    %.0f /stats reads failed\n", number(cost, {"stats_errors"}));
}

json::object compare(const json::object& a, const json::object& b, std::ostream& out) {
    const auto la = str(string_at(a, {"label"})), lb = str(string_at(b, {"label"}));
    const auto ratio = [](double x, double y) { return y != 0 ? x / y : 0.0; };
    json::object ratios;
    const auto row = [&](const char* title, const char* key, std::initializer_list<std::string_view> path, const char* format,
                         double unit = 1) {
        const double x = number(a, path) / unit, y = number(b, path) / unit;
        const double q = ratio(x, y);
        if (key != nullptr) ratios[key] = q;
        const std::string fx = fmt(format, x), fy = fmt(format, y);
        out << fmt("%-40s %14s %14s %10s\n", title, fx.c_str(), fy.c_str(), y != 0 ? fmt("%.3f", q).c_str() : "-");
    };
    out << fmt("%-40s %14s %14s %10s\n", "", la.c_str(), lb.c_str(), (la + "/" + lb).c_str());
    row("server CPU / echoed msg, steady (us)", "cpu_per_message_steady", {"server_cost", "steady", "cpu_us_per_message"}, "%.2f");
    row("  same, median of 500 ms intervals (us)", "cpu_per_message_steady_median", {"server_cost", "steady_intervals", "cpu_us_per_message_median"}, "%.2f");
    row("  p10 of 500 ms intervals (us)", "cpu_per_message_steady_p10", {"server_cost", "steady_intervals", "cpu_us_per_message_p10"}, "%.2f");
    row("  user part, steady (us; sampled split)", "user_per_message_steady", {"server_cost", "steady", "user_us_per_message"}, "%.2f");
    row("server CPU / echoed msg, whole (us)", "cpu_per_message_whole", {"server_cost", "whole", "cpu_us_per_message"}, "%.2f");
    row("server CPU / echoed msg, full load (us)", "cpu_per_message_full_load", {"server_cost", "full_load", "cpu_us_per_message"}, "%.2f");
    row("server CPU / echoed msg, kicks (us)", "cpu_per_message_kick_phase", {"server_cost", "kick_phase", "cpu_us_per_message"}, "%.2f");
    row("  user part, kicks (us; sampled split)", nullptr, {"server_cost", "kick_phase", "user_us_per_message"}, "%.2f");
    row("server CPU / echoed msg, after kicks (us)", "cpu_per_message_after_kicks", {"server_cost", "after_kicks", "cpu_us_per_message"}, "%.2f");
    row("  user part, after kicks (us; sampled split)", nullptr, {"server_cost", "after_kicks", "user_us_per_message"}, "%.2f");
    row("server CPU seconds, whole run", "cpu_seconds_whole", {"server_cost", "whole", "cpu_s"}, "%.2f");
    row("  of which user", nullptr, {"server_cost", "whole", "cpu_user_s"}, "%.2f");
    row("server CPU %, steady", "cpu_percent_steady", {"server_cost", "steady", "cpu_percent"}, "%.1f");
    row("server CPU %, full load", nullptr, {"server_cost", "full_load", "cpu_percent"}, "%.1f");
    row("echoed messages, steady", nullptr, {"server_cost", "steady", "messages"}, "%.0f");
    row("RSS per connection (bytes)", "rss_per_connection", {"server_cost", "rss_bytes_per_connection"}, "%.0f");
    row("RSS at full load (MB)", nullptr, {"server_cost", "rss_full_bytes"}, "%.1f", 1048576);
    row("RSS before connecting (MB)", nullptr, {"server_cost", "rss_before_bytes"}, "%.1f", 1048576);
    row("kick lateness p50 (ms)", "lateness_p50", {"kick_lateness_ms", "idle", "p50"}, "%.2f");
    row("kick lateness p99 (ms)", "lateness_p99", {"kick_lateness_ms", "idle", "p99"}, "%.2f");
    row("kick lateness max (ms)", "lateness_max", {"kick_lateness_ms", "idle", "max"}, "%.2f");
    row("pinger kick lateness p99 (ms)", nullptr, {"kick_lateness_ms", "pinger", "p99"}, "%.2f");
    row("echo rtt p99 (ms)", nullptr, {"echo", "rtt_ms", "p99"}, "%.2f");
    row("loadgen loop lag max (ms)", nullptr, {"client", "loop_lag_ms", "max"}, "%.2f");
    row("machine busy during the run (%)", nullptr, {"machine", "busy_percent"}, "%.0f");
    row("false kicks", nullptr, {"checks", "false_kicks"}, "%.0f");
    row("missed kicks", nullptr, {"checks", "missed_kicks"}, "%.0f");
    out << fmt("%-40s %14.0f %14.0f\n", "  closed past due + 2 ticks, no allowance", number(a, {"checks", "past_two_ticks"}),
               number(b, {"checks", "past_two_ticks"}));
    out << fmt("%-40s %14.2f %14.2f\n", "  by at most (ms)", number(a, {"checks", "past_two_ticks_max_ms"}),
               number(b, {"checks", "past_two_ticks_max_ms"}));
    row("wrong outcomes", nullptr, {"checks", "wrong_outcomes"}, "%.0f");
    out << fmt("%-40s %14.0f %14.0f\n", "unresolved", number(a, {"checks", "unresolved"}), number(b, {"checks", "unresolved"}));
    out << fmt("%-40s %14.0f %14.0f\n", "connection errors", number(a, {"checks", "errors"}), number(b, {"checks", "errors"}));

    const auto clean = [](const json::object& r) {
        return number(r, {"checks", "false_kicks"}) == 0 && number(r, {"checks", "missed_kicks"}) == 0;
    };
    const double cpu_a = number(a, {"server_cost", "steady", "cpu_us_per_message"}), cpu_b = number(b, {"server_cost", "steady", "cpu_us_per_message"});
    const double med_a = number(a, {"server_cost", "steady_intervals", "cpu_us_per_message_median"}),
                 med_b = number(b, {"server_cost", "steady_intervals", "cpu_us_per_message_median"});
    const double rss_a = number(a, {"server_cost", "rss_bytes_per_connection"}), rss_b = number(b, {"server_cost", "rss_bytes_per_connection"});
    json::object targets{{"less_cpu_per_message", cpu_a > 0 && cpu_b > 0 && cpu_a < cpu_b},
                         {"less_cpu_per_message_median", med_a > 0 && med_b > 0 && med_a < med_b},
                         {"less_memory_per_connection", rss_a > 0 && rss_b > 0 && rss_a < rss_b},
                         {"no_false_or_missed_kicks", clean(a) && clean(b)},
                         {"all_checks_passed", number(a, {"checks", "passed"}) != 0 && number(b, {"checks", "passed"}) != 0}};
    const bool memory_measured = rss_a > 0 && rss_b > 0;
    targets["memory_measured"] = memory_measured;
    out << "targets: " << la << " uses less CPU per echoed message than " << lb << ": " << (targets["less_cpu_per_message"].as_bool() ? "met" : "NOT met")
        << " (interval median: " << (targets["less_cpu_per_message_median"].as_bool() ? "met" : "NOT met") << ")"
        << "; less memory per connection: "
        << (!memory_measured ? "not measured" : targets["less_memory_per_connection"].as_bool() ? "met" : "NOT met")
        << "; 0 false and 0 missed kicks in both: " << (targets["no_false_or_missed_kicks"].as_bool() ? "met" : "NOT met") << "\n";
    return json::object{{"runs", json::array{a, b}}, {"ratios", std::move(ratios)}, {"targets", std::move(targets)}};
}

}  // namespace loadgen
