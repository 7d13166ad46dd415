// Reading demo_server's /stats: one short HTTP/1.1 request per sample (Connection: close), so
// no keep-alive connection sits idle on the server and gets kicked between samples.
#ifndef IDLEWHEEL_LOADGEN_SERVER_STATS_HPP
#define IDLEWHEEL_LOADGEN_SERVER_STATS_HPP

#include "scenario.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <string>

namespace loadgen {

/// The whole machine's CPU time so far (/proc/stat, in clock ticks, all CPUs): how busy the
/// machine was around the server, and how much time the hypervisor stole.
struct machine_cpu {
    std::uint64_t busy = 0, total = 0, steal = 0, irq = 0;  // irq: hard + soft interrupts
    [[nodiscard]] static machine_cpu now();
};

/// The figures of one /stats document that loadgen follows over time.
struct server_sample {
    double t = 0;           // client time since the run's start, seconds (negative: before it)
    double uptime = 0;      // the server's uptime, seconds
    double cpu = 0;         // user + system CPU seconds, all threads
    double user = 0;        // of which user
    std::uint64_t rss = 0;  // resident bytes
    std::int64_t open = 0;  // open connections
    std::uint64_t messages = 0;
    std::uint64_t wheel_wakeups = 0, wheel_expired = 0, asio_rearms = 0;  // the timers' work so far
    machine_cpu machine;                                                  // read by loadgen when the sample arrived

    [[nodiscard]] static server_sample from(const boost::json::object& stats, double t);
};

/// GET /stats from `endpoint`, over TLS when `tls` is not null (https, `server_name` as SNI);
/// throws boost::system::system_error (or a JSON error) on failure. Bounded: gives up after
/// `timeout`.
boost::asio::awaitable<boost::json::object> fetch_stats(boost::asio::ip::tcp::endpoint endpoint, nanoseconds timeout,
                                                        boost::asio::ssl::context* tls = nullptr,
                                                        const std::string& server_name = {});

}  // namespace loadgen

#endif
