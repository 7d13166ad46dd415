// The stream under a WebSocket session's beast::websocket::stream (websocket::stream<
// message_counting_stream<Next>>, Next: session_stream<Transport>, or ssl::stream of it under
// --tls): it forwards everything to Next and counts the complete data messages that pass up
// through its reads, from the frame headers alone.
//
// Why: once the server has sent its close frame, Beast's close operation reads on until the
// peer's close frame and discards every message it meets on the way; nothing tells the session.
// The session compares this count with the messages Beast handed it: the difference, at its
// end, is what the server read but never echoed (messages_unechoed), the close's discards
// included.
//
// The count is of final data frames read in full (a message ends with its FIN frame; control
// frames are skipped). It stops at the first message larger than `max_message` (Beast fails
// the session with 1009 there, and that message was never accepted). No extension is
// negotiated by the demo (no permessage-deflate), so the frames are as sent.
#ifndef IDLEWHEEL_DEMO_MESSAGE_COUNT_HPP
#define IDLEWHEEL_DEMO_MESSAGE_COUNT_HPP

#include "read_through.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace demo {

/// Counts the complete data messages in a WebSocket byte stream from the client, fed in order.
class frame_scanner {
public:
    explicit frame_scanner(std::uint64_t max_message) noexcept : max_message_(max_message) {}

    void feed(const unsigned char* p, std::size_t n) noexcept {
        while (n > 0 && !stopped_) {
            if (payload_left_ > 0) {
                const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, n));
                payload_left_ -= k;
                p += k;
                n -= k;
                if (payload_left_ == 0) frame_done();
                continue;
            }
            header_[have_++] = *p++;
            --n;
            if (have_ < 2 || have_ < header_size()) continue;
            start_frame();
        }
    }

    /// Complete data messages seen so far.
    [[nodiscard]] std::uint64_t messages() const noexcept { return messages_; }

private:
    [[nodiscard]] std::size_t header_size() const noexcept {
        const unsigned len7 = header_[1] & 0x7fU;
        return 2U + (len7 == 126 ? 2U : len7 == 127 ? 8U : 0U) + ((header_[1] & 0x80U) != 0 ? 4U : 0U);
    }

    void start_frame() noexcept {
        const unsigned len7 = header_[1] & 0x7fU;
        std::uint64_t len = len7;
        if (len7 >= 126) {
            len = 0;
            for (std::size_t i = 2; i < (len7 == 126 ? 4U : 10U); ++i) len = (len << 8) | header_[i];
        }
        have_ = 0;
        const unsigned opcode = header_[0] & 0x0fU;
        data_frame_ = (opcode & 0x08U) == 0;
        final_ = (header_[0] & 0x80U) != 0;
        if (data_frame_) {
            message_bytes_ += len;
            if (message_bytes_ > max_message_) stopped_ = true;  // Beast's 1009: the rest is not read as messages
        }
        payload_left_ = len;
        if (payload_left_ == 0) frame_done();
    }

    void frame_done() noexcept {
        if (!data_frame_ || !final_) return;
        ++messages_;
        message_bytes_ = 0;
    }

    std::uint64_t max_message_;
    std::uint64_t messages_ = 0;
    std::uint64_t payload_left_ = 0;
    std::uint64_t message_bytes_ = 0;
    unsigned char header_[14] = {};
    std::size_t have_ = 0;
    bool data_frame_ = false;
    bool final_ = false;
    bool stopped_ = false;
};

template <class Next>
class message_counting_stream {
public:
    using next_layer_type = Next;
    using executor_type = typename Next::executor_type;

    message_counting_stream(Next&& next, std::uint64_t max_message) : next_(std::move(next)), scanner_(max_message) {}

    [[nodiscard]] executor_type get_executor() noexcept { return next_.get_executor(); }
    [[nodiscard]] Next& next_layer() noexcept { return next_; }
    [[nodiscard]] const Next& next_layer() const noexcept { return next_; }

    /// Complete data messages read from the peer so far.
    [[nodiscard]] std::uint64_t messages_read() const noexcept { return scanner_.messages(); }

    template <class MutableBuffers, class Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return async_read_some_through(
            next_, buffers, std::forward<Token>(token),
            [this](boost::system::error_code ec, std::size_t n, const MutableBuffers& b, auto&& h) {
                scan(b, n);
                std::move(h)(ec, n);
            });
    }

    template <class ConstBuffers, class Token>
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        return next_.async_write_some(buffers, std::forward<Token>(token));
    }

    // Found by argument-dependent lookup from Beast's close and read operations: Next's own.
    template <class Handler>
    friend void async_teardown(boost::beast::role_type role, message_counting_stream& s, Handler&& handler) {
        using boost::beast::websocket::async_teardown;
        async_teardown(role, s.next_, std::forward<Handler>(handler));
    }

private:
    template <class MutableBuffers>
    void scan(const MutableBuffers& buffers, std::size_t n) noexcept {
        for (auto it = boost::asio::buffer_sequence_begin(buffers); n > 0 && it != boost::asio::buffer_sequence_end(buffers);
             ++it) {
            const boost::asio::mutable_buffer b = *it;
            const std::size_t k = std::min(n, b.size());
            scanner_.feed(static_cast<const unsigned char*>(b.data()), k);
            n -= k;
        }
    }

    Next next_;
    frame_scanner scanner_;
};

}  // namespace demo

#endif
