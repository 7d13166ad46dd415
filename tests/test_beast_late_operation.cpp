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
// Two sequences of Beast 1.81's examples, on one thread (the outcome the docs state for it):
//   - advanced_server's late write: expires_after() called while a write is pending leaves
//     the write's expiry as it was, so the next write starts after its deadline;
//   - http_server_awaitable's lingering read: its loop reads again after end_of_stream, and
//     that read (which Asio leaves pending) ends at the deadline with error::timeout on both
//     streams. (On Beast's stream run by two threads without a strand, as that example runs,
//     it ends with operation_aborted: a race in Beast's stream, listed in docs/beast_differences.md.)
// Real time: deadlines are set in the past or passed by sleeping past them; the only other
// waits are bounded polls, so a loaded machine only makes a case slower.

#include <idlewheel/beast/tcp_stream.hpp>

#include "support/net.hpp"

#define BOOST_TEST_MODULE test_beast_late_operation
#include <boost/test/unit_test.hpp>

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/version.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
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

// A stream of type Stream (Beast's or ours, on a wheel of its io_context) accepted over
// loopback, and its peer: a plain blocking socket driven from the test's thread.
template <class Stream>
struct connection {
    net::io_context io;
    std::optional<idlewheel::wheel_timer> wheel;  // after the io_context: it goes first
    tcp::acceptor acceptor{io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)};
    tcp::socket peer{io};
    std::unique_ptr<Stream> stream;

    connection() {
        peer.connect(acceptor.local_endpoint());
        if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
            stream = std::make_unique<Stream>(acceptor.accept());
        } else {
            wheel.emplace(io);
            stream = std::make_unique<Stream>(*wheel, acceptor.accept());
        }
    }
    // Runs the io_context (one thread: this one) until `done`; bounded, reached only if a case fails.
    void run_until(const bool& done) {
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (!done && std::chrono::steady_clock::now() < until) {
            io.restart();
            io.run_for(5ms);
        }
        BOOST_REQUIRE(done);
    }
};

struct completion {
    bool done = false;
    error_code ec;
    std::size_t bytes = 0;
    auto handler() {
        done = false;
        return [this](error_code e, std::size_t n) {
            done = true;
            ec = e;
            bytes = n;
        };
    }
};

// advanced_server's order of calls (http_session: do_read() sets expires_after() before its
// read, on_read() starts the response's write and calls do_read() at once, while that write
// is pending), then the next response's write, started after the write's deadline.
struct late_write_result {
    error_code first_write;
    error_code second_write;
    std::size_t second_bytes = 0;
    error_code read;  // the read pending meanwhile (do_read's)
    bool open_after = false;
    bool peer_got_both = false;
};

template <class Stream>
late_write_result advanced_server_late_write() {
    connection<Stream> c;
    late_write_result r;
    const auto start = std::chrono::steady_clock::now();
    // The connection's first do_read(): both directions (a loaded machine's first write
    // completes well within the second).
    c.stream->expires_after(1s);
    completion w1;
    c.stream->async_write_some(net::buffer("a", 1), w1.handler());  // on_read(): the response
    c.stream->expires_after(10s);  // do_read() with the write pending: the read's expiry only
    completion rd;
    char in = 0;
    c.stream->async_read_some(net::buffer(&in, 1), rd.handler());
    c.run_until(w1.done);
    r.first_write = w1.ec;
    // Past the write's deadline (start + 1 s); the read's (start + 10 s) is far away.
    std::this_thread::sleep_until(start + 1100ms);
    completion w2;
    c.stream->async_write_some(net::buffer("b", 1), w2.handler());  // the next response
    c.run_until(w2.done);
    r.second_write = w2.ec;
    r.second_bytes = w2.bytes;
    for (int i = 0; i < 8; ++i) {  // what the completion queued (a timer's cancel, a close)
        c.io.restart();
        c.io.poll();
    }
    if (!rd.done) {  // the read still pending: the peer sends it a byte
        net::write(c.peer, net::buffer("z", 1));
        c.run_until(rd.done);
    }
    r.read = rd.ec;
    r.open_after = c.stream->socket().is_open();
    std::string got;
    c.peer.non_blocking(true);
    for (int i = 0; i < 200 && got.size() < 2; ++i) {  // the bytes that went are on loopback within a few ms
        char b[4];
        error_code ec;
        const std::size_t n = c.peer.read_some(net::buffer(b), ec);
        if (ec && ec != net::error::would_block) break;
        got.append(b, n);
        if (n == 0) std::this_thread::sleep_for(1ms);
    }
    r.peer_got_both = got == "ab";
    return r;
}

// http_server_awaitable's session (Beast 1.81, as written): expires_after(T) and
// http::async_read in a for(;;) whose catch of end_of_stream does not leave the loop. A
// keep-alive request, its response, the client reads it and closes; the loop reads again.
struct lingering_read_result {
    int end_of_streams = 0;
    error_code last;  // the read that ended the loop
    bool open_after = false;
};

