#include "connection.hpp"

#include "tls_client.hpp"
#include "bench/splitmix64.hpp"
#include "program_support/socket_option.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

#include <netinet/in.h>

namespace loadgen {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using asio::ip::tcp;

// A connection's behaviour, whatever its transport. Each one lives on one client thread and
// is kept alive by its pending operations (and by the thread's list until the run ends).
class connection : public std::enable_shared_from_this<connection> {
public:
    connection(connection_thread& t, record& rec, std::uint64_t phase_seed, asio::ip::address source)
        : thread_(t), rec_(rec), phase_seed_(phase_seed), source_(source) {}

    // Where this connection sits in its thread's list, and what it carries from the client's
    // previous connection (--reconnect). Before start().
    void init(std::size_t slot, const connection_thread::carry& c, bool stamp) {
        slot_ = slot;
        carry_ = c;
        if (stamp) out_ = thread_.payload;  // WebSocket: the first 8 bytes carry the sequence number
    }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    virtual ~connection() = default;

    virtual void start() = 0;
    // The run is over: close from our side. Whatever completes afterwards is not the server's doing.
    // Closed loop: every connection is up, active clients may start their loop now.
    void release() {
        if (!held_) return;
        held_ = false;
        send();
    }

    void stop() {
        // A message sent and not yet echoed (or owed again to a reconnect) is pending, not lost.
        if (rec_.how == outcome::open && (retired_ ? carry_.resend : in_flight_ || carry_.resend))
            rec_.pending_at_end = 1;
        stopping_ = true;
        if (timer_) timer_->cancel();
        if (retry_timer_) retry_timer_->cancel();
        if (!retired_) close_socket();
    }

protected:
    virtual void close_socket() = 0;
    virtual void write_message() = 0;

    [[nodiscard]] run_context& run() const noexcept { return thread_.run; }

    // Opens `s` bound to this client's source address, the port left to connect() (Linux
    // IP_BIND_ADDRESS_NO_PORT): the kernel then picks a port free for this source address only.
    bool open_socket(tcp::socket& s) {
        boost::system::error_code ec;
        s.open(source_.is_v4() ? tcp::v4() : tcp::v6(), ec);
        if (!ec) s.set_option(program_support::int_socket_option<IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT>(1), ec);
        if (!ec) s.bind(tcp::endpoint(source_, 0), ec);
        if (ec) {
            on_failed(outcome::connect_failed, ec);
            return false;
        }
        return true;
    }
    [[nodiscard]] std::int64_t now() const noexcept { return thread_.run.now(); }

    // Connected and (WebSocket) upgraded: begin the role.
    void on_ready() {
        rec_.ready = now();
        if (!carry_.was_up) {  // the client's first connection up (perhaps after retried attempts)
            if (carry_.attempt == 0) run().counters.connecting.fetch_sub(1, std::memory_order_relaxed);
            run().counters.ready.fetch_add(1, std::memory_order_relaxed);
            run().counters.ready_by_role[index(rec_.who)].fetch_add(1, std::memory_order_relaxed);
            carry_.was_up = true;
        } else {
            ++rec_.reconnects;
            // A dead client does not answer the close frame: it sees the end only when the server
            // drops the socket after --close-timeout, so its reconnect times are kept apart.
            (rec_.who == role::dead ? thread_.reconnect_dead_us : thread_.reconnect_us)
                .push_back(static_cast<std::uint32_t>((rec_.ready - carry_.closed_at) / 1000));
        }
        carry_.attempt = 0;  // up: the next close starts a new reconnect
        switch (rec_.who) {
            case role::idle: send(); break;
            case role::active:
                if (carry_.resend) send();  // the message the close cut off goes first
                first_send();
                break;
            case role::pinger:
            case role::dead:
            case role::stalled: break;
        }
    }

