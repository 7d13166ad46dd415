// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BENCH_MICRO_IDLE_PROBE_HPP
#define IDLEWHEEL_BENCH_MICRO_IDLE_PROBE_HPP

// Idle wake-ups, counted the same way for every contender: the event loop runs on a thread of
// its own with N timeouts armed an hour ahead, and the kernel's count of that thread's
// voluntary context switches (/proc/self/task/<tid>/status) is read before and after a window
// of real time. Every return from a blocking epoll_wait (a timer that fired, a tick, a
// spurious wake) is one voluntary switch; a loop that sleeps through the window scores 0.
// The window starts after a settling pause (the loop reaches its first wait) and ends before
// the loop is asked to stop, so neither start nor stop is counted. The Java harness reads the
// same counter for Netty's worker thread.

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

namespace bench {

struct idle_result {
    double seconds = 0;
    std::int64_t voluntary = 0;    ///< voluntary context switches of the loop thread in the window
    std::int64_t involuntary = 0;  ///< preemptions (not wake-ups; reported for completeness)
};

inline bool read_switches(long tid, std::int64_t& voluntary, std::int64_t& involuntary) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
    std::string line;
    bool got_v = false, got_i = false;
    while (std::getline(in, line)) {
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
            voluntary = std::stoll(line.substr(line.find(':') + 1));
            got_v = true;
        } else if (line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
            involuntary = std::stoll(line.substr(line.find(':') + 1));
            got_i = true;
        }
    }
    return got_v && got_i;
}

// Runs `run()` (the event loop, blocking) on a thread, measures `window`, then calls `stop()`
// (thread-safe: it makes run() return) and joins.
template <class Run, class Stop>
idle_result probe_idle(Run&& run, Stop&& stop, std::chrono::milliseconds window) {
    std::atomic<long> tid{0};
    std::thread loop([&] {
        tid.store(static_cast<long>(::syscall(SYS_gettid)), std::memory_order_release);
        run();
    });
    while (tid.load(std::memory_order_acquire) == 0) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // settle into the first wait
    idle_result r;
    std::int64_t v0 = 0, i0 = 0, v1 = 0, i1 = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok0 = read_switches(tid.load(), v0, i0);
    std::this_thread::sleep_for(window);
    const bool ok1 = read_switches(tid.load(), v1, i1);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stop();
    loop.join();
    if (ok0 && ok1) {
        r.voluntary = v1 - v0;
        r.involuntary = i1 - i0;
    } else {
        r.voluntary = r.involuntary = -1;
    }
    return r;
}

}  // namespace bench

#endif
