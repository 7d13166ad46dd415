// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/idlewheel.hpp>

// The names 1.0 promised and 1.x deprecates still compile and still do what they did: the four
// member binders (call_member, idle_member, heartbeat_member, adjust_member, now forwarders to
// bind_member), heartbeat_event::peer_dead (an alias of dead_peer), error::idle_timeout and
// error::dead_peer (reported by nothing, kept with their values and messages), and a
// liveness_stats aggregate-initialized as in 1.0 (close_timeouts was added last), the
// member-pointer hooks of member_liveness_config, stream_liveness_config and
// beast::websocket_liveness_config (`&Session::on_liveness`, `hook_type`: now
// bind_member<&Session::on_liveness>()), the stream and WebSocket configs' arguments in 1.x's
// order (the stats before the hook: now the hook before the stats, as member_liveness_config),
// and the handler of session_liveness_config as a function and a context apart (now one
// bound_handler; its type, handler_type, now bound_handler::function_type). Built with
// -Wno-deprecated-declarations (tests/CMakeLists.txt): everywhere else the names warn.

#include "support/liveness_scene.hpp"

#if !defined(IDLEWHEEL_STANDALONE_ASIO)
#include <idlewheel/beast/websocket_liveness.hpp>

#include <boost/asio/io_context.hpp>
#endif

#define BOOST_TEST_MODULE deprecated_names
#include <boost/test/unit_test.hpp>

#include "support/hooked_sessions.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::wheel_type;
using idlewheel::test::liveness::hooked;
using idlewheel::test::liveness::hooked_config;
using idlewheel::test::liveness::line;
using idlewheel::test::liveness::line_config;

struct target {
    const scene* stage = nullptr;
    std::vector<std::int64_t> fired;
    std::vector<bool> idle_first;
    std::vector<idlewheel::heartbeat_event> beats;
    int adjusted = 0;

    void on_timer() { fired.push_back(stage->now_ms()); }
    void on_idle(idlewheel::idle_kind, bool first) { idle_first.push_back(first); }
    void on_heartbeat(idlewheel::heartbeat_event e) { beats.push_back(e); }
    std::chrono::nanoseconds same(std::chrono::nanoseconds period) noexcept {
        ++adjusted;
        return period;
    }
};

// The old binders still return their own types, usable where 1.0 code used them.
static_assert(std::is_same_v<decltype(idlewheel::call_member<&target::on_timer>(static_cast<target*>(nullptr))),
                             idlewheel::timer_callback>);
static_assert(std::is_same_v<decltype(idlewheel::idle_member<&target::on_idle>(static_cast<target*>(nullptr))),
                             idlewheel::idle_handler>);
static_assert(
    std::is_same_v<decltype(idlewheel::heartbeat_member<&target::on_heartbeat>(static_cast<target*>(nullptr))),
                   idlewheel::heartbeat_handler>);
static_assert(std::is_same_v<decltype(idlewheel::adjust_member<&target::same>(static_cast<target*>(nullptr))),
                             idlewheel::repeat_adjust>);

// The old enumerator is the new one.
static_assert(idlewheel::heartbeat_event::peer_dead == idlewheel::heartbeat_event::dead_peer);

// The hook of 1.0 was a member pointer, `&hooked::on_liveness`, of the type hook_type.
static_assert(std::is_same_v<hooked_config::hook_type, void (hooked::*)(idlewheel::liveness_event)>);

// handler_type is still the type of 1.0's handler function: bound_handler's function_type.
static_assert(
    std::is_same_v<idlewheel::basic_session_liveness_config<wheel_type>::handler_type,
                   void (*)(void*, idlewheel::basic_session_liveness<wheel_type>&, idlewheel::liveness_event)>);
static_assert(std::is_same_v<idlewheel::session_liveness_config::handler_type,
                             idlewheel::session_liveness_config::bound_handler::function_type>);

