// The TCP socket under a WebSocket session's beast::websocket::stream, with two hooks Beast
// itself does not offer:
//
//  - the peer's FIN (end of stream) is held back from Beast while the session still has echo
//    queued: Beast fails the whole stream on a read error, which would abandon frames the
//    socket would still accept. The session releases the end of stream once its queue drained
//    (or its drain deadline passed), and Beast then sees it as usual.
//  - Beast's teardown (the end of every close handshake, including the one Beast starts itself
//    after a protocol error, and its answer to the peer's close frame) waits for the peer's
//    FIN with no deadline. The session is told when a teardown starts, so it can time it with
//    --close-timeout, and can end it early: Beast then completes the read or close that started
//    it with its own outcome (closed, the protocol error, message too big), so the session
//    counts the cause Beast saw, not the timeout's.
//
// Under --tls the stack is websocket::stream<message_counting_stream<ssl::stream<session_socket>>>
// (message_count.hpp: a counting layer that forwards the teardown to the next): Beast's teardown of
// an ssl::stream first exchanges close_notify (async_shutdown, which waits for the peer's) and
// only then tears the socket down, so the overload at the end of this file tells the session
// when the TLS shutdown starts: the whole of it is under --close-timeout. The FIN is never held
// under TLS (the TLS layer, not Beast, sees it first): a peer's FIN or close_notify ends the
// session as soon as Beast sees it.
//
// Under --tls it is also where the bytes of a TLS handshake pass, so it bounds them
// (limit_handshake): OpenSSL takes a ClientHello of up to 128 KiB, and grows (and zeroes) its
// buffer to the length a hello declares as soon as the hello's header arrives.
#ifndef IDLEWHEEL_DEMO_SESSION_SOCKET_HPP
#define IDLEWHEEL_DEMO_SESSION_SOCKET_HPP

#include "write_progress.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <utility>

namespace demo {

/// What the socket asks of its session (the session outlives every operation on its socket).
class socket_events {
public:
    /// The peer sent FIN: hold it back from Beast (true) while echo is still queued.
    virtual bool hold_end_of_stream() = 0;
    /// Beast started its teardown (the last step of a close handshake).
    virtual void teardown_started() = 0;

protected:
    ~socket_events() = default;
};

class session_socket : public boost::asio::ip::tcp::socket {
public:
    using base = boost::asio::ip::tcp::socket;
    using read_handler = boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;

    session_socket(base&& s, socket_events& events) : base(std::move(s)), events_(&events) {}

