// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Tearing a server down in any order. One io_context run by three threads (more than the
// machine's cores), a wheel_pool registered for the drop-in stream, per-shard
// websocket_liveness configs, and sessions of every kind open, each with an operation pending:
//  - a WebSocket session with the explicit websocket_liveness object (reading);
//  - a WebSocket session with the one-line timeouts (set_option(ws, timeout); reading);
//  - an HTTP keep-alive session on the drop-in tcp_stream (http::async_read, expires_after);
//  - a TLS session in its handshake (ssl_stream<tcp_stream>, expires_after);
//  - a wheel async_wait and a cancel_after'd socket read.
// Then io_context::stop(), the threads joined, and the configs, the pool and the io_context
// destroyed in each order the declarations of a server can give (the io_context last: Asio's
// rule for every I/O object, the wheels' own steady_timer among them). Run under
// AddressSanitizer (the sanitizer build of the test command) and ThreadSanitizer
// (tests/example_checks/tsan_server_async.sh builds it instrumented): nothing may touch
// freed memory, nothing may race.

#include <idlewheel/beast.hpp>
#include <idlewheel/beast/ssl_stream.hpp>
#include <idlewheel/cancel_after.hpp>
#include <idlewheel/wheel_pool.hpp>

#include "support/net.hpp"

#define BOOST_TEST_MODULE test_teardown
#include <boost/test/unit_test.hpp>

#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // Asio is compiled separately (idlewheel_asio): its SSL part here, once
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;
using ws_stream = websocket::stream<idlewheel::beast::tcp_stream>;
class live_session;
using live_configs = idlewheel::per_shard<idlewheel::beast::websocket_liveness_config<live_session, ws_stream>>;

std::atomic<int> sessions_ready{0};  // sessions whose operation is pending
std::atomic<int> sessions_alive{0};  // constructed and not yet destroyed

struct counted {
    counted() { ++sessions_alive; }
    counted(const counted&) = delete;
    counted& operator=(const counted&) = delete;
    ~counted() { --sessions_alive; }
};

class live_session : public std::enable_shared_from_this<live_session>, counted {
public:
    live_session(tcp::socket&& s, const live_configs::value_type& c) : ws_(std::move(s)), live_(c, *this, ws_) {}
    void run() {
        net::dispatch(ws_.get_executor(), [self = shared_from_this()] {
            self->live_.start();
            self->ws_.async_accept([self](error_code ec) {
                if (!self->live_.accepted(ec)) return;
                ++sessions_ready;
                self->read();
            });
        });
    }

private:
    void read() {
        ws_.async_read(in_, [self = shared_from_this()](error_code ec, std::size_t n) {
            if (!self->live_.on_read(ec)) return;
            self->in_.consume(n);
            self->read();
        });
    }
    ws_stream ws_;
    idlewheel::beast::websocket_liveness<live_session, ws_stream> live_;
    beast::flat_buffer in_;
};

class one_line_session : public std::enable_shared_from_this<one_line_session>, counted {
public:
    explicit one_line_session(tcp::socket&& s) : ws_(std::move(s)) {}
    void run() {
        net::dispatch(ws_.get_executor(), [self = shared_from_this()] {
            idlewheel::beast::set_option(self->ws_,
                                         websocket::stream_base::timeout::suggested(beast::role_type::server));
            self->ws_.async_accept([self](error_code ec) {
                if (ec) return;
                ++sessions_ready;
                self->read();
            });
        });
    }

private:
    void read() {
        ws_.async_read(in_, [self = shared_from_this()](error_code ec, std::size_t n) {
            if (ec) return;
            self->in_.consume(n);
            self->read();
        });
    }
    ws_stream ws_;
    beast::flat_buffer in_;
};

class http_session : public std::enable_shared_from_this<http_session>, counted {
public:
    explicit http_session(tcp::socket&& s) : stream_(std::move(s)) {}
    void run() {
        net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
            self->stream_.expires_after(30s);
            http::async_read(self->stream_, self->in_, self->req_, [self](error_code, std::size_t) {});
            ++sessions_ready;
        });
    }

private:
    idlewheel::beast::tcp_stream stream_;
    beast::flat_buffer in_;
    http::request<http::string_body> req_;
};

class tls_session : public std::enable_shared_from_this<tls_session>, counted {
public:
    tls_session(tcp::socket&& s, net::ssl::context& ctx) : stream_(std::move(s), ctx) {}
    void run() {
        net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
            beast::get_lowest_layer(self->stream_).expires_after(30s);
            self->stream_.async_handshake(net::ssl::stream_base::server, [self](error_code) {});
            ++sessions_ready;
        });
    }

private:
    idlewheel::beast::ssl_stream<idlewheel::beast::tcp_stream> stream_;
};