    void on_failed(outcome how, const boost::system::error_code& ec, std::string_view step = {}) {
        if (stopping_) return;
        // --reconnect: a failed attempt (a first connect too) is counted and retried while
        // attempts are left.
        if (run().plan.reconnect && carry_.attempt < run().plan.reconnect_attempts) {
            if (carry_.attempt == 0 && !carry_.was_up) run().counters.connecting.fetch_sub(1, std::memory_order_relaxed);
            (how == outcome::connect_failed ? run().counters.retry_connect_failed : run().counters.retry_upgrade_failed)
                .fetch_add(1, std::memory_order_relaxed);
            return reconnect(-1);
        }
        rec_.how = how;
        rec_.detail = step.empty() ? ec.message() : std::string(step) + ": " + ec.message();
        if (carry_.attempt == 0 && !carry_.was_up) run().counters.connecting.fetch_sub(1, std::memory_order_relaxed);
        run().counters.failed.fetch_add(1, std::memory_order_relaxed);
        run().counters.failed_by_role[index(rec_.who)].fetch_add(1, std::memory_order_relaxed);
        run().counters.errors.fetch_add(1, std::memory_order_relaxed);
        close_socket();
    }

    // The server ended the connection (or the transport failed) while the run was on.
    void on_closed(outcome how, std::int64_t at, std::string detail = {}) {
        if (stopping_ || rec_.how != outcome::open) return;
        if (run().plan.reconnect && how == outcome::other_close && rec_.close_code == 1001) {
            run().counters.going_away.fetch_add(1, std::memory_order_relaxed);
            return reconnect(at);
        }
        rec_.how = how;
        rec_.closed = at;
        rec_.detail = std::move(detail);
        run().counters.closed_by_server[index(rec_.who)].fetch_add(1, std::memory_order_relaxed);
        if (how == outcome::error) run().counters.errors.fetch_add(1, std::memory_order_relaxed);
        if (timer_) timer_->cancel();
        close_socket();
    }

    // An echo arrived in full; `data`: its payload (WebSocket), checked against the awaited
    // sequence number.
    void on_echo(std::string_view data = {}) {
        if (!out_.empty()) {
            std::uint64_t seq = 0;
            if (data.size() == out_.size()) std::memcpy(&seq, data.data(), sizeof seq);
            ++(data.size() == out_.size() && seq == carry_.awaited_seq ? rec_.echoed_ok : rec_.echo_mismatch);
        }
        in_flight_ = false;
        ++rec_.echoed;
        run().counters.echoed.fetch_add(1, std::memory_order_relaxed);
        if (rec_.who == role::idle && rec_.ref_high < 0) rec_.ref_high = now();
        if (rec_.who == role::active) {
            thread_.rtt_us.push_back(static_cast<std::uint32_t>((now() - sent_at_) / 1000));
            if (run().plan.closed_loop) send_owed_ = true;
            send_if_owed();
        }
    }

    // A write completed (one at a time: Beast allows no more, and the byte count must add up).
    void on_written(const boost::system::error_code& ec) {
        writing_ = false;
        if (stopping_) return;
        if (ec) return on_closed(outcome::error, now(), "write: " + ec.message());
        send_if_owed();
    }

