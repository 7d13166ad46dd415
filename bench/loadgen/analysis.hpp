// From what a run recorded to its result: the checks (false, missed, wrong kicks), the
// lateness and round-trip distributions, and the server's cost. The result is a JSON object;
// the table, the SVG and the comparison of two runs are all made from it.
#ifndef IDLEWHEEL_LOADGEN_ANALYSIS_HPP
#define IDLEWHEEL_LOADGEN_ANALYSIS_HPP

#include "runner.hpp"
#include "scenario.hpp"

#include <boost/json/object.hpp>

namespace loadgen {

/// The verdict rules, applied to every connection (T = idle timeout, tick = the server's):
///  - active: any close by the server is a false kick.
///  - idle, pinger: the server's idle clock started between ref_low and ref_high (see record).
///    Closed before ref_low + T: a false (early) kick. Still open after
///    ref_high + T + 2 ticks + allowance: a missed kick (also when closed later than that).
///    Closed for another reason than the idle kick: a wrong outcome.
///    Kick lateness = close time - (ref_low + T): an upper bound of the true lateness.
///  - dead: dropped (EOF without a close frame) between ref_low + ping_interval + pong_timeout
///    and ref_high + ping_interval + ping_jitter + pong_timeout + 2 ticks + allowance; same rules.
///  - still open at the end but not yet due: unresolved (the run was too short to tell).
[[nodiscard]] boost::json::object analyse(const scenario& plan, const run_data& data);

/// True when the result has no false, missed, wrong, unresolved kicks and no errors.
[[nodiscard]] bool passed(const boost::json::object& result);

}  // namespace loadgen

#endif
