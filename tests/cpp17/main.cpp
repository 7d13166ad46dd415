// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// The C++17 floor: a program that uses every part of idlewheel's API a C++17 user has —
// wheel_options spelled without designated initializers, timeout handles, timer_node,
// async_wait with a callback, use_future and a cancellation slot, the three forms of
// cancel_after and cancel_at, idle_watch, heartbeat, operation_deadline, session_liveness
// (member_liveness), stream_liveness, repeating_timer and, with Boost, beast::websocket_liveness
// and the beast.hpp glue over loopback. Built with CXX_STANDARD 17 (no extensions, warnings as
// errors) and run by ctest in every configuration of scripts/test.sh's matrix, on Boost.Asio
// and on standalone Asio (there without the Beast part).
//
// Timing runs on idlewheel::manual_clock (exact, no sleeping); the Beast part needs the steady
// clock and checks outcomes only, never durations, so a busy machine cannot fail it.
// A plain main() with CHECK: no Boost.Test, so that nothing but the library and Asio decides
// whether this compiles as C++17.

#include <idlewheel/idlewheel.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/stream_liveness.hpp>

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_future.hpp>
#include <asio/version.hpp>
#else
#include <idlewheel/beast.hpp>
#include <idlewheel/beast/websocket_liveness.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/version.hpp>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

static_assert(__cplusplus == 201703L, "tests/cpp17 must be compiled as C++17 (CXX_STANDARD 17, no extensions)");
#if defined(IDLEWHEEL_TEST_BOOST_VERSION)
static_assert(BOOST_VERSION == IDLEWHEEL_TEST_BOOST_VERSION, "compiled against another Boost than configured");
#endif
#if defined(IDLEWHEEL_TEST_ASIO_VERSION)
static_assert(ASIO_VERSION == IDLEWHEEL_TEST_ASIO_VERSION, "compiled against another standalone Asio than configured");
#endif

namespace {

namespace net = idlewheel::net;
using namespace std::chrono_literals;
using idlewheel::error_code;
using idlewheel::manual_clock;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;

int failures = 0;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            ++failures;                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                               \
    } while (false)

// The overloads the C++17 SFINAE picks (they were requires clauses and a concept).
static_assert(std::is_constructible_v<idlewheel::wheel_timer, net::io_context&>);
static_assert(std::is_constructible_v<idlewheel::wheel_timer, net::any_io_executor>);
static_assert(!std::is_constructible_v<idlewheel::wheel_timer, std::string&>);
using terminal_callback = void (*)(error_code);
static_assert(std::is_same_v<decltype(idlewheel::cancel_after(std::declval<wheel_type&>(), 1ms,
                                                              net::cancellation_type::partial)),
                             idlewheel::partial_cancel_after<wheel_type>>,
              "cancel_after(wheel, d, type) is the partial form");
static_assert(std::is_same_v<decltype(idlewheel::cancel_after(std::declval<wheel_type&>(), 1ms,
                                                              std::declval<terminal_callback>())),
                             idlewheel::cancel_after_t<terminal_callback, wheel_type>>,
              "cancel_after(wheel, d, token) adapts the token");

// io_context::poll() stops a context that ran out of work; every poll here restarts first.
void poll(net::io_context& io) {
    if (io.stopped()) io.restart();
    io.poll();
}

// Moves the manual clock `total` forward, 1 ms at a time, polling after each step.
void advance(net::io_context& io, std::chrono::milliseconds total) {
    poll(io);
    for (auto t = 0ms; t < total; t += 1ms) {
        manual_clock::advance(1ms);
        poll(io);
    }
}

struct counter {
    int hits = 0;
    void hit() { ++hits; }
};

