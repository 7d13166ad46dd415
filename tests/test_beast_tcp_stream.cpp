// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel::beast::tcp_stream against Beast's timeout contract (boost/beast/core/basic_stream.hpp):
//  - on idlewheel::manual_clock (exact time, no sleeping) over real loopback sockets: when a
//    read, write or connect times out (never before its expiry, at most one tick after), the
//    per-direction expiries (a pending operation keeps its deadline, an expiry is kept across
//    operations), the HTTP pattern moving nothing in the wheel, expires_never, close and
//    cancel, odd durations, associated characteristics, and how a stream finds its wheel;
//  - misuse in a child process: destroying a stream with an operation pending aborts with what
//    to do (IDLEWHEEL_CHECK_LIFETIME), expires_*() with both directions pending asserts;
//  - on the steady clock, the compositions a Beast server uses: websocket::stream, http::async_read
//    with a client trickling its request, and a wheel_pool run by two threads; over TLS in
//    test_beast_tcp_stream_tls.cpp, the second source file of this test (the two compile in
//    parallel: as one file it was the longest compile of every build).
//    Real clocks: lower bounds are strict (never early), upper bounds generous.
//
// The server side of each composition case is written inline, not taken from the tests' echo
// server (support/ws_echo_server.hpp) on purpose: the stream the server reads and writes
// through (this tcp_stream, under websocket::stream) and each step of its handshake are what
// these cases test, and that server holds a plain socket.

#include <idlewheel/beast/tcp_stream.hpp>
// Second: its names must still resolve after this header's idlewheel::beast::detail (they did not).
#include <idlewheel/beast/websocket_liveness.hpp>
#include <idlewheel/beast/ssl_stream.hpp>  // the TLS stream that moves with this one inside

#include "support/manual_io.hpp"
#include "support/net.hpp"

#define BOOST_TEST_MODULE test_beast_tcp_stream
#include <boost/test/unit_test.hpp>

#include "support/in_child.hpp"  // after Boost.Test

#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
using tcp = net::ip::tcp;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::child_outcome;
using idlewheel::test::in_child;
using idlewheel::test::ms_since;
using steady_clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;

constexpr auto patience = 10s;  // the bound of every real-clock wait; reached only when a test fails
constexpr auto as_result = idlewheel::test::as_tuple(net::use_awaitable);


