// One worker of the demo server: its wheel, its sessions, its counters, all used on one
// executor. With --threads, a worker is an io_context of its own run by its own thread; with
// --io-threads, a shard of the server's idlewheel::wheel_pool: the shard's strand (of the one
// io_context the server's threads share) is its executor and the shard's wheel its wheel. What
// the comments below say happens "on the worker's executor" is on that thread, or on that
// strand: the worker and its sessions never run on two threads at once, and sessions are
// built on that executor, so a session runs on the same strand as its worker and its wheel.
#ifndef IDLEWHEEL_DEMO_WORKER_HPP
#define IDLEWHEEL_DEMO_WORKER_HPP

#include "close_causes.hpp"
#include "config.hpp"
#include "session_kinds.hpp"

#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_pool.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace boost::asio::ssl {
class context;
}

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

namespace demo {

namespace asio = boost::asio;
using steady = std::chrono::steady_clock;

// Written on the worker's executor, read by /stats on any thread: relaxed atomics, one cache
// line per worker so threads do not share lines.
struct alignas(64) worker_counters {
    std::atomic<std::int64_t> open[session_kind_count]{};
    std::atomic<std::uint64_t> closed[close_cause_count]{};
    std::atomic<std::uint64_t> messages{0};
    // WebSocket messages read but never echoed in full: read after the session's close handshake
    // began (Beast discards them), or still queued when the session ended (an abrupt close).
    std::atomic<std::uint64_t> messages_unechoed{0};
    std::atomic<std::uint64_t> going_away{0};  // WebSocket close handshakes begun with 1001 (the drain, --max-lifetime)
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> timer_rearms{0};  // asio mode: steady_timer re-arms (each cancels a wait)

    void opened(session_kind k) noexcept { open[static_cast<unsigned>(k)].fetch_add(1, std::memory_order_relaxed); }
    void became(session_kind from, session_kind to) noexcept {
        open[static_cast<unsigned>(from)].fetch_sub(1, std::memory_order_relaxed);
        opened(to);
    }
    void closed_as(session_kind k, close_cause c) noexcept {
        open[static_cast<unsigned>(k)].fetch_sub(1, std::memory_order_relaxed);
        closed[static_cast<unsigned>(c)].fetch_add(1, std::memory_order_relaxed);
    }
};

// A copy of the worker's wheel statistics, refreshed on the worker's executor (the wheel may
// only be touched there) and read by /stats under the mutex.
struct timer_snapshot {
    idlewheel::wheel_stats wheel;
    idlewheel::liveness_stats liveness;
};

// What the worker can ask of every live session, whatever its kind and timer mode.
class session_base {
public:
    virtual void shutdown() = 0;  // server stopping: close (WebSocket 1001), bounded in time
    virtual void abort() = 0;     // shutdown took too long: close the socket now
    [[nodiscard]] virtual std::size_t unsent_bytes() const noexcept = 0;  // echo queued, not yet written
    virtual void drop_over_budget() = 0;  // --max-backlog-total passed: close now, counted as backlog_budget
    [[nodiscard]] virtual steady::time_point last_active() const noexcept = 0;  // worker::coarse_now at its last read
    // A plain-HTTP session (not a WebSocket): the drain leaves it open, so /stats and /metrics
    // keep answering; it is closed at the end of the drain (server::wait_for_sessions).
    [[nodiscard]] virtual bool plain_http() const noexcept { return false; }

protected:
    ~session_base() = default;
};

// --timers=wheel (timers/wheel_timers.hpp): the times the worker's sessions of each kind share
// for their liveness, from the command line. The wheel policy builds, per worker, one
// idlewheel::member_liveness_config per session type and kind from them (with the worker's
// liveness_stats), once, at the first session of that type (worker::per_session_type): a config
// names its session type, which the worker does not know.
//
// Three kinds. Two for the HTTP port, because a session_liveness cannot turn its heartbeat off
// by itself: an HTTP keep-alive session must not be pinged, so it runs on `http` and moves to
// `websocket` when it upgrades.
struct liveness_options {
    explicit liveness_options(const config& c)
        : tcp(tcp_options(c)), http(http_options(c)), websocket(websocket_options(c)) {}