void handles_nodes_and_options() {
    manual_clock::reset();
    net::io_context io;
    idlewheel::wheel_options options;  // C++17: no designated initializers
    options.tick = 1ms;
    options.max_pending = 4;
    options.clock = idlewheel::clock_read::per_tick;
    wheel_type wheel(io, options);
    CHECK(wheel.tick() == 1ms);

    int fired = 0;
    idlewheel::timeout kept = wheel.schedule(5ms, [&fired] { ++fired; });
    idlewheel::timeout dropped = wheel.schedule(5ms, [&fired] { fired += 100; });
    CHECK(dropped.cancel());
    CHECK(dropped.cancelled());

    counter c;
    idlewheel::timer_node node{idlewheel::bind_member<&counter::hit>(&c)};
    wheel.schedule(node, 3ms);
    wheel.schedule(node, 8ms);  // re-arm: one entry
    CHECK(wheel.pending() == 2U);

    advance(io, 4ms);
    CHECK(fired == 0 && c.hits == 0 && node.pending() && kept.pending());
    advance(io, 3ms);  // per_tick: never before 5 ms since the call, at most two ticks after
    CHECK(fired == 1 && kept.expired());
    advance(io, 4ms);
    CHECK(c.hits == 1 && !node.pending());

    // max_pending: the fifth pending entry is refused.
    std::vector<idlewheel::timeout> held;
    for (int i = 0; i < 4; ++i) held.push_back(wheel.schedule(1h, [] {}));
    bool refused = false;
    try {
        (void)wheel.schedule(1h, [] {});
    } catch (const idlewheel::system_error& e) {
        refused = e.code() == idlewheel::error::too_many_pending;
    }
    CHECK(refused);
    const std::vector<idlewheel::timeout> unrun = wheel.stop();
    CHECK(unrun.size() == 4U && held[0].cancelled());
    CHECK(wheel.stats().expired == 2U);
}

void async_waits_and_cancel_after() {
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io);  // 10 ms ticks

    bool called = false;
    error_code got = net::error::would_block;
    wheel.async_wait(20ms, [&](error_code ec) {
        called = true;
        got = ec;
    });
    std::future<void> future = wheel.async_wait(20ms, net::use_future);
    net::cancellation_signal signal;
    error_code cancelled_ec;
    wheel.async_wait(1h, net::bind_cancellation_slot(signal.slot(), [&](error_code ec) { cancelled_ec = ec; }));
    signal.emit(net::cancellation_type::terminal);

    advance(io, 19ms);
    CHECK(!called);
    CHECK(cancelled_ec == net::error::operation_aborted);
    advance(io, 11ms);
    CHECK(called && !got);
    CHECK(future.wait_for(30s) == std::future_status::ready);  // use_future completes on the system executor
    future.get();

    // cancel_after: a one-hour Asio wait, cancelled when the wheel's deadline passes; the three
    // forms (token; type and token; partial, applied to a token) and cancel_at.
    net::steady_timer slow(io, std::chrono::hours(1));
    std::vector<error_code> outcomes;
    const auto record = [&outcomes](error_code ec) { outcomes.push_back(ec); };
    slow.async_wait(idlewheel::cancel_after(wheel, 20ms, record));
    slow.async_wait(idlewheel::cancel_after(wheel, 20ms, net::cancellation_type::terminal, record));
    slow.async_wait(idlewheel::cancel_after(wheel, 20ms)(record));
    slow.async_wait(idlewheel::cancel_at(wheel, manual_clock::now() + 20ms, record));
    advance(io, 19ms);
    CHECK(outcomes.empty());
    advance(io, 11ms);
    CHECK(outcomes.size() == 4U);
    for (const error_code& ec : outcomes) CHECK(ec == net::error::operation_aborted);
    CHECK(wheel.pending() == 0U);
}

struct idle_probe {
    int reports = 0;
    idlewheel::idle_kind kind = idlewheel::idle_kind::all;
    void on_idle(idlewheel::idle_kind k, bool) {
        ++reports;
        kind = k;
    }
};

