// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_liveness.hpp>

// The liveness layer in a real WebSocket server, over real loopback sockets: the Beast echo
// server of support/ws_echo_server.hpp (idlewheel only, Beast's timeouts off) on a thread of
// its own, and Beast clients that are silent, chatty, deaf to pings, or slow to shake hands.
// Every scenario runs twice, once per form of that server (its Liveness option):
// idle_watch + heartbeat + two operation_deadlines per session, beast.hpp's rules applied by
// hand, and one idlewheel::beast::websocket_liveness per session.
//
// Real clocks, so every expectation is a strict lower bound (the library's contract: never
// before the configured time) and a generous upper bound (a loaded 2-core machine, ASan).
// Every wait is bounded by `patience`, which only a failing test reaches: nothing hangs.
//
// Then websocket_liveness alone, on a stream with no peer: handshake_step() (the TLS step
// before the upgrade) and Beast's own timeouts set after start(), whose misuse is a death
// test in a child process (support/in_child.hpp). websocket_liveness runs on wheel_timer (the
// steady clock): where an exact time matters the tests compare the wheel entry's expiry(),
// which needs no sleeping; real time gives only lower bounds.

#include "support/net.hpp"
#include "support/ws_echo_server.hpp"

#define BOOST_TEST_MODULE test_beast_websocket_liveness
#include <boost/test/unit_test.hpp>

#include "support/in_child.hpp"  // after Boost.Test

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

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using steady_clock = std::chrono::steady_clock;
using ws_stream = websocket::stream<tcp::socket>;
using namespace std::chrono_literals;
using ws_echo::close_cause;

