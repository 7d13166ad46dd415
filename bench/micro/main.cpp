// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel_micro: every contender's cases in one Google Benchmark binary, named
// "<family>/<contender>/<N>" (families: schedule_cancel, touch, expire, memory, idle).
// Besides Google Benchmark's own flags:
//   --sizes=1000,10000,100000,1000000   the N of every family (smoke runs pass --sizes=1000)
//   --idle_ms=1000                      the idle wake-up window per case
//   --live_ticks=100                    real 10 ms ticks of the touch/idlewheel_watch case
//   --max_rounds=20                     expire rounds per case, at most
// bench/micro/run_micro.sh runs it with the Java harness and the simulation, and prints the
// ratio tables; workload.hpp says what every case does.

#include "harness.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

namespace {

bool take_flag(const char* arg, const char* name, std::string& value) {
    const std::size_t len = std::strlen(name);
    if (std::strncmp(arg, name, len) != 0 || arg[len] != '=') return false;
    value = arg + len + 1;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    bench::bench_options options;
    options.sizes.assign(std::begin(bench::default_sizes), std::end(bench::default_sizes));
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        std::string value;
        if (take_flag(argv[i], "--sizes", value)) {
            options.sizes.clear();
            std::stringstream list(value);
            for (std::string item; std::getline(list, item, ',');) options.sizes.push_back(std::stoul(item));
        } else if (take_flag(argv[i], "--max_rounds", value)) {
            options.max_rounds = std::stol(value);
        } else if (take_flag(argv[i], "--live_ticks", value)) {
            options.live_ticks = std::stoul(value);
        } else if (take_flag(argv[i], "--idle_ms", value)) {
            options.idle_window = std::chrono::milliseconds(std::stol(value));
        } else {
            argv[kept++] = argv[i];
        }
    }
    argc = kept;
    for (const std::size_t n : options.sizes) {
        if (n < 2) {
            std::cerr << "idlewheel_micro: every size must be at least 2\n";
            return 2;
        }
    }

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("malloc_counted",
                                bench::alloc_count::counting_available() ? "yes" : "no (sanitizer build)");

    bench::register_idlewheel(options);
    bench::register_asio(options);
    bench::register_libevent(options);
    bench::register_libuv(options);
    bench::register_cases(options);

    benchmark::RunSpecifiedBenchmarks();
    bench::cached_background::clear();
    benchmark::Shutdown();
    return 0;
}
