// What one loadgen run found, as one typed value: analyse() makes it, print_run(), compare()
// and bench/loadgen/plot.py read it, and it is serialised to JSON (and read back by --combine) in one
// place, through Boost.Describe: the member names below are the JSON keys, so bench/results.py
// and the scripts read the same names. Absent figures are std::optional (null in JSON).
#ifndef IDLEWHEEL_LOADGEN_RESULT_HPP
#define IDLEWHEEL_LOADGEN_RESULT_HPP

#include <boost/describe/class.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loadgen {

/// n, min, p50, p99, max, mean of a sample (nearest-rank percentiles), in the unit its name says.
struct distribution {
    std::uint64_t n = 0;
    double min = 0, p50 = 0, p99 = 0, max = 0, mean = 0;
};
BOOST_DESCRIBE_STRUCT(distribution, (), (n, min, p50, p99, max, mean))

/// Connections per role.
struct role_counts {
    std::uint64_t idle = 0, active = 0, pinger = 0, dead = 0, stalled = 0;
};
BOOST_DESCRIBE_STRUCT(role_counts, (), (idle, active, pinger, dead, stalled))

struct scenario_summary {
    std::string protocol;
    std::string url;     // --url (empty: demo_server by --http-port)
    std::string expect;  // what the server promised: demo (its /stats), kicks, beast-timeouts, none
    double expect_idle_ms = 0;  // the idle timeout the verdicts used (kicks, beast-timeouts; demo: server.idle_timeout_ms)
    bool heartbeats = false;    // kicks: --expect-ping-interval / --expect-pong-timeout given
    double handshake_timeout_ms = 0;  // --handshake-timeout: stalled clients are due then
    std::uint64_t connections = 0;
    role_counts mix;
    std::uint64_t threads = 0;
    double connect_rate = 0;
    std::uint64_t max_connecting = 0;
    std::uint64_t source_addresses = 0;
    std::string first_source;
    double interval_ms = 0;
    bool closed_loop = false;
    std::uint64_t message_size = 0;
    double duration_s = 0, ping_interval_ms = 0, pong_timeout_ms = 0, ping_jitter_ms = 0, allowance_ms = 0,
           stats_interval_ms = 0;
    std::uint64_t seed = 0;
    std::uint64_t fd_limit = 0;
};
BOOST_DESCRIBE_STRUCT(scenario_summary, (),
                      (protocol, url, expect, expect_idle_ms, heartbeats, handshake_timeout_ms, connections, mix, threads, connect_rate, max_connecting, source_addresses,
                       first_source, interval_ms, closed_loop, message_size, duration_s, ping_interval_ms,
                       pong_timeout_ms, ping_jitter_ms, allowance_ms, stats_interval_ms, seed, fd_limit))

/// The server's settings, as its /stats reported them (idle timeout and tick: as used).
struct server_summary {
    std::string timers;
    double threads = 0, tick_ms = 0, idle_timeout_ms = 0;
};
BOOST_DESCRIBE_STRUCT(server_summary, (), (timers, threads, tick_ms, idle_timeout_ms))

struct connect_summary {
    std::uint64_t ready = 0, connect_failed = 0, handshake_failed = 0;
    double phase_s = 0, last_ready_s = 0, rate_per_s = 0;
};
BOOST_DESCRIBE_STRUCT(connect_summary, (), (ready, connect_failed, handshake_failed, phase_s, last_ready_s, rate_per_s))

