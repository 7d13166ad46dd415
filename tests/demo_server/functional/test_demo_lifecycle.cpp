// The process as a whole: the command line (--help, bad values exit 2 with a clear message)
// and an orderly stop on SIGTERM / SIGINT (WebSocket close 1001, TCP EOF, exit 0 in bounded
// time, even with a client that never answers the close handshake).
#include "demo_fixture.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <ostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace bdata = boost::unit_test::data;
using namespace demo_test;

// demo_sigterm: SIGTERM: WebSocket clients get 1001 (also while upgrades are in flight), TCP clients EOF,
// exit 0 in bounded time.
BOOST_AUTO_TEST_SUITE(sigterm, *boost::unit_test::label("io_threads"))

BOOST_DATA_TEST_CASE(websocket_clients_get_1001_and_exit_is_zero, bdata::make(timer_modes), mode) {
    constexpr auto close_timeout = 500ms;
    demo_server srv(mode, {"--close-timeout", "500ms", "--threads", "2"});
    std::vector<std::unique_ptr<ws_client>> ws;
    for (int i = 0; i < 3; ++i) {
        ws.push_back(std::make_unique<ws_client>(srv.http_endpoint()));
        ws.back()->echo("before " + std::to_string(i));
    }
    ws_client mute(srv.http_endpoint());  // never reads again: never answers the close frame
    mute.echo("then silence");
    std::vector<std::unique_ptr<tcp_client>> tcps;
    for (int i = 0; i < 2; ++i) {
        tcps.push_back(std::make_unique<tcp_client>(srv.tcp_endpoint()));
        tcps.back()->write("x");
        BOOST_TEST_REQUIRE(tcps.back()->read_exactly(1) == "x");
    }

    std::vector<std::future<ws_client::message>> ws_reads;
    for (auto& c : ws) ws_reads.push_back(std::async(std::launch::async, [&c] { return c->read(10s); }));
    std::vector<std::future<close_result>> tcp_reads;
    for (auto& c : tcps) tcp_reads.push_back(std::async(std::launch::async, [&c] { return c->wait_closed(10s); }));
    auto mute_read = std::async(std::launch::async, [&] { return read_until_closed(mute.io(), mute.stream().next_layer(), 10s); });

    const auto t0 = clock::now();
    srv.signal(SIGTERM);
    const auto code = srv.wait_exit(5s);
    const auto exited_after = clock::now() - t0;
    BOOST_TEST_REQUIRE(code.has_value(), "demo_server still running 5 s after SIGTERM");
    BOOST_TEST(*code == 0, "exit status " << *code);
    // The mute client holds the stop up for --close-timeout, then it is dropped.
    BOOST_TEST(ms(exited_after) <= ms(close_timeout + 500ms + slack));

    for (auto& f : ws_reads) {
        const auto m = get_within(f, 10s);
        BOOST_TEST((m.ec == websocket::error::closed), m.ec.message());
        BOOST_TEST(m.reason.code == websocket::close_code::going_away, "close code " << m.reason.code);
    }
    for (auto& f : tcp_reads) {
        const auto r = get_within(f, 10s);
        BOOST_TEST(r.closed, r.ec.message());
    }
    // The mute client got the close frame 1001 (bytes 88 xx 03 e9 ...) and then the end.
    const auto mr = get_within(mute_read, 10s);
    BOOST_TEST(mr.closed, mr.ec.message());
    BOOST_TEST_REQUIRE(mr.data.size() >= 4U);
    BOOST_TEST(static_cast<unsigned char>(mr.data[0]) == 0x88U, "expected a close frame first");
    BOOST_TEST((mr.data.substr(2, 2) == std::string("\x03\xe9", 2)), "expected close code 1001");

    BOOST_TEST(srv.log().find("stopped") != std::string::npos);
}