template <class Stream>
lingering_read_result awaitable_lingering_read() {
    connection<Stream> c;
    lingering_read_result r;
    net::write(c.peer, net::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
    beast::flat_buffer buffer;
    {
        c.stream->expires_after(10s);  // the request and its response complete at once: no deadline meets them
        http::request<http::string_body> req;
        completion rd;
        http::async_read(*c.stream, buffer, req, rd.handler());
        c.run_until(rd.done);
        BOOST_REQUIRE_MESSAGE(!rd.ec, rd.ec.message());
        http::response<http::string_body> res{http::status::ok, req.version()};
        res.keep_alive(true);
        res.body() = "x";
        res.prepare_payload();
        completion wr;
        http::async_write(*c.stream, res, wr.handler());
        c.run_until(wr.done);
        BOOST_REQUIRE_MESSAGE(!wr.ec, wr.ec.message());
    }
    {  // the client reads the response and closes the connection
        beast::flat_buffer b;
        http::response<http::string_body> res;
        http::read(c.peer, b, res);
        BOOST_REQUIRE(res.body() == "x");
        c.peer.close();
    }
    for (int i = 0; i < 6; ++i) {  // the example's loop goes on; bounded here
        c.stream->expires_after(200ms);
        http::request<http::string_body> req;
        completion rd;
        http::async_read(*c.stream, buffer, req, rd.handler());
        c.run_until(rd.done);
        r.last = rd.ec;
        if (rd.ec != http::error::end_of_stream) break;
        ++r.end_of_streams;
    }
    for (int i = 0; i < 8; ++i) {
        c.io.restart();
        c.io.poll();
    }
    r.open_after = c.stream->socket().is_open();
    return r;
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

BOOST_AUTO_TEST_CASE(advanced_server_late_write_on_one_thread) {
    const late_write_result b = advanced_server_late_write<beast::tcp_stream>();
    const late_write_result o = advanced_server_late_write<idlewheel::beast::tcp_stream>();
    BOOST_CHECK_MESSAGE(!b.first_write, b.first_write.message());
    BOOST_CHECK_MESSAGE(!o.first_write, o.first_write.message());
    BOOST_CHECK_MESSAGE(b.second_write == o.second_write,
                        "Beast's: " << b.second_write.message() << ", ours: " << o.second_write.message());
    BOOST_TEST(b.second_bytes == o.second_bytes);
    BOOST_CHECK_MESSAGE(b.read == o.read, "Beast's: " << b.read.message() << ", ours: " << o.read.message());
    BOOST_TEST(b.open_after == o.open_after);
    BOOST_TEST(b.peer_got_both == o.peer_got_both);
    if (boost_fails_late) {  // the late write fails at once, the socket closed under the read
        BOOST_CHECK_MESSAGE(b.second_write == beast::error::timeout, b.second_write.message());
        BOOST_CHECK_MESSAGE(b.read == net::error::operation_aborted, b.read.message());
        BOOST_TEST(!b.open_after);
    } else {  // one thread: the write's completion runs before the expired timer's; it goes through
        BOOST_CHECK_MESSAGE(!b.second_write, b.second_write.message());
        BOOST_TEST(b.second_bytes == 1U);
        BOOST_CHECK_MESSAGE(!b.read, b.read.message());
        BOOST_TEST(b.open_after);
        BOOST_TEST(b.peer_got_both);
    }
}

BOOST_AUTO_TEST_CASE(awaitable_lingering_read_after_the_client_closes) {
    const lingering_read_result b = awaitable_lingering_read<beast::tcp_stream>();
    const lingering_read_result o = awaitable_lingering_read<idlewheel::beast::tcp_stream>();
    BOOST_TEST_MESSAGE("end_of_stream reads: Beast's " << b.end_of_streams << ", ours " << o.end_of_streams);
    BOOST_TEST(b.end_of_streams >= 1);
    BOOST_TEST(o.end_of_streams >= 1);
    BOOST_CHECK_MESSAGE(b.last == o.last, "Beast's: " << b.last.message() << ", ours: " << o.last.message());
    BOOST_TEST(b.open_after == o.open_after);
    if (b.last != http::error::end_of_stream) {  // Asio left the read pending: the deadline ends it
        BOOST_CHECK_MESSAGE(b.last == beast::error::timeout, b.last.message());
        BOOST_TEST(!b.open_after);
    }
}

// The same loop on Beast's stream on a strand of an io_context run by two threads (the
// conversion's shape, a session per strand): Beast's timeout handler and the read's completion
// are serialised, and the read ends with timeout, as on one thread. (Without the strand, as
// Beast 1.81's example runs, they race: docs/beast_differences.md.)
BOOST_AUTO_TEST_CASE(awaitable_lingering_read_on_beasts_stream_on_a_strand_of_two_threads) {
    net::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    tcp::socket peer(io);
    peer.connect(acceptor.local_endpoint());
    using strand_stream = beast::basic_stream<tcp, net::strand<net::io_context::executor_type>>;
    strand_stream stream(acceptor.accept(net::make_strand(io)));
    peer.close();  // the client's close, before the loop's read
    lingering_read_result r;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    std::promise<void> ended;
    std::function<void()> step = [&] {
        req = {};
        stream.expires_after(200ms);
        http::async_read(stream, buffer, req, [&](error_code ec, std::size_t) {
            r.last = ec;
            if (ec == http::error::end_of_stream && ++r.end_of_streams < 6) return step();
            r.open_after = stream.socket().is_open();
            ended.set_value();
        });
    };
    auto work = net::make_work_guard(io);
    std::thread t1([&] { io.run(); });
    std::thread t2([&] { io.run(); });
    net::post(stream.get_executor(), step);
    const bool ready = ended.get_future().wait_for(10s) == std::future_status::ready;
    work.reset();
    io.stop();
    t1.join();
    t2.join();
    BOOST_REQUIRE(ready);
    BOOST_TEST_MESSAGE("end_of_stream reads: " << r.end_of_streams);
    BOOST_TEST(r.end_of_streams >= 1);
    if (r.last != http::error::end_of_stream) {
        BOOST_CHECK_MESSAGE(r.last == beast::error::timeout, r.last.message());
        BOOST_TEST(!r.open_after);
    }
}