template <class Rep, class Period>
std::int64_t ms(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

bool is_timeout(const error_code& ec) { return ec == beast::error::timeout; }
bool is_aborted(const error_code& ec) { return ec == net::error::operation_aborted; }

// ---------------------------------------------------------------------------------------------
// Manual clock

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
void settle(net::io_context& io) {
    for (int i = 0; i < 8; ++i) idlewheel::test::poll(io);
}

// It completed once, with beast::error::timeout, at `at_ms`.
void expect_timed_out(const outcome& r, std::int64_t at_ms) {
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(is_timeout(r.ec), r.ec.message());
    BOOST_TEST(r.at_ms == at_ms);
}

// It completed once, with operation_aborted (cancelled, or its socket closed under it).
void expect_aborted(const outcome& r) {
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

BOOST_FIXTURE_TEST_SUITE(manual_clock_contract, stream_fixture)

BOOST_AUTO_TEST_CASE(read_times_out_at_its_tick_never_before) {
    outcome r;
    s().expires_after(30ms);  // a tick boundary (10 ms ticks)
    read(r);
    expect_times_out_at(r, 30);
}

BOOST_AUTO_TEST_CASE(read_deadline_off_a_tick_is_less_than_a_tick_late) {
    outcome r;
    s().expires_after(25ms);
    read(r);
    expect_times_out_between(r, 25, 30);
}

BOOST_AUTO_TEST_CASE(write_times_out_when_the_peer_does_not_read) {
    outcome r;
    s().expires_after(50ms);
    start_blocked_write(r);
    expect_times_out_at(r, 50);
}

BOOST_AUTO_TEST_CASE(a_read_and_a_write_pending_together_both_time_out) {
    outcome rr, wr;
    s().expires_after(40ms);
    read(rr);
    start_blocked_write(wr);
    expect_pending_until(40, rr, wr);
    expect_timed_out(rr, 40);
    expect_timed_out(wr, 40);
}

BOOST_AUTO_TEST_CASE(the_http_pattern_leaves_nothing_in_the_wheel_between_reads_and_the_last_read_times_out_at_its_expiry) {
    // expires_after(100ms) before every read, a read each millisecond: each read puts the node
    // in the wheel, its completion (no operation left pending) takes it out again, so the
    // stream could be destroyed on any thread between two reads.
    for (int i = 0; i <= 50; ++i) {
        if (i > 0) advance_and_poll(io, 1ms);
        s().expires_after(100ms);
        outcome r;
        read(r);
        BOOST_TEST_REQUIRE(wheel.pending() == 1U);
        if (i < 50) {
            expect_read_completes_on_data(r);
            BOOST_TEST_REQUIRE(wheel.pending() == 0U);
            continue;
        }
        // The last read stays pending, deadline 150 ms: never before, exactly at its tick.
        advance_to(149);
        BOOST_TEST(r.calls == 0);
        settle_at(150);
        expect_timed_out(r, 150);
        BOOST_TEST(wheel.pending() == 0U);
    }
}

BOOST_AUTO_TEST_CASE(while_a_read_stays_pending_later_write_deadlines_move_nothing_in_the_wheel) {
    // A WebSocket's shape: one read pending all along (no deadline of its own here: expiry
    // 1 h), writes with a later deadline each: a compare and a store, the node stays.
    s().expires_after(1h);
    outcome rr;
    read(rr);
    const auto before = wheel.stats();
    for (int i = 1; i <= 20; ++i) {
        advance_and_poll(io, 1ms);
        s().expires_after(std::chrono::hours(2));
        outcome w;
        s().async_write_some(net::buffer("w", 1), record(w));
        settle(io);
        BOOST_TEST_REQUIRE(w.calls == 1);
        BOOST_TEST_REQUIRE(!w.ec);
    }
    const auto after = wheel.stats();
    BOOST_TEST(after.scheduled == before.scheduled);  // the node did not move
    BOOST_TEST(after.rescheduled == before.rescheduled);
    BOOST_TEST(wheel.pending() == 1U);  // the read's deadline is still there
    expect_read_completes_on_data(rr);
    BOOST_TEST(wheel.pending() == 0U);  // ... and leaves with the last operation
}

BOOST_AUTO_TEST_CASE(a_pending_read_keeps_its_deadline_when_the_expiry_is_set_later_for_a_write) {
    outcome rr, wr;
    s().expires_after(100ms);
    read(rr);
    BOOST_TEST(ms(s().read_expiry() - t0) == 100);
    s().expires_after(1h);  // for the write: the pending read keeps 100 ms (Beast's rule)
    BOOST_TEST(ms(s().read_expiry() - t0) == 100);
    BOOST_TEST(ms(s().write_expiry() - t0) == ms(1h));
    start_blocked_write(wr);
    expect_pending_until(100, rr, wr);
    expect_timed_out(rr, 100);
    // The read's timeout closed the socket: the write ends too, with what the socket says (its
    // own deadline, an hour away, did not pass), as Beast's write does.
    expect_aborted(wr);
    BOOST_TEST(!s().socket().is_open());
}

BOOST_AUTO_TEST_CASE(a_write_deadline_does_not_time_out_a_read_pending_without_one) {
    // A WebSocket session's pattern: a read always pending with no deadline (expires_never()
    // after the handshake), expires_after() before a write.
    outcome rr, wr;
    s().expires_never();
    read(rr);
    advance_and_poll(io, 10ms);
    s().expires_after(40ms);  // 50 ms, for the write only
    BOOST_TEST((s().read_expiry() == manual_clock::time_point::max()));
    BOOST_TEST(ms(s().write_expiry() - t0) == 50);
    start_blocked_write(wr);
    expect_pending_until(50, rr, wr);
    expect_timed_out(wr, 50);
    expect_aborted(rr);  // the socket was closed under it: aborted, not timed out (as Beast)
    BOOST_TEST(rr.at_ms == 50);
}

BOOST_AUTO_TEST_CASE(a_read_without_a_deadline_outlives_writes_that_complete_in_time) {
    outcome rr;
    s().expires_never();
    read(rr);
    for (int i = 0; i < 3; ++i) {
        s().expires_after(20ms);
        outcome wr;
        s().async_write_some(net::buffer("w", 1), record(wr));
        settle(io);
        BOOST_TEST_REQUIRE(wr.calls == 1);
        BOOST_TEST(!wr.ec);
        advance_and_poll(io, 30ms);  // past the write's deadline: nothing is timed any more
    }
    BOOST_TEST(rr.calls == 0);
    BOOST_TEST(s().socket().is_open());
    expect_read_completes_on_data(rr);
}

BOOST_AUTO_TEST_CASE(an_earlier_deadline_for_the_other_direction_moves_the_node) {
    outcome rr, wr;
    s().expires_after(1s);
    read(rr);
    advance_and_poll(io, 10ms);
    s().expires_after(20ms);  // 30 ms, for the write
    const auto before = wheel.stats();
    start_blocked_write(wr);
    BOOST_TEST(wheel.stats().rescheduled == before.rescheduled + 1U);  // moved from 1 s to 30 ms
    expect_pending_until(30, rr, wr);
    expect_timed_out(wr, 30);
    expect_aborted(rr);
}

BOOST_AUTO_TEST_CASE(bytes_arriving_do_not_extend_the_expiry_and_it_applies_to_the_next_read) {
    outcome first, second;
    s().expires_after(50ms);
    read(first);
    advance_and_poll(io, 20ms);
    net::write(peer, net::buffer("abc", 3));
    settle(io);
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(!first.ec);
    BOOST_TEST(first.bytes == 3U);
    BOOST_TEST(ms(s().read_expiry() - t0) == 50);  // kept after the read completed
    read(second);                                  // no expires_*(): the same absolute deadline, 50 ms from the start
    expect_times_out_at(second, 50);
}

BOOST_AUTO_TEST_CASE(expires_never_while_a_read_is_pending_leaves_its_deadline) {
    outcome r;
    s().expires_after(30ms);
    read(r);
    advance_and_poll(io, 10ms);
    s().expires_never();  // the write's expiry only
    BOOST_TEST(ms(s().read_expiry() - t0) == 30);
    BOOST_TEST((s().write_expiry() == manual_clock::time_point::max()));
    expect_times_out_at(r, 30);
}

BOOST_AUTO_TEST_CASE(expires_never_before_a_read_means_no_deadline) {
    outcome r;
    s().expires_after(30ms);
    s().expires_never();
    read(r);
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 200ms, 10ms);
    BOOST_TEST(r.calls == 0);
    BOOST_TEST(s().socket().is_open());
    expect_read_completes_on_data(r);
}

// Beast's rule for a read or write started after its deadline, which Boost 1.86 changed (the
// stream follows the Boost it is built with; test_beast_late_operation.cpp runs Beast's own
// stream beside it): up to 1.85 it is started, one that completes at once goes through, one
// still pending times out when the deadline's node comes due (the wheel's next tick); from
// 1.86 on the socket is closed and it completes with error::timeout at once, as if by post.
constexpr bool late_fails = idlewheel::beast::detail::late_transfer_fails;

BOOST_AUTO_TEST_CASE(an_operation_started_after_the_expiry_passed_times_out_at_the_next_tick_if_still_pending) {
    s().expires_after(20ms);
    advance_and_poll(io, 30ms);  // passes with nothing pending: nothing happens yet
    BOOST_TEST(s().socket().is_open());
    outcome r;
    read(r);  // nothing to read: pending
    BOOST_TEST(r.calls == 0);  // never inside the initiating call
    if (late_fails) {
        BOOST_TEST(!s().socket().is_open());  // closed by the start
        settle(io);
        expect_timed_out(r, 30);
        BOOST_TEST(r.bytes == 0U);
        BOOST_TEST(wheel.pending() == 0U);
        return;
    }
    settle(io);
    BOOST_TEST(r.calls == 0);
    BOOST_TEST(s().socket().is_open());  // not before the node comes due
    advance_and_poll(io, wheel.tick());
    settle(io);
    expect_timed_out(r, 30 + ms(wheel.tick()));
    BOOST_TEST(r.bytes == 0U);
    BOOST_TEST(!s().socket().is_open());
}

BOOST_AUTO_TEST_CASE(an_operation_started_after_the_expiry_passed_that_completes_at_once_goes_through_up_to_boost_1_85) {
    s().expires_after(20ms);
    advance_and_poll(io, 30ms);
    outcome w;
    s().async_write_some(net::buffer("x", 1), record(w));  // room in the send buffer: done at once
    BOOST_TEST(w.calls == 0);  // never inside the initiating call
    settle(io);
    BOOST_TEST(w.calls == 1);
    if (late_fails) {
        BOOST_CHECK_MESSAGE(is_timeout(w.ec), w.ec.message());
        BOOST_TEST(w.bytes == 0U);
        BOOST_TEST(!s().socket().is_open());
        BOOST_TEST(wheel.pending() == 0U);
        char got = 0;  // nothing was written: the peer reads the end of the stream
        error_code ec;
        peer.read_some(net::buffer(&got, 1), ec);
        BOOST_TEST(ec == net::error::eof);
        return;
    }
    BOOST_CHECK_MESSAGE(!w.ec, w.ec.message());
    BOOST_TEST(w.bytes == 1U);

    net::write(peer, net::buffer("y", 1));  // data waiting: the read completes at once too
    for (int i = 0; i < 200 && s().socket().available() == 0; ++i) std::this_thread::sleep_for(1ms);
    outcome r;
    read(r);
    settle(io);
    BOOST_TEST(r.calls == 1);
    BOOST_CHECK_MESSAGE(!r.ec, r.ec.message());
    BOOST_TEST(r.bytes == 1U);
    BOOST_TEST(s().socket().is_open());
    advance_and_poll(io, 100ms, 10ms);  // nothing pending: nothing more happens
    BOOST_TEST(s().socket().is_open());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_CASE(connect_after_the_expiry_passed_times_out_and_in_time_succeeds) {
    stream_type late(wheel, io);
    late.expires_after(-5s);
    int calls = 0;
    error_code got;
    late.async_connect(acceptor.local_endpoint(), [&](error_code ec) {
        ++calls;
        got = ec;
    });
    BOOST_TEST(calls == 0);
    // As Beast's: a connect that completed before the deadline's node came due (the next tick)
    // succeeded; one still pending then times out. Either way once, and never inline.
    advance_and_poll(io, wheel.tick());
    settle(io);
    BOOST_TEST(calls == 1);
    BOOST_CHECK_MESSAGE(!got || is_timeout(got), got.message());

    stream_type ok(wheel, io);
    ok.expires_after(1s);
    tcp::endpoint connected;
    std::vector<tcp::endpoint> endpoints{acceptor.local_endpoint()};
    int asked = 0;
    ok.async_connect(
        endpoints,
        [&](const error_code&, const tcp::endpoint&) {
            ++asked;
            return true;
        },
        [&](error_code ec, tcp::endpoint ep) {
            ++calls;
            got = ec;
            connected = ep;
        });
    tcp::socket accepted = acceptor.accept();
    settle(io);
    BOOST_TEST(calls == 2);
    BOOST_CHECK_MESSAGE(!got, got.message());
    BOOST_TEST(connected == acceptor.local_endpoint());
    BOOST_TEST(asked == 1);
    ok.close();
    settle(io);
}

// A listener whose accept queue is full: Linux drops further SYNs, so a connect to it stays
// pending (the client retries its SYN for minutes).
struct full_listener {
    tcp::acceptor acceptor;
    std::vector<tcp::socket> queued;
    explicit full_listener(net::io_context& io) : acceptor(io, tcp::v4()) {
        acceptor.bind({net::ip::address_v4::loopback(), 0});
        acceptor.listen(0);
        for (int i = 0; i < 4; ++i) {  // asynchronous: those beyond the queue stay in progress
            queued.emplace_back(io);
            queued.back().async_connect(acceptor.local_endpoint(), [](error_code) {});
        }
    }
};

BOOST_AUTO_TEST_CASE(a_pending_connect_times_out_and_counts_as_read_and_write) {
    full_listener full(io);
    stream_type c(wheel, io);
    outcome r;
    c.expires_after(50ms);
    std::vector<tcp::endpoint> endpoints{full.acceptor.local_endpoint()};
    c.async_connect(endpoints, record_connect(r));
    advance_to(49);
    BOOST_TEST_REQUIRE(r.calls == 0);  // pending: the listener's queue is full
    settle_at(50);
    expect_timed_out(r, 50);
    BOOST_TEST(!c.socket().is_open());
}

BOOST_AUTO_TEST_CASE(cancel_and_close_complete_with_operation_aborted) {
    outcome r1;
    s().expires_after(1s);
    read(r1);
    s().cancel();
    settle(io);
    expect_aborted(r1);
    BOOST_TEST(s().socket().is_open());

    outcome r2;
    read(r2);  // the expiry (1 s) still applies
    s().close();
    settle(io);
    expect_aborted(r2);
    BOOST_TEST(!s().socket().is_open());
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 2s, 10ms);  // nothing more comes
    BOOST_TEST(r1.calls == 1);
    BOOST_TEST(r2.calls == 1);
}

BOOST_AUTO_TEST_CASE(the_last_completion_takes_the_node_out_and_destruction_touches_no_wheel) {
    outcome r;
    s().expires_after(50ms);
    read(r);
    BOOST_TEST(wheel.pending() == 1U);
    expect_read_completes_on_data(r);
    BOOST_TEST(wheel.pending() == 0U);  // nothing pending: nothing in the wheel
    stream.reset();
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 100ms);  // no callback for a destroyed stream (ASan would see one)
    BOOST_TEST(r.calls == 1);
}

