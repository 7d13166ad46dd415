// The demo server: two listeners (raw TCP echo, HTTP/WebSocket), workers (worker.hpp), /stats
// and /metrics, and an orderly stop on SIGINT/SIGTERM.
//
// Threads: the listeners, the signals and the stop run on the thread that calls run() (io_).
// The workers: --threads N, N workers each with an io_context, a wheel and a thread of its own;
// --io-threads N, ONE io_context run by N threads with an idlewheel::wheel_pool of --shards S
// shards, one worker per shard (the shard's strand and wheel). Either way a connection is
// accepted onto its worker's executor (round robin) and everything about it, and every step of
// the stop that touches the worker's sessions or wheel, is posted to that executor.
//
// The stop (first SIGINT/SIGTERM). With --lame-duck D, /healthz answers 503 from the signal
// on and nothing else changes for D (both listeners accept, upgrades are served, sessions run;
// /stats says "lame_duck": true, /metrics idlewheel_demo_lame_duck 1): a balancer that only
// polls readiness takes the process out before the drain. Then:
//  1. the raw-TCP listener closes at once;
//  2. the HTTP listener stays open for plain HTTP only: GET /, /stats and /metrics keep being
//     served, on new and existing keep-alive connections (/stats says "draining": true,
//     /metrics idlewheel_demo_draining 1, /healthz 503); a WebSocket upgrade gets 503 Service Unavailable
//     with Retry-After and Connection: close, and is counted as closed.upgrade_refused;
//  3. the TCP and WebSocket sessions are drained: closed spread over --drain-spread, the
//     longest idle first (WebSocket 1001, sent after the echo of every message read before its turn;
//     a close handshake already under way is left to finish within its --close-timeout; raw TCP:
//     the echo queued then, then a FIN, as tcp_session.hpp says);
//  4. once none of them is left, the HTTP listener closes and the plain-HTTP connections are
//     closed (closed.shutdown); the process exits 0 when every session is gone.
// Bounds (from the drain's start): whatever is still open --close-timeout plus 0.5 s after the
// spread, or at --hard-stop-after if that comes first, or at a second signal (during the
// lame-duck delay too), is closed abruptly (plain HTTP
// and the HTTP listener included); a session that still has not ended 1 s after that is
// abandoned and the process exits 0 without it (wait_for_sessions).
#ifndef IDLEWHEEL_DEMO_SERVER_HPP
#define IDLEWHEEL_DEMO_SERVER_HPP

#include "config.hpp"
#include "sessions.hpp"
#include "tls.hpp"
#include "worker.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <idlewheel/wheel_pool.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace demo {

class server final : public stats_source {
public:
    explicit server(const config& cfg);
    server(const server&) = delete;
    server& operator=(const server&) = delete;
    ~server();  // joins the worker threads (and the --io-threads threads)

    /// Binds both listeners. Throws boost::system::system_error (e.g. address in use).
    void listen();
    /// "listening tcp=HOST:PORT http=HOST:PORT"
    [[nodiscard]] std::string listening_line() const;
    /// --tls: where the certificate came from and its fingerprint (tls.hpp); empty without --tls.
    [[nodiscard]] const std::string& tls_description() const noexcept { return tls_.description; }
    /// Serves until SIGINT/SIGTERM, then stops in bounded time and returns.
    void run();
    /// The /stats document (any thread).
    [[nodiscard]] std::string stats_json() const override;
    /// The /metrics page, Prometheus text format 0.0.4 (any thread).
    [[nodiscard]] std::string metrics_text() const override;
    /// GET /healthz (any thread): false from the first signal on (the lame-duck delay, then the
    /// drain), counted.
    [[nodiscard]] bool health_check() const override;

private:
    struct listener_state {
        asio::ip::tcp::acceptor acceptor;
        asio::steady_timer backoff;
        listener kind;
    };

    void accept(listener_state& l);
    void on_accept(listener_state& l, worker& w, boost::system::error_code ec, asio::ip::tcp::socket socket);
    void wait_for_signal();
    void begin_shutdown(int signal);
    void close_http(bool abrupt);
    [[nodiscard]] bool listener_closed(const listener_state& l) const noexcept;
    void abort_all();
    void wait_for_sessions();
    void join_all();
    // --threads' threads (io_context and wheel each); 0 under --io-threads.
    [[nodiscard]] unsigned worker_threads() const noexcept { return shared_io_ ? 0U : cfg_.threads; }
    [[nodiscard]] bool drain_done() const;
    struct totals;
    [[nodiscard]] totals collect() const;

    static constexpr std::chrono::milliseconds shutdown_grace{500};

    config cfg_;
    tls_setup tls_;  // --tls: the context every worker's HTTP sessions use (before the workers)
    session_starter start_session_;
    asio::io_context io_{1};  // listeners and signals, on the thread that calls run()
    std::atomic<std::int64_t> open_connections_{0};
    std::atomic<std::int64_t> unsent_total_{0};  // every session's unsent echo (--max-backlog-total)
    // --io-threads: the io_context its threads share and the pool of its shards; declared before
    // the workers, which use them (destroyed after them).
    std::unique_ptr<asio::io_context> shared_io_;
    std::unique_ptr<idlewheel::wheel_pool> pool_;
    std::vector<std::unique_ptr<worker>> workers_;
    std::vector<std::thread> io_threads_;  // --io-threads: the threads running shared_io_
    std::unique_ptr<listener_state> tcp_, web_;
    asio::signal_set signals_;
    asio::steady_timer shutdown_timer_;
    asio::steady_timer lame_duck_timer_;  // --lame-duck: from the first signal to the drain
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    std::atomic<std::uint64_t> accepted_{0}, refused_{0}, accept_errors_{0};
    mutable std::atomic<std::uint64_t> healthz_ok_{0}, healthz_unavailable_{0};  // GET /healthz answers
    std::size_t next_worker_ = 0;
    bool signalled_ = false;             // the first signal came (the lame-duck delay, if any, runs)
    std::atomic<bool> unhealthy_{false};  // signalled_, for /healthz on the worker threads
    std::atomic<bool> lame_duck_{false};  // the --lame-duck delay runs (signalled, not yet draining): /stats, /metrics
    bool stopping_ = false;              // the drain began: the TCP listener is closed
    bool http_closed_ = false;           // the HTTP listener is closed, every session asked to close
    std::atomic<bool> draining_{false};  // stopping_, for /stats and /metrics on the worker threads
    bool abrupt_sent_ = false;           // shutdown: the abrupt close was asked for
    steady::time_point signalled_at_{}, abrupt_at_{}, abrupt_sent_at_{};
    bool abandoned_ = false;  // shutdown: sessions still stuck after the abrupt close; exit without them
    unsigned long long fd_soft_ = 0, fd_hard_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::chrono::system_clock::time_point started_wall_ = std::chrono::system_clock::now();
    std::chrono::steady_clock::time_point last_accept_error_log_{};
};

}  // namespace demo

#endif
