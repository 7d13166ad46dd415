// What one loadgen run does: the command line, parsed into a scenario.
//
// A scenario is a number of connections to one demo_server, each with a role:
//  - idle:   sends one message, reads its echo, then stays silent (keeps a read pending, so a
//            WebSocket client still answers pings). The server must kick it at ~idle timeout.
//  - active: sends a message every --interval and reads the echo. Must never be kicked.
//  - pinger: WebSocket only. Sends nothing, but keeps a read pending so Beast answers the
//            server's pings. Alive for the heartbeat, idle for the idle timeout: kicked by it.
//  - dead:   WebSocket only. After the handshake it stops reading frames (it drains the raw
//            socket, so it never answers a ping). The heartbeat must drop it.
//  - stalled: WebSocket only (--stalled, none by default). Connects and sends half an upgrade
//            request, never the rest. The server's handshake deadline must drop it.
#ifndef IDLEWHEEL_LOADGEN_SCENARIO_HPP
#define IDLEWHEEL_LOADGEN_SCENARIO_HPP

#include "program_support/duration_text.hpp"
#include "promise.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace loadgen {

using clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

enum class protocol { tcp, ws };

/// What the server promised, the verdicts' yardstick (README.md, "The promise language"): a
/// preset, each resolved into a promise per role (promise.hpp) when the command line is read,
/// except demo, whose rules come from demo_server's /stats.
///  - demo:   demo_server's settings, read from its /stats (--http-port without --expect*).
///  - kicks:  --expect-idle D: idle and pinger clients kicked D after their last message or
///            handshake, any close; dead clients by the heartbeat (--expect-ping-interval,
///            --expect-pong-timeout) or else by the idle timeout.
///  - beast:  --expect beast-timeouts --idle-timeout D: Beast's websocket timeout option with
///            keep-alive pings: a client that answers pings is never kicked, a dead one is
///            dropped (no close frame) D after its handshake.
///  - ws_heartbeat: --expect ws-heartbeat --heartbeat I: Node ws's README heartbeat: dead
///            clients terminate()d (bare) I..2I after the handshake; the others open.
///  - python_websockets: --expect python-websockets --ping-interval P --ping-timeout Q: dead
///            clients closed with 1011 P+Q..2P+Q after the handshake; the others open.
///  - idle_timeout: --expect idle-timeout --idle-timeout D [--pings] (uWebSockets, Bun, Deno):
///            every client silent for D closed; with --pings, those that answer pings kept.
///  - none:   --expect none: the server closes nobody.
///  - observe: --expect observe: no promise; the run says how each role ended and what fits.
///  - custom: only --expect-open / --expect-close.
/// Stalled clients are due at --handshake-timeout (--open-timeout) when one is given, else
/// unbounded (none: open).
enum class expectation { demo, kicks, beast, ws_heartbeat, python_websockets, idle_timeout, none, observe, custom };
[[nodiscard]] constexpr std::string_view name(expectation e) noexcept {
    switch (e) {
        case expectation::demo: return "demo";
        case expectation::kicks: return "kicks";
        case expectation::beast: return "beast-timeouts";
        case expectation::ws_heartbeat: return "ws-heartbeat";
        case expectation::python_websockets: return "python-websockets";
        case expectation::idle_timeout: return "idle-timeout";
        case expectation::none: return "none";
        case expectation::observe: return "observe";
        case expectation::custom: return "custom";
    }
    return "demo";
}
enum class role : std::uint8_t { idle, active, pinger, dead, stalled };
inline constexpr std::size_t role_count = 5;
inline constexpr std::array<std::string_view, role_count> role_names{"idle", "active", "pinger", "dead", "stalled"};

[[nodiscard]] constexpr std::size_t index(role r) noexcept { return static_cast<std::size_t>(r); }
[[nodiscard]] constexpr std::string_view name(role r) noexcept { return role_names[index(r)]; }
[[nodiscard]] constexpr std::string_view name(protocol p) noexcept { return p == protocol::tcp ? "tcp" : "ws"; }

