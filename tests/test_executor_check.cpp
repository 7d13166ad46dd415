// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/detail/executor_check.hpp>

// "Misuse is loud": every threading mistake docs/threading.md names, made for
// real in a child process, must end it with SIGABRT and a message that says what to do, when
// IDLEWHEEL_CHECK_EXECUTOR is on (the default without NDEBUG; this file is also built with
// NDEBUG alone, where nothing is checked, and with NDEBUG and IDLEWHEEL_CHECK_EXECUTOR=1, the
// release opt-in). And every legitimate pattern must never trip it: setting up before run(),
// tearing down after, an io_context per thread, sessions on their shard's strand.
//
// In a build without the check, the cases that would race for real (two threads on one wheel)
// are not run: there the contract is "undefined", and a test cannot assert it.

#include "support/net.hpp"

#include <idlewheel/idle_watch.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_pool.hpp>
#include <idlewheel/wheel_timer.hpp>

#define BOOST_TEST_MODULE executor_check
#include <boost/test/unit_test.hpp>

#include "support/in_child.hpp"  // after Boost.Test

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using idlewheel::test::child_outcome;
using idlewheel::test::in_child;
using namespace std::chrono_literals;

// Whether this Asio's any_io_executor tells an io_context executor from a strand (standalone
// Asio 1.22's does not: the check then has nothing to go by, detail/executor_check.hpp).
bool targets_tell_types_apart() {
    net::io_context io;
    net::any_io_executor ex(io.get_executor());
    return ex.target<net::strand<net::io_context::executor_type>>() == nullptr;
}
const bool checked = IDLEWHEEL_CHECK_EXECUTOR != 0 && targets_tell_types_apart();

void expect_abort(const child_outcome& o, const char* says) {
    BOOST_TEST(o.aborted, "the misuse did not abort (exit " << o.exit_code << "): " << o.err);
    BOOST_TEST(o.err.find("idlewheel: ") != std::string::npos, o.err);
    BOOST_TEST(o.err.find(says) != std::string::npos, o.err);
    BOOST_TEST(o.err.find("see docs/threading.md") != std::string::npos, o.err);
}

void expect_clean(const child_outcome& o) {
    BOOST_TEST(!o.aborted, "aborted: " << o.err);
    BOOST_TEST(o.exit_code == 0, "exit " << o.exit_code << ": " << o.err);
}

// The outcome a misuse must have in this build: an abort saying `says`, or (unchecked) none.
void expect_misuse(const child_outcome& o, const char* says) {
    if (checked)
        expect_abort(o, says);
    else
        expect_clean(o);
}

idlewheel::timer_callback nothing() {
    return {[](void*) {}, nullptr};
}

// Waits for `flag` at most 5 s; the child exits 3 if it never comes (a deadlock is a failure).
void await(const std::atomic<bool>& flag) {
    const auto limit = std::chrono::steady_clock::now() + 5s;
    while (!flag.load()) {
        if (std::chrono::steady_clock::now() > limit) ::_exit(3);
        std::this_thread::yield();
    }
}

BOOST_AUTO_TEST_CASE(a_wheel_on_an_io_context_run_by_two_threads) {
    if (!checked) return;  // a real race: nothing to assert without the check
    expect_abort(in_child([] {
                     net::io_context io(2);
                     idlewheel::wheel_timer wheel(io);
                     idlewheel::timer_node a(nothing()), b(nothing());
                     std::atomic<bool> a_in{false}, b_in{false};
                     // Each handler waits for the other: they must run on two threads at once.
                     net::post(io, [&] {
                         a_in = true;
                         await(b_in);
                         wheel.schedule(a, 1s);
                     });
                     net::post(io, [&] {
                         b_in = true;
                         await(a_in);
                         std::this_thread::sleep_for(50ms);  // a's call first, then b's
                         wheel.schedule(b, 1s);
                     });
                     std::thread other([&] { io.run(); });
                     io.run();
                     other.join();
                 }),
                 "called from two different threads");
}

BOOST_AUTO_TEST_CASE(a_session_on_a_private_strand_schedules_on_a_pool_wheel) {
    expect_misuse(in_child([] {
                      net::io_context io;
                      idlewheel::wheel_pool pool(io, {2, {}});
                      auto own = net::make_strand(io);  // net::make_strand(ioc), as before the pool
                      net::post(own, [&] { pool[0].wheel().schedule(1s, [] {}); });
                      io.run_for(100ms);
                  }),
                  "not running on the wheel's executor");
}