// SIGTERM while WebSocket upgrades are in flight (Beast forbids a close before the accept has
// completed): still exit 0, and every client whose upgrade succeeded gets 1001.
BOOST_DATA_TEST_CASE(sigterm_during_upgrades_exits_zero, bdata::make(timer_modes), mode) {
    demo_server srv(mode, {"--close-timeout", "1s"});
    constexpr int threads = 4;
    constexpr std::size_t kept_per_thread = 10;  // older clients leave: upgrades keep coming, descriptors stay few
    std::atomic<bool> stop{false};
    std::atomic<int> upgraded{0}, kept{0}, got_1001{0};
    std::mutex m;
    std::vector<std::string> failures;
    std::vector<std::thread> clients;
    for (int t = 0; t < threads; ++t) {
        clients.emplace_back([&] {
            std::vector<std::unique_ptr<ws_client>> mine;
            while (!stop) {
                auto c = std::make_unique<ws_client>();
                try {
                    c->connect(srv.http_endpoint(), 3s);
                } catch (const std::exception&) {
                    break;  // the server stopped accepting or dropped a half-done upgrade
                }
                ++upgraded;
                mine.push_back(std::move(c));
                if (mine.size() > kept_per_thread) {
                    mine.front()->drop();
                    mine.erase(mine.begin());
                }
            }
            kept += static_cast<int>(mine.size());
            for (auto& c : mine) {
                const auto r = c->read(8s);
                if ((r.ec == websocket::error::closed) && r.reason.code == websocket::close_code::going_away) {
                    ++got_1001;
                } else {
                    std::lock_guard lock(m);
                    failures.push_back("a client got " + r.ec.message() + " / close code " + std::to_string(r.reason.code));
                }
            }
        });
    }
    BOOST_TEST(wait_until([&] { return upgraded.load() >= 40; }, 10s), "only " << upgraded.load() << " upgrades");
    srv.signal(SIGTERM);
    const auto code = srv.wait_exit(8s);
    stop = true;
    for (auto& t : clients) t.join();
    BOOST_TEST_REQUIRE(code.has_value(), "demo_server still running 8 s after SIGTERM");
    BOOST_TEST(*code == 0, "exit status " << *code);
    BOOST_TEST(failures.empty(), failures.size() << " upgraded clients did not get 1001, the first: " << (failures.empty() ? "" : failures.front()));
    BOOST_TEST(got_1001.load() == kept.load());
}

BOOST_AUTO_TEST_CASE(sigint_with_no_clients_exits_zero_at_once) {
    demo_server srv("wheel", {});
    srv.signal(SIGINT);
    const auto code = srv.wait_exit(5s);
    BOOST_TEST_REQUIRE(code.has_value());
    BOOST_TEST(*code == 0);
}

// After SIGTERM nothing new is accepted.
BOOST_AUTO_TEST_CASE(no_new_connections_after_sigterm) {
    demo_server srv("wheel", {"--close-timeout", "2s"});
    ws_client mute(srv.http_endpoint());  // keeps the server in its stopping phase for a while
    srv.signal(SIGTERM);
    BOOST_TEST(wait_until([&] { return srv.log().find("stopping") != std::string::npos; }, 5s));
    tcp_client late;
    bool refused = false;
    try {
        late.connect(srv.tcp_endpoint(), 2s);
        refused = late.wait_closed(3s).closed;
    } catch (const boost::system::system_error& e) {
        refused = e.code() == asio::error::connection_refused;
    }
    BOOST_TEST(refused, "a connection after SIGTERM should be refused or closed");
    const auto code = srv.wait_exit(5s);
    BOOST_TEST_REQUIRE(code.has_value());
    BOOST_TEST(*code == 0);
}

