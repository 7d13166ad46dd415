// The part of a program's command-line parsing that every idlewheel program does alike: parse
// argv against the options, print --help, report a bad option on stderr with a pointer to
// --help. Exit codes: 0 after --help, 2 for a usage error.
#ifndef IDLEWHEEL_PROGRAM_SUPPORT_COMMAND_LINE_HPP
#define IDLEWHEEL_PROGRAM_SUPPORT_COMMAND_LINE_HPP

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/variables_map.hpp>

#include <optional>
#include <ostream>
#include <string_view>

namespace program_support {

/// The parsed options, or nothing when the program should exit now with `exit_code`: after
/// printing the help (--help, exit 0) or a usage error (exit 2). `desc` must define "help".
inline std::optional<boost::program_options::variables_map> parse_options(
    int argc, char** argv, const boost::program_options::options_description& desc, std::string_view program,
    std::ostream& out, std::ostream& err, int& exit_code) {
    namespace po = boost::program_options;
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        err << program << ": " << e.what() << "\n(see --help)\n";
        exit_code = 2;
        return std::nullopt;
    }
    if (vm.count("help") != 0U) {
        out << desc << "\n";
        exit_code = 0;
        return std::nullopt;
    }
    return vm;
}

}  // namespace program_support

#endif
