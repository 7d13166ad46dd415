#include "analysis.hpp"

#include "json_util.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <unistd.h>
#include <map>
#include <numeric>

namespace loadgen {

namespace json = boost::json;

namespace {

// Nearest-rank percentile of a sorted sample.
template <class T>
double percentile(const std::vector<T>& sorted, double q) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return static_cast<double>(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]);
}

// n, min, p50, p99, max, mean of `values` (sorted here), scaled by `scale`.
template <class T>
json::object summary(std::vector<T>& values, double scale) {
    std::sort(values.begin(), values.end());
    json::object o;
    o["n"] = values.size();
    if (values.empty()) return o;
    const double sum = std::accumulate(values.begin(), values.end(), 0.0, [](double a, T b) { return a + static_cast<double>(b); });
    o["min"] = static_cast<double>(values.front()) * scale;
    o["p50"] = percentile(values, 0.50) * scale;
    o["p99"] = percentile(values, 0.99) * scale;
    o["max"] = static_cast<double>(values.back()) * scale;
    o["mean"] = sum / static_cast<double>(values.size()) * scale;
    return o;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

double ms(nanoseconds d) { return millis(d); }

std::string loadavg() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    f >> a >> b >> c;
    return a + " " + b + " " + c;
}

// The expected way each role's connection ends. A server without liveness (--timers=none, the
// benchmark baseline) closes nobody.
outcome expected_outcome(role r, protocol p, bool liveness) {
    if (!liveness) return outcome::open;
    switch (r) {
        case role::active: return outcome::open;
        case role::idle: return p == protocol::tcp ? outcome::dropped : outcome::idle_close;
        case role::pinger: return outcome::idle_close;
        case role::dead: return outcome::dropped;
    }
    return outcome::open;
}

// The server's cost between two /stats documents.
struct window {
    double cpu = 0, user = 0, messages = 0, seconds = 0;
};
window between(const json::object& a, const json::object& b) {
    window w;
    w.cpu = (number(b, {"process", "cpu_user_s"}) + number(b, {"process", "cpu_system_s"})) -
            (number(a, {"process", "cpu_user_s"}) + number(a, {"process", "cpu_system_s"}));
    w.user = number(b, {"process", "cpu_user_s"}) - number(a, {"process", "cpu_user_s"});
    w.messages = number(b, {"messages"}) - number(a, {"messages"});
    w.seconds = number(b, {"uptime_s"}) - number(a, {"uptime_s"});
    return w;
}

json::object describe(const window& w) {
    json::object o;
    o["cpu_s"] = w.cpu;
    o["cpu_user_s"] = w.user;
    o["cpu_system_s"] = w.cpu - w.user;
    o["messages"] = w.messages;
    o["seconds"] = w.seconds;
    o["cpu_percent"] = w.seconds > 0 ? 100 * w.cpu / w.seconds : 0;
    o["messages_per_s"] = w.seconds > 0 ? w.messages / w.seconds : 0;
    o["cpu_us_per_message"] = w.messages > 0 ? 1e6 * w.cpu / w.messages : 0;
    o["user_us_per_message"] = w.messages > 0 ? 1e6 * w.user / w.messages : 0;
    return o;
}

}  // namespace

