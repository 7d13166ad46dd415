// GET /stats: the document's shape (keys and types) and counts that agree with what the test
// did; GET / (the dashboard) and the other routes.
//
// Bookkeeping: every /stats request is a connection of its own (accepted, open as "http"
// while it is served, closed as client_close afterwards), so the test counts its requests.
// Open clients echo once just before each request, which keeps them clear of the idle timeout
// however slow the machine is.
#include "demo_fixture.hpp"

#include "close_causes.hpp"
#include "session_kinds.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

#include <sys/resource.h>

#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>

namespace bdata = boost::unit_test::data;
using namespace demo_test;

namespace {

void require_integer(const json::object& s, std::string_view path) {
    const auto& v = at_path(s, path);
    BOOST_TEST((v.is_int64() || v.is_uint64()), path << " should be an integer, is " << json::serialize(v));
    BOOST_TEST(integer(s, path) >= 0, path << " should not be negative");
}

void require_number(const json::object& s, std::string_view path) {
    const auto& v = at_path(s, path);
    BOOST_TEST(v.is_number(), path << " should be a number, is " << json::serialize(v));
    BOOST_TEST(v.to_number<double>() >= 0.0, path << " should not be negative");
}

// `open` and `closed` hold one integer per entry of the server's table (session_kinds.hpp,
// close_causes.hpp), in its order, and nothing else: a cause that /stats leaves out fails here.
template <class Entry, std::size_t N>
void check_table_keys(const json::object& s, std::string_view object, const Entry (&table)[N],
                      std::string_view Entry::*name) {
    BOOST_TEST_REQUIRE(at_path(s, object).is_object(), object << " should be an object");
    std::vector<std::string> keys, names;
    for (const auto& kv : at_path(s, object).as_object()) keys.emplace_back(kv.key());
    for (const auto& e : table) names.emplace_back(e.*name);
    BOOST_TEST(keys == names, boost::test_tools::per_element());
    for (const auto& n : names) require_integer(s, std::string(object) + "." + n);
}

// `close_causes` is the table itself (close_causes.hpp), entry by entry: the dashboard builds
// its rows from it.
void check_close_cause_table(const json::object& s) {
    BOOST_TEST_REQUIRE(at_path(s, "close_causes").is_array());
    const auto& table = at_path(s, "close_causes").as_array();
    BOOST_TEST_REQUIRE(table.size() == demo::close_cause_count);
    for (std::size_t i = 0; i < table.size(); ++i) {
        const auto& want = demo::close_causes[i];
        BOOST_TEST_REQUIRE(table[i].is_object());
        const auto& got = table[i].as_object();
        const auto text = [&](std::string_view key) -> std::string {
            const auto* v = got.if_contains(key);
            return v != nullptr && v->is_string() ? std::string(v->as_string()) : "<missing>";
        };
        BOOST_TEST(text("name") == want.name);
        BOOST_TEST(text("label") == want.label, want.name);
        BOOST_TEST(text("help") == want.help, want.name);
        const auto* error = got.if_contains("error");
        BOOST_TEST_REQUIRE((error != nullptr && error->is_bool()), want.name << ": no boolean \"error\"");
        BOOST_TEST(error->as_bool() == (want.outcome == demo::close_outcome::error), want.name);
    }
}

// Every key the dashboard, loadgen and docs/demo_server.md rely on, with its type. `threads`: what the
// test asked for with --threads; a run that adds --io-threads (IDLEWHEEL_DEMO_ARGS) gets them as
// --io-threads instead (server_process.hpp), and /stats says so.
void check_shape(const json::object& s, const std::string& mode, unsigned threads) {
    BOOST_TEST_REQUIRE(at_path(s, "timers").is_string());
    BOOST_TEST(std::string(at_path(s, "timers").as_string()) == mode);
    for (const auto* k : {"threads", "io_threads", "shards"}) require_integer(s, k);
    if (integer(s, "io_threads") == 0) {
        BOOST_TEST(integer(s, "threads") == threads);
        BOOST_TEST(integer(s, "shards") == 0);
    } else {
        BOOST_TEST(integer(s, "io_threads") == threads);
        BOOST_TEST(integer(s, "threads") == 0);
        BOOST_TEST(integer(s, "shards") >= 1);
    }
    for (const auto* k : {"tick_ms", "idle_timeout_ms", "uptime_s"}) require_number(s, k);
    for (const auto* k : {"tls", "lame_duck", "draining"}) BOOST_TEST(at_path(s, k).is_bool(), k << " should be a bool");
    BOOST_TEST(!at_path(s, "lame_duck").as_bool());
    BOOST_TEST(!at_path(s, "draining").as_bool());
    for (const auto* k : {"open_connections", "accepted", "refused", "accept_errors", "messages", "bytes", "asio_timer_rearms"})
        require_integer(s, k);
    check_table_keys(s, "open", demo::session_kinds, &demo::session_kind_info::name);
    check_table_keys(s, "closed", demo::close_causes, &demo::close_cause_info::name);
    check_close_cause_table(s);
    for (const auto* k : {"pending", "wakeups", "idle_wakeups", "scheduled", "expired", "cancelled", "reader_idle", "pings_sent",
                          "dead_peers", "handshake_timeouts"})
        require_integer(s, std::string("wheel.") + k);
    require_number(s, "wheel.worst_lateness_us");
    for (const auto* k : {"rss_bytes", "fd_soft_limit", "fd_hard_limit"}) require_integer(s, std::string("process.") + k);
    for (const auto* k : {"cpu_user_s", "cpu_system_s"}) require_number(s, std::string("process.") + k);

    BOOST_TEST(integer(s, "process.rss_bytes") > 0);
    // The server raises its soft descriptor limit to the hard one (the child inherits ours).
    rlimit ours{};
    BOOST_TEST_REQUIRE(getrlimit(RLIMIT_NOFILE, &ours) == 0);
    BOOST_TEST(integer(s, "process.fd_soft_limit") > 0);
    BOOST_TEST(integer(s, "process.fd_soft_limit") <= integer(s, "process.fd_hard_limit"));
    if (ours.rlim_max != RLIM_INFINITY) {
        BOOST_TEST(static_cast<rlim_t>(integer(s, "process.fd_hard_limit")) == ours.rlim_max);
        BOOST_TEST(integer(s, "process.fd_soft_limit") == integer(s, "process.fd_hard_limit"));
    }
}

}  // namespace

