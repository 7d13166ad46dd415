// reliability_load: drives a running demo_server with concurrent TCP and WebSocket clients and
// /stats and /metrics pollers for a while (tsan.sh uses it against the TSan build). Exit 0 if every client
// got what it expected, 1 otherwise.
//
//   reliability_load --tcp-port P --http-port P [--host 127.0.0.1] [--seconds 10] [--threads 2]
//                    [--cycles N] [--slots 8] [--tcp-echoers 4] [--websocket-echoers 4]
//                    [--stats-pollers 1] [--idlers 0]      (echoers, pollers, idlers per thread)
//                    [--expect-kicks 0]       (fail unless the idlers were kicked this often)
#include "load_clients.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
    namespace load = reliability::load;
    load::plan p;
    p.cycles = 1'000'000'000;  // until the deadline
    p.cycle_slots = 8;
    p.tcp_echoers = 4;
    p.websocket_echoers = 4;
    p.stats_pollers = 1;
    p.duration = std::chrono::seconds(10);
    unsigned long long expect_kicks = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const char* value = argv[i + 1];
        const auto number = [&] { return std::strtoull(value, nullptr, 10); };
        if (key == "--host")
            p.host = value;
        else if (key == "--tcp-port")
            p.tcp_port = static_cast<unsigned short>(number());
        else if (key == "--http-port")
            p.http_port = static_cast<unsigned short>(number());
        else if (key == "--seconds")
            p.duration = std::chrono::seconds(number());
        else if (key == "--threads")
            p.threads = static_cast<unsigned>(number());
        else if (key == "--cycles")
            p.cycles = number();
        else if (key == "--slots")
            p.cycle_slots = static_cast<unsigned>(number());
        else if (key == "--tcp-echoers")
            p.tcp_echoers = static_cast<unsigned>(number());
        else if (key == "--websocket-echoers")
            p.websocket_echoers = static_cast<unsigned>(number());
        else if (key == "--stats-pollers")
            p.stats_pollers = static_cast<unsigned>(number());
        else if (key == "--idlers")
            p.idlers = static_cast<unsigned>(number());
        else if (key == "--expect-kicks")
            expect_kicks = number();
        else {
            std::fprintf(stderr, "reliability_load: unknown option %s\n", key.c_str());
            return 2;
        }
    }
    if (p.tcp_port == 0 || p.http_port == 0) {
        std::fprintf(stderr, "reliability_load: --tcp-port and --http-port are required\n");
        return 2;
    }
    const auto o = load::run(p);
    std::printf("reliability_load: %.1f s, %llu cycles (%llu tcp, %llu websocket), %llu tcp echoes, %llu websocket echoes, "
                "%llu /stats, %llu idle kicks, %llu failures%s%s\n",
                o.seconds, static_cast<unsigned long long>(o.cycles), static_cast<unsigned long long>(o.tcp_cycles),
                static_cast<unsigned long long>(o.websocket_cycles), static_cast<unsigned long long>(o.tcp_echoes),
                static_cast<unsigned long long>(o.websocket_echoes), static_cast<unsigned long long>(o.stats_polls),
                static_cast<unsigned long long>(o.idle_kicks), static_cast<unsigned long long>(o.failures), o.failures != 0 ? "; first: " : "", o.first_failure.c_str());
    const bool worked = o.failures == 0 && o.cycles > 0 && o.tcp_echoes > 0 && o.websocket_echoes > 0 && o.stats_polls > 0 &&
                        o.idle_kicks >= expect_kicks;
    return worked ? 0 : 1;
}