BOOST_AUTO_TEST_CASE(odd_and_extreme_durations) {
    {  // duration<double>: 25.5 ms, rounded up
        outcome r;
        s().expires_after(std::chrono::duration<double>(0.0255));
        read(r);
        expect_times_out_between(r, 26, 30);
    }
    reconnect();
    const auto start = ms_since(t0);
    {  // a third of a second: 333.3 ms
        outcome r;
        s().expires_after(std::chrono::duration<std::int64_t, std::ratio<1, 3>>(1));
        read(r);
        expect_times_out_between(r, start + 334, start + 344);
    }
}

BOOST_AUTO_TEST_CASE(never_expiring_durations) {
    for (int i = 0; i < 3; ++i) {
        if (i == 0) s().expires_after(std::chrono::hours::max());
        if (i == 1) s().expires_after(std::chrono::duration<double>(std::numeric_limits<double>::infinity()));
        if (i == 2) s().expires_at(manual_clock::time_point::max());
        BOOST_TEST((s().read_expiry() == manual_clock::time_point::max()));
        BOOST_TEST((s().write_expiry() == manual_clock::time_point::max()));
        outcome r;
        read(r);
        BOOST_TEST(wheel.pending() == 0U);
        manual_clock::advance(24h * 365);
        settle(io);
        BOOST_TEST(r.calls == 0);
        s().cancel();
        settle(io);
        expect_aborted(r);
    }
}

