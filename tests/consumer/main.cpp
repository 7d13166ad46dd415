// Exits 0 only if a timeout scheduled on the consumed idlewheel fires. The same program for
// both flavours: idlewheel::idlewheel carries IDLEWHEEL_STANDALONE_ASIO when it was built so.
#include <idlewheel/idlewheel.hpp>

#if defined(IDLEWHEEL_EXPECT_STANDALONE) && !defined(IDLEWHEEL_STANDALONE_ASIO)
#error "the idlewheel::idlewheel target of a standalone-Asio build did not carry IDLEWHEEL_STANDALONE_ASIO"
#endif

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#include <asio/io_context.hpp>
namespace net = asio;
#else
#include <boost/asio/io_context.hpp>
namespace net = boost::asio;
#endif

#include <chrono>

int main() {
    using namespace std::chrono_literals;
    net::io_context io;
    idlewheel::wheel_timer wheel(io, {.tick = 1ms});
    bool fired = false;
    wheel.schedule(5ms, [&] { fired = true; });
    io.run_for(5s);
    return fired ? 0 : 1;
}
