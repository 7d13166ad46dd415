#include "server.hpp"

#include "exposition.hpp"
#include "log.hpp"
#include "program_support/fd_limit.hpp"

#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace demo {

namespace json = boost::json;
using asio::ip::tcp;

namespace {

std::uint64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Entries of /proc/self/fd, less the one the directory stream itself holds.
std::uint64_t open_descriptors() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return 0;
    std::uint64_t n = 0;
    while (const dirent* e = ::readdir(dir))
        if (e->d_name[0] != '.') ++n;
    ::closedir(dir);
    return n > 0 ? n - 1 : 0;
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

// SO_REUSEPORT as an Asio settable socket option (Asio has no public one): every process that
// binds the port with it gets its own accept queue, and the kernel spreads new connections
// over them (Linux >= 3.9).
class reuse_port {
public:
    explicit reuse_port(bool on) noexcept : value_(on ? 1 : 0) {}
    template <class Protocol>
    int level(const Protocol&) const noexcept {
        return SOL_SOCKET;
    }
    template <class Protocol>
    int name(const Protocol&) const noexcept {
        return SO_REUSEPORT;
    }
    template <class Protocol>
    const int* data(const Protocol&) const noexcept {
        return &value_;
    }
    template <class Protocol>
    std::size_t size(const Protocol&) const noexcept {
        return sizeof(value_);
    }

private:
    int value_;
};

// /stats `close_causes`: the table of close_causes.hpp, in its order, for the dashboard's rows
// and for clients that want to know what a cause of `closed` means.
json::array close_cause_table() {
    json::array causes;
    causes.reserve(close_cause_count);
    for (const auto& c : close_causes)
        causes.push_back(json::object{
            {"name", c.name}, {"label", c.label}, {"help", c.help}, {"error", c.outcome == close_outcome::error}});
    return causes;
}

// The liveness objects' counters the demo reports, each under one name: /stats `wheel.<name>`
// and /metrics `idlewheel_demo_liveness_<name>_total`. (liveness_stats' writer_idle and
// all_idle stay 0 here: the demo watches reader idleness only.)
struct liveness_counter {
    std::string_view name;
    std::uint64_t idlewheel::liveness_stats::*value;
    std::string_view help;  // of the /metrics family
};
constexpr liveness_counter liveness_counters[] = {
    {"reader_idle", &idlewheel::liveness_stats::reader_idle,
     "Reader-idle reports of the sessions' idle watches (wheel mode)."},
    {"pings_sent", &idlewheel::liveness_stats::pings_sent, "WebSocket pings the heartbeats asked for (wheel mode)."},
    {"dead_peers", &idlewheel::liveness_stats::dead_peers, "Peers the heartbeats declared dead (wheel mode)."},
    {"handshake_timeouts", &idlewheel::liveness_stats::handshake_timeouts, "Handshake deadlines expired (wheel mode)."},
    {"close_timeouts", &idlewheel::liveness_stats::close_timeouts,
     "Close deadlines expired: WebSocket close handshakes, TCP drains after the client's FIN (wheel mode)."},
    {"operation_timeouts", &idlewheel::liveness_stats::operation_timeouts,
     "Other deadlines expired: --max-lifetime (wheel mode)."},
};

bool out_of_descriptors(const boost::system::error_code& ec) {
    return ec == boost::system::errc::too_many_files_open || ec == boost::system::errc::too_many_files_open_in_system ||
           ec == boost::system::errc::no_buffer_space || ec == boost::system::errc::not_enough_memory;
}

}  // namespace

server::server(const config& cfg)
    : cfg_(cfg),
      tls_(cfg.tls ? make_tls_context(cfg) : tls_setup{}),
      start_session_(session_starter_for(cfg.timers)),
      signals_(io_, SIGINT, SIGTERM),
      shutdown_timer_(io_),
      lame_duck_timer_(io_) {
    // The process may hold at most the hard limit of descriptors; start with all of it.
    const program_support::fd_limit fds = program_support::raise_fd_limit();
    fd_soft_ = fds.soft;
    fd_hard_ = fds.hard;
    if (cfg_.io_threads > 0) {
        shared_io_ = std::make_unique<asio::io_context>(static_cast<int>(cfg_.io_threads));
        idlewheel::wheel_pool_options options;
        options.shards = cfg_.shards;
        options.wheel.tick = cfg_.tick;
        pool_ = std::make_unique<idlewheel::wheel_pool>(*shared_io_, options);
        for (std::size_t i = 0; i < pool_->size(); ++i)
            workers_.push_back(
                std::make_unique<worker>(cfg_, static_cast<unsigned>(i), open_connections_, unsent_total_, (*pool_)[i]));
    } else {
        for (unsigned i = 0; i < cfg_.threads; ++i)
            workers_.push_back(std::make_unique<worker>(cfg_, i, open_connections_, unsent_total_));
    }
    for (auto& w : workers_) w->tls_context = tls_.context.get();
}

