#include "server.hpp"

#include "log.hpp"
#include "tools/common/fd_limit.hpp"

#include <boost/asio/post.hpp>
#include <boost/json.hpp>

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

bool out_of_descriptors(const boost::system::error_code& ec) {
    return ec == boost::system::errc::too_many_files_open || ec == boost::system::errc::too_many_files_open_in_system ||
           ec == boost::system::errc::no_buffer_space || ec == boost::system::errc::not_enough_memory;
}

}  // namespace

server::server(const config& cfg)
    : cfg_(cfg), start_session_(session_starter_for(cfg.timers)), signals_(io_, SIGINT, SIGTERM), shutdown_timer_(io_) {
    // The process may hold at most the hard limit of descriptors; start with all of it.
    const tools::fd_limit fds = tools::raise_fd_limit();
    fd_soft_ = fds.soft;
    fd_hard_ = fds.hard;
    for (unsigned i = 0; i < cfg_.threads; ++i)
        workers_.push_back(std::make_unique<worker>(cfg_, i, open_connections_, unsent_total_));
}

server::~server() {
    for (auto& w : workers_) w->join();
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
        work_.push_back(asio::make_work_guard(w->io));
        w->start();
    }
    accept(*tcp_);
    accept(*web_);
    wait_for_signal();
    io_.run();
    for (auto& w : workers_) w->join();
    if (abandoned_) {
        log("stopped");
        std::fflush(stderr);
        std::_Exit(0);  // the stuck sessions' memory and sockets go with the process
    }
}

void server::accept(listener_state& l) {
    worker& w = *workers_[next_worker_++ % workers_.size()];
    // The socket belongs to the worker's io_context from the start: no migration later.
    l.acceptor.async_accept(w.io, [this, &l, &w](boost::system::error_code ec, tcp::socket socket) {
        on_accept(l, w, ec, std::move(socket));
    });
}

void server::on_accept(listener_state& l, worker& w, boost::system::error_code ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
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
                if (!e && !stopping_) accept(l);
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
    asio::post(w.io, [this, &w, kind = l.kind, s = std::move(socket)]() mutable {
        if (w.stopping) {
            w.release_connection();
            return;
        }
        start_session_(kind, w, *this, std::move(s));
    });
    accept(l);
}

void server::wait_for_signal() {
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
        if (ec) return;
        if (!stopping_) {
            wait_for_signal();  // a second signal means: stop now (cancelled once everything is gone)
            begin_shutdown(sig);
        } else if (!abrupt_sent_) {
            log("signal ", sig, " again: hard stop");
            abort_all();
        }
    });
}

// Stop accepting at once; close the sessions spread over --drain-spread (idle ones first, see
// worker::drain); sessions still open --close-timeout plus a grace period after the spread
// (or at --hard-stop-after, if that comes first) are closed abruptly.
void server::begin_shutdown(int signal) {
    stopping_ = true;
    log("signal ", signal, ": stopping (", open_connections_.load(), " open connections",
        cfg_.drain_spread.count() > 0 ? ", closing them over --drain-spread)" : ")");
    boost::system::error_code ignored;
    tcp_->acceptor.close(ignored);
    web_->acceptor.close(ignored);
    tcp_->backoff.cancel();
    web_->backoff.cancel();
    const auto now = steady::now();
    abrupt_at_ = now + cfg_.drain_spread + cfg_.close_timeout + shutdown_grace;
    if (cfg_.hard_stop_after.count() > 0) abrupt_at_ = std::min(abrupt_at_, now + cfg_.hard_stop_after);
    for (auto& w : workers_) asio::post(w->io, [&w = *w, spread = cfg_.drain_spread] { w.drain(spread); });
    wait_for_sessions();
}

void server::abort_all() {
    abrupt_sent_ = true;
    abrupt_sent_at_ = steady::now();
    log("shutdown: closing ", open_connections_.load(), " sessions abruptly");
    for (auto& w : workers_) asio::post(w->io, [&w = *w] { w.shutdown_all(true); });
}

// Polls until every session is gone, and makes the stop bounded whatever the clients do: the
// abrupt close at abrupt_at_ (or at a second signal), and then, if a session still has not
// ended two grace periods after its socket was closed (an operation parked inside Beast that
// never resumes), the workers are stopped and the process exits 0 without it. It does not
// destroy the stuck sessions (their handlers would outlive their worker's wheel): see run().
void server::wait_for_sessions() {
    if (open_connections_.load() == 0) {
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
        for (auto& w : workers_) w->io.stop();
        return;  // io_ runs out of work: run() returns
    }
    shutdown_timer_.expires_after(std::chrono::milliseconds(20));
    shutdown_timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) wait_for_sessions();
    });
}

