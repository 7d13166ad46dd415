// Beast 1.81's http_server_flex start on idlewheel::beast::tcp_stream, and a churn of HTTP and
// HTTPS clients against it (issue 42, item 1).
//
// The server keeps the example's threading and its one line that matters here:
// detect_session::run() sets the timeout and starts async_detect_ssl from the LISTENER's strand
// (its on_accept), before any dispatch to the session's own. The only changes are the ones
// docs/beast_converting.md documents: the stream's type, the pool registered in main, and the socket
// accepted onto a shard's strand (pool.next().get_executor()) where Beast calls
// net::make_strand(ioc). The stream carries that first operation over to its own strand; a
// build with -DNDEBUG (this program always has it) must serve every request, and under
// ThreadSanitizer (tests/example_checks/tsan_flex_start.sh) report nothing.
//
//   beast_flex_start THREADS CLIENTS ROUNDS
//
// THREADS run the server's io_context; CLIENTS clients (half of them over TLS) each open ROUNDS
// connections one after another, 2 keep-alive requests on each, every answer awaited for 10 s
// at most. Prints one line; exit 0 only if every request was answered.
#ifndef NDEBUG
#define NDEBUG  // the release build's behaviour, whatever the build type
#endif

#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/wheel_pool.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // Asio is compiled separately (idlewheel_asio): its SSL part here, once
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

std::atomic<long> server_failures{0};

void fail(beast::error_code ec, const char* what) {
    // As the example: a client's close (end_of_stream, a TLS short read) is not a failure.
    if (ec == net::ssl::error::stream_truncated || ec == http::error::end_of_stream) return;
    server_failures.fetch_add(1, std::memory_order_relaxed);
    std::fprintf(stderr, "server %s: %s\n", what, ec.message().c_str());
}

// A throwaway self-signed certificate and key, made in memory.
void use_throwaway_identity(ssl::context& ctx) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    X509_NAME* name = X509_get_subject_name(x);
    const unsigned char cn[] = "localhost";
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509_sign(x, key, EVP_sha256());
    if (SSL_CTX_use_certificate(ctx.native_handle(), x) != 1 || SSL_CTX_use_PrivateKey(ctx.native_handle(), key) != 1) {
        std::fputs("beast_flex_start: no certificate\n", stderr);
        std::exit(2);
    }
    X509_free(x);
    EVP_PKEY_free(key);
}

// The example's sessions (its CRTP kept short: one template over the stream).
template <class Stream>
class http_session : public std::enable_shared_from_this<http_session<Stream>> {
public:
    http_session(Stream&& stream, beast::flat_buffer&& buffer) : stream_(std::move(stream)), buffer_(std::move(buffer)) {}

    void run() { do_read(); }

private:
    idlewheel::beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

    void do_read() {
        req_ = {};
        lowest().expires_after(30s);
        http::async_read(stream_, buffer_, req_, beast::bind_front_handler(&http_session::on_read, this->shared_from_this()));
    }
    void on_read(beast::error_code ec, std::size_t) {
        if (ec == http::error::end_of_stream) return do_eof();
        if (ec) return fail(ec, "read");
        res_ = {};
        res_.result(http::status::ok);
        res_.version(req_.version());
        res_.keep_alive(req_.keep_alive());
        res_.body() = "ok";
        res_.prepare_payload();
        lowest().expires_after(30s);
        http::async_write(stream_, res_, beast::bind_front_handler(&http_session::on_write, this->shared_from_this()));
    }
    void on_write(beast::error_code ec, std::size_t) {
        if (ec) return fail(ec, "write");
        if (!res_.keep_alive()) return do_eof();
        do_read();
    }
    void do_eof() {
        if constexpr (std::is_same_v<Stream, idlewheel::beast::tcp_stream>) {
            beast::error_code ignored;
            stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        } else {
            lowest().expires_after(30s);
            stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
        }
    }

    Stream stream_;
    beast::flat_buffer buffer_;
    http::request<http::string_body> req_;
    http::response<http::string_body> res_;
};

