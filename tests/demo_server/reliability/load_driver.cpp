// reliability_load: drives a running demo_server with concurrent TCP and WebSocket clients and
// /stats and /metrics pollers for a while (tsan.sh uses it against the TSan build). Exit 0 if every client
// got what it expected, 1 otherwise.
//
//   reliability_load --tcp-port P --http-port P [--host 127.0.0.1] [--seconds 10] [--threads 2]
//                    [--cycles N] [--slots 8] [--tcp-echoers 4] [--websocket-echoers 4]
//                    [--stats-pollers 1] [--idlers 0]      (echoers, pollers, idlers per thread)
//                    [--ping-silent 0] [--slowloris 0]     (per thread)
//                    [--dead-peer-min-ms 0] [--slowloris-min-ms 0]  (no drop / cut sooner than this)
//                    [--expect-kicks 0]       (fail unless the idlers were kicked this often)
//                    [--expect-dead-peers 0] [--expect-slowloris-cuts 0]   (the same for those)
// After the drive it reads the server's /stats: every kick, drop and cut the clients saw must be
// counted there under its cause (closed.idle, closed.dead_peer, closed.handshake_timeout).
#include "load_clients.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

namespace load = reliability::load;

// GET /stats on a fresh connection; the body, or an empty string.
std::string fetch_stats(const load::plan& p) {
    try {
        load::asio::io_context io;
        load::tcp::socket s(io);
        s.connect({load::asio::ip::make_address(p.host), p.http_port});
        load::http::request<load::http::empty_body> req{load::http::verb::get, "/stats", 11};
        req.set(load::http::field::host, p.host);
        req.keep_alive(false);
        load::http::write(s, req);
        load::beast::flat_buffer buffer;
        load::http::response<load::http::string_body> res;
        load::http::read(s, buffer, res);
        return res.body();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reliability_load: GET /stats: %s\n", e.what());
        return {};
    }
}

// The number after "\"key\":" in a JSON document (the closed.* names are unique in /stats).
unsigned long long json_count(const std::string& doc, std::string_view key) {
    const auto at = doc.find("\"" + std::string(key) + "\":");
    if (at == std::string::npos) return 0;
    return std::strtoull(doc.c_str() + at + key.size() + 3, nullptr, 10);
}

}  // namespace

int main(int argc, char** argv) {
    load::plan p;
    p.cycles = 1'000'000'000;  // until the deadline
    p.cycle_slots = 8;
    p.tcp_echoers = 4;
    p.websocket_echoers = 4;
    p.stats_pollers = 1;
    p.duration = std::chrono::seconds(10);
    unsigned long long expect_kicks = 0, expect_dead_peers = 0, expect_slowloris_cuts = 0;
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
        else if (key == "--ping-silent")
            p.ping_silent = static_cast<unsigned>(number());
        else if (key == "--slowloris")
            p.slowloris = static_cast<unsigned>(number());
        else if (key == "--dead-peer-min-ms")
            p.dead_peer_min = std::chrono::milliseconds(number());
        else if (key == "--slowloris-min-ms")
            p.slowloris_min = std::chrono::milliseconds(number());
        else if (key == "--expect-kicks")
            expect_kicks = number();
        else if (key == "--expect-dead-peers")
            expect_dead_peers = number();
        else if (key == "--expect-slowloris-cuts")
            expect_slowloris_cuts = number();
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
                "%llu /stats, %llu idle kicks, %llu dead-peer drops, %llu slowloris cuts, %llu failures%s%s\n",
                o.seconds, static_cast<unsigned long long>(o.cycles), static_cast<unsigned long long>(o.tcp_cycles),
                static_cast<unsigned long long>(o.websocket_cycles), static_cast<unsigned long long>(o.tcp_echoes),
                static_cast<unsigned long long>(o.websocket_echoes), static_cast<unsigned long long>(o.stats_polls),
                static_cast<unsigned long long>(o.idle_kicks), static_cast<unsigned long long>(o.dead_peer_drops),
                static_cast<unsigned long long>(o.slowloris_cuts), static_cast<unsigned long long>(o.failures),
                o.failures != 0 ? "; first: " : "", o.first_failure.c_str());
    bool worked = o.failures == 0 && o.cycles > 0 && o.tcp_echoes > 0 && o.websocket_echoes > 0 && o.stats_polls > 0 &&
                  o.idle_kicks >= expect_kicks && o.dead_peer_drops >= expect_dead_peers &&
                  o.slowloris_cuts >= expect_slowloris_cuts;
    // What the clients saw, the server counted under its cause (it may count more: a client
    // that reconnected at the deadline does not wait for its outcome).
    const std::string stats = fetch_stats(p);
    const unsigned long long idle = json_count(stats, "idle"), dead = json_count(stats, "dead_peer"),
                             cut = json_count(stats, "handshake_timeout");
    std::printf("reliability_load: server closed.idle %llu, closed.dead_peer %llu, closed.handshake_timeout %llu\n", idle, dead,
                cut);
    if (stats.empty() || idle < o.idle_kicks || dead < o.dead_peer_drops || cut < o.slowloris_cuts) {
        std::fprintf(stderr, "reliability_load: /stats does not count what the clients saw: %s\n", stats.c_str());
        worked = false;
    }
    return worked ? 0 : 1;
}