json::object analyse(const scenario& plan, const run_data& data) {
    const auto T = data.idle_timeout.count();
    const auto tick = data.tick.count();
    const auto slack = 2 * tick + plan.allowance.count();
    const auto ping = plan.ping_interval.count(), pong = plan.pong_timeout.count(), jitter = plan.ping_jitter.count();
    const bool liveness = string_at(data.before, {"timers"}) != "none";

    std::uint64_t false_kicks = 0, early_kicks = 0, missed = 0, wrong = 0, unresolved = 0, errors = 0;
    // The same limit without the allowance (due + 2 ticks exactly), counted apart: not a failure,
    // since the client's view includes the delivery and both sides' wake-up delays.
    std::uint64_t past_two_ticks = 0;
    std::int64_t past_two_ticks_max = 0;
    const auto strict = [&](std::int64_t limit, std::int64_t at) {
        const std::int64_t over = at - (limit - plan.allowance.count());
        if (over > 0) {
            ++past_two_ticks;
            past_two_ticks_max = std::max(past_two_ticks_max, over);
        }
    };
    std::uint64_t connect_failed = 0, handshake_failed = 0, ready = 0;
    std::uint64_t sent = 0, echoed = 0, late_sends = 0;
    std::array<std::array<std::uint64_t, static_cast<std::size_t>(outcome::count)>, role_count> outcomes{};
    std::vector<std::int64_t> lateness_idle, lateness_pinger, dead_detection;
    std::int64_t first_kick = -1, last_kick = -1, last_ready = 0;
    // Failures grouped by kind, each with a count and its first example.
    std::map<std::string, std::pair<std::uint64_t, std::string>> grouped;
    const auto problem = [&grouped](const std::string& kind, std::string example) {
        auto& [count, first] = grouped[kind];
        if (count++ == 0) first = std::move(example);
    };

    for (std::size_t i = 0; i < data.records.size(); ++i) {
        const record& r = data.records[i];
        ++outcomes[index(r.who)][static_cast<std::size_t>(r.how)];
        sent += r.sent;
        if (r.who == role::active) {
            echoed += r.echoed;
            late_sends += r.late_sends;
        }
        if (r.how == outcome::connect_failed || r.how == outcome::handshake_failed) {
            ++errors;
            ++(r.how == outcome::connect_failed ? connect_failed : handshake_failed);
            problem(std::string(name(r.how)) + ": " + r.detail, "connection " + std::to_string(i) + " (" + std::string(name(r.who)) + ")");
            continue;
        }
        if (r.ready < 0) continue;  // launched, but the run ended before it was up
        ++ready;
        last_ready = std::max(last_ready, r.ready);
        if (r.how != outcome::open && (first_kick < 0 || r.closed < first_kick)) first_kick = r.closed;
        if (r.how != outcome::open) last_kick = std::max(last_kick, r.closed);
        if (r.how == outcome::error) ++errors;

        const auto who = std::string(name(r.who));
        if (r.who == role::active || !liveness) {
            if (r.how != outcome::open) {
                ++false_kicks;
                problem("false kick: " + who + " client " + std::string(name(r.how)) + (r.detail.empty() ? "" : " (" + r.detail + ")"),
                        "connection " + std::to_string(i) + " at " + std::to_string(seconds(nanoseconds(r.closed))) + " s");
            }
            continue;
        }
        // When the server's clock for this client may run out, earliest and latest.
        std::int64_t due = 0, limit = 0;
        if (r.who == role::dead) {
            due = r.ref_low + ping + pong;
            limit = r.ref_high + ping + jitter + pong + slack;
        } else {
            due = r.ref_low + T;
            limit = r.ref_high + T + slack;
        }
        if (r.ref_low < 0 || r.ref_high < 0) {
            // An idle client whose one message never came back: it cannot be judged.
            if (r.how == outcome::open) {
                ++unresolved;
            } else {
                ++wrong;
                problem("wrong outcome: " + who + " client " + std::string(name(r.how)) + " before its echo", "connection " + std::to_string(i) + " " + r.detail);
            }
            continue;
        }
        if (r.how == outcome::open) {
            strict(limit, data.stopped_at);
            if (data.stopped_at > limit) {
                ++missed;
                problem("missed kick: " + who + " client still open at the end", "connection " + std::to_string(i) + ", " +
                        std::to_string(ms(nanoseconds(data.stopped_at - limit))) + " ms after its limit");
            } else {
                ++unresolved;
            }
            continue;
        }
        if (r.how != expected_outcome(r.who, plan.proto, liveness)) {
            ++wrong;
            problem("wrong outcome: " + who + " client " + std::string(name(r.how)) + (r.detail.empty() ? "" : " (" + r.detail + ")"),
                    "connection " + std::to_string(i) + " at " + std::to_string(seconds(nanoseconds(r.closed))) + " s");
            continue;
        }
        strict(limit, r.closed);
        if (r.closed < due) {
            ++early_kicks;
            ++false_kicks;
            problem("early kick: " + who + " client closed before it was due",
                    "connection " + std::to_string(i) + ", " + std::to_string(ms(nanoseconds(due - r.closed))) + " ms early");
        } else if (r.closed > limit) {
            ++missed;
            problem("missed kick: " + who + " client closed after its limit",
                    "connection " + std::to_string(i) + ", " + std::to_string(ms(nanoseconds(r.closed - limit))) + " ms after");
        }
        if (r.who == role::idle) lateness_idle.push_back(r.closed - due);
        if (r.who == role::pinger) lateness_pinger.push_back(r.closed - due);
        if (r.who == role::dead) dead_detection.push_back(r.closed - r.ref_high);
    }

    json::object result;
    result["label"] = plan.label.empty() ? json::string(string_at(data.before, {"timers"})) : json::string(plan.label);
    result["date"] = utc_now();

    json::object mix;
    for (std::size_t r = 0; r < role_count; ++r) mix[role_names[r]] = plan.mix[r];
    result["scenario"] = json::object{{"protocol", name(plan.proto)},
                                      {"connections", plan.connections},
                                      {"mix", std::move(mix)},
                                      {"threads", plan.threads},
                                      {"connect_rate", plan.connect_rate},
                                      {"max_connecting", plan.max_connecting},
                                      {"source_addresses", plan.source_addresses},
                                      {"first_source", plan.first_source.empty() ? plan.host : plan.first_source},
                                      {"interval_ms", ms(plan.interval)},
                                      {"closed_loop", plan.closed_loop},
                                      {"message_size", plan.message_size},
                                      {"duration_s", seconds(plan.duration)},
                                      {"ping_interval_ms", ms(plan.ping_interval)},
                                      {"pong_timeout_ms", ms(plan.pong_timeout)},
                                      {"ping_jitter_ms", ms(plan.ping_jitter)},
                                      {"allowance_ms", ms(plan.allowance)},
                                      {"stats_interval_ms", ms(plan.stats_interval)},
                                      {"seed", plan.seed},
                                      {"fd_limit", data.fd_limit}};
    result["server"] = json::object{{"timers", string_at(data.before, {"timers"})},
                                    {"threads", number(data.before, {"threads"})},
                                    {"tick_ms", ms(data.tick)},
                                    {"idle_timeout_ms", ms(data.idle_timeout)}};
    result["connect"] = json::object{{"ready", ready},
                                     {"connect_failed", connect_failed},
                                     {"handshake_failed", handshake_failed},
                                     {"phase_s", data.connect_phase},
                                     {"last_ready_s", seconds(nanoseconds(last_ready))},
                                     {"rate_per_s", data.connect_phase > 0 ? static_cast<double>(ready) / data.connect_phase : 0}};
    json::object by_role;
    for (std::size_t r = 0; r < role_count; ++r) {
        if (plan.mix[r] == 0) continue;
        json::object o;
        for (std::size_t k = 0; k < outcomes[r].size(); ++k)
            if (outcomes[r][k] != 0) o[outcome_names[k]] = outcomes[r][k];
        o["expected"] = name(expected_outcome(static_cast<role>(r), plan.proto, liveness));
        by_role[role_names[r]] = std::move(o);
    }
    result["outcomes"] = std::move(by_role);

    json::object checks{{"false_kicks", false_kicks},
                        {"early_kicks", early_kicks},
                        {"missed_kicks", missed},
                        {"wrong_outcomes", wrong},
                        {"unresolved", unresolved},
                        {"errors", errors},
                        {"idle_limit_ms", ms(nanoseconds(T + slack))},
                        {"slack_ms", ms(nanoseconds(slack))},
                        {"past_two_ticks", past_two_ticks},
                        {"past_two_ticks_max_ms", ms(nanoseconds(past_two_ticks_max))}};
    const bool ok = false_kicks == 0 && missed == 0 && wrong == 0 && unresolved == 0 && errors == 0;
    checks["passed"] = ok;
    result["checks"] = std::move(checks);
    json::array problems;
    for (auto& [kind, v] : grouped) problems.push_back(json::object{{"what", kind}, {"count", v.first}, {"example", v.second}});
    result["problems"] = std::move(problems);

    // Keep the raw idle lateness (microseconds) for histograms of this run and comparisons.
    json::array idle_us;
    std::vector<std::int64_t> sorted_idle = lateness_idle;
    std::sort(sorted_idle.begin(), sorted_idle.end());
    idle_us.reserve(sorted_idle.size());
    for (const auto v : sorted_idle) idle_us.emplace_back(v / 1000);
    result["kick_lateness_ms"] = json::object{{"idle", summary(lateness_idle, 1e-6)}, {"pinger", summary(lateness_pinger, 1e-6)}};
    result["dead_detection_s"] = summary(dead_detection, 1e-9);
    result["idle_lateness_us"] = std::move(idle_us);
    json::array pinger_us;
    pinger_us.reserve(lateness_pinger.size());
    for (const auto v : lateness_pinger) pinger_us.emplace_back(v / 1000);
    result["pinger_lateness_us"] = std::move(pinger_us);

    std::vector<std::uint32_t> rtt = data.rtt_us;
    const double run_s = data.t_after;
    result["echo"] = json::object{{"sent", sent},
                                  {"echoed_active", echoed},
                                  {"late_sends", late_sends},
                                  {"rtt_ms", summary(rtt, 1e-3)},
                                  {"echoes_per_s", run_s > 0 ? static_cast<double>(echoed) / run_s : 0}};

    std::vector<std::uint32_t> lag = data.lag_us;
    const auto lag_summary = summary(lag, 1e-3);
    const double lag_max = number(lag_summary, {"max"});
    result["client"] = json::object{{"cpu_s", data.client_cpu},
                                    {"cpu_percent", run_s > 0 ? 100 * data.client_cpu / run_s : 0},
                                    {"threads", plan.threads},
                                    {"loop_lag_ms", lag_summary},
                                    {"overloaded", lag_max > 100}};

    // The server's cost. whole: before connecting to the end; steady: from full load (every
    // connection up) to the end; full_load: from full load to the last sample before the
    // first kick (all N connections open), when that is at least a second.
    json::object cost;
    cost["whole"] = describe(between(data.before, data.after));
    const double rss_before = number(data.before, {"process", "rss_bytes"});
    cost["rss_before_bytes"] = rss_before;
    cost["rss_after_bytes"] = number(data.after, {"process", "rss_bytes"});
    const double first_kick_s = first_kick >= 0 ? seconds(nanoseconds(first_kick)) : data.t_after;
    // Memory per connection is only meaningful while every connection is open: the full-load
    // sample must come before the first close by the server.
    const bool full_valid = !data.full.empty() && first_kick_s > data.t_full;
    cost["full_load_valid"] = full_valid;
    if (!data.full.empty()) {
        cost["steady"] = describe(between(data.full, data.after));
        const double rss_full = number(data.full, {"process", "rss_bytes"});
        cost["rss_full_bytes"] = rss_full;
        cost["connections_at_full"] = data.ready_at_full;
        cost["full_at_s"] = data.t_full;
        if (full_valid && data.ready_at_full > 0)
            cost["rss_bytes_per_connection"] = (rss_full - rss_before) / static_cast<double>(data.ready_at_full);
        else
            cost["rss_bytes_per_connection"] = nullptr;
        const server_sample* last_full = nullptr;
        for (const auto& s : data.samples)
            if (s.t > data.t_full && s.t < first_kick_s) last_full = &s;
        if (full_valid && last_full != nullptr && last_full->uptime - number(data.full, {"uptime_s"}) >= 1.0) {
            window w;
            w.cpu = last_full->cpu - (number(data.full, {"process", "cpu_user_s"}) + number(data.full, {"process", "cpu_system_s"}));
            w.user = last_full->user - number(data.full, {"process", "cpu_user_s"});
            w.messages = static_cast<double>(last_full->messages) - number(data.full, {"messages"});
            w.seconds = last_full->uptime - number(data.full, {"uptime_s"});
            cost["full_load"] = describe(w);
        }
    }
    // The same ratio per --stats-interval, and its median over the steady window: on a shared
    // machine a neighbour can slow the server for a few seconds (caches, the hypervisor), and
    // the median is not moved by that while the total is.
    {
        std::vector<double> per_interval;
        for (std::size_t k = 1; k < data.samples.size(); ++k) {
            const auto& a = data.samples[k - 1];
            const auto& b = data.samples[k];
            if (data.t_full < 0 || a.t < data.t_full || b.messages <= a.messages) continue;
            per_interval.push_back(1e6 * (b.cpu - a.cpu) / static_cast<double>(b.messages - a.messages));
        }
        if (!per_interval.empty()) {
            std::sort(per_interval.begin(), per_interval.end());
            cost["steady_intervals"] = json::object{{"n", per_interval.size()},
                                                    {"cpu_us_per_message_median", percentile(per_interval, 0.5)},
                                                    {"cpu_us_per_message_p10", percentile(per_interval, 0.1)},
                                                    {"cpu_us_per_message_p90", percentile(per_interval, 0.9)}};
        }
    }
    // How busy the whole machine was meanwhile (every CPU, all processes, ours included).
    if (data.samples.size() >= 2) {
        const auto& a = data.samples.front().machine;
        const auto& b = data.samples.back().machine;
        const double total = static_cast<double>(b.total - a.total);
        const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
        if (total > 0)
            result["machine"] = json::object{{"cpus", cpus},
                                             {"busy_percent", 100 * static_cast<double>(b.busy - a.busy) / total},
                                             {"steal_percent", 100 * static_cast<double>(b.steal - a.steal) / total},
                                             {"irq_percent", 100 * static_cast<double>(b.irq - a.irq) / total},
                                             {"loadavg_at_end", loadavg()}};
    }
    // The steady window in two phases, split at the last kick: while kicks and heartbeats run
    // on every kind of connection, and afterwards, with only the active clients left.
    if (!data.full.empty() && last_kick >= 0) {
        const double last_kick_s = seconds(nanoseconds(last_kick));
        const auto full = server_sample::from(data.full, data.t_full);
        const auto after = server_sample::from(data.after, data.t_after);
        const server_sample* end_of_kicks = nullptr;
        const server_sample* start_after = nullptr;
        for (const auto& s : data.samples) {
            if (s.t > data.t_full && s.t <= last_kick_s) end_of_kicks = &s;
            if (start_after == nullptr && s.t >= last_kick_s) start_after = &s;
        }
        const auto span = [](const server_sample& a, const server_sample& b) {
            window w;
            w.cpu = b.cpu - a.cpu;
            w.user = b.user - a.user;
            w.messages = static_cast<double>(b.messages) - static_cast<double>(a.messages);
            w.seconds = b.uptime - a.uptime;
            return w;
        };
        if (end_of_kicks != nullptr && end_of_kicks->uptime - full.uptime >= 2.0) cost["kick_phase"] = describe(span(full, *end_of_kicks));
        if (start_after != nullptr && after.uptime - start_after->uptime >= 2.0) cost["after_kicks"] = describe(span(*start_after, after));
        cost["last_kick_s"] = last_kick_s;
    }
    cost["first_kick_s"] = first_kick >= 0 ? seconds(nanoseconds(first_kick)) : -1.0;
    cost["asio_timer_rearms"] = number(data.after, {"asio_timer_rearms"}) - number(data.before, {"asio_timer_rearms"});
    cost["wheel_wakeups"] = number(data.after, {"wheel", "wakeups"}) - number(data.before, {"wheel", "wakeups"});
    cost["wheel_worst_lateness_us"] = number(data.after, {"wheel", "worst_lateness_us"});
    cost["stats_errors"] = data.stats_errors;
    result["server_cost"] = std::move(cost);

    result["stats"] = json::object{{"before", data.before}, {"full", data.full}, {"after", data.after}};
    json::array t, cpu, user, rss, open, messages, uptime, machine_busy, machine_total, machine_steal, machine_irq, wakeups, expired, rearms;
    for (const auto& s : data.samples) {
        t.emplace_back(std::round(s.t * 1000) / 1000);
        uptime.emplace_back(s.uptime);
        cpu.emplace_back(s.cpu);
        user.emplace_back(s.user);
        machine_busy.emplace_back(s.machine.busy);
        machine_total.emplace_back(s.machine.total);
        machine_steal.emplace_back(s.machine.steal);
        machine_irq.emplace_back(s.machine.irq);
        wakeups.emplace_back(s.wheel_wakeups);
        expired.emplace_back(s.wheel_expired);
        rearms.emplace_back(s.asio_rearms);
        rss.emplace_back(s.rss);
        open.emplace_back(s.open);
        messages.emplace_back(s.messages);
    }
    result["samples"] = json::object{{"t_s", std::move(t)},
                                     {"uptime_s", std::move(uptime)},
                                     {"cpu_s", std::move(cpu)},
                                     {"cpu_user_s", std::move(user)},
                                     {"rss_bytes", std::move(rss)},
                                     {"open", std::move(open)},
                                     {"messages", std::move(messages)},
                                     {"machine_busy_ticks", std::move(machine_busy)},
                                     {"machine_total_ticks", std::move(machine_total)},
                                     {"machine_steal_ticks", std::move(machine_steal)},
                                     {"machine_irq_ticks", std::move(machine_irq)},
                                     {"wheel_wakeups", std::move(wakeups)},
                                     {"wheel_expired", std::move(expired)},
                                     {"asio_timer_rearms", std::move(rearms)}};
    return result;
}

bool passed(const json::object& result) {
    const auto* v = find(result, {"checks", "passed"});
    return v != nullptr && v->is_bool() && v->get_bool();
}

}  // namespace loadgen
