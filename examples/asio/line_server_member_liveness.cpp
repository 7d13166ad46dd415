// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// A line server over plain Asio (no Beast), C++17, one thread. Every timeout of a session is
// in ONE idlewheel::member_liveness, a member of the session (a session_liveness that calls a
// member function of the session holding it), on one wheel_timer for all sessions:
//  - login: the first line must be "HELLO", within the handshake time; answered "WELCOME";
//  - idle: no line for the idle time: "BYE idle", then the close time to part;
//  - heartbeat: quiet for the ping interval: "PING"; the peer answers "PONG" (alive, but not a
//    message: a peer that only answers pings still goes idle) within the pong time, or is dropped.
// Every other line is echoed.
//
//     line_server_member_liveness PORT [IDLE_MS]
//
// PORT 0 takes a free port; the first line out is "listening on port N". IDLE_MS (default
// 60000) sets the idle time; the others are fractions of it. SIGINT or SIGTERM ends it.
// The idlewheel part is marked `// idlewheel`.

#include <idlewheel/member_liveness.hpp>  // idlewheel

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <utility>

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;
constexpr std::size_t max_line = 4096;  // a longer line ends the session

class session;
using liveness_config = idlewheel::member_liveness_config<session>;  // idlewheel
using liveness_event = idlewheel::liveness_event;                    // idlewheel

class session : public std::enable_shared_from_this<session> {
public:
    session(tcp::socket socket, const liveness_config& config, std::set<session*>& all)
        : socket_(std::move(socket)), live_(config, *this), all_(all) {  // idlewheel
        all_.insert(this);
    }
    ~session() { all_.erase(this); }

    void start() {
        live_.start_handshake();  // idlewheel: the login deadline runs from the accept
        read_line();
    }

    // idlewheel: the config's hook, called with every event of this session.
    void on_liveness(liveness_event e) {
        if (e == liveness_event::send_ping) {
            send("PING");
        } else if (e == liveness_event::idle) {  // the closing phase has begun
            send("BYE idle");
            parting_ = true;
        } else {  // dead peer, login or close timeout
            drop();
        }
    }

    void drop() {
        live_.stop();  // idlewheel: no event from now on
        error_code ignored;
        socket_.close(ignored);
    }

private:
    void read_line() {
        net::async_read_until(socket_, net::dynamic_buffer(input_, max_line), '\n',
                              [self = shared_from_this()](error_code ec, std::size_t n) { self->on_line(ec, n); });
    }

    void on_line(error_code ec, std::size_t n) {
        if (ec) return drop();  // the peer left, or we dropped it
        const std::string line = input_.substr(0, n - 1);
        input_.erase(0, n);
        using phase = idlewheel::member_liveness<session>::phase;
        if (live_.current() == phase::handshake) {
            if (line != "HELLO" || !live_.handshake_done()) return drop();  // idlewheel: false if too late
            send("WELCOME");
        } else if (live_.current() == phase::open) {
            if (line == "PONG") {
                live_.on_inbound();  // idlewheel: the peer is alive (a store)
            } else {
                live_.on_read();  // idlewheel: a message: not idle (a store)
                send(line);
            }
        }
        read_line();  // closing: read until the peer closes, or the close time drops it
    }

    void send(std::string line) {
        outbox_.push_back(std::move(line) + "\n");
        if (outbox_.size() == 1) write_first();
    }

    void write_first() {
        net::async_write(socket_, net::buffer(outbox_.front()),
                         [self = shared_from_this()](error_code ec, std::size_t) { self->on_written(ec); });
    }

    void on_written(error_code ec) {
        if (ec) return drop();
        outbox_.pop_front();
        if (!outbox_.empty()) return write_first();
        if (parting_) socket_.shutdown(tcp::socket::shutdown_send, ec);  // "BYE idle" is out
    }

    tcp::socket socket_;
    idlewheel::member_liveness<session> live_;  // idlewheel: one wheel entry
    std::set<session*>& all_;
    std::string input_;
    std::deque<std::string> outbox_;
    bool parting_ = false;
};

void accept(tcp::acceptor& acceptor, const liveness_config& config, std::set<session*>& all) {
    acceptor.async_accept([&](error_code ec, tcp::socket socket) {
        if (ec) return;  // closed
        std::make_shared<session>(std::move(socket), config, all)->start();
        accept(acceptor, config, all);
    });
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PORT [IDLE_MS]\n", argv[0]);
        return EXIT_FAILURE;
    }
    const auto port = static_cast<unsigned short>(std::strtoul(argv[1], nullptr, 10));
    const std::chrono::milliseconds idle(argc > 2 ? std::strtol(argv[2], nullptr, 10) : 60000);
    try {
        net::io_context io(1);
        idlewheel::wheel_timer wheel(io);             // idlewheel: one for every session of this thread
        idlewheel::liveness_stats stats;              // idlewheel: outcomes by cause
        idlewheel::session_liveness_options options;  // idlewheel (C++17: member by member)
        options.handshake_timeout = idle / 2;
        options.idle_timeout = idle;
        options.ping_interval = idle / 8;
        options.pong_timeout = idle / 4;
        options.close_timeout = idle / 2;
        // idlewheel: what every session shares; the hook is the session's member function.
        const liveness_config config(wheel, options, idlewheel::bind_member<&session::on_liveness>(), &stats);

        std::set<session*> sessions;
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), port});
        accept(acceptor, config, sessions);
        net::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&](error_code, int) {  // end every session; run() returns when they are gone
            acceptor.close();
            for (session* s : sessions) s->drop();
        });
        std::printf("listening on port %u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
        std::fflush(stdout);
        io.run();
        const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
        std::printf("idle %llu, dead peers %llu, login timeouts %llu, close timeouts %llu, pings %llu\n",
                    n(stats.reader_idle), n(stats.dead_peers), n(stats.handshake_timeouts), n(stats.close_timeouts),
                    n(stats.pings_sent));
        return EXIT_SUCCESS;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "line_server_member_liveness: %s\n", e.what());
        return EXIT_FAILURE;
    }
}
