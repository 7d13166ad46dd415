#include "promise.hpp"

#include "program_support/duration_text.hpp"

#include <charconv>

namespace loadgen {

namespace {

constexpr std::array<const char*, 3> event_names{"connect", "handshake", "message"};

std::string how_spelling(const role_promise& p) {
    switch (p.how) {
        case close_how::any: return "any";
        case close_how::frame: return "frame";
        case close_how::frame_code: return "frame=" + std::to_string(p.code);
        case close_how::bare: return "bare";
        case close_how::idle_kick: return "frame=1000";
    }
    return "any";
}

std::string how_words(const role_promise& p) {
    switch (p.how) {
        case close_how::any: return "any close";
        case close_how::frame: return "a close frame";
        case close_how::frame_code: return "close frame " + std::to_string(p.code);
        case close_how::bare: return "bare (no close frame)";
        case close_how::idle_kick: return "close frame 1000 \"idle timeout\"";
    }
    return "any close";
}

}  // namespace

std::string duration_text(std::chrono::nanoseconds d) {
    const auto ns = d.count();
    if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + "s";
    if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
    return std::to_string(ns / 1000) + "us";
}

std::string role_promise::spelling() const {
    switch (what) {
        case kind::open: return "open";
        case kind::unbounded: return "unbounded";
        case kind::closed: break;
    }
    return duration_text(from) + ".." + duration_text(to) + "@" + event_names[static_cast<std::size_t>(after)] + ":" +
           how_spelling(*this);
}

std::string role_promise::words() const {
    switch (what) {
        case kind::open: return "open to the end";
        case kind::unbounded: return "unbounded (either end passes)";
        case kind::closed: break;
    }
    const std::string event = after == close_event::connect     ? "the connect began"
                              : after == close_event::handshake ? "the handshake"
                                                                : "its last message";
    return "closed " + duration_text(from) + ".." + duration_text(to) + " after " + event + ", " + how_words(*this);
}

std::optional<std::string> parse_close_window(const std::string& text, role_promise& into) {
    role_promise p;
    p.what = role_promise::kind::closed;
    std::string rest = text;
    const auto colon = rest.find(':');
    std::string how = colon == std::string::npos ? "any" : rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    const auto at = rest.find('@');
    const std::string event = at == std::string::npos ? "handshake" : rest.substr(at + 1);
    rest = rest.substr(0, at);
    const auto dots = rest.find("..");
    if (dots == std::string::npos) return "expected A..B (two durations, e.g. 1s..2s)";
    const auto a = program_support::parse_duration(rest.substr(0, dots));
    const auto b = program_support::parse_duration(rest.substr(dots + 2));
    if (!a || !b) return "A..B: each a whole number and a unit (us, ms, s, m)";
    if (*b < *a) return "A..B: B is earlier than A";
    p.from = *a;
    p.to = *b;
    bool known = false;
    for (std::size_t e = 0; e < event_names.size(); ++e)
        if (event == event_names[e]) {
            p.after = static_cast<close_event>(e);
            known = true;
        }
    if (!known) return "@" + event + ": the event must be connect, handshake or message";
    if (how == "any") {
        p.how = close_how::any;
    } else if (how == "frame") {
        p.how = close_how::frame;
    } else if (how == "bare") {
        p.how = close_how::bare;
    } else if (how.rfind("frame=", 0) == 0) {
        unsigned code = 0;
        const std::string digits = how.substr(6);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code);
        if (ec != std::errc{} || end != digits.data() + digits.size() || code < 1000 || code > 4999)
            return ":" + how + ": a close code is 1000..4999";
        p.how = close_how::frame_code;
        p.code = static_cast<std::uint16_t>(code);
    } else {
        return ":" + how + ": HOW must be any, frame, frame=CODE or bare";
    }
    into = p;
    return std::nullopt;
}

}  // namespace loadgen