constexpr auto patience = 10s;  // the bound of every wait; reached only when a test fails
constexpr auto as_result = idlewheel::test::as_tuple(net::use_awaitable);

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
void rethrow(std::exception_ptr e) {
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

net::awaitable<ws_stream> connect_ws(unsigned short port) {
    ws_stream ws(co_await net::this_coro::executor);
    co_await ws.next_layer().async_connect({net::ip::address_v4::loopback(), port}, net::use_awaitable);
    co_await ws.async_handshake("127.0.0.1", "/", net::use_awaitable);
    co_return ws;
}

// Reads until the session ends. The pending read is what makes Beast answer pings.
net::awaitable<void> read_until_closed(ws_stream& ws, client_result& r, steady_clock::time_point t0) {
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
net::awaitable<void> silent_client(unsigned short port, client_result& r) {
    const auto t0 = steady_clock::now();  // before the server can start watching
    auto ws = co_await connect_ws(port);
    co_await read_until_closed(ws, r, t0);
}

// Sends `messages` messages, one every `period` (the first at once), reads each echo, then
// closes the session itself.
net::awaitable<void> active_client(unsigned short port, steady_clock::duration period, int messages, client_result& r) {
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
net::awaitable<void> deaf_client(unsigned short port, std::optional<ws_stream>& out) {
    out.emplace(co_await connect_ws(port));
}

// A valid upgrade request; trickled a byte at a time it takes far longer than any handshake
// deadline of these tests.
constexpr std::string_view upgrade_request =
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
net::awaitable<void> watch_for_close(tcp::socket& socket, trickle_result& r, steady_clock::time_point t0) {
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
net::awaitable<void> trickle_client(tcp::socket& socket, unsigned short port, steady_clock::duration gap, trickle_result& r) {
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

void check_idle_close(const client_result& r, std::chrono::nanoseconds idle) {
    BOOST_TEST(r.finished);
    BOOST_TEST((r.ec == websocket::error::closed), r.ec.message());
    BOOST_TEST(r.close_code == websocket::close_code::normal);
    BOOST_TEST(r.close_reason == "idle timeout");
    BOOST_TEST(ms(r.lifetime) >= ms(idle));  // never before the idle time
    BOOST_TEST(ms(r.lifetime) < ms(idle) + 2500);
}

// The server's own view: it decided "idle" no sooner than the idle time after the upgrade.
void check_idle_record(const ws_echo::session_record& rec, std::chrono::nanoseconds idle) {
    BOOST_TEST(ws_echo::to_string(rec.cause) == "idle");
    BOOST_REQUIRE(rec.after_upgrade.has_value());
    BOOST_TEST(ms(*rec.after_upgrade) >= ms(idle));
    BOOST_TEST(ms(*rec.after_upgrade) < ms(idle) + 2500);
}

// The servers under test; the second counts every idle close as reader idle.
using servers = std::tuple<ws_echo::server<ws_echo::separate_objects>, ws_echo::server<ws_echo::one_object>>;
template <class Server>
constexpr bool distinguishes_idle_kinds = Server::distinguishes_idle_kinds;

template <class Server>
void silent_client_is_closed_for_idleness(idlewheel::idle_kind kind) {
    const auto idle = 200ms;
    server_thread<Server> server({.idle_kind = kind, .idle_timeout = idle});
    net::io_context io;
    client_result r;
    net::co_spawn(io, silent_client(server.port(), r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    check_idle_close(r, idle);

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    check_idle_record(c.closed.at(0), idle);
    const auto s = server.stats();
    if constexpr (distinguishes_idle_kinds<Server>) {
        BOOST_TEST(s.reader_idle == (kind == idlewheel::idle_kind::reader ? 1U : 0U));
        BOOST_TEST(s.all_idle == (kind == idlewheel::idle_kind::all ? 1U : 0U));
    } else {
        BOOST_TEST(s.reader_idle == 1U);
    }
    BOOST_TEST(s.pending == 0U);  // the session's nodes left the wheel with it
    BOOST_TEST(server.stop());
}

}  // namespace

// 1. A silent client is closed with 1000 "idle timeout", not before the idle time.
BOOST_AUTO_TEST_CASE_TEMPLATE(silent_client_closed_by_reader_idle, Server, servers) {
    silent_client_is_closed_for_idleness<Server>(idlewheel::idle_kind::reader);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(silent_client_closed_by_all_idle, Server, servers) {
    silent_client_is_closed_for_idleness<Server>(idlewheel::idle_kind::all);
}

// 2. A client that sends every T/4 for 3T is never closed and gets every echo back.
BOOST_AUTO_TEST_CASE_TEMPLATE(active_client_is_never_closed, Server, servers) {
    const auto idle = 400ms;
    const int messages = 13;  // at 0, T/4, ..., 3T
    server_thread<Server> server({.idle_timeout = idle});
    net::io_context io;
    client_result r;
    net::co_spawn(io, active_client(server.port(), idle / 4, messages, r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    BOOST_TEST(!r.ec, r.ec.message());  // its own close went through: the server never closed it
    BOOST_TEST(r.echoes == messages);
    BOOST_TEST(ms(r.lifetime) >= ms(3 * idle));

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    BOOST_TEST(ws_echo::to_string(c.closed.at(0).cause) == "client close");
    BOOST_TEST(c.echoed == static_cast<std::size_t>(messages));
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == 0U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST(server.stop());
}

// 3. A client that never reads (so never answers a ping) is dropped after about
//    ping_interval + pong_timeout, long before the idle time.
BOOST_AUTO_TEST_CASE_TEMPLATE(deaf_client_is_dropped_as_dead_peer, Server, servers) {
    const auto ping_interval = 50ms, pong_timeout = 100ms;
    const auto idle = 5s;
    server_thread<Server> server({.idle_timeout = idle, .heartbeat = {.ping_interval = ping_interval, .pong_timeout = pong_timeout}});
    net::io_context io;
    std::optional<ws_stream> ws;
    net::co_spawn(io, deaf_client(server.port(), ws), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return ws.has_value(); }));

    // The client's io_context does not run meanwhile: it reads nothing at all.
    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    const auto& rec = c.closed.at(0);
    BOOST_TEST(ws_echo::to_string(rec.cause) == "dead peer");
    BOOST_REQUIRE(rec.after_upgrade.has_value());
    BOOST_TEST(ms(*rec.after_upgrade) >= ms(ping_interval + pong_timeout));
    BOOST_TEST(ms(*rec.after_upgrade) < ms(ping_interval + pong_timeout) + 2000);  // idle is 5 s
    BOOST_TEST(c.pings == 1U);  // one ping, unanswered: no second one stacked on it
    const auto s = server.stats();
    BOOST_TEST(s.dead_peers == 1U);
    BOOST_TEST(s.pings_sent == 1U);
    BOOST_TEST(s.reader_idle == 0U);
    BOOST_TEST(s.pending == 0U);

    // Now the client reads: the ping that was never answered, then the dropped connection (no
    // close frame: the server did not shake hands with a dead peer).
    client_result r;
    net::co_spawn(io, read_until_closed(*ws, r, steady_clock::now()), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    BOOST_TEST(r.ec.failed());
    BOOST_TEST((r.ec != websocket::error::closed), r.ec.message());
    BOOST_TEST(r.pings == 1);
    BOOST_TEST(server.stop());
}

// 4. A client that answers pings but sends nothing is closed by the idle timeout only, and
//    the pings went on meanwhile: a pong is liveness, not activity.
BOOST_AUTO_TEST_CASE_TEMPLATE(pong_answering_client_is_closed_by_idle_timeout_only, Server, servers) {
    const auto ping_interval = 50ms, pong_timeout = 300ms, idle = 600ms;
    server_thread<Server> server({.idle_timeout = idle, .heartbeat = {.ping_interval = ping_interval, .pong_timeout = pong_timeout}});
    net::io_context io;
    client_result r;
    net::co_spawn(io, silent_client(server.port(), r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return r.finished; }));
    check_idle_close(r, idle);
    BOOST_TEST(r.pings >= 3);  // about idle / ping_interval of them

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    const auto c = server.counters();
    check_idle_record(c.closed.at(0), idle);
    BOOST_TEST(c.pings >= 3U);
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == 1U);
    BOOST_TEST(s.dead_peers == 0U);
    BOOST_TEST(s.pings_sent >= 3U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST(server.stop());
}

// 5. An upgrade request trickled a byte every 20 ms is cut off by the handshake deadline: the
//    bytes do not extend it. A client connecting afterwards is served normally.
BOOST_AUTO_TEST_CASE_TEMPLATE(slow_handshake_is_dropped_and_others_are_served, Server, servers) {
    const auto handshake = 200ms;
    const auto gap = 20ms;  // the whole request would take 2.6 s
    server_thread<Server> server({.handshake_timeout = handshake});
    net::io_context io;
    tcp::socket raw(io);
    trickle_result t;
    net::co_spawn(io, trickle_client(raw, server.port(), gap, t), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return t.closed && t.writer_done; }));
    BOOST_TEST(ms(t.closed_after) >= ms(handshake));
    BOOST_TEST(ms(t.closed_after) < 1500);  // had the bytes extended it, not before 2.6 s
    BOOST_TEST(t.sent >= 3U);               // bytes did arrive while the deadline ran
    BOOST_TEST(t.sent < upgrade_request.size());

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    auto c = server.counters();
    BOOST_TEST(ws_echo::to_string(c.closed.at(0).cause) == "handshake timeout");
    BOOST_TEST(ms(c.closed.at(0).after_accept) >= ms(handshake));
    BOOST_TEST(!c.closed.at(0).after_upgrade.has_value());
    BOOST_TEST(c.upgraded == 0U);
    BOOST_TEST(server.stats().handshake_timeouts == 1U);

    client_result control;
    net::co_spawn(io, active_client(server.port(), 10ms, 3, control), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return control.finished; }));
    BOOST_TEST(!control.ec, control.ec.message());
    BOOST_TEST(control.echoes == 3);

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& n) { return n.closed.size() == 2; }));
    c = server.counters();
    BOOST_TEST(c.count(close_cause::handshake_timeout) == 1U);
    BOOST_TEST(c.count(close_cause::client_close) == 1U);
    BOOST_TEST(server.stats().pending == 0U);
    BOOST_TEST(server.stop());
}

