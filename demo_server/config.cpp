#include "config.hpp"

#include "program_support/command_line.hpp"
#include "program_support/duration_option.hpp"

#include <boost/program_options.hpp>

namespace po = boost::program_options;

namespace demo {

namespace {

using program_support::duration_arg;

template <class Enum>
struct enum_arg {
    Enum value{};
};

// Found by argument-dependent lookup from Program_options (so: in the types' namespace).
void validate(boost::any& v, const std::vector<std::string>& values, enum_arg<timer_mode>*, int) {
    po::validators::check_first_occurrence(v);
    const std::string& s = po::validators::get_single_string(values);
    if (s == "wheel")
        v = enum_arg<timer_mode>{timer_mode::wheel};
    else if (s == "asio")
        v = enum_arg<timer_mode>{timer_mode::asio};
    else if (s == "none")
        v = enum_arg<timer_mode>{timer_mode::none};
    else
        throw po::invalid_option_value(s + " (expected wheel, asio or none)");
}

void validate(boost::any& v, const std::vector<std::string>& values, enum_arg<tcp_echo_mode>*, int) {
    po::validators::check_first_occurrence(v);
    const std::string& s = po::validators::get_single_string(values);
    if (s == "bytes")
        v = enum_arg<tcp_echo_mode>{tcp_echo_mode::bytes};
    else if (s == "lines")
        v = enum_arg<tcp_echo_mode>{tcp_echo_mode::lines};
    else
        throw po::invalid_option_value(s + " (expected bytes or lines)");
}

}  // namespace

const char* to_string(timer_mode m) noexcept {
    switch (m) {
        case timer_mode::wheel: return "wheel";
        case timer_mode::asio: return "asio";
        case timer_mode::none: break;
    }
    return "none";
}

std::optional<config> parse_command_line(int argc, char** argv, std::ostream& out, std::ostream& err, int& exit_code) {
    config c;
    po::options_description desc(
        "demo_server: a Beast TCP + WebSocket echo server that kicks idle clients\n"
        "Durations: a number and a unit (us, ms, s, m, h), e.g. 500ms, 30s, 2m.\nOptions");
    // clang-format off
    desc.add_options()
        ("help,h", "show this help")
        ("address", po::value(&c.address)->default_value(c.address), "listen address")
        ("tcp-port", po::value(&c.tcp_port)->default_value(c.tcp_port), "raw TCP echo port (0 = any free port)")
        ("http-port", po::value(&c.http_port)->default_value(c.http_port), "HTTP/WebSocket port: / dashboard, /stats, /metrics (Prometheus), WebSocket echo (0 = any free port)")
        ("idle-timeout", po::value<duration_arg>(), "close a session with no inbound data for this long (default 15s)")
        ("ping-interval", po::value<duration_arg>(), "WebSocket: ping after this much silence; 0s = no pings (default 5s)")
        ("pong-timeout", po::value<duration_arg>(), "WebSocket: drop the peer if nothing answers a ping in this time (default 5s)")
        ("ping-jitter", po::value<duration_arg>(), "WebSocket: spread of per-session ping offsets (default 1s)")
        ("handshake-timeout", po::value<duration_arg>(), "time from accept to a complete HTTP request / WebSocket upgrade; arriving bytes do not extend it (default 5s)")
        ("close-timeout", po::value<duration_arg>(), "time a close handshake may take before the socket is dropped (default 2s)")
        ("max-lifetime", po::value<duration_arg>(), "close a session this long after it was accepted, however active, lengthened by up to --max-lifetime-jitter (WebSocket: 1001 \"max lifetime\" after the echo of every message read, as the drain; TCP: closed); behind a balancer, clients move to the least loaded server: the fleet evens out after a restart; 0s = off (default 0s; not with --timers=none)")
        ("max-lifetime-jitter", po::value<duration_arg>(), "each session's --max-lifetime is lengthened by a uniform random share of this, so sessions accepted together do not all close together (default: --ping-jitter)")
        ("drain-spread", po::value<duration_arg>(), "on SIGTERM/SIGINT close the TCP and WebSocket sessions spread uniformly over this window, longest idle first (WebSocket: 1001 \"going away\"), while plain HTTP (/stats, /metrics) is still served and upgrades get 503; 0s = all at once (default 0s)")
        ("hard-stop-after", po::value<duration_arg>(), "on SIGTERM/SIGINT drop whatever is still open this long after the signal and exit 0; a second signal does it at once; 0s = after the drain plus --close-timeout (default 0s)")
        ("lame-duck", po::value<duration_arg>(), "on SIGTERM/SIGINT answer /healthz 503 for this long while still accepting and serving everything (upgrades included), then begin the drain: for balancers that only poll readiness (cloud, Kubernetes); a second signal stops at once; 0s = the drain begins at the signal (default 0s)")
        ("tick", po::value<duration_arg>(), "timing wheel resolution (default 10ms)")
        ("timers", po::value<enum_arg<timer_mode>>(), "wheel: one timing wheel per thread (--threads) or per shard (--io-threads); asio: one steady_timer per connection re-armed on every read; "
                   "none: no liveness at all (no idle kick, heartbeat, handshake or close deadline), the benchmark baseline (default wheel)")
        ("tcp-echo", po::value<enum_arg<tcp_echo_mode>>(), "bytes: echo bytes as they come; lines: echo whole lines (default bytes)")
        ("threads", po::value(&c.threads)->default_value(c.threads), "io_context threads, each with its own wheel")
        ("io-threads", po::value(&c.io_threads)->default_value(c.io_threads), "instead of --threads: ONE io_context run by this many threads (Beast's threading), "
                       "its sessions spread over --shards strands, each with its own wheel (idlewheel::wheel_pool); 0 = off")
        ("shards", po::value(&c.shards), "with --io-threads: the strands (each with a wheel, a session list, a share of the sessions) (default 4 x --io-threads)")
        ("max-connections", po::value(&c.max_connections)->default_value(c.max_connections), "connections beyond this are accepted and closed at once")
        ("max-message-size", po::value(&c.max_message_size)->default_value(c.max_message_size), "largest WebSocket message / TCP line in bytes (larger: close 1009)")
        ("max-backlog", po::value(&c.max_backlog)->default_value(c.max_backlog), "bytes of unsent echo a client may leave queued before it is dropped")
        ("max-backlog-total", po::value(&c.max_backlog_total)->default_value(c.max_backlog_total), "bytes of unsent echo all clients together may leave queued; past it the clients holding the most are dropped first (closed.backlog_budget)")
        ("tls", po::bool_switch(&c.tls), "the HTTP port speaks TLS only: https:// (dashboard, /stats, /metrics) and wss://; the TLS handshake counts in --handshake-timeout; the TCP port stays plain. Without --tls-cert/--tls-key a self-signed certificate for localhost, 127.0.0.1 and ::1 is made at start (its SHA-256 fingerprint on stderr)")
        ("tls-cert", po::value(&c.tls_cert), "with --tls: the certificate chain, a PEM file (server certificate first)")
        ("tls-key", po::value(&c.tls_key), "with --tls: the private key of --tls-cert, a PEM file (not encrypted)")
        ("reuse-port", po::bool_switch(&c.reuse_port), "SO_REUSEPORT on both listeners: several server processes (each started with it) share the ports, the kernel spreads connections")
        ("quiet,q", po::bool_switch(&c.quiet), "no log lines for individual sessions");
    // clang-format on
    const auto options = program_support::parse_options(argc, argv, desc, "demo_server", out, err, exit_code);
    if (!options) return std::nullopt;
    const po::variables_map& vm = *options;
    const auto get = [&vm](const char* name, std::chrono::nanoseconds& into) {
        if (vm.count(name) != 0U) into = vm[name].as<duration_arg>().value;
    };
    get("idle-timeout", c.idle_timeout);
    get("ping-interval", c.ping_interval);
    get("pong-timeout", c.pong_timeout);
    get("ping-jitter", c.ping_jitter);
    get("handshake-timeout", c.handshake_timeout);
    get("close-timeout", c.close_timeout);
    get("tick", c.tick);
    get("max-lifetime", c.max_lifetime);
    c.max_lifetime_jitter = c.ping_jitter;
    get("max-lifetime-jitter", c.max_lifetime_jitter);
    get("drain-spread", c.drain_spread);
    get("hard-stop-after", c.hard_stop_after);
    get("lame-duck", c.lame_duck);
    if (vm.count("timers") != 0U) c.timers = vm["timers"].as<enum_arg<timer_mode>>().value;
    if (vm.count("tcp-echo") != 0U) c.tcp_echo = vm["tcp-echo"].as<enum_arg<tcp_echo_mode>>().value;

    const char* problem = nullptr;
    if (c.tick <= std::chrono::nanoseconds::zero())
        problem = "--tick must be > 0";
    else if (c.idle_timeout <= std::chrono::nanoseconds::zero())
        problem = "--idle-timeout must be > 0";
    else if (c.handshake_timeout <= std::chrono::nanoseconds::zero())
        problem = "--handshake-timeout must be > 0";
    else if (c.ping_interval > std::chrono::nanoseconds::zero() && c.pong_timeout <= std::chrono::nanoseconds::zero())
        problem = "--pong-timeout must be > 0 when --ping-interval is set";
    else if (c.max_lifetime.count() < 0 || c.max_lifetime_jitter.count() < 0 || c.drain_spread.count() < 0 ||
             c.hard_stop_after.count() < 0 || c.lame_duck.count() < 0)
        problem = "--max-lifetime, --max-lifetime-jitter, --drain-spread, --hard-stop-after and --lame-duck must be >= 0";
    else if (c.threads == 0 || c.threads > 64)
        problem = "--threads must be between 1 and 64";
    else if (c.io_threads > 64)
        problem = "--io-threads must be between 0 and 64";
    else if (c.io_threads > 0 && c.threads > 1)
        problem = "--threads and --io-threads are exclusive: --threads N runs an io_context per thread, --io-threads N one io_context on N threads";
    else if (vm.count("shards") != 0U && c.io_threads == 0)
        problem = "--shards needs --io-threads";
    else if (vm.count("shards") != 0U && (c.shards == 0 || c.shards > 1024))
        problem = "--shards must be between 1 and 1024";
    else if (c.max_connections == 0)
        problem = "--max-connections must be > 0";
    else if (c.max_backlog_total < c.max_backlog)
        problem = "--max-backlog-total must be at least --max-backlog";
    else if (!c.tls && (!c.tls_cert.empty() || !c.tls_key.empty()))
        problem = "--tls-cert and --tls-key need --tls";
    else if (c.tls_cert.empty() != c.tls_key.empty())
        problem = "--tls-cert and --tls-key go together (or neither: a self-signed certificate is made at start)";
    else if (c.max_message_size < 16)
        problem = "--max-message-size must be at least 16";
    if (problem != nullptr) {
        err << "demo_server: " << problem << "\n(see --help)\n";
        exit_code = 2;
        return std::nullopt;
    }
    if (c.io_threads > 0 && c.shards == 0) c.shards = 4 * std::size_t{c.io_threads};
    return c;
}

}  // namespace demo
