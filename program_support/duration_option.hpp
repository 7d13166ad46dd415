// A Boost.Program_options value type for durations in duration_text.hpp's format, so bad text
// is reported as an invalid option value:
//
//     ("idle-timeout", po::value<program_support::duration_arg>(), "...")
//     ... vm["idle-timeout"].as<program_support::duration_arg>().value
#ifndef IDLEWHEEL_PROGRAM_SUPPORT_DURATION_OPTION_HPP
#define IDLEWHEEL_PROGRAM_SUPPORT_DURATION_OPTION_HPP

#include "program_support/duration_text.hpp"

#include <boost/program_options/errors.hpp>
#include <boost/program_options/value_semantic.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace program_support {

struct duration_arg {
    std::chrono::nanoseconds value{};
};

// Found by argument-dependent lookup from Program_options (so: in duration_arg's namespace).
inline void validate(boost::any& v, const std::vector<std::string>& values, duration_arg*, int) {
    namespace po = boost::program_options;
    po::validators::check_first_occurrence(v);
    const std::string& s = po::validators::get_single_string(values);
    const auto d = parse_duration(s);
    if (!d) throw po::invalid_option_value(s + " (expected a duration such as 500ms, 30s, 2m)");
    v = duration_arg{*d};
}

}  // namespace program_support

#endif
