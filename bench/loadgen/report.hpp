// Plain-text tables of a result, and the side-by-side comparison of two results (wheel, asio).
#ifndef IDLEWHEEL_LOADGEN_REPORT_HPP
#define IDLEWHEEL_LOADGEN_REPORT_HPP

#include <boost/json/object.hpp>

#include <ostream>

namespace loadgen {

/// The final table of one run.
void print_run(const boost::json::object& result, std::ostream& out);

/// Prints both runs' key figures and the ratios first/second; returns the combined document:
/// {"runs": [first, second], "ratios": {...}, "targets": {...}}.
boost::json::object compare(const boost::json::object& first, const boost::json::object& second, std::ostream& out);

}  // namespace loadgen

#endif
