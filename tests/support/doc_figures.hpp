// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_DOC_FIGURES_HPP
#define IDLEWHEEL_TESTS_SUPPORT_DOC_FIGURES_HPP

// A figure the docs state, found where it is written, so that a test can hold it to what the
// code measures (sizeof): the public headers (lib/include, doc comments included), the pages
// of docs/ and the README. The text is read with line breaks, comment leaders ("///", " * ")
// and runs of spaces folded to one space, so a sentence wrapped over lines still matches.
// IDLEWHEEL_SOURCE_DIR (the repository's root) comes from tests/CMakeLists.txt.

#if !defined(IDLEWHEEL_SOURCE_DIR)
#error "support/doc_figures.hpp needs IDLEWHEEL_SOURCE_DIR (tests/CMakeLists.txt defines it)"
#endif

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace idlewheel::test {

/// One figure: the file (relative to the root) and the number the pattern's first group read.
struct doc_figure {
    std::string file;
    long value = 0;
};

/// The text of `path` with line breaks, comment leaders and runs of spaces folded to one space.
inline std::string folded_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream raw;
    raw << in.rdbuf();
    static const std::regex breaks(R"(\s*\n\s*(?:/{2,3}|\*(?!/))?\s*)");
    static const std::regex spaces(R"([ \t]+)");
    return std::regex_replace(std::regex_replace(raw.str(), breaks, " "), spaces, " ");
}

/// Every match of `pattern` (its first group a number) in the headers, docs/ and the README.
inline std::vector<doc_figure> doc_figures(const std::regex& pattern) {
    namespace fs = std::filesystem;
    const fs::path root(IDLEWHEEL_SOURCE_DIR);
    std::vector<fs::path> files{root / "README.md"};
    for (const char* dir : {"lib/include", "docs"})
        for (const auto& entry : fs::recursive_directory_iterator(root / dir))
            if (entry.is_regular_file() && (entry.path().extension() == ".hpp" || entry.path().extension() == ".md"))
                files.push_back(entry.path());
    std::vector<doc_figure> found;
    for (const fs::path& file : files) {
        const std::string text = folded_text(file);
        for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it)
            found.push_back({fs::relative(file, root).generic_string(), std::stol((*it)[1].str())});
    }
    return found;
}

}  // namespace idlewheel::test

#endif
