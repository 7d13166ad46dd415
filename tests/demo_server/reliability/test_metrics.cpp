// GET /metrics (Prometheus text format 0.0.4), parsed here by a small parser of the format, and
// the drain's contract: after SIGTERM plain HTTP (/stats, /metrics) is still served on new and
// existing connections while the WebSocket sessions are drained, upgrades get 503, the TCP port
// refuses connections, and the process exits 0 in bounded time.
#include "raw_websocket.hpp"
#include "server_fixture.hpp"

#include "close_causes.hpp"
#include "session_kinds.hpp"

#include <poll.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <map>
#include <set>

using namespace reliability;

namespace {

// ---- the exposition format ----------------------------------------------------------------

using label_set = std::map<std::string, std::string>;

struct metric_sample {
    std::string name;
    label_set labels;
    double value = 0;
};

std::string describe(const std::string& name, const label_set& labels) {
    std::string s = name;
    if (labels.empty()) return s;
    s += '{';
    for (const auto& [k, v] : labels) s += k + "=\"" + v + "\",";
    s.back() = '}';
    return s;
}

// One page: every problem the parser or the checks found is in `errors` (empty: valid).
struct metrics_page {
    std::map<std::string, std::string> help, type;
    std::vector<metric_sample> samples;
    std::vector<std::string> errors;

    [[nodiscard]] const metric_sample* find(const std::string& name, const label_set& labels = {}) const {
        for (const auto& s : samples)
            if (s.name == name && s.labels == labels) return &s;
        return nullptr;
    }
    /// The value of one series; throws if the page has no such series.
    [[nodiscard]] double value(const std::string& name, const label_set& labels = {}) const {
        if (const auto* s = find(name, labels)) return s->value;
        throw std::runtime_error("/metrics has no " + describe(name, labels));
    }
};

double parse_value(std::string_view v) {
    if (v == "+Inf") return INFINITY;
    if (v == "-Inf") return -INFINITY;
    if (v == "NaN") return NAN;
    std::size_t used = 0;
    const double d = std::stod(std::string(v), &used);
    if (used != v.size()) throw std::runtime_error("not a number: '" + std::string(v) + "'");
    return d;
}

bool valid_name(std::string_view n) {
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
    for (const char c : n)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
    return true;
}

// The family a sample belongs to: its own name, or for histogram / summary series the name
// without _bucket, _sum or _count.
std::string family_of(const metrics_page& page, const std::string& name) {
    if (page.type.count(name) != 0U) return name;
    for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            const auto base = name.substr(0, name.size() - suffix.size());
            const auto t = page.type.find(base);
            if (t != page.type.end() && (t->second == "histogram" || (t->second == "summary" && suffix != "_bucket")))
                return base;
        }
    }
    return {};
}