// 1.0's session_liveness_config handler: a function taking the context first.
void record_event(void* context, idlewheel::basic_session_liveness<wheel_type>&, idlewheel::liveness_event e) {
    static_cast<std::vector<idlewheel::liveness_event>*>(context)->push_back(e);
}

// A transport layer's config as 1.0 wrote it: the handler set after construction.
struct late_config : idlewheel::basic_session_liveness_config<wheel_type> {
    late_config(wheel_type& w, const idlewheel::session_liveness_options& o)
        : basic_session_liveness_config(w, o, nullptr, nullptr, nullptr) {}
    using basic_session_liveness_config::set_handler;
};

}  // namespace

BOOST_AUTO_TEST_CASE(call_member_still_binds_and_fires) {
    scene s;
    target t;
    t.stage = &s;
    const idlewheel::timer_callback cb = idlewheel::call_member<&target::on_timer>(&t);
    BOOST_TEST(cb.context == static_cast<void*>(&t));
    idlewheel::timer_node node{cb};
    s.wheel.schedule(node, 40ms);
    s.step_to(100);
    BOOST_TEST(t.fired == (std::vector<std::int64_t>{40}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(idle_member_still_binds_and_reports) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_idle_watch<wheel_type> watch{s.wheel, idlewheel::idle_member<&target::on_idle>(&t),
                                                  {.reader = 50ms}};
    watch.start();
    s.step_to(49);
    BOOST_TEST(t.idle_first.empty());
    s.step_to(120);
    BOOST_TEST_REQUIRE(!t.idle_first.empty());
    BOOST_TEST(t.idle_first.front());
}

BOOST_AUTO_TEST_CASE(heartbeat_member_and_peer_dead_still_work) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_heartbeat<wheel_type> hb{s.wheel, idlewheel::heartbeat_member<&target::on_heartbeat>(&t),
                                              {.ping_interval = 50ms, .pong_timeout = 20ms}};
    hb.start();
    s.step_to(300);
    BOOST_TEST_REQUIRE(t.beats.size() == 2U);
    BOOST_TEST((t.beats[0] == idlewheel::heartbeat_event::send_ping));
    // 1.0 code compares with the old word: it still matches what the heartbeat reports.
    BOOST_TEST((t.beats[1] == idlewheel::heartbeat_event::peer_dead));
    switch (t.beats[1]) {  // and a switch written with the old word still takes its case
        case idlewheel::heartbeat_event::send_ping: BOOST_FAIL("send_ping"); break;
        case idlewheel::heartbeat_event::peer_dead: break;
    }
}

BOOST_AUTO_TEST_CASE(adjust_member_still_binds_the_hook) {
    scene s;
    target t;
    t.stage = &s;
    idlewheel::basic_repeating_timer<wheel_type> timer{s.wheel, idlewheel::call_member<&target::on_timer>(&t), 30ms,
                                                       {.adjust = idlewheel::adjust_member<&target::same>(&t)}};
    timer.start();
    s.step_to(95);
    BOOST_TEST(t.adjusted >= 1);
    BOOST_TEST(t.fired == (std::vector<std::int64_t>{30, 60, 90}), boost::test_tools::per_element());
    timer.stop();
}

BOOST_AUTO_TEST_CASE(deprecated_error_codes_keep_their_values_and_messages) {
    const idlewheel::error_code idle = idlewheel::error::idle_timeout;
    const idlewheel::error_code dead = idlewheel::error::dead_peer;
    BOOST_TEST(idle.value() == 3);  // 1.0's values: stopped = 1, too_many_pending, idle_timeout, dead_peer
    BOOST_TEST(dead.value() == 4);
    BOOST_TEST(idle.message() == std::string("idle timeout"));
    BOOST_TEST(dead.message() == std::string("peer did not answer a ping in time"));
    BOOST_TEST(std::string(idle.category().name()) == "idlewheel");
    const idlewheel::error_code handshake = idlewheel::error::handshake_timeout;
    BOOST_TEST(handshake.value() == 5);
    BOOST_TEST(handshake.message() == std::string("handshake timeout"));
}

BOOST_AUTO_TEST_CASE(liveness_stats_initialized_as_in_1_0_keeps_its_meaning) {
    const idlewheel::liveness_stats old{1, 2, 3, 4, 5, 6, 7};  // 1.0's seven counters, in order
    BOOST_TEST(old.operation_timeouts == 7U);
    BOOST_TEST(old.close_timeouts == 0U);
}

BOOST_AUTO_TEST_CASE(member_liveness_config_still_takes_a_member_pointer_hook) {
    scene s;
    const hooked_config config(s.wheel, {.handshake_timeout = 50ms}, &hooked::on_liveness, &s.live);
    idlewheel::test::liveness::expect_each_session_hooked(s, config);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
    const hooked_config::hook_type old_hook = &hooked::on_liveness;  // 1.0's name of the type
    const hooked_config same(s.wheel, {.handshake_timeout = 50ms}, old_hook);
    idlewheel::test::liveness::expect_each_session_hooked(s, same);
}

BOOST_AUTO_TEST_CASE(stream_liveness_config_still_takes_a_member_pointer_hook) {
    scene s;
    const line_config config(s.wheel, &line::socket, {.handshake_timeout = 30ms}, &s.live, &line::on_liveness);
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, config);
    // The member pointer counts as the hook a ping_interval needs.
    BOOST_CHECK_NO_THROW(
        line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s}, nullptr, &line::on_liveness));
    const line_config::hook_type no_hook = nullptr;
    BOOST_CHECK_THROW(line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s}, nullptr, no_hook),
                      std::invalid_argument);
}