// --lame-duck: from SIGTERM on /healthz answers 503, and for the delay nothing else changes: a
// new WebSocket client is upgraded and echoed, a new raw-TCP client too, a client already open
// keeps being echoed, /stats says "lame_duck": true and not draining, /metrics
// idlewheel_demo_lame_duck 1 and idlewheel_demo_draining 0. Then the drain: 1001 for the WebSocket
// clients (never before the delay), and exit 0.
BOOST_DATA_TEST_CASE(lame_duck_answers_503_and_serves_until_the_drain, bdata::make(timer_modes), mode) {
    constexpr auto lame_duck = 3s;
    demo_server srv(mode, {"--lame-duck", "3s", "--close-timeout", "1s", "--idle-timeout", "60s", "--ping-interval", "0s"});
    ws_client before(srv.http_endpoint());
    before.echo("before the signal");
    BOOST_TEST(http_get(srv.http_endpoint(), "/healthz").status == 200U);
    const auto t0 = clock::now();
    srv.signal(SIGTERM);
    BOOST_TEST_REQUIRE(wait_until([&] { return http_get(srv.http_endpoint(), "/healthz").status == 503U; }, 2s),
                       "/healthz still 200 after SIGTERM");
    ws_client during(srv.http_endpoint());  // a new upgrade is accepted, and served
    during.echo("during the lame duck");
    before.echo("still served");
    tcp_client tcp(srv.tcp_endpoint());
    tcp.write("tcp during the lame duck\n");
    BOOST_TEST(tcp.read_exactly(24) == "tcp during the lame duck");
    const auto stats = fetch_stats(srv.http_endpoint());
    BOOST_TEST(!stats.at("draining").as_bool(), "/stats says draining during the lame duck");
    BOOST_TEST(stats.at("lame_duck").as_bool(), "/stats does not say lame_duck during the lame duck");
    const auto metrics = http_get(srv.http_endpoint(), "/metrics").body;
    BOOST_TEST(metrics.find("\nidlewheel_demo_lame_duck 1\n") != std::string::npos, metrics);
    BOOST_TEST(metrics.find("\nidlewheel_demo_draining 0\n") != std::string::npos, metrics);
    const auto checked = clock::now() - t0;
    BOOST_TEST_MESSAGE("served during the lame duck until " << ms(checked) << " ms after SIGTERM");
    BOOST_TEST(ms(checked) < ms(lame_duck), "the checks took longer than the lame-duck delay: they prove nothing");
    auto first = std::async(std::launch::async, [&] { return before.read(lame_duck + 10s); });
    auto second = std::async(std::launch::async, [&] { return during.read(lame_duck + 10s); });
    for (auto* f : {&first, &second}) {
        const auto m = get_within(*f, lame_duck + 15s);
        BOOST_TEST((m.ec == websocket::error::closed), m.ec.message());
        BOOST_TEST(m.reason.code == websocket::close_code::going_away, "close code " << m.reason.code);
    }
    BOOST_TEST(ms(clock::now() - t0) >= ms(lame_duck) - 20, "the drain began before --lame-duck");
    tcp.wait_closed(5s);
    const auto code = srv.wait_exit(10s);
    BOOST_TEST_REQUIRE(code.has_value(), "still running 10 s after the drain");
    BOOST_TEST(*code == 0);
}

BOOST_AUTO_TEST_SUITE_END()

// demo_command_line: --help exits 0 and every option it lists is documented in docs/demo_server.md; bad
// values exit 2 with a message naming the option (--threads with --io-threads, --shards without it); --tls
// files; --reuse-port.
BOOST_AUTO_TEST_SUITE(command_line)