// Parses `text` and checks it: HELP and TYPE for every family, before its samples and once;
// counters named *_total; no series twice; histograms with cumulative, non-decreasing
// buckets, a +Inf bucket equal to _count, and a _sum.
metrics_page parse_metrics(const std::string& text) {
    metrics_page page;
    std::set<std::string> seen_series, families_with_samples;
    std::size_t line_no = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        const auto where = "line " + std::to_string(line_no) + " '" + line + "': ";
        if (line.empty()) continue;
        if (line[0] == '#') {
            std::istringstream words(line.substr(1));
            std::string keyword, name;
            words >> keyword >> name;
            if (keyword != "HELP" && keyword != "TYPE") continue;  // a comment
            if (!valid_name(name)) page.errors.push_back(where + "bad metric name");
            std::string rest;
            std::getline(words, rest);
            if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
            auto& into = keyword == "HELP" ? page.help : page.type;
            if (into.count(name) != 0U) page.errors.push_back(where + keyword + " given twice");
            if (families_with_samples.count(name) != 0U) page.errors.push_back(where + keyword + " after the family's samples");
            if (keyword == "TYPE" && rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" && rest != "untyped")
                page.errors.push_back(where + "unknown type");
            if (keyword == "HELP" && rest.empty()) page.errors.push_back(where + "empty HELP");
            into[name] = rest;
            continue;
        }
        metric_sample s;
        std::size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
        s.name = line.substr(0, i);
        if (!valid_name(s.name)) page.errors.push_back(where + "bad metric name");
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                const auto eq = line.find('=', i);
                if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
                    page.errors.push_back(where + "bad label");
                    break;
                }
                const std::string key = line.substr(i, eq - i);
                std::string value;
                std::size_t j = eq + 2;
                bool closed = false;
                for (; j < line.size(); ++j) {
                    if (line[j] == '\\' && j + 1 < line.size()) {
                        const char e = line[++j];
                        if (e == 'n')
                            value += '\n';
                        else if (e == '\\' || e == '"')
                            value += e;
                        else
                            page.errors.push_back(where + "bad escape in a label value");
                    } else if (line[j] == '"') {
                        closed = true;
                        break;
                    } else {
                        value += line[j];
                    }
                }
                if (!closed || !valid_name(key) || s.labels.count(key) != 0U) {
                    page.errors.push_back(where + "bad label '" + key + "'");
                    break;
                }
                s.labels[key] = value;
                i = j + 1;
                if (i < line.size() && line[i] == ',') ++i;
            }
            if (i >= line.size()) {
                page.errors.push_back(where + "labels not closed");
                continue;
            }
            ++i;  // '}'
        }
        if (i >= line.size() || line[i] != ' ') {
            page.errors.push_back(where + "no value");
            continue;
        }
        std::istringstream rest(line.substr(i + 1));
        std::string value, timestamp, extra;
        rest >> value >> timestamp >> extra;
        try {
            s.value = parse_value(value);
        } catch (const std::exception& e) {
            page.errors.push_back(where + e.what());
            continue;
        }
        if (!extra.empty()) page.errors.push_back(where + "junk after the value");
        const auto family = family_of(page, s.name);
        if (family.empty()) {
            page.errors.push_back(where + "sample without a TYPE line before it");
        } else {
            families_with_samples.insert(family);
            if (page.help.count(family) == 0U) page.errors.push_back(where + "family " + family + " has no HELP before its samples");
        }
        if (!seen_series.insert(describe(s.name, s.labels)).second) page.errors.push_back(where + "series given twice");
        page.samples.push_back(std::move(s));
    }
    for (const auto& [name, type] : page.type) {
        if (page.help.count(name) == 0U) page.errors.push_back(name + ": TYPE without HELP");
        if (type == "counter" && (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0))
            page.errors.push_back(name + ": a counter not named *_total");
        if (families_with_samples.count(name) == 0U) page.errors.push_back(name + ": family without samples");
        if (type != "histogram") continue;
        // Per label set (le aside): buckets ascending in le, cumulative counts non-decreasing.
        std::map<label_set, std::vector<std::pair<double, double>>> buckets;
        for (const auto& s : page.samples) {
            if (s.name != name + "_bucket") continue;
            auto labels = s.labels;
            const auto le = labels.find("le");
            if (le == labels.end()) {
                page.errors.push_back(name + "_bucket without le");
                continue;
            }
            const double bound = parse_value(le->second);
            labels.erase(le);
            buckets[labels].emplace_back(bound, s.value);
        }
        if (buckets.empty()) page.errors.push_back(name + ": a histogram without buckets");
        for (auto& [labels, bs] : buckets) {
            for (std::size_t k = 1; k < bs.size(); ++k) {
                if (!(bs[k].first > bs[k - 1].first)) page.errors.push_back(name + ": le not ascending");
                if (bs[k].second < bs[k - 1].second) page.errors.push_back(name + ": buckets not cumulative");
            }
            const auto* count = page.find(name + "_count", labels);
            if (!std::isinf(bs.back().first)) page.errors.push_back(name + ": no +Inf bucket");
            else if (count == nullptr || count->value != bs.back().second)
                page.errors.push_back(name + ": +Inf bucket differs from _count");
            if (page.find(name + "_sum", labels) == nullptr) page.errors.push_back(name + ": no _sum");
        }
    }
    return page;
}

// ---- HTTP on a connection kept open -----------------------------------------------------------

struct http_reply {
    int status = 0;
    std::string head;  // status line and headers, lower-cased
    std::string body;
};