// demo_stats: /stats keys, types and counts, its `open` and `closed` exactly the server's tables
// (session_kinds.hpp, close_causes.hpp) and `close_causes` the table itself; --io-threads and --shards
// reported in /stats and /metrics.
BOOST_AUTO_TEST_SUITE(stats, *boost::unit_test::label("io_threads"))

BOOST_DATA_TEST_CASE(document_shape_and_counts, bdata::make(timer_modes), mode) {
    constexpr auto idle = 1s;
    demo_server srv(mode, {"--threads", "2", "--idle-timeout", "1s", "--ping-interval", "0s", "--tick", "10ms"});
    std::int64_t requests = 0;  // /stats requests so far, the current one included
    const auto stats = [&] {
        ++requests;
        return srv.stats();
    };

    const auto s0 = stats();
    check_shape(s0, mode, 2);
    BOOST_TEST(number(s0, "tick_ms") == 10.0);
    BOOST_TEST(number(s0, "idle_timeout_ms") == 1000.0);
    BOOST_TEST(integer(s0, "accepted") == 1);
    BOOST_TEST(integer(s0, "open.http") == 1);  // this request
    BOOST_TEST(integer(s0, "open.tcp") == 0);
    BOOST_TEST(integer(s0, "open.websocket") == 0);
    BOOST_TEST(integer(s0, "open_connections") == 1);
    BOOST_TEST(integer(s0, "bytes") == 0);

    // Three TCP and two WebSocket clients, spread over the two workers.
    std::vector<std::unique_ptr<tcp_client>> tcps;
    std::vector<std::unique_ptr<ws_client>> wss;
    std::int64_t bytes = 0, ws_messages = 0;
    const auto touch_all = [&] {
        for (auto& c : tcps) {
            c->write("abc");
            BOOST_TEST_REQUIRE(c->read_exactly(3) == "abc");
            bytes += 3;
        }
        for (auto& c : wss) {
            c->echo("hello");
            bytes += 5;
            ++ws_messages;
        }
    };
    for (int i = 0; i < 3; ++i) tcps.push_back(std::make_unique<tcp_client>(srv.tcp_endpoint()));
    for (int i = 0; i < 2; ++i) wss.push_back(std::make_unique<ws_client>(srv.http_endpoint()));
    touch_all();

    touch_all();
    // Every earlier /stats connection was answered and closed by this side, but the server may
    // not have seen its end yet (another I/O thread, a loaded machine; CI saw open.http 2 once):
    // read again until only the current request is open (bounded).
    json::object s1;
    BOOST_TEST(wait_until(
                   [&] {
                       s1 = stats();
                       return integer(s1, "open.http") == 1;
                   },
                   3s, 20ms),
               "an earlier /stats connection still open 3 s after its client closed it");
    check_shape(s1, mode, 2);
    BOOST_TEST(integer(s1, "open.tcp") == 3);
    BOOST_TEST(integer(s1, "open.websocket") == 2);
    BOOST_TEST(integer(s1, "open.http") == 1);
    BOOST_TEST(integer(s1, "open_connections") == 6);
    BOOST_TEST(integer(s1, "accepted") == 5 + requests);
    BOOST_TEST(integer(s1, "bytes") == bytes);
    BOOST_TEST(integer(s1, "messages") >= ws_messages + 6);  // TCP: at least one per echo
    BOOST_TEST(integer(s1, "refused") == 0);
    BOOST_TEST(number(s1, "uptime_s") >= number(s0, "uptime_s"));

    if (mode == "wheel") {
        // The wheel holds the open sessions' timeouts (its snapshot refreshes every 250 ms).
        json::object w;
        BOOST_TEST(wait_until(
                       [&] {
                           touch_all();
                           w = stats();
                           return integer(w, "wheel.pending") > 0 && integer(w, "wheel.scheduled") > 0;
                       },
                       3s, 50ms),
                   "wheel.pending stayed 0 with open sessions");
        BOOST_TEST(integer(w, "asio_timer_rearms") == 0);
    } else {
        BOOST_TEST(integer(s1, "asio_timer_rearms") > 0);
        BOOST_TEST(integer(s1, "wheel.pending") == 0, "--timers=asio must leave the wheel unused");
        BOOST_TEST(integer(s1, "wheel.scheduled") == 0);
    }

    // One TCP and one WebSocket client leave politely; the others go silent and get kicked.
    tcps.front()->close();
    tcps.erase(tcps.begin());
    {
        auto& ws = wss.front()->stream();
        error_code ec;
        bool done = false;
        ws.async_close(websocket::close_code::normal, [&](error_code e) {
            ec = e;
            done = true;
        });
        BOOST_TEST(run_until(wss.front()->io(), done, 5s, [&] { wss.front()->drop(); }));
        BOOST_TEST(!ec, ec.message());
        wss.erase(wss.begin());
    }
    const auto silent_from = clock::now();
    touch_all();
    std::vector<std::future<bool>> kicked;
    for (auto& c : tcps) kicked.push_back(std::async(std::launch::async, [&c, idle] { return c->wait_closed(idle + slack + 1s).closed; }));
    for (auto& c : wss)
        kicked.push_back(std::async(std::launch::async, [&c, idle] {
            const auto m = c->read(idle + slack + 1s);
            return m.ec == websocket::error::closed && m.reason.code == websocket::close_code::normal;
        }));
    for (auto& k : kicked) BOOST_TEST(k.get());
    BOOST_TEST(ms(clock::now() - silent_from) >= ms(idle));

    json::object s2;
    BOOST_TEST(wait_until(
        [&] {
            s2 = stats();
            return integer(s2, "open_connections") == 1 && integer(s2, "closed.idle") == 3 &&
                   (mode != "wheel" || integer(s2, "wheel.reader_idle") == 3);
        },
        3s, 50ms));
    check_shape(s2, mode, 2);
    BOOST_TEST(integer(s2, "open.tcp") == 0);
    BOOST_TEST(integer(s2, "open.websocket") == 0);
    BOOST_TEST(integer(s2, "open.http") == 1);
    BOOST_TEST(integer(s2, "accepted") == 5 + requests);
    BOOST_TEST(integer(s2, "closed.idle") == 3);
    // Two clients left politely; so did every earlier /stats request (each has been answered).
    BOOST_TEST(integer(s2, "closed.client_close") >= 2);
    BOOST_TEST(integer(s2, "closed.client_close") <= 2 + requests - 1);
    for (const auto& c : demo::close_causes)  // nothing else closed a session
        if (c.cause != demo::close_cause::idle && c.cause != demo::close_cause::client_close)
            BOOST_TEST(integer(s2, "closed." + std::string(c.name)) == 0, "closed." << c.name);
    BOOST_TEST(integer(s2, "bytes") == bytes);
    if (mode == "wheel") {
        BOOST_TEST(integer(s2, "wheel.expired") > 0);
        BOOST_TEST(integer(s2, "wheel.wakeups") > 0);
        BOOST_TEST(integer(s2, "wheel.reader_idle") == 3);
    } else {
        BOOST_TEST(integer(s2, "wheel.scheduled") == 0);
    }
}

