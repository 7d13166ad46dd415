// The real demo_server for the bad-client suite: started as a child process (tests/demo_server/functional's
// server_process, used read-only), read through /stats and /proc, and checked with control
// clients that must keep being served whatever the bad client did.
//
// The binary's path is the first argument after "--" (ctest passes $<TARGET_FILE:demo_server>)
// or the DEMO_SERVER environment variable.
//
// Timing rule: lower bounds are strict (the client starts its clock no later than the server
// can start its own); upper bounds are generous, because a loaded 2-core machine may delay any
// wake-up by hundreds of milliseconds.
#ifndef IDLEWHEEL_TESTS_RELIABILITY_SERVER_FIXTURE_HPP
#define IDLEWHEEL_TESTS_RELIABILITY_SERVER_FIXTURE_HPP

#include "../functional/server_process.hpp"
#include "beast_client.hpp"
#include "raw_socket.hpp"

#include <boost/json.hpp>
#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace reliability {

namespace json = boost::json;

/// Upper-bound allowance for a timed event on a loaded machine: how late an event may be seen
/// depends on the machine's speed, so this bound is sized for the slowest case the test command
/// runs (an ASan/UBSan build on a fully loaded 2-core machine) and is the same in every build.
/// Lower bounds ("never early") are the contract and take no allowance for speed: where the
/// client cannot observe the moment the contract counts from, they are checked on what the
/// server reports (test_close_paths.cpp, expect_dropped_on_time).
inline constexpr auto slack = 2500ms;

// The tests and demo_server are built with the same sanitizer flags (IDLEWHEEL_SANITIZE). Under
// ASan freed memory waits in a quarantine, under TSan every allocation has shadow memory: the
// RSS bounds below measure the sanitizer there, not the server, and are not checked.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool rss_is_meaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool rss_is_meaningful = false;
#else
inline constexpr bool rss_is_meaningful = true;
#endif
#else
inline constexpr bool rss_is_meaningful = true;
#endif

inline std::string demo_binary() {
    const auto& suite = boost::unit_test::framework::master_test_suite();
    if (suite.argc > 1) return suite.argv[1];
    if (const char* env = std::getenv("DEMO_SERVER")) return env;
    throw std::runtime_error("pass the demo_server binary after --, or set DEMO_SERVER");
}

/// The timer mode every server of this run uses: IDLEWHEEL_DEMO_TIMERS (wheel, asio or none;
/// default wheel). ctest runs each suite in wheel and asio mode, and in none where no timer is
/// involved.
inline std::string timers_mode() {
    const char* env = std::getenv("IDLEWHEEL_DEMO_TIMERS");
    const std::string mode = env != nullptr && *env != '\0' ? env : "wheel";
    if (mode != "wheel" && mode != "asio" && mode != "none")
        throw std::runtime_error("IDLEWHEEL_DEMO_TIMERS must be wheel, asio or none, not '" + mode + "'");
    return mode;
}

/// `args` with the run's timer mode in front and the run's extra arguments (IDLEWHEEL_DEMO_ARGS,
/// e.g. "--io-threads 2": see demo_test::with_run_args) after them.
inline std::vector<std::string> with_timers(std::vector<std::string> args) {
    args.insert(args.begin(), "--timers=" + timers_mode());
    return demo_test::with_run_args(std::move(args));
}

/// Polls `condition` every `period` until it holds or `timeout` passes; its last value.
inline bool wait_until(const std::function<bool()>& condition, clock::duration timeout, clock::duration period = 20ms) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        if (condition()) return true;
        if (clock::now() >= deadline) return false;
        std::this_thread::sleep_for(period);
    }
}

/// One HTTP exchange on a fresh connection: sends `request` as is, returns everything the
/// server sent until it closed (or `timeout`), and how it ended.
struct http_exchange {
    std::string response;
    io_status end = io_status::timeout;
};
inline http_exchange raw_http(const std::string& host, unsigned short port, std::string_view request, clock::duration timeout = 5s) {
    http_exchange r;
    const auto deadline = clock::now() + timeout;
    auto s = raw_socket::connect(host, port, timeout);
    const auto sent = s.send_all(request, deadline);
    if (sent != io_status::ok) {
        r.end = sent;
        return r;
    }
    for (;;) {
        r.end = s.recv_some(r.response, deadline);
        if (r.end != io_status::ok) return r;
    }
}

/// A /stats document with dotted-path access ("closed.idle").
class stats_doc {
public:
    explicit stats_doc(json::object o) : doc_(std::move(o)) {}

    [[nodiscard]] double number(std::string_view path) const {
        const auto& v = at(path);
        if (v.is_int64()) return static_cast<double>(v.as_int64());
        if (v.is_uint64()) return static_cast<double>(v.as_uint64());
        if (v.is_double()) return v.as_double();
        throw std::runtime_error("/stats: '" + std::string(path) + "' is not a number");
    }
    [[nodiscard]] std::int64_t integer(std::string_view path) const {
        const auto& v = at(path);
        if (v.is_int64()) return v.as_int64();
        if (v.is_uint64()) return static_cast<std::int64_t>(v.as_uint64());
        throw std::runtime_error("/stats: '" + std::string(path) + "' is not an integer");
    }
    [[nodiscard]] bool boolean(std::string_view path) const {
        const auto& v = at(path);
        if (!v.is_bool()) throw std::runtime_error("/stats: '" + std::string(path) + "' is not a boolean");
        return v.as_bool();
    }
    /// Every closed.* counter added up.
    [[nodiscard]] std::int64_t closed_total() const {
        std::int64_t sum = 0;
        for (const auto& kv : at("closed").as_object()) sum += kv.value().is_int64() ? kv.value().as_int64() : static_cast<std::int64_t>(kv.value().as_uint64());
        return sum;
    }
    [[nodiscard]] std::string text() const { return json::serialize(doc_); }

private:
    [[nodiscard]] const json::value& at(std::string_view path) const {
        const json::object* o = &doc_;
        for (;;) {
            const auto dot = path.find('.');
            const auto* v = o->if_contains(path.substr(0, dot));
            if (v == nullptr) throw std::runtime_error("/stats has no '" + std::string(path) + "'");
            if (dot == std::string_view::npos) return *v;
            o = &v->as_object();
            path.remove_prefix(dot + 1);
        }
    }
    json::object doc_;
};