// 6. 200 clients at once, half silent, half active: exactly the silent ones are closed for
//    idleness, and the wheel is empty once they are all gone.
BOOST_AUTO_TEST_CASE_TEMPLATE(many_clients_only_the_silent_ones_are_closed, Server, servers) {
    const auto idle = 400ms;
    const int messages = 13;  // every idle/4 for 3 idle times
    constexpr std::size_t half = 100;
    server_thread<Server> server({.idle_timeout = idle, .heartbeat = {.ping_interval = 100ms, .pong_timeout = 1s}});
    net::io_context io;
    std::vector<client_result> silent(half), active(half);
    for (std::size_t i = 0; i < half; ++i) {
        net::co_spawn(io, silent_client(server.port(), silent[i]), rethrow);
        net::co_spawn(io, active_client(server.port(), idle / 4, messages, active[i]), rethrow);
    }
    const auto all_finished = [](const std::vector<client_result>& v) {
        return std::all_of(v.begin(), v.end(), [](const client_result& r) { return r.finished; });
    };
    BOOST_REQUIRE(run_until(io, [&] { return all_finished(silent) && all_finished(active); }, 3 * patience));

    int pings = 0;
    for (const auto& r : silent) {
        check_idle_close(r, idle);
        pings += r.pings;
    }
    BOOST_TEST(pings > 0);
    for (const auto& r : active) {
        BOOST_TEST(!r.ec, r.ec.message());
        BOOST_TEST(r.echoes == messages);
    }

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.open == 0 && c.closed.size() == 2 * half; }));
    const auto c = server.counters();
    BOOST_TEST(c.accepted == 2 * half);
    BOOST_TEST(c.upgraded == 2 * half);
    BOOST_TEST(c.count(close_cause::idle) == half);
    BOOST_TEST(c.count(close_cause::client_close) == half);
    for (const auto& rec : c.closed)
        if (rec.cause == close_cause::idle) check_idle_record(rec, idle);
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == half);
    BOOST_TEST(s.dead_peers == 0U);
    BOOST_TEST(s.handshake_timeouts == 0U);
    BOOST_TEST(s.pings_sent > 0U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST_MESSAGE("200 sessions: " << s.wakeups << " wake-ups (" << s.idle_wakeups << " idle), worst lateness "
                                        << ms(s.worst_lateness) << " ms, " << s.pings_sent << " pings");
    BOOST_TEST(server.stop());
}