// --io-threads N: one io_context on N threads, --shards S strands (default 4 x N), each with
// its wheel and its share of the sessions. /stats and /metrics say so, and sessions spread over
// the shards are served and kicked when idle, as under --threads.
BOOST_DATA_TEST_CASE(io_threads_and_shards, bdata::make(timer_modes), mode) {
    const std::vector<std::pair<std::vector<std::string>, std::int64_t>> shapes{
        {{"--io-threads", "2", "--shards", "3"}, 3}, {{"--io-threads", "2"}, 8}};
    for (const auto& [args, shards] : shapes) {
        auto all = args;
        all.insert(all.end(), {"--idle-timeout", "1s", "--ping-interval", "0s"});
        demo_server srv(mode, all);
        const auto s0 = srv.stats();
        check_shape(s0, mode, 2);
        BOOST_TEST(integer(s0, "shards") == shards);
        const auto metrics = http_get(srv.http_endpoint(), "/metrics").body;
        BOOST_TEST(metrics.find("\nidlewheel_demo_io_threads 2\n") != std::string::npos, metrics);
        BOOST_TEST(metrics.find("\nidlewheel_demo_shards " + std::to_string(shards) + "\n") != std::string::npos, metrics);
        BOOST_TEST(metrics.find("\nidlewheel_demo_worker_threads 0\n") != std::string::npos, metrics);

        // More clients than shards: all served, and every one kicked once idle.
        std::vector<std::unique_ptr<tcp_client>> tcps;
        std::vector<std::unique_ptr<ws_client>> wss;
        for (int i = 0; i < 5; ++i) tcps.push_back(std::make_unique<tcp_client>(srv.tcp_endpoint()));
        for (int i = 0; i < 5; ++i) wss.push_back(std::make_unique<ws_client>(srv.http_endpoint()));
        for (auto& c : tcps) {
            c->write("abc");
            BOOST_TEST(c->read_exactly(3) == "abc");
        }
        for (auto& c : wss) c->echo("hello");
        const auto s1 = srv.stats();
        BOOST_TEST(integer(s1, "open.tcp") == 5);
        BOOST_TEST(integer(s1, "open.websocket") == 5);
        for (auto& c : tcps) BOOST_TEST(c->wait_closed(1s + slack).closed);
        for (auto& c : wss) BOOST_TEST((c->read(1s + slack).ec == websocket::error::closed));
        BOOST_TEST(wait_until([&] { return integer(srv.stats(), "closed.idle") == 10; }, slack));
    }
}

