#include "analysis.hpp"

#include "json_util.hpp"

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <fstream>
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

// The distribution of `values` (sorted here), scaled by `scale`.
template <class T>
distribution summarise(std::vector<T>& values, double scale) {
    std::sort(values.begin(), values.end());
    distribution d;
    d.n = values.size();
    if (values.empty()) return d;
    const double sum =
        std::accumulate(values.begin(), values.end(), 0.0, [](double a, T b) { return a + static_cast<double>(b); });
    d.min = static_cast<double>(values.front()) * scale;
    d.p50 = percentile(values, 0.50) * scale;
    d.p99 = percentile(values, 0.99) * scale;
    d.max = static_cast<double>(values.back()) * scale;
    d.mean = sum / static_cast<double>(values.size()) * scale;
    return d;
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

// Whether a close looks as the promise says.
bool accepts(const role_promise& p, const record& r) noexcept {
    const bool frame = r.how == outcome::idle_close || r.how == outcome::other_close;
    switch (p.how) {
        case close_how::any: return frame || r.how == outcome::dropped;
        case close_how::frame: return frame;
        case close_how::frame_code: return frame && r.close_code == p.code;
        case close_how::bare: return r.how == outcome::dropped;
        case close_how::idle_kick: return r.how == outcome::idle_close;
    }
    return false;
}

// The rule for each role: the promise the command line resolved (scenario.cpp), or for demo
// demo_server's settings from /stats (a server without liveness, --timers=none, the benchmark
// baseline, closes nobody).
role_promise rule_for(role r, const scenario& plan, bool liveness, nanoseconds idle_timeout) {
    if (plan.expect != expectation::demo) return plan.promise[index(r)];
    role_promise p;
    if (!liveness) return p;
    const auto closed = [&p](nanoseconds a, nanoseconds b, close_event e, close_how how) {
        p.what = role_promise::kind::closed;
        p.from = a;
        p.to = b;
        p.after = e;
        p.how = how;
        return p;
    };
    switch (r) {
        case role::active: return p;
        case role::idle:
            return closed(idle_timeout, idle_timeout, close_event::message,
                          plan.proto == protocol::tcp ? close_how::bare : close_how::idle_kick);
        case role::pinger: return closed(idle_timeout, idle_timeout, close_event::handshake, close_how::idle_kick);
        case role::dead:
            return closed(plan.ping_interval + plan.pong_timeout, plan.ping_interval + plan.pong_timeout + plan.ping_jitter,
                          close_event::handshake, close_how::bare);
        case role::stalled: return p;  // not allowed with demo (scenario.cpp)
    }
    return p;
}

// When the event a window counts from happened, as the client saw it: between low and high
// (promise.hpp says what each event is per role).
std::pair<std::int64_t, std::int64_t> event_times(const record& r, close_event e) {
    if (r.who == role::stalled) return {r.ref_low, r.ref_high};  // connect began .. half request written
    switch (e) {
        case close_event::connect: return {r.launched, r.connected};
        case close_event::handshake: return {r.connected, r.ready};
        case close_event::message:
            if (r.who == role::idle) return {r.ref_low, r.ref_high};
            if (r.who == role::active) return {r.last_sent, r.last_sent};
            return {r.connected, r.ready};  // pinger, dead: the upgrade request was their last message
    }
    return {-1, -1};
}

// ---- per-record verdicts -------------------------------------------------------------------

// What judging every record found: the verdict counts, the lateness samples, the failures
// grouped by kind, and when the server closed its first and last connection.
struct tally {
    check_summary checks;
    std::uint64_t connect_failed = 0, handshake_failed = 0, ready = 0;
    std::uint64_t sent = 0, echoed = 0, late_sends = 0;
    std::array<std::array<std::uint64_t, static_cast<std::size_t>(outcome::count)>, role_count> outcomes{};
    std::vector<std::int64_t> lateness_idle, lateness_pinger, dead_detection, stalled_drop;
    std::int64_t first_kick = -1, last_kick = -1, last_ready = 0;
    std::int64_t past_two_ticks_max = 0;
    std::map<std::string, std::pair<std::uint64_t, std::string>> grouped;  // kind -> count, first example
    std::array<check_summary, role_count> by_role{};  // the verdict counts of each role's clients
    std::array<role_promise, role_count> rules{};      // what was expected of each role

    void problem(const std::string& kind, std::string example) {
        auto& [count, first] = grouped[kind];
        if (count++ == 0) first = std::move(example);
    }
};

// The limits every judged record is held to.
struct judge {
    const scenario& plan;
    const run_data& data;
    bool liveness;
    std::int64_t idle_timeout, slack;  // ns; slack: 2 ticks + allowance
    std::array<role_promise, role_count> rules;

    // The same limit without the allowance (due + 2 ticks exactly), counted apart: not a
    // failure, since the client's view includes the delivery and both sides' wake-up delays.
    void strict(tally& t, std::int64_t limit, std::int64_t at) const {
        const std::int64_t over = at - (limit - plan.allowance.count());
        if (over > 0) {
            ++t.checks.past_two_ticks;
            t.past_two_ticks_max = std::max(t.past_two_ticks_max, over);
        }
    }

    void operator()(tally& t, std::size_t i, const record& r) const {
        ++t.outcomes[index(r.who)][static_cast<std::size_t>(r.how)];
        t.sent += r.sent;
        if (r.who == role::active) {
            t.echoed += r.echoed;
            t.late_sends += r.late_sends;
        }
        const std::string at = "connection " + std::to_string(i);
        if (r.how == outcome::connect_failed || r.how == outcome::handshake_failed) {
            ++t.checks.errors;
            ++(r.how == outcome::connect_failed ? t.connect_failed : t.handshake_failed);
            t.problem(std::string(name(r.how)) + ": " + r.detail, at + " (" + std::string(name(r.who)) + ")");
            return;
        }
        if (r.ready < 0) return;  // launched, but the run ended before it was up
        ++t.ready;
        t.last_ready = std::max(t.last_ready, r.ready);
        if (r.how != outcome::open && (t.first_kick < 0 || r.closed < t.first_kick)) t.first_kick = r.closed;
        if (r.how != outcome::open) t.last_kick = std::max(t.last_kick, r.closed);
        if (r.how == outcome::error) ++t.checks.errors;

        const auto who = std::string(name(r.who));
        const auto when = [&](std::int64_t ns) { return std::to_string(seconds(nanoseconds(ns))) + " s"; };
        const auto by = [&](std::int64_t ns) { return std::to_string(ms(nanoseconds(ns))) + " ms"; };
        const std::string detail = r.detail.empty() ? "" : " (" + r.detail + ")";
        const role_promise& rule = rules[index(r.who)];
        if (rule.what == role_promise::kind::unbounded) return;  // either end passes
        if (!rule.closed()) {
            if (r.how != outcome::open) {
                ++t.checks.false_kicks;
                t.problem("false kick: " + who + " client " + std::string(name(r.how)) + detail,
                          at + " at " + when(r.closed));
            }
            return;
        }
        // When the server's clock for this client may run out, earliest and latest.
        const bool dead = r.who == role::dead;
        const auto [low, high] = event_times(r, rule.after);
        const std::int64_t due = low + rule.from.count();
        const std::int64_t limit = high + rule.to.count() + slack;
        if (low < 0 || high < 0) {
            // An idle client whose one message never came back: it cannot be judged.
            if (r.how == outcome::open) {
                ++t.checks.unresolved;
            } else {
                ++t.checks.wrong_outcomes;
                t.problem("wrong outcome: " + who + " client " + std::string(name(r.how)) + " before its echo",
                          at + " " + r.detail);
            }
            return;
        }
        if (r.how == outcome::open) {
            strict(t, limit, data.stopped_at);
            if (data.stopped_at > limit) {
                ++t.checks.missed_kicks;
                t.problem("missed kick: " + who + " client still open at the end",
                          at + ", " + by(data.stopped_at - limit) + " after its limit");
            } else {
                ++t.checks.unresolved;
            }
            return;
        }
        if (!accepts(rule, r)) {
            ++t.checks.wrong_outcomes;
            const bool frame = r.how == outcome::idle_close || r.how == outcome::other_close;
            const std::string code = frame && r.close_code != 0 && detail.find(std::to_string(r.close_code)) == std::string::npos
                                         ? " (" + std::to_string(r.close_code) + ")"
                                         : "";
            t.problem("wrong outcome: " + who + " client " + std::string(name(r.how)) + code + detail +
                          (rule.how == close_how::frame_code ? ", expected close " + std::to_string(rule.code)
                                                             : ", expected " + rule.words().substr(rule.words().rfind(", ") + 2)),
                      at + " at " + when(r.closed));
            return;
        }
        strict(t, limit, r.closed);
        if (r.closed < due) {
            ++t.checks.early_kicks;
            ++t.checks.false_kicks;
            t.problem("early kick: " + who + " client closed before it was due",
                      at + ", " + by(due - r.closed) + " early");
        } else if (r.closed > limit) {
            ++t.checks.missed_kicks;
            t.problem("missed kick: " + who + " client closed after its limit",
                      at + ", " + by(r.closed - limit) + " after");
        }
        if (r.who == role::idle) t.lateness_idle.push_back(r.closed - due);
        if (r.who == role::pinger) t.lateness_pinger.push_back(r.closed - due);
        if (dead) t.dead_detection.push_back(r.closed - r.ready);
        if (r.who == role::stalled) t.stalled_drop.push_back(r.closed - r.ref_low);
    }
};

tally judge_records(const scenario& plan, const run_data& data) {
    const bool liveness = std::string_view(string_at(data.before, {"timers"})) != "none";
    judge j{plan, data, liveness, data.idle_timeout.count(), 2 * data.tick.count() + plan.allowance.count(), {}};
    for (std::size_t r = 0; r < role_count; ++r)
    {
        j.rules[r] = rule_for(static_cast<role>(r), plan, liveness, data.idle_timeout);
        if (plan.expect == expectation::demo && j.rules[r].closed() && plan.close_code[r] != 0) {
            j.rules[r].how = close_how::frame_code;
            j.rules[r].code = plan.close_code[r];
        }
    }
    tally t;
    t.rules = j.rules;
    for (std::size_t i = 0; i < data.records.size(); ++i) {
        const check_summary before = t.checks;
        j(t, i, data.records[i]);
        auto& mine = t.by_role[index(data.records[i].who)];
        mine.false_kicks += t.checks.false_kicks - before.false_kicks;
        mine.early_kicks += t.checks.early_kicks - before.early_kicks;
        mine.missed_kicks += t.checks.missed_kicks - before.missed_kicks;
        mine.wrong_outcomes += t.checks.wrong_outcomes - before.wrong_outcomes;
        mine.unresolved += t.checks.unresolved - before.unresolved;
        mine.errors += t.checks.errors - before.errors;
    }
    t.checks.idle_limit_ms = ms(nanoseconds(j.idle_timeout + j.slack));
    t.checks.slack_ms = ms(nanoseconds(j.slack));
    t.checks.past_two_ticks_max_ms = ms(nanoseconds(t.past_two_ticks_max));
    const auto& c = t.checks;
    t.checks.passed =
        c.false_kicks == 0 && c.missed_kicks == 0 && c.wrong_outcomes == 0 && c.unresolved == 0 && c.errors == 0;
    return t;
}

outcome_table outcomes_of(const tally& t, const scenario& plan) {
    outcome_table table;
    std::optional<role_outcomes>* by_role[role_count] = {&table.idle, &table.active, &table.pinger, &table.dead,
                                                         &table.stalled};
    for (std::size_t r = 0; r < role_count; ++r) {
        if (plan.mix[r] == 0) continue;
        const auto& n = t.outcomes[r];
        const auto at = [&n](outcome o) { return n[static_cast<std::size_t>(o)]; };
        const auto& c = t.by_role[r];
        *by_role[r] = role_outcomes{at(outcome::open),
                                    at(outcome::connect_failed),
                                    at(outcome::handshake_failed),
                                    at(outcome::idle_close),
                                    at(outcome::other_close),
                                    at(outcome::dropped),
                                    at(outcome::error),
                                    t.rules[r].spelling(),
                                    c.false_kicks,
                                    c.missed_kicks,
                                    c.wrong_outcomes,
                                    c.unresolved,
                                    c.errors,
                                    c.false_kicks + c.missed_kicks + c.wrong_outcomes + c.unresolved + c.errors == 0};
    }
    return table;
}

// ---- how each role was closed (every run; --expect observe reads it) ------------------------

constexpr std::array<const char*, 3> event_words{"connect", "handshake", "message"};

closes_table closes_of(const run_data& data, const std::array<role_promise, role_count>& rules, std::int64_t slack) {
    std::array<std::vector<std::int64_t>, role_count> after_connect, after_handshake, after_message, after_event;
    std::array<role_closes, role_count> out{};
    std::array<std::map<std::uint16_t, std::uint64_t>, role_count> codes;
    std::array<bool, role_count> present{};
    for (const auto& r : data.records) {
        const auto k = index(r.who);
        present[k] = true;
        if (r.ready < 0) continue;
        if (r.how == outcome::open) {
            ++out[k].open;
            continue;
        }
        if (r.how != outcome::idle_close && r.how != outcome::other_close && r.how != outcome::dropped) continue;
        ++out[k].closed;
        if (r.how == outcome::dropped)
            ++out[k].bare;
        else {
            ++out[k].frames;
            ++codes[k][r.close_code];
        }
        const auto since = [&r](close_event e) { return r.closed - event_times(r, e).first; };
        after_connect[k].push_back(since(close_event::connect));
        after_handshake[k].push_back(since(close_event::handshake));
        if (event_times(r, close_event::message).first >= 0) after_message[k].push_back(since(close_event::message));
        const close_event e = rules[k].closed() ? rules[k].after : close_event::handshake;
        if (event_times(r, e).first >= 0) after_event[k].push_back(since(e));
    }
    closes_table table;
    const std::array<std::optional<role_closes>*, role_count> slot{&table.idle, &table.active, &table.pinger,
                                                                   &table.dead, &table.stalled};
    for (std::size_t k = 0; k < role_count; ++k) {
        if (!present[k]) continue;
        auto& c = out[k];
        const auto& rule = rules[k];
        c.promise = rule.spelling();
        c.event = event_words[static_cast<std::size_t>(rule.closed() ? rule.after : close_event::handshake)];
        if (rule.closed()) {
            c.from_s = seconds(rule.from);
            c.to_s = seconds(rule.to);
            c.slack_s = seconds(nanoseconds(slack));
        }
        for (const auto& [code, n] : codes[k])
            c.codes += (c.codes.empty() ? "" : ", ") + std::to_string(code) + " x " + std::to_string(n);
        c.after_connect_s = summarise(after_connect[k], 1e-9);
        c.after_handshake_s = summarise(after_handshake[k], 1e-9);
        c.after_message_s = summarise(after_message[k], 1e-9);
        std::sort(after_event[k].begin(), after_event[k].end());
        for (const auto v : after_event[k]) c.close_after_s.push_back(std::round(static_cast<double>(v) / 1e6) / 1e3);
        *slot[k] = c;
    }
    return table;
}

// A duration near `s` seconds, as a flag takes it: 0.1 s steps from 1 s, 10 ms below.
std::string nice(double s, bool up = false) {
    const double step = s >= 1 ? 0.1 : 0.01;
    const double v = (up ? std::ceil(s / step - 1e-6) : std::floor(s / step + 1e-6)) * step;
    return duration_text(std::chrono::milliseconds(std::llround(std::max(v, step) * 1000)));
}

// --expect observe: a promise that fits what was seen (a preset when one does, and the general
// form always). Mostly = 90 % of the role's connections that were up.
std::string fits_of(const closes_table& t) {
    const std::array<const std::optional<role_closes>*, role_count> by{&t.idle, &t.active, &t.pinger, &t.dead,
                                                                       &t.stalled};
    const auto mostly = [&](role r, bool closed) {
        const auto& c = *by[index(r)];
        if (!c || c->closed + c->open == 0) return true;  // no such client: anything fits
        const double share = static_cast<double>(c->closed) / static_cast<double>(c->closed + c->open);
        return closed ? share >= 0.9 : share <= 0.1;
    };
    const auto has = [&](role r) { return by[index(r)]->has_value() && (*by[index(r)])->closed + (*by[index(r)])->open > 0; };
    std::string preset;
    const bool others_open = mostly(role::active, false) && mostly(role::pinger, false);
    std::string stalled_flag;
    if (has(role::stalled) && mostly(role::stalled, true))
        stalled_flag = nice(t.stalled->after_connect_s.min);
    if (mostly(role::idle, false) && others_open && mostly(role::dead, false) && mostly(role::stalled, false)) {
        preset = "--expect none";
    } else if (has(role::idle) && mostly(role::idle, true) && mostly(role::active, false)) {
        preset = "--expect idle-timeout --idle-timeout " + nice(t.idle->after_message_s.min) +
                 (has(role::pinger) && mostly(role::pinger, false) ? " --pings" : "") +
                 (stalled_flag.empty() ? "" : " --handshake-timeout " + stalled_flag);
    } else if (has(role::dead) && mostly(role::dead, true) && mostly(role::idle, false) && others_open) {
        const auto& d = *t.dead;
        const double lo = d.after_handshake_s.min, hi = d.after_handshake_s.max;
        if (d.frames > d.bare && d.codes.rfind("1011", 0) == 0) {
            preset = "--expect python-websockets --ping-interval " + nice(lo / 2) + " --ping-timeout " + nice(lo / 2) +
                     (stalled_flag.empty() ? "" : " --open-timeout " + stalled_flag) +
                     "  (ping_interval + ping_timeout = about " + nice(lo) + ": split as your server's settings say)";
        } else if (d.bare >= d.frames && hi - lo > 0.25 * lo) {
            // Closed I..2I after the handshake, each a little late: I is the lower of the
            // earliest close and half the latest.
            preset = "--expect ws-heartbeat --heartbeat " + nice(std::min(lo, hi / 2));
            if (!stalled_flag.empty())
                preset += " --expect-close stalled=" + stalled_flag + ".." + stalled_flag + "@connect:bare";
        } else if (d.bare >= d.frames) {
            preset = "--expect beast-timeouts --idle-timeout " + nice(lo) +
                     (stalled_flag.empty() ? "" : " --handshake-timeout " + stalled_flag);
        }
    }
    std::string opens, closes;
    for (std::size_t k = 0; k < role_count; ++k) {
        const auto& c = *by[k];
        if (!c || c->closed + c->open == 0) continue;
        const std::string who(role_names[k]);
        if (mostly(static_cast<role>(k), false)) {
            opens += (opens.empty() ? "" : ",") + who;
        } else if (mostly(static_cast<role>(k), true)) {
            // The event the closes line up with best: the narrowest spread.
            const std::array<const distribution*, 3> d{&c->after_connect_s, &c->after_handshake_s, &c->after_message_s};
            // Ties go to the event that names the role's story: an idle client's message, a
            // stalled client's connect, the others' handshake.
            std::size_t best = k == index(role::idle) ? 2 : k == index(role::stalled) ? 0 : 1;
            for (std::size_t e = 0; e < 3; ++e)
                if (d[e]->n == c->closed && d[e]->max - d[e]->min < d[best]->max - d[best]->min - 1e-3) best = e;
            const std::string how = c->bare == c->closed     ? "bare"
                                    : c->frames == c->closed ? (c->codes.find(',') == std::string::npos
                                                                    ? "frame=" + c->codes.substr(0, c->codes.find(' '))
                                                                    : "frame")
                                                             : "any";
            closes += " --expect-close " + who + "=" + nice(d[best]->min) + ".." + nice(d[best]->max, true) + "@" +
                      event_words[best] + ":" + how;
        }
    }
    std::string general = (opens.empty() ? "" : "--expect-open " + opens) + closes;
    if (!general.empty() && general.front() == ' ') general.erase(0, 1);
    return (preset.empty() ? std::string() : preset + "\n") + general;
}

// ---- the server's cost windows -------------------------------------------------------------

cost_window describe(double cpu, double user, double messages, double secs) {
    cost_window w;
    w.cpu_s = cpu;
    w.cpu_user_s = user;
    w.cpu_system_s = cpu - user;
    w.messages = messages;
    w.seconds = secs;
    w.cpu_percent = secs > 0 ? 100 * cpu / secs : 0;
    w.messages_per_s = secs > 0 ? messages / secs : 0;
    w.cpu_us_per_message = messages > 0 ? 1e6 * cpu / messages : 0;
    w.user_us_per_message = messages > 0 ? 1e6 * user / messages : 0;
    return w;
}

cost_window between(const server_sample& a, const server_sample& b) {
    return describe(b.cpu - a.cpu, b.user - a.user, static_cast<double>(b.messages) - static_cast<double>(a.messages),
                    b.uptime - a.uptime);
}

// whole: before connecting to the end; steady: from full load (every connection up) to the
// end; full_load: from full load to the last sample before the first kick (all N connections
// open), when that is at least a second; kick_phase / after_kicks: the steady window split at
// the last kick (while kicks and heartbeats run on every kind of connection, and afterwards,
// with only the active clients left).
cost_summary cost_of(const run_data& data, std::int64_t first_kick, std::int64_t last_kick) {
    cost_summary cost;
    const auto before = server_sample::from(data.before, 0);
    const auto after = server_sample::from(data.after, data.t_after);
    cost.whole = between(before, after);
    cost.rss_before_bytes = static_cast<double>(before.rss);
    cost.rss_after_bytes = static_cast<double>(after.rss);
    const double first_kick_s = first_kick >= 0 ? seconds(nanoseconds(first_kick)) : data.t_after;
    // Memory per connection is only meaningful while every connection is open: the full-load
    // sample must come before the first close by the server.
    cost.full_load_valid = !data.full.empty() && first_kick_s > data.t_full;
    if (!data.full.empty()) {
        const auto full = server_sample::from(data.full, data.t_full);
        cost.steady = between(full, after);
        cost.rss_full_bytes = static_cast<double>(full.rss);
        cost.connections_at_full = data.ready_at_full;
        cost.full_at_s = data.t_full;
        if (cost.full_load_valid && data.ready_at_full > 0)
            cost.rss_bytes_per_connection =
                (cost.rss_full_bytes - cost.rss_before_bytes) / static_cast<double>(data.ready_at_full);
        const server_sample* last_full = nullptr;
        for (const auto& s : data.samples)
            if (s.t > data.t_full && s.t < first_kick_s) last_full = &s;
        if (cost.full_load_valid && last_full != nullptr && last_full->uptime - full.uptime >= 1.0)
            cost.full_load = between(full, *last_full);

        if (last_kick >= 0) {
            const double last_kick_s = seconds(nanoseconds(last_kick));
            const server_sample* end_of_kicks = nullptr;
            const server_sample* start_after = nullptr;
            for (const auto& s : data.samples) {
                if (s.t > data.t_full && s.t <= last_kick_s) end_of_kicks = &s;
                if (start_after == nullptr && s.t >= last_kick_s) start_after = &s;
            }
            if (end_of_kicks != nullptr && end_of_kicks->uptime - full.uptime >= 2.0)
                cost.kick_phase = between(full, *end_of_kicks);
            if (start_after != nullptr && after.uptime - start_after->uptime >= 2.0)
                cost.after_kicks = between(*start_after, after);
            cost.last_kick_s = last_kick_s;
        }
    }
    // The same ratio per --stats-interval, and its median over the steady window: on a shared
    // machine a neighbour can slow the server for a few seconds (caches, the hypervisor), and
    // the median is not moved by that while the total is.
    std::vector<double> per_interval;
    for (std::size_t k = 1; k < data.samples.size(); ++k) {
        const auto& a = data.samples[k - 1];
        const auto& b = data.samples[k];
        if (data.t_full < 0 || a.t < data.t_full || b.messages <= a.messages) continue;
        per_interval.push_back(1e6 * (b.cpu - a.cpu) / static_cast<double>(b.messages - a.messages));
    }
    if (!per_interval.empty()) {
        std::sort(per_interval.begin(), per_interval.end());
        cost.steady_intervals = interval_spread{per_interval.size(), percentile(per_interval, 0.5),
                                                percentile(per_interval, 0.1), percentile(per_interval, 0.9)};
    }
    cost.first_kick_s = first_kick >= 0 ? seconds(nanoseconds(first_kick)) : -1.0;
    cost.asio_timer_rearms = static_cast<double>(after.asio_rearms) - static_cast<double>(before.asio_rearms);
    cost.wheel_wakeups = static_cast<double>(after.wheel_wakeups) - static_cast<double>(before.wheel_wakeups);
    cost.wheel_worst_lateness_us = number(data.after, {"wheel", "worst_lateness_us"});
    cost.stats_errors = data.stats_errors;
    return cost;
}

// ---- summaries ------------------------------------------------------------------------------

scenario_summary scenario_of(const scenario& plan, const run_data& data) {
    scenario_summary s;
    s.protocol = plan.tls && plan.proto == protocol::ws ? "wss" : name(plan.proto);
    s.url = plan.url;
    s.expect = name(plan.expect);
    s.expect_idle_ms = ms(data.idle_timeout);
    s.heartbeats = plan.heartbeats;
    s.connections = plan.connections;
    s.mix = {plan.mix[0], plan.mix[1], plan.mix[2], plan.mix[3], plan.mix[4]};
    s.handshake_timeout_ms = ms(plan.handshake_timeout);
    s.threads = plan.threads;
    s.connect_rate = plan.connect_rate;
    s.max_connecting = plan.max_connecting;
    s.source_addresses = plan.source_addresses;
    s.first_source = plan.first_source.empty() ? plan.host : plan.first_source;
    s.interval_ms = ms(plan.interval);
    s.closed_loop = plan.closed_loop;
    s.message_size = plan.message_size;
    s.duration_s = seconds(plan.duration);
    s.ping_interval_ms = ms(plan.ping_interval);
    s.pong_timeout_ms = ms(plan.pong_timeout);
    s.ping_jitter_ms = ms(plan.ping_jitter);
    s.allowance_ms = ms(plan.allowance);
    s.stats_interval_ms = ms(plan.stats_interval);
    s.seed = plan.seed;
    s.fd_limit = data.fd_limit;
    return s;
}

// How busy the whole machine was meanwhile (every CPU, all processes, ours included).
std::optional<machine_summary> machine_of(const run_data& data) {
    if (data.samples.size() < 2) return std::nullopt;
    const auto& a = data.samples.front().machine;
    const auto& b = data.samples.back().machine;
    const double total = static_cast<double>(b.total - a.total);
    if (!(total > 0)) return std::nullopt;
    const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    const auto share = [total](std::uint64_t x, std::uint64_t y) { return 100 * static_cast<double>(y - x) / total; };
    return machine_summary{cpus, share(a.busy, b.busy), share(a.steal, b.steal), share(a.irq, b.irq), loadavg()};
}

sample_series series_of(const std::vector<server_sample>& samples) {
    sample_series out;
    for (const auto& s : samples) {
        out.t_s.push_back(std::round(s.t * 1000) / 1000);
        out.uptime_s.push_back(s.uptime);
        out.cpu_s.push_back(s.cpu);
        out.cpu_user_s.push_back(s.user);
        out.rss_bytes.push_back(s.rss);
        out.open.push_back(s.open);
        out.messages.push_back(s.messages);
        out.machine_busy_ticks.push_back(s.machine.busy);
        out.machine_total_ticks.push_back(s.machine.total);
        out.machine_steal_ticks.push_back(s.machine.steal);
        out.machine_irq_ticks.push_back(s.machine.irq);
        out.wheel_wakeups.push_back(s.wheel_wakeups);
        out.wheel_expired.push_back(s.wheel_expired);
        out.asio_timer_rearms.push_back(s.asio_rearms);
    }
    return out;
}

// The clients' connections over time, from their records (README.md, "Output"): about 300
// points over the run, at least 100 ms apart.
client_timeline timeline_of(const run_data& data) {
    std::array<std::vector<std::int64_t>, role_count> up, closed;
    for (const auto& rec : data.records) {
        if (rec.ready >= 0) up[index(rec.who)].push_back(rec.ready);
        if (rec.ready >= 0 && rec.closed >= 0) closed[index(rec.who)].push_back(rec.closed);
    }
    for (auto& v : up) std::sort(v.begin(), v.end());
    for (auto& v : closed) std::sort(v.begin(), v.end());
    const auto at_or_before = [](const std::vector<std::int64_t>& sorted, std::int64_t t) {
        return static_cast<std::uint64_t>(std::upper_bound(sorted.begin(), sorted.end(), t) - sorted.begin());
    };
    client_timeline out;
    const std::array<std::vector<std::uint64_t>*, role_count> open_of{&out.open.idle, &out.open.active,
                                                                      &out.open.pinger, &out.open.dead,
                                                                      &out.open.stalled};
    const double end_s = std::max(data.t_after, 0.1);
    const double step_s = std::max(0.1, end_s / 300);
    for (double t = 0; t <= end_s + step_s / 2; t += step_s) {
        const auto t_ns = static_cast<std::int64_t>(std::llround(std::min(t, end_s) * 1e9));
        std::uint64_t connected = 0, gone = 0;
        for (std::size_t r = 0; r < role_count; ++r) {
            const auto u = at_or_before(up[r], t_ns), c = at_or_before(closed[r], t_ns);
            open_of[r]->push_back(u - std::min(u, c));
            connected += u;
            gone += c;
        }
        out.t_s.push_back(std::round(std::min(t, end_s) * 1000) / 1000);
        out.connected.push_back(connected);
        out.closed_by_server.push_back(gone);
    }
    return out;
}

// Fixed bins, ten per decade from 10 us to 10 s, so histograms of several runs add up.
histogram rtt_histogram_of(const std::vector<std::uint32_t>& rtt_us) {
    histogram h;
    for (int k = 0; k <= 60; ++k) h.upper_ms.push_back(std::round(0.01 * std::pow(10.0, k / 10.0) * 1e6) / 1e6);
    h.count.assign(h.upper_ms.size() + 1, 0);  // + everything slower than the last bound
    for (const auto us : rtt_us) {
        const double v = us / 1000.0;
        const auto k = std::lower_bound(h.upper_ms.begin(), h.upper_ms.end(), v) - h.upper_ms.begin();
        ++h.count[static_cast<std::size_t>(k)];
    }
    return h;
}

std::vector<std::int64_t> in_microseconds(const std::vector<std::int64_t>& sorted_ns) {
    std::vector<std::int64_t> us;
    us.reserve(sorted_ns.size());
    for (const auto v : sorted_ns) us.push_back(v / 1000);
    return us;
}

}  // namespace

