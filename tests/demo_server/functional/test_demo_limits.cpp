// Limits: --max-message-size (WebSocket close 1009; TCP line too long) and --max-connections
// (accepted and closed at once, counted, slots reused). Each affects only the offending
// client: everyone else keeps being served.
#include "demo_fixture.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

#include <memory>

namespace bdata = boost::unit_test::data;
using namespace demo_test;

// demo_message_size: a WebSocket message over --max-message-size gets close 1009, an over-long TCP line
// closes that connection; others are unaffected.
BOOST_AUTO_TEST_SUITE(message_size)

BOOST_DATA_TEST_CASE(oversized_message_gets_1009_others_unaffected, bdata::make(timer_modes), mode) {
    demo_server srv(mode, {"--max-message-size", "1024", "--tcp-echo=lines"});
    ws_client other(srv.http_endpoint());
    other.echo("before");
    tcp_client line_client(srv.tcp_endpoint());
    line_client.write("a line\n");
    BOOST_TEST(line_client.read_exactly(7) == "a line\n");

    ws_client big(srv.http_endpoint());
    big.echo(std::string(1024, 't'));                // exactly the limit: fine
    big.echo(std::string(1024, '\x01'), false);
    big.write(std::string(1025, 'b'), false);         // one byte over
    const auto m = big.read();
    BOOST_TEST((m.ec == websocket::error::closed), "expected a close frame, got: " << m.ec.message());
    BOOST_TEST(m.reason.code == websocket::close_code::too_big, "close code " << m.reason.code);

    // A TCP line that grows past the limit without a newline ends that session only.
    tcp_client long_line(srv.tcp_endpoint());
    long_line.write(std::string(2000, 'l'));
    const auto r = long_line.wait_closed(5s);
    BOOST_TEST(r.closed, "an over-long TCP line should close the connection: " << r.ec.message());
    BOOST_TEST(r.data.empty(), "nothing of the over-long line may be echoed");

    // The same for a complete line that arrives in one piece; a line of exactly the limit is fine.
    tcp_client whole_line(srv.tcp_endpoint());
    whole_line.write(std::string(1024, 'k') + "\n");
    BOOST_TEST(whole_line.read_exactly(1025) == std::string(1024, 'k') + "\n");
    whole_line.write(std::string(2000, 'w') + "\n");
    const auto w = whole_line.wait_closed(5s);
    BOOST_TEST(w.closed, "a complete over-long TCP line should close the connection: " << w.ec.message());
    BOOST_TEST(w.data.empty(), "nothing of the over-long line may be echoed (got " << w.data.size() << " bytes)");

    other.echo("after");
    other.echo(std::string(1000, 'o'), false);
    line_client.write("still served\n");
    BOOST_TEST(line_client.read_exactly(13) == "still served\n");
    BOOST_TEST(wait_for_count(srv, "closed.too_big", 3) == 3);
    BOOST_TEST(integer(srv.stats(), "open.websocket") == 1);
    BOOST_TEST(integer(srv.stats(), "open.tcp") == 1);
}

BOOST_AUTO_TEST_SUITE_END()

// demo_max_connections: beyond --max-connections a connection is accepted and closed at once and counted in
// `refused`; a freed slot is reused.
BOOST_AUTO_TEST_SUITE(max_connections)

// With --max-connections 5: five clients are served; the sixth (TCP or HTTP/WebSocket) is
// accepted and closed at once (EOF, no hang), and /stats counts it; after one client leaves,
// a new one is served.
BOOST_DATA_TEST_CASE(beyond_limit_closed_at_once_and_counted, bdata::make(timer_modes), mode) {
    demo_server srv(mode, {"--max-connections", "5"});
    std::vector<std::unique_ptr<tcp_client>> five;
    for (int i = 0; i < 4; ++i) {
        five.push_back(std::make_unique<tcp_client>(srv.tcp_endpoint()));
        five.back()->write("hi");
        BOOST_TEST_REQUIRE(five.back()->read_exactly(2) == "hi");
    }
    auto ws = std::make_unique<ws_client>(srv.http_endpoint());
    ws->echo("fifth");

    std::int64_t refusals_seen = 0;
    {
        const auto from = clock::now();
        tcp_client sixth(srv.tcp_endpoint());  // the kernel completes the connect; then the server closes it
        const auto r = sixth.wait_closed(5s);
        ++refusals_seen;
        BOOST_TEST(r.closed, "the sixth connection should see EOF: " << r.ec.message());
        BOOST_TEST(r.data.empty());
        BOOST_TEST(ms(r.at - from) <= ms(slack), "the sixth connection should be closed at once");
    }
    {
        ws_client sixth_ws;
        BOOST_CHECK_THROW(sixth_ws.connect(srv.http_endpoint()), std::exception);
        ++refusals_seen;
    }
    // The five are still served.
    for (auto& c : five) {
        c->write("ok");
        BOOST_TEST(c->read_exactly(2) == "ok");
    }
    ws->echo("still");

    // One leaves: a new client is served (the slot is freed when the server has seen the EOF,
    // so an attempt in between may still be refused; each refusal is counted by the server).
    five.front()->close();
    five.erase(five.begin());
    std::unique_ptr<tcp_client> newcomer;
    BOOST_TEST_REQUIRE(wait_until(
                           [&] {
                               try {
                                   auto c = std::make_unique<tcp_client>(srv.tcp_endpoint());
                                   c->write("new");
                                   if (c->read_exactly(3, 2s) == "new") {
                                       newcomer = std::move(c);
                                       return true;
                                   }
                               } catch (const std::exception&) {  // refused: EOF or reset
                               }
                               ++refusals_seen;
                               return false;
                           },
                           5s, 20ms),
                       "no new client was served after one left");

    // Free a slot for /stats itself, then check the counts.
    ws.reset();
    json::object s;
    BOOST_TEST_REQUIRE(wait_until(
        [&] {
            try {
                s = srv.stats();
                return true;
            } catch (const std::exception&) {
                ++refusals_seen;
                return false;
            }
        },
        5s, 20ms));
    BOOST_TEST(integer(s, "refused") == refusals_seen);
    BOOST_TEST(integer(s, "open.tcp") == 4);
    BOOST_TEST(integer(s, "open_connections") == 5);  // four TCP clients and this /stats request
}

BOOST_AUTO_TEST_SUITE_END()
