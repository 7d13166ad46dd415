// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_HTTP_TIMEOUTS_HPP
#define IDLEWHEEL_BEAST_HTTP_TIMEOUTS_HPP

/** @file
 * @brief idlewheel::beast::http_timeouts: HTTP/1.1 server deadlines (keep-alive, header, body,
 * send) on idlewheel::beast::tcp_stream.
 */

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#error \
    "idlewheel/beast/http_timeouts.hpp needs Boost.Beast, which works with Boost.Asio only: it cannot be used with IDLEWHEEL_STANDALONE_ASIO"
#endif

#include <idlewheel/beast/tcp_stream.hpp>

#include <boost/asio/compose.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

namespace idlewheel::beast {

/**
 * The deadlines of an HTTP/1.1 server session, for async_read_request() and
 * async_write_response(). Zero, the default, is "no deadline" for that phase; negative
 * durations are "no deadline" too.
 *
 * @par Overview
 * HTTP/1.1 server deadlines as servers are configured with them (nginx's keepalive_timeout,
 * client_header_timeout, client_body_timeout, send_timeout), on idlewheel::beast::tcp_stream:
 * two composed operations that replace Beast's http::async_read / http::async_write in a
 * server session, and set the stream's deadline for each phase themselves.
 *
 *     idlewheel::beast::http_timeouts timeouts{.keep_alive = 60s, .header = 10s, .body = 30s, .send = 10s};
 *     ...
 *     idlewheel::beast::async_read_request(stream_, buffer_, req_, timeouts,
 *         beast::bind_front_handler(&session::on_read, shared_from_this()));
 *     ...
 *     idlewheel::beast::async_write_response(stream_, res_, timeouts,
 *         beast::bind_front_handler(&session::on_write, shared_from_this()));
 *
 * @par Phases
 * The phases of async_read_request (each duration zero, the default, means "no deadline"):
 *  - keep_alive: waiting for the first byte of a request (the first request of a connection
 *    too: pass other timeouts for the first read to give it less). A request whose bytes are
 *    already in the buffer (pipelined) skips this phase. Ends with http_error::keep_alive_timeout,
 *    or http::error::end_of_stream if the peer closes before sending a byte (Beast's word for a
 *    clean end between requests).
 *  - header: from the moment the first byte was read until the header is complete. It is a
 *    deadline, not an idle time: bytes trickled a few at a time (slowloris) do not extend it.
 *    Ends with http_error::header_timeout.
 *  - body: from the end of the header until the body is complete, a deadline likewise (a
 *    body trickled slowly is cut); size it for the largest upload you accept, or read large
 *    bodies yourself. Ends with http_error::body_timeout.
 * async_write_response has one: send, the longest time with no write progress (each piece the
 * stream writes restarts it), so a slow but steady reader of a large response is served and a
 * reader that stops is cut. Ends with http_error::send_timeout.
 *
 * @par Errors
 * When a deadline passes the socket is closed (as for any deadline of the stream) and the
 * operation completes with the phase's code; every one of them compares equal to
 * boost::beast::condition::timeout (`ec == beast::error::timeout` does not: it names the
 * stream's own code; test the condition, or the phase). Other errors pass through unchanged.
 * The deadlines are exact to the wheel's precision: never early, at most one tick late.
 *
 * @par The stream
 * Anything whose boost::beast::get_lowest_layer() is an idlewheel::beast::basic_tcp_stream
 * (the stream itself, beast::ssl_stream<tcp_stream>, ...). The operations set its expiry with
 * expires_after() / expires_never() (Beast's rule: the directions with no operation pending),
 * and leave it at never when they complete, so a later operation that sets none has none.
 *
 * @par Thread safety
 * Every call on the stream's executor, as for the stream.
 *
 * @par Cost
 * A store and a compare per phase on the stream (its lazy re-arm), a clock read per
 * phase; the parser overload allocates nothing; the message overload, as Beast's, allocates
 * a parser per request.
 */
struct http_timeouts {
    /// Waiting for the first byte of a request (nginx: keepalive_timeout).
    std::chrono::nanoseconds keep_alive{};
    /// From the first byte until the header is complete; trickled bytes do not extend it
    /// (nginx: client_header_timeout).
    std::chrono::nanoseconds header{};
    /// From the end of the header until the body is complete (a deadline for the whole body).
    std::chrono::nanoseconds body{};
    /// The longest time without write progress while a response is written (nginx: send_timeout).
    std::chrono::nanoseconds send{};
};

/// Which deadline of http_timeouts passed. Each compares equal to boost::beast::condition::timeout.
enum class http_error {
    keep_alive_timeout = 1,  ///< no request began within http_timeouts::keep_alive
    header_timeout,          ///< the header was not complete within http_timeouts::header
    body_timeout,            ///< the body was not complete within http_timeouts::body
    send_timeout,            ///< the response made no progress for http_timeouts::send
};

namespace detail {
class http_error_category final : public boost::system::error_category {
public:
    constexpr http_error_category() noexcept : boost::system::error_category(0x1d1e'3bee'5a4c'0002ULL) {}
    [[nodiscard]] const char* name() const noexcept override { return "idlewheel.http"; }
    [[nodiscard]] std::string message(int ev) const override {
        switch (static_cast<http_error>(ev)) {
            case http_error::keep_alive_timeout: return "keep-alive timeout: no request began in time";
            case http_error::header_timeout: return "request header timeout";
            case http_error::body_timeout: return "request body timeout";
            case http_error::send_timeout: return "send timeout: the response made no progress in time";
        }
        return "unknown idlewheel.http error";
    }
    [[nodiscard]] bool equivalent(int, const boost::system::error_condition& condition) const noexcept override {
        return condition == boost::beast::condition::timeout;
    }
};
}  // namespace detail

/// The category of http_error (name "idlewheel.http"); its codes compare equal to
/// boost::beast::condition::timeout.
[[nodiscard]] inline const boost::system::error_category& http_error_category() noexcept {
    static const detail::http_error_category category;
    return category;
}

/// The error_code of `e` (found by argument-dependent lookup).
/// @param e the error.
/// @return the code, in http_error_category().
[[nodiscard]] inline boost::system::error_code make_error_code(http_error e) noexcept {
    return {static_cast<int>(e), http_error_category()};
}

}  // namespace idlewheel::beast

/// @cond IDLEWHEEL_SPECIALIZATIONS
template <>
struct boost::system::is_error_code_enum<idlewheel::beast::http_error> : std::true_type {};
/// @endcond

namespace idlewheel::beast {
namespace detail {

template <class Stream>
auto& deadline_layer(Stream& stream) noexcept {
    auto& lowest = boost::beast::get_lowest_layer(stream);
    static_assert(is_basic_tcp_stream<std::remove_reference_t<decltype(lowest)>>::value,
                  "idlewheel::beast HTTP timeouts: the stream's lowest layer must be an idlewheel::beast::tcp_stream");
    return lowest;
}

template <class Stream>
void set_deadline(Stream& stream, std::chrono::nanoseconds d) {
    auto& lowest = deadline_layer(stream);
    if (d > std::chrono::nanoseconds::zero())
        lowest.expires_after(d);
    else
        lowest.expires_never();
}

inline void name_timeout(boost::system::error_code& ec, http_error phase) {
    if (ec == boost::beast::error::timeout) ec = phase;
}

// The parser a read fills: the caller's, or one of its own (the message overload).
template <class Parser>
struct parser_ref {
    Parser& parser;
    Parser& get() noexcept { return parser; }
    void finish(const boost::system::error_code&) noexcept {}
};
template <class Parser, class Message>
struct owned_parser {
    std::unique_ptr<Parser> parser = std::make_unique<Parser>();
    Message* message;
    Parser& get() noexcept { return *parser; }
    void finish(const boost::system::error_code& ec) {
        if (!ec) *message = parser->release();
    }
};

template <class Stream, class DynamicBuffer, class ParserHolder>
class read_request_op {
public:
    read_request_op(Stream& stream, DynamicBuffer& buffer, ParserHolder holder, const http_timeouts& timeouts)
        : stream_(stream), buffer_(buffer), holder_(std::move(holder)), timeouts_(timeouts) {}

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, std::size_t n = 0) {
        namespace http = boost::beast::http;
        switch (state_) {
            case state::start:
                if (buffer_.size() == 0) {
                    state_ = state::first_bytes;
                    const std::size_t size = boost::beast::read_size(buffer_, 65536);
                    if (size == 0) return done(self, http::error::buffer_overflow);
                    set_deadline(stream_, timeouts_.keep_alive);
                    return stream_.async_read_some(buffer_.prepare(size), std::move(self));
                }
                [[fallthrough]];
            case state::first_bytes:
                if (state_ == state::first_bytes) {
                    buffer_.commit(n);  // counted when the parser consumes it (Beast's bytes_transferred)
                    if (ec) {
                        if (n == 0 && ec == boost::asio::error::eof) ec = http::error::end_of_stream;
                        name_timeout(ec, http_error::keep_alive_timeout);
                        return done(self, ec);
                    }
                }
                state_ = state::header;
                set_deadline(stream_, timeouts_.header);
                return http::async_read_header(stream_, buffer_, holder_.get(), std::move(self));
            case state::header:
                total_ += n;
                if (ec) {
                    name_timeout(ec, http_error::header_timeout);
                    return done(self, ec);
                }
                if (holder_.get().is_done()) return done(self, ec);
                state_ = state::body;
                set_deadline(stream_, timeouts_.body);
                return http::async_read(stream_, buffer_, holder_.get(), std::move(self));
            case state::body:
                total_ += n;
                name_timeout(ec, http_error::body_timeout);
                return done(self, ec);
        }
    }

private:
    enum class state { start, first_bytes, header, body };

