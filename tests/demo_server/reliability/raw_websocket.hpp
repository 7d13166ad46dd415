// A WebSocket client written by hand over raw_socket (RFC 6455), for the frames a correct
// library refuses to send: unmasked client frames, reserved bits, invalid UTF-8 in a text
// frame, a header that declares more than the server accepts. Also reads the server's frames
// (close code included) without any automatic reply, so a test decides what the client does.
#ifndef IDLEWHEEL_TESTS_RELIABILITY_RAW_WEBSOCKET_HPP
#define IDLEWHEEL_TESTS_RELIABILITY_RAW_WEBSOCKET_HPP

#include "raw_socket.hpp"

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reliability {

namespace opcode {
inline constexpr std::uint8_t continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA;
}

struct ws_frame {
    bool fin = true;
    std::uint8_t opcode = 0;
    std::string payload;

    /// The close code of a close frame (1005 "no status" if the payload has none).
    [[nodiscard]] unsigned close_code() const {
        if (payload.size() < 2) return 1005;
        return (static_cast<unsigned>(static_cast<unsigned char>(payload[0])) << 8) | static_cast<unsigned char>(payload[1]);
    }
};

/// One frame on the wire. `masked` false makes a frame no client may send; `first_byte`
/// overrides FIN/RSV/opcode; `declared_length` overrides the length field (the payload sent is
/// still `payload`).
inline std::string make_frame(std::uint8_t op, std::string_view payload, bool masked = true,
                              std::optional<std::uint64_t> declared_length = std::nullopt,
                              std::optional<std::uint8_t> first_byte = std::nullopt) {
    std::string f;
    f.push_back(static_cast<char>(first_byte.value_or(static_cast<std::uint8_t>(0x80 | op))));
    const std::uint64_t len = declared_length.value_or(payload.size());
    const std::uint8_t mask_bit = masked ? 0x80 : 0x00;
    if (len < 126) {
        f.push_back(static_cast<char>(mask_bit | len));
    } else if (len <= 0xFFFF) {
        f.push_back(static_cast<char>(mask_bit | 126));
        f.push_back(static_cast<char>((len >> 8) & 0xFF));
        f.push_back(static_cast<char>(len & 0xFF));
    } else {
        f.push_back(static_cast<char>(mask_bit | 127));
        for (int shift = 56; shift >= 0; shift -= 8) f.push_back(static_cast<char>((len >> shift) & 0xFF));
    }
    const unsigned char key[4] = {0x37, 0xFA, 0x21, 0x3D};
    if (masked) f.append(reinterpret_cast<const char*>(key), 4);
    for (std::size_t i = 0; i < payload.size(); ++i)
        f.push_back(masked ? static_cast<char>(static_cast<unsigned char>(payload[i]) ^ key[i % 4]) : payload[i]);
    return f;
}

/// The upgrade request, with the RFC's sample key (its accept value is checked below).
inline std::string upgrade_request(const std::string& host, unsigned short port) {
    return "GET / HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
           "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           "Sec-WebSocket-Version: 13\r\n\r\n";
}

class raw_websocket {
public:
    /// TCP connect and the upgrade, by hand. Throws std::runtime_error if the server does not
    /// answer 101 with the right Sec-WebSocket-Accept in time.
    static raw_websocket connect(const std::string& host, unsigned short port, clock::duration timeout = 5s,
                                 int receive_buffer = 0) {
        raw_websocket ws;
        const auto deadline = clock::now() + timeout;
        ws.socket_ = raw_socket::connect(host, port, timeout, receive_buffer);
        if (ws.socket_.send_all(upgrade_request(host, port), deadline) != io_status::ok)
            throw std::runtime_error("websocket upgrade: send failed");
        for (;;) {
            const auto end = ws.in_.find("\r\n\r\n");
            if (end != std::string::npos) {
                const std::string head = ws.in_.substr(0, end + 4);
                ws.in_.erase(0, end + 4);  // frames may follow at once
                if (head.rfind("HTTP/1.1 101", 0) != 0 || head.find("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == std::string::npos)
                    throw std::runtime_error("websocket upgrade refused: " + head);
                return ws;
            }
            const auto s = ws.socket_.recv_some(ws.in_, deadline);
            if (s != io_status::ok) throw std::runtime_error(std::string("websocket upgrade: ") + to_string(s) + " after '" + ws.in_ + "'");
        }
    }

    io_status send_frame(std::uint8_t op, std::string_view payload, clock::duration timeout = 5s) {
        return socket_.send_all(make_frame(op, payload), timeout);
    }
    io_status send_raw(std::string_view bytes, clock::duration timeout = 5s) { return socket_.send_all(bytes, timeout); }

    /// Reads the next frame (any opcode). Nothing on EOF, reset or timeout; `status` says which.
    std::optional<ws_frame> read_frame(clock::time_point deadline, io_status* status = nullptr) {
        for (;;) {
            if (auto f = parse()) {
                if (status) *status = io_status::ok;
                return f;
            }
            const auto s = socket_.recv_some(in_, deadline);
            if (s != io_status::ok) {
                if (status) *status = s;
                return std::nullopt;
            }
        }
    }

    /// Reads frames until a close frame (answering nothing); its code, or nothing.
    std::optional<unsigned> read_close_code(clock::time_point deadline) {
        while (auto f = read_frame(deadline)) {
            if (f->opcode == opcode::close) return f->close_code();
        }
        return std::nullopt;
    }

    /// One message echoed: sends a masked text frame, waits for the same text (pings answered).
    bool echo(std::string_view text, clock::duration timeout = 5s) {
        const auto deadline = clock::now() + timeout;
        if (send_frame(opcode::text, text, timeout) != io_status::ok) return false;
        while (auto f = read_frame(deadline)) {
            if (f->opcode == opcode::ping) {
                send_frame(opcode::pong, f->payload, timeout);
                continue;
            }
            return f->opcode == opcode::text && f->payload == text;
        }
        return false;
    }

    raw_socket& socket() noexcept { return socket_; }

private:
    // One whole frame from in_, if it is all there (server frames: unmasked).
    std::optional<ws_frame> parse() {
        if (in_.size() < 2) return std::nullopt;
        const auto byte = [this](std::size_t i) { return static_cast<std::uint8_t>(in_[i]); };
        std::size_t header = 2;
        std::uint64_t len = byte(1) & 0x7F;
        if (len == 126) {
            header = 4;
            if (in_.size() < header) return std::nullopt;
            len = (std::uint64_t{byte(2)} << 8) | byte(3);
        } else if (len == 127) {
            header = 10;
            if (in_.size() < header) return std::nullopt;
            len = 0;
            for (std::size_t i = 2; i < 10; ++i) len = (len << 8) | byte(i);
        }
        const bool masked = (byte(1) & 0x80) != 0;
        if (masked) header += 4;
        if (in_.size() < header + len) return std::nullopt;
        ws_frame f;
        f.fin = (byte(0) & 0x80) != 0;
        f.opcode = byte(0) & 0x0F;
        f.payload = in_.substr(header, static_cast<std::size_t>(len));
        if (masked)
            for (std::size_t i = 0; i < f.payload.size(); ++i) f.payload[i] = static_cast<char>(f.payload[i] ^ in_[header - 4 + i % 4]);
        in_.erase(0, header + static_cast<std::size_t>(len));
        return f;
    }

    raw_socket socket_;
    std::string in_;
};

// Reads the frames of many clients as they come: polls the sockets of the clients that
// `waiting(i)` still waits for (20 ms at a time), reads one frame from each readable one and
// hands it to `on_frame(i, frame)` (nullopt: the connection ended or failed), while
// `go_on()`. A frame still arriving (its read timed out) is read again at the next poll.
// `on_frame` must end the wait for that client (waiting(i) false); returns when none waits.
template <class Waiting, class GoOn, class OnFrame>
void read_frames_as_they_come(std::vector<raw_websocket>& clients, Waiting&& waiting, GoOn&& go_on,
                              OnFrame&& on_frame) {
    while (go_on()) {
        std::vector<pollfd> fds;
        std::vector<std::size_t> which;
        for (std::size_t i = 0; i < clients.size(); ++i)
            if (waiting(i)) {
                fds.push_back({clients[i].socket().fd(), POLLIN, 0});
                which.push_back(i);
            }
        if (fds.empty()) return;
        if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
            const auto i = which[k];
            io_status st = io_status::ok;
            const auto f = clients[i].read_frame(clock::now() + std::chrono::milliseconds(200), &st);
            if (!f && st == io_status::timeout) continue;  // a partial frame: more to come
            on_frame(i, f);
        }
    }
}

}  // namespace reliability

#endif
