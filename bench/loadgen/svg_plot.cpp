#include "svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace loadgen {

namespace {

constexpr const char* colours[] = {"#1f6fb4", "#d0342c", "#2ca02c", "#8c564b"};

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string label_number(double v) {
    char buf[32];
    if (std::abs(v) >= 1e6)
        std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
    else if (std::abs(v) >= 1e4)
        std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else
            out += c;
    }
    return out;
}

// A step of 1, 2 or 5 times a power of ten giving about `ticks` intervals over `range`.
double nice_step(double range, int ticks) {
    if (!(range > 0)) return 1;
    const double raw = range / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / magnitude;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
}

double nice_ceil(double v, int ticks = 5) {
    if (!(v > 0)) return 1;
    const double step = nice_step(v, ticks);
    return std::ceil(v / step) * step;
}

struct series {
    std::vector<std::pair<double, double>> points;
    std::string colour;
    bool steps = false;  // a histogram outline, filled
    bool dashed = false;
};

class panel {
public:
    panel(double x, double y, double w, double h) : x_(x), y_(y), w_(w), h_(h) {}

    void range(double x0, double x1, double y0, double y1) {
        x0_ = x0;
        x1_ = x1 > x0 ? x1 : x0 + 1;
        y0_ = y0;
        y1_ = y1 > y0 ? y1 : y0 + 1;
    }

    [[nodiscard]] double px(double x) const { return x_ + (x - x0_) / (x1_ - x0_) * w_; }
    [[nodiscard]] double py(double y) const { return y_ + h_ - (y - y0_) / (y1_ - y0_) * h_; }

    void frame(std::string& svg, const std::string& title, const std::string& xlabel) const {
        svg += "<text x=\"" + num(x_) + "\" y=\"" + num(y_ - 8) + "\" class=\"t\">" + escape(title) + "</text>\n";
        const double xs = nice_step(x1_ - x0_, 6), ys = nice_step(y1_ - y0_, 4);
        svg += "<g class=\"g\">";
        for (double v = std::ceil(y0_ / ys) * ys; v <= y1_ + ys * 1e-9; v += ys) {
            svg += "<line x1=\"" + num(x_) + "\" x2=\"" + num(x_ + w_) + "\" y1=\"" + num(py(v)) + "\" y2=\"" +
                   num(py(v)) + "\"/>";
        }
        svg += "</g>\n<g class=\"l\">";
        for (double v = std::ceil(y0_ / ys) * ys; v <= y1_ + ys * 1e-9; v += ys)
            svg += "<text x=\"" + num(x_ - 4) + "\" y=\"" + num(py(v) + 4) + "\" text-anchor=\"end\">" +
                   label_number(v) + "</text>";
        for (double v = std::ceil(x0_ / xs) * xs; v <= x1_ + xs * 1e-9; v += xs)
            svg += "<text x=\"" + num(px(v)) + "\" y=\"" + num(y_ + h_ + 14) + "\" text-anchor=\"middle\">" +
                   label_number(v) + "</text>";
        svg += "<text x=\"" + num(x_ + w_) + "\" y=\"" + num(y_ + h_ + 28) + "\" text-anchor=\"end\">" +
               escape(xlabel) + "</text>";
        svg += "</g>\n<rect x=\"" + num(x_) + "\" y=\"" + num(y_) + "\" width=\"" + num(w_) + "\" height=\"" + num(h_) +
               "\" class=\"f\"/>\n";
    }