BOOST_AUTO_TEST_SUITE_END()

// demo_http_routes: /, 404, 405, HEAD, 400 for malformed HTTP.
BOOST_AUTO_TEST_SUITE(http_routes)

BOOST_AUTO_TEST_CASE(dashboard_stats_and_errors) {
    demo_server srv("wheel", {});
    const auto page = http_get(srv.http_endpoint(), "/");
    BOOST_TEST(page.status == 200U);
    BOOST_TEST(page.content_type.find("text/html") == 0U);
    BOOST_TEST(page.body.find("<title>idlewheel demo_server</title>") != std::string::npos);
    BOOST_TEST(page.body.find("id=\"c-tcp\"") != std::string::npos);
    BOOST_TEST(page.body.find("http://") == std::string::npos, "the dashboard must not load anything from elsewhere (no CDN)");
    BOOST_TEST(page.body.find("https://") == std::string::npos, "the dashboard must not load anything from elsewhere (no CDN)");

    const auto stats = http_get(srv.http_endpoint(), "/stats");
    BOOST_TEST(stats.status == 200U);
    BOOST_TEST(stats.content_type == "application/json");

    BOOST_TEST(http_get(srv.http_endpoint(), "/no-such-page").status == 404U);
    BOOST_TEST(http_get(srv.http_endpoint(), "/stats", 5s, http::verb::post).status == 405U);
    const auto head = http_get(srv.http_endpoint(), "/", 5s, http::verb::head);
    BOOST_TEST(head.ec == error_code{}, head.ec.message());
    BOOST_TEST(head.status == 200U);

    // Malformed HTTP: 400 and that connection closed; the server keeps serving.
    tcp_client bad(srv.http_endpoint());
    bad.write("THIS IS NOT HTTP\r\n\r\n");
    const auto r = bad.wait_closed(5s);
    BOOST_TEST(r.closed, r.ec.message());
    BOOST_TEST(r.data.rfind("HTTP/1.1 400", 0) == 0U, "reply: " << r.data);
    BOOST_TEST(http_get(srv.http_endpoint(), "/stats").status == 200U);
    BOOST_TEST(wait_until([&] { return integer(srv.stats(), "closed.bad_request") == 1; }, 3s, 50ms));
}

