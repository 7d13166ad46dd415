// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/bind_member.hpp>

// idlewheel::bind_member on every handler shape, on a manual-clock wheel: timer_node
// (timer_callback), idle_watch (idle_handler), heartbeat (heartbeat_handler), repeating_timer
// (timer_callback and its repeat_adjust hook) and session_liveness_config (bound_handler), all
// of them idlewheel::callback (callback.hpp); and bind_member<&S::f>() with no object, the hook
// of member_liveness_config and stream_liveness_config, beside a captureless lambda. Each case
// checks that the bound member of the right object runs, with the arguments of its shape, at
// the time the component promises; the compile-time cases check which shapes a member can
// serve and that a binding is a pointer (a hook nothing) and nothing more.

#include "support/liveness_scene.hpp"

#include <idlewheel/callback.hpp>
#include <idlewheel/heartbeat.hpp>
#include <idlewheel/idle_watch.hpp>
#include <idlewheel/member_liveness.hpp>
#include <idlewheel/repeating_timer.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/stream_liveness.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE bind_member
#include <boost/test/unit_test.hpp>

#include "support/hooked_sessions.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::bind_member;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::wheel_type;
using idlewheel::test::liveness::hooked;
using idlewheel::test::liveness::hooked_config;
using idlewheel::test::liveness::line;
using idlewheel::test::liveness::line_config;

// One object with a member for every shape, recording what it was called with.
struct target {
    const scene* stage = nullptr;
    std::vector<std::int64_t> fired;                                    // timer_callback
    std::vector<std::pair<idlewheel::idle_kind, bool>> idles;           // idle_handler
    std::vector<std::int64_t> idle_at;                                  //
    std::vector<std::pair<idlewheel::heartbeat_event, std::int64_t>> beats;  // heartbeat_handler
    std::vector<std::chrono::nanoseconds> adjusted;                     // repeat_adjust
    std::vector<std::pair<idlewheel::liveness_event, std::int64_t>> verdicts;  // session handler
    const void* session_seen = nullptr;

    void on_timer() { fired.push_back(stage->now_ms()); }
    void on_idle(idlewheel::idle_kind kind, bool first) {
        idles.emplace_back(kind, first);
        idle_at.push_back(stage->now_ms());
    }
    void on_heartbeat(idlewheel::heartbeat_event e) { beats.emplace_back(e, stage->now_ms()); }
    std::chrono::nanoseconds twice(std::chrono::nanoseconds period) {  // not noexcept: the hook's call is
        adjusted.push_back(period);
        return 2 * period;
    }
    void on_liveness(idlewheel::basic_session_liveness<wheel_type>& s, idlewheel::liveness_event e) {
        session_seen = &s;
        verdicts.emplace_back(e, stage->now_ms());
    }
};

struct base_with_member {
    int calls = 0;
    void bump() { ++calls; }
};
struct derived_target : base_with_member {};

// ---- compile time ---------------------------------------------------------------------------

using timer_binding = idlewheel::member_binding<&target::on_timer, target>;
using idle_binding = idlewheel::member_binding<&target::on_idle, target>;
using beat_binding = idlewheel::member_binding<&target::on_heartbeat, target>;
using adjust_binding = idlewheel::member_binding<&target::twice, target>;
using session_binding = idlewheel::member_binding<&target::on_liveness, target>;
using session_handler = idlewheel::basic_session_liveness_config<wheel_type>::bound_handler;

// Each member serves its own shape, and no other.
static_assert(std::is_convertible_v<timer_binding, idlewheel::timer_callback>);
static_assert(!std::is_convertible_v<timer_binding, idlewheel::idle_handler>);
static_assert(!std::is_convertible_v<timer_binding, idlewheel::heartbeat_handler>);
static_assert(!std::is_convertible_v<timer_binding, idlewheel::repeat_adjust>);
static_assert(std::is_convertible_v<idle_binding, idlewheel::idle_handler>);
static_assert(!std::is_convertible_v<idle_binding, idlewheel::timer_callback>);
static_assert(!std::is_convertible_v<idle_binding, idlewheel::heartbeat_handler>);
static_assert(std::is_convertible_v<beat_binding, idlewheel::heartbeat_handler>);
static_assert(!std::is_convertible_v<beat_binding, idlewheel::idle_handler>);
static_assert(!std::is_convertible_v<beat_binding, idlewheel::timer_callback>);
static_assert(std::is_convertible_v<adjust_binding, idlewheel::repeat_adjust>);
static_assert(!std::is_convertible_v<adjust_binding, idlewheel::timer_callback>);
static_assert(std::is_convertible_v<session_binding, session_handler>);
static_assert(!std::is_convertible_v<session_binding, idlewheel::heartbeat_handler>);
static_assert(!std::is_convertible_v<timer_binding, session_handler>);
// Not to a plain function pointer, nor to anything that is not a {function, context} pair.
static_assert(!std::is_convertible_v<timer_binding, void (*)(void*)>);
static_assert(!std::is_convertible_v<timer_binding, int>);
// A const object cannot be a handler's (non-const) context.
struct const_callable {
    void f() const {}
};
static_assert(!std::is_convertible_v<idlewheel::member_binding<&const_callable::f, const const_callable>,
                                     idlewheel::timer_callback>);