run_result analyse(const scenario& plan, const run_data& data) {
    tally t = judge_records(plan, data);
    const std::string timers(string_at(data.before, {"timers"}));

    run_result r;
    r.label = !plan.label.empty() ? plan.label : plan.expect == expectation::demo ? timers : std::string(name(plan.expect));
    r.date = utc_now();
    r.scenario = scenario_of(plan, data);
    r.server = server_summary{timers, number(data.before, {"threads"}), ms(data.tick), ms(data.idle_timeout)};
    r.connect = connect_summary{t.ready,
                                t.connect_failed,
                                t.handshake_failed,
                                data.connect_phase,
                                seconds(nanoseconds(t.last_ready)),
                                data.connect_phase > 0 ? static_cast<double>(t.ready) / data.connect_phase : 0};
    r.outcomes = outcomes_of(t, plan);
    r.closes = closes_of(data, t.rules, 2 * data.tick.count() + plan.allowance.count());
    r.promise = plan.expect == expectation::demo ? std::string() : promise_flags(plan);
    if (plan.expect == expectation::observe) r.fits = fits_of(r.closes);
    r.checks = t.checks;
    for (auto& [kind, v] : t.grouped) r.problems.push_back(problem{kind, v.first, v.second});

    // summarise() sorts: the raw samples (microseconds) are kept sorted, for histograms and for
    // aggregating several processes' runs (bench/results.py).
    r.kick_lateness_ms = {summarise(t.lateness_idle, 1e-6), summarise(t.lateness_pinger, 1e-6)};
    r.dead_detection_s = summarise(t.dead_detection, 1e-9);
    r.stalled_drop_s = summarise(t.stalled_drop, 1e-9);
    r.idle_lateness_us = in_microseconds(t.lateness_idle);
    r.pinger_lateness_us = in_microseconds(t.lateness_pinger);

    std::vector<std::uint32_t> rtt = data.rtt_us;
    const double run_s = data.t_after;
    r.echo = echo_summary{t.sent, t.echoed, t.late_sends, summarise(rtt, 1e-3),
                          run_s > 0 ? static_cast<double>(t.echoed) / run_s : 0};
    r.echo_rtt_histogram = rtt_histogram_of(rtt);
    r.timeline = timeline_of(data);
    std::vector<std::uint32_t> lag = data.lag_us;
    r.client.cpu_s = data.client_cpu;
    r.client.cpu_percent = run_s > 0 ? 100 * data.client_cpu / run_s : 0;
    r.client.threads = plan.threads;
    r.client.loop_lag_ms = summarise(lag, 1e-3);
    r.client.overloaded = r.client.loop_lag_ms.max > 100;

    r.server_cost = cost_of(data, t.first_kick, t.last_kick);
    r.machine = machine_of(data);
    r.stats = stats_documents{data.before, data.full, data.after};
    r.samples = series_of(data.samples);
    if (plan.reconnect) {
        reconnect_summary rc;
        for (const auto& rec : data.records) {
            rc.reconnects += rec.reconnects;
            rc.messages += rec.messages;
            rc.echoed_in_order += rec.echoed_ok;
            rc.echo_mismatch += rec.echo_mismatch;
            rc.resent += rec.resent;
            rc.pending_at_end += rec.pending_at_end;
            const std::uint64_t accounted = std::uint64_t{rec.echoed_ok} + rec.pending_at_end;
            if (rec.messages > accounted) rc.echoes_lost += rec.messages - accounted;
        }
        rc.going_away = data.going_away;
        rc.retry_connect_failed = data.retry_connect_failed;
        rc.retry_upgrade_failed = data.retry_upgrade_failed;
        std::vector<std::uint32_t> rt = data.reconnect_us;
        rc.reconnect_ms = summarise(rt, 1e-3);
        std::vector<std::uint32_t> rt_dead = data.reconnect_dead_us;
        rc.reconnect_dead_ms = summarise(rt_dead, 1e-3);
        if (rc.echoes_lost != 0 || rc.echo_mismatch != 0) {
            r.checks.passed = false;
            r.problems.push_back(problem{"echoes lost or out of order (--reconnect)", rc.echoes_lost + rc.echo_mismatch,
                                         std::to_string(rc.echoes_lost) + " lost, " + std::to_string(rc.echo_mismatch) +
                                             " out of order"});
        }
        r.reconnect = rc;
    }
    return r;
}

}  // namespace loadgen