struct scenario {
    std::string host = "127.0.0.1";
    unsigned short tcp_port = 0;   // raw TCP echo port (protocol tcp)
    unsigned short http_port = 0;  // demo_server's HTTP port: /stats (and the WebSocket echo without --url); 0: no /stats
    unsigned short ws_port = 0;    // the WebSocket echo's port (--url's, else --http-port)
    std::string path = "/";        // the WebSocket upgrade's target (--url's path)
    std::string url;               // --url as given (empty: demo_server by --http-port)
    expectation expect = expectation::demo;
    bool heartbeats = true;        // kicks: --expect-ping-interval given (demo: --ping-interval > 0)
    protocol proto = protocol::ws;
    // The HTTP port speaks TLS (demo_server --tls): WebSocket clients and /stats over TLS. The
    // TCP port stays plain, so --protocol tcp clients do too.
    bool tls = false;
    std::string tls_ca;  // verify the server's certificate against this CA/cert file (empty: no verification)
    std::size_t connections = 1000;
    unsigned threads = 1;
    double connect_rate = 4000;                 // new connections started per second
    std::size_t max_connecting = 256;           // connections in their connect/handshake at once
    std::size_t source_addresses = 0;           // client addresses first_source, +1, ... (0 = one per 8000 connections)
    std::string first_source;                   // the first client address (empty: the server's address)
    std::array<std::size_t, role_count> mix{};  // connections per role; adds up to `connections`
    nanoseconds interval = std::chrono::seconds(1);
    // Active clients send their next message as soon as the echo arrives (saturation), not
    // every `interval`.
    bool closed_loop = false;
    std::size_t message_size = 32;
    // The server's settings, for the expectations. idle_timeout and tick: 0 = read from /stats.
    nanoseconds idle_timeout{0};
    nanoseconds tick{0};
    nanoseconds ping_interval = std::chrono::seconds(5);
    nanoseconds pong_timeout = std::chrono::seconds(5);
    nanoseconds ping_jitter = std::chrono::seconds(1);
    // --expect-close-code ROLE=CODE: a client of ROLE that is expected closed must get a close
    // frame with this code (0: any close the expectation allows).
    std::array<std::uint16_t, role_count> close_code{};
    // The server's handshake deadline (--handshake-timeout): stalled clients are due then.
    nanoseconds handshake_timeout{0};
    // The preset's own settings: --heartbeat (ws-heartbeat), --ping-timeout (python-websockets),
    // --pings (idle-timeout).
    nanoseconds heartbeat{0};
    nanoseconds ping_timeout{0};
    bool pings = false;
    // Every expectation but demo, resolved per role when the command line is read (with
    // --expect-open / --expect-close applied over the preset); preset_flags: the preset as
    // given ("ws-heartbeat --heartbeat 1s").
    std::array<role_promise, role_count> promise{};
    std::string preset_flags;
    bool print_promise = false;  // --print-promise
    // How late past its due time (+ 2 ticks) a kick may come before it counts as missed.
    nanoseconds allowance = std::chrono::seconds(1);
    nanoseconds duration = std::chrono::seconds(30);
    nanoseconds stats_interval = std::chrono::milliseconds(500);
    std::uint64_t seed = 1;
    std::string json_path;
    std::string label;
    bool progress = true;
    std::string progress_file;  // --progress-file: the live counters as JSON, every second
    // --reconnect: a WebSocket client closed by the server with 1001 "going away" (a drain)
    // connects again after a jittered back-off and carries on in its role; the message whose
    // echo had not come back is sent again first. Failed attempts of a reconnect retry.
    bool reconnect = false;
    nanoseconds reconnect_delay = std::chrono::milliseconds(100);  // the back-off's base
    unsigned reconnect_attempts = 30;                               // per close, then a failure
};

/// What the command line asks for: a run, or combining two result files into a comparison.
struct command {
    enum class kind { run, combine } what = kind::run;
    scenario run;
    std::vector<std::string> inputs;  // combine: result JSON files, e.g. wheel then asio
    std::string json_path;            // combine: combined JSON
};

/// Parses "500ms", "10s", "2m", "250us" (a whole number and a unit).
using program_support::parse_duration;  // the server's own duration format (program_support/duration_text.hpp)

/// The promise in the command line's general form ("--expect-open idle,active --expect-close
/// dead=1s..2s@handshake:bare"), over the roles in the mix, and in words, one line per role.
[[nodiscard]] std::string promise_flags(const scenario& s);
void print_promise(const scenario& s, std::ostream& out);

/// Parses the command line. Returns nothing after printing help (exit_code 0) or an error
/// (exit_code 2).
[[nodiscard]] std::optional<command> parse_command_line(int argc, char** argv, std::ostream& out, std::ostream& err,
                                                        int& exit_code);

[[nodiscard]] inline double seconds(nanoseconds d) noexcept { return std::chrono::duration<double>(d).count(); }
[[nodiscard]] inline double millis(nanoseconds d) noexcept {
    return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace loadgen

#endif
