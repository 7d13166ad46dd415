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
//   ping-silent        WebSocket clients that upgrade and then never answer a ping: the
//                      server's heartbeat must drop them (pinged, then the socket closed
//                      without a close frame, no sooner than `dead_peer_min`); then again
//   slowloris          HTTP clients that trickle a request's headers one byte every 100 ms and
//                      never end them: the server must cut them (no answer, no sooner than
//                      `slowloris_min`, no later than `slowloris_max`); then again
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

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
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
    unsigned ping_silent = 0, slowloris = 0;                             // per thread
    clock::duration dead_peer_min{}, slowloris_min{};                    // lower bounds (server's times)
    clock::duration slowloris_max = std::chrono::seconds(10);            // upper bound of a cut
    clock::duration duration = std::chrono::seconds(60);                 // deadline for everything
};

struct outcome {
    std::uint64_t cycles = 0, tcp_cycles = 0, websocket_cycles = 0;
    std::uint64_t tcp_echoes = 0, websocket_echoes = 0, stats_polls = 0, idle_kicks = 0;
    std::uint64_t dead_peer_drops = 0, slowloris_cuts = 0;
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
    std::atomic<std::uint64_t> dead_peer_drops{0}, slowloris_cuts{0};
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

// The frames a server sent (unmasked), by opcode: whether a ping (0x9) and a close (0x8) came.
inline void scan_frames(const std::string& bytes, bool& ping, bool& close) {
    std::size_t at = 0;
    while (at + 2 <= bytes.size()) {
        const auto opcode = static_cast<unsigned char>(bytes[at]) & 0x0fU;
        std::uint64_t length = static_cast<unsigned char>(bytes[at + 1]) & 0x7fU;
        at += 2;
        const std::size_t extended = length == 126 ? 2 : length == 127 ? 8 : 0;
        if (at + extended > bytes.size()) return;
        if (extended != 0) {
            length = 0;
            for (std::size_t i = 0; i < extended; ++i) length = (length << 8U) | static_cast<unsigned char>(bytes[at + i]);
        }
        at += extended;
        if (opcode == 0x9) ping = true;
        if (opcode == 0x8) close = true;
        if (length > bytes.size() - at) return;
        at += static_cast<std::size_t>(length);
    }
}

// Upgrades, then reads the raw TCP bytes under Beast (so no ping is ever answered) until the
// server drops the connection. A drop that comes after the deadline is not waited for.
inline asio::awaitable<void> ping_silent(shared_state& st) {
    try {
        while (st.time_left()) {
            auto ex = co_await asio::this_coro::executor;
            auto ws = std::make_shared<websocket::stream<tcp::socket>>(ex);
            co_await ws->next_layer().async_connect(st.http_ep, use_awaitable);
            const auto asked = clock::now();  // the server's heartbeat cannot start before this
            co_await ws->async_handshake(st.host_port(), "/", use_awaitable);
            asio::steady_timer give_up(ex, st.deadline);
            give_up.async_wait([ws](boost::system::error_code ec) {
                if (!ec) ws->next_layer().close(ec);
            });
            std::string got;
            std::array<char, 512> buf{};
            boost::system::error_code ec;
            while (!ec) {
                const auto n = co_await ws->next_layer().async_read_some(asio::buffer(buf), asio::redirect_error(use_awaitable, ec));
                got.append(buf.data(), n);
            }
            give_up.cancel();
            const auto after = clock::now() - asked;
            if (ec != asio::error::eof && ec != asio::error::connection_reset) {
                if (!st.time_left()) break;
                throw boost::system::system_error(ec, "ping-silent client ended without a drop");
            }
            bool pinged = false, closed = false;
            scan_frames(got, pinged, closed);
            if (!pinged) throw std::runtime_error("ping-silent client dropped without a ping");
            if (closed) throw std::runtime_error("ping-silent client got a close frame, not a dead-peer drop");
            if (after < st.p.dead_peer_min)
                throw std::runtime_error("ping-silent client dropped after " +
                                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(after).count()) + " ms");
            st.dead_peer_drops.fetch_add(1, std::memory_order_relaxed);
        }
    } catch (const std::exception& e) {
        st.fail(std::string("ping-silent: ") + e.what());
    }
}

// Trickles a request's headers and never ends them, until the server cuts the connection.
inline asio::awaitable<void> slowloris(shared_state& st) {
    try {
        while (st.time_left()) {
            auto ex = co_await asio::this_coro::executor;
            auto s = std::make_shared<tcp::socket>(ex);
            const auto connected = clock::now();  // the server's deadline cannot start before this
            co_await s->async_connect(st.http_ep, use_awaitable);
            // The cut, seen by a read that runs alongside the trickle (the server answers nothing).
            struct cut_state {
                std::optional<clock::time_point> at;
                boost::system::error_code ec;
                std::size_t bytes = 0;
                std::array<char, 512> buf{};
            };
            auto cut = std::make_shared<cut_state>();
            s->async_read_some(asio::buffer(cut->buf), [s, cut](boost::system::error_code ec, std::size_t n) {
                cut->ec = ec;
                cut->bytes = n;
                cut->at = clock::now();
            });
            const std::string head = "GET /stats HTTP/1.1\r\nHost: x\r\nX-Slow: ";
            boost::system::error_code ec;
            co_await asio::async_write(*s, asio::buffer(head), asio::redirect_error(use_awaitable, ec));
            asio::steady_timer pause(ex);
            for (unsigned i = 0; !cut->at && st.time_left() && clock::now() - connected < st.p.slowloris_max; ++i) {
                if (!ec) {
                    const char c = static_cast<char>('a' + i % 26);
                    co_await asio::async_write(*s, asio::buffer(&c, 1), asio::redirect_error(use_awaitable, ec));
                }
                pause.expires_after(std::chrono::milliseconds(100));
                co_await pause.async_wait(use_awaitable);
            }
            if (!cut->at) {
                boost::system::error_code ignored;
                s->close(ignored);
                if (!st.time_left()) break;
                throw std::runtime_error("slowloris client not cut within " +
                                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(st.p.slowloris_max).count()) + " ms");
            }
            if (cut->bytes != 0 || (cut->ec != asio::error::eof && cut->ec != asio::error::connection_reset))
                throw std::runtime_error("slowloris client: expected the connection cut without an answer, got " + cut->ec.message());
            if (*cut->at - connected < st.p.slowloris_min)
                throw std::runtime_error("slowloris client cut after " +
                                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(*cut->at - connected).count()) +
                                         " ms");
            st.slowloris_cuts.fetch_add(1, std::memory_order_relaxed);
        }
    } catch (const std::exception& e) {
        st.fail(std::string("slowloris: ") + e.what());
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
        for (unsigned i = 0; i < p.ping_silent; ++i) asio::co_spawn(*io, detail::ping_silent(st), asio::detached);
        for (unsigned i = 0; i < p.slowloris; ++i) asio::co_spawn(*io, detail::slowloris(st), asio::detached);
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
    o.dead_peer_drops = st.dead_peer_drops;
    o.slowloris_cuts = st.slowloris_cuts;
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