static_assert(std::is_convertible_v<idlewheel::member_binding<&const_callable::f, const_callable>,
                                    idlewheel::timer_callback>);
// A binding is the object's pointer and nothing more; the handler is the same pair as before.
static_assert(sizeof(timer_binding) == sizeof(void*));
static_assert(sizeof(idlewheel::timer_callback) == 2 * sizeof(void*));
// It is a constant expression: no work at run time to make the handler.
target constant_target;
constexpr idlewheel::timer_callback constant_callback = bind_member<&target::on_timer>(&constant_target);
static_assert(constant_callback.context == &constant_target);

// The five handler shapes are one template, idlewheel::callback, of their signatures.
static_assert(std::is_same_v<idlewheel::timer_callback, idlewheel::callback<void()>>);
static_assert(std::is_same_v<idlewheel::idle_handler, idlewheel::callback<void(idlewheel::idle_kind, bool)>>);
static_assert(std::is_same_v<idlewheel::heartbeat_handler, idlewheel::callback<void(idlewheel::heartbeat_event)>>);
static_assert(std::is_same_v<idlewheel::repeat_adjust,
                             idlewheel::callback<std::chrono::nanoseconds(std::chrono::nanoseconds) noexcept>>);
static_assert(std::is_same_v<session_handler, idlewheel::callback<void(idlewheel::basic_session_liveness<wheel_type>&,
                                                                       idlewheel::liveness_event)>>);
// Still aggregates of {function, context}, as in 1.0: `{&f, context}` and `{}` initialize them.
static_assert(std::is_aggregate_v<idlewheel::timer_callback>);
static_assert(std::is_aggregate_v<idlewheel::repeat_adjust>);
constexpr idlewheel::timer_callback no_callback{};
static_assert(!no_callback && no_callback.context == nullptr);
// A bound callback is not null. Checked at run time: GCC 12 with -fsanitize=undefined does not
// fold a function's address compared with null in a constant expression (the ASan + UBSan build).
BOOST_AUTO_TEST_CASE(a_bound_callback_is_not_null) {
    BOOST_TEST(static_cast<bool>(constant_callback));
    BOOST_TEST(!no_callback);
}

// ---- bind_member<&S::f>(): a hook, the object given at each call ----------------------------

struct derived_hooked : base_with_member {};

using liveness_hook = idlewheel::member_hook<&hooked::on_liveness>;
static_assert(std::is_same_v<decltype(bind_member<&hooked::on_liveness>()), liveness_hook>);
static_assert(std::is_empty_v<liveness_hook>);  // nothing stored: the config calls the member directly
// It converts to the plain function the configs take as a hook (what a captureless lambda converts to) ...
static_assert(std::is_convertible_v<liveness_hook, hooked_config::hook_function>);
static_assert(std::is_convertible_v<liveness_hook, void (*)(hooked&, idlewheel::liveness_event)>);
// ... of a base class's member too, called on the derived object ...
static_assert(std::is_convertible_v<idlewheel::member_hook<&base_with_member::bump>, void (*)(derived_hooked&)>);
// ... and to nothing the member cannot serve, nor to a callback (which has no object to call).
static_assert(!std::is_convertible_v<liveness_hook, void (*)(hooked&)>);
static_assert(!std::is_convertible_v<liveness_hook, void (*)(target&, idlewheel::liveness_event)>);
static_assert(!std::is_convertible_v<idlewheel::member_hook<&target::on_timer>, void (*)(target&, idlewheel::liveness_event)>);
static_assert(!std::is_convertible_v<liveness_hook, idlewheel::timer_callback>);
static_assert(!std::is_convertible_v<liveness_hook, hooked_config::bound_handler>);

}  // namespace

