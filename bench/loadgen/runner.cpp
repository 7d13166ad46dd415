#include "runner.hpp"

#include "json_util.hpp"
#include "tls_client.hpp"
#include "program_support/fd_limit.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <stdexcept>

namespace loadgen {

namespace json = boost::json;
using asio::awaitable;
using asio::use_awaitable;

namespace {

constexpr nanoseconds stats_timeout = std::chrono::seconds(3);

// Every connection is a descriptor: take all the process may have (the soft limit up to the
// hard one), and refuse a plan that cannot fit instead of failing half way.
unsigned raise_fd_limit() {
    return static_cast<unsigned>(std::min<unsigned long long>(program_support::raise_fd_limit().soft, 1U << 30));
}

double process_cpu() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto s = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return s(ru.ru_utime) + s(ru.ru_stime);
}

// The roles in a shuffled order, so every stretch of the connect phase has the same mix.
std::vector<record> make_records(const scenario& plan) {
    std::vector<record> records;
    records.reserve(plan.connections);
    for (std::size_t r = 0; r < role_count; ++r)
        for (std::size_t i = 0; i < plan.mix[r]; ++i) {
            record rec;
            rec.who = static_cast<role>(r);
            records.push_back(std::move(rec));
        }
    std::mt19937_64 rng(plan.seed);
    std::shuffle(records.begin(), records.end(), rng);
    return records;
}

// The upgrade's Host header: HOST:PORT, an IPv6 address in brackets.
std::string host_header(const scenario& plan) {
    const bool v6 = plan.host.find(':') != std::string::npos;
    return (v6 ? "[" + plan.host + "]" : plan.host) + ":" + std::to_string(plan.ws_port);
}

class controller {
public:
    controller(const scenario& plan, run_data& data)
        : plan_(plan),
          data_(data),
          stats_endpoint_(asio::ip::make_address(plan.host), plan.http_port),
          tls_(make_tls_context(plan)),
          context_{plan,
                   clock::now(),
                   asio::ip::tcp::endpoint(asio::ip::make_address(plan.host),
                                           plan.proto == protocol::tcp ? plan.tcp_port : plan.ws_port),
                   {},
                   host_header(plan),
                   // The TCP port speaks plain TCP whatever --tls says: only the WebSocket
                   // clients (and /stats) use TLS.
                   plan.proto == protocol::ws ? tls_.get() : nullptr,
                   {}},
          sampler_timer_(io_),
          progress_timer_(io_),
          progress_file_timer_(io_) {
        const auto first = asio::ip::make_address(plan.first_source.empty() ? plan.host : plan.first_source);
        for (std::size_t k = 0; k < plan.source_addresses; ++k)
            context_.sources.push_back(k == 0 ? first
                                              : asio::ip::address(asio::ip::address_v4(first.to_v4().to_uint() +
                                                                                       static_cast<std::uint32_t>(k))));
        for (unsigned i = 0; i < plan.threads; ++i) threads_.push_back(std::make_unique<connection_thread>(context_));
        tty_ = isatty(STDERR_FILENO) != 0;
    }

    void run() {
        std::exception_ptr failure;
        asio::co_spawn(io_, control(), [&failure](std::exception_ptr e) { failure = e; });
        io_.run();
        // Every connection has been told to close; give the threads a bounded time to finish.
        for (auto& t : threads_) t->finish(std::chrono::seconds(3));
        for (auto& t : threads_) {
            t->join();
            data_.rtt_us.insert(data_.rtt_us.end(), t->rtt_us.begin(), t->rtt_us.end());
            data_.lag_us.insert(data_.lag_us.end(), t->lag_us.begin(), t->lag_us.end());
            data_.reconnect_us.insert(data_.reconnect_us.end(), t->reconnect_us.begin(), t->reconnect_us.end());
            data_.reconnect_dead_us.insert(data_.reconnect_dead_us.end(), t->reconnect_dead_us.begin(),
                                           t->reconnect_dead_us.end());
        }
        data_.going_away = context_.counters.going_away.load();
        data_.retry_connect_failed = context_.counters.retry_connect_failed.load();
        data_.retry_upgrade_failed = context_.counters.retry_upgrade_failed.load();
        if (failure) std::rethrow_exception(failure);
    }

private:
    // /stats is read: demo_server's --http-port was given (with --url: an optional cross-check).
    [[nodiscard]] bool stats() const noexcept { return plan_.http_port != 0; }

    [[nodiscard]] double since_start() const { return seconds(clock::now() - context_.t0); }

    awaitable<void> sleep_for(nanoseconds d) {
        asio::steady_timer t(io_);
        t.expires_after(d);
        co_await t.async_wait(use_awaitable);
    }

    // /stats, or nothing (counted) if the server did not answer in time.
    awaitable<std::optional<json::object>> try_fetch() {
        try {
            co_return co_await fetch_stats(stats_endpoint_, stats_timeout, tls_.get(), plan_.host);
        } catch (const std::exception& e) {
            ++data_.stats_errors;
            if (data_.stats_errors <= 3) std::fprintf(stderr, "\nloadgen: reading /stats failed: %s\n", e.what());
        }
        co_return std::nullopt;
    }

