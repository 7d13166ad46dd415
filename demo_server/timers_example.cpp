// A first look at idlewheel: one wheel, a few thousand timeouts, one Asio timer underneath.
// Schedules timeouts with the three forms of the API, cancels most of them (as a server does
// when sessions stay active), and prints when the rest fire and how often the wheel woke up.
#include <idlewheel/idlewheel.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

int main() {
    asio::io_context io;
    idlewheel::wheel_timer wheel(io, {.tick = 10ms});
    const auto start = clock_type::now();
    auto ms_since_start = [start] {
        return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count());
    };

    // 1. Handles: 10 000 timeouts of 1 s, 9 990 of them cancelled at once.
    std::vector<idlewheel::timeout> handles;
    int fired = 0;
    for (int i = 0; i < 10'000; ++i) handles.push_back(wheel.schedule(1s, [&fired] { ++fired; }));
    for (int i = 10; i < 10'000; ++i) handles[static_cast<std::size_t>(i)].cancel();
    wheel.schedule(1s + 5ms, [&] { std::printf("[%5lld ms] %d of 10000 one-second timeouts fired (9990 were cancelled)\n", ms_since_start(), fired); });

    // 2. An intrusive node, re-armed from its own callback: a heartbeat every 250 ms, 4 times.
    struct heartbeat {
        idlewheel::wheel_timer& wheel;
        decltype(ms_since_start)& now_ms;
        int beats = 0;
        idlewheel::timer_node node{idlewheel::bind_member<&heartbeat::beat>(this)};
        void beat() {
            std::printf("[%5lld ms] heartbeat %d\n", now_ms(), ++beats);
            if (beats < 4) wheel.schedule(node, 250ms);
        }
    } beat{wheel, ms_since_start};
    wheel.schedule(beat.node, 250ms);

    // 3. async_wait as a coroutine.
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
        co_await wheel.async_wait(1500ms, asio::use_awaitable);
        std::printf("[%5lld ms] coroutine woke after async_wait(1500ms)\n", ms_since_start());
    }, asio::detached);

    io.run();  // returns when nothing is pending: the wheel holds no work when idle
    const auto s = wheel.stats();
    std::printf("done: scheduled=%llu expired=%llu cancelled=%llu wake-ups=%llu worst lateness=%lld us\n",
                static_cast<unsigned long long>(s.scheduled), static_cast<unsigned long long>(s.expired),
                static_cast<unsigned long long>(s.cancelled), static_cast<unsigned long long>(s.wakeups),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(s.worst_lateness).count()));
}
