// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel::beast::tcp_stream moved and rebound, as coroutine servers use it (the third source
// file of test_beast_tcp_stream):
//  - the move keeps the connection, the wheel and both expiries, and leaves the moved-from
//    stream as if new; std::optional, a function's return, a by-value coroutine parameter;
//  - rebind_executor / as_default_on: the stream on use_awaitable's executor_with_default,
//    whose operations need no token (co_await http::async_read(stream, buffer, req)); the
//    rebinding carries no expiry (Beast's);
//  - a pool finds its shard from such an executor;
//  - moving with an operation pending aborts with what to do (in a child).

#include <idlewheel/beast/tcp_stream.hpp>

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <boost/test/unit_test.hpp>

#include "support/in_child.hpp"  // after Boost.Test

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using idlewheel::manual_clock;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;

using awaitable_executor = net::use_awaitable_t<>::executor_with_default<net::any_io_executor>;
using co_stream = idlewheel::beast::tcp_stream::rebind_executor<awaitable_executor>::other;

// Beast's spelling in its awaitable examples compiles, and as_default_on makes the same type.
static_assert(std::is_same_v<co_stream, idlewheel::beast::basic_tcp_stream<idlewheel::wheel_timer, awaitable_executor>>);
static_assert(std::is_same_v<decltype(net::use_awaitable.as_default_on(std::declval<idlewheel::beast::tcp_stream>())),
                             co_stream>);
static_assert(std::is_nothrow_move_constructible_v<co_stream>);
static_assert(!std::is_copy_constructible_v<idlewheel::beast::tcp_stream>);

struct move_fixture : idlewheel::test::wheel_fixture {
    using stream_type = idlewheel::beast::basic_tcp_stream<wheel_type>;
    tcp::acceptor acceptor{io, {net::ip::address_v4::loopback(), 0}};
    tcp::socket peer{io};
    move_fixture() { peer.connect(acceptor.local_endpoint()); }
};

move_fixture::stream_type pass_through(move_fixture::stream_type s) { return s; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(moves, move_fixture)

BOOST_AUTO_TEST_CASE(a_move_keeps_the_connection_the_wheel_and_both_expiries) {
    stream_type a(wheel, acceptor.accept());
    a.expires_after(50ms);
    const auto expiry = a.read_expiry();
    std::optional<stream_type> b;
    b.emplace(std::move(a));
    stream_type c = pass_through(std::move(*b));
    BOOST_TEST(c.socket().is_open());
    BOOST_TEST(&c.wheel() == &wheel);
    BOOST_TEST((c.read_expiry() == expiry && c.write_expiry() == expiry));
    BOOST_TEST(!a.socket().is_open());  // the moved-from: as if new
    BOOST_TEST((a.read_expiry() == manual_clock::time_point::max()));
    BOOST_TEST(!b->socket().is_open());
    BOOST_TEST(wheel.pending() == 0U);  // nothing pending: nothing in the wheel

    // The expiry set before the moves is the deadline of a read started after them.
    std::array<char, 16> in{};
    int calls = 0;
    error_code got;
    c.async_read_some(net::buffer(in), [&](error_code ec, std::size_t) {
        ++calls;
        got = ec;
    });
    idlewheel::test::advance_and_poll(io, 49ms);
    BOOST_TEST(calls == 0);
    idlewheel::test::advance_and_poll(io, 1ms);
    for (int i = 0; i < 8; ++i) idlewheel::test::poll(io);
    BOOST_TEST(calls == 1);
    BOOST_CHECK_MESSAGE(got == beast::error::timeout, got.message());
}

BOOST_AUTO_TEST_CASE(moving_with_an_operation_pending_aborts_with_what_to_do) {
    const idlewheel::test::child_outcome o = idlewheel::test::in_child([] {
        move_fixture f;
        stream_type a(f.wheel, f.acceptor.accept());
        std::array<char, 16> in{};
        a.async_read_some(net::buffer(in), [](error_code, std::size_t) {});
        stream_type b(std::move(a));
        (void)b;
    });
#if IDLEWHEEL_CHECK_LIFETIME
    BOOST_TEST(o.aborted, "did not abort (exit " << o.exit_code << "): " << o.err);
    BOOST_TEST(o.err.find("was moved while one of its operations was pending") != std::string::npos, o.err);
    BOOST_TEST(o.err.find("Move a stream before starting operations on it") != std::string::npos, o.err);
#else
    (void)o;
#endif
}

BOOST_AUTO_TEST_SUITE_END()

// A C++20 coroutine server as Beast's http_server_awaitable writes it (the stream rebound to
// use_awaitable's executor, passed by value, operations without a token), on a wheel_pool run
// by two threads: each session co_spawned on the shard its socket was accepted on; the
// deadline (expires_after before the read) drops a client that sends half a request.
BOOST_AUTO_TEST_CASE(a_coroutine_session_on_a_shard_times_out_a_half_request) {
    net::io_context io{2};
    idlewheel::wheel_pool_options options;
    options.shards = 2;
    idlewheel::wheel_pool pool(io, options);
    idlewheel::beast::use_wheel_pool(io, pool);
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});

    std::atomic<int> finished{0};
    std::atomic<bool> timed_out{false}, shard_found{false};
    auto session = [&](co_stream stream) -> net::awaitable<void> {
        shard_found = pool.find(stream.get_executor()) != nullptr;
        beast::flat_buffer buffer;
        http::request<http::string_body> req;
        stream.expires_after(150ms);
        auto [ec, n] = co_await http::async_read(stream, buffer, req, net::as_tuple(net::use_awaitable));
        (void)n;
        timed_out = ec == beast::error::timeout;
        ++finished;
    };
    auto& shard = pool.next();
    net::co_spawn(
        shard.get_executor(),
        [&]() -> net::awaitable<void> {
            auto socket = co_await acceptor.async_accept(shard.get_executor(), net::use_awaitable);
            net::co_spawn(shard.get_executor(), session(co_stream(std::move(socket))), net::detached);
        },
        net::detached);
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    net::write(client, net::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n")));  // and no more

    const auto start = std::chrono::steady_clock::now();
    std::thread a([&] { io.run(); });
    std::thread b([&] { io.run(); });
    while (finished.load() == 0 && std::chrono::steady_clock::now() - start < 10s) std::this_thread::sleep_for(5ms);
    const auto took = std::chrono::steady_clock::now() - start;
    io.stop();
    a.join();
    b.join();
    BOOST_TEST(finished.load() == 1);
    BOOST_TEST(timed_out.load());
    BOOST_TEST(shard_found.load());
    BOOST_TEST(took >= 150ms);  // never early
}