BOOST_AUTO_TEST_CASE(zero_negative_and_min_have_passed) {
    for (int i = 0; i < 4; ++i) {
        outcome r;
        if (i == 0) s().expires_after(0ms);
        if (i == 1) s().expires_after(-1h);
        if (i == 2) s().expires_after(std::chrono::duration<double>(-std::numeric_limits<double>::infinity()));
        if (i == 3) s().expires_at(manual_clock::time_point::min());
        read(r);  // nothing to read: up to Boost 1.85 still pending at the next tick
        BOOST_TEST(r.calls == 0);
        settle(io);
        BOOST_TEST(r.calls == (late_fails ? 1 : 0));  // from 1.86 on: timed out at once, as if by post
        advance_and_poll(io, wheel.tick());
        settle(io);
        BOOST_TEST(r.calls == 1);
        BOOST_CHECK_MESSAGE(is_timeout(r.ec), r.ec.message());
        reconnect();
    }
}

BOOST_AUTO_TEST_CASE(an_expiry_in_the_past_set_while_a_read_is_pending_is_the_writes) {
    outcome rr;
    read(rr);  // no expiry: nothing in the wheel
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 5ms);
    s().expires_after(0ms);  // the write's; the read has no deadline
    BOOST_TEST(wheel.pending() == 0U);
    advance_and_poll(io, 100ms, 10ms);
    BOOST_TEST(rr.calls == 0);
    outcome wr;
    s().async_write_some(net::buffer("w", 1), record(wr));  // its deadline has passed, but it completes at once
    BOOST_TEST(wr.calls == 0);
    settle(io);
    BOOST_TEST(wr.calls == 1);
    if (late_fails) {  // Boost >= 1.86: the write times out, the close ends the read (no deadline: aborted)
        BOOST_CHECK_MESSAGE(is_timeout(wr.ec), wr.ec.message());
        BOOST_TEST(!s().socket().is_open());
        expect_aborted(rr);
        BOOST_TEST(wheel.pending() == 0U);
        return;
    }
    BOOST_CHECK_MESSAGE(!wr.ec, wr.ec.message());  // as Beast's: a write done at once goes through
    BOOST_TEST(s().socket().is_open());
    advance_and_poll(io, 100ms, 10ms);
    BOOST_TEST(rr.calls == 0);  // the read has no deadline
    BOOST_TEST(wheel.pending() == 0U);
    s().close();  // the read ends here, while `rr` is alive (not in the fixture's destructor)
    settle(io);
    expect_aborted(rr);
}