std::string server::stats_json() const {
    json::object open, closed, wheel;
    std::int64_t open_by_kind[static_cast<unsigned>(session_kind::count)] = {};
    std::uint64_t closed_by_cause[static_cast<unsigned>(close_cause::count)] = {};
    std::uint64_t messages = 0, bytes = 0, rearms = 0;
    std::uint64_t pending = 0, wakeups = 0, idle_wakeups = 0, scheduled = 0, expired = 0, cancelled = 0;
    std::uint64_t reader_idle = 0, pings = 0, dead = 0, handshakes = 0;
    std::int64_t worst_ns = 0;
    for (const auto& w : workers_) {
        const auto& c = w->counters;
        for (unsigned k = 0; k < static_cast<unsigned>(session_kind::count); ++k)
            open_by_kind[k] += c.open[k].load(std::memory_order_relaxed);
        for (unsigned k = 0; k < static_cast<unsigned>(close_cause::count); ++k)
            closed_by_cause[k] += c.closed[k].load(std::memory_order_relaxed);
        messages += c.messages.load(std::memory_order_relaxed);
        bytes += c.bytes.load(std::memory_order_relaxed);
        rearms += c.timer_rearms.load(std::memory_order_relaxed);
        const auto snap = w->snapshot();
        const auto& s = snap.wheel;
        const auto& l = snap.liveness;
        pending += s.pending;
        wakeups += s.wakeups;
        idle_wakeups += s.idle_wakeups;
        scheduled += s.scheduled;
        expired += s.expired;
        cancelled += s.cancelled;
        reader_idle += l.reader_idle;
        pings += l.pings_sent;
        dead += l.dead_peers;
        handshakes += l.handshake_timeouts;
        worst_ns = std::max<std::int64_t>(worst_ns, s.worst_lateness.count());
    }
    open["tcp"] = open_by_kind[static_cast<unsigned>(session_kind::tcp)];
    open["http"] = open_by_kind[static_cast<unsigned>(session_kind::http)];
    open["websocket"] = open_by_kind[static_cast<unsigned>(session_kind::websocket)];
    for (unsigned k = 0; k < static_cast<unsigned>(close_cause::count); ++k)
        closed[close_cause_names[k]] = closed_by_cause[k];
    wheel["pending"] = pending;
    wheel["wakeups"] = wakeups;
    wheel["idle_wakeups"] = idle_wakeups;
    wheel["scheduled"] = scheduled;
    wheel["expired"] = expired;
    wheel["cancelled"] = cancelled;
    wheel["worst_lateness_us"] = static_cast<double>(worst_ns) / 1e3;
    wheel["reader_idle"] = reader_idle;
    wheel["pings_sent"] = pings;
    wheel["dead_peers"] = dead;
    wheel["handshake_timeouts"] = handshakes;

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    json::object process{{"rss_bytes", resident_bytes()},
                         {"cpu_user_s", seconds(ru.ru_utime)},
                         {"cpu_system_s", seconds(ru.ru_stime)},
                         {"fd_soft_limit", fd_soft_},
                         {"fd_hard_limit", fd_hard_}};
    json::object doc{{"timers", to_string(cfg_.timers)},
                     {"threads", cfg_.threads},
                     {"tick_ms", static_cast<double>(cfg_.tick.count()) / 1e6},
                     {"idle_timeout_ms", static_cast<double>(cfg_.idle_timeout.count()) / 1e6},
                     {"uptime_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()},
                     {"open", std::move(open)},
                     {"open_connections", open_connections_.load(std::memory_order_relaxed)},
                     {"accepted", accepted_.load(std::memory_order_relaxed)},
                     {"refused", refused_.load(std::memory_order_relaxed)},
                     {"accept_errors", accept_errors_.load(std::memory_order_relaxed)},
                     {"closed", std::move(closed)},
                     {"messages", messages},
                     {"bytes", bytes},
                     {"asio_timer_rearms", rearms},
                     {"unsent_bytes", unsent_total_.load(std::memory_order_relaxed)},
                     {"max_backlog_total", cfg_.max_backlog_total},
                     {"wheel", std::move(wheel)},
                     {"process", std::move(process)}};
    return json::serialize(doc);
}

}  // namespace demo
