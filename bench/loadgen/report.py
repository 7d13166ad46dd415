"""The load test's report: one self-contained HTML page (plain HTML and inline SVG drawn by
matplotlib, Debian's python3-matplotlib; nothing fetched) made from loadgen's result JSON of every process and load.py's merged summary:
the verdict table per role, connections over time (each client's own times: the JSON's
`timeline`), close times per role against the promised window (`closes`), kick lateness
(`idle_lateness_us`, `pinger_lateness_us`), echo latency (`echo_rtt_histogram`), the runs'
settings, and with one process and /stats the server's CPU, memory and open connections.

Element ids a reader (or bench/loadgen/report_check.py) can rely on: #verdicts (one row per role,
data-role, data-verdict), #plot-closes, #plot-connections, #plot-lateness, #plot-echo,
#plot-server, #overall (PASS, or FAIL and the failed roles with their counts); a plot's data
series carry ids starting "series-".
"""

import html

ROLES = ("idle", "active", "pinger", "dead", "stalled")
OUTCOME_KEYS = ("open", "connect_failed", "handshake_failed", "ws_idle_close", "ws_other_close", "dropped", "error")
VERDICT_KEYS = (("false_kicks", "false"), ("missed_kicks", "missed"), ("wrong_outcomes", "wrong"),
                ("unresolved", "unresolved"), ("errors", "errors"))
COLOURS = {"idle": "#1f6fb4", "active": "#2ca02c", "pinger": "#ff7f0e", "dead": "#d0342c", "stalled": "#8c564b",
           "all": "#7b3294"}
WINDOW = "#cfe8cf"  # a promised window's band in the close-time plot (report_check.py looks for it)
LATE = "#b00020"


def figure_html(plot_id, title, fig, legend=None):
    """A matplotlib figure as inline SVG (text as text, ids stable) in a <figure>."""
    import io
    import matplotlib.pyplot as plt
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # no XML declaration or doctype inside HTML
    return f'<figure id="{plot_id}"><figcaption>{html.escape(title)}</figcaption>{svg}</figure>'


def new_figure(height=3.2, rows=1):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "idlewheel", "font.size": 9,
                                "font.family": "DejaVu Sans"})
    import matplotlib.pyplot as plt
    return plt.subplots(rows, 1, figsize=(6.2, height * rows), squeeze=False)


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
    fig, axes = new_figure()
    ax = axes[0][0]
    for role in ROLES + ("all",):
        if role != "all" and not any(d["scenario"]["mix"][role] for d in docs):
            continue
        roles = ROLES if role == "all" else (role,)
        ys = [sum(value_at(d["timeline"]["t_s"], d["timeline"]["open"][r], t) for d in docs for r in roles) for t in grid]
        ax.plot(grid, ys, color=COLOURS[role], lw=2.4 if role == "all" else 1.6, label="all open" if role == "all" else role,
                gid=f"series-connections-{role}")
    ax.set_xlabel("time since the first connect, s")
    ax.set_ylabel("open connections")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=3)
    return figure_html("plot-connections", "Connections over time: open, by role (the clients' own times)", fig)


