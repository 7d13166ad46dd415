// One log line to stderr: "[demo_server +12.345s] ...". Thread-safe (one write per line).
#ifndef IDLEWHEEL_DEMO_LOG_HPP
#define IDLEWHEEL_DEMO_LOG_HPP

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

namespace demo {

inline const std::chrono::steady_clock::time_point process_start = std::chrono::steady_clock::now();

template <class... Args>
void log(const Args&... args) {
    std::ostringstream line;
    const auto t = std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count();
    line.setf(std::ios::fixed);
    line.precision(3);
    line << "[demo_server +" << t << "s] ";
    (line << ... << args);
    line << '\n';
    const std::string s = line.str();
    std::fwrite(s.data(), 1, s.size(), stderr);
}

}  // namespace demo

#endif
