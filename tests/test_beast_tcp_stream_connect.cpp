// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/tcp_stream.hpp>

// tcp_stream.hpp's async_connect (a part of test_beast_tcp_stream, whose first file is
// test_beast_tcp_stream.cpp), on the manual clock over loopback: a connect started after its
// expiry, one in time through an endpoint sequence and a connect condition, one that stays
// pending (it counts as a read and a write); and, in a child process, expires_*() with a
// connect pending (both directions), which asserts.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <boost/test/unit_test.hpp>

#include "support/tcp_stream_scene.hpp"  // after Boost.Test

#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace idlewheel::test::tcp_stream_scene;  // support/tcp_stream_scene.hpp

BOOST_FIXTURE_TEST_SUITE(manual_clock_contract, stream_fixture)

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

BOOST_AUTO_TEST_SUITE_END()

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

}  // namespace
