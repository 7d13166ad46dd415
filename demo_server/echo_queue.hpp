// The echo a session has read and not yet written: what the raw-TCP and the WebSocket sessions'
// write paths share. The messages in order; the bytes still unsent (the session's
// --max-backlog is on them), counted in the worker's --max-backlog-total budget from push() to
// written() or leave_budget(); and where the front message's next piece starts: echo goes out
// in pieces of at most write_piece bytes, each completed piece progress (write_progress.hpp).
#ifndef IDLEWHEEL_DEMO_ECHO_QUEUE_HPP
#define IDLEWHEEL_DEMO_ECHO_QUEUE_HPP

#include "worker.hpp"
#include "write_progress.hpp"

#include <boost/asio/buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <utility>

namespace demo {

/// Message: a struct whose `data` (a std::string) is the bytes to echo, and whatever else the
/// session writes with them (a WebSocket message's text flag).
template <class Message>
class echo_queue {
public:
    explicit echo_queue(worker& w) noexcept : worker_(w) {}

    /// Queues `m` after the others; its bytes count in the budget from now.
    void push(Message m) {
        unsent_ += m.data.size();
        worker_.unsent_added(m.data.size());
        messages_.push_back(std::move(m));
    }

    [[nodiscard]] bool empty() const noexcept { return messages_.empty(); }
    /// Messages queued, the front one included even when part of it went out.
    [[nodiscard]] std::size_t size() const noexcept { return messages_.size(); }
    /// Bytes queued and not yet written.
    [[nodiscard]] std::size_t unsent() const noexcept { return unsent_; }
    /// The message being written (not empty()).
    [[nodiscard]] const Message& front() const noexcept { return messages_.front(); }
    /// Bytes of front() already written.
    [[nodiscard]] std::size_t front_sent() const noexcept { return sent_; }

    /// The front message's next piece (not empty()): at most write_piece bytes.
    [[nodiscard]] boost::asio::const_buffer next_piece() const noexcept {
        const auto& data = front().data;
        return boost::asio::buffer(data.data() + sent_, std::min(data.size() - sent_, write_piece));
    }
    /// True if next_piece() is the rest of the front message.
    [[nodiscard]] bool next_piece_ends_message() const noexcept { return front().data.size() - sent_ <= write_piece; }

    /// `n` bytes of the front message went out; true if that was the rest of it (it is then
    /// removed, and the next message is the front).
    bool written(std::size_t n) {
        sent_ += n;
        unsent_ -= n;
        worker_.unsent_removed(n);
        if (sent_ < front().data.size()) return false;
        sent_ = 0;
        messages_.pop_front();
        return true;
    }

    /// The session ends: what is queued leaves the server's budget now (it is freed with the
    /// session; unsent() and size() still say what was left).
    void leave_budget() noexcept { worker_.unsent_removed(unsent_); }

private:
    worker& worker_;
    std::deque<Message> messages_;
    std::size_t unsent_ = 0;  // bytes in messages_ not yet written
    std::size_t sent_ = 0;    // bytes of messages_.front() already written
};

}  // namespace demo

#endif
