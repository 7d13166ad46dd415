#include "result.hpp"

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace loadgen {

boost::json::value to_json(const run_result& r) { return boost::json::value_from(r); }

run_result result_from_json(const boost::json::value& v) { return boost::json::value_to<run_result>(v); }

}  // namespace loadgen
