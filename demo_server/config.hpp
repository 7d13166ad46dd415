// The demo server's settings and their command line (Boost.Program_options).
#ifndef IDLEWHEEL_DEMO_CONFIG_HPP
#define IDLEWHEEL_DEMO_CONFIG_HPP

#include <chrono>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

namespace demo {

enum class timer_mode { wheel, asio, none };
enum class tcp_echo_mode { bytes, lines };

struct config {
    std::string address = "127.0.0.1";
    unsigned short tcp_port = 7000;
    unsigned short http_port = 8080;
    std::chrono::nanoseconds idle_timeout = std::chrono::seconds(15);
    std::chrono::nanoseconds ping_interval = std::chrono::seconds(5);
    std::chrono::nanoseconds pong_timeout = std::chrono::seconds(5);
    std::chrono::nanoseconds handshake_timeout = std::chrono::seconds(5);
    std::chrono::nanoseconds close_timeout = std::chrono::seconds(2);
    std::chrono::nanoseconds ping_jitter = std::chrono::seconds(1);
    std::chrono::nanoseconds tick = std::chrono::milliseconds(10);
    std::chrono::nanoseconds max_lifetime{0};     // 0 = sessions live as long as they are active
    std::chrono::nanoseconds max_lifetime_jitter = std::chrono::seconds(1);  // each lifetime + uniform [0, this] (default: --ping-jitter)
    std::chrono::nanoseconds drain_spread{0};     // shutdown: close sessions over this window (0 = at once)
    std::chrono::nanoseconds hard_stop_after{0};  // shutdown: drop whatever is left after this (0 = no extra bound)
    std::chrono::nanoseconds lame_duck{0};        // shutdown: /healthz 503 for this long, all else served, before the drain
    timer_mode timers = timer_mode::wheel;
    tcp_echo_mode tcp_echo = tcp_echo_mode::bytes;
    unsigned threads = 1;     // --threads: io_context threads, each with its own wheel
    unsigned io_threads = 0;  // --io-threads: threads of ONE shared io_context with a wheel_pool (0: off)
    std::size_t shards = 0;   // --shards: the pool's shards, one worker each (set to 4 x io_threads if not given)
    std::size_t max_connections =
        19'900;  // the 20 000-descriptor limit here, less a reserve for listeners, epoll, /stats
    std::size_t max_message_size = 64 * 1024;
    std::size_t max_backlog = 1024 * 1024;
    std::size_t max_backlog_total = 256 * 1024 * 1024;  // all sessions' unsent echo together
    // --tls: the HTTP port speaks TLS only (https://, wss://). The certificate chain and key
    // (PEM files), or, when neither is given, a self-signed certificate made at start.
    bool tls = false;
    std::string tls_cert;
    std::string tls_key;
    bool reuse_port = false;  // SO_REUSEPORT on both listeners: several processes share the ports
    bool quiet = false;
};

/// Parses the command line. Returns the config, or nothing after printing help (exit 0) or an
/// error (exit 2) — `exit_code` says which.
std::optional<config> parse_command_line(int argc, char** argv, std::ostream& out, std::ostream& err, int& exit_code);

const char* to_string(timer_mode m) noexcept;

}  // namespace demo

#endif