server::~server() { join_all(); }

void server::join_all() {
    for (auto& w : workers_) w->join();
    for (auto& t : io_threads_)
        if (t.joinable()) t.join();
}

void server::listen() {
    const auto address = asio::ip::make_address(cfg_.address);
    const auto open = [&](unsigned short port, listener kind) {
        auto l = std::make_unique<listener_state>(listener_state{tcp::acceptor(io_), asio::steady_timer(io_), kind});
        const tcp::endpoint ep(address, port);
        l->acceptor.open(ep.protocol());
        l->acceptor.set_option(asio::socket_base::reuse_address(true));
        if (cfg_.reuse_port) l->acceptor.set_option(reuse_port(true));
        l->acceptor.bind(ep);
        l->acceptor.listen(asio::socket_base::max_listen_connections);
        return l;
    };
    tcp_ = open(cfg_.tcp_port, listener::tcp);
    web_ = open(cfg_.http_port, listener::web);
}

std::string server::listening_line() const {
    const auto t = tcp_->acceptor.local_endpoint();
    const auto h = web_->acceptor.local_endpoint();
    return "listening tcp=" + t.address().to_string() + ":" + std::to_string(t.port()) +
           " http=" + h.address().to_string() + ":" + std::to_string(h.port());
}

void server::run() {
    for (auto& w : workers_) {
        if (asio::io_context* own = w->own_context()) work_.push_back(asio::make_work_guard(*own));
        w->start();
    }
    if (shared_io_) {
        work_.push_back(asio::make_work_guard(*shared_io_));
        for (unsigned i = 0; i < cfg_.io_threads; ++i) io_threads_.emplace_back([this] { shared_io_->run(); });
    }
    accept(*tcp_);
    accept(*web_);
    wait_for_signal();
    io_.run();
    join_all();
    if (abandoned_) {
        log("stopped");
        std::fflush(stderr);
        std::_Exit(0);  // the stuck sessions' memory and sockets go with the process
    }
}

void server::accept(listener_state& l) {
    worker& w = *workers_[next_worker_++ % workers_.size()];
    // The socket belongs to the worker's executor from the start (its io_context, or its shard's
    // strand: the session's handlers then run on the strand of its wheel): no migration later.
    l.acceptor.async_accept(w.get_executor(), [this, &l, &w](boost::system::error_code ec, tcp::socket socket) {
        on_accept(l, w, ec, std::move(socket));
    });
}

void server::on_accept(listener_state& l, worker& w, boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || listener_closed(l)) return;
    if (ec) {
        accept_errors_.fetch_add(1, std::memory_order_relaxed);
        if (out_of_descriptors(ec)) {
            // The pending connection stays in the backlog and the listener stays readable:
            // accepting again at once would spin. Back off and let sessions free descriptors.
            const auto now = std::chrono::steady_clock::now();
            if (now - last_accept_error_log_ > std::chrono::seconds(1)) {
                log("accept: ", ec.message(), " (open connections ", open_connections_.load(), "); backing off");
                last_accept_error_log_ = now;
            }
            l.backoff.expires_after(std::chrono::milliseconds(100));
            l.backoff.async_wait([this, &l](boost::system::error_code e) {
                if (!e && !listener_closed(l)) accept(l);
            });
            return;
        }
        log("accept: ", ec.message());
        return accept(l);
    }
    accepted_.fetch_add(1, std::memory_order_relaxed);
    if (open_connections_.load(std::memory_order_relaxed) >= static_cast<std::int64_t>(cfg_.max_connections)) {
        refused_.fetch_add(1, std::memory_order_relaxed);
        boost::system::error_code ignored;
        socket.close(ignored);  // accepted and closed at once: the client sees EOF, not a hang
        return accept(l);
    }
    open_connections_.fetch_add(1, std::memory_order_relaxed);
    asio::post(w.get_executor(), [this, &w, kind = l.kind, s = std::move(socket)]() mutable {
        if (w.stopping || (kind == listener::tcp && w.draining)) {
            w.release_connection();
            return;
        }
        start_session_(kind, w, *this, std::move(s));
    });
    accept(l);
}

