// Malformed input: broken WebSocket frames after a good handshake, and broken HTTP. The bad
// session gets the close code RFC 6455 prescribes (or a 400), is counted, and a WebSocket
// client connected at the same time keeps getting its echoes.
#include "raw_websocket.hpp"
#include "server_fixture.hpp"

#include <random>

using namespace reliability;

BOOST_AUTO_TEST_SUITE(bad_frames, *boost::unit_test::label("io_threads"))

namespace {

struct bad_frame_case {
    std::string name;
    std::string bytes;     // sent after the handshake
    unsigned close_code;   // expected in the server's close frame
    std::string cause;     // the closed.* counter that must count it
};

std::vector<bad_frame_case> bad_frame_cases(std::size_t max_message_size) {
    // Random bytes from a fixed seed, behind a first byte with all three reserved bits set and
    // a reserved opcode: invalid whatever the random tail says (no extension was negotiated).
    std::mt19937 rng(20260601);
    std::string garbage(1, static_cast<char>(0xFF));
    for (int i = 0; i < 63; ++i) garbage.push_back(static_cast<char>(rng() & 0xFF));
    // C3 28 is an invalid two-byte sequence; FF never appears in UTF-8.
    const std::string not_utf8 = "valid prefix \xC3\x28 then \xFF";
    return {
        {"random bytes", garbage, 1002, "protocol_error"},
        {"invalid UTF-8 in a text frame", make_frame(opcode::text, not_utf8), 1007, "protocol_error"},
        {"unmasked client frame", make_frame(opcode::text, "hello, unmasked", false), 1002, "protocol_error"},
        // Only the header and 16 bytes: the server must refuse on the declared length alone.
        {"frame declaring more than --max-message-size",
         make_frame(opcode::binary, std::string(16, 'b'), true, std::uint64_t{max_message_size} * 16), 1009, "too_big"},
        {"ping with a 200-byte payload (control frames carry at most 125)", make_frame(opcode::ping, std::string(200, 'p')), 1002,
         "protocol_error"},
    };
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_bad_frame_closes_only_its_session_with_the_right_code) {
    constexpr std::size_t max_message_size = 64 * 1024;
    server srv({"--max-message-size", std::to_string(max_message_size), "--idle-timeout", "30s", "--ping-interval", "0s"});
    beast_ws_client neighbour;  // connected the whole time
    BOOST_TEST_REQUIRE(!neighbour.connect(srv.host(), srv.http_port()));
    BOOST_TEST_REQUIRE(!neighbour.echo("before"));

    for (const auto& c : bad_frame_cases(max_message_size)) {
        BOOST_TEST_CONTEXT(c.name) {
            const auto before = srv.stats();
            auto ws = raw_websocket::connect(srv.host(), srv.http_port());
            BOOST_TEST_REQUIRE(ws.echo("a good message first"));
            BOOST_TEST_REQUIRE((ws.send_raw(c.bytes) == io_status::ok));
            const auto code = ws.read_close_code(clock::now() + 5s);
            BOOST_TEST_REQUIRE(code.has_value(), "no close frame from the server");
            BOOST_TEST(*code == c.close_code);
            // The server then waits for our end of the TCP close (RFC 6455 7.1.1): give it.
            ws.socket().close();
            const std::string counter = "closed." + c.cause;
            BOOST_TEST(wait_until([&] { return srv.stats().integer(counter) > before.integer(counter); }, 5s));
            const auto after = srv.stats();
            BOOST_TEST(after.integer(counter) - before.integer(counter) == 1);
            BOOST_TEST(after.integer("open.websocket") == 1);  // the neighbour
            BOOST_TEST(!neighbour.echo("still here after: " + c.name));
        }
    }
    BOOST_TEST(!neighbour.close());
    RELIABILITY_EXPECT_SERVING(srv, "after the bad frames");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_http)

// Each request is answered 400 (or, if the server closed before the answer could be read,
// closed) and counted in closed.bad_request; the server keeps serving.
BOOST_AUTO_TEST_CASE(garbage_and_oversized_headers_get_400_and_are_counted) {
    server srv({"--idle-timeout", "30s"});
    std::mt19937 rng(7);
    std::string binary(1, '\0');  // a NUL can never start a method
    for (int i = 0; i < 255; ++i) binary.push_back(static_cast<char>(rng() & 0xFF));
    const std::vector<std::pair<std::string, std::string>> cases{
        {"binary garbage", binary},
        {"a TLS ClientHello on the plain port", std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11) + std::string(64, '\x42')},
        {"header line without a colon", "GET / HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n"},
        {"bad version", "GET / HTTP/9.Z\r\nHost: x\r\n\r\n"},
        {"headers over 8 KB", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(9 * 1024, 'a') + "\r\n\r\n"},
        {"headers over 8 KB in many lines", [] {
             std::string r = "GET /stats HTTP/1.1\r\nHost: x\r\n";
             for (int i = 0; i < 400; ++i) r += "X-Filler-" + std::to_string(i) + ": 0123456789\r\n";
             return r + "\r\n";
         }()},
    };
    for (const auto& [name, request] : cases) {
        BOOST_TEST_CONTEXT(name) {
            const auto before = srv.stats();
            const auto r = raw_http(srv.host(), srv.http_port(), request);
            const bool got_400 = r.response.rfind("HTTP/1.1 400", 0) == 0;
            BOOST_TEST_MESSAGE(name << ": " << (got_400 ? "400" : "no answer") << ", then " << to_string(r.end));
            BOOST_TEST((got_400 || (r.response.empty() && (r.end == io_status::eof || r.end == io_status::reset))),
                       "neither a 400 nor a close: " << to_string(r.end) << " '" << r.response.substr(0, 200) << "'");
            BOOST_TEST(r.end != io_status::timeout, "the server did not close the connection");
            BOOST_TEST(wait_until([&] { return srv.stats().integer("closed.bad_request") > before.integer("closed.bad_request"); }, 5s));
            BOOST_TEST(srv.stats().integer("closed.bad_request") - before.integer("closed.bad_request") == 1);
        }
    }
    RELIABILITY_EXPECT_SERVING(srv, "after bad HTTP");
}

BOOST_AUTO_TEST_SUITE_END()
