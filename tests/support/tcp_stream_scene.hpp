// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_TCP_STREAM_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_TCP_STREAM_SCENE_HPP

// What the parts of tcp_stream.hpp's tests share (test_beast_tcp_stream*.cpp but _moves, one
// translation unit of the executable test_beast_tcp_stream): a stream on a manual-clock wheel
// connected over loopback to a peer, what a completion handler saw and when, and the
// expectations of Beast's timeout contract (never before the expiry, at most one tick after);
// and, on the steady clock, what the compositions share with test_beast_ssl_stream.cpp (the
// executable's TLS translation unit).

#include <idlewheel/beast/tcp_stream.hpp>

#include "manual_io.hpp"
#include "net.hpp"

#include <boost/test/unit_test.hpp>

#include "in_child.hpp"  // after Boost.Test

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

// The names the tests use unqualified (they say `using namespace idlewheel::test::tcp_stream_scene;`).
namespace idlewheel::test::tcp_stream_scene {

namespace beast = boost::beast;
using tcp = net::ip::tcp;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::child_outcome;
using idlewheel::test::in_child;
using idlewheel::test::ms_since;
using steady_clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;

inline constexpr auto patience = 10s;  // the bound of every real-clock wait; reached only when a test fails
inline constexpr auto as_result = idlewheel::test::as_tuple(net::use_awaitable);


template <class Rep, class Period>
std::int64_t ms(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

inline bool is_timeout(const error_code& ec) { return ec == beast::error::timeout; }
inline bool is_aborted(const error_code& ec) { return ec == net::error::operation_aborted; }

// An allocator that counts what is allocated through it (the handler's associated allocator).
template <class T>
struct counting_allocator {
    using value_type = T;
    int* count;
    explicit counting_allocator(int* c) noexcept : count(c) {}
    template <class U>
    counting_allocator(const counting_allocator<U>& o) noexcept : count(o.count) {}  // NOLINT: rebinding
    T* allocate(std::size_t n) {
        ++*count;
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
    template <class U>
    bool operator==(const counting_allocator<U>& o) const noexcept {
        return count == o.count;
    }
    template <class U>
    bool operator!=(const counting_allocator<U>& o) const noexcept {
        return count != o.count;
    }
};

// What a completion handler saw, and when (manual ms since the test began).
struct outcome {
    int calls = 0;
    error_code ec;
    std::size_t bytes = 0;
    std::int64_t at_ms = -1;
};

// Polls until nothing more is ready (completions of a close are queued by the close).
inline void settle(net::io_context& io) {
    for (int i = 0; i < 8; ++i) idlewheel::test::poll(io);
}

// It completed once, with beast::error::timeout, at `at_ms`.
inline void expect_timed_out(const outcome& r, std::int64_t at_ms) {
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(is_timeout(r.ec), r.ec.message());
    BOOST_TEST(r.at_ms == at_ms);
}

// It completed once, with operation_aborted (cancelled, or its socket closed under it).
inline void expect_aborted(const outcome& r) {
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(is_aborted(r.ec), r.ec.message());
}

// A stream on the manual wheel, connected over loopback to `peer`.
struct stream_fixture : idlewheel::test::wheel_fixture {
    using stream_type = idlewheel::beast::basic_tcp_stream<wheel_type>;

    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    tcp::socket peer{io};
    std::optional<stream_type> stream;
    std::vector<char> in = std::vector<char>(4096);

    stream_fixture() {
        peer.connect(acceptor.local_endpoint());
        stream.emplace(wheel, acceptor.accept());
    }
    // No operation may be pending when a stream is destroyed (see the header).
    ~stream_fixture() {
        if (stream) stream->close();
        settle(io);
    }

    stream_type& s() { return *stream; }

    // A fresh connection and stream (the old stream has nothing pending).
    void reconnect() {
        stream.reset();
        peer.close();
        peer.connect(acceptor.local_endpoint());
        stream.emplace(wheel, acceptor.accept());
    }

    auto record(outcome& r) {
        return [&r, t0 = t0](error_code ec, std::size_t n) {
            ++r.calls;
            r.ec = ec;
            r.bytes = n;
            r.at_ms = ms_since(t0);
        };
    }
    // ... and for a connect through an endpoint sequence.
    auto record_connect(outcome& r) {
        return [&r, t0 = t0](error_code ec, const tcp::endpoint&) {
            ++r.calls;
            r.ec = ec;
            r.at_ms = ms_since(t0);
        };
    }
    void read(outcome& r) { s().async_read_some(net::buffer(in), record(r)); }

    // Moves the manual clock to `t_ms` (ms since t0), polling each millisecond.
    void advance_to(std::int64_t t_ms) { advance_and_poll(io, std::chrono::milliseconds(t_ms - ms_since(t0))); }
    // ... and lets what that made ready run to the end (a timeout's close queues completions).
    void settle_at(std::int64_t t_ms) {
        advance_to(t_ms);
        settle(io);
    }

    // Neither `a` nor `b` completes before `due_ms` (checked 1 ms before); then the clock moves
    // to `due_ms` and what it made ready runs.
    void expect_pending_until(std::int64_t due_ms, const outcome& a, const outcome& b) {
        advance_to(due_ms - 1);
        BOOST_TEST(a.calls + b.calls == 0);
        settle_at(due_ms);
    }

    // Beast's timeout contract for one operation on s() due at `due_ms` (a tick boundary): still
    // pending, the socket open, 1 ms before; timed out exactly at `due_ms`, the socket closed.
    void expect_times_out_at(const outcome& r, std::int64_t due_ms) {
        advance_to(due_ms - 1);
        BOOST_TEST(r.calls == 0);
        BOOST_TEST(s().socket().is_open());
        settle_at(due_ms);
        expect_timed_out(r, due_ms);
        BOOST_TEST(!s().socket().is_open());  // Beast closes the socket on a timeout
    }

    // ... due off a tick: never before `not_before_ms`, and by `not_after_ms` (the next tick).
    void expect_times_out_between(const outcome& r, std::int64_t not_before_ms, std::int64_t not_after_ms) {
        advance_to(not_before_ms - 1);
        BOOST_TEST(r.calls == 0);
        settle_at(not_after_ms);
        BOOST_TEST(r.calls == 1);
        BOOST_CHECK_MESSAGE(is_timeout(r.ec), r.ec.message());
        BOOST_TEST(r.at_ms >= not_before_ms);
        BOOST_TEST(r.at_ms <= not_after_ms);
    }

    // Fills the socket's send buffer and the peer's receive window, so that the next write
    // blocks until the peer reads (it never does). The kernel may make room a little after a
    // write was refused (loopback moves the data on, the window grows): fill again until a
    // round 20 ms after the last one finds no room at all.
    void fill_window() {
        s().socket().non_blocking(true);
        std::vector<char> chunk(1 << 16, 'x');
        for (int round = 0; round < 100; ++round) {
            std::size_t wrote = 0;
            error_code ec;
            while (!ec) wrote += s().socket().write_some(net::buffer(chunk), ec);
            BOOST_REQUIRE_MESSAGE(ec == net::error::would_block, ec.message());
            if (round > 0 && wrote == 0) return;
            std::this_thread::sleep_for(20ms);
        }
        BOOST_FAIL("the peer's receive window never filled");
    }

    // The peer sends a byte: `r`, a read pending on s(), completes once, without an error.
    void expect_read_completes_on_data(const outcome& r) {
        net::write(peer, net::buffer("z", 1));
        settle(io);
        BOOST_TEST(r.calls == 1);
        BOOST_TEST(!r.ec);
    }

    // Starts a write on s() that cannot complete: the window is full and the peer never reads.
    void start_blocked_write(outcome& w) {
        static const std::vector<char> big(1 << 20, 'y');
        fill_window();
        s().async_write_some(net::buffer(big), record(w));
    }
};

// Beast's rule for a read or write started after its deadline, which Boost 1.86 changed (the
// stream follows the Boost it is built with; test_beast_late_operation.cpp runs Beast's own
// stream beside it): up to 1.85 it is started, one that completes at once goes through, one
// still pending times out when the deadline's node comes due (the wheel's next tick); from
// 1.86 on the socket is closed and it completes with error::timeout at once, as if by post.
inline constexpr bool late_fails = idlewheel::beast::detail::late_transfer_fails;

// On the steady clock, for the compositions (test_beast_tcp_stream_compositions.cpp, and over
// TLS test_beast_ssl_stream.cpp): runs `io` until done(), at most `limit` of real time.
template <class Done>
bool run_until(net::io_context& io, Done done, steady_clock::duration limit = patience) {
    const auto give_up = steady_clock::now() + limit;
    io.restart();
    while (!done() && steady_clock::now() < give_up) io.run_one_for(50ms);
    return done();
}

// co_spawn's completion: an exception in a coroutine fails the test instead of vanishing.
inline const auto rethrow = [](const std::exception_ptr& e) {
    if (e) std::rethrow_exception(e);
};

// The two sides of the WebSocket echo the compositions run over any stream (this tcp_stream,
// TLS over it), as coroutines; a failed step fails the test (BOOST_REQUIRE, through rethrow).
// The server's: accepts one connection on `acceptor`.
inline net::awaitable<tcp::socket> accept_one(tcp::acceptor& acceptor) {
    auto [ec, socket] = co_await acceptor.async_accept(as_result);
    BOOST_REQUIRE_MESSAGE(!ec, ec.message());
    co_return std::move(socket);
}

// The server's, on a `ws` whose lower layers are ready (a TLS handshake done): accepts the
// WebSocket handshake, lifts the deadline, echoes one message, then reads on until the
// client's close; returns what ended that read (websocket::error::closed after a clean close).
template <class WebSocket>
net::awaitable<error_code> accept_and_echo_one_message(WebSocket& ws) {
    auto [hec] = co_await ws.async_accept(as_result);
    BOOST_REQUIRE_MESSAGE(!hec, hec.message());
    beast::get_lowest_layer(ws).expires_never();
    beast::flat_buffer buffer;
    auto [rec, n] = co_await ws.async_read(buffer, as_result);
    BOOST_REQUIRE_MESSAGE(!rec, rec.message());
    ws.text(ws.got_text());
    auto [wec, m] = co_await ws.async_write(buffer.data(), as_result);
    BOOST_REQUIRE_MESSAGE(!wec, wec.message());
    buffer.consume(buffer.size());
    auto [end, k] = co_await ws.async_read(buffer, as_result);
    co_return end;
}

// What the client's side saw: the echo, and how its close completed.
struct echo_result {
    std::string echoed;
    error_code close;
};

// The client's, after its handshake: sends `text` on `ws`, reads the echo, closes.
template <class WebSocket>
net::awaitable<echo_result> send_and_close(WebSocket& ws, std::string text) {
    auto [wec, n] = co_await ws.async_write(net::buffer(text), as_result);
    BOOST_REQUIRE_MESSAGE(!wec, wec.message());
    beast::flat_buffer buffer;
    auto [rec, m] = co_await ws.async_read(buffer, as_result);
    BOOST_REQUIRE_MESSAGE(!rec, rec.message());
    echo_result result{beast::buffers_to_string(buffer.data()), {}};
    std::tie(result.close) = co_await ws.async_close(beast::websocket::close_code::normal, as_result);
    co_return result;
}

// Runs the coroutines server() and client() (functions returning net::awaitable<void>) on
// `io` until both ended, at most `patience`; true if both did.
template <class Server, class Client>
bool run_both(net::io_context& io, Server server, Client client) {
    bool server_done = false, client_done = false;
    const auto spawn = [&io](auto& body, bool& done) {
        net::co_spawn(
            io,
            [&body, &done]() -> net::awaitable<void> {
                co_await body();
                done = true;
            },
            rethrow);
    };
    spawn(server, server_done);
    spawn(client, client_done);
    return run_until(io, [&] { return server_done && client_done; });
}

// An io_context with a steady-clock wheel registered for it (use_wheel), and a listener.
struct steady_fixture {
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    steady_fixture() { idlewheel::beast::use_wheel(io, wheel); }
};

}  // namespace idlewheel::test::tcp_stream_scene

#endif
