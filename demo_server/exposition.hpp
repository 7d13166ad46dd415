// A writer for the Prometheus text exposition format 0.0.4 (GET /metrics): every family gets
// its # HELP and # TYPE lines once, before its samples; HELP text and label values are escaped
// here and nowhere else. No allocation beyond the output string.
//
//     exposition out;
//     out.family("idlewheel_demo_open_sessions", "gauge", "Open sessions by kind.");
//     out.sample("idlewheel_demo_open_sessions", {{"kind", "tcp"}}, 3);
//     std::string text = out.take();
#ifndef IDLEWHEEL_DEMO_EXPOSITION_HPP
#define IDLEWHEEL_DEMO_EXPOSITION_HPP

#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace demo {

class exposition {
public:
    using label = std::pair<std::string_view, std::string_view>;

    /// `type`: counter, gauge, histogram, summary or untyped.
    void family(std::string_view name, std::string_view type, std::string_view help) {
        out_ += "# HELP ";
        out_ += name;
        out_ += ' ';
        for (const char c : help) {  // HELP escapes backslash and newline only
            if (c == '\\')
                out_ += "\\\\";
            else if (c == '\n')
                out_ += "\\n";
            else
                out_ += c;
        }
        out_ += "\n# TYPE ";
        out_ += name;
        out_ += ' ';
        out_ += type;
        out_ += '\n';
    }

    void sample(std::string_view name, std::initializer_list<label> labels, std::uint64_t value) {
        begin(name, labels);
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, value);
        end(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
    }
    void sample(std::string_view name, std::initializer_list<label> labels, std::int64_t value) {
        begin(name, labels);
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, value);
        end(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
    }
    void sample(std::string_view name, std::initializer_list<label> labels, double value) {
        begin(name, labels);
        end(number(value));
    }
    template <class T>
    void sample(std::string_view name, T value) {
        sample(name, {}, value);
    }

    /// A float the way the format spells it: shortest round-trip form, +Inf, -Inf, NaN.
    static std::string number(double v) {
        if (std::isnan(v)) return "NaN";
        if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        return std::string(buf, static_cast<std::size_t>(r.ptr - buf));
    }

    [[nodiscard]] std::string take() { return std::move(out_); }

private:
    void begin(std::string_view name, std::initializer_list<label> labels) {
        out_ += name;
        if (labels.size() == 0) return;
        out_ += '{';
        bool first = true;
        for (const auto& [key, value] : labels) {
            if (!first) out_ += ',';
            first = false;
            out_ += key;
            out_ += "=\"";
            for (const char c : value) {  // label values escape backslash, double quote and newline
                if (c == '\\')
                    out_ += "\\\\";
                else if (c == '"')
                    out_ += "\\\"";
                else if (c == '\n')
                    out_ += "\\n";
                else
                    out_ += c;
            }
            out_ += '"';
        }
        out_ += '}';
    }
    void end(std::string_view value) {
        out_ += ' ';
        out_ += value;
        out_ += '\n';
    }

    std::string out_;
};

}  // namespace demo

#endif
