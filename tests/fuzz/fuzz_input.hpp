// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_FUZZ_FUZZ_INPUT_HPP
#define IDLEWHEEL_TESTS_FUZZ_FUZZ_INPUT_HPP

// The fuzzer's input bytes as a stream of choices, read front to back. Past the end every read
// returns 0 and exhausted() turns true: the harness finishes the operation it is decoding (any
// value is valid) and stops, so that every input, however short, is a complete run.
//
// Values are taken raw (little-endian, no hashing): a byte of the input is a byte of a
// decision, so libFuzzer's mutations and its comparison feedback act on decisions directly.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace idlewheel::fuzz {

class fuzz_input {
public:
    fuzz_input(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

    [[nodiscard]] bool exhausted() const noexcept { return exhausted_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return size_ - position_; }

    std::uint8_t byte() noexcept {
        if (position_ == size_) {
            exhausted_ = true;
            return 0;
        }
        return data_[position_++];
    }

    std::uint64_t u64() noexcept {
        std::uint64_t v = 0;
        for (unsigned i = 0; i < 8; ++i) v |= std::uint64_t{byte()} << (8 * i);
        return v;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t position_ = 0;
    bool exhausted_ = false;
};

/// True if IDLEWHEEL_FUZZ_TRACE is set (and not "0"): a harness then prints every step.
inline bool trace_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("IDLEWHEEL_FUZZ_TRACE");
        return v != nullptr && *v != '\0' && *v != '0';
    }();
    return enabled;
}

/// A harness's failure, then abort (libFuzzer keeps the input): "<harness>: <parts...>", the
/// state line `where`, and `history`'s entries one a line, each as `line(entry)` gives it.
template <class History, class Line, class... Parts>
[[noreturn]] void fail_with_history(const char* harness, const std::string& where, const History& history, Line line,
                                    const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    std::fprintf(stderr, "\n%s: %s\n", harness, os.str().c_str());
    std::fprintf(stderr, "%s; last operations:\n", where.c_str());
    for (const auto& e : history) std::fprintf(stderr, "  %s\n", line(e).c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace idlewheel::fuzz

#endif
