// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel::beast::tcp_stream against Beast's timeout contract (boost/beast/core/basic_stream.hpp).
// The executable test_beast_tcp_stream has three translation units, which compile in parallel:
// the parts of this header's tests (one unity translation unit: this file, the first, then
// test_beast_tcp_stream_expiries.cpp, _connect.cpp, _close.cpp and _compositions.cpp),
// test_beast_tcp_stream_moves.cpp, and test_beast_ssl_stream.cpp (over TLS).
//
// This part, on idlewheel::manual_clock (exact time, no sleeping) over real loopback sockets
// (support/tcp_stream_scene.hpp): reads and writes, when they time out (never before their
// expiry, at most one tick after), one started after its expiry passed, a handler's associated
// characteristics; and how a stream finds its wheel (use_wheel, use_wheel_pool).

#include <idlewheel/beast/tcp_stream.hpp>
// Second: its names must still resolve after this header's idlewheel::beast::detail (they did not).
#include <idlewheel/beast/websocket_liveness.hpp>
#include <idlewheel/beast/ssl_stream.hpp>  // the TLS stream that moves with this one inside

#include "support/manual_io.hpp"
#include "support/net.hpp"

#define BOOST_TEST_MODULE test_beast_tcp_stream
#include <boost/test/unit_test.hpp>

#include "support/tcp_stream_scene.hpp"  // after Boost.Test

#include <boost/asio/write.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

namespace {

using namespace idlewheel::test::tcp_stream_scene;  // support/tcp_stream_scene.hpp

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

// An operation started after its expiry passed: Beast's rule, which Boost 1.86 changed
// (late_fails, support/tcp_stream_scene.hpp).

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

BOOST_AUTO_TEST_SUITE_END()

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

}  // namespace
