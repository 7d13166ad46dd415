// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_SSL_STREAM_HPP
#define IDLEWHEEL_BEAST_SSL_STREAM_HPP

/** @file
 * @brief idlewheel::beast::ssl_stream: a TLS stream that moves even when its next layer does not.
 */

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace idlewheel::beast {

/**
 * A movable TLS stream over NextLayer.
 *
 * @tparam NextLayer the stream under TLS (idlewheel::beast::tcp_stream).
 *
 * idlewheel::beast::ssl_stream<NextLayer>: a TLS stream that moves even when its next layer does
 * not. idlewheel::beast::tcp_stream moves now (with no operation pending), so
 * boost::asio::ssl::stream<tcp_stream> and boost::beast::ssl_stream<tcp_stream> move as well
 * and a Beast server needs this class no more; it stays for the servers written against it
 * (1.0), and for a move while the next layer has an operation pending, which only a pointer
 * move allows.
 *
 *     ssl_stream<idlewheel::beast::tcp_stream> tls(std::move(socket), ctx);  // the tcp_stream built in place
 *     auto moved = std::move(tls);  // the TLS state and the tcp_stream stay where they are
 *
 * @par Why
 * A server hands a TLS connection on (HTTP session -> WebSocket session in Beast's
 * advanced server) by moving its stream. boost::asio::ssl::stream holds its next layer by
 * value, so it moves only if the next layer does (up to 1.0 this one did not). Beast's own boost::beast::ssl_stream held it
 * by pointer up to Boost 1.85; from 1.86 it is deprecated and derives from asio::ssl::stream
 * (by value again). This one holds boost::asio::ssl::stream<NextLayer> on the heap (one
 * allocation per connection, as Beast's did), so a move is a pointer move and the next layer,
 * whose address the wheel and any pending operation hold, never moves.
 *
 * @par Interface
 * asio::ssl::stream's (handshake, shutdown, read_some, write_some and their async_
 * forms, next_layer(), lowest_layer(), native_handle(), get_executor()); everything else of the
 * asio stream (set_verify_mode, set_verify_callback, ...) through stream(). Composes as Beast's:
 * boost::beast::get_lowest_layer() goes through next_layer(); websocket::stream<ssl_stream<...>>
 * finds teardown / async_teardown here (the asio stream's, from boost/beast/websocket/ssl.hpp:
 * a TLS shutdown). A moved-from ssl_stream may only be destroyed or assigned to.
 *
 * @par Completion, cancellation, errors
 * Every operation is asio::ssl::stream's, forwarded: its handlers, completion signatures,
 * per-operation cancellation and errors are that stream's. The deadlines are the next
 * layer's (tcp_stream::expires_after()).
 *
 * @par Thread safety
 * As asio::ssl::stream (distinct objects safe, shared objects unsafe).
 */
template <class NextLayer>
class ssl_stream : public boost::asio::ssl::stream_base {
public:
    /// The asio stream held.
    using stream_type = boost::asio::ssl::stream<NextLayer>;
    using next_layer_type = typename stream_type::next_layer_type;        ///< NextLayer.
    /// The next layer's lowest layer (the socket).
    using lowest_layer_type = typename stream_type::lowest_layer_type;
    using executor_type = typename stream_type::executor_type;            ///< The next layer's executor.
    using native_handle_type = typename stream_type::native_handle_type;  ///< OpenSSL's SSL*.

    /// Builds the next layer in place from `arg` (a tcp::socket&& for a tcp_stream), with `ctx`.
    /// One allocation.
    /// @param arg the next layer's constructor argument.
    /// @param ctx the TLS context; must outlive the stream.
    template <class Arg>
    ssl_stream(Arg&& arg, boost::asio::ssl::context& ctx)
        : p_(std::make_unique<stream_type>(std::forward<Arg>(arg), ctx)) {}

    /// A pointer move: the TLS state and the next layer stay where they are. No operation may
    /// be started on the moved-from object.
    ssl_stream(ssl_stream&&) noexcept = default;
    /// A pointer move, as the move constructor.
    /// @return *this.
    ssl_stream& operator=(ssl_stream&&) noexcept = default;

    /// The next layer's executor.
    [[nodiscard]] executor_type get_executor() noexcept { return p_->get_executor(); }
    /// OpenSSL's SSL* (for SNI, ALPN, ...).
    [[nodiscard]] native_handle_type native_handle() { return p_->native_handle(); }
    /// The next layer (the tcp_stream: its expires_after() sets the deadlines).
    [[nodiscard]] next_layer_type& next_layer() noexcept { return p_->next_layer(); }
    /// The next layer (const).
    [[nodiscard]] const next_layer_type& next_layer() const noexcept { return p_->next_layer(); }
    /// The lowest layer (the socket).
    [[nodiscard]] lowest_layer_type& lowest_layer() noexcept { return p_->lowest_layer(); }
    /// The lowest layer (const).
    [[nodiscard]] const lowest_layer_type& lowest_layer() const noexcept { return p_->lowest_layer(); }
    /// The asio stream, for what this class does not forward.
    [[nodiscard]] stream_type& stream() noexcept { return *p_; }
    /// The asio stream (const).
    [[nodiscard]] const stream_type& stream() const noexcept { return *p_; }

    /// As asio::ssl::stream::handshake.
    /// @param type client or server.
    /// @throws boost::system::system_error on failure.
    void handshake(handshake_type type) { p_->handshake(type); }
    /// As asio::ssl::stream::handshake.
    /// @param type client or server.
    /// @param ec set to the result.
    void handshake(handshake_type type, boost::system::error_code& ec) { p_->handshake(type, ec); }
    /// The buffered form of handshake (bytes already read).
    /// @param type client or server.
    /// @param buffers the bytes already read.
    /// @throws boost::system::system_error on failure.
    template <class ConstBufferSequence,
              std::enable_if_t<boost::asio::is_const_buffer_sequence<ConstBufferSequence>::value, int> = 0>
    void handshake(handshake_type type, const ConstBufferSequence& buffers) {
        p_->handshake(type, buffers);
    }
    /// The buffered form of handshake (bytes already read).
    /// @param type client or server.
    /// @param buffers the bytes already read.
    /// @param ec set to the result.
    template <class ConstBufferSequence>
    void handshake(handshake_type type, const ConstBufferSequence& buffers, boost::system::error_code& ec) {
        p_->handshake(type, buffers, ec);
    }
    /// As asio::ssl::stream::async_handshake. Completion: void(error_code).
    /// @param type client or server.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class Token = boost::asio::default_completion_token_t<executor_type>>
    auto async_handshake(handshake_type type, Token&& token = boost::asio::default_completion_token_t<executor_type>()) {
        return p_->async_handshake(type, std::forward<Token>(token));
    }
    /// The buffered form (bytes already read, for example by async_detect_ssl). Completion:
    /// void(error_code, std::size_t bytes_used).
    /// @param type client or server.
    /// @param buffers the bytes already read.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class ConstBufferSequence, class Token = boost::asio::default_completion_token_t<executor_type>,
              std::enable_if_t<boost::asio::is_const_buffer_sequence<ConstBufferSequence>::value, int> = 0>
    auto async_handshake(handshake_type type, const ConstBufferSequence& buffers,
                         Token&& token = boost::asio::default_completion_token_t<executor_type>()) {
        return p_->async_handshake(type, buffers, std::forward<Token>(token));
    }

    /// As asio::ssl::stream::shutdown (sends close_notify, waits for the peer's).
    /// @throws boost::system::system_error on failure.
    void shutdown() { p_->shutdown(); }
    /// As asio::ssl::stream::shutdown.
    /// @param ec set to the result.
    void shutdown(boost::system::error_code& ec) { p_->shutdown(ec); }
    /// As asio::ssl::stream::async_shutdown. Completion: void(error_code).
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class Token = boost::asio::default_completion_token_t<executor_type>>
    auto async_shutdown(Token&& token = boost::asio::default_completion_token_t<executor_type>()) {
        return p_->async_shutdown(std::forward<Token>(token));
    }

    /// As asio::ssl::stream::read_some (no deadline).
    /// @param buffers where the data goes.
    /// @return the bytes read.
    /// @throws boost::system::system_error on failure.
    template <class MutableBufferSequence>
    std::size_t read_some(const MutableBufferSequence& buffers) {
        return p_->read_some(buffers);
    }
    /// As asio::ssl::stream::read_some (no deadline).
    /// @param buffers where the data goes.
    /// @param ec set to the result.
    /// @return the bytes read.
    template <class MutableBufferSequence>
    std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
        return p_->read_some(buffers, ec);
    }
    /// As asio::ssl::stream::write_some (no deadline).
    /// @param buffers the data.
    /// @return the bytes written.
    /// @throws boost::system::system_error on failure.
    template <class ConstBufferSequence>
    std::size_t write_some(const ConstBufferSequence& buffers) {
        return p_->write_some(buffers);
    }
    /// As asio::ssl::stream::write_some (no deadline).
    /// @param buffers the data.
    /// @param ec set to the result.
    /// @return the bytes written.
    template <class ConstBufferSequence>
    std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
        return p_->write_some(buffers, ec);
    }
    /// As asio::ssl::stream::async_read_some. Completion: void(error_code, std::size_t).
    /// @param buffers where the data goes; kept alive by the caller until the handler runs.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class MutableBufferSequence, class Token = boost::asio::default_completion_token_t<executor_type>>
    auto async_read_some(const MutableBufferSequence& buffers,
                         Token&& token = boost::asio::default_completion_token_t<executor_type>()) {
        return p_->async_read_some(buffers, std::forward<Token>(token));
    }
    /// As asio::ssl::stream::async_write_some. Completion: void(error_code, std::size_t).
    /// @param buffers the data; kept alive by the caller until the handler runs.
    /// @param token the completion token.
    /// @return what the token's async_result makes of it.
    template <class ConstBufferSequence, class Token = boost::asio::default_completion_token_t<executor_type>>
    auto async_write_some(const ConstBufferSequence& buffers,
                          Token&& token = boost::asio::default_completion_token_t<executor_type>()) {
        return p_->async_write_some(buffers, std::forward<Token>(token));
    }

private:
    std::unique_ptr<stream_type> p_;
};

/// The WebSocket teardown (websocket::stream calls it by argument-dependent lookup): the asio
/// stream's, a TLS shutdown (boost/beast/websocket/ssl.hpp).
/// @param role client or server.
/// @param stream the stream.
/// @param ec set to the result.
template <class NextLayer>
void teardown(boost::beast::role_type role, ssl_stream<NextLayer>& stream, boost::system::error_code& ec) {
    using boost::beast::websocket::teardown;
    teardown(role, stream.stream(), ec);
}

/// The asynchronous WebSocket teardown: the asio stream's.
/// @param role client or server.
/// @param stream the stream.
/// @param handler called with void(error_code).
template <class NextLayer, class TeardownHandler>
void async_teardown(boost::beast::role_type role, ssl_stream<NextLayer>& stream, TeardownHandler&& handler) {
    using boost::beast::websocket::async_teardown;
    async_teardown(role, stream.stream(), std::forward<TeardownHandler>(handler));
}

}  // namespace idlewheel::beast

#endif