    void check_server_settings() {
        if (plan_.expect != expectation::demo) {
            // Any server: its promises are on the command line. A /stats read anyway (--http-port)
            // cross-checks the idle timeout of --expect-idle, and gives the tick when it has one.
            data_.idle_timeout = plan_.idle_timeout;
            const auto server_idle =
                nanoseconds(static_cast<std::int64_t>(std::llround(number(data_.before, {"idle_timeout_ms"}) * 1e6)));
            const auto server_tick =
                nanoseconds(static_cast<std::int64_t>(std::llround(number(data_.before, {"tick_ms"}) * 1e6)));
            data_.tick = plan_.tick.count() != 0 ? plan_.tick : server_tick;
            if (plan_.expect == expectation::kicks && server_idle.count() != 0 && data_.idle_timeout != server_idle)
                throw std::runtime_error("--expect-idle does not match the server's /stats (" +
                                         std::to_string(millis(server_idle)) + " ms)");
            return;
        }
        const auto server_idle =
            nanoseconds(static_cast<std::int64_t>(std::llround(number(data_.before, {"idle_timeout_ms"}) * 1e6)));
        const auto server_tick =
            nanoseconds(static_cast<std::int64_t>(std::llround(number(data_.before, {"tick_ms"}) * 1e6)));
        data_.idle_timeout = plan_.idle_timeout.count() != 0 ? plan_.idle_timeout : server_idle;
        data_.tick = plan_.tick.count() != 0 ? plan_.tick : server_tick;
        if (server_idle.count() != 0 && data_.idle_timeout != server_idle)
            throw std::runtime_error("--idle-timeout does not match the server's (" +
                                     std::to_string(millis(server_idle)) + " ms)");
        if (data_.idle_timeout.count() <= 0 || data_.tick.count() <= 0)
            throw std::runtime_error(
                "the server's /stats has no idle_timeout_ms / tick_ms: give --idle-timeout and --tick");
    }

    awaitable<void> control() {
        if (stats()) {
            auto before = co_await try_fetch();
            if (!before)
                throw std::runtime_error("cannot read /stats from " + plan_.host + ":" + std::to_string(plan_.http_port));
            data_.before = std::move(*before);
        }
        check_server_settings();

        context_.t0 = clock::now();
        const double cpu_at_start = process_cpu();
        for (auto& t : threads_) t->start();
        if (stats()) asio::co_spawn(io_, sample_stats(), asio::detached);
        if (plan_.progress) asio::co_spawn(io_, show_progress(), asio::detached);
        if (!plan_.progress_file.empty()) asio::co_spawn(io_, write_progress_file(), asio::detached);

        const auto end = context_.t0 + plan_.duration;
        auto& counters = context_.counters;
        std::size_t launched = 0;
        const std::size_t total = data_.records.size();
        while (launched < total && clock::now() < end) {
            const double allowed = std::floor(plan_.connect_rate * since_start()) + 1;
            while (launched < total && static_cast<double>(launched) < allowed &&
                   counters.connecting.load(std::memory_order_relaxed) <
                       static_cast<std::int64_t>(plan_.max_connecting)) {
                counters.connecting.fetch_add(1, std::memory_order_relaxed);
                threads_[launched % threads_.size()]->launch(data_.records[launched],
                                                             plan_.seed * 0x100000001b3ULL + launched,
                                                             context_.sources[launched % context_.sources.size()]);
                ++launched;
            }
            co_await sleep_for(std::chrono::milliseconds(2));
        }
        while (counters.ready.load() + counters.failed.load() < launched && clock::now() < end)
            co_await sleep_for(std::chrono::milliseconds(5));
        data_.connect_phase = since_start();

        // Full load: every connection is up, and the first kick is an idle timeout away.
        if (stats() && launched == total && counters.ready.load() + counters.failed.load() == total) {
            const auto ready = counters.ready.load();
            if (auto full = co_await try_fetch()) {
                data_.full = std::move(*full);
                data_.t_full = since_start();
                data_.ready_at_full = ready;
            }
        }

        if (plan_.closed_loop)
            for (auto& t : threads_) t->release_closed_loop();

        if (clock::now() < end) co_await sleep_for(end - clock::now());
        if (stats())
            if (auto after = co_await try_fetch()) data_.after = std::move(*after);
        data_.t_after = since_start();

        stopping_ = true;
        data_.stopped_at = context_.now();
        data_.client_cpu = process_cpu() - cpu_at_start;
        sampler_timer_.cancel();
        progress_timer_.cancel();
        progress_file_timer_.cancel();
        if (!plan_.progress_file.empty()) write_counters(true);
        for (auto& t : threads_) t->stop_all();
        if (plan_.progress) print_progress(true);
        if (stats() && data_.after.empty()) throw std::runtime_error("cannot read the final /stats");
    }

