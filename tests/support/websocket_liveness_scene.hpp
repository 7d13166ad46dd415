// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_WEBSOCKET_LIVENESS_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_WEBSOCKET_LIVENESS_SCENE_HPP

// What the parts of websocket_liveness.hpp's tests share (test_beast_websocket_liveness*.cpp,
// one executable, one translation unit): the Beast echo server of support/ws_echo_server.hpp
// on a thread of its own in both its forms, Beast clients that are silent, chatty, deaf to
// pings, or slow to shake hands, and the expectations of an idle close. Real clocks: every
// expectation is a strict lower bound and a generous upper bound; every wait is bounded by
// `patience`, which only a failing test reaches.

#include <idlewheel/beast/websocket_liveness.hpp>

#include "net.hpp"
#include "ws_echo_server.hpp"

#include <boost/test/unit_test.hpp>

#include <boost/beast/core/buffers_to_string.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

// The names the tests use unqualified (they say `using namespace idlewheel::test::ws_liveness;`).
namespace idlewheel::test::ws_liveness {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using steady_clock = std::chrono::steady_clock;
using ws_stream = websocket::stream<tcp::socket>;
using namespace std::chrono_literals;
using ws_echo::close_cause;

inline constexpr auto patience = 10s;  // the bound of every wait; reached only when a test fails
inline constexpr auto as_result = idlewheel::test::as_tuple(net::use_awaitable);

// Whole milliseconds, a plain number that Boost.Test prints when an expectation fails.
// Truncation keeps a lower bound strict: a duration >= 200 ms is never reported below 200.
template <class Rep, class Period>
std::int64_t ms(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// The server as it runs in production: an io_context on a thread of its own. The test thread
// talks to it only through post(), so the wheel is only ever used on its executor.
template <class Server>
class server_thread {
public:
    explicit server_thread(const ws_echo::server_options& options) : server_(io_, options) {
        server_.run();
        thread_ = std::thread([this] {
            try {
                io_.run();
                returned_.set_value();
            } catch (...) {
                returned_.set_exception(std::current_exception());
            }
        });
    }
    server_thread(const server_thread&) = delete;
    server_thread& operator=(const server_thread&) = delete;
    ~server_thread() { stop(); }

    [[nodiscard]] unsigned short port() const noexcept { return server_.port(); }

    // Runs f() on the server's thread and returns its result (directly once it has stopped).
    template <class F>
    std::invoke_result_t<F&> call(F f) {
        if (!thread_.joinable()) return f();
        std::packaged_task<std::invoke_result_t<F&>()> task(std::move(f));
        auto result = task.get_future();
        // Posted inside a lambda: Asio 1.30 (Boost 1.84) and newer take a packaged_task passed as
        // the token itself as "complete into its future" and call get_future() a second time.
        net::post(io_, [t = std::move(task)]() mutable { t(); });
        if (result.wait_for(patience) != std::future_status::ready)
            throw std::runtime_error("the server thread did not answer");
        return result.get();
    }

    ws_echo::server_counters counters() {
        return call([this] { return server_.counters(); });
    }
    // The wheel's counters and the sessions' liveness outcomes, side by side.
    struct both_stats : idlewheel::wheel_stats, idlewheel::liveness_stats {};
    both_stats stats() {
        return call([this] { return both_stats{server_.wheel().stats(), server_.liveness()}; });
    }

    // Polls the counters until done(counters) holds; false after `patience`.
    template <class Done>
    bool wait_until(Done done) {
        const auto give_up = steady_clock::now() + patience;
        while (!done(counters())) {
            if (steady_clock::now() >= give_up) return false;
            std::this_thread::sleep_for(2ms);
        }
        return true;
    }

    // Stops the server and waits for its io_context to run out of work (every session ended,
    // the wheel idle). True if it did within `patience`; if not, the context is stopped by
    // force so that the test fails instead of hanging.
    bool stop() {
        if (!thread_.joinable()) return clean_;
        net::post(io_, [this] { server_.stop(); });
        clean_ = finished_.wait_for(patience) == std::future_status::ready;
        if (!clean_) {
            BOOST_ERROR("the server's io_context did not return after stop()");
            io_.stop();
        }
        thread_.join();
        try {
            finished_.get();
        } catch (const std::exception& e) {
            BOOST_ERROR("the server's io_context threw: " << e.what());
            clean_ = false;
        }
        return clean_;
    }

private:
    net::io_context io_{1};
    Server server_;
    std::promise<void> returned_;
    std::future<void> finished_ = returned_.get_future();
    std::thread thread_;
    bool clean_ = true;
};

// Runs the clients' io_context (on the test thread) until done(); false after `limit`.
template <class Done>
bool run_until(net::io_context& io, Done done, steady_clock::duration limit = patience) {
    const auto give_up = steady_clock::now() + limit;
    while (!done()) {
        if (steady_clock::now() >= give_up) return false;
        if (io.stopped()) io.restart();
        if (io.run_one_for(10ms) == 0) std::this_thread::sleep_for(1ms);
    }
    return true;
}

// co_spawn's completion: an exception in a client (a failed connect, a broken test) leaves
// run_until() and fails the test with its message.
inline void rethrow(std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
}

// ---- clients ---------------------------------------------------------------------------

struct client_result {
    bool reading = false;  // upgraded, and waiting for whatever the server sends
    bool finished = false;
    beast::error_code ec;               // how its last operation ended
    std::uint16_t close_code = 0;       // the server's close frame, if it sent one
    std::string close_reason;
    steady_clock::duration lifetime{};  // from before connecting to the end
    int echoes = 0;
    int pings = 0;  // pings the server sent (seen by the control callback)

    void finish(beast::error_code e, const ws_stream& ws, steady_clock::time_point t0) {
        finished = true;
        ec = e;
        close_code = ws.reason().code;
        close_reason.assign(ws.reason().reason.data(), ws.reason().reason.size());
        lifetime = steady_clock::now() - t0;
    }
};

inline net::awaitable<ws_stream> connect_ws(unsigned short port) {
    ws_stream ws(co_await net::this_coro::executor);
    co_await ws.next_layer().async_connect({net::ip::address_v4::loopback(), port}, net::use_awaitable);
    co_await ws.async_handshake("127.0.0.1", "/", net::use_awaitable);
    co_return ws;
}

// Reads until the session ends. The pending read is what makes Beast answer pings.
inline net::awaitable<void> read_until_closed(ws_stream& ws, client_result& r, steady_clock::time_point t0) {
    ws.control_callback([&r](websocket::frame_type kind, beast::string_view) {
        if (kind == websocket::frame_type::ping) ++r.pings;
    });
    beast::flat_buffer buffer;
    r.reading = true;
    for (;;) {
        const auto [ec, n] = co_await ws.async_read(buffer, as_result);
        buffer.consume(n);
        if (ec) {
            r.finish(ec, ws, t0);
            co_return;
        }
    }
}

// Upgrades, then never sends a message (but answers pings).
inline net::awaitable<void> silent_client(unsigned short port, client_result& r) {
    const auto t0 = steady_clock::now();  // before the server can start watching
    auto ws = co_await connect_ws(port);
    co_await read_until_closed(ws, r, t0);
}

// Sends `messages` messages, one every `period` (the first at once), reads each echo, then
// closes the session itself.
inline net::awaitable<void> active_client(unsigned short port, steady_clock::duration period, int messages, client_result& r) {
    const auto t0 = steady_clock::now();
    auto ws = co_await connect_ws(port);
    net::steady_timer timer(ws.get_executor());
    beast::flat_buffer buffer;
    const auto start = steady_clock::now();
    for (int i = 0; i < messages; ++i) {
        timer.expires_at(start + period * i);  // a fixed cadence, whatever the echo's latency
        co_await timer.async_wait(net::use_awaitable);
        const std::string text = "message " + std::to_string(i);
        if (const auto [ec, n] = co_await ws.async_write(net::buffer(text), as_result); ec) {
            r.finish(ec, ws, t0);
            co_return;
        }
        buffer.clear();
        if (const auto [ec, n] = co_await ws.async_read(buffer, as_result); ec) {
            r.finish(ec, ws, t0);
            co_return;
        }
        if (beast::buffers_to_string(buffer.data()) == text) ++r.echoes;
    }
    const auto [ec] = co_await ws.async_close(websocket::close_code::normal, as_result);
    r.finish(ec, ws, t0);
}

// Upgrades and then does nothing at all: no read pending, so Beast never answers a ping or a
// close frame. The stream is left in `out` for the test to read later.
inline net::awaitable<void> deaf_client(unsigned short port, std::optional<ws_stream>& out) {
    out.emplace(co_await connect_ws(port));
}

// A valid upgrade request; trickled a byte at a time it takes far longer than any handshake
// deadline of these tests.
inline constexpr std::string_view upgrade_request =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

struct trickle_result {
    bool closed = false;  // the server closed the connection (seen by the watcher's read)
    bool writer_done = false;
    beast::error_code ec;
    std::size_t sent = 0;
    steady_clock::duration closed_after{};
};

// Keeps a read pending on the raw socket: it ends when the server closes the connection.
inline net::awaitable<void> watch_for_close(tcp::socket& socket, trickle_result& r, steady_clock::time_point t0) {
    std::array<char, 512> sink{};
    for (;;) {
        const auto [ec, n] = co_await socket.async_read_some(net::buffer(sink), as_result);
        if (ec) {
            r.closed = true;
            r.ec = ec;
            r.closed_after = steady_clock::now() - t0;
            co_return;
        }
    }
}

// A raw TCP client that sends the upgrade request one byte every `gap`.
inline net::awaitable<void> trickle_client(tcp::socket& socket, unsigned short port, steady_clock::duration gap, trickle_result& r) {
    const auto t0 = steady_clock::now();  // before the server accepts: its deadline runs later
    co_await socket.async_connect({net::ip::address_v4::loopback(), port}, net::use_awaitable);
    net::co_spawn(socket.get_executor(), watch_for_close(socket, r, t0), rethrow);
    net::steady_timer timer(socket.get_executor());
    for (const char& c : upgrade_request) {
        if (r.closed) break;
        if (const auto [ec, n] = co_await net::async_write(socket, net::buffer(&c, 1), as_result); ec) break;
        ++r.sent;
        timer.expires_after(gap);
        co_await timer.async_wait(net::use_awaitable);
    }
    r.writer_done = true;
}

// ---- expectations shared by several tests -------------------------------------------------

inline void check_idle_close(const client_result& r, std::chrono::nanoseconds idle) {
    BOOST_TEST(r.finished);
    BOOST_TEST((r.ec == websocket::error::closed), r.ec.message());
    BOOST_TEST(r.close_code == websocket::close_code::normal);
    BOOST_TEST(r.close_reason == "idle timeout");
    BOOST_TEST(ms(r.lifetime) >= ms(idle));  // never before the idle time
    BOOST_TEST(ms(r.lifetime) < ms(idle) + 2500);
}

// The server's own view: it decided "idle" no sooner than the idle time after the upgrade.
inline void check_idle_record(const ws_echo::session_record& rec, std::chrono::nanoseconds idle) {
    BOOST_TEST(ws_echo::to_string(rec.cause) == "idle");
    BOOST_REQUIRE(rec.after_upgrade.has_value());
    BOOST_TEST(ms(*rec.after_upgrade) >= ms(idle));
    BOOST_TEST(ms(*rec.after_upgrade) < ms(idle) + 2500);
}

// The servers under test; the second counts every idle close as reader idle.
using servers = std::tuple<ws_echo::server<ws_echo::separate_objects>, ws_echo::server<ws_echo::one_object>>;
template <class Server>
inline constexpr bool distinguishes_idle_kinds = Server::distinguishes_idle_kinds;

}  // namespace idlewheel::test::ws_liveness

#endif