// A 1 ms wheel on the manual clock, reset to its start, and the stats of the liveness objects.
struct clock_reset {
    clock_reset() { manual_clock::reset(); }  // a base: before the wheel reads the clock
};
struct liveness_scene : clock_reset {
    static idlewheel::wheel_options one_ms_ticks() {
        idlewheel::wheel_options options;
        options.tick = 1ms;
        return options;
    }
    net::io_context io;
    wheel_type wheel{io, one_ms_ticks()};
    idlewheel::liveness_stats stats;
};

struct heartbeat_probe {
    std::vector<idlewheel::heartbeat_event> events;
    void on_event(idlewheel::heartbeat_event e) { events.push_back(e); }
};

void liveness_objects() {
    liveness_scene scene;
    net::io_context& io = scene.io;
    wheel_type& wheel = scene.wheel;
    idlewheel::liveness_stats& stats = scene.stats;

    // idle_watch: reader idle after 20 ms without a read; a read moves it.
    idle_probe idle;
    idlewheel::idle_options idle_options;
    idle_options.reader = 20ms;
    idlewheel::basic_idle_watch<wheel_type> watch(wheel, idlewheel::bind_member<&idle_probe::on_idle>(&idle),
                                                  idle_options, &stats);
    watch.start();
    advance(io, 10ms);
    watch.on_read();
    advance(io, 15ms);
    CHECK(idle.reports == 0);
    advance(io, 10ms);
    CHECK(idle.reports == 1 && idle.kind == idlewheel::idle_kind::reader && stats.reader_idle == 1U);
    watch.stop();

    // heartbeat: a ping after 10 ms of silence, then dead after 5 ms without an answer.
    heartbeat_probe beat;
    idlewheel::heartbeat_options beat_options;
    beat_options.ping_interval = 10ms;
    beat_options.pong_timeout = 5ms;
    idlewheel::basic_heartbeat<wheel_type> hb(wheel, idlewheel::bind_member<&heartbeat_probe::on_event>(&beat),
                                              beat_options, &stats);
    hb.start();
    advance(io, 40ms);
    CHECK(beat.events.size() == 2U);
    CHECK(!beat.events.empty() && beat.events.front() == idlewheel::heartbeat_event::send_ping);
    CHECK(beat.events.size() == 2U && beat.events.back() == idlewheel::heartbeat_event::dead_peer);
    CHECK(hb.current() == idlewheel::basic_heartbeat<wheel_type>::state::dead);
    CHECK(stats.pings_sent == 1U && stats.dead_peers == 1U);

    // operation_deadline.
    counter late;
    idlewheel::basic_operation_deadline<wheel_type> deadline(wheel, idlewheel::bind_member<&counter::hit>(&late),
                                                             idlewheel::error::handshake_timeout, &stats);
    deadline.expires_after(5ms);
    CHECK(deadline.armed() && deadline.cancel());
    deadline.expires_after(5ms);
    advance(io, 7ms);
    CHECK(late.hits == 1 && deadline.expired());
    CHECK(deadline.reason() == make_error_code(idlewheel::error::handshake_timeout));
    CHECK(stats.handshake_timeouts == 1U);
}

struct member_session {
    explicit member_session(const idlewheel::member_liveness_config<member_session, wheel_type>& config)
        : live(config, *this) {}
    void on_liveness(idlewheel::liveness_event e) { events.push_back(e); }
    std::vector<idlewheel::liveness_event> events;
    idlewheel::member_liveness<member_session, wheel_type> live;
};

struct stream_session {
    explicit stream_session(net::io_context& io,
                            const idlewheel::stream_liveness_config<stream_session, net::ip::tcp::socket, wheel_type>& c)
        : socket(io), live(c, *this) {}
    void on_liveness(idlewheel::liveness_event e) { events.push_back(e); }
    net::ip::tcp::socket socket;
    std::vector<idlewheel::liveness_event> events;
    idlewheel::stream_liveness<stream_session, net::ip::tcp::socket, wheel_type> live;
};