bool server::listener_closed(const listener_state& l) const noexcept {
    return l.kind == listener::tcp ? stopping_ : http_closed_;
}

void server::wait_for_signal() {
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
        if (ec) return;
        if (!signalled_) {
            signalled_ = true;
            signalled_at_ = steady::now();
            unhealthy_.store(true, std::memory_order_relaxed);
            wait_for_signal();  // a second signal means: stop now (cancelled once everything is gone)
            if (cfg_.lame_duck.count() <= 0) return begin_shutdown(sig);
            log("signal ", sig, ": lame duck for ", std::chrono::duration<double>(cfg_.lame_duck).count(),
                " s (/healthz answers 503, everything else is served), then the drain");
            lame_duck_.store(true, std::memory_order_relaxed);
            lame_duck_timer_.expires_after(cfg_.lame_duck);
            lame_duck_timer_.async_wait([this, sig](boost::system::error_code e) {
                if (!e && !stopping_) begin_shutdown(sig);
            });
        } else if (!abrupt_sent_) {
            log("signal ", sig, " again: hard stop");
            lame_duck_timer_.cancel();
            if (!stopping_) begin_shutdown(sig);
            abort_all();
        }
    });
}

// The first signal (see server.hpp): the TCP listener closes at once; the TCP and WebSocket
// sessions are closed spread over --drain-spread (idle ones first, see worker::drain) while
// plain HTTP is still served; once they are gone (drain_done), close_http() ends the rest.
// Sessions still open --close-timeout plus a grace period after the spread (or at
// --hard-stop-after, if that comes first) are closed abruptly.
void server::begin_shutdown(int signal) {
    stopping_ = true;
    draining_.store(true, std::memory_order_relaxed);
    lame_duck_.store(false, std::memory_order_relaxed);
    log("signal ", signal, ": stopping (", open_connections_.load(), " open connections",
        cfg_.drain_spread.count() > 0 ? ", closing them over --drain-spread" : "",
        "; HTTP still served until the drain is done)");
    boost::system::error_code ignored;
    tcp_->acceptor.close(ignored);
    tcp_->backoff.cancel();
    const auto now = steady::now();
    abrupt_at_ = now + cfg_.drain_spread + cfg_.close_timeout + shutdown_grace;
    // --hard-stop-after counts from the signal, the lame-duck delay included.
    if (cfg_.hard_stop_after.count() > 0) abrupt_at_ = std::min(abrupt_at_, signalled_at_ + cfg_.hard_stop_after);
    for (auto& w : workers_)
        asio::post(w->get_executor(), [&w = *w, spread = cfg_.drain_spread] { w.drain(spread); });
    wait_for_sessions();
}

// The drain is over when every worker has begun it (from then on no session of its becomes a
// WebSocket) and no TCP or WebSocket session is left.
bool server::drain_done() const {
    for (const auto& w : workers_) {
        if (!w->drain_begun.load(std::memory_order_acquire)) return false;
        const auto& open = w->counters.open;
        if (open[static_cast<unsigned>(session_kind::tcp)].load(std::memory_order_relaxed) > 0 ||
            open[static_cast<unsigned>(session_kind::websocket)].load(std::memory_order_relaxed) > 0)
            return false;
    }
    return true;
}

// The last step: no new connection on the HTTP port; every session left (plain HTTP, or one
// that raced the drain) is closed now, abruptly or gracefully.
void server::close_http(bool abrupt) {
    if (!http_closed_) {
        http_closed_ = true;
        boost::system::error_code ignored;
        web_->acceptor.close(ignored);
        web_->backoff.cancel();
    }
    for (auto& w : workers_) asio::post(w->get_executor(), [&w = *w, abrupt] { w.shutdown_all(abrupt); });
}

void server::abort_all() {
    abrupt_sent_ = true;
    abrupt_sent_at_ = steady::now();
    log("shutdown: closing ", open_connections_.load(), " sessions abruptly");
    close_http(true);
}

