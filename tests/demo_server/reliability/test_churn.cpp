// Churn: hundreds of thousands of connect/disconnect cycles (most TCP, a quarter of those with
// an echo, one in twenty a full WebSocket upgrade + echo + close handshake). Afterwards nothing
// may be left behind: no open session, no pending timeout on any wheel, every accepted
// connection counted closed exactly once, and the RSS back near where it was after a warm-up.
#include "load_clients.hpp"
#include "server_fixture.hpp"

using namespace reliability;

namespace {

// The count: the second argument after "--" (CMake cache variable IDLEWHEEL_CHURN_CYCLES), else
// RELIABILITY_CHURN_CYCLES, else 200 000.
std::uint64_t churn_cycles() {
    const auto& suite = boost::unit_test::framework::master_test_suite();
    if (suite.argc > 2) return std::strtoull(suite.argv[2], nullptr, 10);
    if (const char* env = std::getenv("RELIABILITY_CHURN_CYCLES")) return std::strtoull(env, nullptr, 10);
    return 200'000;
}

load::outcome run_cycles(const server& srv, std::uint64_t cycles) {
    load::plan p;
    p.host = srv.host();
    p.tcp_port = srv.tcp_port();
    p.http_port = srv.http_port();
    p.threads = 2;
    p.cycle_slots = 32;
    p.cycles = cycles;
    p.duration = std::chrono::seconds(150);  // far above the ~20 s 200 000 cycles take here
    return load::run(p);
}

// Waits until the server is back to rest: only the /stats session itself open, nothing
// pending on any wheel (the wheel figures are refreshed every 250 ms), and every accepted
// connection counted closed. /stats reads its counters one after the other, not as one
// snapshot: on a loaded machine a late accept of a connection the churn client had already
// closed can land between the reads, so one document may be off by one; the next is not.
stats_doc at_rest(const server& srv) {
    std::optional<stats_doc> last;
    wait_until(
        [&] {
            last = srv.stats();
            return last->integer("open_connections") == 1 && last->integer("open.tcp") == 0 && last->integer("open.websocket") == 0 &&
                   last->integer("wheel.pending") == 0 &&
                   last->integer("accepted") - last->integer("refused") - last->closed_total() == 1;
        },
        5s, 100ms);
    return *last;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(churn, *boost::unit_test::label("io_threads"))

BOOST_AUTO_TEST_CASE(connect_disconnect_cycles_leave_nothing_behind) {
    // RSS may end this much above the warmed-up baseline: allocator caches, the session
    // registry's hash buckets sized for the peak, kernel-side socket memory is not counted.
    constexpr double rss_tolerance = 8.0 * 1024 * 1024;
    const std::uint64_t cycles = churn_cycles();
    server srv({"--threads", "2", "--quiet", "--idle-timeout", "60s"});

    // Warm-up: allocator arenas, both workers, Beast's buffers.
    const auto warm = run_cycles(srv, 5000);
    BOOST_TEST_REQUIRE(warm.failures == 0, warm.first_failure);
    const auto baseline = at_rest(srv);

    const auto o = run_cycles(srv, cycles);
    BOOST_TEST_MESSAGE("churn: " << o.cycles << " cycles (" << o.tcp_cycles << " TCP, " << o.websocket_cycles << " WebSocket) in "
                                 << o.seconds << " s, " << static_cast<double>(o.cycles) / o.seconds << " per second");
    BOOST_TEST(o.failures == 0, o.failures << " failed cycles; first: " << o.first_failure);
    BOOST_TEST(o.cycles == cycles);
    BOOST_TEST(o.websocket_cycles > 0U);

    const auto after = at_rest(srv);
    BOOST_TEST(after.integer("open_connections") == 1);  // this /stats request
    BOOST_TEST(after.integer("open.tcp") == 0);
    BOOST_TEST(after.integer("open.websocket") == 0);
    BOOST_TEST(after.integer("wheel.pending") == 0);
    // Every accepted connection is closed exactly once (the open one is this request).
    BOOST_TEST(after.integer("accepted") - after.integer("refused") - after.closed_total() == 1);
    BOOST_TEST(after.integer("accepted") - baseline.integer("accepted") >= static_cast<std::int64_t>(cycles));
    // All of them ended as the clients' own closes: nothing timed out or failed.
    BOOST_TEST(after.closed_total() - after.integer("closed.client_close") == baseline.closed_total() - baseline.integer("closed.client_close"));
    const double rss0 = baseline.number("process.rss_bytes"), rss1 = after.number("process.rss_bytes");
    BOOST_TEST_MESSAGE("server RSS after warm-up " << rss0 / 1048576 << " MB, after churn " << rss1 / 1048576 << " MB");
    if (rss_is_meaningful)
        BOOST_TEST(rss1 - rss0 < rss_tolerance);
    else
        BOOST_TEST_MESSAGE("sanitizer build: RSS bound not checked");
    RELIABILITY_EXPECT_SERVING(srv, "after churn");
}

BOOST_AUTO_TEST_SUITE_END()
