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
#ifndef IDLEWHEEL_DEMO_SESSION_SOCKET_HPP
#define IDLEWHEEL_DEMO_SESSION_SOCKET_HPP

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
                           ex, [this, h = std::move(handler)](boost::system::error_code ec, std::size_t n) mutable {
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
    /// operation that started it with that operation's own result. Closes the socket.
    void end_teardown() {
        if (!in_teardown_) return;
        teardown_cut_ = true;
        boost::system::error_code ignored;
        close(ignored);
    }
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
    socket_events* events_;
    std::optional<read_handler> held_;
    bool in_teardown_ = false;
    bool teardown_cut_ = false;
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