BOOST_AUTO_TEST_CASE(a_session_on_a_private_strand_touches_its_liveness) {
    expect_misuse(in_child([] {
                      net::io_context io;
                      idlewheel::wheel_pool pool(io, {2, {}});
                      idlewheel::idle_options o;
                      o.reader = 1s;
                      idlewheel::idle_watch watch(pool[1].wheel(), {[](void*, idlewheel::idle_kind, bool) {}, nullptr}, o);
                      net::post(pool[1].get_executor(), [&] { watch.start(); });  // right
                      auto own = net::make_strand(io);
                      net::post(own, [&] { watch.on_read(); });  // wrong: a store, off the wheel's strand
                      io.run_for(100ms);
                      watch.stop();
                  }),
                  "not running on the wheel's executor");
}

BOOST_AUTO_TEST_CASE(another_shard_cancels_a_node) {
    expect_misuse(in_child([] {
                      net::io_context io;
                      idlewheel::wheel_pool pool(io, {2, {}});
                      idlewheel::timer_node node(nothing());
                      net::post(pool[0].get_executor(), [&] {
                          pool[0].wheel().schedule(node, 1s);
                          net::post(pool[1].get_executor(), [&] { node.cancel(); });
                      });
                      io.run_for(100ms);
                  }),
                  "not running on the wheel's executor");
}

BOOST_AUTO_TEST_CASE(a_handler_of_another_io_context) {
    expect_misuse(in_child([] {
                      net::io_context io1, io2;
                      idlewheel::wheel_timer wheel(io1);
                      net::post(io2, [&] { wheel.schedule(1s, [] {}); });
                      io2.run();
                  }),
                  "not running on the wheel's executor");
}

BOOST_AUTO_TEST_CASE(a_single_threaded_io_context_moved_to_another_thread) {
    // Documented: the first thread that calls a wheel on a plain io_context executor from
    // inside run() owns it (detail/executor_check.hpp). Give such a wheel a strand instead.
    expect_misuse(in_child([] {
                      net::io_context io;
                      idlewheel::wheel_timer wheel(io);
                      idlewheel::timer_node node(nothing());
                      net::post(io, [&] { wheel.schedule(node, 1s); });
                      std::thread([&] { io.run_for(50ms); }).join();
                      io.restart();
                      net::post(io, [&] { node.cancel(); });
                      std::thread([&] { io.run_for(50ms); }).join();
                  }),
                  "called from two different threads");
}

BOOST_AUTO_TEST_CASE(a_strand_wheel_may_move_between_threads) {
    // The same program on a strand: a strand may run on any thread, one at a time.
    expect_clean(in_child([] {
        net::io_context io;
        idlewheel::wheel_timer wheel(net::make_strand(io));
        idlewheel::timer_node node(nothing());
        net::post(wheel.get_executor(), [&] { wheel.schedule(node, 1s); });
        std::thread([&] { io.run_for(50ms); }).join();
        io.restart();
        net::post(wheel.get_executor(), [&] { node.cancel(); });
        std::thread([&] { io.run_for(50ms); }).join();
    }));
}

BOOST_AUTO_TEST_CASE(setting_up_before_run_and_tearing_down_after_is_allowed) {
    expect_clean(in_child([] {
        // An io_context per thread, as demo_server --threads does: built on this thread, run on
        // another, destroyed here after join().
        net::io_context io;
        auto wheel = std::make_unique<idlewheel::wheel_timer>(io);
        idlewheel::timer_node node(nothing());
        wheel->schedule(node, 10ms);       // before run(): not in any handler
        auto t = wheel->schedule(1h, [] {});
        int fired = 0;
        wheel->schedule(5ms, [&] { ++fired; });
        std::thread runner([&] { io.run_for(100ms); });
        runner.join();
        if (fired != 1) ::_exit(4);
        t.cancel();     // after run() returned
        node.cancel();
        wheel.reset();  // destroyed outside any handler
    }));
}

BOOST_AUTO_TEST_CASE(sessions_on_their_shards_strands_from_four_threads) {
    expect_clean(in_child([] {
        net::io_context io(4);
        idlewheel::wheel_pool pool(io, {8, {}});
        std::vector<std::unique_ptr<idlewheel::timer_node>> nodes;
        for (int i = 0; i < 800; ++i) nodes.push_back(std::make_unique<idlewheel::timer_node>(nothing()));
        std::atomic<int> done{0};
        for (auto& n : nodes) {
            auto& s = pool.next();
            net::post(s.get_executor(), [&s, &done, node = n.get()] {
                for (int k = 0; k < 50; ++k) s.wheel().schedule(*node, 1s);
                node->cancel();
                ++done;
            });
        }
        std::vector<std::thread> threads;
        for (int t = 0; t < 3; ++t) threads.emplace_back([&] { io.run(); });
        io.run();
        for (auto& t : threads) t.join();
        if (done.load() != 800) ::_exit(5);
    }));
}

}  // namespace