BOOST_AUTO_TEST_SUITE_END()

// demo_metrics_docs: the families of docs/demo_server.md's /metrics table are exactly those the
// server prints (its `# TYPE` lines), so a gauge added to the server without a row, or a row
// left for a family the server dropped, fails here.
BOOST_AUTO_TEST_SUITE(metrics_docs)

// A table cell's names: every `code` span, `{a,b}` expanded, a label set `{...}` at the end
// dropped, a name written `_rest` completed with the row's first name's prefix up to its
// second underscore (`_connections_refused_total` after `idlewheel_demo_connections_accepted_total`).
std::vector<std::string> cell_names(const std::string& cell) {
    std::vector<std::string> spans;
    for (auto at = cell.find('`'); at != std::string::npos;) {
        const auto end = cell.find('`', at + 1);
        if (end == std::string::npos) break;
        spans.push_back(cell.substr(at + 1, end - at - 1));
        at = cell.find('`', end + 1);
    }
    std::vector<std::string> names;
    std::string prefix;
    for (auto span : spans) {
        // A trailing label set: `{` whose closing `}` ends the span and which holds no comma, or an `=`.
        if (const auto open = span.rfind('{'); open != std::string::npos && span.back() == '}') {
            const auto inside = span.substr(open + 1, span.size() - open - 2);
            if (inside.find(',') == std::string::npos || inside.find('=') != std::string::npos) span.erase(open);
        }
        std::vector<std::string> expanded{span};
        if (const auto open = span.find('{'); open != std::string::npos) {
            const auto close = span.find('}', open);
            expanded.clear();
            std::istringstream parts(span.substr(open + 1, close - open - 1));
            for (std::string part; std::getline(parts, part, ',');)
                expanded.push_back(span.substr(0, open) + part + span.substr(close + 1));
        }
        for (auto& n : expanded) {
            if (n.front() == '_') n = prefix + n.substr(1);
            if (prefix.empty()) {
                const auto second = n.find('_', n.find('_') + 1);
                prefix = n.substr(0, second == std::string::npos ? 0 : second + 1);
            }
            names.push_back(n);
        }
    }
    return names;
}

BOOST_AUTO_TEST_CASE(table_lists_every_family_the_server_prints) {
    std::ifstream file(IDLEWHEEL_DEMO_DOCS);
    BOOST_TEST_REQUIRE(file.good(), "cannot read " IDLEWHEEL_DEMO_DOCS);
    const std::string docs{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    const auto section = docs.find("## `GET /metrics`");
    BOOST_TEST_REQUIRE(section != std::string::npos, "no /metrics section in docs/demo_server.md");
    std::set<std::string> documented;
    std::istringstream lines(docs.substr(section));
    bool in_table = false;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("| ", 0) != 0) {
            if (in_table) break;  // the first table of the section ends
            continue;
        }
        in_table = true;
        if (line.rfind("| family", 0) == 0 || line.rfind("| ---", 0) == 0) continue;
        const auto cell = line.substr(2, line.find(" | ") - 2);
        for (const auto& n : cell_names(cell)) documented.insert(n);
    }
    BOOST_TEST_REQUIRE(documented.size() >= 30U, "read only " << documented.size() << " families from the table");

    demo_server srv("wheel", {"--idle-timeout", "60s", "--ping-interval", "0s"});
    const auto page = http_get(srv.http_endpoint(), "/metrics").body;
    std::set<std::string> printed;
    std::istringstream plines(page);
    for (std::string line; std::getline(plines, line);)
        if (line.rfind("# TYPE ", 0) == 0) printed.insert(line.substr(7, line.find(' ', 7) - 7));
    BOOST_TEST_REQUIRE(!printed.empty(), page);
    for (const auto& f : printed) BOOST_TEST(documented.count(f) == 1U, "/metrics prints " << f << ", the docs' table has no row for it");
    for (const auto& f : documented) BOOST_TEST(printed.count(f) == 1U, "the docs' table lists " << f << ", /metrics does not print it");
}

BOOST_AUTO_TEST_SUITE_END()