    [[nodiscard]] bool stopping() const noexcept { return stopping_; }
    [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
    [[nodiscard]] const std::string& message() const noexcept { return out_.empty() ? thread_.payload : out_; }
    [[nodiscard]] bool stamped() const noexcept { return !out_.empty(); }
    [[nodiscard]] connection_thread& thread() const noexcept { return thread_; }
    record& rec() noexcept { return rec_; }

private:
    // --reconnect: this connection is done (`at`: when the server's close frame came; -1: a
    // failed attempt). A new one for the same client starts after the back-off.
    void reconnect(std::int64_t at) {
        stopping_ = true;  // whatever completes on this connection from now on is ignored
        retired_ = true;
        if (timer_) timer_->cancel();
        close_socket();
        carry_.resend = carry_.resend || in_flight_;
        in_flight_ = false;
        if (at >= 0) {
            carry_.closed_at = at;
            carry_.attempt = 1;
        } else {
            ++carry_.attempt;
        }
        const auto base = static_cast<double>(run().plan.reconnect_delay.count());
        const double u = static_cast<double>(thread_.rng() >> 11) * 0x1.0p-53;  // [0, 1)
        double delay = carry_.attempt == 1 ? base * u
                                           : base * static_cast<double>(1U << std::min(carry_.attempt - 1, 6U)) * (0.5 + u);
        delay = std::min(delay, 5e9);
        retry_timer_.emplace(thread_.io);
        retry_timer_->expires_after(nanoseconds(static_cast<std::int64_t>(delay)));
        retry_timer_->async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec || self->thread_.stopping()) return;
            self->thread_.relaunch(self->slot_, self->rec_, self->phase_seed_, self->source_, self->carry_);
        });
    }

    void send_if_owed() {
        if (!send_owed_ || in_flight_ || writing_) return;
        send_owed_ = false;
        send();
    }

    void send() {
        if (stopping_ || rec_.how != outcome::open) return;
        writing_ = true;
        in_flight_ = true;
        sent_at_ = now();
        if (rec_.who == role::idle) rec_.ref_low = sent_at_;  // before the server can read it
        rec_.last_sent = sent_at_;
        ++rec_.sent;
        run().counters.sent.fetch_add(1, std::memory_order_relaxed);
        if (!out_.empty()) {
            std::uint64_t seq = 0;
            if (carry_.resend) {
                seq = carry_.awaited_seq;
                carry_.resend = false;
                ++rec_.resent;
            } else {
                seq = carry_.next_seq++;
                ++rec_.messages;
            }
            carry_.awaited_seq = seq;
            std::memcpy(out_.data(), &seq, sizeof seq);
        }
        write_message();
    }

    // Active clients send on a fixed cadence, each with its own phase so they do not all send
    // in the same millisecond.
    void first_send() {
        if (run().plan.closed_loop) {
            // Held until every connection is up (connection_thread::release_closed_loop), so the
            // connects do not compete with a saturating load; then again on every echo (on_echo).
            if (thread_.closed_loop_released) return send();
            held_ = true;
            return;
        }
        const auto interval = run().plan.interval.count();
        const std::uint64_t z = program_support::splitmix64(phase_seed_).next();
        const auto phase = static_cast<std::int64_t>(z % static_cast<std::uint64_t>(interval));
        timer_.emplace(thread_.io);
        next_send_ = clock::now() + nanoseconds(phase);
        arm_send();
    }

    void arm_send() {
        timer_->expires_at(next_send_);
        timer_->async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->on_send_due();
        });
    }

    void on_send_due() {
        if (stopping_ || rec_.how != outcome::open) return;
        if (in_flight_ || writing_) {
            // The echo is late: one message in flight per client; send as soon as it is back.
            ++rec_.late_sends;
            send_owed_ = true;
        } else {
            send();
        }
        next_send_ += run().plan.interval;
        const auto current = clock::now();
        if (next_send_ < current) next_send_ = current;  // do not burst to catch up
        arm_send();
    }

    connection_thread& thread_;
    record& rec_;
    std::uint64_t phase_seed_;
    asio::ip::address source_;
    std::optional<asio::steady_timer> timer_;  // active clients only
    std::optional<asio::steady_timer> retry_timer_;  // --reconnect: the back-off
    std::size_t slot_ = 0;
    connection_thread::carry carry_;
    std::string out_;       // WebSocket: this client's message, its sequence number in front
    bool retired_ = false;  // --reconnect: replaced (or about to be) by a new connection
    clock::time_point next_send_{};
    std::int64_t sent_at_ = 0;
    bool in_flight_ = false;
    bool send_owed_ = false;
    bool held_ = false;  // closed loop: waiting for release()
    bool writing_ = false;
    bool stopping_ = false;
};