// An idle close the peer never answers (it reads nothing) ends with a drop after close_timeout:
// Beast's own close has no timeout when its timeouts are off.
BOOST_AUTO_TEST_CASE_TEMPLATE(unanswered_idle_close_is_dropped_after_close_timeout, Server, servers) {
    const auto idle = 100ms, close_timeout = 200ms;
    server_thread<Server> server({.idle_timeout = idle, .close_timeout = close_timeout});
    net::io_context io;
    std::optional<ws_stream> ws;
    const auto t0 = steady_clock::now();
    net::co_spawn(io, deaf_client(server.port(), ws), rethrow);
    BOOST_REQUIRE(run_until(io, [&] { return ws.has_value(); }));

    BOOST_REQUIRE(server.wait_until([](const ws_echo::server_counters& c) { return c.closed.size() == 1; }));
    BOOST_TEST(ms(steady_clock::now() - t0) >= ms(idle + close_timeout));
    const auto c = server.counters();
    check_idle_record(c.closed.at(0), idle);
    const auto s = server.stats();
    BOOST_TEST(s.reader_idle == 1U);
    BOOST_TEST(s.close_timeouts == 1U);  // the close deadline
    BOOST_TEST(s.operation_timeouts == 0U);
    BOOST_TEST(s.pending == 0U);
    BOOST_TEST(server.stop());
}

