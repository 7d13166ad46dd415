// The clients: one `connection` object per connection (ws_connection, tcp_connection in
// connection.cpp), living on one connection_thread (its own io_context),
// each writing only its own record. Records are read after the threads have been joined.
#ifndef IDLEWHEEL_LOADGEN_CONNECTION_HPP
#define IDLEWHEEL_LOADGEN_CONNECTION_HPP

#include "scenario.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace loadgen {

namespace asio = boost::asio;

/// How a connection ended, as the client saw it.
enum class outcome : std::uint8_t {
    open,              // still open when the run ended (then loadgen closed it)
    connect_failed,    // TCP connect failed
    handshake_failed,  // TLS handshake or WebSocket upgrade failed
    idle_close,        // WebSocket close frame 1000 "idle timeout" (the server's idle kick)
    other_close,       // any other WebSocket close frame
    dropped,  // the server closed the socket, no close frame: EOF or reset (TCP: the idle kick; WebSocket: the heartbeat's drop)
    error,  // another transport error
    count
};
inline constexpr std::array<std::string_view, static_cast<std::size_t>(outcome::count)> outcome_names{
    "open", "connect_failed", "handshake_failed", "ws_idle_close", "ws_other_close", "dropped", "error"};
[[nodiscard]] constexpr std::string_view name(outcome o) noexcept { return outcome_names[static_cast<std::size_t>(o)]; }

/// One connection's story. Times are nanoseconds since the run's start (t0); -1 = never.
struct record {
    role who = role::idle;
    outcome how = outcome::open;
    std::uint16_t close_code = 0;
    std::int64_t launched = -1;   // connect started
    std::int64_t connected = -1;  // TCP connected
    std::int64_t ready = -1;      // TCP connected / WebSocket handshake done
    // The server's idle (or heartbeat) clock for this client started between these two times:
    // idle: its one message was written at ref_low, its echo came back at ref_high;
    // pinger, dead: the handshake began at ref_low (with --tls: the TLS handshake) and the
    // WebSocket upgrade completed at ref_high.
    // stalled: the connect began at ref_low, its half upgrade request was written at ref_high.
    std::int64_t ref_low = -1;
    std::int64_t ref_high = -1;
    std::int64_t closed = -1;  // closed by the server (WebSocket: when its close frame arrived)
    std::int64_t last_sent = -1;  // its last message was written (--expect-close ...@message)
    std::uint32_t sent = 0;
    std::uint32_t echoed = 0;
    std::uint32_t late_sends = 0;  // active: the previous echo was not back when the next send was due
    // WebSocket messages carry a sequence number (the first 8 bytes, when --message-size >= 8).
    std::uint32_t messages = 0;       // distinct messages (sequence numbers) sent; `sent` counts resends too
    std::uint32_t echoed_ok = 0;      // echoes of the awaited sequence number
    std::uint32_t echo_mismatch = 0;  // echoes of another sequence number (out of order, duplicate, garbage)
    std::uint32_t resent = 0;         // --reconnect: messages sent again on the new connection
    std::uint32_t reconnects = 0;     // --reconnect: connections after the first that got up
    std::uint8_t pending_at_end = 0;  // a message whose echo had not come when the run ended
    std::string detail;            // close reason or error message, when it is not the expected one
};

/// Counters for the live progress line: written by client threads, read by the control thread.
struct live_counters {
    std::atomic<std::int64_t> connecting{0};  // launched, not yet ready or failed
    std::atomic<std::uint64_t> ready{0};
    std::atomic<std::uint64_t> failed{0};
    std::atomic<std::uint64_t> errors{0};  // failed + transport errors during the run
    std::atomic<std::uint64_t> sent{0};
    std::atomic<std::uint64_t> echoed{0};
    std::array<std::atomic<std::uint64_t>, role_count> closed_by_server{};
    std::array<std::atomic<std::uint64_t>, role_count> ready_by_role{};   // `ready`, per role
    std::array<std::atomic<std::uint64_t>, role_count> failed_by_role{};  // `failed`, per role
    // --reconnect: why a client connected again (the close that ended its connection, or the
    // failed attempt that is retried).
    std::atomic<std::uint64_t> going_away{0};            // close frame 1001
    std::atomic<std::uint64_t> retry_connect_failed{0};  // an attempt's TCP connect failed
    std::atomic<std::uint64_t> retry_upgrade_failed{0};  // an attempt's upgrade failed (e.g. 503 from a draining server)
    std::atomic<std::uint64_t> retry_dropped{0};         // an attempt's connection ended before it was up
};