// Polls until every session is gone, and makes the stop bounded whatever the clients do: the
// abrupt close at abrupt_at_ (or at a second signal), and then, if a session still has not
// ended two grace periods after its socket was closed (an operation parked inside Beast that
// never resumes), the workers are stopped and the process exits 0 without it. It does not
// destroy the stuck sessions (their handlers would outlive their worker's wheel): see run().
void server::wait_for_sessions() {
    if (!http_closed_ && drain_done()) {
        log("drain done: closing the HTTP listener and ", open_connections_.load(), " HTTP connections");
        close_http(false);
    }
    if (http_closed_ && open_connections_.load() == 0) {
        // Every session has ended: each worker copies its wheel figures once more, on its own
        // executor, before its thread runs out of work (main.cpp's final stats document reads
        // them after the join, so they are never older than its close counters).
        for (auto& w : workers_) asio::post(w->get_executor(), [&w = *w] { w.take_last_snapshot(); });
        work_.clear();
        signals_.cancel();  // no second signal to wait for: io_ runs out of work
        log("stopped");
        return;
    }
    const auto now = steady::now();
    if (!abrupt_sent_ && now >= abrupt_at_) abort_all();
    if (abrupt_sent_ && now >= abrupt_sent_at_ + 2 * shutdown_grace) {
        log("shutdown: ", open_connections_.load(),
            " sessions did not end after their sockets were closed; stopping anyway");
        abandoned_ = true;
        signals_.cancel();
        for (auto& w : workers_)
            if (asio::io_context* own = w->own_context()) own->stop();
        if (shared_io_) shared_io_->stop();
        return;  // io_ runs out of work: run() returns
    }
    shutdown_timer_.expires_after(std::chrono::milliseconds(20));
    shutdown_timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) wait_for_sessions();
    });
}

// Every worker's counters and latest timer snapshot, summed.
struct server::totals {
    std::int64_t open_by_kind[session_kind_count] = {};
    std::uint64_t closed_by_cause[close_cause_count] = {};
    std::uint64_t messages = 0, messages_unechoed = 0, going_away = 0, bytes = 0, rearms = 0;
    idlewheel::wheel_stats wheel;  // summed (worst_lateness: the largest)
    idlewheel::liveness_stats liveness;
};

server::totals server::collect() const {
    totals t;
    for (const auto& w : workers_) {
        const auto& c = w->counters;
        for (std::size_t k = 0; k < session_kind_count; ++k)
            t.open_by_kind[k] += c.open[k].load(std::memory_order_relaxed);
        for (std::size_t k = 0; k < close_cause_count; ++k)
            t.closed_by_cause[k] += c.closed[k].load(std::memory_order_relaxed);
        t.messages += c.messages.load(std::memory_order_relaxed);
        t.messages_unechoed += c.messages_unechoed.load(std::memory_order_relaxed);
        t.going_away += c.going_away.load(std::memory_order_relaxed);
        t.bytes += c.bytes.load(std::memory_order_relaxed);
        t.rearms += c.timer_rearms.load(std::memory_order_relaxed);
        const auto snap = w->snapshot();
        t.wheel += snap.wheel;  // counters add, worst_lateness the largest, the histogram adds
        t.liveness += snap.liveness;
    }
    return t;
}

bool server::health_check() const {
    const bool serving = !unhealthy_.load(std::memory_order_relaxed);
    (serving ? healthz_ok_ : healthz_unavailable_).fetch_add(1, std::memory_order_relaxed);
    return serving;
}

