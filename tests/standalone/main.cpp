// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// A program on standalone Asio: the whole public API but beast.hpp, through the umbrella
// header. run.cmake compiles it with IDLEWHEEL_STANDALONE_ASIO, checks the compiler's
// dependency list for Boost headers (there must be none), and runs it: exit 0 only if a
// schedule() handle, a timer_node and an async_wait all completed.
#include <idlewheel/idlewheel.hpp>

#include <asio/io_context.hpp>

#include <chrono>
#include <system_error>

namespace {
int done = 0;

struct session {
    void on_timer() { ++done; }
    idlewheel::timer_node node{idlewheel::bind_member<&session::on_timer>(this)};
};
}  // namespace

int main() {
    using namespace std::chrono_literals;
    asio::io_context io;
    idlewheel::wheel_timer wheel(io, {.tick = 1ms});
    idlewheel::timeout t = wheel.schedule(3ms, [] { ++done; });
    session s;
    wheel.schedule(s.node, 4ms);
    wheel.async_wait(5ms, [](std::error_code ec) {
        if (!ec) ++done;
    });
    io.run_for(5s);
    return done == 3 && t.expired() ? 0 : 1;
}
