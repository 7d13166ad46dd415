// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// A read or write started after its deadline has passed, on Beast's own boost::beast::tcp_stream
// and on idlewheel::beast::tcp_stream side by side, over real loopback sockets, with the Boost
// this test is built with (1.81 in the main build, the newest in the matrix): the two must end
// the same way. Beast changed its rule in Boost 1.86 (commit 2dcdef3, "Handle expired timers
// in basic_stream transfer_op"), so what "the same" is depends on the Boost; each case also
// checks the rule of its Boost, so that a change of Beast's shows as a failure here, not as a
// silent difference:
//   - up to 1.85 an operation that completes at once (a write with room in the send buffer,
//     a read with data waiting) goes through; from 1.86 on it fails with error::timeout and the
//     socket is closed;
//   - an operation that would wait (a read with nothing to read) times out with either.
// Real time: the deadline is set 50 ms in the past; the only waits are bounded polls.

#include <idlewheel/beast/tcp_stream.hpp>

#include "support/net.hpp"

#define BOOST_TEST_MODULE test_beast_late_operation
#include <boost/test/unit_test.hpp>

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/version.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace {

namespace beast = boost::beast;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using namespace std::chrono_literals;

constexpr bool boost_fails_late = BOOST_VERSION >= 108600;

enum class op { write_at_once, read_with_data, read_nothing };

struct result {
    int calls = 0;
    error_code ec;
    std::size_t bytes = 0;
    bool called_inline = false;
    bool open_after = false;
    bool peer_got_byte = false;
};

// Runs `what` on a stream of type Stream (Beast's or ours, on a wheel of its io_context),
// connected over loopback, with its expiry 50 ms in the past.
template <class Stream>
result run(op what) {
    net::io_context io;
    std::optional<idlewheel::wheel_timer> wheel;  // after the io_context: it goes first
    tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    tcp::socket peer(io);
    peer.connect(acceptor.local_endpoint());
    std::unique_ptr<Stream> stream;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
        stream = std::make_unique<Stream>(acceptor.accept());
    } else {
        wheel.emplace(io);
        stream = std::make_unique<Stream>(*wheel, acceptor.accept());
    }
    if (what == op::read_with_data) {
        net::write(peer, net::buffer("y", 1));
        for (int i = 0; i < 2000 && stream->socket().available() == 0; ++i) std::this_thread::sleep_for(1ms);
        BOOST_REQUIRE(stream->socket().available() == 1U);
    }
    stream->expires_after(-50ms);
    result r;
    bool initiating = true;
    char in = 0;
    auto done = [&](error_code ec, std::size_t n) {
        ++r.calls;
        r.ec = ec;
        r.bytes = n;
        r.called_inline = initiating;
    };
    // The handler passed as an lvalue (copied), as Asio allows.
    if (what == op::write_at_once)
        stream->async_write_some(net::buffer("x", 1), done);
    else
        stream->async_read_some(net::buffer(&in, 1), done);
    initiating = false;
    const auto until = std::chrono::steady_clock::now() + 10s;  // reached only if a case fails
    while (r.calls == 0 && std::chrono::steady_clock::now() < until) {
        io.restart();
        io.run_for(5ms);
    }
    for (int i = 0; i < 8; ++i) {  // what the completion queued (a timer's cancel, a close)
        io.restart();
        io.poll();
    }
    r.open_after = stream->socket().is_open();
    if (what == op::write_at_once) {
        peer.non_blocking(true);
        char got = 0;
        error_code ec;
        for (int i = 0; i < 200; ++i) {  // the byte, if it went, is on loopback within a few ms
            if (peer.read_some(net::buffer(&got, 1), ec) == 1U || ec != net::error::would_block) break;
            std::this_thread::sleep_for(1ms);
        }
        r.peer_got_byte = !ec && got == 'x';
    }
    return r;
}

result beasts(op what) { return run<beast::tcp_stream>(what); }
result ours(op what) { return run<idlewheel::beast::tcp_stream>(what); }

void expect_same(const result& b, const result& o) {
    BOOST_TEST(b.calls == 1);
    BOOST_TEST(o.calls == 1);
    BOOST_CHECK_MESSAGE(b.ec == o.ec, "Beast's: " << b.ec.message() << ", ours: " << o.ec.message());
    BOOST_TEST(b.bytes == o.bytes);
    BOOST_TEST(!b.called_inline);
    BOOST_TEST(!o.called_inline);
    BOOST_TEST(b.open_after == o.open_after);
    BOOST_TEST(b.peer_got_byte == o.peer_got_byte);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_stream_follows_the_rule_of_its_boost) {
    BOOST_TEST(idlewheel::beast::detail::late_transfer_fails == boost_fails_late);
}

BOOST_AUTO_TEST_CASE(a_write_that_completes_at_once_started_after_the_deadline) {
    const result b = beasts(op::write_at_once);
    const result o = ours(op::write_at_once);
    expect_same(b, o);
    if (boost_fails_late) {
        BOOST_CHECK_MESSAGE(b.ec == beast::error::timeout, b.ec.message());
        BOOST_TEST(!b.open_after);
        BOOST_TEST(!b.peer_got_byte);
    } else {
        BOOST_CHECK_MESSAGE(!b.ec, b.ec.message());
        BOOST_TEST(b.bytes == 1U);
        BOOST_TEST(b.open_after);
        BOOST_TEST(b.peer_got_byte);
    }
}

BOOST_AUTO_TEST_CASE(a_read_with_data_waiting_started_after_the_deadline) {
    const result b = beasts(op::read_with_data);
    const result o = ours(op::read_with_data);
    expect_same(b, o);
    if (boost_fails_late) {
        BOOST_CHECK_MESSAGE(b.ec == beast::error::timeout, b.ec.message());
        BOOST_TEST(!b.open_after);
    } else {
        BOOST_CHECK_MESSAGE(!b.ec, b.ec.message());
        BOOST_TEST(b.bytes == 1U);
        BOOST_TEST(b.open_after);
    }
}

BOOST_AUTO_TEST_CASE(a_read_with_nothing_to_read_started_after_the_deadline_times_out) {
    const result b = beasts(op::read_nothing);
    const result o = ours(op::read_nothing);
    expect_same(b, o);
    BOOST_CHECK_MESSAGE(b.ec == beast::error::timeout, b.ec.message());
    BOOST_TEST(!b.open_after);
}