/// How one role's connections ended (keys: bench/loadgen/connection.hpp's outcome_names).
struct role_outcomes {
    std::uint64_t open = 0, connect_failed = 0, handshake_failed = 0, ws_idle_close = 0, ws_other_close = 0,
                  dropped = 0, error = 0;
    std::string expected;  // an outcome's name, or "closed": any close frame or a bare close (--expect kicks)
    // This role's share of the verdicts (check_summary), and whether it has none (not named
    // "passed": bench/compare.sh greps the JSON for the run's "passed":true).
    std::uint64_t false_kicks = 0, missed_kicks = 0, wrong_outcomes = 0, unresolved = 0, errors = 0;
    bool role_passed = false;
};
BOOST_DESCRIBE_STRUCT(role_outcomes, (),
                      (open, connect_failed, handshake_failed, ws_idle_close, ws_other_close, dropped, error, expected,
                       false_kicks, missed_kicks, wrong_outcomes, unresolved, errors, role_passed))

struct outcome_table {
    std::optional<role_outcomes> idle, active, pinger, dead, stalled;  // null: no client of that role
};
BOOST_DESCRIBE_STRUCT(outcome_table, (), (idle, active, pinger, dead, stalled))

/// The verdicts (analysis.hpp states the rules).
struct check_summary {
    std::uint64_t false_kicks = 0, early_kicks = 0, missed_kicks = 0, wrong_outcomes = 0, unresolved = 0, errors = 0;
    double idle_limit_ms = 0, slack_ms = 0;
    std::uint64_t past_two_ticks = 0;
    double past_two_ticks_max_ms = 0;
    bool passed = false;
};
BOOST_DESCRIBE_STRUCT(check_summary, (),
                      (false_kicks, early_kicks, missed_kicks, wrong_outcomes, unresolved, errors, idle_limit_ms,
                       slack_ms, past_two_ticks, past_two_ticks_max_ms, passed))

/// Failures of one kind, with a count and the first example.
struct problem {
    std::string what;
    std::uint64_t count = 0;
    std::string example;
};
BOOST_DESCRIBE_STRUCT(problem, (), (what, count, example))

struct lateness_summary {
    distribution idle, pinger;
};
BOOST_DESCRIBE_STRUCT(lateness_summary, (), (idle, pinger))

struct echo_summary {
    std::uint64_t sent = 0, echoed_active = 0, late_sends = 0;
    distribution rtt_ms;
    double echoes_per_s = 0;
};
BOOST_DESCRIBE_STRUCT(echo_summary, (), (sent, echoed_active, late_sends, rtt_ms, echoes_per_s))

/// loadgen's own load: its CPU, and how late its loops ran (overloaded: over 100 ms).
struct client_summary {
    double cpu_s = 0, cpu_percent = 0;
    std::uint64_t threads = 0;
    distribution loop_lag_ms;
    bool overloaded = false;
};
BOOST_DESCRIBE_STRUCT(client_summary, (), (cpu_s, cpu_percent, threads, loop_lag_ms, overloaded))

/// The server's cost over one window of the run.
struct cost_window {
    double cpu_s = 0, cpu_user_s = 0, cpu_system_s = 0, messages = 0, seconds = 0;
    double cpu_percent = 0, messages_per_s = 0, cpu_us_per_message = 0, user_us_per_message = 0;
};
BOOST_DESCRIBE_STRUCT(cost_window, (),
                      (cpu_s, cpu_user_s, cpu_system_s, messages, seconds, cpu_percent, messages_per_s,
                       cpu_us_per_message, user_us_per_message))

/// CPU per echoed message in each --stats-interval of the steady window.
struct interval_spread {
    std::uint64_t n = 0;
    double cpu_us_per_message_median = 0, cpu_us_per_message_p10 = 0, cpu_us_per_message_p90 = 0;
};
BOOST_DESCRIBE_STRUCT(interval_spread, (),
                      (n, cpu_us_per_message_median, cpu_us_per_message_p10, cpu_us_per_message_p90))

