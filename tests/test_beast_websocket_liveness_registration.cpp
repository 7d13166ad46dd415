// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/beast/websocket_liveness.hpp>

// websocket_liveness.hpp's registration (a part of test_beast_websocket_liveness, whose first
// file is test_beast_websocket_liveness.cpp): configs registered once per io_context or pool
// (use_websocket_liveness), found per shard from a stream's executor, and the errors of a
// missing registration or a stream off the shards.

#include "support/net.hpp"
#include "support/ws_echo_server.hpp"

#include <boost/test/unit_test.hpp>

#include "support/websocket_liveness_scene.hpp"

#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/per_shard.hpp>
#include <idlewheel/wheel_pool.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace {
using namespace idlewheel::test::ws_liveness;  // support/websocket_liveness_scene.hpp
}  // namespace

// ---- configs registered once per io_context or pool (use_websocket_liveness) ----------------

namespace {

// A session whose liveness object finds its config from its stream's executor: nothing is
// passed through its constructor but the executor it is built on.
struct registered_session : std::enable_shared_from_this<registered_session> {
    ws_stream ws;
    idlewheel::beast::websocket_liveness<registered_session> live;
    explicit registered_session(const net::any_io_executor& ex) : ws(ex), live(*this, ws) {}
};
using registered_config = idlewheel::beast::websocket_liveness_config<registered_session>;

const idlewheel::session_liveness_options quick_handshake{
    .handshake_timeout = 50ms, .idle_timeout = 60s, .ping_interval = 30s, .pong_timeout = 30s};

}  // namespace

// With a pool: each object uses the config of its own shard (each shard's stats count its own
// sessions' verdicts, and the verdict comes from that shard's wheel).
BOOST_AUTO_TEST_CASE(registered_pool_configs_are_found_per_shard) {
    net::io_context io;
    idlewheel::wheel_pool pool(io, idlewheel::wheel_pool_options{.shards = 2});
    std::array<idlewheel::liveness_stats, 2> stats;
    idlewheel::per_shard<registered_config> configs(
        pool, [&](idlewheel::wheel_pool::shard& s) { return registered_config(s.wheel(), quick_handshake, &stats[s.index()]); });
    idlewheel::beast::use_websocket_liveness(io, configs);
    std::vector<std::shared_ptr<registered_session>> sessions;
    for (int i = 0; i < 3; ++i) sessions.push_back(std::make_shared<registered_session>(pool[0].get_executor()));
    sessions.push_back(std::make_shared<registered_session>(pool[1].get_executor()));
    for (auto& s : sessions) net::dispatch(s->ws.get_executor(), [s] { s->live.start(); });
    BOOST_REQUIRE(run_until(io, [&] { return stats[0].handshake_timeouts + stats[1].handshake_timeouts == 4U; }));
    BOOST_TEST(stats[0].handshake_timeouts == 3U);
    BOOST_TEST(stats[1].handshake_timeouts == 1U);
    for (auto& s : sessions) BOOST_TEST((s->live.verdict() == idlewheel::liveness_event::handshake_timeout));
}

// With one wheel (one thread): the one config registered for the context.
BOOST_AUTO_TEST_CASE(a_registered_single_config_is_found) {
    net::io_context io;
    idlewheel::wheel_timer wheel(io);
    idlewheel::liveness_stats stats;
    registered_config config(wheel, quick_handshake, &stats);
    idlewheel::beast::use_websocket_liveness(io, config);
    auto s = std::make_shared<registered_session>(io.get_executor());
    s->live.start();
    BOOST_REQUIRE(run_until(io, [&] { return s->live.has_verdict(); }));
    BOOST_TEST(stats.handshake_timeouts == 1U);
}

// Set-up mistakes are loud, and name the fix: nothing registered for this session type, or a
// stream not built on a shard's strand of the registered pool.
BOOST_AUTO_TEST_CASE(a_missing_registration_or_a_stream_off_the_shards_throws_with_the_fix) {
    net::io_context io;
    const auto message_of = [](auto make) -> std::string {
        try {
            make();
        } catch (const std::logic_error& e) {
            return e.what();
        }
        return {};
    };
    const std::string none = message_of([&] { registered_session s(io.get_executor()); });
    BOOST_TEST(none.find("use_websocket_liveness") != std::string::npos, none);
    idlewheel::wheel_pool pool(io, idlewheel::wheel_pool_options{.shards = 2});
    idlewheel::per_shard<registered_config> configs(pool, quick_handshake);
    idlewheel::beast::use_websocket_liveness(io, configs);
    const std::string off = message_of([&] { registered_session s(net::make_strand(io)); });
    BOOST_TEST(off.find("pool.next().get_executor()") != std::string::npos, off);
    registered_session on(pool[1].get_executor());  // on a shard: found
    BOOST_TEST(!on.live.has_verdict());
}
