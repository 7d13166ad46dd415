// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/wheel_timer.hpp>

// wheel_timer::async_wait and the handler's associations: its associated executor (a strand, a
// second io_context) and allocator (one allocation, freed before the upcall, on every path),
// and max_pending refusing a wait. A source file of the executable test_wheel_timer_async_wait,
// whose first file is test_wheel_timer_async_wait.cpp.

#include "support/manual_io.hpp"
#include "support/net.hpp"
#include "support/wait_completion.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::clock_reset;
using idlewheel::test::poll;
using idlewheel::test::wheel_fixture;
using idlewheel::error_code;
using idlewheel::test::wait_completion::completion;
using idlewheel::test::wait_completion::completion_handler;
using idlewheel::test::wait_completion::start_wait;

struct allocation_counts {
    int allocations = 0;
    int deallocations = 0;
};

template <class T>
struct counting_allocator {
    using value_type = T;
    allocation_counts* counts;

    explicit counting_allocator(allocation_counts* c) noexcept : counts(c) {}
    template <class U>
    counting_allocator(const counting_allocator<U>& other) noexcept : counts(other.counts) {}  // NOLINT: rebinding

    T* allocate(std::size_t n) {
        ++counts->allocations;
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        ++counts->deallocations;
        std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const counting_allocator<U>& other) const noexcept {
        return counts == other.counts;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(associated_executor)

BOOST_FIXTURE_TEST_CASE(runs_on_a_bound_strand, wheel_fixture) {
    auto strand = net::make_strand(io);
    int calls = 0;
    bool in_strand = false;
    wheel.async_wait(20ms, net::bind_executor(strand, [&](error_code ec) {
                         ++calls;
                         in_strand = !ec && strand.running_in_this_thread();
                     }));
    advance_and_poll(io, 20ms);
    BOOST_TEST(calls == 1);
    BOOST_TEST(in_strand);
}

BOOST_FIXTURE_TEST_CASE(runs_on_a_second_io_context, wheel_fixture) {
    net::io_context io2;
    completion c;
    bool on_io2 = false;
    bool on_io = true;
    wheel.async_wait(20ms, net::bind_executor(io2, [&](error_code ec) {
                         completion_handler{&c, t0}(ec);
                         on_io2 = io2.get_executor().running_in_this_thread();
                         on_io = io.get_executor().running_in_this_thread();
                     }));
    BOOST_TEST(io2.poll() == 0U);
    BOOST_TEST(!io2.stopped());  // the pending wait is outstanding work on io2
    advance_and_poll(io, 20ms);
    BOOST_TEST(c.calls == 0);  // handed to io2, not run on the wheel's context
    BOOST_TEST(io2.poll() == 1U);
    BOOST_TEST(c.calls == 1);
    BOOST_TEST(!c.ec);
    BOOST_TEST(c.at == 20);
    BOOST_TEST(on_io2);
    BOOST_TEST(!on_io);
    BOOST_TEST(io2.stopped());  // and the work went with the handler

    // Aborted waits go there too.
    completion aborted;
    io2.restart();
    wheel.async_wait(1s, net::bind_executor(io2, completion_handler{&aborted, t0}));
    wheel.stop();
    poll(io);
    BOOST_TEST(aborted.calls == 0);
    BOOST_TEST(io2.poll() == 1U);
    BOOST_TEST(aborted.calls == 1);
    BOOST_TEST(aborted.ec == net::error::operation_aborted);
}

// io2.run() on its own thread has nothing to do but wait for our handler: it must not return
// before the handler arrived (if it did, the handler would never run).
BOOST_FIXTURE_TEST_CASE(a_second_io_context_run_waits_for_the_handler, wheel_fixture) {
    net::io_context io2;
    std::promise<std::thread::id> ran_on;
    auto ran = ran_on.get_future();
    wheel.async_wait(20ms, net::bind_executor(io2, [&ran_on](error_code ec) {
                         if (!ec) ran_on.set_value(std::this_thread::get_id());
                     }));
    bool run_returned_early = false;
    std::thread runner([&io2, &ran, &run_returned_early] {
        io2.run();
        // Read on this thread, after run(): if run() returned before the handler came, the
        // handler has not set the promise yet.
        run_returned_early = ran.wait_for(0s) != std::future_status::ready;
    });
    const auto runner_id = runner.get_id();
    advance_and_poll(io, 20ms);
    // Only a broken library makes this wait at all; the bound keeps that from hanging the suite.
    if (ran.wait_for(10s) != std::future_status::ready) io2.stop();
    runner.join();
    BOOST_TEST(!run_returned_early);
    BOOST_REQUIRE((ran.wait_for(0s) == std::future_status::ready));
    BOOST_TEST((ran.get() == runner_id));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(associated_allocator)

BOOST_FIXTURE_TEST_CASE(one_allocation_freed_before_the_upcall, wheel_fixture) {
    allocation_counts counts;
    int calls = 0;
    int deallocations_seen = -1;
    wheel.async_wait(20ms, net::bind_allocator(counting_allocator<void>(&counts), [&](error_code ec) {
                         calls += ec ? 100 : 1;
                         deallocations_seen = counts.deallocations;
                     }));
    BOOST_TEST(counts.allocations == 1);
    BOOST_TEST(counts.deallocations == 0);
    advance_and_poll(io, 20ms);
    BOOST_TEST(calls == 1);
    BOOST_TEST(deallocations_seen == 1);
    BOOST_TEST(counts.allocations == 1);
    BOOST_TEST(counts.deallocations == 1);
}

BOOST_FIXTURE_TEST_CASE(cancelled_and_refused_paths_free_it_too, wheel_fixture) {
    allocation_counts counts;
    std::vector<int> seen;  // deallocations at each upcall
    auto handler = [&](error_code) { seen.push_back(counts.deallocations); };
    net::cancellation_signal signal;
    wheel.async_wait(1s, net::bind_cancellation_slot(
                             signal.slot(), net::bind_allocator(counting_allocator<void>(&counts), handler)));
    signal.emit(net::cancellation_type::terminal);
    poll(io);
    wheel.async_wait(1s, net::bind_allocator(counting_allocator<void>(&counts), handler));
    wheel.stop();
    poll(io);
    wheel.async_wait(1s, net::bind_allocator(counting_allocator<void>(&counts), handler));
    poll(io);
    BOOST_TEST(seen == (std::vector<int>{1, 2, 3}), boost::test_tools::per_element());
    BOOST_TEST(counts.allocations == 3);
    BOOST_TEST(counts.deallocations == 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(limits)

BOOST_FIXTURE_TEST_CASE(max_pending_refuses_a_wait, clock_reset) {
    net::io_context io;
    const auto t0 = manual_clock::now();
    wheel_type wheel(io, {.max_pending = 2});
    wheel.schedule(10ms, [] {});
    completion accepted;
    completion refused;
    start_wait(wheel, 20ms, accepted, t0);
    start_wait(wheel, 20ms, refused, t0);
    BOOST_TEST(wheel.pending() == 2U);
    poll(io);
    BOOST_TEST(refused.calls == 1);
    BOOST_TEST(refused.ec == make_error_code(idlewheel::error::too_many_pending));
    BOOST_TEST(wheel.stats().rejected == 1U);
    advance_and_poll(io, 20ms);
    BOOST_TEST(accepted.calls == 1);
    BOOST_TEST(!accepted.ec);
    BOOST_TEST(refused.calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()
