// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Force-included (-include) into every upstream example the tests build, Beast's or Asio's
// file as shipped and its conversion alike (examples/CMakeLists.txt). With the substitutions of
// prepare_example.cmake it gives the tests what the examples lack, and nothing else:
//
//   - an optional last argument, <timeout-ms>: every std::chrono::seconds(30) of the file
//     becomes idlewheel_test::timeout() (<timeout-ms>, else 30 s), and Beast's
//     timeout::suggested(role_type::server) becomes idlewheel_test::websocket_timeout()
//     (timeout{<timeout-ms> / 2, <timeout-ms>, true}, else suggested's own);
//   - a "listening on port N" line on stdout once the acceptor listens (port 0 then works).
//
// The example's main() is renamed beast_main(); the main() below takes the test's argument
// off and calls it with the example's own arguments.
#pragma once

#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/stream_base.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>

#ifndef IDLEWHEEL_TEST_EXAMPLE_ARGC
#error "IDLEWHEEL_TEST_EXAMPLE_ARGC: the example's own argc (its program name included)"
#endif

namespace idlewheel_test {

inline std::chrono::milliseconds& timeout_setting() {
    static std::chrono::milliseconds t{0};  // 0: the example's own times
    return t;
}

inline std::chrono::milliseconds timeout() {
    return timeout_setting().count() != 0 ? timeout_setting() : std::chrono::milliseconds(std::chrono::seconds(30));
}

inline boost::beast::websocket::stream_base::timeout websocket_timeout() {
    if (timeout_setting().count() == 0)
        return boost::beast::websocket::stream_base::timeout::suggested(boost::beast::role_type::server);
    return {timeout_setting() / 2, timeout_setting(), true};
}

template <class Acceptor>
void announce(Acceptor& acceptor) {
    static std::once_flag once;
    std::call_once(once, [&] {
        if (acceptor.is_open()) std::cout << "listening on port " << acceptor.local_endpoint().port() << std::endl;
    });
}

}  // namespace idlewheel_test

int beast_main(int argc, char* argv[]);

int main(int argc, char* argv[]) {
    if (argc == IDLEWHEEL_TEST_EXAMPLE_ARGC + 1) {
        idlewheel_test::timeout_setting() = std::chrono::milliseconds(std::atoi(argv[argc - 1]));
        argv[--argc] = nullptr;
    }
    return beast_main(argc, argv);
}
