// What a server promises each role of client, the yardstick of loadgen's verdicts (README.md,
// "The promise language"): a role stays open, is closed inside a window after an event, or is
// left unbounded (the promise says nothing of it: either end passes).
//
//   --expect-open ROLE[,ROLE...]
//   --expect-close ROLE=A..B[@EVENT][:HOW]    EVENT connect | handshake (default) | message
//                                             HOW any (default) | frame | frame=CODE | bare
//
// A window [A, B] is measured from the event as the client saw it: no close before its lower
// bound + A, none after its upper bound + B + 2 ticks + --allowance (the slack widens B, never
// A). The events, per client: connect: the connect began .. the TCP connect completed (a
// stalled client: .. its half upgrade request was written); handshake: the TCP connect
// completed .. the upgrade completed (a stalled client: as connect); message: the client's last
// message was written .. its echo came back (pinger and dead clients send none: their upgrade
// request is their last message, as handshake).
#ifndef IDLEWHEEL_LOADGEN_PROMISE_HPP
#define IDLEWHEEL_LOADGEN_PROMISE_HPP

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace loadgen {

enum class close_event : std::uint8_t { connect, handshake, message };
/// How a close must look: any close, a close frame (of any code, or of `code`), a bare socket
/// close (EOF or reset, no close frame), or demo_server's idle kick (close frame 1000 with the
/// reason "idle timeout"; not part of the command-line language).
enum class close_how : std::uint8_t { any, frame, frame_code, bare, idle_kick };

struct role_promise {
    enum class kind : std::uint8_t { open, closed, unbounded };
    kind what = kind::open;
    std::chrono::nanoseconds from{0}, to{0};  // A, B
    close_event after = close_event::handshake;
    close_how how = close_how::any;
    std::uint16_t code = 0;  // frame_code

    [[nodiscard]] bool closed() const noexcept { return what == kind::closed; }
    /// The command-line spelling of the window: "open", "unbounded", "1s..2s@handshake:bare".
    [[nodiscard]] std::string spelling() const;
    /// In words: "closed 1s..2s after the handshake, bare (no close frame)".
    [[nodiscard]] std::string words() const;
};

/// "1s", "1500ms", "250us": the shortest exact spelling loadgen's duration format reads back.
[[nodiscard]] std::string duration_text(std::chrono::nanoseconds d);

/// Parses --expect-close's "A..B[@EVENT][:HOW]" (after "ROLE="). Returns an error message, or
/// nothing on success.
[[nodiscard]] std::optional<std::string> parse_close_window(const std::string& text, role_promise& into);

}  // namespace loadgen

#endif
