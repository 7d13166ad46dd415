// Exits 0 only if a timeout scheduled on the consumed idlewheel fires. The same program for
// both flavours: idlewheel::idlewheel carries IDLEWHEEL_STANDALONE_ASIO when it was built so.
#include <idlewheel/idlewheel.hpp>

#if defined(IDLEWHEEL_EXPECT_STANDALONE) && !defined(IDLEWHEEL_STANDALONE_ASIO)
#error "the idlewheel::idlewheel target of a standalone-Asio build did not carry IDLEWHEEL_STANDALONE_ASIO"
#endif

// The standard the consumer asked for is the one it got (the target brings C++17 at least and
// must not force C++20 on a C++17 consumer).
#if IDLEWHEEL_CONSUMER_CXX_STANDARD == 17
static_assert(__cplusplus == 201703L, "a C++17 consumer of idlewheel::idlewheel was not compiled as C++17");
#elif IDLEWHEEL_CONSUMER_CXX_STANDARD == 20
static_assert(__cplusplus == 202002L, "a C++20 consumer of idlewheel::idlewheel was not compiled as C++20");
#endif

#if IDLEWHEEL_VERSION != IDLEWHEEL_VERSION_MAJOR * 100000 + IDLEWHEEL_VERSION_MINOR * 100 + IDLEWHEEL_VERSION_PATCH
#error "IDLEWHEEL_VERSION does not match its parts"
#endif

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#include <asio/io_context.hpp>
namespace net = asio;
#else
#include <boost/asio/io_context.hpp>
namespace net = boost::asio;
#endif

#include <chrono>
#include <cstdio>
#include <cstring>

int main() {
    // The version CMake found (find_package's, or the source tree's project()) is the header's.
    if (std::strcmp(IDLEWHEEL_CONSUMER_FOUND_VERSION, IDLEWHEEL_VERSION_STRING) != 0) {
        std::fprintf(stderr, "consumer: CMake found idlewheel %s, the header says %s\n", IDLEWHEEL_CONSUMER_FOUND_VERSION,
                     IDLEWHEEL_VERSION_STRING);
        return 2;
    }
    using namespace std::chrono_literals;
    net::io_context io;
#if __cplusplus >= 202002L
    idlewheel::wheel_timer wheel(io, {.tick = 1ms});
#else
    idlewheel::wheel_options options;
    options.tick = 1ms;
    idlewheel::wheel_timer wheel(io, options);
#endif
    bool fired = false;
    wheel.schedule(5ms, [&] { fired = true; });
    io.run_for(5s);
    return fired ? 0 : 1;
}
