// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/cancel_after.hpp>

// cancel_after / cancel_at under a wheel that is stopped, destroyed or full, with 10 000
// operations at once, and on real loopback sockets (steady_clock). A source file of the
// executable test_cancel_after, whose first file is test_cancel_after.cpp.

#include "support/manual_io.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/unit_test.hpp>

#include "support/cancel_after_scene.hpp"  // after Boost.Test

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {
using namespace idlewheel::test::cancel_after_scene;  // support/cancel_after_scene.hpp
}  // namespace


BOOST_AUTO_TEST_SUITE(wheel_lifetime)

// stop(): every operation waiting on a deadline is cancelled with its type (posted).
BOOST_FIXTURE_TEST_CASE(stopped_with_operations_pending, fixture) {
    std::array<outcome, 3> outs;
    for (std::size_t i = 0; i < outs.size(); ++i)
        async_never(io, outs[i], cancel_after(wheel, 1s, all_types[i], recorder(outs[i], t0)));
    advance_and_poll(io, 10ms);
    const auto unrun = wheel.stop();
    BOOST_TEST(unrun.empty());                         // deadlines are not schedule() timeouts
    for (auto& out : outs) BOOST_TEST(out.calls == 0);  // not from inside stop()
    poll(io);
    for (std::size_t i = 0; i < outs.size(); ++i) {
        BOOST_TEST(outs[i].calls == 1);
        BOOST_TEST(outs[i].ec == asio::error::operation_aborted);
        BOOST_REQUIRE(outs[i].emitted.size() == 1U);
        BOOST_TEST((outs[i].emitted[0] == all_types[i]));
    }
    // A wheel that is stopped takes no deadline: the operation is cancelled at once.
    outcome late;
    async_never(io, late, cancel_after(wheel, 1s, recorder(late, t0)));
    BOOST_TEST(late.emitted.size() == 1U);
    poll(io);
    BOOST_TEST(late.calls == 1);
    BOOST_TEST(late.ec == asio::error::operation_aborted);
}

BOOST_AUTO_TEST_CASE(destroyed_with_operations_pending) {
    manual_clock::reset();
    asio::io_context io;
    auto wheel = std::make_unique<wheel_type>(io, idlewheel::wheel_options{.tick = 1ms});
    const auto t0 = manual_clock::now();
    std::vector<outcome> outs(100);
    for (auto& out : outs) async_never(io, out, cancel_after(*wheel, 1s, recorder(out, t0)));
    // And one that completed first, and one whose wait is on the dying wheel itself.
    outcome done, same_wheel;
    wheel->async_wait(1ms, cancel_after(*wheel, 1s, recorder(done, t0)));
    wheel->async_wait(10s, cancel_after(*wheel, 1s, recorder(same_wheel, t0)));
    advance_and_poll(io, 5ms);
    BOOST_TEST(done.calls == 1);
    wheel.reset();
    for (auto& out : outs) BOOST_TEST_REQUIRE(out.calls == 0);
    poll(io);
    for (auto& out : outs) {
        BOOST_TEST_REQUIRE(out.calls == 1);
        BOOST_TEST_REQUIRE(out.ec == asio::error::operation_aborted);
    }
    BOOST_TEST(same_wheel.calls == 1);
    BOOST_TEST(same_wheel.ec == asio::error::operation_aborted);
    // A new wheel at (possibly) the same address works as the first did.
    wheel = std::make_unique<wheel_type>(io, idlewheel::wheel_options{.tick = 1ms});
    outcome fresh;
    async_never(io, fresh, cancel_after(*wheel, 5ms, recorder(fresh, t0)));
    advance_and_poll(io, 4ms);
    BOOST_TEST(fresh.calls == 0);
    advance_and_poll(io, 2ms);
    BOOST_TEST(fresh.calls == 1);
}

// max_pending reached: the deadline cannot be armed, so the operation is cancelled at once.
BOOST_AUTO_TEST_CASE(full_wheel_cancels_at_once) {
    manual_clock::reset();
    asio::io_context io;
    wheel_type wheel(io, {.tick = 1ms, .max_pending = 1});
    const auto t0 = manual_clock::now();
    outcome first, second;
    async_never(io, first, cancel_after(wheel, 1s, recorder(first, t0)));  // one deadline: full
    async_never(io, second, cancel_after(wheel, 1s, recorder(second, t0)));
    BOOST_TEST(second.emitted.size() == 1U);
    poll(io);
    BOOST_TEST(first.calls == 0);
    BOOST_TEST(second.calls == 1);
    advance_and_poll(io, 1001ms);
    BOOST_TEST(first.calls == 1);
}

