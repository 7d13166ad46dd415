// Echo correctness: TCP bytes and lines, WebSocket text and binary, many clients at once.
#include "demo_fixture.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

#include <algorithm>
#include <barrier>
#include <memory>
#include <mutex>
#include <thread>

namespace bdata = boost::unit_test::data;
using namespace demo_test;

namespace {

// Deterministic bytes of every value (0 and 0xff included), different per seed.
std::string pattern(std::size_t n, std::uint32_t seed) {
    std::string s(n, '\0');
    std::uint32_t x = seed * 2654435761U + 1U;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x & 0xffU);
    }
    return s;
}

}  // namespace

// demo_echo: TCP byte echo (up to 100 KB), --tcp-echo=lines (partial lines held back), WebSocket text and
// binary, no Nagle stalls, 8 concurrent clients.
BOOST_AUTO_TEST_SUITE(echo, *boost::unit_test::label("io_threads"))

BOOST_DATA_TEST_CASE(tcp_bytes_echoed_exactly, bdata::make(all_timer_modes), mode) {
    demo_server srv(mode, {});
    tcp_client c(srv.tcp_endpoint());
    for (const std::size_t n : {1U, 2U, 17U, 1000U, 4096U, 65536U, 100U * 1024U}) {
        const auto sent = pattern(n, static_cast<std::uint32_t>(n));
        c.write(sent);
        const auto got = c.read_exactly(n);
        BOOST_TEST((got == sent), "the echo of " << n << " bytes differs from what was sent");
    }
    // Nothing more than what was sent comes back.
    BOOST_TEST(c.quiet_for(100ms));
}

BOOST_DATA_TEST_CASE(tcp_lines_echoed_whole, bdata::make(all_timer_modes), mode) {
    demo_server srv(mode, {"--tcp-echo=lines"});
    tcp_client c(srv.tcp_endpoint());
    c.write("hel");
    BOOST_TEST(c.quiet_for(150ms), "a partial line must not be echoed");
    c.write("lo\nwor");
    BOOST_TEST(c.read_exactly(6) == "hello\n");
    BOOST_TEST(c.quiet_for(150ms), "the partial line 'wor' must stay buffered");
    c.write("ld\n\nthree\nfour\n");
    BOOST_TEST(c.read_exactly(18) == "world\n\nthree\nfour\n");
    // A line arriving one byte at a time.
    for (const char ch : std::string("slow line\n")) c.write(std::string(1, ch));
    BOOST_TEST(c.read_exactly(10) == "slow line\n");
    // A long line over several writes, bytes of every value except '\n'.
    auto line = pattern(20000, 7);
    for (auto& ch : line)
        if (ch == '\n') ch = 'n';
    c.write(line.substr(0, 7000));
    c.write(line.substr(7000) + "\n");
    const auto got = c.read_exactly(line.size() + 1);
    BOOST_TEST((got == line + "\n"), "the echo of a 20000-byte line differs");
    BOOST_TEST(c.quiet_for(100ms));
}

BOOST_DATA_TEST_CASE(websocket_text_and_binary_echoed, bdata::make(all_timer_modes), mode) {
    demo_server srv(mode, {});
    ws_client ws(srv.http_endpoint());
    const std::vector<std::string> texts{"hello", "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93", "", std::string(60000, 'x')};
    for (const auto& text : texts) {
        ws.write(text, true);
        const auto m = ws.read();
        BOOST_TEST_REQUIRE(!m.ec, m.ec.message());
        BOOST_TEST(m.text);
        BOOST_TEST((m.data == text), "text echo of " << text.size() << " bytes differs");
    }
    for (const std::size_t n : {1U, 256U, 4096U, 65536U}) {
        const auto bin = pattern(n, 99);
        ws.write(bin, false);
        const auto m = ws.read();
        BOOST_TEST_REQUIRE(!m.ec, m.ec.message());
        BOOST_TEST(!m.text, "binary must come back binary");
        BOOST_TEST((m.data == bin), "binary echo of " << n << " bytes differs");
    }
}

// Medium messages must not wait for a delayed ACK (Nagle's algorithm left on would hold the
// tail of each echo for 40 ms or more, a delayed ACK): the median round trip of a 15 000-byte
// message stays well below that.
BOOST_DATA_TEST_CASE(websocket_echo_without_nagle_stalls, bdata::make(all_timer_modes), mode) {
    demo_server srv(mode, {});
    ws_client ws(srv.http_endpoint());
    const auto msg = pattern(15000, 5);
    std::vector<double> round_trips;
    for (int i = 0; i < 21; ++i) {
        const auto t0 = clock::now();
        ws.echo(msg, false);
        round_trips.push_back(ms(clock::now() - t0));
    }
    std::sort(round_trips.begin(), round_trips.end());
    BOOST_TEST(round_trips[round_trips.size() / 2] < 30.0, "median WebSocket echo round trip " << round_trips[round_trips.size() / 2] << " ms");
}

// Eight clients (four TCP, four WebSocket) on their own threads, all connected before any
// sends, then each doing round trips of varying sizes: every echo must be its own data.
BOOST_DATA_TEST_CASE(concurrent_clients_each_get_their_own_echo, bdata::make(all_timer_modes), mode) {
    demo_server srv(mode, {"--threads", "2"});
    constexpr int clients = 8, rounds = 40;
    std::barrier connected(clients);
    std::mutex m;
    std::vector<std::string> failures;
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i) {
        threads.emplace_back([&, i] {
            bool arrived = false;
            try {
                if (i % 2 == 0) {
                    tcp_client c(srv.tcp_endpoint());
                    arrived = true;
                    connected.arrive_and_wait();
                    for (int r = 0; r < rounds; ++r) {
                        const auto sent = pattern(static_cast<std::size_t>(1 + (r * 997 + i * 131) % 20000), static_cast<std::uint32_t>(i * 1000 + r));
                        c.write(sent);
                        if (c.read_exactly(sent.size()) != sent) throw std::runtime_error("tcp echo differs");
                    }
                } else {
                    ws_client c(srv.http_endpoint());
                    arrived = true;
                    connected.arrive_and_wait();
                    for (int r = 0; r < rounds; ++r)
                        c.echo(pattern(static_cast<std::size_t>((r * 997 + i * 131) % 20000), static_cast<std::uint32_t>(i * 1000 + r)), false);
                }
            } catch (const std::exception& e) {
                if (!arrived) connected.arrive_and_drop();  // the others must not wait for this one
                std::lock_guard lock(m);
                failures.push_back("client " + std::to_string(i) + ": " + e.what());
            }
        });
    }
    for (auto& t : threads) t.join();
    for (const auto& f : failures) BOOST_ERROR(f);
    BOOST_TEST(failures.empty());
}

BOOST_AUTO_TEST_SUITE_END()