namespace {

constexpr nanoseconds lag_period = std::chrono::milliseconds(20);

// The server closed the socket: a FIN, or a reset when it closed with our bytes unread. Over
// TLS a FIN without the server's close_notify first is a truncated stream.
bool server_dropped(const boost::system::error_code& ec) {
    return ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated;
}

// Follows the server's WebSocket frames in the raw byte stream of a client that does not run
// Beast's reader (server frames are not masked, but the scanner does not rely on it). Calls
// on_frame(opcode) for each frame header.
class frame_scanner {
public:
    template <class OnFrame>
    void feed(const unsigned char* p, std::size_t n, OnFrame&& on_frame) {
        while (n > 0) {
            take_code(p, n);
            if (n == 0) break;
            if (skip_ > 0) {
                const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, n));
                skip_ -= k;
                p += k;
                n -= k;
                continue;
            }
            header_[have_++] = *p++;
            --n;
            if (have_ < 2) continue;
            const unsigned len7 = header_[1] & 0x7fU;
            const std::size_t extended = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
            const std::size_t need = 2 + extended + ((header_[1] & 0x80U) != 0 ? 4 : 0);
            if (have_ < need) continue;
            std::uint64_t length = len7;
            if (extended != 0) {
                length = 0;
                for (std::size_t i = 0; i < extended; ++i) length = (length << 8) | header_[2 + i];
            }
            on_frame(header_[0] & 0x0fU);
            skip_ = length;
            have_ = 0;
            if ((header_[0] & 0x0fU) == 0x8 && length >= 2) code_bytes_ = 2;  // the close code follows
        }
    }

    [[nodiscard]] std::uint16_t close_code() const noexcept { return close_code_; }

private:
    // The close frame's code, big-endian, taken from the payload as it is skipped.
    void take_code(const unsigned char*& p, std::size_t& n) {
        while (code_bytes_ > 0 && n > 0 && skip_ > 0) {
            close_code_ = static_cast<std::uint16_t>((close_code_ << 8) | *p++);
            --n;
            --skip_;
            --code_bytes_;
        }
    }

    std::array<unsigned char, 14> header_{};
    std::size_t have_ = 0;
    std::uint64_t skip_ = 0;
    unsigned code_bytes_ = 0;
    std::uint16_t close_code_ = 0;
};

// Raw TCP echo: the server echoes bytes as they arrive; a message is back when all its bytes are.
class tcp_connection final : public connection {
public:
    tcp_connection(connection_thread& t, record& rec, std::uint64_t phase_seed, asio::ip::address source)
        : connection(t, rec, phase_seed, source), socket_(t.io) {}

    void start() override {
        rec().launched = now();
        if (!open_socket(socket_)) return;
        socket_.async_connect(run().endpoint,
                              [self = shared()](boost::system::error_code ec) { self->on_connect(ec); });
    }

private:
    std::shared_ptr<tcp_connection> shared() { return std::static_pointer_cast<tcp_connection>(shared_from_this()); }

    void on_connect(boost::system::error_code ec) {
        if (stopping()) return;
        if (ec) return on_failed(outcome::connect_failed, ec);
        rec().connected = now();
        socket_.set_option(tcp::no_delay(true), ec);
        read();
        on_ready();
    }

    void read() {
        // Nobody looks at the bytes: every client of this thread reads into the same sink.
        socket_.async_read_some(
            asio::buffer(thread().scratch),
            [self = shared()](boost::system::error_code ec, std::size_t n) { self->on_read(ec, n); });
    }

    void on_read(boost::system::error_code ec, std::size_t n) {
        if (stopping()) return;
        if (server_dropped(ec)) return on_closed(outcome::dropped, now());
        if (ec) return on_closed(outcome::error, now(), ec.message());
        if (in_flight()) {
            awaited_ -= std::min(awaited_, n);
            if (awaited_ == 0) on_echo();
        }
        read();
    }

    void write_message() override {
        awaited_ = thread().payload.size();
        asio::async_write(socket_, asio::buffer(thread().payload),
                          [self = shared()](boost::system::error_code ec, std::size_t) { self->on_written(ec); });
    }

    void close_socket() override {
        boost::system::error_code ignored;
        socket_.close(ignored);
    }

    tcp::socket socket_;
    std::size_t awaited_ = 0;  // echo bytes still to come
};

