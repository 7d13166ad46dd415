// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/tcp_stream.hpp>

// tcp_stream.hpp's expiries (a part of test_beast_tcp_stream, whose first file is
// test_beast_tcp_stream.cpp), on the manual clock over loopback: one per direction (a pending
// operation keeps its deadline, an expiry is kept across operations, the HTTP pattern moves
// nothing in the wheel), expires_never, and odd, extreme, never-expiring and passed durations.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <boost/test/unit_test.hpp>

#include "support/tcp_stream_scene.hpp"  // after Boost.Test

#include <boost/asio/write.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>

namespace {

using namespace idlewheel::test::tcp_stream_scene;  // support/tcp_stream_scene.hpp

BOOST_FIXTURE_TEST_SUITE(manual_clock_contract, stream_fixture)

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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
