// loadgen: many WebSocket or TCP clients against demo_server, to check that idle clients are
// kicked on time, active ones never, and to measure what that costs the server; or (--url)
// against any server, its promised timeouts given as flags, judged from the client side alone.
// See README.md.
//
// Exit status: 0 all checks passed; 1 a check failed (false, missed or wrong kicks, unresolved
// clients, connection errors); 2 bad command line; 3 the run could not be done.
#include "analysis.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "scenario.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace json = boost::json;

namespace {

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path);
}

loadgen::run_result read_result(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + path);
    std::stringstream text;
    text << f.rdbuf();
    try {
        return loadgen::result_from_json(json::parse(text.str()));
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": not a result of this loadgen (" + e.what() + ")");
    }
}

// --print-promise: the promise per role as JSON, for scripts/load.sh (its duration, its
// first lines).
int print_promise_json(const loadgen::scenario& plan) {
    json::object roles;
    for (std::size_t r = 0; r < loadgen::role_count; ++r) {
        if (plan.mix[r] == 0) continue;
        const auto& p = plan.promise[r];
        roles[loadgen::role_names[r]] = {{"spelling", p.spelling()},
                                         {"words", p.words()},
                                         {"closed", p.closed()},
                                         {"to_s", loadgen::seconds(p.to)}};
    }
    std::ostringstream text;
    loadgen::print_promise(plan, text);
    std::cout << json::serialize(json::object{{"expect", loadgen::name(plan.expect)},
                                              {"flags", loadgen::promise_flags(plan)},
                                              {"roles", roles},
                                              {"text", text.str()}})
              << "\n";
    return 0;
}

int run_once(const loadgen::scenario& plan) {
    if (plan.print_promise) return print_promise_json(plan);
    loadgen::print_promise(plan, std::cout);
    std::cout.flush();
    const auto data = loadgen::run(plan);
    const auto result = loadgen::analyse(plan, data);
    loadgen::print_run(result, std::cout);
    if (!plan.json_path.empty()) write_file(plan.json_path, json::serialize(loadgen::to_json(result)) + "\n");
    return result.checks.passed ? 0 : 1;
}

int combine(const loadgen::command& cmd) {
    const auto first = read_result(cmd.inputs[0]);
    const auto second = read_result(cmd.inputs[1]);
    const auto combined = loadgen::compare(first, second, std::cout);
    if (!cmd.json_path.empty()) write_file(cmd.json_path, json::serialize(combined) + "\n");
    return first.checks.passed && second.checks.passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    int exit_code = 0;
    const auto cmd = loadgen::parse_command_line(argc, argv, std::cout, std::cerr, exit_code);
    if (!cmd) return exit_code;
    std::signal(SIGPIPE, SIG_IGN);  // a server that vanished must not kill the report
    try {
        if (cmd->what == loadgen::command::kind::combine) return combine(*cmd);
        return run_once(cmd->run);
    } catch (const std::exception& e) {
        std::cerr << "loadgen: " << e.what() << "\n";
        return 3;
    }
}