BOOST_AUTO_TEST_CASE(the_handlers_executor_allocator_and_cancellation_slot_are_honoured) {
    int allocations = 0;
    auto strand = net::make_strand(io);
    net::cancellation_signal signal;
    bool on_strand = false;
    outcome r;
    s().expires_after(1s);
    s().async_read_some(
        net::buffer(in),
        net::bind_cancellation_slot(
            signal.slot(), net::bind_executor(strand, net::bind_allocator(counting_allocator<char>(&allocations),
                                                                          [&](error_code ec, std::size_t n) {
                                                                              on_strand =
                                                                                  strand.running_in_this_thread();
                                                                              record(r)(ec, n);
                                                                          }))));
    BOOST_TEST(allocations >= 1);  // the socket's operation was allocated through it
    signal.emit(net::cancellation_type::terminal);
    settle(io);
    expect_aborted(r);
    BOOST_TEST(on_strand);
    BOOST_TEST(s().socket().is_open());
    outcome again;  // nothing left pending: another read may start
    read(again);
    expect_read_completes_on_data(again);
}

BOOST_AUTO_TEST_CASE(a_zero_length_read_while_one_is_pending_completes_posted_and_leaves_it_alone) {
    // What ssl::stream does to complete an operation that needed no I/O (Beast's issue 2065).
    outcome pending, empty;
    s().expires_after(50ms);
    read(pending);
    s().async_read_some(net::buffer(in.data(), 0), record(empty));
    BOOST_TEST(empty.calls == 0);  // never inside the initiating call
    settle(io);
    BOOST_TEST(empty.calls == 1);
    BOOST_TEST(!empty.ec);
    BOOST_TEST(empty.bytes == 0U);
    BOOST_TEST(pending.calls == 0);
    expect_times_out_at(pending, 50);  // still pending, with its deadline
}

