// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/callback.hpp>

// idlewheel::callback from its header's contract, a sentence at a time: a function and the
// context it is called with, `function(context, args...)`; the handler shape of timer_callback,
// idle_handler, heartbeat_handler, repeat_adjust and bound_handler; made by bind_member or as
// the aggregate `{&function, context}` (a captureless lambda taking the context first fits);
// `{}` is no handler; two pointers, no allocation; `R(A...) noexcept` for a function that must
// not throw. What it does not promise is checked too: it has no comparison, and a call with a
// null function is the caller's error (not tested: it is undefined).

#include "support/liveness_scene.hpp"

#include <idlewheel/bind_member.hpp>
#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/timer_node.hpp>

#define BOOST_TEST_MODULE callback
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::callback;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::wheel_type;

// "timer_callback, idle_handler, heartbeat_handler, repeat_adjust and
// basic_session_liveness_config::bound_handler are callbacks of their signatures."
static_assert(std::is_same_v<idlewheel::timer_callback, callback<void()>>);
static_assert(std::is_same_v<idlewheel::idle_handler, callback<void(idlewheel::idle_kind, bool)>>);
static_assert(std::is_same_v<idlewheel::heartbeat_handler, callback<void(idlewheel::heartbeat_event)>>);
static_assert(std::is_same_v<idlewheel::repeat_adjust, callback<std::chrono::nanoseconds(std::chrono::nanoseconds) noexcept>>);
static_assert(std::is_same_v<idlewheel::basic_session_liveness_config<wheel_type>::bound_handler,
                             callback<void(idlewheel::basic_session_liveness<wheel_type>&, idlewheel::liveness_event)>>);

// "a plain function and the context it is called with": function_type takes `void* context`
// first, then the arguments of the signature; a noexcept signature makes a noexcept function.
static_assert(std::is_same_v<callback<int(long, char)>::function_type, int (*)(void*, long, char)>);
static_assert(std::is_same_v<callback<int(long, char) noexcept>::function_type, int (*)(void*, long, char) noexcept>);
static_assert(std::is_same_v<decltype(callback<void()>::context), void*>);

// "Two pointers, no allocation; a call is one indirect call. An aggregate": copying is a copy
// of two pointers, nothing owned, nothing freed.
static_assert(sizeof(callback<void()>) == 2 * sizeof(void*));
static_assert(sizeof(callback<void(int) noexcept>) == 2 * sizeof(void*));
static_assert(std::is_aggregate_v<callback<void(int)>>);
static_assert(std::is_aggregate_v<callback<void(int) noexcept>>);
static_assert(std::is_trivially_copyable_v<callback<void(int)>>);
static_assert(std::is_trivially_copyable_v<callback<void(int) noexcept>>);
static_assert(std::is_trivially_destructible_v<callback<void(int)>>);

// "R(A...) noexcept for a function that must not throw": the call is noexcept there, and a
// function that may throw does not fit.
static_assert(noexcept(std::declval<const callback<void() noexcept>&>()()));
static_assert(!noexcept(std::declval<const callback<void()>&>()()));
using may_throw = void (*)(void*);
static_assert(std::is_convertible_v<may_throw, callback<void()>::function_type>);
static_assert(!std::is_convertible_v<may_throw, callback<void() noexcept>::function_type>);

// "True if function is not null": explicit (a callback is not a bool by accident), constexpr.
static_assert(!std::is_convertible_v<callback<void()>, bool>);
static_assert(std::is_constructible_v<bool, callback<void()>>);
static_assert(!callback<void()>{});
static_assert(!callback<void() noexcept>{});
void nothing(void*) noexcept {}
static_assert(callback<void() noexcept>{&nothing, nullptr});

// No comparison is part of the contract: two callbacks are compared by their members.
template <class T, class = void>
struct equality_comparable : std::false_type {};
template <class T>
struct equality_comparable<T, std::void_t<decltype(std::declval<const T&>() == std::declval<const T&>())>>
    : std::true_type {};
static_assert(!equality_comparable<callback<void()>>::value);

// Records what it was called with.
struct recorder {
    std::vector<std::string> calls;
    int hits = 0;

    void on_timer() { calls.emplace_back("timer"); }
    int add(int a, int b) {
        calls.push_back("add " + std::to_string(a) + " " + std::to_string(b));
        return a + b;
    }
};

int add_through(void* context, int a, int b) { return static_cast<recorder*>(context)->add(a, b); }

}  // namespace

