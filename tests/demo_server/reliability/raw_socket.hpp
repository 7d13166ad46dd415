// A loopback TCP client on plain POSIX sockets, every call bounded by a deadline (poll).
//
// Bad clients need what a well-behaved library will not do: trickle one byte at a time, stop
// reading while the kernel keeps ACKing, send bytes that are not a valid frame, watch for the
// server's FIN without consuming the data queued before it. A non-blocking socket and poll()
// give exactly that, with no event loop to run.
#ifndef IDLEWHEEL_TESTS_RELIABILITY_RAW_SOCKET_HPP
#define IDLEWHEEL_TESTS_RELIABILITY_RAW_SOCKET_HPP

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace reliability {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline double ms(clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

/// What a read or a wait saw.
enum class io_status { ok, eof, reset, timeout, error };

inline const char* to_string(io_status s) {
    switch (s) {
        case io_status::ok: return "ok";
        case io_status::eof: return "eof";
        case io_status::reset: return "reset";
        case io_status::timeout: return "timeout";
        case io_status::error: return "error";
    }
    return "?";
}
inline std::ostream& operator<<(std::ostream& os, io_status s) { return os << to_string(s); }

class raw_socket {
public:
    raw_socket() = default;
    raw_socket(const raw_socket&) = delete;
    raw_socket& operator=(const raw_socket&) = delete;
    raw_socket(raw_socket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    raw_socket& operator=(raw_socket&& o) noexcept {
        if (this != &o) {
            close();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    ~raw_socket() { close(); }

    /// Connects to host:port within `timeout`. `receive_buffer` > 0 sets SO_RCVBUF before the
    /// connect (so the window is small from the first segment). Throws std::runtime_error.
    static raw_socket connect(const std::string& host, unsigned short port, clock::duration timeout = 5s, int receive_buffer = 0) {
        raw_socket s;
        s.fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s.fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
        if (receive_buffer > 0) ::setsockopt(s.fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
        const int one = 1;
        ::setsockopt(s.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("bad IPv4 address " + host);
        if (::connect(s.fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            if (errno != EINPROGRESS) throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
            if (!s.wait(POLLOUT, clock::now() + timeout)) throw std::runtime_error("connect: timed out");
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(s.fd_, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) throw std::runtime_error(std::string("connect: ") + std::strerror(err));
        }
        return s;
    }

    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }

    /// Sends all of `data` before `deadline`. ok, or reset/error (EPIPE counts as reset), or
    /// timeout (the peer's window stayed shut).
    io_status send_all(std::string_view data, clock::time_point deadline) {
        while (!data.empty()) {
            const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
            if (n > 0) {
                data.remove_prefix(static_cast<std::size_t>(n));
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (!wait(POLLOUT, deadline)) return io_status::timeout;
                continue;
            }
            return errno == EPIPE || errno == ECONNRESET ? io_status::reset : io_status::error;
        }
        return io_status::ok;
    }
    io_status send_all(std::string_view data, clock::duration timeout = 5s) { return send_all(data, clock::now() + timeout); }

    /// Appends what arrives (at least one byte) to `into`. ok, eof, reset, timeout or error.
    io_status recv_some(std::string& into, clock::time_point deadline) {
        char buf[16 * 1024];
        for (;;) {
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n > 0) {
                into.append(buf, static_cast<std::size_t>(n));
                return io_status::ok;
            }
            if (n == 0) return io_status::eof;
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!wait(POLLIN, deadline)) return io_status::timeout;
                continue;
            }
            return errno == ECONNRESET ? io_status::reset : io_status::error;
        }
    }

    /// Reads until `into` holds at least `n` bytes.
    io_status recv_at_least(std::string& into, std::size_t n, clock::time_point deadline) {
        while (into.size() < n) {
            const auto s = recv_some(into, deadline);
            if (s != io_status::ok) return s;
        }
        return io_status::ok;
    }

    /// Reads (and drops) everything until the peer closes: eof or reset; timeout otherwise.
    io_status drain_until_closed(clock::time_point deadline) {
        std::string sink;
        for (;;) {
            sink.clear();
            const auto s = recv_some(sink, deadline);
            if (s != io_status::ok) return s;
        }
    }

    /// Waits for the peer's FIN or RST *without reading*: the data queued before it stays
    /// unread, as for a client that stopped reading. True if it came before `deadline`.
    bool wait_peer_gone(clock::time_point deadline) { return wait(POLLRDHUP, deadline, true); }

    /// Makes close() send a RST instead of a FIN (SO_LINGER 0).
    void linger_reset() noexcept {
        linger l{1, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }

    void shutdown_write() noexcept { ::shutdown(fd_, SHUT_WR); }

    void close() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    // Polls for `events`; with `hangup_only`, POLLIN alone (unread data) does not count.
    bool wait(short events, clock::time_point deadline, bool hangup_only = false) const {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
            if (left <= 0) return false;
            pollfd p{fd_, events, 0};
            const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
            if (n < 0 && errno != EINTR) return true;  // let the caller's next call report it
            if (n <= 0) continue;
            if (!hangup_only) return true;
            if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
        }
    }

    int fd_ = -1;
};

}  // namespace reliability

#endif