/// The server's cost (README.md, "Server cost", says what each window is).
struct cost_summary {
    std::optional<cost_window> whole, steady, full_load, kick_phase, after_kicks;
    std::optional<interval_spread> steady_intervals;
    double rss_before_bytes = 0, rss_after_bytes = 0, rss_full_bytes = 0;
    std::optional<double> rss_bytes_per_connection;  // only while every connection was open
    bool full_load_valid = false;
    std::uint64_t connections_at_full = 0;
    double full_at_s = -1, first_kick_s = -1, last_kick_s = -1;
    double asio_timer_rearms = 0, wheel_wakeups = 0, wheel_worst_lateness_us = 0;
    std::uint64_t stats_errors = 0;
};
BOOST_DESCRIBE_STRUCT(cost_summary, (),
                      (whole, steady, full_load, kick_phase, after_kicks, steady_intervals, rss_before_bytes,
                       rss_after_bytes, rss_full_bytes, rss_bytes_per_connection, full_load_valid, connections_at_full,
                       full_at_s, first_kick_s, last_kick_s, asio_timer_rearms, wheel_wakeups, wheel_worst_lateness_us,
                       stats_errors))

/// How busy the whole machine was during the run (every CPU, every process).
struct machine_summary {
    double cpus = 0, busy_percent = 0, steal_percent = 0, irq_percent = 0;
    std::string loadavg_at_end;
};
BOOST_DESCRIBE_STRUCT(machine_summary, (), (cpus, busy_percent, steal_percent, irq_percent, loadavg_at_end))

/// The raw /stats documents: before connecting, at full load, at the end.
struct stats_documents {
    boost::json::object before, full, after;
};
BOOST_DESCRIBE_STRUCT(stats_documents, (), (before, full, after))

/// Every /stats sample over time, one array per figure.
struct sample_series {
    std::vector<double> t_s, uptime_s, cpu_s, cpu_user_s;
    std::vector<std::uint64_t> rss_bytes;
    std::vector<std::int64_t> open;
    std::vector<std::uint64_t> messages, machine_busy_ticks, machine_total_ticks, machine_steal_ticks,
        machine_irq_ticks, wheel_wakeups, wheel_expired, asio_timer_rearms;
};
BOOST_DESCRIBE_STRUCT(sample_series, (),
                      (t_s, uptime_s, cpu_s, cpu_user_s, rss_bytes, open, messages, machine_busy_ticks,
                       machine_total_ticks, machine_steal_ticks, machine_irq_ticks, wheel_wakeups, wheel_expired,
                       asio_timer_rearms))

/// --reconnect, and the sequence numbers every WebSocket message carries (README.md, "Reconnecting").
struct reconnect_summary {
    std::uint64_t reconnects = 0;            // connections after a client's first that got up
    std::uint64_t going_away = 0;            // closes with 1001 that started a reconnect
    std::uint64_t retry_connect_failed = 0;  // failed attempts, retried
    std::uint64_t retry_upgrade_failed = 0;
    distribution reconnect_ms;               // the server's close frame -> upgraded again (dead clients apart)
    distribution reconnect_dead_ms;          // the same for dead clients: they never answer the close frame
    std::uint64_t messages = 0;              // distinct messages sent (sequence numbers)
    std::uint64_t echoed_in_order = 0;       // echoes of the awaited sequence number
    std::uint64_t echo_mismatch = 0;         // echoes of any other (out of order, duplicate, unknown)
    std::uint64_t resent = 0;                // sent again after a close cut them off
    std::uint64_t pending_at_end = 0;        // in flight when the run ended
    std::uint64_t echoes_lost = 0;           // messages - echoed_in_order - pending_at_end
};
BOOST_DESCRIBE_STRUCT(reconnect_summary, (),
                      (reconnects, going_away, retry_connect_failed, retry_upgrade_failed, reconnect_ms, reconnect_dead_ms, messages,
                       echoed_in_order, echo_mismatch, resent, pending_at_end, echoes_lost))

/// One number per role at each time of a series.
struct role_series {
    std::vector<std::uint64_t> idle, active, pinger, dead, stalled;
};
BOOST_DESCRIBE_STRUCT(role_series, (), (idle, active, pinger, dead, stalled))