BOOST_AUTO_TEST_CASE(a_call_passes_the_context_first_then_the_arguments_and_returns_the_result) {
    recorder r;
    const callback<int(int, int)> cb{&add_through, &r};
    BOOST_TEST(cb.function == &add_through);
    BOOST_TEST(cb.context == static_cast<void*>(&r));
    BOOST_TEST(cb(2, 40) == 42);
    BOOST_TEST(cb(7, -3) == 4);
    BOOST_TEST(r.calls == (std::vector<std::string>{"add 2 40", "add 7 -3"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(empty_braces_are_no_handler) {
    const callback<void(int)> none{};
    BOOST_TEST(none.function == nullptr);
    BOOST_TEST(none.context == nullptr);
    BOOST_TEST(!none);
    const callback<void(int) noexcept> none_noexcept{};
    BOOST_TEST(!none_noexcept);
}

BOOST_AUTO_TEST_CASE(operator_bool_looks_at_the_function_only) {
    recorder r;
    const callback<void()> context_only{nullptr, &r};  // a context without a function: no handler
    BOOST_TEST(!context_only);
    const callback<void()> function_only{[](void* c) { BOOST_TEST(c == nullptr); }, nullptr};
    BOOST_TEST(static_cast<bool>(function_only));  // a null context is a context like any other
    function_only();
}

BOOST_AUTO_TEST_CASE(a_captureless_lambda_taking_the_context_first_fits) {
    recorder r;
    const callback<void()> cb{[](void* c) { static_cast<recorder*>(c)->on_timer(); }, &r};
    cb();
    cb();
    BOOST_TEST(r.calls.size() == 2U);
    const callback<int(int) noexcept> doubled{[](void*, int x) noexcept { return 2 * x; }, nullptr};
    BOOST_TEST(doubled(21) == 42);
}

BOOST_AUTO_TEST_CASE(bind_member_makes_one) {
    recorder r;
    const callback<int(int, int)> cb = idlewheel::bind_member<&recorder::add>(&r);
    BOOST_TEST(cb.context == static_cast<void*>(&r));
    BOOST_TEST(cb(1, 2) == 3);
    BOOST_TEST(r.calls == (std::vector<std::string>{"add 1 2"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_copy_calls_the_same_function_with_the_same_context) {
    recorder a;
    recorder b;
    callback<int(int, int)> cb{&add_through, &a};
    const callback<int(int, int)> copy = cb;  // NOLINT(performance-unnecessary-copy-initialization): the point
    cb.context = &b;                          // the copy is its own: changing the original leaves it
    BOOST_TEST(copy(1, 1) == 2);
    BOOST_TEST(cb(2, 2) == 4);
    BOOST_TEST(a.calls == (std::vector<std::string>{"add 1 1"}), boost::test_tools::per_element());
    BOOST_TEST(b.calls == (std::vector<std::string>{"add 2 2"}), boost::test_tools::per_element());
    callback<int(int, int)> assigned{};
    assigned = copy;
    BOOST_TEST(assigned(3, 3) == 6);
    BOOST_TEST(a.calls.size() == 2U);
}

BOOST_AUTO_TEST_CASE(arguments_keep_their_kind_references_and_move_only_values) {
    // A reference parameter reaches the function as that reference, not a copy.
    int counter = 0;
    const callback<void(int&)> bump{[](void*, int& n) { ++n; }, nullptr};
    bump(counter);
    bump(counter);
    BOOST_TEST(counter == 2);
    // A move-only value is moved through (std::forward in the call).
    const callback<int(std::unique_ptr<int>)> take{[](void*, std::unique_ptr<int> p) { return *p; }, nullptr};
    BOOST_TEST(take(std::make_unique<int>(7)) == 7);
}

BOOST_AUTO_TEST_CASE(an_exception_from_the_function_leaves_through_the_call) {
    // R(A...): the function may throw, and the call lets it out unchanged (as an Asio handler's
    // exception leaves io_context::run()); the callback is unchanged and can be called again.
    struct boom : std::runtime_error {
        boom() : std::runtime_error("boom") {}
    };
    int calls = 0;
    const callback<void(bool)> cb{[](void* c, bool fail) {
                                      ++*static_cast<int*>(c);
                                      if (fail) throw boom();
                                  },
                                  &calls};
    BOOST_CHECK_THROW(cb(true), boom);
    BOOST_CHECK_NO_THROW(cb(false));
    BOOST_TEST(calls == 2);
}

BOOST_AUTO_TEST_CASE(the_headers_example_arms_a_timer_node) {
    // `idlewheel::timer_node node{{[](void* c) { static_cast<session*>(c)->on_timer(); }, &s}};`
    scene s;
    recorder r;
    idlewheel::timer_node node{{[](void* c) { static_cast<recorder*>(c)->on_timer(); }, &r}};
    s.wheel.schedule(node, 30ms);
    s.step_to(29);
    BOOST_TEST(r.calls.empty());
    s.step_to(60);
    BOOST_TEST(r.calls == (std::vector<std::string>{"timer"}), boost::test_tools::per_element());
}