namespace {
void record_line(line& l, idlewheel::liveness_event e) { l.on_liveness(e); }
}  // namespace

BOOST_AUTO_TEST_CASE(stream_liveness_config_still_takes_the_stats_before_the_hook) {
    // 1.x's order, (wheel, socket, options, stats, hook): each hook form, the stats counted.
    scene s;
    const line_config by_function(s.wheel, &line::socket, {.handshake_timeout = 30ms}, &s.live, &record_line);
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, by_function);
    BOOST_TEST(s.live.handshake_timeouts == 1U);
    const line_config by_lambda(s.wheel, &line::socket, {.handshake_timeout = 30ms}, &s.live,
                                [](line& l, idlewheel::liveness_event e) { l.on_liveness(e); });
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, by_lambda);
    BOOST_TEST(s.live.handshake_timeouts == 2U);
    const line_config by_member(s.wheel, &line::socket, {.handshake_timeout = 30ms}, &s.live,
                                idlewheel::bind_member<&line::on_liveness>());
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, by_member);
    BOOST_TEST(s.live.handshake_timeouts == 3U);
    // No stats, a hook: the null first, as 1.x wrote it.
    const line_config no_stats(s.wheel, &line::socket, {.handshake_timeout = 30ms}, nullptr, &record_line);
    idlewheel::test::liveness::expect_socket_closed_then_hooked(s, no_stats);
    BOOST_TEST(s.live.handshake_timeouts == 3U);
    // The hook given so counts as the hook a ping_interval needs; a null hook does not.
    BOOST_CHECK_NO_THROW(
        line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s}, &s.live, &record_line));
    BOOST_CHECK_THROW(line_config(s.wheel, &line::socket, {.ping_interval = 1s, .pong_timeout = 1s}, &s.live, nullptr),
                      std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(session_liveness_config_still_takes_a_function_and_a_context) {
    scene s;
    std::vector<idlewheel::liveness_event> seen;
    const idlewheel::basic_session_liveness_config<wheel_type> config(s.wheel, {.handshake_timeout = 30ms},
                                                                       &record_event, &seen, &s.live);
    idlewheel::basic_session_liveness<wheel_type> session(config);
    session.start_handshake();
    s.step_to(100);
    BOOST_TEST_REQUIRE(seen.size() == 1U);
    BOOST_TEST((seen[0] == idlewheel::liveness_event::handshake_timeout));
    BOOST_TEST(s.live.handshake_timeouts == 1U);

    // set_handler(function, context), 1.0's, after a construction without a handler.
    std::vector<idlewheel::liveness_event> later;
    late_config late(s.wheel, {.idle_timeout = 40ms});
    late.set_handler(&record_event, &later);
    idlewheel::basic_session_liveness<wheel_type> other(late);
    other.start();
    s.step_to(200);
    BOOST_TEST_REQUIRE(later.size() == 1U);
    BOOST_TEST((later[0] == idlewheel::liveness_event::idle));
}

#if !defined(IDLEWHEEL_STANDALONE_ASIO)
namespace {
struct ws_session : std::enable_shared_from_this<ws_session> {
    using stream_type = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>;
    ws_session(boost::asio::io_context& io, const idlewheel::beast::websocket_liveness_config<ws_session>& c)
        : ws(io), live(c, *this) {}
    void on_liveness(idlewheel::liveness_event e) {
        events.push_back(e);
        socket_open_in_hook = ws.next_layer().is_open();
    }
    stream_type ws;
    idlewheel::beast::websocket_liveness<ws_session> live;
    std::vector<idlewheel::liveness_event> events;
    bool socket_open_in_hook = true;
};
}  // namespace

BOOST_AUTO_TEST_CASE(websocket_liveness_config_still_takes_a_member_pointer_hook) {
    // websocket_liveness_config is on a steady_clock wheel: a short handshake deadline on the
    // real clock, the io_context run until it passed (however slowly: nothing else is timed).
    boost::asio::io_context io;
    idlewheel::wheel_timer wheel(io);
    idlewheel::liveness_stats stats;
    const idlewheel::beast::websocket_liveness_config<ws_session> config(wheel, &ws_session::ws,
                                                                         {.handshake_timeout = 20ms}, &stats,
                                                                         &ws_session::on_liveness);
    const idlewheel::beast::websocket_liveness_config<ws_session> unnamed_stream(wheel, {}, &stats,
                                                                                 &ws_session::on_liveness);
    // 1.x's order, the stats before the hook, with the other hook forms too.
    const idlewheel::beast::websocket_liveness_config<ws_session> by_member(
        wheel, &ws_session::ws, {.handshake_timeout = 20ms}, &stats,
        idlewheel::bind_member<&ws_session::on_liveness>());
    const idlewheel::beast::websocket_liveness_config<ws_session> by_lambda(
        wheel, &ws_session::ws, {.handshake_timeout = 20ms}, &stats,
        [](ws_session& s, idlewheel::liveness_event e) { s.on_liveness(e); });
    const idlewheel::beast::websocket_liveness_config<ws_session> unnamed_by_member(
        wheel, {}, &stats, idlewheel::bind_member<&ws_session::on_liveness>());
    const idlewheel::beast::websocket_liveness_config<ws_session> unnamed_by_lambda(
        wheel, {}, nullptr, [](ws_session& s, idlewheel::liveness_event e) { s.on_liveness(e); });
    std::uint64_t expected_timeouts = 0;
    for (const auto* c : {&config, &by_member, &by_lambda}) {
        auto session = std::make_shared<ws_session>(io, *c);
        session->ws.next_layer().open(boost::asio::ip::tcp::v4());
        session->live.start();
        io.restart();  // the previous session's run may have run out of work
        for (int i = 0; i < 1000 && session->events.empty(); ++i) io.run_one_for(std::chrono::milliseconds(10));
        BOOST_TEST_REQUIRE(session->events.size() == 1U);
        BOOST_TEST((session->events[0] == idlewheel::liveness_event::handshake_timeout));
        BOOST_TEST(!session->socket_open_in_hook);  // dropped first, the hook last
        BOOST_TEST(stats.handshake_timeouts == ++expected_timeouts);
    }
    (void)unnamed_stream;
    (void)unnamed_by_member;
    (void)unnamed_by_lambda;
}
#endif
