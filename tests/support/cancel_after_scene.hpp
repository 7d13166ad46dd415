// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_CANCEL_AFTER_SCENE_HPP
#define IDLEWHEEL_TESTS_SUPPORT_CANCEL_AFTER_SCENE_HPP

// What the cancel_after tests share (test_cancel_after*.cpp, one executable): a 1 ms wheel on
// the manual clock, an operation that never completes by itself and records every
// cancellation emitted on its slot, and a handler that records how it completed. Boost.Asio
// only (the tests name its tokens and sockets).

#include <idlewheel/cancel_after.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include "manual_io.hpp"

#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

// With the names the tests use unqualified (they say `using namespace` this namespace).
namespace idlewheel::test::cancel_after_scene {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using idlewheel::cancel_after;
using idlewheel::cancel_at;
using idlewheel::manual_clock;
using idlewheel::test::advance_and_poll;
using idlewheel::test::ms_since;
using idlewheel::test::poll;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;

struct fixture : idlewheel::test::clock_reset {
    asio::io_context io;
    manual_clock::time_point t0 = manual_clock::now();
    wheel_type wheel{io, {.tick = 1ms}};

    // One operation run to completion first: tests that compare pending() check that a
    // wheel that has served cancel_after keeps nothing of it.
    void warm_up() {
        wheel.async_wait(0ms, idlewheel::cancel_after(wheel, 1h, [](error_code) {}));
        advance_and_poll(io, 2ms);
    }
};

// What a test operation saw, and how it completed.
struct outcome {
    int calls = 0;
    error_code ec;
    std::int64_t at = -1;
    std::vector<asio::cancellation_type> emitted;
};

// An operation that never completes by itself: it supports every cancellation type, records
// each emission on its slot, and completes with operation_aborted (as if by post, or inside
// the cancellation handler itself when `inline_completion`).
template <class Token>
auto async_never(asio::io_context& io, outcome& out, Token&& token, bool inline_completion = false) {
    return asio::async_initiate<Token, void(error_code)>(
        [&io, &out, inline_completion](auto handler) {
            using handler_type = decltype(handler);
            auto slot = asio::get_associated_cancellation_slot(handler);
            BOOST_TEST_REQUIRE(slot.is_connected());
            auto h = std::make_shared<std::optional<handler_type>>(std::move(handler));
            slot.assign([&io, &out, h, slot, inline_completion](asio::cancellation_type type) mutable {
                out.emitted.push_back(type);
                if (!h->has_value()) return;
                auto complete = [h, slot]() mutable {
                    if (!h->has_value()) return;
                    handler_type hh(std::move(**h));
                    h->reset();
                    slot.clear();
                    std::move(hh)(error_code(asio::error::operation_aborted));
                };
                if (inline_completion) {
                    // Unusual (operations post), but allowed: the handler runs inside the emit.
                    handler_type hh(std::move(**h));
                    h->reset();
                    std::move(hh)(error_code(asio::error::operation_aborted));
                    return;
                }
                asio::post(io, std::move(complete));
            });
        },
        token);
}

inline auto recorder(outcome& out, manual_clock::time_point t0) {
    return [&out, t0](error_code ec) {
        ++out.calls;
        out.ec = ec;
        out.at = ms_since(t0);
    };
}

inline constexpr std::array<asio::cancellation_type, 3> all_types{
    asio::cancellation_type::terminal, asio::cancellation_type::partial, asio::cancellation_type::total};

}  // namespace idlewheel::test::cancel_after_scene

#endif