// ---- run time, every shape ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(timer_node_fires_the_bound_member_of_its_object) {
    scene s;
    target a, b;
    a.stage = b.stage = &s;
    idlewheel::timer_node node{bind_member<&target::on_timer>(&a)};
    s.wheel.schedule(node, 50ms);
    s.step_to(100);
    BOOST_TEST(a.fired == (std::vector<std::int64_t>{50}), boost::test_tools::per_element());
    BOOST_TEST(b.fired.empty());
    node.set_callback(bind_member<&target::on_timer>(&b));  // rebinding: the other object now
    s.wheel.schedule(node, 30ms);
    s.step_to(200);
    BOOST_TEST(a.fired.size() == 1U);
    BOOST_TEST(b.fired == (std::vector<std::int64_t>{130}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_member_of_a_base_class_binds_to_the_derived_object) {
    scene s;
    derived_target d;
    idlewheel::timer_node node{bind_member<&derived_target::bump>(&d)};
    s.wheel.schedule(node, 20ms);
    s.step_to(50);
    BOOST_TEST(d.calls == 1);
}

BOOST_AUTO_TEST_CASE(idle_watch_reports_kind_and_first_to_the_bound_member) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_idle_watch<wheel_type> watch{s.wheel, bind_member<&target::on_idle>(&t), {.reader = 100ms}, &s.live};
    watch.start();
    s.step_to(99);
    BOOST_TEST(t.idles.empty());  // never early
    s.step_to(250);
    BOOST_TEST_REQUIRE(t.idles.size() == 2U);
    BOOST_TEST((t.idles[0].first == idlewheel::idle_kind::reader));
    BOOST_TEST(t.idles[0].second);   // first report of the quiet stretch
    BOOST_TEST(!t.idles[1].second);  // the same stretch, a period later
    BOOST_TEST(t.idle_at[0] >= 100);
    BOOST_TEST(t.idle_at[0] <= 120);  // at most two ticks late (idle_watch.hpp, Precision)
    BOOST_TEST(s.live.reader_idle == 2U);
}

BOOST_AUTO_TEST_CASE(heartbeat_tells_the_bound_member_send_ping_then_dead_peer) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_heartbeat<wheel_type> hb{
        s.wheel, bind_member<&target::on_heartbeat>(&t), {.ping_interval = 100ms, .pong_timeout = 50ms}, &s.live};
    hb.start();
    s.step_to(400);
    BOOST_TEST_REQUIRE(t.beats.size() == 2U);
    BOOST_TEST((t.beats[0].first == idlewheel::heartbeat_event::send_ping));
    BOOST_TEST((t.beats[1].first == idlewheel::heartbeat_event::dead_peer));
    BOOST_TEST(t.beats[0].second >= 100);
    BOOST_TEST(t.beats[1].second >= t.beats[0].second + 50);  // never before pong_timeout after the ping
    BOOST_TEST(s.live.pings_sent == 1U);
    BOOST_TEST(s.live.dead_peers == 1U);
}

BOOST_AUTO_TEST_CASE(repeating_timer_takes_a_bound_callback_and_a_bound_adjust_hook) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_repeating_timer<wheel_type> timer{s.wheel, bind_member<&target::on_timer>(&t), 50ms,
                                                       {.adjust = bind_member<&target::twice>(&t)}};
    timer.start();
    s.step_to(99);
    BOOST_TEST(t.fired.empty());  // the hook doubled the period: not at 50
    s.step_to(250);
    BOOST_TEST(t.fired == (std::vector<std::int64_t>{100, 200}), boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(!t.adjusted.empty());
    BOOST_TEST((t.adjusted.front() == std::chrono::nanoseconds(50ms)));  // called with the period
    timer.stop();
}

BOOST_AUTO_TEST_CASE(session_liveness_config_takes_a_bound_handler) {
    scene s;
    target t;
    t.stage = &s;
    const idlewheel::basic_session_liveness_config<wheel_type> config{
        s.wheel, {.idle_timeout = 100ms, .close_timeout = 50ms}, bind_member<&target::on_liveness>(&t), &s.live};
    idlewheel::basic_session_liveness<wheel_type> session{config};
    session.start();
    s.step_to(300);
    BOOST_TEST_REQUIRE(t.verdicts.size() == 2U);
    BOOST_TEST((t.verdicts[0].first == idlewheel::liveness_event::idle));
    BOOST_TEST((t.verdicts[1].first == idlewheel::liveness_event::close_timeout));
    BOOST_TEST(t.verdicts[0].second >= 100);
    BOOST_TEST(t.verdicts[1].second >= t.verdicts[0].second + 50);
    BOOST_TEST(t.session_seen == static_cast<const void*>(&session));
    // The close deadline is counted as such, not as an operation timeout.
    BOOST_TEST(s.live.close_timeouts == 1U);
    BOOST_TEST(s.live.operation_timeouts == 0U);
}

