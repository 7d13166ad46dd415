// Exits 0 only if a timeout scheduled on the consumed idlewheel fires.
#include <idlewheel/idlewheel.hpp>

#include <boost/asio/io_context.hpp>

int main() {
    using namespace std::chrono_literals;
    boost::asio::io_context io;
    idlewheel::wheel_timer wheel(io, {.tick = 1ms});
    bool fired = false;
    wheel.schedule(5ms, [&] { fired = true; });
    io.run_for(5s);
    return fired ? 0 : 1;
}
