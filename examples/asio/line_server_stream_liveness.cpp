// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// A line server over plain Asio (no Beast), C++17, one thread, with every timeout of a session
// in ONE idlewheel::stream_liveness, a member of the session that knows the session's socket
// and closes it itself on a verdict, on one wheel_timer for all sessions:
//  - login: the first line must be "HELLO", within the handshake time; answered "WELCOME";
//  - idle: no line for the idle time: the socket is closed;
//  - heartbeat: quiet for the ping interval: "PING"; the peer answers "PONG" (alive, but not a
//    message: a peer that only answers pings still goes idle) within the pong time, or the
//    socket is closed.
// Every other line is echoed. The protocol and the times are line_server_member_liveness's,
// whose session applies the verdicts itself (a "BYE idle" before parting).
//
//     line_server_stream_liveness PORT [IDLE_MS]
//
// PORT 0 takes a free port; the first line out is "listening on port N". IDLE_MS (default
// 60000) sets the idle time; the others are fractions of it. SIGINT or SIGTERM ends it.
// The idlewheel part is marked `// idlewheel`.

#include <idlewheel/stream_liveness.hpp>  // idlewheel

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

struct session;
using liveness_config = idlewheel::stream_liveness_config<session>;  // idlewheel

struct session : std::enable_shared_from_this<session> {
    session(tcp::socket s, const liveness_config& config, std::set<session*>& all)
        : socket(std::move(s)), live(config, *this), all_(all) {  // idlewheel
        all_.insert(this);
    }
    ~session() { all_.erase(this); }

    tcp::socket socket;                        // the config names it: the verdicts close it
    idlewheel::stream_liveness<session> live;  // idlewheel: one wheel entry

    void start() {
        live.start_handshake();  // idlewheel: the login deadline runs from the accept
        read_line();
    }

    // idlewheel: the config's hook, called after the object acted on the event (on a verdict
    // it closed the socket: the pending read ends the session).
    void on_liveness(idlewheel::liveness_event e) {
        if (e == idlewheel::liveness_event::send_ping) send("PING");
    }

private:
    void read_line() {
        net::async_read_until(socket, net::dynamic_buffer(input_, max_line), '\n',
                              [self = shared_from_this()](error_code ec, std::size_t n) { self->on_line(ec, n); });
    }

    void on_line(error_code ec, std::size_t n) {
        if (ec) return live.drop();  // idlewheel: the peer left, or a verdict closed the socket
        const std::string line = input_.substr(0, n - 1);
        input_.erase(0, n);
        if (live.current() == idlewheel::stream_liveness<session>::phase::handshake) {
            if (line != "HELLO" || !live.accepted(ec)) return live.drop();  // idlewheel: false if too late
            send("WELCOME");
        } else if (line == "PONG") {
            live.on_inbound();          // idlewheel: the peer is alive (a store)
        } else if (live.on_read(ec)) {  // idlewheel: a message: not idle (a store)
            send(line);
        }
        read_line();
    }

    void send(std::string line) {
        outbox_.push_back(std::move(line) + "\n");
        if (outbox_.size() == 1) write_first();
    }

    void write_first() {
        net::async_write(socket, net::buffer(outbox_.front()),
                         [self = shared_from_this()](error_code ec, std::size_t) { self->on_written(ec); });
    }

    void on_written(error_code ec) {
        if (ec) return live.drop();  // idlewheel: closes the socket, no more events
        outbox_.pop_front();
        if (!outbox_.empty()) return write_first();
    }

    std::set<session*>& all_;
    std::string input_;
    std::deque<std::string> outbox_;
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
        const liveness_config config(wheel, &session::socket, options,
                                     idlewheel::bind_member<&session::on_liveness>(), &stats);  // idlewheel

        std::set<session*> sessions;
        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), port});
        accept(acceptor, config, sessions);
        net::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&](error_code, int) {  // end every session; run() returns when they are gone
            acceptor.close();
            for (session* s : sessions) s->live.drop();
        });
        std::printf("listening on port %u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
        std::fflush(stdout);
        io.run();
        const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
        std::printf("idle %llu, dead peers %llu, login timeouts %llu, pings %llu\n", n(stats.reader_idle),
                    n(stats.dead_peers), n(stats.handshake_timeouts), n(stats.pings_sent));
        return EXIT_SUCCESS;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "line_server_stream_liveness: %s\n", e.what());
        return EXIT_FAILURE;
    }
}
