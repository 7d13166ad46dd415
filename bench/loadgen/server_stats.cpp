#include "server_stats.hpp"

#include "json_util.hpp"
#include "tls_client.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

namespace loadgen {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

machine_cpu machine_cpu::now() {
    machine_cpu m;
    std::ifstream f("/proc/stat");
    std::string cpu;
    std::uint64_t v[8] = {};  // user nice system idle iowait irq softirq steal
    f >> cpu;
    for (auto& x : v) f >> x;
    if (!f || cpu != "cpu") return m;
    for (const auto x : v) m.total += x;
    m.busy = m.total - v[3] - v[4];
    m.steal = v[7];
    m.irq = v[5] + v[6];
    return m;
}

server_sample server_sample::from(const json::object& stats, double t) {
    server_sample s;
    s.t = t;
    s.machine = machine_cpu::now();
    s.user = number(stats, {"process", "cpu_user_s"});
    s.uptime = number(stats, {"uptime_s"});
    s.cpu = number(stats, {"process", "cpu_user_s"}) + number(stats, {"process", "cpu_system_s"});
    s.rss = static_cast<std::uint64_t>(number(stats, {"process", "rss_bytes"}));
    s.open = static_cast<std::int64_t>(number(stats, {"open_connections"}));
    s.messages = static_cast<std::uint64_t>(number(stats, {"messages"}));
    s.wheel_wakeups = static_cast<std::uint64_t>(number(stats, {"wheel", "wakeups"}));
    s.wheel_expired = static_cast<std::uint64_t>(number(stats, {"wheel", "expired"}));
    s.asio_rearms = static_cast<std::uint64_t>(number(stats, {"asio_timer_rearms"}));
    return s;
}

namespace {

// The request and the response, on a connected (and, over TLS, handshaken) stream.
template <class Stream>
asio::awaitable<http::response<http::string_body>> get_stats(Stream& stream, const asio::ip::tcp::endpoint& endpoint) {
    http::request<http::empty_body> req{http::verb::get, "/stats", 11};
    req.set(http::field::host, endpoint.address().to_string() + ":" + std::to_string(endpoint.port()));
    req.set(http::field::user_agent, "idlewheel-loadgen");
    req.keep_alive(false);
    co_await http::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    co_return res;
}

}  // namespace

asio::awaitable<json::object> fetch_stats(asio::ip::tcp::endpoint endpoint, nanoseconds timeout,
                                          asio::ssl::context* tls, const std::string& server_name) {
    http::response<http::string_body> res;
    if (tls == nullptr) {
        beast::tcp_stream stream(co_await asio::this_coro::executor);
        stream.expires_after(timeout);
        co_await stream.async_connect(endpoint, asio::use_awaitable);
        res = co_await get_stats(stream, endpoint);
        boost::system::error_code ignored;
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    } else {
        asio::ssl::stream<beast::tcp_stream> stream(co_await asio::this_coro::executor, *tls);
        auto& tcp = stream.next_layer();
        tcp.expires_after(timeout);
        co_await tcp.async_connect(endpoint, asio::use_awaitable);
        boost::system::error_code ec;
        set_server_name(stream, server_name, ec);
        if (ec) throw boost::system::system_error(ec, "TLS server name");
        co_await stream.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
        res = co_await get_stats(stream, endpoint);
        // The response is complete (Connection: close); the close_notify exchange is courtesy,
        // so it gets a short bound of its own and its outcome is ignored.
        tcp.expires_after(std::min<nanoseconds>(timeout, std::chrono::milliseconds(200)));
        co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (res.result() != http::status::ok)
        throw std::runtime_error("/stats answered " + std::to_string(res.result_int()));
    json::value doc = json::parse(res.body());
    if (!doc.is_object()) throw std::runtime_error("/stats is not a JSON object");
    co_return std::move(doc.get_object());
}

}  // namespace loadgen