// ---- callback: a captureless lambda fits `function` -----------------------------------------

BOOST_AUTO_TEST_CASE(a_captureless_lambda_taking_the_context_is_a_callback) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::timer_node node{{[](void* context) { static_cast<target*>(context)->on_timer(); }, &t}};
    s.wheel.schedule(node, 40ms);
    const idlewheel::heartbeat_handler beat{
        [](void* context, idlewheel::heartbeat_event e) { static_cast<target*>(context)->on_heartbeat(e); }, &t};
    beat(idlewheel::heartbeat_event::send_ping);  // callback::operator(): function(context, args...)
    s.step_to(100);
    BOOST_TEST(t.fired == (std::vector<std::int64_t>{40}), boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(t.beats.size() == 1U);
    BOOST_TEST((t.beats[0].first == idlewheel::heartbeat_event::send_ping));
}

// ---- hooks: bind_member<&S::f>() and a lambda ------------------------------------------------

BOOST_AUTO_TEST_CASE(member_liveness_config_calls_the_hook_bind_member_names_on_each_session) {
    scene s;
    const hooked_config config(s.wheel, {.handshake_timeout = 50ms}, bind_member<&hooked::on_liveness>(), &s.live);
    idlewheel::test::liveness::expect_each_session_hooked(s, config);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
}

BOOST_AUTO_TEST_CASE(member_liveness_config_takes_a_captureless_lambda_as_the_hook) {
    scene s;
    const hooked_config config(
        s.wheel, {.idle_timeout = 80ms},
        [](hooked& h, idlewheel::liveness_event e) { h.events.emplace_back(e, -h.stage->now_ms()); }, &s.live);
    hooked h(config, s);
    h.live.start();
    s.step_to(79);
    BOOST_TEST(h.events.empty());
    s.step_to(200);
    BOOST_TEST_REQUIRE(h.events.size() == 1U);
    BOOST_TEST((h.events[0].first == idlewheel::liveness_event::idle));
    BOOST_TEST(h.events[0].second <= -80);  // the lambda ran (it negates the time), not on_liveness
}

BOOST_AUTO_TEST_CASE(stream_liveness_config_calls_the_bound_hook_after_closing_the_socket) {
    scene s;
    const line_config config(s.wheel, &line::socket, {.handshake_timeout = 30ms}, bind_member<&line::on_liveness>(),
                             &s.live);
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, config);
    BOOST_TEST(s.live.handshake_timeouts == 1U);  // the stats, after the hook (the one order)
    // A lambda as the hook, then the stats; the stats alone (no hook); the hook alone.
    const line_config by_lambda(
        s.wheel, &line::socket, {.handshake_timeout = 30ms},
        [](line& l, idlewheel::liveness_event e) { l.on_liveness(e); }, &s.live);
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, by_lambda);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
    const line_config stats_only(s.wheel, &line::socket, {.handshake_timeout = 30ms}, &s.live);
    {
        line l(s.io, stats_only);
        l.live.start_handshake();
        s.step_to(s.now_ms() + 100);
        BOOST_TEST(l.events.empty());  // no hook
        BOOST_TEST(!l.socket.is_open());
    }
    BOOST_TEST(s.live.handshake_timeouts == 3U);
    const line_config hook_only(s.wheel, &line::socket, {.handshake_timeout = 30ms}, bind_member<&line::on_liveness>());
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, hook_only);
    BOOST_TEST(s.live.handshake_timeouts == 3U);
    // With a ping_interval a hook is required: bind_member's, or a lambda's, is one.
    BOOST_CHECK_NO_THROW(line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s},
                                     bind_member<&line::on_liveness>()));
    BOOST_CHECK_NO_THROW(line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s},
                                     [](line&, idlewheel::liveness_event) {}));
    BOOST_CHECK_THROW(line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s}, nullptr, nullptr),
                      std::invalid_argument);
}