def closes_plot(docs):
    """Per role, when each connection was closed (seconds after the promise's event), against
    the window the promise allowed: the band is [A, B], the hatched strip B's slack (allowance
    and ticks); a close left of the band was early, right of the strip late (both drawn red)."""
    roles = []
    for role in ROLES:
        cs = [d.get("closes", {}).get(role) for d in docs]
        cs = [c for c in cs if c]
        if not cs:
            continue
        times = sorted(t for c in cs for t in c["close_after_s"])
        c0 = cs[0]
        window = c0["promise"] not in ("open", "unbounded")
        if times or window:
            roles.append((role, c0, times, window))
    if not roles:
        fig, axes = new_figure(1.2)
        axes[0][0].text(0.5, 0.5, "no connection was closed by the server, and none was promised closed",
                        ha="center", va="center")
        axes[0][0].axis("off")
        return figure_html("plot-closes", "Close times against the promise", fig)
    fig, axes = new_figure(1.9, len(roles))
    for ax, (role, c, times, window) in zip((a[0] for a in axes), roles):
        lo, hi = (c["from_s"], c["to_s"] + c["slack_s"]) if window else (None, None)
        if window:
            ax.axvspan(c["from_s"], c["to_s"], color=WINDOW, zorder=0, gid=f"series-closes-window-{role}")
            ax.axvspan(c["to_s"], hi, facecolor="none", edgecolor="#7fb77f", hatch="//", lw=0, zorder=0)
        ok = [(t, k) for k, t in enumerate(times) if not window or lo <= t <= hi]
        bad = [(t, k) for k, t in enumerate(times) if window and not lo <= t <= hi]
        if ok:
            ax.scatter([t for t, _ in ok], [k for _, k in ok], s=4, color=COLOURS[role], gid=f"series-closes-{role}")
        if bad:
            ax.scatter([t for t, _ in bad], [k for _, k in bad], s=6, color=LATE, gid=f"series-closes-outside-{role}")
        promise = c["promise"] if window else f"{c['promise']}: when they closed"
        outside = (f", {sum(1 for t, _ in bad if t < lo)} early, {sum(1 for t, _ in bad if t > hi)} late" if window else "")
        ax.set_title(f"{role}: {len(times)} closed, promised {promise}{outside}", fontsize=9, loc="left")
        ax.set_ylabel("connection")
        ax.set_xlabel(f"seconds after the {c['event']}")
        xs = times + ([lo, hi] if window else [])
        ax.set_xlim(min(0.0, min(xs)), max(xs) * 1.1 + 0.1)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return figure_html("plot-closes", "Close times against the promise, per role", fig)


def lateness_plot(docs):
    """Kick lateness histograms (idle and pinger clients) over every process, in ms."""
    data = {role: sorted(v / 1000 for d in docs for v in d.get(f"{role}_lateness_us", [])) for role in ("idle", "pinger")}
    fig, axes = new_figure()
    ax = axes[0][0]
    if not data["idle"] and not data["pinger"]:
        ax.text(0.5, 0.5, "no idle or pinger client was kicked", ha="center", va="center")
        ax.axis("off")
        return figure_html("plot-lateness", "Kick lateness: none", fig)
    for r in ("idle", "pinger"):
        v = data[r]
        if v:
            ax.hist(v, bins=50, color=COLOURS[r], alpha=0.8, histtype="stepfilled", gid=f"series-lateness-{r}",
                    label=f"{r}: {len(v)} kicks, p50 {v[len(v) // 2]:.1f} ms, max {v[-1]:.1f} ms")
    ax.set_xlabel("close - (reference + promised timeout), ms")
    ax.set_ylabel("kicks per bin")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return figure_html("plot-lateness", "Kick lateness: close - (reference + promised timeout)", fig)


def echo_plot(docs):
    """The active clients' echo round trips, summed histograms on loadgen's fixed log bins."""
    hists = [d["echo_rtt_histogram"] for d in docs if d.get("echo_rtt_histogram", {}).get("count")]
    fig, axes = new_figure()
    ax = axes[0][0]
    counts = [sum(h["count"][k] for h in hists) for k in range(len(hists[0]["count"]))] if hists else []
    if not any(counts):
        ax.text(0.5, 0.5, "no echo", ha="center", va="center")
        ax.axis("off")
        return figure_html("plot-echo", "Echo latency: no echo", fig)
    upper = hists[0]["upper_ms"]
    edges = [upper[0] / 10 ** 0.1] + upper + [upper[-1] * 10 ** 0.1]
    used = [k for k, c in enumerate(counts) if c]
    first, last = max(used[0] - 1, 0), min(used[-1] + 1, len(counts) - 1)
    ax.stairs(counts[first:last + 1], edges[first:last + 2], fill=True, color=COLOURS["active"], alpha=0.8,
              gid="series-echo-active")
    ax.set_xscale("log")
    total = sum(counts)
    median = next(k for k in range(len(counts)) if sum(counts[:k + 1]) * 2 >= total)
    ax.set_title(f"{total} echoes, median <= {upper[min(median, len(upper) - 1)]:.3g} ms", fontsize=9, loc="left")
    ax.set_xlabel("round trip, ms (log scale)")
    ax.set_ylabel("echoes per bin")
    ax.grid(alpha=0.3)
    return figure_html("plot-echo", "Echo latency: round trips of the active clients' messages", fig)


