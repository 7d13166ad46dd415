// Durations written as a whole number and a unit — "250us", "500ms", "30s", "2m", "1h" — as
// the programs' command lines read them (demo_server, and loadgen, which mirrors the server's
// flags). duration_option.hpp plugs this into Boost.Program_options.
#ifndef IDLEWHEEL_PROGRAM_SUPPORT_DURATION_TEXT_HPP
#define IDLEWHEEL_PROGRAM_SUPPORT_DURATION_TEXT_HPP

#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace program_support {

/// The duration `text` names, or nothing if it is not a number and a unit (or too large).
inline std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
    long long n = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec != std::errc{} || end == first || n < 0) return std::nullopt;
    const std::string_view unit(end, static_cast<std::size_t>(last - end));
    long double scale = 0;
    if (unit == "us")
        scale = 1e3L;
    else if (unit == "ms")
        scale = 1e6L;
    else if (unit == "s")
        scale = 1e9L;
    else if (unit == "m")
        scale = 60e9L;
    else if (unit == "h")
        scale = 3600e9L;
    else
        return std::nullopt;
    const long double ns = static_cast<long double>(n) * scale;
    if (ns > static_cast<long double>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

}  // namespace program_support

#endif