// stop() and the destructor cancel every pending operation with its own cancellation type,
// posted (never from inside stop() or the destructor), through cancel_after and cancel_at,
// on both clock_read modes; pending() counts the deadlines alone, and stop() returns only
// the schedule() timeouts (one here).
BOOST_AUTO_TEST_CASE(stop_and_destruction_cancel_with_each_type) {
    for (const auto mode : {idlewheel::clock_read::per_schedule, idlewheel::clock_read::per_tick}) {
        for (const bool destroy : {false, true}) {
            manual_clock::reset();
            asio::io_context io;
            auto wheel = std::make_unique<wheel_type>(io, idlewheel::wheel_options{.tick = 1ms, .clock = mode});
            const auto t0 = manual_clock::now();
            auto handle = wheel->schedule(1h, [] {});
            BOOST_TEST_REQUIRE(wheel->pending() == 1U);
            std::array<outcome, 3> rel, abs;
            for (std::size_t i = 0; i < all_types.size(); ++i) {
                async_never(io, rel[i], cancel_after(*wheel, 1s, all_types[i], recorder(rel[i], t0)));
                async_never(io, abs[i], cancel_at(*wheel, t0 + 1s, all_types[i], recorder(abs[i], t0)));
            }
            BOOST_TEST_REQUIRE(wheel->pending() == 1U + 6U);  // the handle and the six deadlines
            advance_and_poll(io, 5ms);
            BOOST_TEST_REQUIRE(wheel->pending() == 1U + 6U);
            if (destroy) {
                wheel.reset();
            } else {
                const auto unrun = wheel->stop();
                BOOST_TEST_REQUIRE(unrun.size() == 1U);  // the schedule() timeout alone
                BOOST_TEST(unrun[0].cancelled());
                BOOST_TEST(wheel->pending() == 0U);
            }
            for (std::size_t i = 0; i < all_types.size(); ++i) {
                BOOST_TEST_REQUIRE(rel[i].emitted.empty());  // posted, not from inside
                BOOST_TEST_REQUIRE(abs[i].emitted.empty());
            }
            poll(io);
            for (std::size_t i = 0; i < all_types.size(); ++i) {
                for (const outcome* o : {&rel[i], &abs[i]}) {
                    BOOST_TEST_REQUIRE(o->calls == 1);
                    BOOST_TEST(o->ec == asio::error::operation_aborted);
                    BOOST_REQUIRE(o->emitted.size() == 1U);
                    BOOST_TEST((o->emitted[0] == all_types[i]));
                }
            }
            BOOST_TEST(io.stopped());  // no work left behind
        }
    }
}

// An io_context destroyed with the posted cancellations still queued frees every operation
// (checked by ASan): the posted emission and the operation's own handler each hold it, and
// whichever is destroyed last frees it.
BOOST_AUTO_TEST_CASE(posted_cancellation_destroyed_unrun) {
    manual_clock::reset();
    std::array<outcome, 4> outs;
    {
        asio::io_context io;
        wheel_type wheel(io, {.tick = 1ms});
        const auto t0 = manual_clock::now();
        for (auto& out : outs) wheel.async_wait(10s, cancel_after(wheel, 1s, recorder(out, t0)));
        BOOST_TEST(wheel.stop().empty());  // the waits' completions and the cancellations queued
    }
    for (auto& out : outs) BOOST_TEST(out.calls == 0);
}

