// SIGTERM while 200 WebSocket clients are echoing as fast as they can: every one of them gets
// a close frame with 1001 (going away), and the process exits 0 in bounded time.
#include "server_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <signal.h>

#include <atomic>
#include <map>
#include <thread>

using namespace reliability;

namespace {

struct echo_client {
    explicit echo_client(asio::io_context& io, std::size_t id) : ws(io), message("client " + std::to_string(id) + " says hello") {}
    websocket::stream<tcp::socket> ws;
    beast::flat_buffer buffer;
    std::string message;
    std::uint64_t echoes = 0;
    error_code end;
    unsigned close_code = 0;
    std::atomic<bool> done{false};
};

// Echoes until the connection ends; records how it ended.
asio::awaitable<void> echo_until_closed(echo_client& c, tcp::endpoint ep, std::atomic<std::size_t>& echoing) {
    try {
        co_await c.ws.next_layer().async_connect(ep, asio::use_awaitable);
        co_await c.ws.async_handshake(ep.address().to_string() + ":" + std::to_string(ep.port()), "/", asio::use_awaitable);
        for (;;) {
            co_await c.ws.async_write(asio::buffer(c.message), asio::use_awaitable);
            c.buffer.clear();
            co_await c.ws.async_read(c.buffer, asio::use_awaitable);
            if (beast::buffers_to_string(c.buffer.data()) != c.message) throw std::runtime_error("echo differs");
            if (c.echoes++ == 0) echoing.fetch_add(1);
        }
    } catch (const boost::system::system_error& e) {
        c.end = e.code();
        if (c.end == websocket::error::closed) c.close_code = c.ws.reason().code;
    } catch (const std::exception&) {
        c.end = asio::error::invalid_argument;
    }
    c.done = true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sigterm_under_load, *boost::unit_test::label("io_threads"))

BOOST_AUTO_TEST_CASE(every_websocket_client_gets_1001_and_the_server_exits_0) {
    constexpr std::size_t clients = 200;
    constexpr auto close_timeout = 2s;
    // The server closes abruptly after --close-timeout plus 500 ms; then it must be gone.
    constexpr auto exit_bound = close_timeout + 500ms + slack;
    server srv({"--threads", "2", "--quiet", "--close-timeout", "2s", "--idle-timeout", "60s", "--ping-interval", "0s"});

    asio::io_context io(1);
    const tcp::endpoint ep(asio::ip::make_address(srv.host()), srv.http_port());
    std::vector<std::unique_ptr<echo_client>> cs;
    std::atomic<std::size_t> echoing{0};
    for (std::size_t i = 0; i < clients; ++i) {
        cs.push_back(std::make_unique<echo_client>(io, i));
        asio::co_spawn(io, echo_until_closed(*cs.back(), ep, echoing), asio::detached);
    }
    std::thread runner([&io] { io.run_for(60s); });
    const auto stop_clients = [&] {
        io.stop();
        runner.join();
    };

    if (!wait_until([&] { return echoing.load() == clients; }, 15s)) {
        stop_clients();
        BOOST_FAIL("only " << echoing.load() << " of " << clients << " clients got an echo");
    }
    std::this_thread::sleep_for(500ms);  // under full echo load
    const auto term_at = clock::now();
    srv.signal(SIGTERM);
    const auto code = srv.wait_exit(exit_bound + 5s);
    const auto exited_after = clock::now() - term_at;
    const bool all_done = wait_until([&] {
        for (const auto& c : cs)
            if (!c->done) return false;
        return true;
    }, 5s);
    stop_clients();

    BOOST_TEST_MESSAGE("exit " << (code ? std::to_string(*code) : "none") << " after " << ms(exited_after) << " ms");
    BOOST_TEST_REQUIRE(code.has_value(), "still running " << ms(exit_bound + 5s) << " ms after SIGTERM");
    BOOST_TEST(*code == 0);
    BOOST_TEST(ms(exited_after) <= ms(exit_bound));
    BOOST_TEST(all_done);
    std::map<std::string, std::size_t> endings;
    std::size_t going_away = 0;
    std::uint64_t echoes = 0;
    for (const auto& c : cs) {
        echoes += c->echoes;
        if (c->end == websocket::error::closed && c->close_code == 1001)
            ++going_away;
        else
            ++endings[c->end.message() + " / close code " + std::to_string(c->close_code)];
    }
    BOOST_TEST_MESSAGE(echoes << " echoes before SIGTERM; " << going_away << " clients got 1001");
    BOOST_TEST(going_away == clients);
    for (const auto& [how, n] : endings) BOOST_TEST_MESSAGE(n << " clients ended with: " << how);
    BOOST_TEST(srv.log().find("stopped") != std::string::npos);
}

// A client that never pauses: it keeps 32 messages of 16 KiB unechoed (a write for every echo
// it reads, one read every 10 ms, a small receive buffer), so its session's echo queue is never
// empty. The drain's 1001 must still come, after the echo of what was read when the drain
// reached the session and long before the abrupt bound (--close-timeout after the spread): what
// is read after the drain's turn is not echoed. The echoes come in order, none missing.
BOOST_AUTO_TEST_CASE(a_client_that_never_pauses_gets_1001_before_the_abrupt_bound) {
    constexpr auto close_timeout = 4s;
    constexpr std::size_t window = 32, message_size = 16 * 1024;
    server srv({"--quiet", "--close-timeout", "4s", "--idle-timeout", "60s", "--ping-interval", "0s"});

    const auto message = [](std::uint64_t seq) {
        std::string m = "seq " + std::to_string(seq) + " ";
        m.resize(message_size, 'x');
        return m;
    };
    std::atomic<std::uint64_t> echoes{0};
    std::atomic<bool> termed{false};
    std::uint64_t echoes_after_term = 0, wrong = 0;
    error_code end;
    unsigned close_code = 0;
    clock::time_point ended{};
    std::jthread client([&] {
        asio::io_context io;
        websocket::stream<tcp::socket> ws(io);
        try {
            auto& sock = ws.next_layer();
            sock.open(tcp::v4());
            sock.set_option(asio::socket_base::receive_buffer_size(32 * 1024));
            sock.connect(tcp::endpoint(asio::ip::make_address(srv.host()), srv.http_port()));
            ws.handshake(srv.host(), "/");
            ws.binary(true);
            std::uint64_t sent = 0, expected = 0;
            for (; sent < window; ++sent) ws.write(asio::buffer(message(sent)));
            beast::flat_buffer buffer;
            for (int round = 0; round < 60'000; ++round) {  // bounded: some 10 minutes at this pace
                buffer.clear();
                ws.read(buffer);
                if (beast::buffers_to_string(buffer.data()) != message(expected)) ++wrong;
                ++expected;
                ++echoes;
                if (termed.load()) ++echoes_after_term;
                std::this_thread::sleep_for(10ms);
                ws.write(asio::buffer(message(sent++)));  // one more unechoed for every echo read
            }
        } catch (const boost::system::system_error& e) {
            end = e.code();
            if (end == websocket::error::closed) close_code = ws.reason().code;
        }
        ended = clock::now();
    });

    if (!wait_until([&] { return echoes.load() >= 100; }, 30s)) {
        srv.kill_now();
        BOOST_FAIL("only " << echoes.load() << " echoes before SIGTERM");
    }
    termed = true;
    const auto term_at = clock::now();
    srv.signal(SIGTERM);
    const auto code = srv.wait_exit(close_timeout + 500ms + slack + 5s);
    if (!code) srv.kill_now();
    client.join();  // the server's exit ends the client's read at the latest

    BOOST_TEST_MESSAGE("the client read " << echoes.load() << " echoes (" << echoes_after_term << " after SIGTERM) and ended "
                                          << ms(ended - term_at) << " ms after it: " << end.message() << ", close code "
                                          << close_code);
    BOOST_TEST_REQUIRE(code.has_value(), "still running long after SIGTERM");
    BOOST_TEST(*code == 0);
    BOOST_TEST((end == websocket::error::closed), "the client's read ended with " << end.message() << ", not a close frame");
    BOOST_TEST(close_code == 1001U);
    BOOST_TEST(ms(ended - term_at) < ms(close_timeout), "the 1001 came only after " << ms(ended - term_at) << " ms");
    BOOST_TEST(wrong == 0U, wrong << " echoes out of order or altered");
    BOOST_TEST(echoes_after_term > 0U, "nothing was echoed after SIGTERM: the queue was empty at the drain's turn");
}

BOOST_AUTO_TEST_SUITE_END()
