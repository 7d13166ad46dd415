// The checks behind the demo's tables of enumerators (close_causes.hpp, session_kinds.hpp): one
// entry per enumerator, in the enumerators' order, every text filled in, names unique and
// usable as a JSON key, a Prometheus label value and an HTML id. Each table states them in
// static_asserts, so a missing, misplaced, duplicated or half-written entry does not compile.
#ifndef IDLEWHEEL_DEMO_ENUM_TABLE_HPP
#define IDLEWHEEL_DEMO_ENUM_TABLE_HPP

#include <cstddef>
#include <string_view>

namespace demo::enum_table {

/// Entry i is enumerator i, and there is one entry per enumerator before `Enum::count`.
template <class Entry, std::size_t N, class Enum>
constexpr bool complete_in_order(const Entry (&table)[N], Enum Entry::*value) noexcept {
    if (N != static_cast<std::size_t>(Enum::count)) return false;
    for (std::size_t i = 0; i < N; ++i)
        if (static_cast<std::size_t>(table[i].*value) != i) return false;
    return true;
}

/// No entry leaves this text empty.
template <class Entry, std::size_t N>
constexpr bool filled(const Entry (&table)[N], std::string_view Entry::*text) noexcept {
    for (const auto& e : table)
        if ((e.*text).empty()) return false;
    return true;
}

/// No two entries share this text.
template <class Entry, std::size_t N>
constexpr bool unique(const Entry (&table)[N], std::string_view Entry::*text) noexcept {
    for (std::size_t i = 0; i < N; ++i)
        for (std::size_t j = i + 1; j < N; ++j)
            if (table[i].*text == table[j].*text) return false;
    return true;
}

/// Every name is snake_case ([a-z][a-z0-9_]*): as it is in /stats, /metrics and the dashboard.
template <class Entry, std::size_t N>
constexpr bool snake_case(const Entry (&table)[N], std::string_view Entry::*name) noexcept {
    for (const auto& e : table) {
        const std::string_view s = e.*name;
        if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
        for (const char c : s)
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    }
    return true;
}

}  // namespace demo::enum_table

#endif