std::string server::stats_json() const {
    const totals t = collect();
    json::object open, closed, wheel;
    for (const auto& k : session_kinds) open[k.name] = t.open_by_kind[static_cast<std::size_t>(k.kind)];
    for (const auto& c : close_causes) closed[c.name] = t.closed_by_cause[static_cast<std::size_t>(c.cause)];
    wheel["pending"] = t.wheel.pending;
    wheel["wakeups"] = t.wheel.wakeups;
    wheel["idle_wakeups"] = t.wheel.idle_wakeups;
    wheel["scheduled"] = t.wheel.scheduled;
    wheel["expired"] = t.wheel.expired;
    wheel["cancelled"] = t.wheel.cancelled;
    wheel["worst_lateness_us"] = static_cast<double>(t.wheel.worst_lateness.count()) / 1e3;
    for (const auto& c : liveness_counters) wheel[c.name] = t.liveness.*c.value;

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    json::object process{{"rss_bytes", resident_bytes()},
                         {"cpu_user_s", seconds(ru.ru_utime)},
                         {"cpu_system_s", seconds(ru.ru_stime)},
                         {"fd_soft_limit", fd_soft_},
                         {"fd_hard_limit", fd_hard_}};
    json::object doc{{"timers", to_string(cfg_.timers)},
                     {"threads", worker_threads()},
                     {"io_threads", cfg_.io_threads},
                     {"tls", cfg_.tls},
                     {"shards", pool_ ? pool_->size() : std::size_t{0}},
                     {"tick_ms", static_cast<double>(cfg_.tick.count()) / 1e6},
                     {"idle_timeout_ms", static_cast<double>(cfg_.idle_timeout.count()) / 1e6},
                     {"uptime_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()},
                     {"lame_duck", lame_duck_.load(std::memory_order_relaxed)},
                     {"draining", draining_.load(std::memory_order_relaxed)},
                     {"open", std::move(open)},
                     {"open_connections", open_connections_.load(std::memory_order_relaxed)},
                     {"accepted", accepted_.load(std::memory_order_relaxed)},
                     {"refused", refused_.load(std::memory_order_relaxed)},
                     {"accept_errors", accept_errors_.load(std::memory_order_relaxed)},
                     {"closed", std::move(closed)},
                     {"close_causes", close_cause_table()},
                     {"messages", t.messages},
                     {"messages_unechoed", t.messages_unechoed},
                     {"websocket_going_away", t.going_away},
                     {"healthz", json::object{{"ok", healthz_ok_.load(std::memory_order_relaxed)},
                                              {"unavailable", healthz_unavailable_.load(std::memory_order_relaxed)}}},
                     {"bytes", t.bytes},
                     {"asio_timer_rearms", t.rearms},
                     {"unsent_bytes", unsent_total_.load(std::memory_order_relaxed)},
                     {"max_backlog_total", cfg_.max_backlog_total},
                     {"wheel", std::move(wheel)},
                     {"process", std::move(process)}};
    return json::serialize(doc);
}

// GET /metrics. Every family is always present, whatever --timers: under asio and none the
// wheel is never armed and the liveness objects do not exist, so their families read 0 (the
// close causes count the outcomes in every mode).
std::string server::metrics_text() const {
    const totals t = collect();
    constexpr std::string_view p = "idlewheel_demo_";
    exposition out;
    std::string name;
    const auto family = [&](std::string_view suffix, std::string_view type,
                            std::string_view help) -> const std::string& {
        name.assign(p).append(suffix);
        out.family(name, type, help);
        return name;
    };
    const auto counter = [&](std::string_view suffix, std::string_view help, std::uint64_t v) {
        out.sample(family(suffix, "counter", help), v);
    };
    const auto gauge = [&](std::string_view suffix, std::string_view help, auto v) {
        out.sample(family(suffix, "gauge", help), v);
    };

    out.sample(family("info", "gauge", "The demo server's timer mode (--timers); always 1."),
               {{"timers", to_string(cfg_.timers)}}, std::uint64_t{1});
    gauge("worker_threads", "io_context threads (--threads), each with its own wheel; 0 under --io-threads.",
          std::uint64_t{worker_threads()});
    gauge("io_threads", "Threads running the one shared io_context (--io-threads); 0 under --threads.",
          std::uint64_t{cfg_.io_threads});
    gauge("shards", "--io-threads: the wheel_pool's shards (strands, each with a wheel and a worker); 0 under --threads.",
          std::uint64_t{pool_ ? pool_->size() : 0U});
    gauge("lame_duck",
          "1 during the --lame-duck delay (from the first SIGTERM/SIGINT to the drain): /healthz answers 503, all else is served.",
          std::uint64_t{lame_duck_.load(std::memory_order_relaxed) ? 1U : 0U});
    gauge("draining",
          "1 from the drain's start on (the first SIGTERM/SIGINT, after --lame-duck if set): TCP and WebSocket sessions "
          "are being drained, upgrades get 503.",
          std::uint64_t{draining_.load(std::memory_order_relaxed) ? 1U : 0U});

    family("open_sessions", "gauge", "Open sessions by kind (an HTTP connection becomes websocket when it upgrades).");
    for (const auto& k : session_kinds)
        out.sample(name, {{"kind", k.name}}, t.open_by_kind[static_cast<std::size_t>(k.kind)]);
    gauge("open_connections", "Connections holding a slot against --max-connections.",
          open_connections_.load(std::memory_order_relaxed));
    gauge("max_connections", "--max-connections.", std::uint64_t{cfg_.max_connections});
    family("sessions_closed_total", "counter", "Sessions closed, by cause.");
    for (const auto& c : close_causes)
        out.sample(name, {{"cause", c.name}}, t.closed_by_cause[static_cast<std::size_t>(c.cause)]);
    counter("connections_accepted_total", "Connections accepted on either port (refused ones included).",
            accepted_.load(std::memory_order_relaxed));
    counter("connections_refused_total", "Connections accepted and closed at once: --max-connections reached.",
            refused_.load(std::memory_order_relaxed));
    counter("accept_errors_total", "Failed accepts (e.g. out of descriptors).",
            accept_errors_.load(std::memory_order_relaxed));
    counter("messages_echoed_total",
            "WebSocket messages, TCP lines (--tcp-echo=lines) or TCP reads read; echoed: this less messages_unechoed_total.",
            t.messages);
    counter("messages_unechoed_total",
            "WebSocket messages read but not echoed: read after the session's close began, or queued when it ended.",
            t.messages_unechoed);
    counter("websocket_going_away_total", "WebSocket close handshakes the server began with 1001 (the drain and --max-lifetime).",
            t.going_away);
    family("healthz_requests_total", "counter", "GET /healthz answers: 200 while serving, 503 from the first signal on.");
    out.sample(name, {{"status", "200"}}, healthz_ok_.load(std::memory_order_relaxed));
    out.sample(name, {{"status", "503"}}, healthz_unavailable_.load(std::memory_order_relaxed));
    counter("echoed_bytes_total", "Bytes received and echoed, WebSocket and TCP.", t.bytes);
    gauge("unsent_bytes", "Echo queued and not yet written, all sessions (against --max-backlog-total).",
          unsent_total_.load(std::memory_order_relaxed));
    gauge("unsent_limit_bytes", "--max-backlog-total.", std::uint64_t{cfg_.max_backlog_total});
    counter("asio_timer_rearms_total", "--timers=asio: steady_timer re-arms (each cancels a pending wait).", t.rearms);

    gauge("wheel_pending_timers", "Timeouts scheduled in the wheels and not yet run.", std::uint64_t{t.wheel.pending});
    counter("wheel_scheduled_total", "Entries put in the wheels (reschedules included).", t.wheel.scheduled);
    counter("wheel_rescheduled_total", "Of those, moves of an entry that was still pending.", t.wheel.rescheduled);
    counter("wheel_expired_total", "Wheel callbacks run because due.", t.wheel.expired);
    counter("wheel_cancelled_total", "Wheel entries removed before running.", t.wheel.cancelled);
    counter("wheel_rejected_total", "Wheel entries refused (full or stopped wheel).", t.wheel.rejected);
    counter("wheel_wakeups_total", "Times a wheel ran.", t.wheel.wakeups);
    counter("wheel_idle_wakeups_total", "Wheel wake-ups that ran no callback.", t.wheel.idle_wakeups);
    {
        family("wheel_expiry_lateness_seconds", "histogram",
               "Wheel callbacks run because due, by lateness: wake-up time minus the start of the deadline's tick.");
        const std::string bucket = name + "_bucket";
        std::uint64_t cumulative = 0;
        const auto& bounds = idlewheel::wheel_stats::lateness_bounds;
        for (std::size_t i = 0; i < bounds.size(); ++i) {
            cumulative += t.wheel.lateness_count[i];
            const std::string le = exposition::number(std::chrono::duration<double>(bounds[i]).count());
            out.sample(bucket, {{"le", le}}, cumulative);
        }
        cumulative += t.wheel.lateness_count[bounds.size()];
        out.sample(bucket, {{"le", "+Inf"}}, cumulative);
        out.sample(name + "_sum", std::chrono::duration<double>(t.wheel.lateness_sum).count());
        out.sample(name + "_count", cumulative);
    }
    for (const auto& c : liveness_counters)
        counter(std::string("liveness_").append(c.name).append("_total"), c.help, t.liveness.*c.value);

    // The process, under the names Prometheus client libraries use.
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    out.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
    out.sample("process_cpu_seconds_total", seconds(ru.ru_utime) + seconds(ru.ru_stime));
    out.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    out.sample("process_resident_memory_bytes", resident_bytes());
    out.family("process_open_fds", "gauge", "Number of open file descriptors.");
    out.sample("process_open_fds", open_descriptors());
    out.family("process_max_fds", "gauge", "Maximum number of open file descriptors (the soft limit).");
    out.sample("process_max_fds", static_cast<std::uint64_t>(fd_soft_));
    out.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
    out.sample("process_start_time_seconds", std::chrono::duration<double>(started_wall_.time_since_epoch()).count());
    return out.take();
}

}  // namespace demo
