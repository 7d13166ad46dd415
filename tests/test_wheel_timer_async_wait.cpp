// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// wheel_timer::async_wait as an Asio asynchronous operation: every completion token kind,
// "exactly once, never inside the initiating call", per-operation cancellation of each type,
// and the handler's associated executor and allocator. Time is idlewheel::manual_clock and
// the io_context is only ever polled. The associated executor and allocator, and max_pending,
// are in test_wheel_timer_async_wait_associations.cpp (the same executable).

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/wait_completion.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>

#define BOOST_TEST_MODULE async_wait
#include <boost/test/unit_test.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::clock_reset;
using idlewheel::test::advance_until;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using idlewheel::test::wheel_fixture;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using idlewheel::error_code;

using idlewheel::test::wait_completion::completion;
using idlewheel::test::wait_completion::completion_handler;
using idlewheel::test::wait_completion::start_wait;

constexpr std::array<net::cancellation_type, 3> cancellation_types{
    net::cancellation_type::terminal, net::cancellation_type::partial, net::cancellation_type::total};

const char* name(net::cancellation_type t) {
    switch (t) {
        case net::cancellation_type::terminal: return "terminal";
        case net::cancellation_type::partial: return "partial";
        case net::cancellation_type::total: return "total";
        default: return "other";
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(callbacks)

BOOST_FIXTURE_TEST_CASE(called_exactly_once_never_inline, wheel_fixture) {
    completion c;
    start_wait(wheel, 50ms, c, t0);
    BOOST_TEST(wheel.pending() == 1U);
    advance_and_poll(io, 49ms);
    BOOST_TEST(c.calls == 0);
    advance_and_poll(io, 1ms);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(!c.ec);
    BOOST_TEST(c.at == 50);
    BOOST_TEST(!c.called_inside_initiation);
    advance_and_poll(io, 1s);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(wheel.stats().expired == 1U);
    BOOST_TEST(wheel.stats().wakeups == 1U);
    BOOST_TEST(io.stopped());  // no work left behind
}

BOOST_FIXTURE_TEST_CASE(zero_delay_is_not_inline_either, wheel_fixture) {
    manual_clock::advance(5ms);
    completion c;
    start_wait(wheel, 0ms, c, t0);
    BOOST_TEST(c.calls == 0);
    advance_and_poll(io, 10ms);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(c.at == 10);
    BOOST_TEST(!c.called_inside_initiation);
}

BOOST_FIXTURE_TEST_CASE(move_only_handler, wheel_fixture) {
    auto owned = std::make_unique<int>(7);
    int seen = 0;
    wheel.async_wait(10ms, [&seen, p = std::move(owned)](error_code ec) { seen = ec ? -1 : *p; });
    advance_and_poll(io, 10ms);
    BOOST_TEST(seen == 7);
}

// A handler that starts the next wait (the memory of the first is already free by then).
BOOST_FIXTURE_TEST_CASE(chained_waits, wheel_fixture) {
    struct chain {
        wheel_type& wheel;
        manual_clock::time_point t0;
        std::vector<std::int64_t> at;
        void start() {
            wheel.async_wait(30ms, [this](error_code ec) {
                BOOST_TEST(!ec);
                at.push_back(ms_since(t0));
                if (at.size() < 5) start();
            });
        }
    } c{wheel, t0, {}};
    c.start();
    advance_and_poll(io, 300ms);
    BOOST_TEST(c.at == (std::vector<std::int64_t>{30, 60, 90, 120, 150}), boost::test_tools::per_element());
    BOOST_TEST(wheel.stats().wakeups == 5U);
}

BOOST_FIXTURE_TEST_CASE(immediate_errors_complete_as_if_by_post, wheel_fixture) {
    wheel_type limited(io, {.max_pending = 1});
    completion first;
    completion refused;
    start_wait(limited, 1s, first, t0);
    start_wait(limited, 1s, refused, t0);
    BOOST_TEST(refused.calls == 0);
    poll(io);
    BOOST_TEST(refused.calls == 1);
    BOOST_TEST(refused.ec == make_error_code(idlewheel::error::too_many_pending));
    BOOST_TEST(refused.at == 0);
    BOOST_TEST(!refused.called_inside_initiation);
    BOOST_TEST(limited.stats().rejected == 1U);
    BOOST_TEST(limited.pending() == 1U);

    wheel.stop();
    completion stopped;
    start_wait(wheel, 1s, stopped, t0);
    BOOST_TEST(stopped.calls == 0);
    poll(io);
    BOOST_TEST(stopped.calls == 1);
    BOOST_TEST(stopped.ec == make_error_code(idlewheel::error::stopped));
    BOOST_TEST(!stopped.called_inside_initiation);

    advance_and_poll(io, 1s);
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(!first.ec);
    BOOST_TEST(refused.calls == 1);
    BOOST_TEST(stopped.calls == 1);
}

// Inside a handler of the wheel's io_context a dispatch would run the handler at once, so that
// is where "never from inside the initiating function" is tested; from the test's own thread
// dispatch and post look the same.
BOOST_FIXTURE_TEST_CASE(immediate_errors_are_posted_even_inside_a_handler, wheel_fixture) {
    wheel_type limited(io, {.max_pending = 1});
    limited.schedule(1s, [] {});
    wheel.stop();
    completion refused;
    completion stopped;
    bool ran = false;
    net::post(io, [&] {
        start_wait(limited, 1s, refused, t0);
        start_wait(wheel, 1s, stopped, t0);
        ran = true;
    });
    poll(io);
    BOOST_TEST(ran);
    BOOST_TEST(refused.calls == 1);
    BOOST_TEST(refused.ec == make_error_code(idlewheel::error::too_many_pending));
    BOOST_TEST(!refused.called_inside_initiation);
    BOOST_TEST(stopped.calls == 1);
    BOOST_TEST(stopped.ec == make_error_code(idlewheel::error::stopped));
    BOOST_TEST(!stopped.called_inside_initiation);
}

BOOST_FIXTURE_TEST_CASE(stop_and_destruction_abort_pending_waits, clock_reset) {
    net::io_context io;
    const auto t0 = manual_clock::now();
    std::optional<wheel_type> wheel(std::in_place, io);
    completion by_stop;
    completion by_destruction;
    start_wait(*wheel, 1s, by_stop, t0);
    advance_and_poll(io, 10ms);
    net::post(io, [&] {
        by_stop.initiating = true;  // "inside" now means inside stop()
        wheel->stop();
        by_stop.initiating = false;
    });
    poll(io);
    BOOST_TEST(by_stop.calls == 1);
    BOOST_TEST(by_stop.ec == net::error::operation_aborted);
    BOOST_TEST(!by_stop.called_inside_initiation);

    wheel.emplace(io);
    start_wait(*wheel, 1s, by_destruction, t0);
    advance_and_poll(io, 10ms);
    net::post(io, [&] {
        by_destruction.initiating = true;
        wheel.reset();
        by_destruction.initiating = false;
    });
    poll(io);
    BOOST_TEST(!by_destruction.called_inside_initiation);
    BOOST_TEST(by_destruction.calls == 1);
    BOOST_TEST(by_destruction.ec == net::error::operation_aborted);
    BOOST_TEST(by_destruction.at == 20);
    BOOST_TEST(io.stopped());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tokens)

namespace {

net::awaitable<void> sleep_twice(wheel_type& wheel, std::vector<std::int64_t>& at, manual_clock::time_point t0) {
    co_await wheel.async_wait(100ms, net::use_awaitable);
    at.push_back(ms_since(t0));
    co_await wheel.async_wait(250ms, net::use_awaitable);
    at.push_back(ms_since(t0));
}

net::awaitable<void> wait_until_stopped(wheel_type& wheel, error_code& result) {
    try {
        co_await wheel.async_wait(1h, net::use_awaitable);
    } catch (const idlewheel::system_error& e) {
        result = e.code();
    }
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(use_awaitable, wheel_fixture) {
    std::vector<std::int64_t> at;
    std::exception_ptr failure;
    bool done = false;
    net::co_spawn(io, sleep_twice(wheel, at, t0), [&](std::exception_ptr e) {
        failure = e;
        done = true;
    });
    advance_until(io, [&] { return done; }, 1s);
    BOOST_TEST(done);
    BOOST_TEST(!failure);
    BOOST_TEST(at == (std::vector<std::int64_t>{100, 350}), boost::test_tools::per_element());
    BOOST_TEST(wheel.pending() == 0U);
}

BOOST_FIXTURE_TEST_CASE(use_awaitable_error_is_thrown, wheel_fixture) {
    error_code result;
    bool done = false;
    net::co_spawn(io, wait_until_stopped(wheel, result), [&](std::exception_ptr) { done = true; });
    advance_and_poll(io, 10ms);
    BOOST_TEST(!done);
    BOOST_TEST(wheel.pending() == 1U);
    wheel.stop();
    poll(io);
    BOOST_TEST(done);
    BOOST_TEST(result == net::error::operation_aborted);
}

// deferred: nothing starts until the operation is launched, and the delay counts from then.
BOOST_FIXTURE_TEST_CASE(deferred, wheel_fixture) {
    auto op = wheel.async_wait(50ms, idlewheel::test::deferred);
    advance_and_poll(io, 30ms);
    BOOST_TEST(wheel.pending() == 0U);
    completion c;
    c.initiating = true;
    std::move(op)(completion_handler{&c, t0});
    c.initiating = false;
    BOOST_TEST(wheel.pending() == 1U);
    advance_and_poll(io, 49ms);
    BOOST_TEST(c.calls == 0);
    advance_and_poll(io, 1ms);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(c.at == 80);
    BOOST_TEST(!c.ec);
    BOOST_TEST(!c.called_inside_initiation);
}

BOOST_FIXTURE_TEST_CASE(use_future, wheel_fixture) {
    std::future<void> f = wheel.async_wait(20ms, net::use_future);
    advance_and_poll(io, 19ms);
    BOOST_TEST((f.wait_for(0s) == std::future_status::timeout));
    advance_and_poll(io, 1ms);
    BOOST_TEST((f.wait_for(0s) == std::future_status::ready));
    BOOST_CHECK_NO_THROW(f.get());

    // Cancelled: the future carries operation_aborted as a system_error.
    net::cancellation_signal signal;
    std::future<void> g = wheel.async_wait(1s, net::bind_cancellation_slot(signal.slot(), net::use_future));
    advance_and_poll(io, 10ms);
    signal.emit(net::cancellation_type::terminal);
    poll(io);
    BOOST_CHECK_EXCEPTION(g.get(), idlewheel::system_error,
                          [](const auto& e) { return e.code() == net::error::operation_aborted; });

    std::future<void> h = wheel.async_wait(1s, net::use_future);
    wheel.stop();
    poll(io);
    BOOST_CHECK_EXCEPTION(h.get(), idlewheel::system_error,
                          [](const auto& e) { return e.code() == net::error::operation_aborted; });
    BOOST_TEST(wheel.stats().expired == 1U);
}

BOOST_FIXTURE_TEST_CASE(parallel_group_race, wheel_fixture) {
    using namespace net::experimental;
    int calls = 0;
    std::array<std::size_t, 2> order{};
    error_code fast;
    error_code slow;
    std::int64_t at = -1;
    make_parallel_group(wheel.async_wait(10ms, idlewheel::test::deferred), wheel.async_wait(50ms, idlewheel::test::deferred))
        .async_wait(wait_for_one(), [&](std::array<std::size_t, 2> o, error_code e1, error_code e2) {
            ++calls;
            order = o;
            fast = e1;
            slow = e2;
            at = ms_since(t0);
        });
    BOOST_TEST(wheel.pending() == 2U);
    advance_and_poll(io, 100ms);
    BOOST_TEST(calls == 1);
    BOOST_TEST(order[0] == 0U);
    BOOST_TEST(!fast);
    BOOST_TEST(slow == net::error::operation_aborted);
    BOOST_TEST(at == 10);
    BOOST_TEST(wheel.pending() == 0U);
    // The loser was taken out of the wheel: nothing woke up for it.
    BOOST_TEST(wheel.stats().wakeups == 1U);
    BOOST_TEST(wheel.stats().cancelled == 1U);
}

namespace {

net::awaitable<void> race(wheel_type& wheel, std::size_t& winner, std::int64_t& at, manual_clock::time_point t0) {
    using namespace net::experimental::awaitable_operators;
    const auto result = co_await (wheel.async_wait(50ms, net::use_awaitable) || wheel.async_wait(20ms, net::use_awaitable));
    winner = result.index();
    at = ms_since(t0);
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(awaitable_operators_race, wheel_fixture) {
    std::size_t winner = 99;
    std::int64_t at = -1;
    bool done = false;
    std::exception_ptr failure;
    net::co_spawn(io, race(wheel, winner, at, t0), [&](std::exception_ptr e) {
        failure = e;
        done = true;
    });
    advance_and_poll(io, 100ms);
    BOOST_TEST(done);
    BOOST_TEST(!failure);
    BOOST_TEST(winner == 1U);
    BOOST_TEST(at == 20);
    BOOST_TEST(wheel.pending() == 0U);
    BOOST_TEST(wheel.stats().wakeups == 1U);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cancellation)

BOOST_AUTO_TEST_CASE(every_type_aborts_a_pending_wait) {
    for (const auto type : cancellation_types) {
        BOOST_TEST_CONTEXT(name(type)) {
            manual_clock::reset();
            net::io_context io;
            const auto t0 = manual_clock::now();
            wheel_type wheel(io);
            net::cancellation_signal signal;
            completion c;
            start_wait(wheel, 1s, c, t0, [&signal](auto h) { return net::bind_cancellation_slot(signal.slot(), h); });
            advance_and_poll(io, 100ms);
            BOOST_TEST(wheel.pending() == 1U);

            // Emitted from a handler on the wheel's context, where a dispatch would run inline.
            std::size_t pending_after_emit = 99;
            bool emitted = false;
            net::post(io, [&] {
                c.initiating = true;  // "inside" now means inside emit()
                signal.emit(type);
                c.initiating = false;
                pending_after_emit = wheel.pending();
                signal.emit(type);  // twice: nothing more to do
                emitted = true;
            });
            poll(io);
            BOOST_TEST(emitted);
            BOOST_TEST(pending_after_emit == 0U);
            BOOST_TEST(c.calls == 1);
            BOOST_TEST(c.ec == net::error::operation_aborted);
            BOOST_TEST(c.at == 100);
            BOOST_TEST(!c.called_inside_initiation);
            BOOST_TEST(io.stopped());  // it was the last: the Asio wait went too

            advance_and_poll(io, 2s, 10ms);
            signal.emit(type);  // after completion, from outside: harmless
            poll(io);
            BOOST_TEST(c.calls == 1);
            const auto s = wheel.stats();
            BOOST_TEST(s.cancelled == 1U);
            BOOST_TEST(s.expired == 0U);
            BOOST_TEST(s.wakeups == 0U);
        }
    }
}

BOOST_FIXTURE_TEST_CASE(none_is_not_a_cancellation, wheel_fixture) {
    net::cancellation_signal signal;
    completion c;
    start_wait(wheel, 50ms, c, t0, [&signal](auto h) { return net::bind_cancellation_slot(signal.slot(), h); });
    signal.emit(net::cancellation_type::none);
    BOOST_TEST(wheel.pending() == 1U);
    advance_and_poll(io, 50ms);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(!c.ec);
}

BOOST_FIXTURE_TEST_CASE(only_the_bound_wait_is_cancelled, wheel_fixture) {
    net::cancellation_signal signal;
    completion cancelled;
    completion other;
    start_wait(wheel, 50ms, cancelled, t0, [&signal](auto h) { return net::bind_cancellation_slot(signal.slot(), h); });
    start_wait(wheel, 80ms, other, t0);
    signal.emit(net::cancellation_type::terminal);
    BOOST_TEST(wheel.pending() == 1U);
    advance_and_poll(io, 100ms);
    BOOST_TEST(cancelled.calls == 1);
    BOOST_TEST(cancelled.ec == net::error::operation_aborted);
    BOOST_TEST(cancelled.at == 0);
    BOOST_TEST(other.calls == 1);
    BOOST_TEST(!other.ec);
    BOOST_TEST(other.at == 80);
}

BOOST_FIXTURE_TEST_CASE(emit_after_completion_and_slot_reuse, wheel_fixture) {
    net::cancellation_signal signal;
    auto bind = [&signal](auto h) { return net::bind_cancellation_slot(signal.slot(), h); };
    completion first;
    start_wait(wheel, 20ms, first, t0, bind);
    advance_and_poll(io, 20ms);
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(!first.ec);
    BOOST_TEST(!signal.slot().has_handler());  // the wait let go of the slot as it completed
    signal.emit(net::cancellation_type::terminal);
    signal.emit(net::cancellation_type::total);
    poll(io);
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(!first.ec);

    // The same slot serves the next operation.
    completion second;
    start_wait(wheel, 20ms, second, t0, bind);
    advance_and_poll(io, 10ms);
    signal.emit(net::cancellation_type::partial);
    poll(io);
    BOOST_TEST(second.calls == 1);
    BOOST_TEST(second.ec == net::error::operation_aborted);
    BOOST_TEST(second.at == 30);

    completion third;
    start_wait(wheel, 20ms, third, t0, bind);
    advance_and_poll(io, 20ms);
    BOOST_TEST(third.calls == 1);
    BOOST_TEST(!third.ec);
    BOOST_TEST(third.at == 50);
}

// Due, but waiting in a batch that max_run_per_wakeup cut short: it is still pending, and a
// cancellation then must win over the success it was about to get.
BOOST_FIXTURE_TEST_CASE(cancelled_while_due_in_a_bounded_batch, clock_reset) {
    net::io_context io;
    const auto t0 = manual_clock::now();
    wheel_type wheel(io, {.max_run_per_wakeup = 1});
    net::cancellation_signal signal;
    completion first;
    completion second;
    start_wait(wheel, 10ms, first, t0);
    start_wait(wheel, 10ms, second, t0, [&signal](auto h) { return net::bind_cancellation_slot(signal.slot(), h); });
    manual_clock::advance(10ms);
    io.poll_one();  // the wake-up: completes `first` (posted) and queues its continuation
    io.poll_one();  // first's handler
    BOOST_TEST(first.calls == 1);
    BOOST_TEST(second.calls == 0);
    BOOST_TEST(wheel.pending() == 1U);
    signal.emit(net::cancellation_type::terminal);
    BOOST_TEST(wheel.pending() == 0U);
    poll(io);
    BOOST_TEST(second.calls == 1);
    BOOST_TEST(second.ec == net::error::operation_aborted);
    BOOST_TEST(wheel.stats().expired == 1U);
    BOOST_TEST(wheel.stats().cancelled == 1U);
}

BOOST_FIXTURE_TEST_CASE(refused_wait_leaves_the_slot_empty, wheel_fixture) {
    wheel.stop();
    net::cancellation_signal signal;
    completion c;
    start_wait(wheel, 1s, c, t0, [&signal](auto h) { return net::bind_cancellation_slot(signal.slot(), h); });
    poll(io);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(c.ec == make_error_code(idlewheel::error::stopped));
    BOOST_TEST(!signal.slot().has_handler());
    signal.emit(net::cancellation_type::terminal);
    poll(io);
    BOOST_TEST(c.calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()