// WebSocket echo, over `Stream`: tcp::socket, or ssl::stream<tcp::socket> with --tls (a TLS
// handshake between the connect and the upgrade). Idle, active and pinger clients always keep a
// read pending, so Beast answers the server's pings; a dead client reads below WebSocket instead
// (the raw socket, or the TLS stream) and never answers.
template <class Stream>
class ws_connection final : public connection {
    static constexpr bool tls = !std::is_same_v<Stream, tcp::socket>;

public:
    // `next_layer_args`: the ssl::context for a TLS stream, nothing for a plain one.
    template <class... Args>
    ws_connection(connection_thread& t, record& rec, std::uint64_t phase_seed, asio::ip::address source,
                  Args&... next_layer_args)
        : connection(t, rec, phase_seed, source), ws_(t.io, next_layer_args...) {}

    void start() override {
        rec().launched = now();
        if (!open_socket(beast::get_lowest_layer(ws_))) return;
        beast::get_lowest_layer(ws_).async_connect(
            run().endpoint, [self = shared()](boost::system::error_code ec) { self->on_connect(ec); });
    }

private:
    std::shared_ptr<ws_connection> shared() { return std::static_pointer_cast<ws_connection>(shared_from_this()); }

    void on_connect(boost::system::error_code ec) {
        if (stopping()) return;
        if (ec) return on_failed(outcome::connect_failed, ec);
        rec().connected = now();
        beast::get_lowest_layer(ws_).set_option(tcp::no_delay(true), ec);
        if constexpr (tls) {
            set_server_name(ws_.next_layer(), run().plan.host, ec);
            if (ec) return on_failed(outcome::handshake_failed, ec, "TLS server name");
            // Pinger and dead: as without TLS, taken right after the connect. The server's
            // clocks (re)start when it reads the upgrade request, sent after the TLS handshake,
            // so ref_low stays a lower bound and the lateness an upper bound; the handshake only
            // widens [ref_low, ref_high].
            rec().ref_low = now();
            ws_.next_layer().async_handshake(asio::ssl::stream_base::client,
                                             [self = shared()](boost::system::error_code e) { self->on_tls(e); });
        } else if (rec().who == role::stalled) {
            stall();
        } else {
            rec().ref_low = now();  // pinger and dead: the server starts its clocks after this
            upgrade();
        }
    }

    // A stalled client: half an upgrade request (no blank line ends it), then it only waits,
    // reading, for the server to give up. With TLS the TLS handshake comes first and the half
    // request goes over it (a server's deadline from its accept covers both). The server's
    // handshake clock starts at its accept at the earliest, after the connect began (ref_low);
    // ref_high is when the half request was written (the server's accept may come later still:
    // the allowance covers it).
    void stall() {
        rec().ref_low = rec().launched;
        stall_request_ = "GET " + run().plan.path + " HTTP/1.1\r\nHost: " + run().host_header +
                         "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n";
        asio::async_write(stall_layer(), asio::buffer(stall_request_),
                          [self = shared()](boost::system::error_code ec, std::size_t) { self->on_stall_written(ec); });
    }

    // What a stalled client writes to and reads from: the TLS stream, or the raw socket.
    auto& stall_layer() {
        if constexpr (tls)
            return ws_.next_layer();
        else
            return beast::get_lowest_layer(ws_);
    }

    void on_stall_written(boost::system::error_code ec) {
        if (stopping()) return;
        if (ec) return on_failed(outcome::handshake_failed, ec, "half upgrade request");
        rec().ref_high = now();
        stall_read();
        on_ready();
    }

    void stall_read() {
        stall_layer().async_read_some(
            asio::buffer(drain_buffer_),
            [self = shared()](boost::system::error_code ec, std::size_t n) { self->on_stall_read(ec, n); });
    }

    void on_stall_read(boost::system::error_code ec, std::size_t n) {
        if (stopping()) return;
        // An answer (a 408, say) before the close is allowed; only the close counts.
        if (server_dropped(ec))
            return on_closed(outcome::dropped, now(),
                             stall_answered_ == 0 ? std::string() : std::to_string(stall_answered_) + " bytes answered first");
        if (ec) return on_closed(outcome::error, now(), ec.message());
        stall_answered_ += n;
        stall_read();
    }