BOOST_AUTO_TEST_CASE(release_socket_hands_the_connection_over_without_its_deadline) {
    s().expires_after(20ms);
    tcp::socket sock = s().release_socket();
    BOOST_TEST(sock.is_open());
    BOOST_TEST((s().read_expiry() == manual_clock::time_point::max()));
    BOOST_TEST((s().write_expiry() == manual_clock::time_point::max()));
    stream_type next(wheel, std::move(sock));
    outcome r;
    next.async_read_some(net::buffer(in), record(r));
    advance_and_poll(io, 100ms);
    BOOST_TEST(r.calls == 0);
    next.close();
    settle(io);
    BOOST_TEST(r.calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Misuse, in a child process (support/in_child.hpp, as test_executor_check does)

// A connected stream on its own io_context, for a child.
struct child_stream {
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    tcp::socket peer{io};
    std::optional<idlewheel::beast::tcp_stream> stream;
    std::array<char, 64> in{};
    child_stream() {
        peer.connect(acceptor.local_endpoint());
        stream.emplace(wheel, acceptor.accept());
    }
};

BOOST_AUTO_TEST_CASE(destroying_the_stream_with_a_read_pending_aborts_with_what_to_do) {
    if (IDLEWHEEL_CHECK_LIFETIME == 0) return;  // undefined without the check: nothing to assert
    const child_outcome o = in_child([] {
        child_stream c;
        c.stream->expires_after(1h);
        c.stream->async_read_some(net::buffer(c.in), [](error_code, std::size_t) {});
        c.stream.reset();  // the read is pending
    });
    BOOST_TEST(o.aborted, "did not abort (exit " << o.exit_code << "): " << o.err);
    BOOST_TEST(o.err.find("idlewheel: an idlewheel::beast::tcp_stream was destroyed while one of its operations was "
                          "pending") != std::string::npos,
               o.err);
    BOOST_TEST(o.err.find("shared_from_this()") != std::string::npos, o.err);
    BOOST_TEST(o.err.find("close()") != std::string::npos, o.err);
}

BOOST_AUTO_TEST_CASE(destroying_the_stream_after_close_and_its_handlers_ran_is_fine) {
    const child_outcome o = in_child([] {
        child_stream c;
        int calls = 0;
        c.stream->expires_after(1h);
        c.stream->async_read_some(net::buffer(c.in), [&](error_code, std::size_t) { ++calls; });
        c.stream->close();
        c.io.poll();
        if (calls != 1) ::_exit(2);
        c.stream.reset();
    });
    BOOST_TEST(!o.aborted, o.err);
    BOOST_TEST(o.exit_code == 0, o.err);
}

// A server that stops its io_context and returns from main(): the pool (or wheel) goes first
// (declared after the io_context), then the io_context destroys the operations still pending
// without calling them, and with them the last references to their sessions. No abort (the
// operations were abandoned, not left pending), and nothing touched after it was freed (the
// ASan build runs this too).
BOOST_AUTO_TEST_CASE(returning_from_main_with_sessions_still_reading_is_fine) {
    const child_outcome o = in_child([] {
        struct session : std::enable_shared_from_this<session> {
            explicit session(tcp::socket s) : stream(std::move(s)) {}
            idlewheel::beast::tcp_stream stream;
            beast::flat_buffer buffer;
            http::request<http::string_body> request;
            std::array<char, 64> in{};
        };
        net::io_context io;
        tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
        tcp::socket peer1{io}, peer2{io};
        idlewheel::wheel_timer wheel{io};
        idlewheel::beast::use_wheel(io, wheel);
        peer1.connect(acceptor.local_endpoint());
        auto raw = std::make_shared<session>(acceptor.accept());
        raw->stream.expires_after(1h);
        raw->stream.async_read_some(net::buffer(raw->in), [self = raw](error_code, std::size_t) {});
        peer2.connect(acceptor.local_endpoint());
        auto http_session = std::make_shared<session>(acceptor.accept());
        http_session->stream.expires_after(1h);
        http::async_read(http_session->stream, http_session->buffer, http_session->request,
                         [self = http_session](error_code, std::size_t) {});
        io.poll();
        raw.reset();
        http_session.reset();
        io.stop();
    });  // wheel, then io: its destructor destroys the pending reads and their sessions
    BOOST_TEST(!o.aborted, o.err);
    BOOST_TEST(o.exit_code == 0, o.err);
}

#if !defined(NDEBUG)
BOOST_AUTO_TEST_CASE(expires_after_while_a_read_and_a_write_are_pending_asserts) {
    // Beast's precondition (its BOOST_ASSERT in impl_type::reset()): here a connect, which is
    // both, to a listener whose accept queue is full (it stays pending).
    const child_outcome o = in_child([] {
        net::io_context io;
        idlewheel::wheel_timer wheel(io);
        tcp::acceptor full(io, tcp::v4());
        full.bind({net::ip::address_v4::loopback(), 0});
        full.listen(0);
        std::vector<tcp::socket> queued;
        for (int i = 0; i < 4; ++i) {
            queued.emplace_back(io);
            queued.back().async_connect(full.local_endpoint(), [](error_code) {});
        }
        idlewheel::beast::tcp_stream c(wheel, io);
        c.async_connect(full.local_endpoint(), [](error_code) {});
        c.expires_after(1s);
    });
    BOOST_TEST(o.aborted, "did not abort (exit " << o.exit_code << "): " << o.err);
    BOOST_TEST(o.err.find("expires_*() while a read and a write (or a connect) are both pending") != std::string::npos,
               o.err);
}
#endif

// ---------------------------------------------------------------------------------------------
// How a stream finds its wheel

BOOST_AUTO_TEST_CASE(a_stream_finds_the_wheel_registered_for_its_context) {
    net::io_context io;
    BOOST_CHECK_THROW(idlewheel::beast::tcp_stream{tcp::socket(io)}, std::logic_error);
    idlewheel::wheel_timer wheel(io);
    idlewheel::beast::use_wheel(io, wheel);
    idlewheel::beast::tcp_stream from_socket{tcp::socket(io)};
    BOOST_TEST(&from_socket.wheel() == &wheel);
    idlewheel::beast::tcp_stream from_context(io);
    BOOST_TEST(&from_context.wheel() == &wheel);
    idlewheel::beast::tcp_stream from_executor(io.get_executor());
    BOOST_TEST(&from_executor.wheel() == &wheel);
    idlewheel::beast::tcp_stream on_a_strand(net::make_strand(io));  // Beast's examples do this on one thread too
    BOOST_TEST(&on_a_strand.wheel() == &wheel);

    net::io_context other;
    BOOST_CHECK_THROW(idlewheel::beast::use_wheel(other, wheel), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_stream_finds_its_shards_wheel_in_a_pool) {
    net::io_context io{2};
    idlewheel::wheel_pool_options options;
    options.shards = 3;
    idlewheel::wheel_pool pool(io, options);
    idlewheel::beast::use_wheel_pool(io, pool);
    for (std::size_t i = 0; i < pool.size(); ++i) {
        idlewheel::beast::tcp_stream s(pool[i].get_executor());
        BOOST_TEST(&s.wheel() == &pool[i].wheel());
    }
    BOOST_CHECK_THROW(idlewheel::beast::tcp_stream{net::make_strand(io)}, std::logic_error);
    BOOST_CHECK_THROW(idlewheel::beast::tcp_stream{io}, std::logic_error);
    net::io_context other;
    BOOST_CHECK_THROW(idlewheel::beast::use_wheel_pool(other, pool), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Composition, on the steady clock

template <class Done>
bool run_until(net::io_context& io, Done done, steady_clock::duration limit = patience) {
    const auto give_up = steady_clock::now() + limit;
    io.restart();
    while (!done() && steady_clock::now() < give_up) io.run_one_for(50ms);
    return done();
}

// co_spawn's completion: an exception in a coroutine fails the test instead of vanishing.
const auto rethrow = [](const std::exception_ptr& e) {
    if (e) std::rethrow_exception(e);
};

struct steady_fixture {
    net::io_context io;
    idlewheel::wheel_timer wheel{io};
    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    steady_fixture() { idlewheel::beast::use_wheel(io, wheel); }
};

BOOST_FIXTURE_TEST_CASE(websocket_stream_handshake_echo_and_close, steady_fixture) {
    std::string echoed;
    error_code server_end, client_close;
    bool server_done = false, client_done = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            auto [aec, sock] = co_await acceptor.async_accept(as_result);
            BOOST_REQUIRE(!aec);
            websocket::stream<idlewheel::beast::tcp_stream> ws(std::move(sock));
            beast::get_lowest_layer(ws).expires_after(patience);
            auto [hec] = co_await ws.async_accept(as_result);
            BOOST_REQUIRE_MESSAGE(!hec, hec.message());
            beast::get_lowest_layer(ws).expires_never();
            beast::flat_buffer buffer;
            for (;;) {
                auto [rec, n] = co_await ws.async_read(buffer, as_result);
                if (rec) {
                    server_end = rec;
                    break;
                }
                ws.text(ws.got_text());
                auto [wec, m] = co_await ws.async_write(buffer.data(), as_result);
                buffer.consume(buffer.size());
                if (wec) break;
            }
            server_done = true;
        },
        rethrow);
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            websocket::stream<idlewheel::beast::tcp_stream> ws(io);
            beast::get_lowest_layer(ws).expires_after(patience);
            auto [cec] = co_await beast::get_lowest_layer(ws).async_connect(acceptor.local_endpoint(), as_result);
            BOOST_REQUIRE_MESSAGE(!cec, cec.message());
            auto [hec] = co_await ws.async_handshake("localhost", "/", as_result);
            BOOST_REQUIRE_MESSAGE(!hec, hec.message());
            beast::get_lowest_layer(ws).expires_never();
            auto [wec, n] = co_await ws.async_write(net::buffer(std::string("hello")), as_result);
            BOOST_REQUIRE(!wec);
            beast::flat_buffer buffer;
            auto [rec, m] = co_await ws.async_read(buffer, as_result);
            BOOST_REQUIRE(!rec);
            echoed = beast::buffers_to_string(buffer.data());
            std::tie(client_close) = co_await ws.async_close(websocket::close_code::normal, as_result);
            client_done = true;
        },
        rethrow);
    BOOST_TEST(run_until(io, [&] { return server_done && client_done; }));
    BOOST_TEST(echoed == "hello");
    BOOST_CHECK_MESSAGE(!client_close, client_close.message());
    BOOST_CHECK_MESSAGE(server_end == websocket::error::closed, server_end.message());
}

// websocket_liveness over websocket::stream<tcp_stream> (Beast's advanced server's plain WebSocket
// session): a client that connects and never sends its upgrade request is dropped at the handshake
// deadline, through drop() on this stream (its socket closed: the accept ends with an error).
struct liveness_session : std::enable_shared_from_this<liveness_session> {
    websocket::stream<idlewheel::beast::tcp_stream> ws;
    idlewheel::beast::websocket_liveness<liveness_session, websocket::stream<idlewheel::beast::tcp_stream>> live;
    liveness_session(tcp::socket&& s,
                     const idlewheel::beast::websocket_liveness_config<
                         liveness_session, websocket::stream<idlewheel::beast::tcp_stream>>& c)
        : ws(std::move(s)), live(c, *this, ws) {}
};

BOOST_FIXTURE_TEST_CASE(websocket_liveness_drops_a_silent_peer_of_a_websocket_stream_on_this_stream, steady_fixture) {
    constexpr auto limit = 200ms;
    const idlewheel::beast::websocket_liveness_config<liveness_session, websocket::stream<idlewheel::beast::tcp_stream>>
        config(wheel, idlewheel::session_liveness_options{.handshake_timeout = limit, .idle_timeout = 10s});
    error_code accept_ec;
    bool accepted = true, done = false;
    steady_clock::duration took{};
    std::shared_ptr<liveness_session> session;
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());  // and never sends a byte
    acceptor.async_accept([&](error_code ec, tcp::socket s) {
        BOOST_REQUIRE(!ec);
        session = std::make_shared<liveness_session>(std::move(s), config);
        const auto t0 = steady_clock::now();
        session->live.start();
        session->ws.async_accept([&, t0, keep = session](error_code hec) {
            took = steady_clock::now() - t0;
            accept_ec = hec;
            accepted = keep->live.accepted(hec);
            done = true;
        });
    });
    BOOST_TEST(run_until(io, [&] { return done; }));
    BOOST_TEST(!accepted);
    BOOST_TEST(static_cast<bool>(accept_ec));
    BOOST_TEST(session->live.has_verdict());
    BOOST_TEST((session->live.verdict() == idlewheel::liveness_event::handshake_timeout));
    BOOST_TEST(ms(took) >= ms(limit));
    BOOST_TEST(!session->ws.next_layer().socket().is_open());
}