/// What every client needs to know about the run.
struct run_context {
    const scenario& plan;
    clock::time_point t0;
    asio::ip::tcp::endpoint endpoint;        // the echo port
    std::vector<asio::ip::address> sources;  // client addresses, used round robin
    std::string host_header;                 // "127.0.0.1:PORT" for the WebSocket upgrade
    asio::ssl::context* tls = nullptr;       // --tls: every WebSocket client's context (tls_client.hpp)
    live_counters counters;

    [[nodiscard]] std::int64_t now() const noexcept { return (clock::now() - t0).count(); }
};

class connection;

/// One of loadgen's threads: an io_context, the connections it runs, and its share of the
/// measurements.
class connection_thread {
public:
    explicit connection_thread(run_context& run);
    connection_thread(const connection_thread&) = delete;
    connection_thread& operator=(const connection_thread&) = delete;
    ~connection_thread();

    void start();
    /// Starts connection `rec` from `source` (any thread: posts onto this thread).
    void launch(record& rec, std::uint64_t phase_seed, asio::ip::address source);
    /// --reconnect: what a client carries from one connection to the next.
    struct carry {
        std::uint64_t next_seq = 0;     // the next new sequence number
        std::uint64_t awaited_seq = 0;  // the message in flight (when resend)
        bool resend = false;            // its echo had not come back: send it again first
        unsigned attempt = 0;           // 0: a first attempt; k: the k-th attempt (after k - 1 failed ones or a 1001)
        bool was_up = false;            // the client has been connected (upgraded) before
        std::int64_t closed_at = -1;    // when the close that started the reconnect arrived
    };
    /// --reconnect (on this thread): connection `slot` is replaced by a new one for `rec`.
    void relaunch(std::size_t slot, record& rec, std::uint64_t phase_seed, asio::ip::address source, carry c);
    [[nodiscard]] bool stopping() const noexcept { return stopping_; }
    std::vector<std::uint32_t> reconnect_us;       // --reconnect: server's close frame -> upgraded again
    std::vector<std::uint32_t> reconnect_dead_us;  // the same for dead clients (they wait out --close-timeout)
    std::mt19937_64 rng{0x5eed};              // --reconnect: the back-off's jitter
    // WebSocket messages of at least 8 bytes carry a sequence number.
    [[nodiscard]] bool stamp_messages() const noexcept {
        return run.plan.proto == protocol::ws && run.plan.message_size >= 8;
    }
    /// The run is over: close every connection from our side (any thread).
    void stop_all();
    /// Closed loop: active clients begin sending (any thread). Until then they hold their first
    /// message, so the connect phase is not slowed by a saturating load.
    void release_closed_loop();
    /// No more work will come: the thread returns once its connections are closed. Forces the
    /// io_context to stop if it has not after `grace`.
    void finish(nanoseconds grace);
    void join();

    asio::io_context io{1};
    run_context& run;
    std::vector<std::uint32_t> rtt_us;  // active clients' echo round trips
    std::vector<std::uint32_t> lag_us;  // how late this thread's loop ran a 20 ms timer: is loadgen keeping up?
    std::vector<char> scratch;          // read sink for bytes nobody looks at
    std::string payload;                // what every client sends
    bool closed_loop_released = false;  // on this thread

private:
    void watch_lag(clock::time_point due);

    std::vector<std::shared_ptr<connection>> connections_;  // on this thread
    asio::steady_timer lag_timer_{io};
    bool stopping_ = false;  // on this thread
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::thread thread_;
};

}  // namespace loadgen

#endif