// stop() ends every open session at once, and the server's io_context returns.
BOOST_AUTO_TEST_CASE_TEMPLATE(stop_ends_open_sessions, Server, servers) {
    server_thread<Server> server({.idle_timeout = 60s, .heartbeat = {.ping_interval = 10s, .pong_timeout = 10s}});
    net::io_context io;
    std::vector<client_result> clients(3);
    for (auto& r : clients) net::co_spawn(io, silent_client(server.port(), r), rethrow);
    BOOST_REQUIRE(run_until(io, [&] {
        return std::all_of(clients.begin(), clients.end(), [](const client_result& r) { return r.reading; });
    }));

    BOOST_TEST(server.stop());
    BOOST_REQUIRE(run_until(io, [&] {
        return std::all_of(clients.begin(), clients.end(), [](const client_result& r) { return r.finished; });
    }));
    for (const auto& r : clients) BOOST_TEST(r.ec.failed());
    const auto c = server.counters();  // the server's thread has ended: read directly
    BOOST_TEST(c.open == 0U);
    BOOST_TEST(c.count(close_cause::shutdown) == 3U);
    BOOST_TEST(server.stats().pending == 0U);
}

// ---- websocket_liveness alone: handshake_step() and Beast's timeouts ------------------------

namespace {

// A session with no peer: its stream is never connected, which is all start(),
// handshake_step() and accepted() need.
struct lone_session : std::enable_shared_from_this<lone_session> {
    using config_type = idlewheel::beast::websocket_liveness_config<lone_session>;
    ws_stream ws;
    idlewheel::beast::websocket_liveness<lone_session> live;
    lone_session(net::io_context& io, const config_type& config) : ws(io), live(config, *this, ws) {}
};

// An io_context run by the test thread, its wheel, and one config with `handshake` as the
// handshake deadline (and idle and heartbeat far away).
struct lone_fixture {
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    idlewheel::liveness_stats stats;
    lone_session::config_type config;
    std::shared_ptr<lone_session> session;

    explicit lone_fixture(std::chrono::nanoseconds handshake)
        : config(wheel,
                 {.handshake_timeout = handshake, .idle_timeout = 60s, .ping_interval = 30s, .pong_timeout = 30s},
                 &stats),
          session(std::make_shared<lone_session>(io, config)) {}

    idlewheel::beast::websocket_liveness<lone_session>& live() { return session->live; }
};

using lone_phase = idlewheel::beast::websocket_liveness<lone_session>::phase;

// Runs the io_context (and so the wheel) for `d` of real time.
void run_for(net::io_context& io, steady_clock::duration d) {
    run_until(
        io, [] { return false; }, d);
}

}  // namespace

// In time: true, still in the handshake, and its deadline exactly where start() put it (not
// re-armed); the upgrade then opens the session.
BOOST_AUTO_TEST_CASE(handshake_step_in_time_goes_on_and_keeps_the_deadline) {
    lone_fixture f(5s);
    f.live().start();
    const auto due = f.live().expiry();
    BOOST_TEST((due != idlewheel::wheel_timer::time_point::max()));
    run_for(f.io, 30ms);  // time passes before the step
    BOOST_TEST(f.live().handshake_step({}));
    BOOST_TEST((f.live().current() == lone_phase::handshake));
    BOOST_TEST((f.live().expiry() == due));
    BOOST_TEST(f.live().handshake_step({}));  // a second step: the same
    BOOST_TEST((f.live().expiry() == due));
    BOOST_TEST(f.live().accepted({}));
    BOOST_TEST((f.live().current() == lone_phase::open));
    f.live().stop();
}