    // tcp: reader idle; the drain after the client's FIN (--close-timeout). http: the handshake
    // deadline and reader idle from accept, reader idle between requests. websocket: reader
    // idle, heartbeat, the close handshake (--close-timeout).
    idlewheel::session_liveness_options tcp, http, websocket;

    // A time too long for the wheel's tick stops the start (std::invalid_argument from the
    // config), not the first session, whose configs are built from these same times later.
    void check(idlewheel::wheel_timer& wheel) const {
        for (const auto* o : {&tcp, &http, &websocket})
            (void)idlewheel::session_liveness_config(wheel, *o, idlewheel::session_liveness_config::bound_handler{});
    }

    // --close-timeout 0 keeps meaning "at once" (the next tick), not "unbounded" (a 0 turns a
    // session_liveness deadline off).
    static std::chrono::nanoseconds close_time(const config& c) {
        return std::max(c.close_timeout, std::chrono::nanoseconds(1));
    }
    static idlewheel::session_liveness_options tcp_options(const config& c) {
        return {.idle_timeout = c.idle_timeout, .close_timeout = close_time(c)};
    }
    // Reader idle runs from accept in every mode: in the handshake phase beside its deadline
    // (idle_in_handshake), each its own verdict, counted as itself (reader_idle,
    // handshake_timeouts); the deadline when both are due at one look, as --timers=asio.
    static idlewheel::session_liveness_options http_options(const config& c) {
        return {.handshake_timeout = c.handshake_timeout,
                .idle_timeout = c.idle_timeout,
                .close_timeout = close_time(c),
                .idle_in_handshake = true};
    }
    static idlewheel::session_liveness_options websocket_options(const config& c) {
        const bool pings = c.ping_interval > std::chrono::nanoseconds::zero();
        return {.idle_timeout = c.idle_timeout,
                .ping_interval = pings ? c.ping_interval : std::chrono::nanoseconds::zero(),
                .pong_timeout = pings ? c.pong_timeout : std::chrono::nanoseconds::zero(),
                .jitter = pings ? c.ping_jitter : std::chrono::nanoseconds::zero(),
                .close_timeout = close_time(c)};
    }
};

class worker {
    // First, so that they are built before (and destroyed after) what uses them. --threads:
    // the worker's own io_context and wheel; --io-threads: none (the pool's shard).
    std::unique_ptr<asio::io_context> own_io_;
    std::unique_ptr<idlewheel::wheel_timer> own_wheel_;
    asio::any_io_executor executor_;

public:
    // --threads: an io_context and a wheel of its own, run by its own thread (start(), join()).
    worker(const config& c, unsigned i, std::atomic<std::int64_t>& open_connections,
           std::atomic<std::int64_t>& unsent_total)
        : own_io_(std::make_unique<asio::io_context>(1)),
          own_wheel_(std::make_unique<idlewheel::wheel_timer>(*own_io_, idlewheel::wheel_options{.tick = c.tick})),
          executor_(own_io_->get_executor()),
          cfg(c),
          index(i),
          wheel(*own_wheel_),
          open_connections_(open_connections),
          unsent_total_(unsent_total),
          snapshot_timer_(executor_) {
        if (c.timers == timer_mode::wheel) liveness_times.check(wheel);
    }
    // --io-threads: shard `shard` of the server's pool. No thread of its own: the server's
    // threads run the shared io_context, this worker's work on the shard's strand.
    worker(const config& c, unsigned i, std::atomic<std::int64_t>& open_connections,
           std::atomic<std::int64_t>& unsent_total, idlewheel::wheel_pool::shard& shard)
        : executor_(shard.get_executor()),
          cfg(c),
          index(i),
          wheel(shard.wheel()),
          open_connections_(open_connections),
          unsent_total_(unsent_total),
          snapshot_timer_(executor_) {
        if (c.timers == timer_mode::wheel) liveness_times.check(wheel);
    }
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    /// What the worker and its sessions run on: its io_context's executor, or its shard's
    /// strand. Sessions' sockets are accepted on it; anything from elsewhere is posted to it.
    [[nodiscard]] const asio::any_io_executor& get_executor() const noexcept { return executor_; }
    /// --threads: the worker's own io_context; nullptr under --io-threads.
    [[nodiscard]] asio::io_context* own_context() const noexcept { return own_io_.get(); }

