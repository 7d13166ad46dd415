#include "http_routes.hpp"

#include <boost/beast/version.hpp>

namespace demo {

namespace http = boost::beast::http;

http::response<http::string_body> route(const http::request<http::empty_body>& req, const stats_source& stats) {
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.set(http::field::server, "idlewheel demo_server");
    res.keep_alive(req.keep_alive());
    const auto target = req.target();
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
        res.result(http::status::method_not_allowed);
        res.set(http::field::allow, "GET, HEAD");
        res.set(http::field::content_type, "text/plain");
        res.body() = "only GET\n";
    } else if (target == "/" || target == "/index.html") {
        res.set(http::field::content_type, "text/html; charset=utf-8");
        res.set(http::field::cache_control, "no-store");
        res.body() = dashboard_html;
    } else if (target == "/stats") {
        res.set(http::field::content_type, "application/json");
        res.set(http::field::cache_control, "no-store");
        res.body() = stats.stats_json();
    } else if (target == "/metrics") {
        res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        res.set(http::field::cache_control, "no-store");
        res.body() = stats.metrics_text();
    } else if (target == "/healthz") {
        // For a load balancer's health check (docs/fleet.md): 503 from the first signal on, so
        // the balancer stops sending new connections while the drain closes the old ones.
        res.set(http::field::content_type, "text/plain");
        res.set(http::field::cache_control, "no-store");
        if (stats.health_check()) {
            res.body() = "ok\n";
        } else {
            res.result(http::status::service_unavailable);
            res.body() = "draining\n";
        }
    } else {
        res.result(http::status::not_found);
        res.set(http::field::content_type, "text/plain");
        res.body() = "not found\n";
    }
    if (req.method() == http::verb::head) {
        res.content_length(res.body().size());
        res.body().clear();
    } else {
        res.prepare_payload();
    }
    return res;
}

}  // namespace demo