inline bool current_test_passing() {
    const auto id = boost::unit_test::framework::current_test_case().p_id;
    return boost::unit_test::results_collector.results(id).passed();
}

/// demo_server (optionally behind a launcher such as prlimit). Its stderr goes to the test
/// output if the test failed.
class server : public demo_test::server_process {
public:
    explicit server(std::vector<std::string> args) : server_process(demo_binary(), with_timers(std::move(args))) {}
    /// `launcher` runs the server: launcher[0] is the launcher's path, the rest its arguments;
    /// the demo_server binary and `args` follow.
    server(std::vector<std::string> launcher, std::vector<std::string> args)
        : server_process(launcher.at(0), behind(launcher, with_timers(std::move(args)))) {}
    server(const server&) = delete;
    server& operator=(const server&) = delete;
    ~server() {
        if (!current_test_passing())
            std::cerr << "---- demo_server --timers=" << timers_mode() << " IDLEWHEEL_DEMO_ARGS='"
                      << (std::getenv("IDLEWHEEL_DEMO_ARGS") != nullptr ? std::getenv("IDLEWHEEL_DEMO_ARGS") : "") << "' ("
                      << listening_line() << ") stderr:\n" << log() << "----\n";
    }

    /// GET /stats. Throws std::runtime_error if the server does not answer 200 with JSON.
    [[nodiscard]] stats_doc stats(clock::duration timeout = 5s) const {
        const auto r = raw_http(host(), http_port(), "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout);
        const auto body = r.response.find("\r\n\r\n");
        if (r.response.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos)
            throw std::runtime_error("GET /stats failed (" + std::string(to_string(r.end)) + "): '" + r.response + "'");
        boost::system::error_code ec;
        auto v = json::parse(r.response.substr(body + 4), ec);
        if (ec || !v.is_object()) throw std::runtime_error("GET /stats: not a JSON object: " + r.response);
        return stats_doc(std::move(v.as_object()));
    }

    /// User + system CPU seconds of the process, from /proc (works when /stats cannot be
    /// reached, e.g. while the server is out of descriptors or connection slots).
    [[nodiscard]] double cpu_seconds() const {
        std::ifstream in("/proc/" + std::to_string(pid()) + "/stat");
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close_paren = all.rfind(')');  // the command name may hold spaces
        if (close_paren == std::string::npos) throw std::runtime_error("cannot read /proc/<pid>/stat");
        std::istringstream fields(all.substr(close_paren + 2));
        std::string f;
        unsigned long long utime = 0, stime = 0;
        // Fields from 3 (state) on; utime and stime are 14 and 15.
        for (int i = 3; i <= 15 && fields >> f; ++i) {
            if (i == 14) utime = std::stoull(f);
            if (i == 15) stime = std::stoull(f);
        }
        return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    }

    /// A TCP echo round trip and a WebSocket (Beast) echo round trip on fresh connections;
    /// an empty string if both worked, else what failed.
    [[nodiscard]] std::string control_check(clock::duration timeout = 5s) const {
        std::string failures;
        try {
            auto s = raw_socket::connect(host(), tcp_port(), timeout);
            const std::string ping = "control ping\n";
            std::string got;
            const auto deadline = clock::now() + timeout;
            if (s.send_all(ping, deadline) != io_status::ok) failures += "tcp send failed; ";
            const auto st = s.recv_at_least(got, ping.size(), deadline);
            if (st != io_status::ok || got != ping) failures += std::string("tcp echo: ") + to_string(st) + " '" + got + "'; ";
        } catch (const std::exception& e) {
            failures += std::string("tcp: ") + e.what() + "; ";
        }
        beast_ws_client ws;
        if (auto ec = ws.connect(host(), http_port(), timeout))
            failures += "websocket connect: " + ec.message() + "; ";
        else if (auto e2 = ws.echo("control message", timeout))
            failures += "websocket echo: " + e2.message() + "; ";
        else
            ws.close(timeout);
        return failures;
    }

private:
    static std::vector<std::string> behind(const std::vector<std::string>& launcher, std::vector<std::string> args) {
        std::vector<std::string> all(launcher.begin() + 1, launcher.end());
        all.push_back(demo_binary());
        all.insert(all.end(), args.begin(), args.end());
        return all;
    }
};

/// The control clients must be served; reported with `when` in the failure message.
#define RELIABILITY_EXPECT_SERVING(srv, when)                                   \
    do {                                                                        \
        const std::string control_failures_ = (srv).control_check();            \
        BOOST_TEST(control_failures_.empty(), (when) << ": " << control_failures_); \
    } while (false)

}  // namespace reliability

#endif