    template <class Self>
    void done(Self& self, boost::system::error_code ec) {
        deadline_layer(stream_).expires_never();
        holder_.finish(ec);
        self.complete(ec, total_);
    }

    Stream& stream_;
    DynamicBuffer& buffer_;
    ParserHolder holder_;
    http_timeouts timeouts_;
    state state_ = state::start;
    std::size_t total_ = 0;
};

template <class Stream, class Serializer>
class write_response_op {
public:
    write_response_op(Stream& stream, Serializer& serializer, std::chrono::nanoseconds send)
        : stream_(stream), serializer_(serializer), send_(send) {}
    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, std::size_t n = 0) {
        total_ += n;
        if (started_ && (ec || serializer_.is_done())) {
            deadline_layer(stream_).expires_never();
            name_timeout(ec, http_error::send_timeout);
            return self.complete(ec, total_);
        }
        started_ = true;
        set_deadline(stream_, send_);  // each piece written restarts it: progress
        boost::beast::http::async_write_some(stream_, serializer_, std::move(self));
    }

private:
    Stream& stream_;
    Serializer& serializer_;
    std::chrono::nanoseconds send_;
    bool started_ = false;
    std::size_t total_ = 0;
};

// The message overload's serializer lives in the operation (on the heap, as Beast's).
template <class Stream, bool isRequest, class Body, class Fields>
class write_message_op {
public:
    using serializer_type = boost::beast::http::serializer<isRequest, Body, Fields>;
    write_message_op(Stream& stream, boost::beast::http::message<isRequest, Body, Fields>& message,
                     std::chrono::nanoseconds send)
        : serializer_(std::make_unique<serializer_type>(message)), inner_(stream, *serializer_, send) {}
    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, std::size_t n = 0) {
        inner_(self, ec, n);
    }

private:
    std::unique_ptr<serializer_type> serializer_;
    write_response_op<Stream, serializer_type> inner_;
};

}  // namespace detail