template <class Stream>
class tls_session : public std::enable_shared_from_this<tls_session<Stream>> {
public:
    tls_session(tcp::socket&& socket, ssl::context& ctx, beast::flat_buffer&& buffer)
        : stream_(idlewheel::beast::tcp_stream(std::move(socket)), ctx), buffer_(std::move(buffer)) {}
    void run() {
        beast::get_lowest_layer(stream_).expires_after(30s);
        stream_.async_handshake(ssl::stream_base::server, buffer_.data(),
                                beast::bind_front_handler(&tls_session::on_handshake, this->shared_from_this()));
    }

private:
    void on_handshake(beast::error_code ec, std::size_t used) {
        if (ec) return fail(ec, "handshake");
        buffer_.consume(used);
        std::make_shared<http_session<Stream>>(std::move(stream_), std::move(buffer_))->run();
    }
    Stream stream_;
    beast::flat_buffer buffer_;
};

// As Beast 1.81's detect_session, the stream's type changed.
class detect_session : public std::enable_shared_from_this<detect_session> {
public:
    detect_session(tcp::socket&& socket, ssl::context& ctx) : stream_(std::move(socket)), ctx_(ctx) {}

    // Called on the listener's strand (its on_accept), as in the example.
    void run() {
        beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
        beast::async_detect_ssl(stream_, buffer_, beast::bind_front_handler(&detect_session::on_detect, shared_from_this()));
    }

private:
    void on_detect(beast::error_code ec, bool result) {
        if (ec) return fail(ec, "detect");
        if (result) {
            std::make_shared<tls_session<beast::ssl_stream<idlewheel::beast::tcp_stream>>>(stream_.release_socket(), ctx_,
                                                                                           std::move(buffer_))
                ->run();
            return;
        }
        std::make_shared<http_session<idlewheel::beast::tcp_stream>>(idlewheel::beast::tcp_stream(stream_.release_socket()),
                                                                     std::move(buffer_))
            ->run();
    }

    idlewheel::beast::tcp_stream stream_;
    ssl::context& ctx_;
    beast::flat_buffer buffer_;
};

class listener : public std::enable_shared_from_this<listener> {
public:
    listener(net::io_context& ioc, idlewheel::wheel_pool& pool, ssl::context& ctx)
        : pool_(pool), ctx_(ctx), acceptor_(net::make_strand(ioc)) {
        const tcp::endpoint ep{net::ip::address_v4::loopback(), 0};
        acceptor_.open(ep.protocol());
        acceptor_.set_option(net::socket_base::reuse_address(true));
        acceptor_.bind(ep);
        acceptor_.listen(net::socket_base::max_listen_connections);
    }
    tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }
    void run() { net::dispatch(acceptor_.get_executor(), beast::bind_front_handler(&listener::do_accept, shared_from_this())); }
    void stop() {
        net::post(acceptor_.get_executor(), [self = shared_from_this()] { self->acceptor_.close(); });
    }

private:
    void do_accept() {
        // Beast: net::make_strand(ioc_); the conversion: a shard's strand.
        acceptor_.async_accept(pool_.next().get_executor(),
                               beast::bind_front_handler(&listener::on_accept, shared_from_this()));
    }
    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (!acceptor_.is_open()) return;
        if (ec)
            fail(ec, "accept");
        else
            std::make_shared<detect_session>(std::move(socket), ctx_)->run();  // on the listener's strand
        do_accept();
    }

    idlewheel::wheel_pool& pool_;
    ssl::context& ctx_;
    tcp::acceptor acceptor_;
};

// The clients: Beast's own streams on an io_context of their own (one thread).
struct client_totals {
    std::atomic<long> sent{0}, answered{0}, failed{0};
};

