// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/cancel_after.hpp>

// idlewheel::cancel_after / cancel_at: the deadline cancels an operation that does not
// complete (never early, at most one tick late, two on a per_tick wheel); an operation that
// completes first takes its deadline off the wheel; every completion token kind; the outer
// handler's cancellation slot and the deadline, whichever comes first; the cancellation type;
// a wheel stopped or destroyed under pending operations; 10 000 operations at once; real
// loopback sockets. Time is idlewheel::manual_clock (polled io_context) except for the socket
// tests, which use steady_clock. The lifetime, scale and loopback cases are in
// test_cancel_after_lifetime.cpp (the same executable); what both share is
// support/cancel_after_scene.hpp.

#include "support/manual_io.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE cancel_after
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


BOOST_AUTO_TEST_SUITE(deadline)

// Stepped 1 ms at a time: nothing before 50 ms, cancelled at 50 ms (one tick late at most).
BOOST_FIXTURE_TEST_CASE(never_completing_operation_is_cancelled_at_its_deadline, fixture) {
    outcome out;
    async_never(io, out, cancel_after(wheel, 50ms, recorder(out, t0)));
    BOOST_TEST_REQUIRE(wheel.pending() == 1U);  // the deadline, nothing else
    for (int ms = 1; ms < 50; ++ms) {
        advance_and_poll(io, 1ms);
        BOOST_TEST_REQUIRE(out.emitted.size() == 0U);
        BOOST_TEST_REQUIRE(out.calls == 0);
    }
    advance_and_poll(io, 1ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(out.ec == asio::error::operation_aborted);
    BOOST_TEST(out.at >= 50);
    BOOST_TEST(out.at <= 51);
    BOOST_REQUIRE(out.emitted.size() == 1U);
    BOOST_TEST((out.emitted[0] == asio::cancellation_type::terminal));
    advance_and_poll(io, 1s);
    BOOST_TEST(out.calls == 1);
}

// A longer wheel.async_wait under a shorter deadline.
BOOST_FIXTURE_TEST_CASE(wheel_wait_is_cut_short, fixture) {
    outcome out;
    wheel.async_wait(10s, cancel_after(wheel, 30ms, recorder(out, t0)));
    advance_and_poll(io, 29ms);
    BOOST_TEST(out.calls == 0);
    advance_and_poll(io, 2ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(out.ec == asio::error::operation_aborted);
    BOOST_TEST(out.at >= 30);
    BOOST_TEST(out.at <= 31);
}

// The common case: the operation wins, and its deadline leaves the wheel at once.
BOOST_FIXTURE_TEST_CASE(completing_first_leaves_pending_where_it_was, fixture) {
    warm_up();
    const std::size_t before = wheel.pending();
    const auto cancelled_before = wheel.stats().cancelled;
    outcome out;
    wheel.async_wait(10ms, cancel_after(wheel, 1s, recorder(out, t0)));
    BOOST_TEST(wheel.pending() == before + 2);  // the wait and its deadline
    advance_and_poll(io, 10ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(!out.ec);
    BOOST_TEST(wheel.pending() == before);
    BOOST_TEST(wheel.stats().cancelled == cancelled_before + 1);  // the deadline, unlinked
    advance_and_poll(io, 2s);
    BOOST_TEST(out.calls == 1);
}

// Operations waiting hold their deadlines and nothing more on the wheel, and leave nothing
// behind, so io_context::run() returns when they are done.
BOOST_FIXTURE_TEST_CASE(nothing_but_deadlines_while_operations_wait, fixture) {
    BOOST_TEST(wheel.pending() == 0U);
    std::array<outcome, 3> outs;
    for (auto& out : outs) wheel.async_wait(1ms, cancel_after(wheel, 1s, recorder(out, t0)));
    BOOST_TEST(wheel.pending() == 3U + 3U);  // the waits and their deadlines
    advance_and_poll(io, 2ms);
    for (auto& out : outs) BOOST_TEST(out.calls == 1);
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(io.stopped());  // no work left behind
}

BOOST_FIXTURE_TEST_CASE(cancellation_type_is_the_one_asked_for, fixture) {
    for (auto type : all_types) {
        outcome out;
        async_never(io, out, cancel_after(wheel, 5ms, type, recorder(out, t0)));
        advance_and_poll(io, 6ms);
        BOOST_TEST(out.calls == 1);
        BOOST_REQUIRE(out.emitted.size() == 1U);
        BOOST_TEST((out.emitted[0] == type));
    }
}

BOOST_FIXTURE_TEST_CASE(cancel_at_an_absolute_time, fixture) {
    outcome out;
    async_never(io, out, cancel_at(wheel, t0 + 40ms, recorder(out, t0)));
    advance_and_poll(io, 39ms);
    BOOST_TEST(out.calls == 0);
    advance_and_poll(io, 2ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(out.at >= 40);
    BOOST_TEST(out.at <= 41);
    outcome partial;
    async_never(io, partial,
                cancel_at(wheel, manual_clock::now() + 5ms, asio::cancellation_type::partial, recorder(partial, t0)));
    advance_and_poll(io, 6ms);
    BOOST_REQUIRE(partial.emitted.size() == 1U);
    BOOST_TEST((partial.emitted[0] == asio::cancellation_type::partial));
}

// clock_read::per_tick: no clock read at the call; never before the delay since the call,
// at most two ticks after it.
BOOST_AUTO_TEST_CASE(per_tick_wheel_precision) {
    manual_clock::reset();
    asio::io_context io;
    wheel_type wheel(io, {.tick = 10ms, .clock = idlewheel::clock_read::per_tick});
    for (auto offset : {0ms, 3ms, 9ms}) {
        advance_and_poll(io, offset);
        const auto t0 = manual_clock::now();
        outcome out;
        async_never(io, out, cancel_after(wheel, 50ms, recorder(out, t0)));
        advance_and_poll(io, 100ms);
        BOOST_TEST(out.calls == 1);
        BOOST_TEST(out.at >= 50);
        BOOST_TEST(out.at <= 70);
    }
}

// An operation that completes from inside its cancellation handler (inside the deadline's
// emit): the state outlives the emit, the handler runs once (checked under ASan).
BOOST_FIXTURE_TEST_CASE(completion_inside_the_deadline_emit, fixture) {
    outcome out;
    async_never(io, out, cancel_after(wheel, 5ms, recorder(out, t0)), /*inline_completion=*/true);
    advance_and_poll(io, 6ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(out.ec == asio::error::operation_aborted);
}

BOOST_FIXTURE_TEST_CASE(move_only_handler_and_zero_timeout, fixture) {
    auto owned = std::make_unique<int>(7);
    int seen = 0;
    outcome out;
    async_never(io, out, cancel_after(wheel, 0ms, [&seen, p = std::move(owned)](error_code ec) {
                    seen = ec == asio::error::operation_aborted ? *p : -1;
                }));
    BOOST_TEST(seen == 0);  // never inside the initiating function
    advance_and_poll(io, 2ms);
    BOOST_TEST(seen == 7);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tokens)

BOOST_FIXTURE_TEST_CASE(use_awaitable, fixture) {
    std::optional<error_code> long_wait, short_wait;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            try {
                co_await wheel.async_wait(1s, cancel_after(wheel, 20ms, asio::use_awaitable));
                long_wait = error_code{};
            } catch (const boost::system::system_error& e) {
                long_wait = e.code();
            }
            co_await wheel.async_wait(5ms, cancel_after(wheel, 1s, asio::use_awaitable));
            short_wait = error_code{};
        },
        asio::detached);
    advance_and_poll(io, 19ms);
    BOOST_TEST(!long_wait.has_value());
    advance_and_poll(io, 2ms);
    BOOST_REQUIRE(long_wait.has_value());
    BOOST_TEST(*long_wait == asio::error::operation_aborted);
    advance_and_poll(io, 10ms);
    BOOST_REQUIRE(short_wait.has_value());
    BOOST_TEST(!*short_wait);
}

BOOST_FIXTURE_TEST_CASE(as_tuple_use_awaitable, fixture) {
    std::optional<error_code> result;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            auto [ec] = co_await wheel.async_wait(1s, cancel_after(wheel, 20ms, asio::as_tuple(asio::use_awaitable)));
            result = ec;
        },
        asio::detached);
    advance_and_poll(io, 21ms);
    BOOST_REQUIRE(result.has_value());
    BOOST_TEST(*result == asio::error::operation_aborted);
}

BOOST_FIXTURE_TEST_CASE(deferred, fixture) {
    outcome out;
    auto op = wheel.async_wait(1s, cancel_after(wheel, 15ms, asio::deferred));
    advance_and_poll(io, 5ms);
    const auto started = manual_clock::now();
    std::move(op)(recorder(out, started));  // the deadline runs from here, not from the call above
    advance_and_poll(io, 14ms);
    BOOST_TEST(out.calls == 0);
    advance_and_poll(io, 2ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(out.ec == asio::error::operation_aborted);
    BOOST_TEST(out.at >= 15);
}

BOOST_FIXTURE_TEST_CASE(use_future, fixture) {
    std::future<void> f = wheel.async_wait(1s, cancel_after(wheel, 10ms, asio::use_future));
    advance_and_poll(io, 11ms);
    // use_future's handler runs on the system executor: it may take a moment.
    BOOST_REQUIRE(f.wait_for(5s) == std::future_status::ready);
    BOOST_CHECK_EXCEPTION(f.get(), boost::system::system_error,
                          [](const auto& e) { return e.code() == asio::error::operation_aborted; });
    std::future<void> g = wheel.async_wait(3ms, cancel_after(wheel, 1s, asio::use_future));
    advance_and_poll(io, 4ms);
    BOOST_REQUIRE(g.wait_for(5s) == std::future_status::ready);
    poll(io);  // the deadline's removal, posted back to the wheel's executor
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_CHECK_NO_THROW(g.get());
}

// The partial form takes the operation's default completion token (here: an executor that
// names use_awaitable as its default), and can also wrap a token: cancel_after(wheel, d)(token).
BOOST_AUTO_TEST_CASE(partial_form) {
    manual_clock::reset();
    asio::io_context io;
    using default_awaitable = asio::use_awaitable_t<>::executor_with_default<asio::any_io_executor>;
    idlewheel::basic_wheel_timer<manual_clock, default_awaitable> wheel(default_awaitable(io.get_executor()),
                                                                        {.tick = 1ms});
    std::optional<error_code> result;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            try {
                co_await wheel.async_wait(1s, cancel_after(wheel, 10ms));
                result = error_code{};
            } catch (const boost::system::system_error& e) {
                result = e.code();
            }
        },
        asio::detached);
    advance_and_poll(io, 11ms);
    BOOST_REQUIRE(result.has_value());
    BOOST_TEST(*result == asio::error::operation_aborted);

    outcome out;
    const auto t0 = manual_clock::now();
    async_never(io, out, cancel_after(wheel, 10ms, asio::cancellation_type::total)(recorder(out, t0)));
    advance_and_poll(io, 11ms);
    BOOST_TEST(out.calls == 1);
    BOOST_REQUIRE(out.emitted.size() == 1U);
    BOOST_TEST((out.emitted[0] == asio::cancellation_type::total));
}