/// Reads one request into `parser` with the keep_alive, header and body deadlines of `timeouts`
/// (see http_timeouts). Completes as http::async_read does, with
/// void(error_code, std::size_t bytes_transferred), on the stream's executor; the phase's
/// http_error when one of its deadlines passed.
///
/// A composed operation (net::async_compose on the stream): the handler runs on its
/// associated executor, by default the stream's, never inside this call. Per-operation
/// cancellation is async_compose's default (terminal), passed on to the stream's operations.
/// @param stream the stream (its lowest layer an idlewheel::beast::basic_tcp_stream).
/// @param buffer the connection's read buffer (bytes of a pipelined request may be in it).
/// @param parser the request parser.
/// @param timeouts keep_alive, header and body are used.
/// @param token the completion token.
/// @return what the token's async_result makes of it.
template <class Stream, class DynamicBuffer, class ReadToken>
auto async_read_request(Stream& stream, DynamicBuffer& buffer, boost::beast::http::basic_parser<true>& parser,
                        const http_timeouts& timeouts, ReadToken&& token) {
    using op = detail::read_request_op<Stream, DynamicBuffer, detail::parser_ref<boost::beast::http::basic_parser<true>>>;
    return boost::asio::async_compose<ReadToken, void(boost::system::error_code, std::size_t)>(
        op(stream, buffer, {parser}, timeouts), token, stream);
}