// The tokenless form: the default completion token is the executor's (use_awaitable).
BOOST_AUTO_TEST_CASE(operations_of_a_rebound_stream_need_no_token) {
    net::io_context io;
    idlewheel::wheel_timer wheel(io);
    idlewheel::beast::use_wheel(io, wheel);
    tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
    std::string got;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            co_stream stream(co_await acceptor.async_accept(net::use_awaitable));
            stream.expires_after(5s);
            beast::flat_buffer buffer;
            http::request<http::string_body> req;
            co_await http::async_read(stream, buffer, req);  // no token
            got = std::string(req.target());
            stream.expires_never();
        },
        net::detached);
    tcp::socket client(io);
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            co_await client.async_connect(acceptor.local_endpoint(), net::use_awaitable);
            co_await net::async_write(client, net::buffer(std::string("GET /moved HTTP/1.1\r\nHost: x\r\n\r\n")),
                                      net::use_awaitable);
        },
        net::detached);
    io.run_for(10s);
    BOOST_TEST(got == "/moved");
}

// ---------------------------------------------------------------------------------------------
// Diagnostics that lead to the fix (in children: each misuse ends the process)

// A coroutine session co_spawned on the io_context itself (Beast's awaitable examples do)
// while its stream is on a shard's strand: the first operation is caught, and the message
// names the call, says where the caller runs, and gives the coroutine's fix.
BOOST_AUTO_TEST_CASE(a_coroutine_on_the_io_context_with_a_stream_on_a_shard_is_told_to_co_spawn_on_the_shard) {
    const idlewheel::test::child_outcome o = idlewheel::test::in_child([] {
        net::io_context io;
        idlewheel::wheel_pool pool(io);
        idlewheel::beast::use_wheel_pool(io, pool);
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
        tcp::socket client(io);
        client.connect(acceptor.local_endpoint());
        tcp::socket accepted(pool.next().get_executor());
        acceptor.accept(accepted);
        net::co_spawn(
            io,  // not the shard
            [&]() -> net::awaitable<void> {
                co_stream stream(std::move(accepted));
                std::array<char, 8> in{};
                co_await stream.async_read_some(net::buffer(in));
            },
            net::detached);
        io.run_for(2s);
    });
#if IDLEWHEEL_CHECK_EXECUTOR
    BOOST_TEST(o.aborted, "did not abort (exit " << o.exit_code << "): " << o.err);
    BOOST_TEST(o.err.find("idlewheel::beast::tcp_stream::async_read_some was called") != std::string::npos, o.err);
    BOOST_TEST(o.err.find("on that io_context, outside that strand") != std::string::npos, o.err);
    BOOST_TEST(o.err.find("co_spawn(shard.get_executor(), session(...))") != std::string::npos, o.err);
#else
    (void)o;
#endif
}

// The original threading kept (sessions co_spawned on the io_context, sockets accepted on it)
// with a pool registered: the stream finds no wheel. Its constructor throws inside a detached
// coroutine, which swallows the exception: the message still reaches stderr, for each.
BOOST_AUTO_TEST_CASE(a_stream_with_no_wheel_to_find_is_loud_in_a_detached_coroutine) {
    const idlewheel::test::child_outcome o = idlewheel::test::in_child([] {
        net::io_context io;
        idlewheel::wheel_pool pool(io);
        idlewheel::beast::use_wheel_pool(io, pool);
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), 0});
        int sessions = 0;
        net::co_spawn(
            io,
            [&]() -> net::awaitable<void> {
                for (int i = 0; i < 2; ++i) {
                    auto socket = co_await acceptor.async_accept(net::use_awaitable);  // on the io_context
                    net::co_spawn(
                        io,
                        [&sessions, s = std::move(socket)]() mutable -> net::awaitable<void> {
                            ++sessions;
                            co_stream stream(std::move(s));  // throws: no shard's strand
                            co_return;
                        },
                        net::detached);
                }
            },
            net::detached);
        tcp::socket a(io), b(io);
        a.connect(acceptor.local_endpoint());
        b.connect(acceptor.local_endpoint());
        io.run_for(1s);
        std::exit(sessions == 2 ? 0 : 3);
    });
    BOOST_TEST(!o.aborted, o.err);
    BOOST_TEST(o.exit_code == 0);
    const auto first = o.err.find("is not one of its shards' strands");
    BOOST_TEST(first != std::string::npos, o.err);
    BOOST_TEST(o.err.find("co_spawned on it") != std::string::npos, o.err);
    BOOST_TEST(o.err.find("is not one of its shards' strands", first + 1) != std::string::npos, o.err);  // each
}
