// The layer between a web session's transport and what runs over it (HTTP, the TLS stream, the
// WebSocket stream), with two hooks Beast itself does not offer:
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
// Transport is the timer policy's stream (Policy::web_stream, timers/*.hpp): the bare socket in
// every mode (wheel_timers.hpp and asio_timers.hpp say why), or a tcp_stream (Beast's or
// idlewheel's) for a policy that wanted one. The hooks are a layer over it, not a part of it,
// because neither tcp_stream can give them: the FIN hold keeps a completed read's handler back from the layer
// above, which a stream that reports every completion as it comes (both do, as Beast's
// contract says) never does; and their teardowns (async_teardown on the stream, found by
// argument-dependent lookup) report the end of a close, not its start, and have no way to be
// cut short with the outcome left to the operation that started them. Those two are what the
// demo needs beyond the streams' own timeouts; the timeouts themselves stay off (the session's
// liveness is its policy's: web_session.hpp says why).
//
// Under --tls the stack is websocket::stream<message_counting_stream<ssl::stream<session_stream<T>>>>
// (message_count.hpp: a counting layer that forwards the teardown to the next): Beast's teardown
// of an ssl::stream first exchanges close_notify (async_shutdown, which waits for the peer's) and
// only then tears the transport down, so the overload at the end of this file tells the session
// when the TLS shutdown starts: the whole of it is under --close-timeout. The FIN is never held
// under TLS (the TLS layer, not Beast, sees it first): a peer's FIN or close_notify ends the
// session as soon as Beast sees it.
//
// Under --tls it is also where the bytes of a TLS handshake pass, so it bounds them
// (limit_handshake): OpenSSL takes a ClientHello of up to 128 KiB, and grows (and zeroes) its
// buffer to the length a hello declares as soon as the hello's header arrives.
#ifndef IDLEWHEEL_DEMO_SESSION_STREAM_HPP
#define IDLEWHEEL_DEMO_SESSION_STREAM_HPP

#include "read_through.hpp"
#include "write_progress.hpp"

#include <boost/asio/any_completion_handler.hpp>
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

/// What the layer asks of its session (the session outlives every operation on its stream).
class socket_events {
public:
    /// The peer sent FIN: hold it back from Beast (true) while echo is still queued.
    virtual bool hold_end_of_stream() = 0;
    /// Beast started its teardown (the last step of a close handshake).
    virtual void teardown_started() = 0;

protected:
    ~socket_events() = default;
};

/// The socket of a transport: the socket itself, or a stream's socket() (both tcp_streams).
inline boost::asio::ip::tcp::socket& socket_of(boost::asio::ip::tcp::socket& s) noexcept { return s; }
template <class Stream>
auto& socket_of(Stream& s) noexcept {
    return s.socket();
}

template <class Transport>
class session_stream {
public:
    using next_layer_type = Transport;
    using executor_type = typename Transport::executor_type;
    using lowest_layer_type = boost::asio::ip::tcp::socket::lowest_layer_type;  // what ssl::stream asks for
    using read_handler = boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;

    session_stream(Transport&& t, socket_events& events) : next_(std::move(t)), events_(&events) {}

    [[nodiscard]] executor_type get_executor() noexcept { return next_.get_executor(); }
    [[nodiscard]] Transport& next_layer() noexcept { return next_; }
    [[nodiscard]] boost::asio::ip::tcp::socket& socket() noexcept { return socket_of(next_); }
    [[nodiscard]] lowest_layer_type& lowest_layer() noexcept { return socket().lowest_layer(); }

    template <class MutableBuffers, class Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return async_read_some_through(
            next_, buffers, std::forward<Token>(token),
            [this](boost::system::error_code ec, std::size_t n, const MutableBuffers& b, auto&& h) {
                if (!ec && hello_limit_ != 0) ec = check_handshake_bytes(b, n);
                if (ec == boost::asio::error::eof && !held_ && events_->hold_end_of_stream()) {
                    held_.emplace(std::move(h));  // constructed once, never assigned (Asio 1.81)
                    return;
                }
                std::move(h)(ec, n);
            });
    }

    template <class ConstBuffers, class Token>
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        return next_.async_write_some(buffers, std::forward<Token>(token));
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
        reset_if_unsent(socket(), 0);
        boost::system::error_code ignored;
        socket().close(ignored);
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

    // Found by argument-dependent lookup from Beast's close and read operations: the
    // transport's own teardown, told first and cut short by end_teardown().
    template <class Handler>
    friend void async_teardown(boost::beast::role_type role, session_stream& s, Handler&& handler) {
        s.begin_teardown();
        using boost::beast::websocket::async_teardown;
        async_teardown(role, s.next_, [&s, h = std::forward<Handler>(handler)](boost::system::error_code ec) mutable {
            if (s.teardown_cut_) ec = {};  // our deadline ended it, not an error of the peer's
            std::move(h)(ec);
        });
    }
    friend void teardown(boost::beast::role_type role, session_stream& s, boost::system::error_code& ec) {
        using boost::beast::websocket::teardown;
        teardown(role, s.next_, ec);
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

    Transport next_;
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

/// The layer of a web session's stream: the session_stream itself, or under an ssl::stream.
template <class Transport>
session_stream<Transport>& hooks_of(session_stream<Transport>& s) noexcept {
    return s;
}
template <class Transport>
session_stream<Transport>& hooks_of(boost::asio::ssl::stream<session_stream<Transport>>& s) noexcept {
    return s.next_layer();
}

/// --tls: found by argument-dependent lookup (session_stream is a template argument) and more
/// specialised than Beast's overload for any ssl::stream, which it then runs.
template <class Transport, class Handler>
void async_teardown(boost::beast::role_type role, boost::asio::ssl::stream<session_stream<Transport>>& s,
                    Handler&& handler) {
    session_stream<Transport>& layer = s.next_layer();
    layer.begin_teardown();
    boost::beast::async_teardown(role, s,
                                 [&layer, h = std::forward<Handler>(handler)](boost::system::error_code ec) mutable {
                                     // Our deadline ended it, not an error of the peer's.
                                     if (layer.teardown_cut()) ec = {};
                                     std::move(h)(ec);
                                 });
}

}  // namespace demo

#endif