    void on_tls(boost::system::error_code ec) {
        if (stopping()) return;
        // Its error alone ("wrong version number", ...) would not say which handshake failed.
        if (ec) return on_failed(outcome::handshake_failed, ec, "TLS handshake");
        if (rec().who == role::stalled) return stall();
        upgrade();
    }

    void upgrade() {
        ws_.set_option(
            websocket::stream_base::timeout{websocket::stream_base::none(), websocket::stream_base::none(), false});
        ws_.binary(true);
        // The close frame's arrival is the kick's time; the read completes only after the
        // close handshake and the TCP teardown.
        ws_.control_callback([this](websocket::frame_type kind, beast::string_view) {
            if (kind == websocket::frame_type::close && close_frame_at_ < 0) close_frame_at_ = now();
        });
        ws_.async_handshake(run().host_header, run().plan.path,
                            [self = shared()](boost::system::error_code e) { self->on_handshake(e); });
    }

    void on_handshake(boost::system::error_code ec) {
        if (stopping()) return;
        if (ec) return on_failed(outcome::handshake_failed, ec);
        if (rec().who == role::idle)
            rec().ref_low = -1;  // set when its message is written
        else
            rec().ref_high = now();
        if (rec().who == role::dead)
            drain();
        else
            read();
        on_ready();
    }

    void read() {
        ws_.async_read(buffer_, [self = shared()](boost::system::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(boost::system::error_code ec) {
        if (stopping()) return;
        // Over TLS, Beast's teardown after the close frames is a TLS shutdown: it sends our
        // close_notify and waits for the server's, and reports a truncated stream when the
        // server closes TCP without one (a reset when it closes with ours unread). The close
        // frame has already said how the server ended the connection.
        const bool tls_teardown_cut = tls && close_frame_at_ >= 0 && server_dropped(ec);
        if (ec == websocket::error::closed || tls_teardown_cut) {
            const auto& reason = ws_.reason();
            const std::int64_t at = close_frame_at_ >= 0 ? close_frame_at_ : now();
            rec().close_code = static_cast<std::uint16_t>(reason.code);
            const std::string text(reason.reason.data(), reason.reason.size());
            const bool idle_kick = reason.code == websocket::close_code::normal && text == "idle timeout";
            return on_closed(
                idle_kick ? outcome::idle_close : outcome::other_close, at,
                idle_kick ? std::string() : std::to_string(static_cast<unsigned>(reason.code)) + " " + text);
        }
        if (server_dropped(ec)) return on_closed(outcome::dropped, now());
        if (ec) return on_closed(outcome::error, now(), ec.message());
        if (in_flight())
            on_echo(std::string_view(static_cast<const char*>(buffer_.cdata().data()), buffer_.size()));
        else if (stamped())
            ++rec().echo_mismatch;  // a message nobody awaited
        buffer_.consume(buffer_.size());
        read();
    }

    // A dead client: reads below WebSocket (the raw socket, or the TLS stream: it decrypts,
    // and the server's pings stay unanswered all the same) and never answers. It only follows
    // the frame headers, to tell the heartbeat's drop (EOF, no close frame) from an idle kick (a
    // close frame, then the server's close timeout).
    void drain() {
        ws_.next_layer().async_read_some(
            asio::buffer(drain_buffer_),
            [self = shared()](boost::system::error_code ec, std::size_t n) { self->on_drained(ec, n); });
    }

    void on_drained(boost::system::error_code ec, std::size_t n) {
        if (stopping()) return;
        if (server_dropped(ec)) {
            if (close_frame_at_ >= 0) {
                rec().close_code = scanner_.close_code();
                return on_closed(outcome::other_close, close_frame_at_,
                                 "close frame " + std::to_string(scanner_.close_code()) + " instead of the heartbeat's drop");
            }
            return on_closed(outcome::dropped, now());
        }
        if (ec) return on_closed(outcome::error, now(), ec.message());
        scanner_.feed(drain_buffer_.data(), n, [this](unsigned opcode) {
            if (opcode == 0x8 && close_frame_at_ < 0) close_frame_at_ = now();
        });
        drain();
    }

    void write_message() override {
        ws_.async_write(asio::buffer(message()),
                        [self = shared()](boost::system::error_code ec, std::size_t) { self->on_written(ec); });
    }

    void close_socket() override {
        boost::system::error_code ignored;
        beast::get_lowest_layer(ws_).close(ignored);
    }

    websocket::stream<Stream> ws_;
    beast::flat_buffer buffer_;
    std::int64_t close_frame_at_ = -1;
    frame_scanner scanner_;                         // dead clients only
    std::string stall_request_;                     // stalled clients only: half an upgrade request
    std::size_t stall_answered_ = 0;                // stalled clients only: bytes the server sent
    std::array<unsigned char, 64> drain_buffer_{};  // dead clients only: pings are small
};

}  // namespace

connection_thread::connection_thread(run_context& r)
    : run(r), scratch(64 * 1024), payload(r.plan.message_size, 'x'), work_(asio::make_work_guard(io)) {
    payload.back() = '\n';  // a line, so the server's --tcp-echo=lines echoes it too
}

connection_thread::~connection_thread() {
    finish(std::chrono::seconds(0));
    join();
}

void connection_thread::start() {
    asio::post(io, [this] { watch_lag(clock::now() + lag_period); });
    thread_ = std::thread([this] { io.run(); });
}

// A client thread that falls behind answers pings late and measures late echoes: the server
// would then be blamed for loadgen's delays. This records how late the loop runs.
void connection_thread::watch_lag(clock::time_point due) {
    lag_timer_.expires_at(due);
    lag_timer_.async_wait([this, due](boost::system::error_code ec) {
        if (ec || stopping_) return;
        const auto now = clock::now();
        lag_us.push_back(
            static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - due).count()));
        watch_lag(std::max(due + lag_period, now));
    });
}