// The handler's associated executor runs it (the operation sees the outer handler's
// associations, except the cancellation slot).
BOOST_FIXTURE_TEST_CASE(associated_executor, fixture) {
    auto strand = asio::make_strand(io);
    bool called = false;
    bool in_strand = false;
    wheel.async_wait(5ms, cancel_after(wheel, 1s, asio::bind_executor(strand, [&](error_code) {
                                           called = true;
                                           in_strand = strand.running_in_this_thread();
                                       })));
    advance_and_poll(io, 6ms);
    BOOST_TEST(called);
    BOOST_TEST(in_strand);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

template <class T>
struct counting_allocator {
    using value_type = T;
    int* allocations;
    explicit counting_allocator(int* a) noexcept : allocations(a) {}
    template <class U>
    counting_allocator(const counting_allocator<U>& other) noexcept : allocations(other.allocations) {}  // NOLINT
    T* allocate(std::size_t n) {
        ++*allocations;
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
    template <class U>
    bool operator==(const counting_allocator<U>& other) const noexcept {
        return allocations == other.allocations;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(associations)

BOOST_FIXTURE_TEST_CASE(handler_allocator_allocates_the_state, fixture) {
    warm_up();
    int allocations = 0;
    outcome out;
    async_never(
        io, out,
        cancel_after(wheel, 5ms, asio::bind_allocator(counting_allocator<int>(&allocations), recorder(out, t0))));
    BOOST_TEST(allocations >= 1);
    advance_and_poll(io, 6ms);
    BOOST_TEST(out.calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(outer_slot)

// The outer slot fires first: the operation is cancelled with its type, and the deadline
// leaves the wheel.
BOOST_FIXTURE_TEST_CASE(outer_cancellation_before_the_deadline, fixture) {
    warm_up();
    const std::size_t before = wheel.pending();
    for (auto type : all_types) {
        asio::cancellation_signal outer;
        outcome out;
        async_never(io, out, cancel_after(wheel, 1s, asio::bind_cancellation_slot(outer.slot(), recorder(out, t0))));
        advance_and_poll(io, 10ms);
        BOOST_TEST(wheel.pending() == before + 1);  // the deadline
        outer.emit(type);
        advance_and_poll(io, 1ms);
        BOOST_TEST(out.calls == 1);
        BOOST_REQUIRE(out.emitted.size() == 1U);
        BOOST_TEST((out.emitted[0] == type));
        BOOST_TEST(wheel.pending() == before);
        outer.emit(asio::cancellation_type::terminal);  // after completion: nothing happens
        advance_and_poll(io, 2s);
        BOOST_TEST(out.calls == 1);
        BOOST_TEST(out.emitted.size() == 1U);
    }
}

// The deadline fires first, with an outer slot connected; the outer slot is harmless after.
BOOST_FIXTURE_TEST_CASE(deadline_before_outer_cancellation, fixture) {
    asio::cancellation_signal outer;
    outcome out;
    async_never(io, out,
                cancel_after(wheel, 20ms, asio::cancellation_type::partial,
                             asio::bind_cancellation_slot(outer.slot(), recorder(out, t0))));
    advance_and_poll(io, 21ms);
    BOOST_TEST(out.calls == 1);
    BOOST_TEST(out.at <= 21);
    BOOST_REQUIRE(out.emitted.size() == 1U);
    BOOST_TEST((out.emitted[0] == asio::cancellation_type::partial));
    outer.emit(asio::cancellation_type::terminal);
    advance_and_poll(io, 1ms);
    BOOST_TEST(out.calls == 1);
}

// A co_spawn parent (awaitable operators): the other branch wins at 10 ms and cancels this
// one through the coroutine's slot, long before its 500 ms deadline.
BOOST_FIXTURE_TEST_CASE(parent_coroutine_cancels_first, fixture) {
    using namespace asio::experimental::awaitable_operators;
    std::optional<std::size_t> winner;
    std::int64_t at = -1;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            auto r = co_await (wheel.async_wait(1s, cancel_after(wheel, 500ms, asio::use_awaitable)) ||
                               wheel.async_wait(10ms, asio::use_awaitable));
            winner = r.index();
            at = ms_since(t0);
        },
        asio::detached);
    advance_and_poll(io, 12ms);
    BOOST_REQUIRE(winner.has_value());
    BOOST_TEST(*winner == 1U);
    BOOST_TEST(at <= 11);
    BOOST_TEST(wheel.pending() == 0U);  // both waits and the deadline are gone
}

// And the other way round: the deadline (10 ms) fails its branch, and the group cancels the
// other (500 ms): the whole expression ends at 10 ms, with the deadline's operation_aborted.
BOOST_FIXTURE_TEST_CASE(deadline_first_under_a_parent, fixture) {
    using namespace asio::experimental::awaitable_operators;
    std::optional<error_code> ec;
    std::int64_t at = -1;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            try {
                co_await (wheel.async_wait(1s, cancel_after(wheel, 10ms, asio::use_awaitable)) &&
                          wheel.async_wait(500ms, asio::use_awaitable));
                ec = error_code{};
            } catch (const asio::multiple_exceptions& e) {  // both branches failed: the first one's
                try {
                    std::rethrow_exception(e.first_exception());
                } catch (const boost::system::system_error& first) {
                    ec = first.code();
                }
            } catch (const boost::system::system_error& e) {
                ec = e.code();
            }
            at = ms_since(t0);
        },
        asio::detached);
    advance_and_poll(io, 12ms);
    BOOST_REQUIRE(ec.has_value());
    BOOST_TEST(*ec == asio::error::operation_aborted);
    BOOST_TEST(at >= 10);
    BOOST_TEST(at <= 11);
}

BOOST_AUTO_TEST_SUITE_END()