void session_liveness_objects() {
    liveness_scene scene;
    net::io_context& io = scene.io;
    wheel_type& wheel = scene.wheel;
    idlewheel::liveness_stats& stats = scene.stats;

    idlewheel::session_liveness_options times;
    times.handshake_timeout = 10ms;
    times.idle_timeout = 30ms;
    times.close_timeout = 10ms;
    idlewheel::member_liveness_config<member_session, wheel_type> config(wheel, times, idlewheel::bind_member<&member_session::on_liveness>(),
                                                                         &stats);
    member_session in_time(config);
    member_session too_slow(config);
    in_time.live.start_handshake();
    too_slow.live.start_handshake();
    advance(io, 5ms);
    CHECK(in_time.live.handshake_done());
    advance(io, 10ms);
    CHECK(!too_slow.live.handshake_done());
    CHECK(too_slow.events.size() == 1U && too_slow.live.verdict() == idlewheel::liveness_event::handshake_timeout);
    advance(io, 40ms);  // idle at 35 ms, then the close deadline 10 ms later
    CHECK(in_time.events.size() == 2U);
    CHECK(!in_time.events.empty() && in_time.events.front() == idlewheel::liveness_event::idle);
    CHECK(in_time.events.size() == 2U && in_time.events.back() == idlewheel::liveness_event::close_timeout);
    CHECK(stats.reader_idle == 1U && stats.handshake_timeouts == 1U && stats.close_timeouts == 1U && stats.operation_timeouts == 0U);

    // stream_liveness: the same machine over a raw socket (never opened here: closing it is a no-op).
    idlewheel::session_liveness_options stream_times;
    stream_times.idle_timeout = 20ms;
    idlewheel::stream_liveness_config<stream_session, net::ip::tcp::socket, wheel_type> stream_config(
        wheel, &stream_session::socket, stream_times, idlewheel::bind_member<&stream_session::on_liveness>(), &stats);
    stream_session s(io, stream_config);
    s.live.start();
    advance(io, 10ms);
    CHECK(s.live.on_read(error_code{}));
    advance(io, 15ms);
    CHECK(s.events.empty());
    advance(io, 10ms);
    CHECK(s.events.size() == 1U && s.events.front() == idlewheel::liveness_event::idle);
}

void repeating_timers() {
    manual_clock::reset();
    net::io_context io;
    wheel_type wheel(io);  // 10 ms ticks
    counter ticks;
    idlewheel::repeat_options rate;
    rate.mode = idlewheel::repeat_mode::fixed_rate;
    idlewheel::basic_repeating_timer<wheel_type> timer(wheel, idlewheel::bind_member<&counter::hit>(&ticks), 20ms,
                                                       rate);
    timer.start();
    advance(io, 65ms);
    CHECK(ticks.hits == 3);
    CHECK(timer.run_once_now());
    poll(io);
    CHECK(ticks.hits == 4);
    CHECK(timer.stop());
    advance(io, 50ms);
    CHECK(ticks.hits == 4 && !timer.running());
}

#if !defined(IDLEWHEEL_STANDALONE_ASIO)

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;

// A callback-style (C++17) Beast echo session with its whole liveness on one object. Not the
// tests' echo server (support/ws_echo_server.hpp) on purpose: this is the C++17 user's code
// whose compiling as C++17 is checked here, and that header is C++20.
class ws_session : public std::enable_shared_from_this<ws_session> {
public:
    ws_session(tcp::socket socket, idlewheel::wheel_timer& wheel,
               const idlewheel::beast::websocket_liveness_config<ws_session>& config)
        : ws_(std::move(socket)), wheel_(wheel), live_(config, *this) {}

    void run() {
        live_.start();  // the handshake deadline runs from accept
        ws_.async_accept([self = shared_from_this()](error_code ec) {
            if (self->live_.accepted(ec)) self->read();
        });
    }
    void on_liveness(idlewheel::liveness_event e) { events.push_back(e); }