BOOST_FIXTURE_TEST_CASE(http_read_times_out_while_a_client_trickles_its_request, steady_fixture) {
    constexpr auto limit = 300ms;
    error_code server_ec;
    steady_clock::duration took{};
    std::size_t sent = 0;
    bool server_done = false, client_done = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            auto [aec, sock] = co_await acceptor.async_accept(as_result);
            BOOST_REQUIRE(!aec);
            idlewheel::beast::tcp_stream stream(std::move(sock));
            const auto start = steady_clock::now();
            stream.expires_after(limit);
            beast::flat_buffer buffer;
            http::request<http::string_body> request;
            std::tie(server_ec, std::ignore) = co_await http::async_read(stream, buffer, request, as_result);
            took = steady_clock::now() - start;
            server_done = true;
        },
        rethrow);
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            tcp::socket client(io);
            co_await client.async_connect(acceptor.local_endpoint(), as_result);
            const std::string request =
                "GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
            net::steady_timer pause(io);
            for (char c : request) {  // a byte every 40 ms: about 3 s for the whole request
                auto [wec, n] = co_await net::async_write(client, net::buffer(&c, 1), as_result);
                if (wec || server_done) break;
                sent += n;
                pause.expires_after(40ms);
                co_await pause.async_wait(as_result);
            }
            client_done = true;
        },
        rethrow);
    BOOST_TEST(run_until(io, [&] { return server_done && client_done; }));
    BOOST_CHECK_MESSAGE(is_timeout(server_ec), server_ec.message());
    BOOST_TEST(ms(took) >= ms(limit));      // never early
    BOOST_TEST(ms(took) < ms(limit + 2s));  // a generous bound for a busy machine
    BOOST_TEST(sent >= 3U);                 // bytes did arrive, and did not extend it
}

