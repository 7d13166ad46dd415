"""The load test's report: one self-contained HTML page (plain HTML and inline SVG, nothing
fetched) made from loadgen's result JSON of every process and load.py's merged summary:
the verdict table per role, connections over time (each client's own times: the JSON's
`timeline`), kick lateness (`idle_lateness_us`, `pinger_lateness_us`) and echo latency
(`echo_rtt_histogram`), the runs' settings, and loadgen's own SVG when there is one.

Element ids a reader (or bench/loadgen/report_check.py) can rely on: #verdicts (one row per role,
data-role, data-verdict), #plot-connections, #plot-lateness, #plot-echo, #overall (PASS/FAIL).
"""

import html
import math

ROLES = ("idle", "active", "pinger", "dead", "stalled")
OUTCOME_KEYS = ("open", "connect_failed", "handshake_failed", "ws_idle_close", "ws_other_close", "dropped", "error")
VERDICT_KEYS = (("false_kicks", "false"), ("missed_kicks", "missed"), ("wrong_outcomes", "wrong"),
                ("unresolved", "unresolved"), ("errors", "errors"))
COLOURS = {"idle": "#1f6fb4", "active": "#2ca02c", "pinger": "#ff7f0e", "dead": "#d0342c", "stalled": "#8c564b",
           "all": "#7b3294"}
W, H, LEFT, TOP, RIGHT, BOTTOM = 560, 300, 60, 20, 20, 45


def nice_step(span, ticks):
    if span <= 0:
        return 1
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    f = raw / mag
    return (1 if f <= 1 else 2 if f <= 2 else 5 if f <= 5 else 10) * mag


def fmt(v):
    if abs(v) >= 10000:
        return f"{v / 1000:g}k"
    return f"{v:g}" if v == int(v) else f"{v:.3g}"


class Plot:
    """One chart: axes, grid, labels, then lines or bars in data coordinates."""

    def __init__(self, plot_id, title, xlabel, ylabel, x0, x1, y0, y1, xticks=None):
        self.id, self.title = plot_id, title
        self.x0, self.x1 = x0, x1 if x1 > x0 else x0 + 1
        self.y0, self.y1 = y0, y1 if y1 > y0 else y0 + 1
        self.parts = []
        pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
        self.px = lambda x: LEFT + (x - self.x0) / (self.x1 - self.x0) * pw
        self.py = lambda y: TOP + ph - (y - self.y0) / (self.y1 - self.y0) * ph
        ys = nice_step(self.y1 - self.y0, 4)
        v = math.ceil(self.y0 / ys) * ys
        while v <= self.y1 + ys * 1e-9:
            self.parts.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{self.py(v):.1f}" y2="{self.py(v):.1f}"/>'
                              f'<text x="{LEFT - 4}" y="{self.py(v) + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
            v += ys
        if xticks is None:
            xs = nice_step(self.x1 - self.x0, 6)
            v, xticks = math.ceil(self.x0 / xs) * xs, []
            while v <= self.x1 + xs * 1e-9:
                xticks.append((v, fmt(v)))
                v += xs
        for x, label in xticks:
            self.parts.append(f'<text x="{self.px(x):.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">{label}</text>')
        self.parts.append(f'<text x="{W - RIGHT}" y="{H - 8}" text-anchor="end">{html.escape(xlabel)}</text>'
                          f'<text x="12" y="{TOP + (H - TOP - BOTTOM) / 2:.0f}" text-anchor="middle" '
                          f'transform="rotate(-90 12 {TOP + (H - TOP - BOTTOM) / 2:.0f})">{html.escape(ylabel)}</text>'
                          f'<rect class="frame" x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}"/>')

    def clamp(self, x, y):
        return (self.px(min(max(x, self.x0), self.x1)), self.py(min(max(y, self.y0), self.y1)))

    def line(self, points, colour, name, width=1.8):
        if points:
            pts = " ".join("%.1f,%.1f" % self.clamp(x, y) for x, y in points)
            self.parts.append(f'<polyline data-series="{name}" points="{pts}" fill="none" stroke="{colour}" stroke-width="{width}"/>')

    def bars(self, bins, colour, name):
        """bins: (x_from, x_to, count) drawn as filled bars."""
        for a, b, c in bins:
            if c <= 0:
                continue
            (xa, ya), (xb, yb) = self.clamp(a, c), self.clamp(b, self.y0)
            self.parts.append(f'<rect data-series="{name}" x="{xa:.1f}" y="{ya:.1f}" width="{max(xb - xa - 0.5, 1):.1f}" '
                              f'height="{max(yb - ya, 1):.1f}" fill="{colour}" fill-opacity="0.75"/>')

    def svg(self, legend):
        keys = "".join(f'<span class="key"><i style="background:{c}"></i>{html.escape(n)}</span>' for n, c in legend)
        return (f'<figure id="{self.id}"><figcaption>{html.escape(self.title)}</figcaption>'
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">'
                + "".join(self.parts) + f'</svg><div class="legend">{keys}</div></figure>')


