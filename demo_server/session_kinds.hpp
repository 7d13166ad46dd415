// The kinds of session the demo server counts as open, and their names in /stats (`open.<name>`)
// and /metrics (`idlewheel_demo_open_sessions{kind="<name>"}`): one table, both read it. An
// HTTP connection counts as `http` until it upgrades, then as `websocket`.
#ifndef IDLEWHEEL_DEMO_SESSION_KINDS_HPP
#define IDLEWHEEL_DEMO_SESSION_KINDS_HPP

#include "enum_table.hpp"

#include <cstddef>
#include <iterator>
#include <string_view>

namespace demo {

enum class session_kind : unsigned { tcp, http, websocket, count };

struct session_kind_info {
    session_kind kind;
    std::string_view name;
};

inline constexpr session_kind_info session_kinds[] = {
    {session_kind::tcp, "tcp"},
    {session_kind::http, "http"},
    {session_kind::websocket, "websocket"},
};

static_assert(enum_table::complete_in_order(session_kinds, &session_kind_info::kind),
              "session_kinds: one entry per session_kind, in the enumerators' order");
static_assert(enum_table::filled(session_kinds, &session_kind_info::name) &&
                  enum_table::unique(session_kinds, &session_kind_info::name) &&
                  enum_table::snake_case(session_kinds, &session_kind_info::name),
              "session_kinds: every kind needs a name of its own, in snake_case");

inline constexpr std::size_t session_kind_count = std::size(session_kinds);

/// The kind's name, as in /stats and /metrics.
[[nodiscard]] constexpr std::string_view to_string(session_kind k) noexcept {
    return session_kinds[static_cast<std::size_t>(k)].name;
}

}  // namespace demo

#endif