    awaitable<void> sample_stats() {
        auto next = context_.t0;
        while (!stopping_) {
            const double t = since_start();
            if (auto doc = co_await try_fetch()) data_.samples.push_back(server_sample::from(*doc, t));
            next += plan_.stats_interval;
            if (next < clock::now()) next = clock::now();
            sampler_timer_.expires_at(next);
            boost::system::error_code ec;
            co_await sampler_timer_.async_wait(asio::redirect_error(use_awaitable, ec));
        }
    }

    awaitable<void> show_progress() {
        const auto every = tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000);
        while (!stopping_) {
            progress_timer_.expires_after(every);
            boost::system::error_code ec;
            co_await progress_timer_.async_wait(asio::redirect_error(use_awaitable, ec));
            if (!stopping_) print_progress(false);
        }
    }

    awaitable<void> write_progress_file() {
        while (!stopping_) {
            write_counters(false);
            progress_file_timer_.expires_after(std::chrono::seconds(1));
            boost::system::error_code ec;
            co_await progress_file_timer_.async_wait(asio::redirect_error(use_awaitable, ec));
        }
    }

    // --progress-file: {"t_s", "done", "ROLE": {"planned", "connected", "kicked", "failed"}},
    // written beside and renamed over, so a reader never sees half a file.
    void write_counters(bool done) {
        const auto& c = context_.counters;
        json::object doc{{"t_s", std::round(since_start() * 10) / 10}, {"done", done}};
        for (std::size_t r = 0; r < role_count; ++r)
            doc[role_names[r]] = json::object{{"planned", plan_.mix[r]},
                                              {"connected", c.ready_by_role[r].load(std::memory_order_relaxed)},
                                              {"kicked", c.closed_by_server[r].load(std::memory_order_relaxed)},
                                              {"failed", c.failed_by_role[r].load(std::memory_order_relaxed)}};
        const std::string tmp = plan_.progress_file + ".tmp";
        if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
            const std::string text = json::serialize(doc) + "\n";
            const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
            if (std::fclose(f) == 0 && ok) std::rename(tmp.c_str(), plan_.progress_file.c_str());
        }
    }

    // connected, active (open and not yet kicked), kicked by the server, errors.
    void print_progress(bool last) {
        const auto& c = context_.counters;
        std::uint64_t kicked = 0;
        for (const auto& k : c.closed_by_server) kicked += k.load(std::memory_order_relaxed);
        const auto ready = c.ready.load(std::memory_order_relaxed);
        const auto echoed = c.echoed.load(std::memory_order_relaxed);
        const double t = since_start();
        const double rate = t > last_t_ ? static_cast<double>(echoed - last_echoed_) / (t - last_t_) : 0;
        last_t_ = t;
        last_echoed_ = echoed;
        std::fprintf(stderr,
                     "%s[loadgen %6.1fs] connected %llu/%zu  open %llu  kicked %llu (idle %llu, pinger %llu, dead "
                     "%llu, active %llu)  errors %llu  echoes/s %.0f%s",
                     tty_ ? "\r" : "", t, static_cast<unsigned long long>(ready), data_.records.size(),
                     static_cast<unsigned long long>(ready - std::min(ready, kicked)),
                     static_cast<unsigned long long>(kicked),
                     static_cast<unsigned long long>(c.closed_by_server[index(role::idle)].load()),
                     static_cast<unsigned long long>(c.closed_by_server[index(role::pinger)].load()),
                     static_cast<unsigned long long>(c.closed_by_server[index(role::dead)].load()),
                     static_cast<unsigned long long>(c.closed_by_server[index(role::active)].load()),
                     static_cast<unsigned long long>(c.errors.load()), rate, tty_ && !last ? "   " : "\n");
        std::fflush(stderr);
    }

    const scenario& plan_;
    run_data& data_;
    asio::io_context io_{1};
    asio::ip::tcp::endpoint stats_endpoint_;
    std::unique_ptr<asio::ssl::context> tls_;  // --tls: one context for every client and /stats
    run_context context_;
    std::vector<std::unique_ptr<connection_thread>> threads_;
    asio::steady_timer sampler_timer_, progress_timer_, progress_file_timer_;
    bool stopping_ = false;
    bool tty_ = false;
    double last_t_ = 0;
    std::uint64_t last_echoed_ = 0;
};

}  // namespace

run_data run(const scenario& plan) {
    run_data data;
    data.fd_limit = raise_fd_limit();
    const std::size_t spare = 64;  // stats requests, io_contexts, stdio
    if (data.fd_limit != 0 && plan.connections + spare > data.fd_limit)
        throw std::runtime_error(std::to_string(plan.connections) + " connections need " +
                                 std::to_string(plan.connections + spare) + " descriptors; this process may have " +
                                 std::to_string(data.fd_limit) +
                                 " (ulimit -n): use fewer connections or several loadgen processes");
    data.records = make_records(plan);
    controller c(plan, data);
    c.run();
    return data;
}

}  // namespace loadgen
