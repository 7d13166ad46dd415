// A hand-written SVG of one or more runs: the idle-kick lateness histogram, and the server's
// CPU, resident memory and open connections over time, one colour per run.
#ifndef IDLEWHEEL_LOADGEN_SVG_PLOT_HPP
#define IDLEWHEEL_LOADGEN_SVG_PLOT_HPP

#include "result.hpp"

#include <string>
#include <vector>

namespace loadgen {

/// The SVG document for `runs` (results from analyse(); the first is drawn in blue, the second
/// in red).
[[nodiscard]] std::string plot_svg(const std::vector<const run_result*>& runs);

}  // namespace loadgen

#endif