// The deadline from start() bounds the step and the upgrade together: a step in time does not
// give the upgrade a new deadline, and the verdict comes no sooner than the handshake time
// after start(); then the step, or the upgrade, are false.
BOOST_AUTO_TEST_CASE(handshake_step_after_the_deadline_is_false) {
    const auto handshake = 200ms;
    lone_fixture f(handshake);
    const auto t0 = steady_clock::now();
    f.live().start();
    const auto due = f.live().expiry();
    run_for(f.io, handshake / 2);
    BOOST_REQUIRE(f.live().handshake_step({}));
    BOOST_TEST((f.live().expiry() == due));  // not re-armed: the same deadline
    BOOST_REQUIRE(run_until(f.io, [&] { return f.live().has_verdict(); }));
    BOOST_TEST(ms(steady_clock::now() - t0) >= ms(handshake));
    BOOST_TEST((f.live().verdict() == idlewheel::liveness_event::handshake_timeout));
    BOOST_TEST(f.live().expired());
    BOOST_TEST(f.stats.handshake_timeouts == 1U);
    BOOST_TEST(!f.live().handshake_step({}));  // a TLS success reported after the verdict
    BOOST_TEST(!f.live().accepted({}));
    BOOST_TEST((f.live().current() == lone_phase::ended));
}

// On an error: false, and the object stops (its entry leaves the wheel, no verdict ever).
BOOST_AUTO_TEST_CASE(handshake_step_on_an_error_is_false_and_stops) {
    lone_fixture f(100ms);
    f.live().start();
    BOOST_TEST((f.live().expiry() != idlewheel::wheel_timer::time_point::max()));  // in the wheel
    BOOST_TEST(!f.live().handshake_step(net::error::connection_reset));
    BOOST_TEST((f.live().current() == lone_phase::stopped));
    BOOST_TEST((f.live().expiry() == idlewheel::wheel_timer::time_point::max()));  // out of it
    BOOST_TEST(f.wheel.stats().pending == 0U);
    BOOST_TEST(!f.live().handshake_step({}));  // stopped: nothing to go on with
    run_for(f.io, 150ms);
    BOOST_TEST(!f.live().has_verdict());
    BOOST_TEST(f.stats.handshake_timeouts == 0U);
}

// Not started: false (no handshake to step through).
BOOST_AUTO_TEST_CASE(handshake_step_before_start_is_false) {
    lone_fixture f(100ms);
    BOOST_TEST(!f.live().handshake_step({}));
    BOOST_TEST((f.live().current() == lone_phase::stopped));
}

// With the options' idle_in_handshake, a peer that sends nothing is idle before the handshake
// deadline; before the upgrade there is no WebSocket to close, so the socket is closed at once
// (as for a handshake timeout), counted as reader idle only, and the upgrade is refused. Over a
// real loopback connection: the client sees the close no sooner than the idle time.
BOOST_AUTO_TEST_CASE(idle_in_handshake_closes_the_socket_before_the_upgrade) {
    const auto idle = 150ms;
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    idlewheel::liveness_stats stats;
    lone_session::config_type config(
        wheel, {.handshake_timeout = 5s, .idle_timeout = idle, .idle_in_handshake = true}, &stats);
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    auto session = std::make_shared<lone_session>(io, config);
    acceptor.accept(session->ws.next_layer());
    const auto t0 = steady_clock::now();
    session->live.start();
    bool closed = false;
    beast::error_code read_ec;
    steady_clock::duration closed_after{};
    std::array<char, 64> sink{};
    client.async_read_some(net::buffer(sink), [&](beast::error_code ec, std::size_t) {
        read_ec = ec;
        closed_after = steady_clock::now() - t0;
        closed = true;
    });
    BOOST_REQUIRE(run_until(io, [&] { return closed; }, patience));
    BOOST_TEST((read_ec == net::error::eof || read_ec == net::error::connection_reset), read_ec.message());
    BOOST_TEST(ms(closed_after) >= ms(idle));
    BOOST_TEST(ms(closed_after) < ms(idle) + 2500);  // far before the 5 s deadline
    BOOST_TEST((session->live.verdict() == idlewheel::liveness_event::idle));
    BOOST_TEST(!session->live.expired());
    BOOST_TEST(stats.reader_idle == 1U);
    BOOST_TEST(stats.handshake_timeouts == 0U);
    BOOST_TEST(!session->live.accepted({}));  // an upgrade reported now is refused
    BOOST_TEST(!session->ws.next_layer().is_open());
}