    void start() {
        if (!own_io_) {  // a shard: the first refresh on its strand, the shared threads run it
            asio::post(executor_, [this] { refresh_snapshot(); });
            return;
        }
        refresh_snapshot();
        thread_ = std::thread([this] { own_io_->run(); });
    }
    void join() {
        if (thread_.joinable()) thread_.join();
    }

    // On the worker's executor.
    void add(session_base* s) { sessions_.insert(s); }
    void remove(session_base* s) { sessions_.erase(s); }
    [[nodiscard]] std::size_t session_count() const { return sessions_.size(); }
    // Server stopping, the graceful step: every TCP and WebSocket session is asked to close
    // (WebSocket 1001), spread uniformly over `spread` (0: all at once), the longest idle first.
    // Plain-HTTP sessions stay (and new ones are still started): /stats and /metrics answer
    // during the drain, upgrades get 503 (web_session). shutdown_all() ends them afterwards.
    void drain(std::chrono::nanoseconds spread) {
        draining = true;
        drain_order_.clear();
        for (auto* s : sessions_)
            if (!s->plain_http()) drain_order_.push_back(s);
        std::stable_sort(drain_order_.begin(), drain_order_.end(), [](const session_base* a, const session_base* b) {
            return a->last_active() < b->last_active();
        });
        drain_started_ = steady::now();
        drain_spread_ = spread;
        drain_next_ = 0;
        drain_begun.store(true, std::memory_order_release);
        drain_step();
    }
    // Server stopping, the last step: every session, plain HTTP included, is closed now
    // (`abrupt`: its socket dropped; otherwise WebSocket 1001) and no new session starts.
    void shutdown_all(bool abrupt) {
        draining = true;
        stopping = true;
        snapshot_timer_.cancel();
        drain_timer_.cancel();
        auto copy = sessions_;  // a session may remove itself
        for (auto* s : copy) {
            if (abrupt)
                s->abort();
            else
                s->shutdown();
        }
    }

    // Unsent echo, server-wide, against --max-backlog-total.
    void unsent_added(std::size_t n) noexcept {
        unsent_total_.fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed);
    }
    void unsent_removed(std::size_t n) noexcept {
        unsent_total_.fetch_sub(static_cast<std::int64_t>(n), std::memory_order_relaxed);
    }
    // The server holds more unsent echo than --max-backlog-total: drops this worker's sessions
    // holding the most unsent bytes, largest first, until it is back within the budget (or
    // this worker holds none). A scan of this worker's sessions per drop: it runs only past the
    // budget, and every drop frees at least one queued message.
    void enforce_backlog_budget() {
        while (unsent_total_.load(std::memory_order_relaxed) > static_cast<std::int64_t>(cfg.max_backlog_total)) {
            session_base* largest = nullptr;
            std::size_t most = 0;
            for (auto* s : sessions_) {
                if (const auto n = s->unsent_bytes(); n > most) {
                    most = n;
                    largest = s;
                }
            }
            if (largest == nullptr) return;
            largest->drop_over_budget();
        }
    }
    [[nodiscard]] bool over_backlog_budget() const noexcept {
        return unsent_total_.load(std::memory_order_relaxed) > static_cast<std::int64_t>(cfg.max_backlog_total);
    }

    // A session ended: one connection slot free again (see --max-connections).
    void release_connection() noexcept { open_connections_.fetch_sub(1, std::memory_order_relaxed); }

    // The server's last step, once every session has ended: the wheel figures as they are now,
    // so the final stats document holds no wheel snapshot older than its close counters. On
    // the worker's executor.
    void take_last_snapshot() { copy_snapshot(); }

