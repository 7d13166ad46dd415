// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/error.hpp>

// idlewheel::error and its category, from the header's contract: an enum usable wherever an
// error_code goes (boost::system::error_code, or std::error_code with standalone Asio), its
// category named "idlewheel" with a message for every value (the two deprecated ones too),
// one category object per program, and the scheduling calls that throw a system_error
// carrying a code of it.

#include "support/manual_io.hpp"
#include "support/net.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE error
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <string>
#include <type_traits>

namespace {

using namespace std::chrono_literals;
using idlewheel::error;
using idlewheel::error_code;

// Every value the category knows, with the message the header gives it.
struct named_value {
    int value;
    const char* message;
};

constexpr int too_many_pending = static_cast<int>(error::too_many_pending);

// The two deprecated enumerators by value (naming them would warn): right after too_many_pending.
const named_value every_value[] = {
    {static_cast<int>(error::stopped), "the wheel timer was stopped"},
    {too_many_pending, "too many pending timeouts (max_pending reached)"},
    {too_many_pending + 1, "idle timeout"},
    {too_many_pending + 2, "peer did not answer a ping in time"},
    {static_cast<int>(error::handshake_timeout), "handshake timeout"},
    {static_cast<int>(error::operation_timeout), "operation timeout"},
    {static_cast<int>(error::close_timeout), "close timeout"},
};

}  // namespace

BOOST_AUTO_TEST_CASE(values_are_distinct_and_start_at_one) {
    // 0 is success in every error_code: no error may be 0.
    std::set<int> seen;
    for (const auto& v : every_value) {
        BOOST_TEST(v.value > 0);
        BOOST_TEST(seen.insert(v.value).second);
    }
    BOOST_TEST(static_cast<int>(error::stopped) == 1);
    // The deprecated values keep their places: handshake_timeout follows them.
    BOOST_TEST(static_cast<int>(error::handshake_timeout) == too_many_pending + 3);
}

BOOST_AUTO_TEST_CASE(the_category_is_named_idlewheel_and_has_a_message_for_every_value) {
    const auto& category = idlewheel::error_category();
    BOOST_TEST(std::string(category.name()) == "idlewheel");
    for (const auto& v : every_value) {
        BOOST_TEST_CONTEXT("value " << v.value) {
            BOOST_TEST(category.message(v.value) == v.message);
            BOOST_TEST(make_error_code(static_cast<error>(v.value)).message() == v.message);
        }
    }
    BOOST_TEST(category.message(0) == "unknown idlewheel error");
    BOOST_TEST(category.message(1000) == "unknown idlewheel error");
    BOOST_TEST(category.message(-1) == "unknown idlewheel error");
}

BOOST_AUTO_TEST_CASE(one_category_object_per_program) {
    BOOST_TEST(&idlewheel::error_category() == &idlewheel::error_category());
    BOOST_TEST((make_error_code(error::stopped).category() == idlewheel::error_category()));
}

BOOST_AUTO_TEST_CASE(an_error_converts_to_an_error_code_and_compares_with_one) {
    static_assert(std::is_convertible_v<error, error_code>, "is_error_code_enum is specialized");
    error_code ec = error::stopped;  // found by argument-dependent lookup, as the header shows
    BOOST_TEST(static_cast<bool>(ec));
    BOOST_TEST(ec.value() == static_cast<int>(error::stopped));
    BOOST_TEST((ec.category() == idlewheel::error_category()));
    BOOST_TEST((ec == error::stopped));
    BOOST_TEST((ec != error::too_many_pending));
    BOOST_TEST((make_error_code(error::handshake_timeout) == error::handshake_timeout));
    // Not Asio's operation_aborted, nor any other category's code of the same value.
    const error_code aborted = idlewheel::net::error::operation_aborted;
    BOOST_TEST((ec != aborted));
    BOOST_TEST((error_code(static_cast<int>(error::stopped), idlewheel::net::error::get_system_category()) != ec));
}

#if !defined(IDLEWHEEL_STANDALONE_ASIO)
// With Boost, categories compare by a fixed id: a copy of the category (as another shared
// object holds) still compares equal.
BOOST_AUTO_TEST_CASE(with_boost_a_second_category_object_compares_equal) {
    const idlewheel::detail::error_category other;
    BOOST_TEST(&other != &idlewheel::error_category());
    BOOST_TEST((other == idlewheel::error_category()));
    BOOST_TEST((error_code(static_cast<int>(error::stopped), other) == error::stopped));
}
#endif

BOOST_FIXTURE_TEST_CASE(a_scheduling_call_that_cannot_report_throws_system_error_with_its_code,
                        idlewheel::test::manual_fixture) {
    idlewheel::basic_wheel_timer<idlewheel::manual_clock> wheel(io, {.max_pending = 1});
    auto first = wheel.schedule(1s, [] {});
    try {
        (void)wheel.schedule(1s, [] {});
        BOOST_FAIL("schedule beyond max_pending must throw");
    } catch (const idlewheel::system_error& e) {
        BOOST_TEST((e.code() == error::too_many_pending));
    }
    (void)wheel.stop();
    try {
        (void)wheel.schedule(1s, [] {});
        BOOST_FAIL("schedule on a stopped wheel must throw");
    } catch (const idlewheel::system_error& e) {
        BOOST_TEST((e.code() == error::stopped));
    }
}