def server_plot(doc):
    """The server's CPU, memory and open connections over the run, from its /stats samples."""
    s = doc.get("samples", {})
    t = s.get("t_s") or []
    if len(t) < 2:
        return ""
    fig, axes = new_figure(2.0, 3)
    cpu = [0.0] + [100 * (s["cpu_s"][k] - s["cpu_s"][k - 1]) / max(t[k] - t[k - 1], 1e-9) for k in range(1, len(t))]
    for ax, ys, label, colour, gid in ((axes[0][0], cpu, "server CPU, % of one core", "#7b3294", "series-server-cpu"),
                                       (axes[1][0], [b / 2**20 for b in s["rss_bytes"]], "server memory (RSS), MiB", "#1f6fb4", "series-server-rss"),
                                       (axes[2][0], s["open"], "open connections (server)", "#2ca02c", "series-server-open")):
        ax.plot(t, ys, color=colour, lw=1.6, gid=gid)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(alpha=0.3)
    axes[2][0].set_xlabel("time since the first connect, s")
    fig.tight_layout()
    return figure_html("plot-server", "The server, from its /stats", fig)


def verdict_table(summary):
    rows = []
    for role in ROLES:
        m = summary["roles"].get(role)
        if not m:
            continue
        verdict = "pass" if m["role_passed"] else "FAIL " + " ".join(f"{label} {m[k]}" for k, label in VERDICT_KEYS if m[k])
        if m["role_passed"] and m["expected"] == "unbounded":
            verdict = f"pass (unbounded, {m['open']} open at the end)"
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


def failed_roles(summary):
    """'dead (245 false of 2000); idle (12 missed of 600)': what failed, per role, with its counts."""
    parts = []
    for role in ROLES:
        m = summary["roles"].get(role)
        if m and not m["role_passed"]:
            counts = ", ".join(f"{m[k]} {label}" for k, label in VERDICT_KEYS if m[k])
            parts.append(f"{role} ({counts} of {m['count']})")
    return "; ".join(parts)


def banner(summary):
    if summary["passed"]:
        return f"PASS: every role passed ({summary['ready']} of {summary['connections']} connections up)"
    return "FAIL: " + (failed_roles(summary) or "a loadgen process left no result")


def write(path, summary, docs):
    passed = summary["passed"]
    problems = "".join(f"<li>{p['count']} x {html.escape(p['what'])}, e.g. {html.escape(p['example'])}</li>"
                       for p in summary["problems"][:20])
    promise = docs[0].get("promise") if docs else ""
    page = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>idlewheel load test</title>",
            f"<style>{STYLE}</style></head><body>",
            f"<h1>Load test: {summary['connections']} connections, {summary['processes']} loadgen process"
            f"{'es' if summary['processes'] != 1 else ''}, against {html.escape(summary['target'])}</h1>",
            f'<div id="overall" class="{"pass" if passed else "fail"}">{html.escape(banner(summary))}</div>',
            f"<p>Promise: <code>{html.escape(promise)}</code></p>" if promise else "",
            "<h2>Verdict per role (all processes)</h2>", verdict_table(summary),
            f"<ul>{problems}</ul>" if problems else "",
            "<h2>Plots</h2><div class=\"plots\">", closes_plot(docs) if docs else "", connections_plot(docs),
            lateness_plot(docs), echo_plot(docs), "</div>"]
    if docs:
        page += ["<h2>Settings</h2>", settings(docs)]
    if len(docs) == 1 and server_plot(docs[0]):
        page += ["<h2>The server, from its /stats</h2>", server_plot(docs[0])]
    page.append("</body></html>\n")
    with open(path, "w") as f:
        f.write("\n".join(page))