// Reads one response (Content-Length framed) from `s`; `pending` keeps bytes read past it.
std::optional<http_reply> read_reply(raw_socket& s, std::string& pending, clock::time_point deadline) {
    std::size_t end = std::string::npos;
    while ((end = pending.find("\r\n\r\n")) == std::string::npos)
        if (s.recv_some(pending, deadline) != io_status::ok) return std::nullopt;
    http_reply r;
    r.head = pending.substr(0, end + 2);
    for (auto& c : r.head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (r.head.rfind("http/1.1 ", 0) != 0) return std::nullopt;
    r.status = std::stoi(r.head.substr(9, 3));
    std::size_t length = 0;
    if (const auto cl = r.head.find("\r\ncontent-length:"); cl != std::string::npos) length = std::stoul(r.head.substr(cl + 17));
    while (pending.size() < end + 4 + length)
        if (s.recv_some(pending, deadline) != io_status::ok) return std::nullopt;
    r.body = pending.substr(end + 4, length);
    pending.erase(0, end + 4 + length);
    return r;
}

std::string get_request(std::string_view target, bool keep_alive = false) {
    return "GET " + std::string(target) + " HTTP/1.1\r\nHost: x\r\n" + (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
}

/// GET /metrics on a new connection, parsed and checked.
metrics_page scrape(const server& srv) {
    auto s = raw_socket::connect(srv.host(), srv.http_port());
    std::string pending;
    if (s.send_all(get_request("/metrics"), clock::now() + 5s) != io_status::ok) throw std::runtime_error("GET /metrics: send failed");
    const auto r = read_reply(s, pending, clock::now() + 5s);
    if (!r || r->status != 200) throw std::runtime_error("GET /metrics failed: '" + (r ? r->head : pending) + "'");
    if (r->head.find("\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8\r\n") == std::string::npos)
        throw std::runtime_error("GET /metrics: wrong Content-Type: " + r->head);
    return parse_metrics(r->body);
}

#define EXPECT_VALID(page)                                                                                  \
    do {                                                                                                     \
        const auto& errors_ = (page).errors;                                                                \
        BOOST_TEST(errors_.empty(), errors_.size() << " problems in /metrics, the first: " << (errors_.empty() ? "" : errors_.front())); \
    } while (false)

// The values of `label` over the family's series, in the page's order (e.g. every cause of
// idlewheel_demo_sessions_closed_total).
std::vector<std::string> label_values(const metrics_page& p, const std::string& family, const std::string& label) {
    std::vector<std::string> values;
    for (const auto& s : p.samples)
        if (s.name == family && s.labels.count(label) != 0U) values.push_back(s.labels.at(label));
    return values;
}

// The names of a table of the server's (close_causes.hpp, session_kinds.hpp), in its order.
template <class Entry, std::size_t N>
std::vector<std::string> table_names(const Entry (&table)[N], std::string_view Entry::*name) {
    std::vector<std::string> names;
    for (const auto& e : table) names.emplace_back(e.*name);
    return names;
}

double closed(const metrics_page& p, const std::string& cause) {
    return p.value("idlewheel_demo_sessions_closed_total", {{"cause", cause}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics, *boost::unit_test::label("timers_none"))

// The parser itself must catch what it is there for (so a passing page means something).
BOOST_AUTO_TEST_CASE(parser_rejects_broken_pages) {
    const std::string good =
        "# HELP a_total A.\n# TYPE a_total counter\na_total{k=\"v\\\"\\\\\\n\"} 3\n"
        "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.5\nh_count 2\n";
    const auto ok = parse_metrics(good);
    EXPECT_VALID(ok);
    BOOST_TEST(ok.find("a_total", {{"k", "v\"\\\n"}}) != nullptr);
    for (const std::string& bad : {
             std::string("# TYPE a counter\na 1\n"),                                      // no HELP, no _total
             std::string("a_total 1\n"),                                                  // no TYPE
             std::string("# HELP a_total A.\n# TYPE a_total counter\na_total 1\na_total 2\n"),  // series twice
             std::string("# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"0.1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n"),
             std::string("# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n"),
             std::string("# HELP g G.\n# TYPE g gauge\ng{k=\"v} 1\n"),                     // label not closed
             std::string("# HELP g G.\n# TYPE g gauge\ng one\n"),                         // not a number
         })
        BOOST_TEST(!parse_metrics(bad).errors.empty(), "accepted: " << bad);
}

// Every family well formed, and the counters move with real traffic: echoed messages and
// bytes, accepted connections, the idle kick (with timers) and, in wheel mode, the wheel's
// expiries and the lateness histogram. HEAD answers without a body.
BOOST_AUTO_TEST_CASE(families_valid_and_values_follow_traffic) {
    const bool timed = timers_mode() != "none", wheel = timers_mode() == "wheel";
    server srv({"--idle-timeout", "600ms", "--ping-interval", "0s", "--quiet"});
    const auto before = scrape(srv);
    EXPECT_VALID(before);
    for (const auto* family : {"idlewheel_demo_open_sessions", "idlewheel_demo_sessions_closed_total", "idlewheel_demo_connections_accepted_total",
                               "idlewheel_demo_connections_refused_total", "idlewheel_demo_accept_errors_total", "idlewheel_demo_messages_echoed_total",
                               "idlewheel_demo_echoed_bytes_total", "idlewheel_demo_wheel_pending_timers", "idlewheel_demo_wheel_scheduled_total",
                               "idlewheel_demo_wheel_expired_total", "idlewheel_demo_wheel_cancelled_total", "idlewheel_demo_wheel_wakeups_total",
                               "idlewheel_demo_wheel_idle_wakeups_total", "idlewheel_demo_wheel_expiry_lateness_seconds",
                               "idlewheel_demo_liveness_reader_idle_total", "idlewheel_demo_liveness_pings_sent_total",
                               "idlewheel_demo_liveness_dead_peers_total", "idlewheel_demo_liveness_handshake_timeouts_total",
                               "idlewheel_demo_liveness_operation_timeouts_total", "idlewheel_demo_liveness_close_timeouts_total", "idlewheel_demo_draining", "idlewheel_demo_lame_duck", "idlewheel_demo_messages_unechoed_total",
                               "idlewheel_demo_websocket_going_away_total", "idlewheel_demo_healthz_requests_total", "process_resident_memory_bytes",
                               "process_cpu_seconds_total", "process_open_fds", "process_max_fds", "process_start_time_seconds"})
        BOOST_TEST(before.type.count(family) == 1U, "no family " << family);
    // One series per close cause and per session kind of the server's tables, in their order,
    // and no other: a cause /metrics leaves out fails here.
    BOOST_TEST(label_values(before, "idlewheel_demo_sessions_closed_total", "cause") ==
                   table_names(demo::close_causes, &demo::close_cause_info::name),
               boost::test_tools::per_element());
    BOOST_TEST(label_values(before, "idlewheel_demo_open_sessions", "kind") ==
                   table_names(demo::session_kinds, &demo::session_kind_info::name),
               boost::test_tools::per_element());
    BOOST_TEST(before.value("idlewheel_demo_info", {{"timers", timers_mode()}}) == 1);
    BOOST_TEST(before.value("idlewheel_demo_draining") == 0);
    BOOST_TEST(before.value("idlewheel_demo_lame_duck") == 0);
    BOOST_TEST(before.value("process_resident_memory_bytes") > 1e6);
    BOOST_TEST(before.value("process_open_fds") >= 3);
    BOOST_TEST(before.value("process_open_fds") <= before.value("process_max_fds"));
    const double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    BOOST_TEST(before.value("process_start_time_seconds") <= now_s + 1);
    BOOST_TEST(before.value("process_start_time_seconds") >= now_s - 120);

    // Traffic: 50 WebSocket echoes, a TCP client that goes quiet (kicked when timers run).
    constexpr int messages = 50;
    auto ws = raw_websocket::connect(srv.host(), srv.http_port());
    std::size_t bytes = 0;
    for (int i = 0; i < messages; ++i) {
        const std::string m = "metrics message " + std::to_string(i);
        BOOST_TEST_REQUIRE(ws.echo(m));
        bytes += m.size();
    }
    const auto during = scrape(srv);
    EXPECT_VALID(during);
    BOOST_TEST(during.value("idlewheel_demo_open_sessions", {{"kind", "websocket"}}) == 1);
    BOOST_TEST(during.value("idlewheel_demo_messages_echoed_total") - before.value("idlewheel_demo_messages_echoed_total") >= messages);
    BOOST_TEST(during.value("idlewheel_demo_echoed_bytes_total") - before.value("idlewheel_demo_echoed_bytes_total") >= static_cast<double>(bytes));
    BOOST_TEST(during.value("idlewheel_demo_connections_accepted_total") - before.value("idlewheel_demo_connections_accepted_total") >= 2);

    auto quiet = raw_socket::connect(srv.host(), srv.tcp_port());
    BOOST_TEST_REQUIRE((quiet.send_all("hello\n") == io_status::ok));
    std::string echoed;
    BOOST_TEST_REQUIRE((quiet.recv_at_least(echoed, 6, clock::now() + 5s) == io_status::ok));
    if (timed) {
        // Both the TCP client and the WebSocket are quiet now: both are kicked (idle).
        BOOST_TEST(wait_until([&] { return closed(scrape(srv), "idle") - closed(before, "idle") >= 2; }, 600ms + slack + 2s, 100ms),
                   "the idle kicks did not show in idlewheel_demo_sessions_closed_total{cause=\"idle\"}");
    }
    // The wheel's statistics are refreshed every 250 ms.
    std::this_thread::sleep_for(400ms);
    const auto after = scrape(srv);
    EXPECT_VALID(after);
    const std::string h = "idlewheel_demo_wheel_expiry_lateness_seconds";
    const double count_growth = after.value(h + "_count") - before.value(h + "_count");
    if (wheel) {
        BOOST_TEST(after.value("idlewheel_demo_wheel_expired_total") - before.value("idlewheel_demo_wheel_expired_total") >= 2);
        BOOST_TEST(count_growth >= 2, "the lateness histogram did not count the expiries");
        BOOST_TEST(after.value(h + "_sum") >= before.value(h + "_sum"));
        BOOST_TEST(after.value("idlewheel_demo_liveness_reader_idle_total") - before.value("idlewheel_demo_liveness_reader_idle_total") >= 2);
        BOOST_TEST(after.value("idlewheel_demo_wheel_scheduled_total") > 0);
    } else {
        // The wheel is never armed: its families read 0.
        BOOST_TEST(after.value(h + "_count") == 0);
        BOOST_TEST(after.value("idlewheel_demo_wheel_scheduled_total") == 0);
        BOOST_TEST(after.value("idlewheel_demo_wheel_pending_timers") == 0);
    }
    BOOST_TEST(after.value("process_cpu_seconds_total") >= before.value("process_cpu_seconds_total"));

    // HEAD: the same headers, no body.
    auto s = raw_socket::connect(srv.host(), srv.http_port());
    BOOST_TEST_REQUIRE((s.send_all("HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") == io_status::ok));
    std::string raw;
    while (s.recv_some(raw, clock::now() + 5s) == io_status::ok) {}
    BOOST_TEST(raw.rfind("HTTP/1.1 200", 0) == 0U, raw);
    BOOST_TEST(raw.find("text/plain; version=0.0.4") != std::string::npos);
    BOOST_TEST(raw.substr(raw.find("\r\n\r\n") + 4).empty(), "HEAD returned a body");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(drain_serving, *boost::unit_test::label("timers_none"))

// SIGTERM with 40 WebSocket clients and --drain-spread 3s: while they are closed one by one,
// /stats and /metrics answer on new connections and on a keep-alive connection opened before
// the signal, and show the drain progressing; a WebSocket upgrade gets 503 with Retry-After
// and Connection: close; the TCP port refuses. Once the last WebSocket is gone the keep-alive
// connection is closed by the server and the process exits 0.
BOOST_AUTO_TEST_CASE(http_answers_while_websockets_drain) {
    constexpr auto spread = 3000ms;
    constexpr std::size_t n = 40;
    server srv({"--drain-spread", "3s", "--close-timeout", "2s", "--idle-timeout", "60s", "--ping-interval", "0s", "--quiet"});
    std::vector<raw_websocket> clients;
    for (std::size_t i = 0; i < n; ++i) {
        clients.push_back(raw_websocket::connect(srv.host(), srv.http_port()));
        BOOST_TEST_REQUIRE(clients.back().echo("before the drain"));
    }
    auto keep_alive = raw_socket::connect(srv.host(), srv.http_port());
    std::string pending;
    BOOST_TEST_REQUIRE((keep_alive.send_all(get_request("/stats", true)) == io_status::ok));
    const auto first = read_reply(keep_alive, pending, clock::now() + 5s);
    BOOST_TEST_REQUIRE((first && first->status == 200));
    BOOST_TEST(first->body.find("\"draining\":false") != std::string::npos, first->body);
    // GET /healthz: 200 while serving, counted.
    const auto healthy = raw_http(srv.host(), srv.http_port(), get_request("/healthz", false));
    BOOST_TEST(healthy.response.rfind("HTTP/1.1 200", 0) == 0U, healthy.response);
    const auto m0 = scrape(srv);
    BOOST_TEST(m0.value("idlewheel_demo_healthz_requests_total", {{"status", "200"}}) == 1);
    BOOST_TEST(m0.value("idlewheel_demo_healthz_requests_total", {{"status", "503"}}) == 0);

    // The clients answer the server's close frames and then close TCP, as a browser would, on
    // their own thread.
    std::atomic<std::size_t> got_1001{0}, ended{0};
    std::atomic<bool> stop{false};
    std::thread answering([&] {
        std::vector<bool> done(n, false);
        read_frames_as_they_come(
            clients, [&](std::size_t i) { return !done[i]; }, [&] { return !stop && ended < n; },
            [&](std::size_t i, const std::optional<ws_frame>& f) {
                if (f && f->opcode == opcode::close) {
                    if (f->close_code() == 1001U) ++got_1001;
                    clients[i].send_frame(opcode::close, std::string("\x03\xe9", 2));
                }
                clients[i].socket().close();  // the handshake is done: TCP ends (no --close-timeout wait)
                done[i] = true;
                ++ended;
            });
    });
    struct joiner {
        std::atomic<bool>& stop;
        std::thread& t;
        ~joiner() {
            stop = true;
            t.join();
        }
    } join_answering{stop, answering};

    const auto t0 = clock::now();
    srv.signal(SIGTERM);
    BOOST_TEST_REQUIRE(wait_until([&] { return srv.log().find("stopping") != std::string::npos; }, 5s));

    // New connections: /stats and /metrics answer and say "draining".
    const auto s1 = srv.stats();
    BOOST_TEST(s1.text().find("\"draining\":true") != std::string::npos, s1.text());
    const auto m1 = scrape(srv);
    EXPECT_VALID(m1);
    BOOST_TEST(m1.value("idlewheel_demo_draining") == 1);
    // GET /healthz: 503 from the signal on (a load balancer takes the server out of rotation),
    // on a new connection and on the one opened before the signal; counted.
    const auto draining = raw_http(srv.host(), srv.http_port(), get_request("/healthz", false));
    BOOST_TEST(draining.response.rfind("HTTP/1.1 503", 0) == 0U, draining.response);
    BOOST_TEST(draining.response.find("draining") != std::string::npos, draining.response);
    BOOST_TEST_REQUIRE((keep_alive.send_all(get_request("/healthz", true)) == io_status::ok));
    const auto health_old = read_reply(keep_alive, pending, clock::now() + 5s);
    BOOST_TEST_REQUIRE(health_old.has_value(), "/healthz not answered on the keep-alive connection during the drain");
    BOOST_TEST(health_old->status == 503);
    const auto m2 = scrape(srv);
    BOOST_TEST(m2.value("idlewheel_demo_healthz_requests_total", {{"status", "200"}}) == 1);
    BOOST_TEST(m2.value("idlewheel_demo_healthz_requests_total", {{"status", "503"}}) == 2);
    // The connection opened before the signal is still served.
    BOOST_TEST_REQUIRE((keep_alive.send_all(get_request("/metrics", true)) == io_status::ok));
    const auto on_old = read_reply(keep_alive, pending, clock::now() + 5s);
    BOOST_TEST_REQUIRE(on_old.has_value(), "the keep-alive connection was not served during the drain");
    BOOST_TEST(on_old->status == 200);
    BOOST_TEST(parse_metrics(on_old->body).errors.empty());

    // A new WebSocket: 503, Retry-After, Connection: close, and the server closes.
    const auto upgrade = raw_http(srv.host(), srv.http_port(), upgrade_request(srv.host(), srv.http_port()));
    BOOST_TEST(upgrade.response.rfind("HTTP/1.1 503", 0) == 0U, upgrade.response);
    std::string lower = upgrade.response;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    BOOST_TEST(lower.find("\r\nretry-after: ") != std::string::npos, upgrade.response);
    BOOST_TEST(lower.find("\r\nconnection: close\r\n") != std::string::npos, upgrade.response);
    BOOST_TEST((upgrade.end == io_status::eof || upgrade.end == io_status::reset), "after the 503: " << to_string(upgrade.end));

    // The TCP port refuses.
    bool tcp_refused = false;
    try {
        raw_socket::connect(srv.host(), srv.tcp_port(), 2s);
    } catch (const std::exception& e) {
        tcp_refused = std::string(e.what()).find("refused") != std::string::npos;
    }
    BOOST_TEST(tcp_refused, "the TCP port still accepts connections during the drain");

    // The drain shows progress: fewer WebSockets open, more closed by shutdown, while answering.
    std::set<std::int64_t> open_seen;
    const double shutdown_before = closed(m1, "shutdown");
    double shutdown_later = shutdown_before;
    while (clock::now() - t0 < spread - 500ms) {
        try {
            const auto s = srv.stats(2s);
            open_seen.insert(s.integer("open.websocket"));
            const auto m = scrape(srv);
            shutdown_later = std::max(shutdown_later, closed(m, "shutdown"));
            BOOST_TEST(closed(m, "upgrade_refused") >= 1);
        } catch (const std::exception& e) {
            BOOST_FAIL("GET /stats or /metrics failed " << ms(clock::now() - t0) << " ms into the drain: " << e.what());
        }
        std::this_thread::sleep_for(150ms);
    }
    std::size_t partial = 0;
    for (const auto v : open_seen) partial += v > 0 && v < static_cast<std::int64_t>(n) ? 1U : 0U;
    BOOST_TEST(partial >= 2, "the drain's progress did not show: open.websocket took " << open_seen.size() << " values");
    BOOST_TEST(shutdown_later > shutdown_before);

    // The end: the keep-alive HTTP connection is closed by the server, exit 0, in bounded time.
    const auto code = srv.wait_exit(spread + 2s + slack + 2s);
    BOOST_TEST_REQUIRE(code.has_value(), "still running " << ms(clock::now() - t0) << " ms after SIGTERM");
    BOOST_TEST(*code == 0);
    BOOST_TEST(ms(clock::now() - t0) <= ms(spread + 2s + slack));
    BOOST_TEST(ms(clock::now() - t0) >= ms(spread) * 0.75, "exited before the WebSockets were drained");
    BOOST_TEST(keep_alive.wait_peer_gone(clock::now() + 1s), "the keep-alive HTTP connection was left open");
    BOOST_TEST(wait_until([&] { return ended.load() == n; }, 2s));
    BOOST_TEST(got_1001.load() == n);
    BOOST_TEST(srv.log().find("drain done") != std::string::npos);
}

// A plain-HTTP keep-alive connection does not hold the exit: with no WebSocket or TCP session,
// the drain is done at once, the connection is closed and the process exits 0, although the
// connection would stay for --idle-timeout (60 s) otherwise.
BOOST_AUTO_TEST_CASE(idle_keep_alive_http_does_not_hold_the_exit) {
    server srv({"--drain-spread", "5s", "--idle-timeout", "60s"});
    auto keep_alive = raw_socket::connect(srv.host(), srv.http_port());
    std::string pending;
    BOOST_TEST_REQUIRE((keep_alive.send_all(get_request("/stats", true)) == io_status::ok));
    BOOST_TEST_REQUIRE(read_reply(keep_alive, pending, clock::now() + 5s).has_value());
    const auto t0 = clock::now();
    srv.signal(SIGTERM);
    const auto code = srv.wait_exit(slack + 2s);
    BOOST_TEST_REQUIRE(code.has_value(), "still running " << ms(clock::now() - t0) << " ms after SIGTERM");
    BOOST_TEST(*code == 0);
    BOOST_TEST(ms(clock::now() - t0) <= ms(slack));
    BOOST_TEST(keep_alive.wait_peer_gone(clock::now() + 1s));
}

BOOST_AUTO_TEST_SUITE_END()