    template <class MutableBuffers, class Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
            [this](auto handler, const MutableBuffers& b) {
                const auto ex = boost::asio::get_associated_executor(handler, get_executor());
                base::async_read_some(
                    b, boost::asio::bind_executor(
                           ex, [this, b, h = std::move(handler)](boost::system::error_code ec, std::size_t n) mutable {
                               if (!ec && hello_limit_ != 0) ec = check_handshake_bytes(b, n);
                               if (ec == boost::asio::error::eof && !held_ && events_->hold_end_of_stream()) {
                                   held_.emplace(std::move(h));  // constructed once, never assigned (Asio 1.81)
                                   return;
                               }
                               std::move(h)(ec, n);
                           }));
            },
            token, buffers);
    }

    /// True while the peer's FIN is held back.
    [[nodiscard]] bool end_of_stream_held() const noexcept { return held_.has_value(); }

    /// Gives the held FIN to Beast now (posted). No-op if none is held.
    void release_end_of_stream() {
        if (!held_) return;
        boost::asio::post(get_executor(),
                          [h = std::move(*held_)]() mutable { std::move(h)(boost::asio::error::eof, 0); });
        held_.reset();
    }

    /// Ends a teardown under way as if the peer had closed its side: Beast completes the
    /// operation that started it with that operation's own result. Closes the socket (a reset if
    /// the peer left bytes unacknowledged: reset_if_unsent).
    void end_teardown() {
        if (!in_teardown_) return;
        teardown_cut_ = true;
        reset_if_unsent(*this, 0);
        boost::system::error_code ignored;
        close(ignored);
    }

    /// --tls, from the first byte until the handshake completes: a first handshake record that
    /// opens a ClientHello declaring more than `hello` bytes, or more than `total` bytes read in
    /// all, fails the read with asio::error::message_size (so the handshake fails) and
    /// handshake_refusal() says which.
    void limit_handshake(std::size_t hello, std::size_t total) noexcept {
        hello_limit_ = hello;
        total_limit_ = total;
    }
    /// The handshake completed: no limit from now on.
    void end_handshake_limit() noexcept { hello_limit_ = 0; }
    /// Why limit_handshake() failed a read, or nullptr.
    [[nodiscard]] const char* handshake_refusal() const noexcept { return refusal_; }
    [[nodiscard]] bool in_teardown() const noexcept { return in_teardown_; }
    /// True once end_teardown() cut the teardown short.
    [[nodiscard]] bool teardown_cut() const noexcept { return teardown_cut_; }

    /// Beast's teardown begins (TLS: its close_notify exchange, then again the TCP one): tells
    /// the session once.
    void begin_teardown() {
        if (in_teardown_) return;
        in_teardown_ = true;
        events_->teardown_started();
    }

    // Found by argument-dependent lookup from Beast's close and read operations.
    template <class Handler>
    friend void async_teardown(boost::beast::role_type role, session_socket& s, Handler&& handler) {
        s.begin_teardown();
        boost::beast::websocket::async_teardown(
            role, static_cast<base&>(s),
            [&s, h = std::forward<Handler>(handler)](boost::system::error_code ec) mutable {
                if (s.teardown_cut_) ec = {};  // our deadline ended it, not an error of the peer's
                std::move(h)(ec);
            });
    }
    friend void teardown(boost::beast::role_type role, session_socket& s, boost::system::error_code& ec) {
        boost::beast::websocket::teardown(role, static_cast<base&>(s), ec);
    }

private:
    template <class Buffers>
    boost::system::error_code check_handshake_bytes(const Buffers& b, std::size_t n) noexcept {
        if (head_length_ < head_.size()) {
            head_length_ += boost::asio::buffer_copy(
                boost::asio::buffer(head_.data() + head_length_, head_.size() - head_length_), b, n);
            // A handshake record (content type 22) whose first message is a ClientHello (type 1):
            // the hello's length is in bytes 6 to 8.
            if (head_length_ == head_.size() && head_[0] == 22 && head_[5] == 1 &&
                (std::size_t{head_[6]} << 16 | std::size_t{head_[7]} << 8 | head_[8]) > hello_limit_)
                refusal_ = "the ClientHello declares more bytes than the server accepts";
        }
        read_in_handshake_ += n;
        if (refusal_ == nullptr && read_in_handshake_ > total_limit_)
            refusal_ = "the client sent more bytes before its handshake completed than the server accepts";
        return refusal_ != nullptr ? boost::asio::error::message_size : boost::system::error_code{};
    }

    socket_events* events_;
    std::optional<read_handler> held_;
    bool in_teardown_ = false;
    bool teardown_cut_ = false;
    std::size_t hello_limit_ = 0;  // 0: no handshake limit
    std::size_t total_limit_ = 0;
    std::size_t read_in_handshake_ = 0;
    std::array<unsigned char, 9> head_{};  // the first bytes: a record header and a handshake header
    std::size_t head_length_ = 0;
    const char* refusal_ = nullptr;
};

/// --tls: found by argument-dependent lookup (session_socket is a template argument) and more
/// specialised than Beast's overload for any ssl::stream, which it then runs.
template <class Handler>
void async_teardown(boost::beast::role_type role, boost::asio::ssl::stream<session_socket>& s, Handler&& handler) {
    session_socket& socket = s.next_layer();
    socket.begin_teardown();
    boost::beast::async_teardown(role, s, [&socket, h = std::forward<Handler>(handler)](boost::system::error_code ec) mutable {
        if (socket.teardown_cut()) ec = {};  // our deadline ended it, not an error of the peer's
        std::move(h)(ec);
    });
}

}  // namespace demo

#endif
