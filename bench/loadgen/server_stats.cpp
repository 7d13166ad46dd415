#include "server_stats.hpp"

#include "json_util.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

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

asio::awaitable<json::object> fetch_stats(asio::ip::tcp::endpoint endpoint, nanoseconds timeout) {
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    stream.expires_after(timeout);
    co_await stream.async_connect(endpoint, asio::use_awaitable);
    http::request<http::empty_body> req{http::verb::get, "/stats", 11};
    req.set(http::field::host, endpoint.address().to_string() + ":" + std::to_string(endpoint.port()));
    req.set(http::field::user_agent, "idlewheel-loadgen");
    req.keep_alive(false);
    co_await http::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    boost::system::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    if (res.result() != http::status::ok)
        throw std::runtime_error("/stats answered " + std::to_string(res.result_int()));
    json::value doc = json::parse(res.body());
    if (!doc.is_object()) throw std::runtime_error("/stats is not a JSON object");
    co_return std::move(doc.get_object());
}

}  // namespace loadgen