// Beast's suggested timeouts set BEFORE start() are harmless: start() turns them off.
BOOST_AUTO_TEST_CASE(beast_timeout_before_start_is_turned_off) {
    lone_fixture f(5s);
    f.session->ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    f.live().start();
    BOOST_TEST(f.live().accepted({}));
    websocket::stream_base::timeout t{};
    f.session->ws.get_option(t);
    BOOST_TEST((t.handshake_timeout == websocket::stream_base::none()));
    BOOST_TEST((t.idle_timeout == websocket::stream_base::none()));
    BOOST_TEST(!t.keep_alive_pings);
    f.live().stop();
}

namespace {

// What accepted(ec) does with a Beast timeout set after start(), in a child process.
idlewheel::test::child_outcome accept_after_late_timeout(const websocket::stream_base::timeout& late,
                                                         boost::system::error_code ec) {
    return idlewheel::test::in_child([late, ec] {
        lone_fixture f(5s);
        f.live().start();
        f.session->ws.set_option(late);
        const bool ok = f.live().accepted(ec);
        websocket::stream_base::timeout t{};
        f.session->ws.get_option(t);  // without the check: turned off again
        const bool off = t.handshake_timeout == websocket::stream_base::none() &&
                         t.idle_timeout == websocket::stream_base::none() && !t.keep_alive_pings;
        ::_exit(off && ok == !ec ? 0 : 3);
    });
}

constexpr std::string_view late_timeout_message =
    "websocket::stream_base::timeout set after websocket_liveness::start(): Beast's own timer would run "
    "beside idlewheel's; remove the set_option, or call start() after it";

void expect_late_timeout_caught(const idlewheel::test::child_outcome& o) {
#if IDLEWHEEL_CHECK_USAGE
    BOOST_TEST(o.aborted);
    BOOST_TEST(o.err.find(late_timeout_message) != std::string::npos, o.err);
#else
    BOOST_TEST(!o.aborted, o.err);
    BOOST_TEST(o.exit_code == 0);  // accepted as usual, Beast's timeouts off again
#endif
}

}  // namespace

// timeout::suggested after start() (Beast's TLS example sets it after the TLS handshake):
// never silent. With IDLEWHEEL_CHECK_USAGE (debug builds) accepted() aborts with the message,
// on success and on error alike; without it, Beast's timeouts are turned off again.
BOOST_AUTO_TEST_CASE(beast_suggested_timeout_after_start_is_caught_on_success) {
    expect_late_timeout_caught(
        accept_after_late_timeout(websocket::stream_base::timeout::suggested(beast::role_type::server), {}));
}

BOOST_AUTO_TEST_CASE(beast_suggested_timeout_after_start_is_caught_on_error) {
    expect_late_timeout_caught(accept_after_late_timeout(
        websocket::stream_base::timeout::suggested(beast::role_type::server), net::error::connection_reset));
}

// Any part of it counts: keep_alive_pings alone would make Beast ping beside us.
BOOST_AUTO_TEST_CASE(beast_keep_alive_pings_after_start_is_caught) {
    expect_late_timeout_caught(
        accept_after_late_timeout({websocket::stream_base::none(), websocket::stream_base::none(), true}, {}));
}

// ---- configs registered once per io_context or pool (use_websocket_liveness) ----------------