namespace {

std::shared_ptr<connection> make_connection(connection_thread& t, record& rec, std::uint64_t phase_seed,
                                            asio::ip::address source) {
    if (t.run.plan.proto == protocol::tcp) return std::make_shared<tcp_connection>(t, rec, phase_seed, source);
    if (t.run.tls != nullptr)
        return std::make_shared<ws_connection<asio::ssl::stream<tcp::socket>>>(t, rec, phase_seed, source, *t.run.tls);
    return std::make_shared<ws_connection<tcp::socket>>(t, rec, phase_seed, source);
}

}  // namespace

void connection_thread::launch(record& rec, std::uint64_t phase_seed, asio::ip::address source) {
    asio::post(io, [this, &rec, phase_seed, source] {
        auto c = make_connection(*this, rec, phase_seed, source);
        c->init(connections_.size(), {}, stamp_messages());
        connections_.push_back(c);
        c->start();
    });
}

void connection_thread::relaunch(std::size_t slot, record& rec, std::uint64_t phase_seed, asio::ip::address source,
                                 carry c) {
    rec.ref_low = rec.ref_high = rec.closed = rec.last_sent = -1;  // the new connection's clocks
    rec.close_code = 0;
    auto next = make_connection(*this, rec, phase_seed, source);
    next->init(slot, c, stamp_messages());
    connections_[slot] = next;  // the old one goes once its aborted operations have completed
    next->start();
}

void connection_thread::release_closed_loop() {
    asio::post(io, [this] {
        closed_loop_released = true;
        for (auto& c : connections_) c->release();
    });
}

void connection_thread::stop_all() {
    asio::post(io, [this] {
        stopping_ = true;
        lag_timer_.cancel();
        for (auto& c : connections_) c->stop();
        connections_.clear();  // each goes once its aborted operations have completed
    });
}

void connection_thread::finish(nanoseconds grace) {
    work_.reset();
    if (!thread_.joinable()) grace = nanoseconds::zero();  // never started: nothing to wait for
    const auto deadline = clock::now() + grace;
    while (!io.stopped() && clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    io.stop();
}

void connection_thread::join() {
    if (thread_.joinable()) thread_.join();
}

}  // namespace loadgen
