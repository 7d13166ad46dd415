// The HTTP side of the demo server: GET / (dashboard), GET /stats (JSON), errors.
#ifndef IDLEWHEEL_DEMO_HTTP_ROUTES_HPP
#define IDLEWHEEL_DEMO_HTTP_ROUTES_HPP

#include "worker.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace demo {

boost::beast::http::response<boost::beast::http::string_body> route(
    const boost::beast::http::request<boost::beast::http::empty_body>& req, worker& w);

/// The dashboard page (generated from dashboard.html at build time).
extern const char* const dashboard_html;

}  // namespace demo

#endif
