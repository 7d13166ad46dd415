// Boost.Test glue for demo_server's black-box tests: where the binary is, the timer modes every
// behaviour is checked in, and a server that prints its log when the test using it failed.
//
// The binary's path is the first argument after "--" on the test's command line (ctest passes
// $<TARGET_FILE:demo_server>), or the DEMO_SERVER environment variable.
//
// Timing rule of these tests: lower bounds are strict (a kick never comes before its time,
// measured from a moment the server cannot have started its clock earlier than); upper bounds
// are generous (`slack`), because a loaded 2-core CI machine, or a sanitizer build, may delay
// any wake-up by hundreds of milliseconds.
#ifndef IDLEWHEEL_TESTS_DEMO_FIXTURE_HPP
#define IDLEWHEEL_TESTS_DEMO_FIXTURE_HPP

#include "loopback_clients.hpp"
#include "server_process.hpp"

#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdlib>
#include <future>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace demo_test {

/// Upper-bound allowance for a timed event: scheduling delay, load, sanitizers.
inline constexpr auto slack = std::chrono::milliseconds(1200);

/// Both ways demo_server keeps time; BOOST_DATA_TEST_CASE(..., boost::unit_test::data::make(timer_modes), mode).
inline const std::vector<std::string> timer_modes{"wheel", "asio"};
/// The two above plus --timers=none (no liveness at all), for behaviour that must not depend on
/// timers: echo, limits, close outcomes.
inline const std::vector<std::string> all_timer_modes{"wheel", "asio", "none"};

inline std::string demo_binary() {
    const auto& suite = boost::unit_test::framework::master_test_suite();
    if (suite.argc > 1) return suite.argv[1];
    if (const char* env = std::getenv("DEMO_SERVER")) return env;
    throw std::runtime_error("pass the demo_server binary after --, or set DEMO_SERVER");
}

inline bool current_test_passing() {
    const auto id = boost::unit_test::framework::current_test_case().p_id;
    return boost::unit_test::results_collector.results(id).passed();
}

/// demo_server on loopback, ports 0, `--timers=<mode>` plus `args`. Its stderr goes to the
/// test output if the test fails.
class demo_server : public server_process {
public:
    demo_server(const std::string& mode, std::vector<std::string> args) : server_process(demo_binary(), with_mode(mode, std::move(args))) {}
    demo_server(const demo_server&) = delete;
    demo_server& operator=(const demo_server&) = delete;
    ~demo_server() {
        if (!current_test_passing()) std::cerr << "---- demo_server (" << listening_line() << ") stderr:\n" << log() << "----\n";
    }

    [[nodiscard]] tcp::endpoint tcp_endpoint() const { return {asio::ip::make_address(host()), tcp_port()}; }
    [[nodiscard]] tcp::endpoint http_endpoint() const { return {asio::ip::make_address(host()), http_port()}; }
    [[nodiscard]] json::object stats() const { return fetch_stats(http_endpoint()); }

private:
    // The mode first, then the test's arguments and the run's (IDLEWHEEL_DEMO_ARGS, server_process.hpp).
    static std::vector<std::string> with_mode(const std::string& mode, std::vector<std::string> args) {
        args.insert(args.begin(), "--timers=" + mode);
        return with_run_args(std::move(args));
    }
};

/// The value of `f`, a client thread's result, waited for at most `timeout`.
/// @throws std::runtime_error if the thread did not finish in time.
template <class T>
T get_within(std::future<T>& f, clock::duration timeout) {
    if (f.wait_for(timeout) != std::future_status::ready)
        throw std::runtime_error("a client thread did not finish in time");
    return f.get();
}

/// Polls `srv`'s /stats until the integer at `path` reaches `expected` (bounded by `timeout`);
/// returns the last value seen.
inline std::int64_t wait_for_count(const demo_server& srv, std::string_view path, std::int64_t expected,
                                   clock::duration timeout = 3s) {
    std::int64_t last = -1;
    wait_until([&] { return (last = integer(srv.stats(), path)) == expected; }, timeout, 50ms);
    return last;
}

}  // namespace demo_test

#endif