namespace {

// A session whose liveness object finds its config from its stream's executor: nothing is
// passed through its constructor but the executor it is built on.
struct registered_session : std::enable_shared_from_this<registered_session> {
    ws_stream ws;
    idlewheel::beast::websocket_liveness<registered_session> live;
    explicit registered_session(const net::any_io_executor& ex) : ws(ex), live(*this, ws) {}
};
using registered_config = idlewheel::beast::websocket_liveness_config<registered_session>;

const idlewheel::session_liveness_options quick_handshake{
    .handshake_timeout = 50ms, .idle_timeout = 60s, .ping_interval = 30s, .pong_timeout = 30s};

}  // namespace

// With a pool: each object uses the config of its own shard (each shard's stats count its own
// sessions' verdicts, and the verdict comes from that shard's wheel).
BOOST_AUTO_TEST_CASE(registered_pool_configs_are_found_per_shard) {
    net::io_context io;
    idlewheel::wheel_pool pool(io, idlewheel::wheel_pool_options{.shards = 2});
    std::array<idlewheel::liveness_stats, 2> stats;
    idlewheel::per_shard<registered_config> configs(
        pool, [&](idlewheel::wheel_pool::shard& s) { return registered_config(s.wheel(), quick_handshake, &stats[s.index()]); });
    idlewheel::beast::use_websocket_liveness(io, configs);
    std::vector<std::shared_ptr<registered_session>> sessions;
    for (int i = 0; i < 3; ++i) sessions.push_back(std::make_shared<registered_session>(pool[0].get_executor()));
    sessions.push_back(std::make_shared<registered_session>(pool[1].get_executor()));
    for (auto& s : sessions) net::dispatch(s->ws.get_executor(), [s] { s->live.start(); });
    BOOST_REQUIRE(run_until(io, [&] { return stats[0].handshake_timeouts + stats[1].handshake_timeouts == 4U; }));
    BOOST_TEST(stats[0].handshake_timeouts == 3U);
    BOOST_TEST(stats[1].handshake_timeouts == 1U);
    for (auto& s : sessions) BOOST_TEST((s->live.verdict() == idlewheel::liveness_event::handshake_timeout));
}

// With one wheel (one thread): the one config registered for the context.
BOOST_AUTO_TEST_CASE(a_registered_single_config_is_found) {
    net::io_context io;
    idlewheel::wheel_timer wheel(io);
    idlewheel::liveness_stats stats;
    registered_config config(wheel, quick_handshake, &stats);
    idlewheel::beast::use_websocket_liveness(io, config);
    auto s = std::make_shared<registered_session>(io.get_executor());
    s->live.start();
    BOOST_REQUIRE(run_until(io, [&] { return s->live.has_verdict(); }));
    BOOST_TEST(stats.handshake_timeouts == 1U);
}

// Set-up mistakes are loud, and name the fix: nothing registered for this session type, or a
// stream not built on a shard's strand of the registered pool.
BOOST_AUTO_TEST_CASE(a_missing_registration_or_a_stream_off_the_shards_throws_with_the_fix) {
    net::io_context io;
    const auto message_of = [](auto make) -> std::string {
        try {
            make();
        } catch (const std::logic_error& e) {
            return e.what();
        }
        return {};
    };
    const std::string none = message_of([&] { registered_session s(io.get_executor()); });
    BOOST_TEST(none.find("use_websocket_liveness") != std::string::npos, none);
    idlewheel::wheel_pool pool(io, idlewheel::wheel_pool_options{.shards = 2});
    idlewheel::per_shard<registered_config> configs(pool, quick_handshake);
    idlewheel::beast::use_websocket_liveness(io, configs);
    const std::string off = message_of([&] { registered_session s(net::make_strand(io)); });
    BOOST_TEST(off.find("pool.next().get_executor()") != std::string::npos, off);
    registered_session on(pool[1].get_executor());  // on a shard: found
    BOOST_TEST(!on.live.has_verdict());
}