    void draw(std::string& svg, const series& s) const {
        if (s.points.empty()) return;
        std::string pts;
        for (const auto& [x, y] : s.points)
            pts += num(px(std::clamp(x, x0_, x1_))) + "," + num(py(std::clamp(y, y0_, y1_))) + " ";
        if (s.steps)
            svg += "<polygon points=\"" + pts + "\" fill=\"" + s.colour + "\" fill-opacity=\"0.18\" stroke=\"" +
                   s.colour + "\" stroke-width=\"1.3\"/>\n";
        else
            svg += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"" +
                   (s.dashed ? "1" : "1.5") + "\"" + (s.dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>\n";
    }

private:
    double x_, y_, w_, h_;
    double x0_ = 0, x1_ = 1, y0_ = 0, y1_ = 1;
};

template <class T>
std::vector<double> as_doubles(const std::vector<T>& values, double scale = 1) {
    std::vector<double> v;
    v.reserve(values.size());
    for (const auto x : values) v.push_back(static_cast<double>(x) * scale);
    return v;
}

}  // namespace

std::string plot_svg(const std::vector<const run_result*>& runs) {
    const double width = 980, height = 750;
    std::string svg;
    svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
           "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
           "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n";
    svg +=
        "<style>.t{font-size:13px;font-weight:bold}.g line{stroke:#e4e4e4}.l "
        "text{fill:#444}.f{fill:none;stroke:#888}</style>\n";
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    if (runs.empty()) return svg + "</svg>\n";

    const auto& first = *runs.front();
    const auto count = [](std::uint64_t v) { return label_number(static_cast<double>(v)); };
    std::string title =
        "loadgen, " + first.scenario.protocol + ": " + count(first.scenario.connections) + " connections (idle " +
        count(first.scenario.mix.idle) + ", active " + count(first.scenario.mix.active) + ", pinger " +
        count(first.scenario.mix.pinger) + ", dead " + count(first.scenario.mix.dead) + "), idle timeout " +
        label_number(first.server.idle_timeout_ms / 1000) + " s, tick " + label_number(first.server.tick_ms) + " ms, " +
        label_number(first.server.threads) + " server thread(s)";
    svg += "<text x=\"20\" y=\"24\" font-size=\"12.5\" font-weight=\"bold\">" + escape(title) + "</text>\n";
    // Legend: one line per run with its headline figures.
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        char line[512];
        std::snprintf(line, sizeof line,
                      "%s: kick lateness p50 %.1f / p99 %.1f / max %.1f ms; server CPU %.2f us/echo (steady); RSS %.0f "
                      "B/connection; "
                      "false %.0f, missed %.0f; machine %.0f %% busy",
                      r.label.c_str(), r.kick_lateness_ms.idle.p50, r.kick_lateness_ms.idle.p99,
                      r.kick_lateness_ms.idle.max, r.server_cost.steady ? r.server_cost.steady->cpu_us_per_message : 0,
                      r.server_cost.rss_bytes_per_connection.value_or(0), static_cast<double>(r.checks.false_kicks),
                      static_cast<double>(r.checks.missed_kicks), r.machine ? r.machine->busy_percent : 0);
        const double y = 46 + 17 * static_cast<double>(i);
        svg += "<rect x=\"20\" y=\"" + num(y - 9) + "\" width=\"14\" height=\"10\" fill=\"" + colours[i % 4] + "\"/>";
        svg += "<text x=\"40\" y=\"" + num(y) + "\">" + escape(line) + "</text>\n";
    }

    const double top = 46 + 17 * static_cast<double>(runs.size()) + 30;
    const double pw = 400, ph = (height - top - 120) / 2;
    panel hist(70, top, pw, ph), cpu(560, top, pw, ph), rss(70, top + ph + 75, pw, ph),
        open(560, top + ph + 75, pw, ph);

    // Lateness histogram over a shared range; a few far outliers go into the last bin.
    std::vector<std::vector<double>> late;
    double lo = 0, hi = 0, p99 = 0;
    for (const auto* r : runs) {
        late.push_back(as_doubles(r->idle_lateness_us, 1e-3));  // ms
        if (!late.back().empty()) {
            lo = std::min(lo, late.back().front());
            hi = std::max(hi, late.back().back());
        }
        p99 = std::max(p99, r->kick_lateness_ms.idle.p99);
    }
    const double cap = nice_ceil(std::max(p99 * 3, 1.0));
    const bool capped = hi > cap;
    hi = capped ? cap : nice_ceil(std::max(hi, 1.0));
    const int bins = 60;
    const double bw = (hi - lo) / bins;
    std::vector<std::vector<double>> counts(runs.size(), std::vector<double>(bins, 0));
    double ymax = 1;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        for (const double v : late[i]) {
            auto b = static_cast<long>(std::floor((v - lo) / bw));
            b = std::clamp<long>(b, 0, bins - 1);
            counts[i][static_cast<std::size_t>(b)] += 1;
        }
        for (const double c : counts[i]) ymax = std::max(ymax, c);
    }
    hist.range(lo, hi, 0, nice_ceil(ymax * 1.05, 4));
    hist.frame(svg, "Idle kicks: lateness histogram (connections per bin)",
               "close - (message written + idle timeout), ms" + std::string(capped ? " (last bin: all later)" : ""));
    for (std::size_t i = 0; i < runs.size(); ++i) {
        series s{{}, colours[i % 4], true};
        s.points.emplace_back(lo, 0);
        for (int b = 0; b < bins; ++b) {
            const double c = counts[i][static_cast<std::size_t>(b)];
            s.points.emplace_back(lo + bw * b, c);
            s.points.emplace_back(lo + bw * (b + 1), c);
        }
        s.points.emplace_back(hi, 0);
        hist.draw(svg, s);
    }

    // Time series from the /stats samples.
    double tmax = 1, cpu_max = 1, rss_max = 1, open_max = 1;
    std::vector<series> cpu_s, rss_s, open_s;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        const auto& t = r.samples.t_s;
        const auto& up = r.samples.uptime_s;
        const auto& c = r.samples.cpu_s;
        const auto& u = r.samples.cpu_user_s;
        const auto m = as_doubles(r.samples.rss_bytes), o = as_doubles(r.samples.open);
        series sc{{}, colours[i % 4], false}, sr = sc, so = sc, su = sc;
        su.dashed = true;
        for (std::size_t k = 0; k < t.size(); ++k) {
            tmax = std::max(tmax, t[k]);
            if (k > 0 && k < up.size() && up[k] > up[k - 1]) {
                const double pct = 100 * (c[k] - c[k - 1]) / (up[k] - up[k - 1]);
                sc.points.emplace_back((t[k] + t[k - 1]) / 2, pct);
                cpu_max = std::max(cpu_max, pct);
                if (k < u.size())
                    su.points.emplace_back((t[k] + t[k - 1]) / 2, 100 * (u[k] - u[k - 1]) / (up[k] - up[k - 1]));
            }
            if (k < m.size()) {
                sr.points.emplace_back(t[k], m[k] / 1048576);
                rss_max = std::max(rss_max, m[k] / 1048576);
            }
            if (k < o.size()) {
                so.points.emplace_back(t[k], o[k]);
                open_max = std::max(open_max, o[k]);
            }
        }
        cpu_s.push_back(std::move(sc));
        cpu_s.push_back(std::move(su));
        rss_s.push_back(std::move(sr));
        open_s.push_back(std::move(so));
    }
    tmax = nice_ceil(tmax, 8);
    cpu.range(0, tmax, 0, nice_ceil(cpu_max * 1.05, 4));
    cpu.frame(svg, "Server CPU, % of a core (dashed: user only)", "time since the first connect, s");
    for (const auto& s : cpu_s) cpu.draw(svg, s);
    rss.range(0, tmax, 0, nice_ceil(rss_max * 1.05, 4));
    rss.frame(svg, "Server resident memory (MB)", "time since the first connect, s");
    for (const auto& s : rss_s) rss.draw(svg, s);
    open.range(0, tmax, 0, nice_ceil(open_max * 1.05, 4));
    open.frame(svg, "Server open connections", "time since the first connect, s");
    for (const auto& s : open_s) open.draw(svg, s);
    return svg + "</svg>\n";
}

}  // namespace loadgen