    [[nodiscard]] timer_snapshot snapshot() const {
        std::lock_guard lock(snapshot_mutex_);
        return snapshot_;
    }

    // What a timer policy keeps for all of this worker's sessions of one type (--timers=wheel:
    // the type's liveness configs, which name the session type, so the worker cannot build
    // them): one T per T, made as T(*this) by the first call, on the worker's executor, and
    // kept until the worker goes.
    template <class T>
    [[nodiscard]] T& per_session_type() {
        static const std::size_t slot = next_slot().fetch_add(1, std::memory_order_relaxed);
        if (slot >= per_type_.size()) per_type_.resize(slot + 1);
        if (!per_type_[slot]) per_type_[slot] = std::make_shared<T>(*this);
        return *static_cast<T*>(per_type_[slot].get());
    }

    const config& cfg;
    // --tls: the server's TLS context (tls.hpp), shared by every worker; null without --tls.
    // Set before start(), never changed after.
    boost::asio::ssl::context* tls_context = nullptr;
    const unsigned index;
    idlewheel::wheel_timer& wheel;               // used by --timers=wheel; idle (never armed) otherwise
    idlewheel::liveness_stats liveness;          // what this worker's liveness objects decided (wheel mode)
    const liveness_options liveness_times{cfg};  // the times of the sessions' liveness (wheel mode)
    worker_counters counters;
    bool draining = false;                 // on the worker's executor: drain() began; no TCP / WebSocket session starts
    bool stopping = false;                 // on the worker's executor: shutdown_all() ran; no session starts
    std::atomic<bool> drain_begun{false};  // drain() ran (read by the server's thread)
    std::array<char, 64 * 1024> scratch{};  // read buffer shared by this worker's TCP sessions
    // steady::now() as of the last snapshot (every 250 ms): what sessions stamp their last read
    // with, for the drain's "idle first" order, without a clock read per read.
    std::atomic<steady::time_point> coarse_now{steady::now()};

private:
    static std::atomic<std::size_t>& next_slot() noexcept {  // per_session_type's slots, one per T, process-wide
        static std::atomic<std::size_t> next{0};
        return next;
    }
    std::vector<std::shared_ptr<void>> per_type_;  // after `liveness`: a config counts into it

    // The drain's i-th of n sessions closes at spread * i / n after the drain began.
    void drain_step() {
        const auto n = drain_order_.size();
        const auto due = [&](std::size_t i) {
            return drain_started_ + std::chrono::duration_cast<steady::duration>(
                                        drain_spread_ * static_cast<std::int64_t>(i) / static_cast<std::int64_t>(n));
        };
        const auto now = steady::now();
        while (drain_next_ < n && due(drain_next_) <= now) {
            auto* s = drain_order_[drain_next_++];
            if (sessions_.count(s) != 0) s->shutdown();  // not if it ended meanwhile
        }
        if (drain_next_ >= n) return;
        drain_timer_.expires_at(due(drain_next_));
        drain_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) drain_step();
        });
    }

    void refresh_snapshot() {
        coarse_now.store(steady::now(), std::memory_order_relaxed);
        copy_snapshot();
        if (stopping) return;
        snapshot_timer_.expires_after(std::chrono::milliseconds(250));
        snapshot_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) refresh_snapshot();
        });
    }

    void copy_snapshot() {
        std::lock_guard lock(snapshot_mutex_);
        snapshot_.wheel = wheel.stats();
        snapshot_.liveness = liveness;
    }

    std::atomic<std::int64_t>& open_connections_;
    std::atomic<std::int64_t>& unsent_total_;
    std::unordered_set<session_base*> sessions_;
    asio::steady_timer snapshot_timer_;
    asio::steady_timer drain_timer_{executor_};
    std::vector<session_base*> drain_order_;
    steady::time_point drain_started_{};
    std::chrono::nanoseconds drain_spread_{};
    std::size_t drain_next_ = 0;
    mutable std::mutex snapshot_mutex_;
    timer_snapshot snapshot_;
    std::thread thread_;
};

}  // namespace demo

#endif
