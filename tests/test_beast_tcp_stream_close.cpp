// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/tcp_stream.hpp>

// tcp_stream.hpp's close, cancel, release_socket and destruction (a part of
// test_beast_tcp_stream, whose first file is test_beast_tcp_stream.cpp): on the manual clock
// over loopback, what pending operations complete with and that nothing is left in the wheel;
// in a child process (support/in_child.hpp, as test_executor_check does), destroying a stream
// with an operation pending aborts with what to do (IDLEWHEEL_CHECK_LIFETIME), and a server
// returning from main() with sessions still reading is fine.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <boost/test/unit_test.hpp>

#include "support/tcp_stream_scene.hpp"  // after Boost.Test

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <unistd.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace {

using namespace idlewheel::test::tcp_stream_scene;  // support/tcp_stream_scene.hpp
namespace http = beast::http;

BOOST_FIXTURE_TEST_SUITE(manual_clock_contract, stream_fixture)

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

}  // namespace