template <class Stream>
class client : public std::enable_shared_from_this<client<Stream>> {
public:
    // `ctx`: the TLS clients' context (null for plain ones).
    client(net::any_io_executor ex, ssl::context* ctx, tcp::endpoint ep, int rounds, client_totals& totals)
        : stream_(make_stream(ex, ctx)), ctx_(ctx), ep_(ep), rounds_(rounds), totals_(totals) {}
    void start() {
        beast::get_lowest_layer(stream_).expires_after(10s);
        beast::get_lowest_layer(stream_).async_connect(ep_, beast::bind_front_handler(&client::on_connect, this->shared_from_this()));
    }

private:
    void on_connect(beast::error_code ec) {
        if (ec) return failed(ec, "connect");
        if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
            send();
        } else {
            stream_.async_handshake(ssl::stream_base::client, [self = this->shared_from_this()](beast::error_code e) {
                if (e) return self->failed(e, "handshake");
                self->send();
            });
        }
    }
    void send() {
        req_ = {http::verb::get, "/", 11};
        req_.set(http::field::host, "localhost");
        req_.keep_alive(requests_ + 1 < 2);
        totals_.sent.fetch_add(1, std::memory_order_relaxed);
        beast::get_lowest_layer(stream_).expires_after(10s);
        http::async_write(stream_, req_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return self->failed(ec, "write");
            self->res_ = {};
            http::async_read(self->stream_, self->buffer_, self->res_, [self](beast::error_code e, std::size_t) {
                if (e) return self->failed(e, "read");
                if (self->res_.result() != http::status::ok || self->res_.body() != "ok") return self->failed(e, "answer");
                self->totals_.answered.fetch_add(1, std::memory_order_relaxed);
                if (++self->requests_ < 2) return self->send();
                self->next_round();
            });
        });
    }
    void failed(beast::error_code ec, const char* what) {
        totals_.failed.fetch_add(1, std::memory_order_relaxed);
        std::fprintf(stderr, "client %s: %s\n", what, ec.message().c_str());
        next_round();
    }
    void next_round() {
        if (rounds_ <= 1) return;
        std::make_shared<client>(beast::get_lowest_layer(stream_).get_executor(), ctx_, ep_, rounds_ - 1, totals_)->start();
    }
    static Stream make_stream(net::any_io_executor ex, ssl::context* ctx) {
        if constexpr (std::is_same_v<Stream, beast::tcp_stream>)
            return Stream(ex);
        else
            return Stream(ex, *ctx);
    }

    Stream stream_;
    ssl::context* ctx_;
    tcp::endpoint ep_;
    int rounds_;
    client_totals& totals_;
    beast::flat_buffer buffer_;
    http::request<http::empty_body> req_;
    http::response<http::string_body> res_;
    int requests_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int clients = argc > 2 ? std::atoi(argv[2]) : 60;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;

    net::io_context ioc{threads};
    idlewheel::wheel_pool pool(ioc);                 // the conversion: the pool, registered
    idlewheel::beast::use_wheel_pool(ioc, pool);
    ssl::context server_ctx{ssl::context::tls_server};
    use_throwaway_identity(server_ctx);
    auto l = std::make_shared<listener>(ioc, pool, server_ctx);
    const tcp::endpoint ep = l->endpoint();
    l->run();
    std::vector<std::thread> server_threads;
    for (int i = 0; i < threads; ++i) server_threads.emplace_back([&ioc] { ioc.run(); });

    net::io_context cio{1};
    ssl::context client_ctx{ssl::context::tls_client};
    client_ctx.set_verify_mode(ssl::verify_none);
    client_totals totals;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < clients; ++i) {
        if (i % 2 == 0)
            std::make_shared<client<beast::tcp_stream>>(net::make_strand(cio), nullptr, ep, rounds, totals)->start();
        else
            std::make_shared<client<beast::ssl_stream<beast::tcp_stream>>>(net::make_strand(cio), &client_ctx, ep, rounds,
                                                                          totals)
                ->start();
    }
    cio.run();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    l->stop();
    std::this_thread::sleep_for(200ms);  // the sessions' last closes
    ioc.stop();
    for (auto& t : server_threads) t.join();

    const long expected = 2L * clients * rounds;
    std::printf("beast_flex_start: %d threads, %d clients x %d connections (half TLS): %ld of %ld requests answered, "
                "%ld client failures, %ld server failures, %.1f s\n",
                threads, clients, rounds, totals.answered.load(), expected, totals.failed.load(), server_failures.load(),
                seconds);
    return totals.answered.load() == expected && totals.failed.load() == 0 && server_failures.load() == 0 ? 0 : 1;
}