def value_at(ts, vs, t):
    """The step function (ts, vs) at time t: the last value at or before t (0 before the first)."""
    lo, hi = 0, len(ts)
    while lo < hi:
        mid = (lo + hi) // 2
        if ts[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return vs[lo - 1] if lo > 0 else 0


def connections_plot(docs):
    """Open connections per role over time, summed over the processes (each from its own start)."""
    end = max((d["timeline"]["t_s"][-1] for d in docs if d["timeline"]["t_s"]), default=1)
    grid = [end * k / 300 for k in range(301)]
    series, top = {}, 1
    for role in ROLES + ("all",):
        if role != "all" and not any(d["scenario"]["mix"][role] for d in docs):
            continue
        pts = []
        for t in grid:
            if role == "all":
                v = sum(value_at(d["timeline"]["t_s"], d["timeline"]["open"][r], t) for d in docs for r in ROLES)
            else:
                v = sum(value_at(d["timeline"]["t_s"], d["timeline"]["open"][role], t) for d in docs)
            pts.append((t, v))
            top = max(top, v)
        series[role] = pts
    p = Plot("plot-connections", "Connections over time: open, by role (the clients' own times)",
             "time since the first connect, s", "open connections", 0, end, 0, top * 1.05)
    for role, pts in series.items():
        p.line(pts, COLOURS[role], role, 2.4 if role == "all" else 1.8)
    return p.svg([(("all open" if r == "all" else r), COLOURS[r]) for r in series])


def lateness_plot(docs):
    """Kick lateness histograms (idle and pinger clients) over every process, in ms."""
    data = {role: sorted(v / 1000 for d in docs for v in d.get(f"{role}_lateness_us", [])) for role in ("idle", "pinger")}
    every = sorted(data["idle"] + data["pinger"])
    if not every:
        p = Plot("plot-lateness", "Kick lateness: no idle or pinger client was kicked", "ms", "kicks", 0, 1, 0, 1)
        return p.svg([])
    lo = min(0.0, every[0])
    p99 = every[min(len(every) - 1, int(math.ceil(0.99 * len(every))) - 1)]
    hi = max(every[-1], lo + 1)
    cap = max(p99 * 3, 1.0)
    capped = hi > cap
    hi = min(hi, cap) if capped else hi
    bins = 50
    width = (hi - lo) / bins
    counts = {r: [0] * bins for r in data}
    for r, values in data.items():
        for v in values:
            counts[r][min(bins - 1, max(0, int((v - lo) / width)))] += 1
    top = max(max(c) for c in counts.values())
    p = Plot("plot-lateness", "Kick lateness: close - (reference + promised timeout)",
             "ms" + (" (last bin: all later)" if capped else ""), "kicks per bin", lo, hi, 0, top * 1.05)
    legend = []
    for r in ("idle", "pinger"):
        if data[r]:
            p.bars([(lo + width * k, lo + width * (k + 1), c) for k, c in enumerate(counts[r])], COLOURS[r], r)
            legend.append((f"{r}: {len(data[r])} kicks, p50 {data[r][len(data[r]) // 2]:.1f} ms, max {data[r][-1]:.1f} ms",
                           COLOURS[r]))
    return p.svg(legend)


def echo_plot(docs):
    """The active clients' echo round trips, summed histograms on loadgen's fixed log bins."""
    hists = [d["echo_rtt_histogram"] for d in docs if d.get("echo_rtt_histogram", {}).get("count")]
    if not hists:
        return Plot("plot-echo", "Echo latency: no echo", "ms", "echoes", 0, 1, 0, 1).svg([])
    upper = hists[0]["upper_ms"]
    counts = [sum(h["count"][k] for h in hists) for k in range(len(upper) + 1)]
    used = [k for k, c in enumerate(counts) if c]
    first, last = max(used[0] - 1, 0), min(used[-1] + 1, len(counts) - 1)
    bound = lambda k: math.log10(upper[k] if k < len(upper) else upper[-1] * 10 ** 0.1)  # noqa: E731
    lower = lambda k: math.log10(upper[k - 1]) if k > 0 else bound(0) - 0.1  # noqa: E731
    ticks = [(float(e), fmt(10.0 ** e)) for e in range(math.floor(lower(first)), math.ceil(bound(last)) + 1)]
    p = Plot("plot-echo", "Echo latency: round trips of the active clients' messages",
             "round trip, ms (log scale)", "echoes per bin", lower(first), bound(last), 0, max(counts) * 1.05,
             [t for t in ticks if lower(first) <= t[0] <= bound(last)])
    p.bars([(lower(k), bound(k), counts[k]) for k in range(first, last + 1)], COLOURS["active"], "echo")
    total = sum(counts)
    median = next(k for k in range(len(counts)) if sum(counts[:k + 1]) * 2 >= total)
    label = f"{total} echoes, median <= {upper[median] if median < len(upper) else upper[-1]:.3g} ms"
    return p.svg([(label, COLOURS["active"])])


def verdict_table(summary):
    rows = []
    for role in ROLES:
        m = summary["roles"].get(role)
        if not m:
            continue
        verdict = "pass" if m["role_passed"] else "FAIL " + " ".join(f"{label} {m[k]}" for k, label in VERDICT_KEYS if m[k])
        got = ", ".join(f"{k} {m[k]}" for k in OUTCOME_KEYS if m[k])
        rows.append(f'<tr data-role="{role}" data-verdict="{"pass" if m["role_passed"] else "fail"}">'
                    f'<td>{role}</td><td class="n">{m["count"]}</td><td>{html.escape(m["expected"])}</td>'
                    f'<td class="{"pass" if m["role_passed"] else "fail"}">{html.escape(verdict)}</td><td>{html.escape(got)}</td></tr>')
    return ('<table id="verdicts"><thead><tr><th>role</th><th>count</th><th>expected</th><th>verdict</th>'
            '<th>got</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>")


def settings(docs):
    sc = docs[0]["scenario"]
    rows = [("target", sc["url"] or "demo_server"), ("expected", sc["expect"]),
            ("idle timeout", f'{sc["expect_idle_ms"]:g} ms'),
            ("heartbeat", f'ping {sc["ping_interval_ms"]:g} ms + jitter <= {sc["ping_jitter_ms"]:g} ms, pong {sc["pong_timeout_ms"]:g} ms'
             if sc["heartbeats"] else "not promised"),
            ("handshake deadline", f'{sc["handshake_timeout_ms"]:g} ms' if sc["handshake_timeout_ms"] else "not promised"),
            ("allowance", f'{sc["allowance_ms"]:g} ms'), ("duration", f'{sc["duration_s"]:g} s'),
            ("active clients", f'a message every {sc["interval_ms"]:g} ms')]
    per = "".join(f'<tr><td>{html.escape(d["label"])}</td><td class="n">{d["scenario"]["connections"]}</td>'
                  f'<td class="n">{d["connect"]["ready"]}</td><td>{"PASS" if d["checks"]["passed"] else "FAIL"}</td>'
                  f'<td class="n">{d["client"]["loop_lag_ms"]["max"]:.1f}</td></tr>' for d in docs)
    return ('<table class="kv">' + "".join(f"<tr><th>{k}</th><td>{html.escape(v)}</td></tr>" for k, v in rows) + "</table>"
            '<table><thead><tr><th>process</th><th>connections</th><th>up</th><th>checks</th><th>worst loop lag, ms</th>'
            "</tr></thead><tbody>" + per + "</tbody></table>")


STYLE = """body{font-family:DejaVu Sans,Arial,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}td.n{text-align:right}
.pass{color:#176d1e;font-weight:bold}.fail{color:#b00020;font-weight:bold}
#overall{font-size:18px;font-weight:bold;padding:6px 12px;display:inline-block}
#overall.pass{background:#e3f4e4}#overall.fail{background:#fbe3e6}
.plots{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}figcaption{font-weight:bold;font-size:13px;margin-bottom:4px}
svg text{font-size:11px;fill:#444}svg .grid{stroke:#e6e6e6}svg .frame{fill:none;stroke:#888}
.legend{font-size:12px}.key{margin-right:14px}.key i{display:inline-block;width:12px;height:10px;margin-right:4px}
.kv th{background:#f5f5f5}"""


def write(path, summary, docs, loadgen_svg=None):
    passed = summary["passed"]
    problems = "".join(f"<li>{p['count']} x {html.escape(p['what'])}, e.g. {html.escape(p['example'])}</li>"
                       for p in summary["problems"][:20])
    page = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>idlewheel load test</title>",
            f"<style>{STYLE}</style></head><body>",
            f"<h1>Load test: {summary['connections']} connections, {summary['processes']} loadgen process"
            f"{'es' if summary['processes'] != 1 else ''}, against {html.escape(summary['target'])}</h1>",
            f'<div id="overall" class="{"pass" if passed else "fail"}">{"PASS" if passed else "FAIL"}: '
            f'{summary["ready"]} of {summary["connections"]} connections up</div>',
            "<h2>Verdict per role (all processes)</h2>", verdict_table(summary),
            f"<ul>{problems}</ul>" if problems else "",
            "<h2>Plots</h2><div class=\"plots\">", connections_plot(docs), lateness_plot(docs), echo_plot(docs), "</div>"]
    if docs:
        page += ["<h2>Settings</h2>", settings(docs)]
    if loadgen_svg:
        page += ["<h2>The server, from its /stats (loadgen's own plot)</h2>", loadgen_svg]
    page.append("</body></html>\n")
    with open(path, "w") as f:
        f.write("\n".join(page))
