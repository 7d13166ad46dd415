// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/timeout.hpp>

// idlewheel::timeout, the handle wheel_timer::schedule returns: its states, its copies, and
// what dropping it does not do. Part of the executable test_wheel_timer (tests/README.md).

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <utility>

namespace {

using namespace std::chrono_literals;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::poll;
using idlewheel::test::wheel_fixture;

}  // namespace

BOOST_AUTO_TEST_SUITE(timeout_handle)

BOOST_FIXTURE_TEST_CASE(states, wheel_fixture) {
    idlewheel::timeout empty;
    BOOST_TEST(!empty);
    BOOST_TEST(!empty.pending());
    BOOST_TEST(!empty.expired());
    BOOST_TEST(!empty.cancelled());
    BOOST_TEST(!empty.cancel());

    int runs = 0;
    auto h = wheel.schedule(10ms, [&runs] { ++runs; });
    BOOST_TEST(static_cast<bool>(h));
    BOOST_TEST(h.pending());
    BOOST_TEST(!h.expired());
    BOOST_TEST(!h.cancelled());
    BOOST_TEST(!(h == empty));
    advance_and_poll(io, 10ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(!h.pending());
    BOOST_TEST(h.expired());
    BOOST_TEST(!h.cancelled());
    BOOST_TEST(!h.cancel());  // already ran
    BOOST_TEST(h.expired());

    auto k = wheel.schedule(10ms, [&runs] { ++runs; });
    BOOST_TEST(k.cancel());
    BOOST_TEST(!k.cancel());  // twice: only the first one did it
    BOOST_TEST(k.cancelled());
    BOOST_TEST(!k.pending());
    BOOST_TEST(!k.expired());
    advance_and_poll(io, 50ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(wheel.stats().cancelled == 1U);
}

BOOST_FIXTURE_TEST_CASE(copies_share_state, wheel_fixture) {
    int runs = 0;
    auto h = wheel.schedule(10ms, [&runs] { ++runs; });
    idlewheel::timeout copy = h;
    idlewheel::timeout assigned;
    assigned = copy;
    BOOST_TEST((copy == h));
    BOOST_TEST((assigned == h));
    BOOST_TEST(assigned.cancel());
    BOOST_TEST(h.cancelled());
    BOOST_TEST(copy.cancelled());
    BOOST_TEST(!h.cancel());

    auto g = wheel.schedule(10ms, [&runs] { ++runs; });
    idlewheel::timeout moved = std::move(g);
    BOOST_TEST(!g);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
    BOOST_TEST(moved.pending());
    {
        idlewheel::timeout scoped = moved;  // copies come and go; the timeout does not care
    }
    advance_and_poll(io, 10ms);
    BOOST_TEST(runs == 1);
    BOOST_TEST(moved.expired());
}

BOOST_FIXTURE_TEST_CASE(dropping_every_handle_does_not_cancel, wheel_fixture) {
    int runs = 0;
    { auto h = wheel.schedule(10ms, [&runs] { ++runs; }); }
    wheel.schedule(10ms, [&runs] { ++runs; });
    advance_and_poll(io, 10ms);
    BOOST_TEST(runs == 2);
}

BOOST_FIXTURE_TEST_CASE(captures_are_released_right_after_run_and_cancel, wheel_fixture) {
    auto sp = std::make_shared<int>(1);
    long count_in_next = -1;
    auto h = wheel.schedule(10ms, [sp] {});
    // Runs right after `h` in the same batch: by then h's callable must be gone.
    wheel.schedule(10ms, [&count_in_next, &sp] { count_in_next = sp.use_count(); });
    BOOST_TEST(sp.use_count() == 2);
    advance_and_poll(io, 10ms);
    BOOST_TEST(count_in_next == 1);
    BOOST_TEST(sp.use_count() == 1);
    BOOST_TEST(h.expired());  // the handle lives on without the callable

    auto k = wheel.schedule(1s, [sp] {});
    BOOST_TEST(sp.use_count() == 2);
    BOOST_TEST(k.cancel());
    BOOST_TEST(sp.use_count() == 1);  // at once, not at the deadline

    // Thrown out of the callback: released all the same.
    wheel.schedule(10ms, [sp] { throw std::runtime_error("boom"); });
    BOOST_TEST(sp.use_count() == 2);
    manual_clock::advance(10ms);
    BOOST_CHECK_THROW(poll(io), std::runtime_error);
    BOOST_TEST(sp.use_count() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