// expire_all() runs every deadline now.
BOOST_FIXTURE_TEST_CASE(expire_all_cancels_and_the_wheel_stays_usable, fixture) {
    outcome a;
    async_never(io, a, cancel_after(wheel, 1s, recorder(a, t0)));
    wheel.expire_all();
    poll(io);
    BOOST_TEST(a.calls == 1);
    BOOST_TEST(wheel.pending() == 0U);
    outcome b;
    async_never(io, b, cancel_after(wheel, 5ms, recorder(b, t0)));
    advance_and_poll(io, 4ms);
    BOOST_TEST(b.calls == 0);
    advance_and_poll(io, 2ms);
    BOOST_TEST(b.calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(scale)

// 10 000 operations at once: half never complete (cancelled at 100 ms, none early, none more
// than a tick late), half complete at 50 ms (their deadlines leave the wheel).
BOOST_FIXTURE_TEST_CASE(ten_thousand_concurrent_operations, fixture) {
    warm_up();
    const auto start = manual_clock::now();
    const std::size_t before = wheel.pending();
    constexpr std::size_t n = 10'000;
    std::vector<outcome> outs(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 2 == 0)
            async_never(io, outs[i], cancel_after(wheel, 100ms, recorder(outs[i], start)));
        else
            wheel.async_wait(50ms, cancel_after(wheel, 100ms, recorder(outs[i], start)));
    }
    BOOST_TEST(wheel.pending() == before + n + n / 2);  // deadlines and waits
    advance_and_poll(io, 60ms);
    BOOST_TEST(wheel.pending() == before + n / 2);
    advance_and_poll(io, 39ms);
    for (std::size_t i = 0; i < n; i += 2) BOOST_TEST_REQUIRE(outs[i].calls == 0);
    advance_and_poll(io, 2ms);
    std::size_t aborted = 0, succeeded = 0;
    for (std::size_t i = 0; i < n; ++i) {
        BOOST_TEST_REQUIRE(outs[i].calls == 1);
        if (outs[i].ec == asio::error::operation_aborted) {
            ++aborted;
            BOOST_TEST_REQUIRE(outs[i].at >= 100);
            BOOST_TEST_REQUIRE(outs[i].at <= 101, "at " << outs[i].at << " op " << i);
        } else {
            ++succeeded;
            BOOST_TEST_REQUIRE(outs[i].at == 50);
        }
    }
    BOOST_TEST(aborted == n / 2);
    BOOST_TEST(succeeded == n / 2);
    BOOST_TEST(wheel.pending() == before);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(loopback)

namespace {

struct socket_pair {
    asio::io_context io;
    asio::ip::tcp::socket client{io}, server{io};
    socket_pair() {
        asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
        client.connect(acceptor.local_endpoint());
        acceptor.accept(server);
    }
};

}  // namespace

// A read that never gets data is cancelled at its deadline (real time), never before it; a
// read whose data arrives first completes with it and leaves pending() where it was.
BOOST_AUTO_TEST_CASE(socket_reads) {
    socket_pair p;
    idlewheel::wheel_timer wheel(p.io, {.tick = 1ms});
    std::array<char, 16> buf{};
    error_code ec;
    std::size_t n = 0;
    const auto start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration took{};
    p.server.async_read_some(asio::buffer(buf), cancel_after(wheel, 50ms, [&](error_code e, std::size_t k) {
                                 ec = e;
                                 n = k;
                                 took = std::chrono::steady_clock::now() - start;
                             }));
    p.io.run();
    BOOST_TEST(ec == asio::error::operation_aborted);
    BOOST_TEST(n == 0U);
    BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(took).count() >= 50);
    BOOST_TEST(p.server.is_open());  // per-operation cancellation: the socket stays usable

    const std::size_t before = wheel.pending();
    asio::write(p.client, asio::buffer("hello", 5));
    p.io.restart();
    p.server.async_read_some(asio::buffer(buf), cancel_after(wheel, 5s, [&](error_code e, std::size_t k) {
                                 ec = e;
                                 n = k;
                                 BOOST_TEST(wheel.pending() == before);
                             }));
    p.io.run();
    BOOST_TEST(!ec);
    BOOST_TEST(n == 5U);
    BOOST_TEST(std::string(buf.data(), n) == "hello");
}

// The coroutine idiom: a server reading with per-read timeouts through the
// partial form (the socket's default token is use_awaitable).
BOOST_AUTO_TEST_CASE(coroutine_reads_with_the_partial_form) {
    socket_pair p;
    idlewheel::wheel_timer wheel(p.io, {.tick = 1ms});
    using awaitable_socket = asio::use_awaitable_t<>::as_default_on_t<asio::ip::tcp::socket>;
    awaitable_socket server(std::move(p.server));
    std::vector<std::string> got;
    std::optional<error_code> end;
    asio::co_spawn(
        p.io,
        [&]() -> asio::awaitable<void> {
            std::array<char, 16> buf{};
            try {
                for (;;) {
                    std::size_t k = co_await server.async_read_some(asio::buffer(buf), cancel_after(wheel, 100ms));
                    got.emplace_back(buf.data(), k);
                }
            } catch (const boost::system::system_error& e) {
                end = e.code();
            }
        },
        asio::detached);
    asio::co_spawn(
        p.io,
        [&]() -> asio::awaitable<void> {
            for (const char* m : {"a", "bb", "ccc"}) {
                co_await asio::async_write(p.client, asio::buffer(m, std::char_traits<char>::length(m)),
                                           asio::use_awaitable);
                co_await wheel.async_wait(20ms, asio::use_awaitable);
            }
        },
        asio::detached);
    p.io.run();
    BOOST_TEST(got == (std::vector<std::string>{"a", "bb", "ccc"}), boost::test_tools::per_element());
    BOOST_REQUIRE(end.has_value());
    BOOST_TEST(*end == asio::error::operation_aborted);
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_AUTO_TEST_SUITE_END()
