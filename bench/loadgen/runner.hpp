// The live run: paces the connects, samples /stats, shows progress, stops at --duration, and
// hands back everything that was recorded.
#ifndef IDLEWHEEL_LOADGEN_RUNNER_HPP
#define IDLEWHEEL_LOADGEN_RUNNER_HPP

#include "connection.hpp"
#include "scenario.hpp"
#include "server_stats.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <vector>

namespace loadgen {

/// What a run recorded, before analysis. Times in seconds are since the run's start.
struct run_data {
    std::vector<record> records;
    std::vector<std::uint32_t> rtt_us;
    std::vector<std::uint32_t> lag_us;        // client threads' loop lag
    double client_cpu = 0;                    // loadgen's own CPU seconds during the run
    std::vector<server_sample> samples;       // every --stats-interval
    boost::json::object before, full, after;  // /stats before connecting, with every connection up, at the end
    double t_full = -1;                       // when `full` was read (-1: never)
    double t_after = 0;                       // when `after` was read
    double connect_phase = 0;                 // when the last connection was up (or had failed)
    std::uint64_t ready_at_full = 0;          // connections up when `full` was read
    std::int64_t stopped_at = 0;              // ns: when loadgen began closing its connections
    std::uint64_t stats_errors = 0;
    nanoseconds idle_timeout{0};  // the server's, from /stats unless given
    nanoseconds tick{0};
    unsigned fd_limit = 0;
    // --reconnect
    std::vector<std::uint32_t> reconnect_us, reconnect_dead_us;
    std::uint64_t going_away = 0, retry_connect_failed = 0, retry_upgrade_failed = 0;
};

/// Runs `plan` against the server. Throws std::runtime_error if the server cannot be reached
/// or its settings contradict the plan.
[[nodiscard]] run_data run(const scenario& plan);

}  // namespace loadgen

#endif
