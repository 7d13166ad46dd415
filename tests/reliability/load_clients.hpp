// Many concurrent well-behaved clients on a few threads (Asio coroutines), for the churn test
// and the TSan drive (load_driver.cpp):
//
//   connection cycles  connect, maybe one echo (TCP) or a WebSocket upgrade + echo + close
//                      handshake, disconnect; until a count or a deadline is reached
//   echoers            long-lived TCP / WebSocket clients echoing in a loop until a deadline
//   stats pollers      GET /stats and GET /metrics in turn, in a loop until a deadline
//   idlers             TCP / WebSocket clients that connect and stay silent until the server
//                      kicks them (the WebSocket ones answer pings, as Beast does while a
//                      read is pending), then reconnect, until a deadline
//
// Every client checks what it gets back; a failure is counted with its first message. All of
// it is bounded: the io_contexts run at most until the deadline plus a grace period.
#ifndef IDLEWHEEL_TESTS_RELIABILITY_LOAD_CLIENTS_HPP
#define IDLEWHEEL_TESTS_RELIABILITY_LOAD_CLIENTS_HPP

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace reliability::load {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;
using asio::use_awaitable;

struct plan {
    std::string host = "127.0.0.1";
    unsigned short tcp_port = 0, http_port = 0;
    unsigned threads = 2;             // client io_context threads
    unsigned cycle_slots = 32;        // concurrent connection cycles per thread
    std::uint64_t cycles = 0;         // stop after this many cycles (0: no cycles)
    unsigned websocket_every = 20;    // every n-th cycle is a WebSocket one (0: none)
    unsigned tcp_echo_every = 4;      // every n-th TCP cycle sends one echo first (0: none)
    unsigned tcp_echoers = 0, websocket_echoers = 0, stats_pollers = 0;  // per thread
    unsigned idlers = 0;                                                 // per thread, half TCP
    clock::duration duration = std::chrono::seconds(60);                 // deadline for everything
};

struct outcome {
    std::uint64_t cycles = 0, tcp_cycles = 0, websocket_cycles = 0;
    std::uint64_t tcp_echoes = 0, websocket_echoes = 0, stats_polls = 0, idle_kicks = 0;
    std::uint64_t failures = 0;
    std::string first_failure;
    double seconds = 0;
};

namespace detail {

struct shared_state {
    explicit shared_state(const plan& what)
        : p(what), tcp_ep(asio::ip::make_address(what.host), what.tcp_port), http_ep(asio::ip::make_address(what.host), what.http_port),
          deadline(clock::now() + what.duration) {}

    const plan& p;
    const tcp::endpoint tcp_ep, http_ep;
    const clock::time_point deadline;
    std::atomic<std::uint64_t> next_cycle{0};
    std::atomic<std::uint64_t> cycles{0}, tcp_cycles{0}, websocket_cycles{0};
    std::atomic<std::uint64_t> tcp_echoes{0}, websocket_echoes{0}, stats_polls{0}, idle_kicks{0}, failures{0};
    std::mutex failure_mutex;
    std::string first_failure;

    void fail(const std::string& what) {
        if (failures.fetch_add(1) == 0) {
            std::lock_guard lock(failure_mutex);
            first_failure = what;
        }
    }
    [[nodiscard]] bool time_left() const { return clock::now() < deadline; }
    [[nodiscard]] std::string host_port() const { return p.host + ":" + std::to_string(p.http_port); }
};

inline asio::awaitable<void> tcp_cycle(shared_state& st, bool echo) {
    tcp::socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(st.tcp_ep, use_awaitable);
    if (echo) {
        const std::string line = "churn\n";
        std::string back(line.size(), '\0');
        co_await asio::async_write(s, asio::buffer(line), use_awaitable);
        co_await asio::async_read(s, asio::buffer(back), use_awaitable);
        if (back != line) throw std::runtime_error("tcp echo differs: " + back);
        st.tcp_echoes.fetch_add(1, std::memory_order_relaxed);
    }
    s.close();  // FIN: the server sees a client close
    st.tcp_cycles.fetch_add(1, std::memory_order_relaxed);
}

inline asio::awaitable<void> websocket_cycle(shared_state& st) {
    websocket::stream<tcp::socket> ws(co_await asio::this_coro::executor);
    co_await ws.next_layer().async_connect(st.http_ep, use_awaitable);
    co_await ws.async_handshake(st.host_port(), "/", use_awaitable);
    const std::string text = "churn over websocket";
    co_await ws.async_write(asio::buffer(text), use_awaitable);
    beast::flat_buffer buffer;
    co_await ws.async_read(buffer, use_awaitable);
    if (beast::buffers_to_string(buffer.data()) != text) throw std::runtime_error("websocket echo differs");
    st.websocket_echoes.fetch_add(1, std::memory_order_relaxed);
    co_await ws.async_close(websocket::close_code::normal, use_awaitable);
    st.websocket_cycles.fetch_add(1, std::memory_order_relaxed);
}

inline asio::awaitable<void> cycle_slot(shared_state& st) {
    for (;;) {
        const auto n = st.next_cycle.fetch_add(1, std::memory_order_relaxed);
        if (n >= st.p.cycles || !st.time_left()) co_return;
        try {
            if (st.p.websocket_every != 0 && n % st.p.websocket_every == 0)
                co_await websocket_cycle(st);
            else
                co_await tcp_cycle(st, st.p.tcp_echo_every != 0 && n % st.p.tcp_echo_every == 1);
            st.cycles.fetch_add(1, std::memory_order_relaxed);
        } catch (const std::exception& e) {
            st.fail(std::string("cycle ") + std::to_string(n) + ": " + e.what());
        }
    }
}

inline asio::awaitable<void> tcp_echoer(shared_state& st, unsigned id) {
    try {
        tcp::socket s(co_await asio::this_coro::executor);
        co_await s.async_connect(st.tcp_ep, use_awaitable);
        for (unsigned i = 0; st.time_left(); ++i) {
            const std::string line = "echoer " + std::to_string(id) + " message " + std::to_string(i) + "\n";
            std::string back(line.size(), '\0');
            co_await asio::async_write(s, asio::buffer(line), use_awaitable);
            co_await asio::async_read(s, asio::buffer(back), use_awaitable);
            if (back != line) throw std::runtime_error("tcp echo differs");
            st.tcp_echoes.fetch_add(1, std::memory_order_relaxed);
        }
    } catch (const std::exception& e) {
        st.fail(std::string("tcp echoer: ") + e.what());
    }
}

inline asio::awaitable<void> websocket_echoer(shared_state& st, unsigned id) {
    try {
        websocket::stream<tcp::socket> ws(co_await asio::this_coro::executor);
        co_await ws.next_layer().async_connect(st.http_ep, use_awaitable);
        co_await ws.async_handshake(st.host_port(), "/", use_awaitable);
        beast::flat_buffer buffer;
        for (unsigned i = 0; st.time_left(); ++i) {
            // Sizes from a few bytes to 24 KB, text and binary.
            const std::string msg(8 + (i * 977 + id * 131) % (24 * 1024), static_cast<char>('a' + i % 26));
            ws.text(i % 2 == 0);
            co_await ws.async_write(asio::buffer(msg), use_awaitable);
            buffer.clear();
            co_await ws.async_read(buffer, use_awaitable);
            if (beast::buffers_to_string(buffer.data()) != msg) throw std::runtime_error("websocket echo differs");
            st.websocket_echoes.fetch_add(1, std::memory_order_relaxed);
        }
        co_await ws.async_close(websocket::close_code::normal, use_awaitable);
    } catch (const std::exception& e) {
        st.fail(std::string("websocket echoer: ") + e.what());
    }
}

inline asio::awaitable<void> stats_poller(shared_state& st) {
    try {
        for (bool metrics = false; st.time_left(); metrics = !metrics) {  // /stats and /metrics in turn
            tcp::socket s(co_await asio::this_coro::executor);
            co_await s.async_connect(st.http_ep, use_awaitable);
            http::request<http::empty_body> req{http::verb::get, metrics ? "/metrics" : "/stats", 11};
            req.set(http::field::host, st.host_port());
            req.keep_alive(false);
            co_await http::async_write(s, req, use_awaitable);
            beast::flat_buffer buffer;
            http::response<http::string_body> res;
            co_await http::async_read(s, buffer, res, use_awaitable);
            const char* expected = metrics ? "idlewheel_demo_sessions_closed_total{" : "\"closed\"";
            if (res.result() != http::status::ok || res.body().find(expected) == std::string::npos)
                throw std::runtime_error(std::string("bad ") + (metrics ? "/metrics" : "/stats") + " answer: " + res.body());
            st.stats_polls.fetch_add(1, std::memory_order_relaxed);
            asio::steady_timer pause(s.get_executor(), std::chrono::milliseconds(20));
            co_await pause.async_wait(use_awaitable);
        }
    } catch (const std::exception& e) {
        st.fail(std::string("stats poller: ") + e.what());
    }
}

// Silent until kicked. A kick that comes after the deadline is not waited for.
inline asio::awaitable<void> idler(shared_state& st, bool websocket_client) {
    try {
        while (st.time_left()) {
            auto ex = co_await asio::this_coro::executor;
            asio::steady_timer give_up(ex, st.deadline);
            if (websocket_client) {
                // Shared with the deadline's handler, which may already be queued when the
                // kick comes.
                auto ws = std::make_shared<websocket::stream<tcp::socket>>(ex);
                co_await ws->next_layer().async_connect(st.http_ep, use_awaitable);
                co_await ws->async_handshake(st.host_port(), "/", use_awaitable);
                give_up.async_wait([ws](boost::system::error_code ec) {
                    if (!ec) ws->next_layer().close(ec);
                });
                beast::flat_buffer buffer;
                boost::system::error_code ec;
                co_await ws->async_read(buffer, asio::redirect_error(use_awaitable, ec));
                give_up.cancel();
                if (ec == websocket::error::closed && ws->reason().code == websocket::close_code::normal)
                    st.idle_kicks.fetch_add(1, std::memory_order_relaxed);
                else if (st.time_left())
                    throw boost::system::system_error(ec, "websocket idler ended without an idle close");
            } else {
                auto s = std::make_shared<tcp::socket>(ex);
                co_await s->async_connect(st.tcp_ep, use_awaitable);
                give_up.async_wait([s](boost::system::error_code ec) {
                    if (!ec) s->close(ec);
                });
                char byte = 0;
                boost::system::error_code ec;
                co_await s->async_read_some(asio::buffer(&byte, 1), asio::redirect_error(use_awaitable, ec));
                give_up.cancel();
                if (ec == asio::error::eof)
                    st.idle_kicks.fetch_add(1, std::memory_order_relaxed);
                else if (st.time_left())
                    throw boost::system::system_error(ec, "tcp idler ended without an idle close");
            }
        }
    } catch (const std::exception& e) {
        st.fail(std::string("idler: ") + e.what());
    }
}

}  // namespace detail

/// Runs `p` to completion (all cycles done and every long-lived client past the deadline) or
/// until the deadline plus 10 s of grace; unfinished work counts as failures.
inline outcome run(const plan& p) {
    detail::shared_state st(p);
    const auto start = clock::now();
    std::vector<std::unique_ptr<asio::io_context>> ios;
    for (unsigned t = 0; t < p.threads; ++t) {
        auto io = std::make_unique<asio::io_context>(1);
        if (p.cycles != 0)
            for (unsigned i = 0; i < p.cycle_slots; ++i) asio::co_spawn(*io, detail::cycle_slot(st), asio::detached);
        for (unsigned i = 0; i < p.tcp_echoers; ++i) asio::co_spawn(*io, detail::tcp_echoer(st, t * 1000 + i), asio::detached);
        for (unsigned i = 0; i < p.websocket_echoers; ++i) asio::co_spawn(*io, detail::websocket_echoer(st, t * 1000 + i), asio::detached);
        for (unsigned i = 0; i < p.stats_pollers; ++i) asio::co_spawn(*io, detail::stats_poller(st), asio::detached);
        for (unsigned i = 0; i < p.idlers; ++i) asio::co_spawn(*io, detail::idler(st, i % 2 == 1), asio::detached);
        ios.push_back(std::move(io));
    }
    std::atomic<bool> overran{false};
    std::vector<std::thread> threads;
    for (auto& io : ios)
        threads.emplace_back([&io, &st, &overran] {
            io->run_until(st.deadline + std::chrono::seconds(10));
            if (!io->stopped()) overran = true;
        });
    for (auto& t : threads) t.join();
    outcome o;
    o.seconds = std::chrono::duration<double>(clock::now() - start).count();
    o.cycles = st.cycles;
    o.tcp_cycles = st.tcp_cycles;
    o.websocket_cycles = st.websocket_cycles;
    o.tcp_echoes = st.tcp_echoes;
    o.websocket_echoes = st.websocket_echoes;
    o.stats_polls = st.stats_polls;
    o.idle_kicks = st.idle_kicks;
    o.failures = st.failures;
    o.first_failure = st.first_failure;
    if (overran) {
        ++o.failures;
        if (o.first_failure.empty()) o.first_failure = "clients still busy 10 s after the deadline";
    }
    return o;
}

}  // namespace reliability::load

#endif
