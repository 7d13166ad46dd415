// demo_server: a Boost.Beast TCP + WebSocket echo server that kicks idle clients, with a live
// dashboard. `--timers=wheel|asio` runs the same server on idlewheel or on one steady_timer per
// connection, so the two can be measured side by side. See --help and docs/demo_server.md.
#include "config.hpp"
#include "log.hpp"
#include "server.hpp"

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    int exit_code = 0;
    const auto cfg = demo::parse_command_line(argc, argv, std::cout, std::cerr, exit_code);
    if (!cfg) return exit_code;
    std::signal(SIGPIPE, SIG_IGN);  // a peer that vanished must not kill the server on write
    try {
        demo::server srv(*cfg);
        srv.listen();
        std::printf("%s\n", srv.listening_line().c_str());  // tests and loadgen wait for this line
        std::fflush(stdout);
        const std::string threading =
            cfg->io_threads > 0
                ? "io-threads=" + std::to_string(cfg->io_threads) + " shards=" + std::to_string(cfg->shards)
                : "threads=" + std::to_string(cfg->threads);
        demo::log("timers=", demo::to_string(cfg->timers), " ", threading, " idle-timeout=", std::chrono::duration<double>(cfg->idle_timeout).count(), "s; dashboard at ", cfg->tls ? "https://" : "http://",
                  srv.listening_line().substr(srv.listening_line().find("http=") + 5), "/");
        if (cfg->tls) demo::log("tls: the HTTP port speaks TLS only (https://, wss://); ", srv.tls_description());
        if (cfg->timers == demo::timer_mode::none && cfg->max_lifetime.count() > 0)
            demo::log("--max-lifetime has no effect with --timers=none (no per-session deadlines)");
        srv.run();
        // The last /stats document, after every session ended: the one place a drained
        // process's final counts can be read (tests/demo_server/fleet, bench/fleet.sh sum them).
        std::printf("final stats %s\n", srv.stats_json().c_str());
        std::fflush(stdout);
    } catch (const std::exception& e) {
        demo::log("fatal: ", e.what());
        return 1;
    }
    return 0;
}
