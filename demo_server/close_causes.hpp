// Why a session of the demo server ended: the enumerators and, in one table, everything said
// about each of them (the name /stats and /metrics use, the dashboard's label, what produces
// it, whether it is an error), as Beast's error.hpp keeps a code, its message and its
// condition together. /stats (`closed`, and the table itself as `close_causes`), /metrics
// (`idlewheel_demo_sessions_closed_total{cause}`), the dashboard's rows and the log lines all
// read this table; the tests compare what the server sends with it.
//
// Adding a cause: an enumerator before `count` and its entry at the same place in
// `close_causes`; the static_asserts below refuse the build until both are there and complete.
#ifndef IDLEWHEEL_DEMO_CLOSE_CAUSES_HPP
#define IDLEWHEEL_DEMO_CLOSE_CAUSES_HPP

#include "enum_table.hpp"

#include <cstddef>
#include <iterator>
#include <string_view>

namespace demo {

enum class close_cause : unsigned {
    idle,
    http_idle,
    dead_peer,
    handshake_timeout,
    client_close,
    protocol_error,
    error,
    backlog,
    backlog_budget,
    too_big,
    bad_request,
    shutdown,
    max_lifetime,
    upgrade_refused,
    tls_failed,
    count
};

/// `error`: the session ended because something went wrong (the peer broke a rule or a bound,
/// stopped answering, or the transport failed); `normal`: its life ended as designed (the
/// client left, an idle kick, the stop, --max-lifetime, an upgrade refused by the drain).
enum class close_outcome : bool { normal, error };

struct close_cause_info {
    close_cause cause;
    std::string_view name;  // /stats `closed.<name>`, /metrics `cause="<name>"`, the log lines
    close_outcome outcome;
    std::string_view label;  // the dashboard's row
    std::string_view help;   // what produces it
};

inline constexpr close_cause_info close_causes[] = {
    {close_cause::idle, "idle", close_outcome::normal, "idle (kicked)",
     "no inbound data for --idle-timeout (WebSocket: close 1000 \"idle timeout\")"},
    {close_cause::http_idle, "http_idle", close_outcome::normal, "idle HTTP keep-alive",
     "an HTTP keep-alive connection waited --idle-timeout for its next request"},
    {close_cause::dead_peer, "dead_peer", close_outcome::error, "dead peer",
     "no answer to a WebSocket ping within --pong-timeout"},
    {close_cause::handshake_timeout, "handshake_timeout", close_outcome::error, "handshake timeout",
     "the request or WebSocket upgrade (TLS handshake included) not complete within --handshake-timeout"},
    {close_cause::client_close, "client_close", close_outcome::normal, "client closed",
     "the client closed (close frame or EOF), after its queued echo was sent"},
    {close_cause::protocol_error, "protocol_error", close_outcome::error, "protocol error",
     "a WebSocket frame broke RFC 6455 (Beast sent 1002 / 1007)"},
    {close_cause::error, "error", close_outcome::error, "transport error / close timeout",
     "a transport error (reset, ...), or a close handshake past --close-timeout"},
    {close_cause::backlog, "backlog", close_outcome::error, "not reading (--max-backlog)",
     "the client does not read: its unsent echo passed --max-backlog"},
    {close_cause::backlog_budget, "backlog_budget", close_outcome::error, "server memory budget (--max-backlog-total)",
     "the server's unsent echo passed --max-backlog-total: the largest holders go first"},
    {close_cause::too_big, "too_big", close_outcome::error, "message too big",
     "a message or line over --max-message-size (WebSocket: close 1009)"},
    {close_cause::bad_request, "bad_request", close_outcome::error, "bad request",
     "malformed HTTP or WebSocket upgrade (400)"},
    {close_cause::shutdown, "shutdown", close_outcome::normal, "server shutdown",
     "the server is stopping (WebSocket: close 1001)"},
    {close_cause::max_lifetime, "max_lifetime", close_outcome::normal, "max lifetime",
     "open for --max-lifetime (WebSocket: close 1001 \"max lifetime\")"},
    {close_cause::upgrade_refused, "upgrade_refused", close_outcome::normal, "upgrade refused while draining (503)",
     "a WebSocket upgrade while the server drains (503, Retry-After, closed)"},
    {close_cause::tls_failed, "tls_failed", close_outcome::error, "TLS failed (handshake or record)",
     "--tls: TLS failed, in the handshake (not TLS, no common version or cipher, over the bounds of tls.hpp) "
     "or after it (an alert, a bad record): closed, never answered"},
};

static_assert(enum_table::complete_in_order(close_causes, &close_cause_info::cause),
              "close_causes: one entry per close_cause, in the enumerators' order");
static_assert(enum_table::filled(close_causes, &close_cause_info::name) &&
                  enum_table::filled(close_causes, &close_cause_info::label) &&
                  enum_table::filled(close_causes, &close_cause_info::help),
              "close_causes: every entry needs a name, a dashboard label and a help text");
static_assert(enum_table::unique(close_causes, &close_cause_info::name) &&
                  enum_table::unique(close_causes, &close_cause_info::label),
              "close_causes: two entries share a name or a dashboard label");
static_assert(enum_table::snake_case(close_causes, &close_cause_info::name),
              "close_causes: a name must be snake_case (a JSON key, a Prometheus label value, an HTML id)");

inline constexpr std::size_t close_cause_count = std::size(close_causes);

[[nodiscard]] constexpr const close_cause_info& info(close_cause c) noexcept {
    return close_causes[static_cast<std::size_t>(c)];
}
/// The cause's name, as in /stats and /metrics.
[[nodiscard]] constexpr std::string_view to_string(close_cause c) noexcept { return info(c).name; }

}  // namespace demo

#endif
