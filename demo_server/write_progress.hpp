// How the demo's sessions make write progress visible, so a deadline that counts progress
// (--close-timeout during a drain) sees a slow but steady reader as alive:
//
//  - echo is written in pieces of at most `write_piece` bytes (TCP: async_write_some; WebSocket:
//    a large message as fragments), and every completed piece is progress;
//  - the kernel keeps at most `unsent_low_water` bytes not yet sent (TCP_NOTSENT_LOWAT), so a
//    piece completes as the peer reads. Without it the socket is reported writable only when a
//    third of its send buffer (megabytes, once auto-tuned) has drained: a client reading
//    1.3 MB/s saw no completed write for a second and was cut by a 300 ms --close-timeout.
//
// And how a session that gives up on its peer lets go of what it wrote: reset_if_unsent().
#ifndef IDLEWHEEL_DEMO_WRITE_PROGRESS_HPP
#define IDLEWHEEL_DEMO_WRITE_PROGRESS_HPP

#include "program_support/socket_option.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#ifdef __linux__
#include <linux/sockios.h>
#endif

#include <chrono>
#include <cstddef>

namespace demo {

/// The largest piece of echo one write carries.
inline constexpr std::size_t write_piece = 64 * 1024;

/// The kernel's share of the unsent echo: 16 KiB (the rest waits in the session's queue, where
/// --max-backlog counts it).
inline constexpr int unsent_low_water = 16 * 1024;

/// Sets TCP_NOTSENT_LOWAT on an accepted socket (where the platform has it; errors ignored).
inline void bound_kernel_unsent(boost::asio::ip::tcp::socket& s) {
#ifdef TCP_NOTSENT_LOWAT
    boost::system::error_code ignored;
    s.set_option(program_support::int_socket_option<IPPROTO_TCP, TCP_NOTSENT_LOWAT>(unsent_low_water), ignored);
#else
    (void)s;
#endif
}

/// Bytes the kernel still holds for the peer: written by the server, not yet acknowledged by the
/// peer (SIOCOUTQ), 0 where the platform cannot tell.
inline std::size_t kernel_unacked(boost::asio::ip::tcp::socket& s) noexcept {
#ifdef SIOCOUTQ
    int n = 0;
    if (s.is_open() && ::ioctl(s.native_handle(), SIOCOUTQ, &n) == 0 && n > 0) return static_cast<std::size_t>(n);
#else
    (void)s;
#endif
    return 0;
}

/// Before a close that gives up on the peer (a verdict: idle, dead peer, a deadline, a limit, an
/// error, the hard stop): if echo is still queued in the session (`queued`) or the kernel still
/// holds bytes the peer has not acknowledged, SO_LINGER {1, 0}, so the close resets. A FIN would
/// queue behind bytes a peer that does not read never takes: the kernel would keep the closed
/// socket (FIN-WAIT-1, its send queue) as an orphan for minutes. A close that ends normally (the
/// peer's FIN, the drain, a close handshake done, an HTTP `Connection: close` answer) keeps the
/// FIN, so a peer still reading gets every byte. Errors ignored (the socket may be gone).
inline void reset_if_unsent(boost::asio::ip::tcp::socket& s, std::size_t queued) noexcept {
    if (queued == 0 && kernel_unacked(s) == 0) return;
    boost::system::error_code ignored;
    s.set_option(boost::asio::socket_base::linger(true, 0), ignored);
}

/// When a closing session last made write progress (the start of its drain or close, then every
/// piece that went out), as the server's own steady clock saw it. A drop for --close-timeout
/// logs `quiet_ms()`: the time without progress that the server measured, which no client can
/// observe (its reads and the server's completed writes are apart by the kernel's buffers), so
/// an operator, and the tests, can check that the drop came --close-timeout after progress
/// stopped and not before. One clock read per piece, only while closing.
class progress_stamp {
public:
    void mark() noexcept { at_ = std::chrono::steady_clock::now(); }
    /// Whole milliseconds since the last mark(), rounded down.
    [[nodiscard]] long long quiet_ms() const noexcept {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - at_).count();
    }

private:
    std::chrono::steady_clock::time_point at_{};
};

}  // namespace demo

#endif
