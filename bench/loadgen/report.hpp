// Plain-text tables of a result, and the side-by-side comparison of two results (wheel, asio).
#ifndef IDLEWHEEL_LOADGEN_REPORT_HPP
#define IDLEWHEEL_LOADGEN_REPORT_HPP

#include "result.hpp"

#include <boost/json/object.hpp>

#include <ostream>

namespace loadgen {

/// The final table of one run.
void print_run(const run_result& result, std::ostream& out);

/// Prints both runs' key figures and the ratios first/second; returns the combined document:
/// {"runs": [first, second], "ratios": {...}, "targets": {...}}.
boost::json::object compare(const run_result& first, const run_result& second, std::ostream& out);

}  // namespace loadgen

#endif