/// The same into a request message, as http::async_read(stream, buffer, message): the
/// message is assigned when the whole request was read.
/// @param stream the stream.
/// @param buffer the connection's read buffer.
/// @param message the request; assigned on success.
/// @param timeouts keep_alive, header and body are used.
/// @param token the completion token.
/// @return what the token's async_result makes of it.
template <class Stream, class DynamicBuffer, class Body, class Allocator, class ReadToken>
auto async_read_request(Stream& stream, DynamicBuffer& buffer,
                        boost::beast::http::request<Body, boost::beast::http::basic_fields<Allocator>>& message,
                        const http_timeouts& timeouts, ReadToken&& token) {
    using parser_type = boost::beast::http::request_parser<Body, Allocator>;
    using message_type = boost::beast::http::request<Body, boost::beast::http::basic_fields<Allocator>>;
    using op = detail::read_request_op<Stream, DynamicBuffer, detail::owned_parser<parser_type, message_type>>;
    return boost::asio::async_compose<ReadToken, void(boost::system::error_code, std::size_t)>(
        op(stream, buffer, detail::owned_parser<parser_type, message_type>{std::make_unique<parser_type>(), &message},
           timeouts),
        token, stream);
}

/// Writes a whole message with the send deadline of `timeouts` (no progress for `send`:
/// http_error::send_timeout). Completes as http::async_write does, with
/// void(error_code, std::size_t bytes_transferred), on the stream's executor. The message
/// must stay alive until then. Handler and cancellation as async_read_request().
/// @param stream the stream (its lowest layer an idlewheel::beast::basic_tcp_stream).
/// @param message the message written.
/// @param timeouts send is used.
/// @param token the completion token.
/// @return what the token's async_result makes of it.
template <class Stream, bool isRequest, class Body, class Fields, class WriteToken>
auto async_write_response(Stream& stream, boost::beast::http::message<isRequest, Body, Fields>& message,
                          const http_timeouts& timeouts, WriteToken&& token) {
    using op = detail::write_message_op<Stream, isRequest, Body, Fields>;
    return boost::asio::async_compose<WriteToken, void(boost::system::error_code, std::size_t)>(
        op(stream, message, timeouts.send), token, stream);
}

/// The same with the caller's serializer.
/// @param stream the stream.
/// @param serializer the serializer of the message written.
/// @param timeouts send is used.
/// @param token the completion token.
/// @return what the token's async_result makes of it.
template <class Stream, bool isRequest, class Body, class Fields, class WriteToken>
auto async_write_response(Stream& stream, boost::beast::http::serializer<isRequest, Body, Fields>& serializer,
                          const http_timeouts& timeouts, WriteToken&& token) {
    using op = detail::write_response_op<Stream, boost::beast::http::serializer<isRequest, Body, Fields>>;
    return boost::asio::async_compose<WriteToken, void(boost::system::error_code, std::size_t)>(
        op(stream, serializer, timeouts.send), token, stream);
}

}  // namespace idlewheel::beast

#endif