// The options --help lists: program_options' lines "  --name ..." and "  -x [ --name ] ...".
std::vector<std::string> help_options(const std::string& help) {
    std::vector<std::string> options;
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
        const auto start = line.find_first_not_of(' ');
        if (start == 0 || start == std::string::npos) continue;  // option lines are indented
        auto rest = std::string_view(line).substr(start);
        if (rest.size() > 7 && rest[1] != '-' && rest.substr(2, 5) == " [ --") rest.remove_prefix(5);  // -h [ --help ]
        if (rest.substr(0, 2) != "--") continue;
        options.emplace_back(rest.substr(0, rest.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-", 2)));
    }
    return options;
}

// docs/demo_server.md mentions `name` as an option: "--name" not followed by more of a name.
bool documented(const std::string& docs, const std::string& name) {
    for (auto at = docs.find(name); at != std::string::npos; at = docs.find(name, at + 1)) {
        const auto next = at + name.size();
        if (next == docs.size() || (std::isalnum(static_cast<unsigned char>(docs[next])) == 0 && docs[next] != '-'))
            return true;
    }
    return false;
}

// --help exits 0 without starting the server, and every option it lists is documented in
// docs/demo_server.md (the test holds no list of options: --help is the list).
BOOST_AUTO_TEST_CASE(help_prints_usage_and_exits_zero) {
    const auto r = server_process::run(demo_binary(), {"--help"});
    BOOST_TEST_REQUIRE(r.exit_code.has_value());
    BOOST_TEST(*r.exit_code == 0);
    BOOST_TEST(r.out.find("listening") == std::string::npos, "--help must not start the server");
    const auto options = help_options(r.out);
    BOOST_TEST_REQUIRE(options.size() >= 20U, "--help lists only " << options.size() << " options:\n" << r.out);
    BOOST_TEST((std::find(options.begin(), options.end(), "--timers") != options.end()), r.out);
    std::ifstream file(IDLEWHEEL_DEMO_DOCS);
    BOOST_TEST_REQUIRE(file.good(), "cannot read " IDLEWHEEL_DEMO_DOCS);
    const std::string docs{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    for (const auto& option : options)
        BOOST_TEST(documented(docs, option), "--help lists " << option << ", docs/demo_server.md does not");
}

struct bad_case {
    std::vector<std::string> args;
    std::vector<std::string> message_mentions;  // the stderr message must name these
};

std::ostream& operator<<(std::ostream& os, const bad_case& c) {
    for (const auto& a : c.args) os << a << ' ';
    return os;
}

const std::vector<bad_case> bad_cases{
    {{"--idle-timeout", "5parsecs"}, {"--idle-timeout", "5parsecs"}},
    {{"--timers=foo"}, {"--timers", "foo"}},
    {{"--threads", "0"}, {"--threads"}},
    {{"--threads", "2", "--io-threads", "2"}, {"--threads", "--io-threads", "exclusive"}},
    {{"--io-threads", "65"}, {"--io-threads"}},
    {{"--shards", "4"}, {"--shards", "--io-threads"}},
    {{"--io-threads", "2", "--shards", "0"}, {"--shards"}},
    {{"--ping-interval", "-1s"}, {"--ping-interval"}},
    {{"--tcp-port", "70000"}, {"--tcp-port"}},
    {{"--tcp-echo", "words"}, {"--tcp-echo", "words"}},
    {{"--no-such-option"}, {"no-such-option"}},
    {{"--max-lifetime", "-1s"}, {"--max-lifetime"}},
    {{"--lame-duck", "-1s"}, {"--lame-duck"}},
    {{"--max-lifetime-jitter", "-1s"}, {"--max-lifetime-jitter"}},
    {{"--max-backlog", "1000", "--max-backlog-total", "10"}, {"--max-backlog-total"}},
    {{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, {"--tls-cert", "need --tls"}},
    {{"--tls", "--tls-cert", "c.pem"}, {"--tls-cert", "--tls-key"}},
    {{"--tls", "--tls-key", "k.pem"}, {"--tls-cert", "--tls-key"}},
};

// The output of a shell command (popen), for openssl at test time.
std::string command_output(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    BOOST_TEST_REQUIRE(p != nullptr);
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    BOOST_TEST_REQUIRE(::pclose(p) == 0, "failed: " << command);
    return out;
}

// --tls with --tls-cert/--tls-key: a certificate made here with Debian's openssl is the one
// the server says it uses (its fingerprint); a file that is not there, or a key that is not
// the certificate's, stops the start with exit 1 and a message naming the file.
BOOST_AUTO_TEST_CASE(tls_certificate_files_are_used_or_refused_clearly) {
    char dir_template[] = "/tmp/idlewheel-tls-XXXXXX";
    const char* dir = ::mkdtemp(dir_template);
    BOOST_TEST_REQUIRE(dir != nullptr);
    const std::string d = dir, cert = d + "/cert.pem", key = d + "/key.pem", other_key = d + "/other.pem";
    command_output("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost -keyout " +
                   key + " -out " + cert + " 2>/dev/null");
    command_output("openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 -out " + other_key + " 2>/dev/null");
    std::string fingerprint = command_output("openssl x509 -noout -fingerprint -sha256 -in " + cert);
    fingerprint = fingerprint.substr(fingerprint.find('=') + 1);
    fingerprint.erase(fingerprint.find_last_not_of("\r\n") + 1);
    {
        demo_server srv("wheel", {"--tls", "--tls-cert", cert, "--tls-key", key});
        // The start-up lines follow the listening line: wait (bounded) for the TLS one.
        for (int i = 0; i < 100 && srv.log().find("SHA-256") == std::string::npos; ++i)
            std::this_thread::sleep_for(50ms);
        BOOST_TEST(srv.log().find("certificate " + cert + ", SHA-256 fingerprint " + fingerprint) != std::string::npos,
                   srv.log());
        BOOST_TEST(srv.log().find("https://") != std::string::npos, srv.log());
    }
    const auto missing = server_process::run(demo_binary(), {"--tls", "--tls-cert", d + "/none.pem", "--tls-key", key}, 10s);
    BOOST_TEST_REQUIRE(missing.exit_code.has_value());
    BOOST_TEST(*missing.exit_code == 1, missing.err);
    BOOST_TEST(missing.err.find("cannot load the certificate chain " + d + "/none.pem") != std::string::npos, missing.err);
    const auto mismatch = server_process::run(demo_binary(), {"--tls", "--tls-cert", cert, "--tls-key", other_key}, 10s);
    BOOST_TEST_REQUIRE(mismatch.exit_code.has_value());
    BOOST_TEST(*mismatch.exit_code == 1, mismatch.err);
    BOOST_TEST(mismatch.err.find(other_key) != std::string::npos, mismatch.err);
    BOOST_TEST(mismatch.out.find("listening") == std::string::npos, mismatch.out);
    for (const auto& f : {cert, key, other_key}) std::remove(f.c_str());
    ::rmdir(dir);
}

// --reuse-port: a second server started with it binds the same two ports and serves; without
// it the same bind fails (so the option is what makes the difference).
BOOST_AUTO_TEST_CASE(reuse_port_lets_two_servers_share_the_ports) {
    demo_server first("wheel", {"--reuse-port"});
    const auto tcp_port = std::to_string(first.tcp_port()), http_port = std::to_string(first.http_port());

    const auto refused = server_process::run(demo_binary(), {"--tcp-port", tcp_port, "--http-port", http_port}, 10s);
    BOOST_TEST_REQUIRE(refused.exit_code.has_value());
    BOOST_TEST(*refused.exit_code == 1, "without --reuse-port the second bind must fail; stderr: " << refused.err);
    BOOST_TEST(refused.out.find("listening") == std::string::npos);

    demo_server second("asio", {"--reuse-port", "--tcp-port", tcp_port, "--http-port", http_port});
    BOOST_TEST(second.tcp_port() == first.tcp_port());
    BOOST_TEST(second.http_port() == first.http_port());
    // Connections on the shared ports are served (by whichever process the kernel picks) ...
    for (int i = 0; i < 4; ++i) {
        tcp_client c(first.tcp_endpoint());
        c.write("shared");
        BOOST_TEST(c.read_exactly(6) == "shared");
    }
    // ... and the second process really listens: with the first one gone, it serves alone.
    first.signal(SIGTERM);
    const auto code = first.wait_exit(5s);
    BOOST_TEST_REQUIRE(code.has_value());
    BOOST_TEST(*code == 0);
    for (int i = 0; i < 4; ++i) {
        tcp_client c(second.tcp_endpoint());
        c.write("second");
        BOOST_TEST(c.read_exactly(6) == "second");
    }
    BOOST_TEST(integer(second.stats(), "accepted") >= 4);
}

BOOST_DATA_TEST_CASE(bad_value_exits_2_with_clear_message, bdata::make(bad_cases), c) {
    const auto r = server_process::run(demo_binary(), c.args);
    BOOST_TEST_REQUIRE(r.exit_code.has_value());
    BOOST_TEST(*r.exit_code == 2, "exit status for " << c << "; stderr: " << r.err);
    BOOST_TEST(r.out.empty(), "nothing on stdout (no listening line), got: " << r.out);
    for (const auto& word : c.message_mentions) BOOST_TEST(r.err.find(word) != std::string::npos, "stderr should mention '" << word << "': " << r.err);
    BOOST_TEST(r.err.find("--help") != std::string::npos, "stderr should point to --help: " << r.err);
}

BOOST_AUTO_TEST_SUITE_END()
