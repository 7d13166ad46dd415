// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_RUN_UNTIL_HPP
#define IDLEWHEEL_TESTS_SUPPORT_RUN_UNTIL_HPP

// The one way the blocking loopback clients (tests/demo_server/functional/loopback_clients.hpp,
// tests/demo_server/reliability/beast_client.hpp) wait for an operation: each client owns an io_context and
// runs it only inside a call, bounded in time, so a test never hangs on a silent server.

#include <chrono>

namespace idlewheel::test {

/// Runs `io` until `done` is set or `timeout` passes. On timeout calls `abandon` (which must
/// make every pending operation complete, e.g. by closing the socket), lets the aborted
/// handlers run (they may still set `done`), and returns false.
template <class IoContext, class Abandon>
bool run_until(IoContext& io, const bool& done, std::chrono::steady_clock::duration timeout, Abandon&& abandon) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    io.restart();
    while (!done && std::chrono::steady_clock::now() < deadline) {
        if (io.run_one_until(deadline) == 0 && io.stopped()) break;  // out of work
    }
    if (done) return true;
    abandon();
    io.restart();
    io.run_for(std::chrono::seconds(2));
    return false;
}

}  // namespace idlewheel::test

#endif