/// The connections over time as the clients saw them (no /stats needed), rebuilt after the run
/// from each client's own times: at each t_s (since the first connect), connections up and not
/// yet closed by the server, per role, and the running totals of connections up and of closes by
/// the server. A reconnected client (--reconnect) counts by its last connection only.
struct client_timeline {
    std::vector<double> t_s;
    role_series open;
    std::vector<std::uint64_t> connected, closed_by_server;
};
BOOST_DESCRIBE_STRUCT(client_timeline, (), (t_s, open, connected, closed_by_server))

/// The active clients' echo round trips as a histogram on fixed bins (so the runs of several
/// processes add up): count[k] round trips took at most upper_ms[k] (and more than
/// upper_ms[k - 1]); the last bin holds everything slower.
struct histogram {
    std::vector<double> upper_ms;
    std::vector<std::uint64_t> count;
};
BOOST_DESCRIBE_STRUCT(histogram, (), (upper_ms, count))

/// How one role's connections were closed, as the clients saw it: for every run (the report
/// plots close_after_s against the window), and what --expect observe reports.
struct role_closes {
    std::string promise;  // the role's promise as spelled (promise.hpp): "open", "1s..2s@handshake:bare", ...
    std::string event;    // what close_after_s counts from: the promise's event (else handshake)
    double from_s = 0, to_s = 0, slack_s = 0;  // a closed() promise's window: due at from, missed after to + slack
    std::uint64_t closed = 0, open = 0, bare = 0, frames = 0;
    std::string codes;    // the close frames' codes: "1011 x 400, 1000 x 2"
    distribution after_connect_s, after_handshake_s, after_message_s;
    std::vector<double> close_after_s;  // every close, seconds after its event's earliest time, sorted
};
BOOST_DESCRIBE_STRUCT(role_closes, (),
                      (promise, event, from_s, to_s, slack_s, closed, open, bare, frames, codes, after_connect_s,
                       after_handshake_s, after_message_s, close_after_s))

struct closes_table {
    std::optional<role_closes> idle, active, pinger, dead, stalled;  // null: no client of that role
};
BOOST_DESCRIBE_STRUCT(closes_table, (), (idle, active, pinger, dead, stalled))

struct run_result {
    std::string label;
    std::string date;  // UTC, ISO 8601
    scenario_summary scenario;
    server_summary server;
    connect_summary connect;
    outcome_table outcomes;
    check_summary checks;
    std::vector<problem> problems;
    lateness_summary kick_lateness_ms;  // idle: close - (message written + T); pinger: from the handshake's start
    distribution dead_detection_s;      // dead clients: drop - handshake done
    distribution stalled_drop_s;        // stalled clients: drop - connect began
    std::vector<std::int64_t> idle_lateness_us, pinger_lateness_us;  // every kick, sorted
    echo_summary echo;
    histogram echo_rtt_histogram;
    client_timeline timeline;
    client_summary client;
    cost_summary server_cost;
    std::optional<machine_summary> machine;
    stats_documents stats;
    sample_series samples;
    std::optional<reconnect_summary> reconnect;  // null without --reconnect
    closes_table closes;
    std::string promise;  // the promise in the general form (empty: demo, from /stats)
    std::string fits;     // --expect observe: a promise that fits what was seen
};
BOOST_DESCRIBE_STRUCT(run_result, (),
                      (label, date, scenario, server, connect, outcomes, checks, problems, kick_lateness_ms,
                       dead_detection_s, stalled_drop_s, idle_lateness_us, pinger_lateness_us, echo, echo_rtt_histogram, timeline, client, server_cost, machine,
                       stats, samples, reconnect, closes, promise, fits))

/// The result as JSON, and back (throws boost::system::system_error on a document that is not
/// a loadgen result of this version).
[[nodiscard]] boost::json::value to_json(const run_result& r);
[[nodiscard]] run_result result_from_json(const boost::json::value& v);

}  // namespace loadgen

#endif