// A throwaway self-signed identity for the TLS listener (the client never completes a handshake).
void use_throwaway_identity(net::ssl::context& ctx) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
    BOOST_REQUIRE(key && cert);
    X509* x = cert.get();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key.get());
    X509_set_issuer_name(x, X509_get_subject_name(x));
    BOOST_REQUIRE(X509_sign(x, key.get(), EVP_sha256()) > 0);
    BOOST_REQUIRE(SSL_CTX_use_certificate(ctx.native_handle(), x) == 1);
    BOOST_REQUIRE(SSL_CTX_use_PrivateKey(ctx.native_handle(), key.get()) == 1);
}

enum class order { configs_pool_io, pool_configs_io };

const char* name(order o) { return o == order::configs_pool_io ? "configs, pool, io_context" : "pool, configs, io_context"; }

void stop_a_server_with_every_kind_of_session(order o) {
    sessions_ready = 0;
    constexpr int per_kind = 3;
    auto io = std::make_unique<net::io_context>(3);
    idlewheel::wheel_pool_options pool_options;
    pool_options.shards = 3;
    auto pool = std::make_unique<idlewheel::wheel_pool>(*io, pool_options);
    idlewheel::beast::use_wheel_pool(*io, *pool);
    auto configs = std::make_unique<live_configs>(
        *pool, idlewheel::session_liveness_options{.handshake_timeout = 30s, .idle_timeout = 60s,
                                                   .ping_interval = 20s, .pong_timeout = 10s, .close_timeout = 5s});
    net::ssl::context tls(net::ssl::context::tls_server);
    use_throwaway_identity(tls);

    // Four listeners, one per kind of session, each connection on the next shard's strand.
    std::vector<tcp::acceptor> acceptors;
    for (int i = 0; i < 4; ++i) acceptors.emplace_back(*io, tcp::endpoint{net::ip::address_v4::loopback(), 0});
    for (int kind = 0; kind < 4; ++kind) {
        for (int k = 0; k < per_kind; ++k) {
            auto& shard = pool->next();
            acceptors[static_cast<std::size_t>(kind)].async_accept(
                shard.get_executor(), [kind, &configs, &shard, &tls](error_code ec, tcp::socket s) {
                    if (ec) return;
                    if (kind == 0) std::make_shared<live_session>(std::move(s), (*configs)[shard])->run();
                    if (kind == 1) std::make_shared<one_line_session>(std::move(s))->run();
                    if (kind == 2) std::make_shared<http_session>(std::move(s))->run();
                    if (kind == 3) std::make_shared<tls_session>(std::move(s), tls)->run();
                });
        }
    }
    // Operations of the wheels themselves: an async_wait and a cancel_after'd read.
    auto& waiting = pool->next();
    std::optional<tcp::socket> lonely(std::in_place, waiting.get_executor());
    std::optional<tcp::socket> lonely_peer(std::in_place, *io);
    {
        tcp::acceptor extra(*io, {net::ip::address_v4::loopback(), 0});
        lonely_peer->connect(extra.local_endpoint());
        extra.accept(*lonely);
    }
    std::array<char, 16> lonely_in{};
    net::post(waiting.get_executor(), [&] {
        waiting.wheel().async_wait(1h, [](error_code) {});
        lonely->async_read_some(net::buffer(lonely_in),
                                idlewheel::cancel_after(waiting.wheel(), 1h, [](error_code, std::size_t) {}));
        ++sessions_ready;
    });

    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) threads.emplace_back([&] { io->run(); });

    // The clients, on their own io_context: WebSocket handshakes done, TLS and HTTP silent.
    net::io_context client_io;
    std::vector<websocket::stream<tcp::socket>> ws_clients;
    std::vector<tcp::socket> silent_clients;
    for (int kind = 0; kind < 4; ++kind) {
        const auto ep = acceptors[static_cast<std::size_t>(kind)].local_endpoint();
        for (int k = 0; k < per_kind; ++k) {
            if (kind < 2) {
                auto& c = ws_clients.emplace_back(client_io);
                c.next_layer().connect(ep);
                c.handshake("localhost", "/");
            } else {
                silent_clients.emplace_back(client_io).connect(ep);
            }
        }
    }
    const int expected = 4 * per_kind + 1;
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (sessions_ready.load() < expected && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(5ms);
    BOOST_TEST_REQUIRE(sessions_ready.load() == expected);
    BOOST_TEST(sessions_alive.load() == 4 * per_kind);

    io->stop();
    for (auto& t : threads) t.join();
    BOOST_TEST_MESSAGE("destroying " << name(o) << " with " << sessions_alive.load() << " sessions open");
    if (o == order::configs_pool_io) {
        configs.reset();
        pool.reset();
    } else {
        pool.reset();
        configs.reset();
    }
    acceptors.clear();
    lonely.reset();  // the io_context's I/O objects go before it (Asio's rule)
    lonely_peer.reset();
    io.reset();  // destroys the pending handlers, and the sessions with them
    BOOST_TEST(sessions_alive.load() == 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(configs_then_pool_then_io_context) { stop_a_server_with_every_kind_of_session(order::configs_pool_io); }

BOOST_AUTO_TEST_CASE(pool_then_configs_then_io_context) { stop_a_server_with_every_kind_of_session(order::pool_configs_io); }
