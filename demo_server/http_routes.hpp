// The HTTP side of the demo server: GET / (dashboard), GET /stats (JSON), GET /metrics
// (Prometheus text format), GET /healthz (200 while serving, 503 from the first SIGTERM on: a
// load balancer's health check), errors.
#ifndef IDLEWHEEL_DEMO_HTTP_ROUTES_HPP
#define IDLEWHEEL_DEMO_HTTP_ROUTES_HPP

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace demo {

/// Where GET /stats and GET /metrics get their documents (the server, which sums every
/// worker). Called on any worker thread.
class stats_source {
public:
    [[nodiscard]] virtual std::string stats_json() const = 0;
    [[nodiscard]] virtual std::string metrics_text() const = 0;
    /// GET /healthz: true while the server takes new sessions, false from the first
    /// SIGTERM/SIGINT on (the drain). Counts the request by its answer.
    [[nodiscard]] virtual bool health_check() const = 0;

protected:
    ~stats_source() = default;
};

boost::beast::http::response<boost::beast::http::string_body> route(
    const boost::beast::http::request<boost::beast::http::empty_body>& req, const stats_source& stats);

/// The dashboard page (generated from dashboard.html at build time).
extern const char* const dashboard_html;

}  // namespace demo

#endif