    std::vector<idlewheel::liveness_event> events;
    websocket::stream<tcp::socket> ws_;  // public: the config names it

private:
    void read() {
        ws_.async_read(buffer_, [self = shared_from_this()](error_code ec, std::size_t) {
            if (!self->live_.on_read(ec)) return;
            self->ws_.text(self->ws_.got_text());
            self->ws_.async_write(self->buffer_.data(),
                                  idlewheel::cancel_after(self->wheel_, 5s, [self](error_code wec, std::size_t) {
                                      if (wec) return;
                                      self->buffer_.consume(self->buffer_.size());
                                      self->read();
                                  }));
        });
    }

    idlewheel::wheel_timer& wheel_;
    beast::flat_buffer buffer_;
    idlewheel::beast::websocket_liveness<ws_session> live_;
};

struct heartbeat_owner {
    void on_event(idlewheel::heartbeat_event) {}
};

// Over loopback: handshake, one echo, then silence until the server's idle close 1000
// "idle timeout", which the client's read reports.
void beast_websocket_liveness() {
    net::io_context io;
    idlewheel::wheel_options options;
    options.tick = 1ms;
    idlewheel::wheel_timer wheel(io, options);
    idlewheel::liveness_stats stats;
    idlewheel::session_liveness_options times;
    times.handshake_timeout = 30s;  // generous: a busy machine must not fail this
    times.idle_timeout = 50ms;
    times.close_timeout = 30s;
    idlewheel::beast::websocket_liveness_config<ws_session> config(
        wheel, &ws_session::ws_, times, idlewheel::bind_member<&ws_session::on_liveness>(), &stats);

    tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    std::shared_ptr<ws_session> server;
    acceptor.async_accept([&](error_code ec, tcp::socket socket) {
        if (ec) return;
        server = std::make_shared<ws_session>(std::move(socket), wheel, config);
        server->run();
    });

    websocket::stream<tcp::socket> client(io);
    heartbeat_owner owner;
    idlewheel::heartbeat client_beat(wheel, idlewheel::bind_member<&heartbeat_owner::on_event>(&owner));
    int control_frames = 0;
    idlewheel::beast::report_control_frames(client, client_beat,
                                            [&control_frames](websocket::frame_type, beast::string_view) {
                                                ++control_frames;
                                            });
    beast::flat_buffer received;
    std::string echoed;
    error_code end;
    client.next_layer().async_connect(acceptor.local_endpoint(), [&](error_code ec) {
        if (ec) return;
        client.async_handshake("127.0.0.1", "/", [&](error_code hec) {
            if (hec) return;
            client.async_write(net::buffer(std::string_view("hello")), [&](error_code wec, std::size_t) {
                if (wec) return;
                client.async_read(received, [&](error_code rec, std::size_t) {
                    if (rec) return;
                    echoed = beast::buffers_to_string(received.data());
                    received.consume(received.size());
                    client.async_read(received, [&](error_code last, std::size_t) { end = last; });
                });
            });
        });
    });
    io.run_for(60s);

    CHECK(echoed == "hello");
    CHECK(end == websocket::error::closed);
    CHECK(client.reason().code == websocket::close_code::normal);
    CHECK(std::string(client.reason().reason.c_str()) == "idle timeout");
    CHECK(control_frames >= 1);
    CHECK(server && server->events.size() == 1U && server->events.front() == idlewheel::liveness_event::idle);
    CHECK(stats.reader_idle == 1U);

    // beast.hpp's drop(): a stream whose lowest layer has socket() (basic_stream) and a socket.
    beast::tcp_stream stream(io);
    idlewheel::beast::drop(stream);
    tcp::socket plain(io);
    idlewheel::beast::drop(plain);
}

#endif

}  // namespace

int main() {
    handles_nodes_and_options();
    async_waits_and_cancel_after();
    liveness_objects();
    session_liveness_objects();
    repeating_timers();
#if !defined(IDLEWHEEL_STANDALONE_ASIO)
    beast_websocket_liveness();
#endif
    if (failures != 0) {
        std::fprintf(stderr, "cpp17_program: %d check(s) failed\n", failures);
        return EXIT_FAILURE;
    }
    std::puts("cpp17_program: every check passed (C++17)");
    return EXIT_SUCCESS;
}
