#include "result.hpp"

#include <boost/json/value_from.hpp>

// GCC 12 at -O2 reports reconnect_summary's members "may be used uninitialized" inside
// Boost.JSON's value_to (the error branch of its boost::system::result<T>, where no T exists):
// a false positive of the inlined variant. The warning is attributed to the header's lines, so
// it is silenced from the include to the end of this file, which holds nothing else.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/json/value_to.hpp>

namespace loadgen {

boost::json::value to_json(const run_result& r) { return boost::json::value_from(r); }

run_result result_from_json(const boost::json::value& v) { return boost::json::value_to<run_result>(v); }

}  // namespace loadgen

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
