// From what a run recorded to its result (result.hpp): the verdict on every connection (false,
// missed, wrong kicks), the lateness and round-trip distributions, and the server's cost over
// its windows. The table, the SVG, the JSON and the comparison of two runs are all made from it.
#ifndef IDLEWHEEL_LOADGEN_ANALYSIS_HPP
#define IDLEWHEEL_LOADGEN_ANALYSIS_HPP

#include "result.hpp"
#include "runner.hpp"
#include "scenario.hpp"

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
///  - a server without liveness (its /stats says timers "none"): every connection must stay open.
/// With --expect (any server, README.md "Against any server") the same rules hold, with the due
/// times and the accepted way to end taken from the promises on the command line (rule_for in
/// analysis.cpp): kicks (--expect-idle: any close will do), beast-timeouts (only dead and
/// stalled clients are dropped, with no close frame), none (nobody is closed); stalled clients
/// are due at --handshake-timeout after their connect began.
[[nodiscard]] run_result analyse(const scenario& plan, const run_data& data);

}  // namespace loadgen

#endif