// ---------------------------------------------------------------------------------------------
// One io_context, two threads, a wheel_pool: streams on shard strands

BOOST_AUTO_TEST_CASE(pool_streams_on_shard_strands_time_out_on_two_threads) {
    constexpr int n = 8;
    net::io_context io{2};
    idlewheel::wheel_pool_options options;
    options.shards = 4;
    idlewheel::wheel_pool pool(io, options);
    idlewheel::beast::use_wheel_pool(io, pool);
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});

    std::vector<tcp::socket> peers;
    std::vector<std::unique_ptr<idlewheel::beast::tcp_stream>> streams;
    for (int i = 0; i < n; ++i) {
        peers.emplace_back(io);
        peers.back().connect(acceptor.local_endpoint());
        auto& shard = pool.next();
        tcp::socket accepted(shard.get_executor());
        acceptor.accept(accepted);
        streams.push_back(std::make_unique<idlewheel::beast::tcp_stream>(std::move(accepted)));
        BOOST_TEST(&streams.back()->wheel() == &shard.wheel());
    }

    std::vector<std::array<char, 64>> buffers(n);
    std::vector<std::int64_t> took(n, -1);  // each written by its own stream's handler
    std::vector<error_code> results(n);
    std::atomic<int> done{0};
    for (int i = 0; i < n; ++i) {
        auto& s = *streams[static_cast<std::size_t>(i)];
        net::post(s.get_executor(), [&, i, &s = s] {
            const auto start = steady_clock::now();
            const auto limit = 100ms + 10ms * i;
            s.expires_after(limit);
            s.async_read_some(net::buffer(buffers[static_cast<std::size_t>(i)]),
                              [&, i, start](error_code ec, std::size_t) {
                                  took[static_cast<std::size_t>(i)] = ms(steady_clock::now() - start);
                                  results[static_cast<std::size_t>(i)] = ec;
                                  done.fetch_add(1, std::memory_order_release);
                              });
        });
    }
    std::thread a([&] { io.run(); });
    std::thread b([&] { io.run(); });
    const auto give_up = steady_clock::now() + patience;
    while (done.load(std::memory_order_acquire) != n && steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
    io.stop();
    a.join();
    b.join();
    BOOST_TEST(done.load() == n);
    for (int i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        BOOST_CHECK_MESSAGE(is_timeout(results[k]), "stream " << i << ": " << results[k].message());
        BOOST_TEST(took[k] >= 100 + 10 * i);
        BOOST_TEST(took[k] < 100 + 10 * i + 2000);
    }
    streams.clear();  // nothing pending: every read completed
}

}  // namespace
