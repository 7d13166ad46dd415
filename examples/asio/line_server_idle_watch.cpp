// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// A line server over plain Asio (no Beast), C++17, one thread, with Netty's split: three small
// objects per session, each one idea, all on one wheel_timer for all sessions:
//  - idlewheel::operation_deadline: the first line must be "HELLO", within the login time
//    (answered "WELCOME"); later the same object bounds the close;
//  - idlewheel::idle_watch: no line for the idle time: "BYE idle", then the close time to part;
//  - idlewheel::heartbeat: quiet for the ping interval: "PING"; the peer answers "PONG" (alive,
//    but not a message: a peer that only answers pings still goes idle) within the pong time,
//    or is dropped.
// Every other line is echoed. The protocol and the times are line_server_member_liveness's,
// which does the same with one member_liveness.
//
//     line_server_idle_watch PORT [IDLE_MS]
//
// PORT 0 takes a free port; the first line out is "listening on port N". IDLE_MS (default
// 60000) sets the idle time; the others are fractions of it. SIGINT or SIGTERM ends it.
// The idlewheel part is marked `// idlewheel`.

#include <idlewheel/heartbeat.hpp>           // idlewheel
#include <idlewheel/idle_watch.hpp>          // idlewheel
#include <idlewheel/operation_deadline.hpp>  // idlewheel

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

// What every session of the thread shares.
struct server {
    idlewheel::wheel_timer& wheel;           // idlewheel
    idlewheel::idle_options idle;            // idlewheel
    idlewheel::heartbeat_options heartbeat;  // idlewheel
    std::chrono::milliseconds login_time, close_time;
    idlewheel::liveness_stats stats;  // idlewheel: outcomes by cause
    std::set<session*> sessions;
};

class session : public std::enable_shared_from_this<session> {
public:
    session(tcp::socket socket, server& srv)
        : socket_(std::move(socket)),
          srv_(srv),
          deadline_(srv.wheel, idlewheel::bind_member<&session::drop>(this), idlewheel::error::handshake_timeout,
                    &srv.stats),                                                                    // idlewheel
          idle_(srv.wheel, idlewheel::bind_member<&session::on_idle>(this), srv.idle, &srv.stats),  // idlewheel
          heartbeat_(srv.wheel, idlewheel::bind_member<&session::on_heartbeat>(this), srv.heartbeat,
                     &srv.stats) {  // idlewheel
        srv_.sessions.insert(this);
    }
    ~session() { srv_.sessions.erase(this); }

    void start() {
        deadline_.expires_after(srv_.login_time);  // idlewheel: bytes arriving do not extend it
        read_line();
    }

    void drop() {
        idle_.stop();  // idlewheel: no report from now on
        heartbeat_.stop();
        deadline_.cancel();
        error_code ignored;
        socket_.close(ignored);
    }

private:
    void on_idle(idlewheel::idle_kind, bool) {  // idlewheel: reader idle for srv_.idle.reader
        idle_.stop();
        heartbeat_.stop();
        deadline_.expires_after(srv_.close_time, idlewheel::error::close_timeout);  // idlewheel
        send("BYE idle");
        parting_ = true;
    }

    void on_heartbeat(idlewheel::heartbeat_event e) {
        if (e == idlewheel::heartbeat_event::send_ping) {
            send("PING");
        } else {  // dead_peer: nothing came within the pong time
            drop();
        }
    }

    void read_line() {
        net::async_read_until(socket_, net::dynamic_buffer(input_, max_line), '\n',
                              [self = shared_from_this()](error_code ec, std::size_t n) { self->on_line(ec, n); });
    }

    void on_line(error_code ec, std::size_t n) {
        if (ec) return drop();  // the peer left, or we dropped it
        const std::string line = input_.substr(0, n - 1);
        input_.erase(0, n);
        if (!logged_in_) {
            if (line != "HELLO" || !deadline_.cancel()) return drop();  // idlewheel: false once expired
            logged_in_ = true;
            idle_.start();  // idlewheel: from now
            heartbeat_.start();
            send("WELCOME");
        } else if (!parting_) {
            heartbeat_.on_inbound();  // idlewheel: the peer is alive (a store)
            if (line != "PONG") {
                idle_.on_read();  // idlewheel: a message: not idle (a store)
                send(line);
            }
        }
        read_line();  // parting: read until the peer closes, or the close time drops it
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
    server& srv_;
    idlewheel::operation_deadline deadline_;  // idlewheel: login, then close
    idlewheel::idle_watch idle_;              // idlewheel
    idlewheel::heartbeat heartbeat_;          // idlewheel
    std::string input_;
    std::deque<std::string> outbox_;
    bool logged_in_ = false;
    bool parting_ = false;
};

void accept(tcp::acceptor& acceptor, server& srv) {
    acceptor.async_accept([&](error_code ec, tcp::socket socket) {
        if (ec) return;  // closed
        std::make_shared<session>(std::move(socket), srv)->start();
        accept(acceptor, srv);
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
        idlewheel::wheel_timer wheel(io);  // idlewheel: one for every session of this thread
        // login and close: half the idle time
        server srv{wheel, {}, {}, idle / 2, idle / 2, {}, {}};
        srv.idle.reader = idle;  // idlewheel (C++17: member by member)
        srv.heartbeat.ping_interval = idle / 8;
        srv.heartbeat.pong_timeout = idle / 4;

        tcp::acceptor acceptor(io, {net::ip::address_v4::loopback(), port});
        accept(acceptor, srv);
        net::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&](error_code, int) {  // end every session; run() returns when they are gone
            acceptor.close();
            for (session* s : srv.sessions) s->drop();
        });
        std::printf("listening on port %u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
        std::fflush(stdout);
        io.run();
        const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
        std::printf("idle %llu, dead peers %llu, login timeouts %llu, close timeouts %llu, pings %llu\n",
                    n(srv.stats.reader_idle), n(srv.stats.dead_peers), n(srv.stats.handshake_timeouts),
                    n(srv.stats.close_timeouts), n(srv.stats.pings_sent));
        return EXIT_SUCCESS;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "line_server_idle_watch: %s\n", e.what());
        return EXIT_FAILURE;
    }
}
