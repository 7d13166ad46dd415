#!/usr/bin/python3
"""loadgen's plot of one run or several (e.g. wheel and asio) as one SVG, drawn by matplotlib
(Debian's python3-matplotlib): the idle kicks' lateness histogram, and from the server's
/stats samples its CPU (user dashed), memory (RSS) and open connections over time. Reads the
result JSON loadgen writes (--json); bench/compare.sh and the smoke tests call it.

usage: plot.py RESULT.json [RESULT.json...] --out OUT.svg
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "idlewheel", "font.size": 9,
                            "font.family": "DejaVu Sans"})
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = ("#1f6fb4", "#d0342c", "#2ca02c", "#ff7f0e")


def label(r):
    lat = r["kick_lateness_ms"]["idle"]
    steady = (r["server_cost"].get("steady") or {}).get("cpu_us_per_message", 0)
    rss = r["server_cost"].get("rss_bytes_per_connection") or 0
    busy = (r.get("machine") or {}).get("busy_percent", 0)
    return (f"{r['label']}: kick lateness p50 {lat['p50']:.1f} / p99 {lat['p99']:.1f} / max {lat['max']:.1f} ms; "
            f"server CPU {steady:.2f} us/echo (steady); RSS {rss:.0f} B/connection; false {r['checks']['false_kicks']}, "
            f"missed {r['checks']['missed_kicks']}; machine {busy:.0f} % busy")


def plot(runs, out):
    first = runs[0]
    sc, mix = first["scenario"], first["scenario"]["mix"]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    fig.suptitle(f"loadgen, {sc['protocol']}: {sc['connections']} connections (idle {mix['idle']}, active {mix['active']}, "
                 f"pinger {mix['pinger']}, dead {mix['dead']}), idle timeout {first['server']['idle_timeout_ms'] / 1000:g} s, "
                 f"tick {first['server']['tick_ms']:g} ms, {first['server']['threads']:g} server thread(s)\n"
                 + "\n".join(label(r) for r in runs), fontsize=8.5, x=0.01, ha="left")
    hist, cpu, rss, conns = axes[0][0], axes[0][1], axes[1][0], axes[1][1]
    for i, r in enumerate(runs):
        colour = COLOURS[i % len(COLOURS)]
        late = [v / 1000 for v in r.get("idle_lateness_us", [])]
        if late:
            hist.hist(late, bins=60, histtype="step", color=colour, lw=1.6, label=r["label"], gid=f"series-lateness-{i}")
        s = r.get("samples", {})
        t, up = s.get("t_s", []), s.get("uptime_s", [])
        mid = [(t[k] + t[k - 1]) / 2 for k in range(1, len(t)) if up[k] > up[k - 1]]
        pct = [100 * (s["cpu_s"][k] - s["cpu_s"][k - 1]) / (up[k] - up[k - 1]) for k in range(1, len(t)) if up[k] > up[k - 1]]
        user = [100 * (s["cpu_user_s"][k] - s["cpu_user_s"][k - 1]) / (up[k] - up[k - 1])
                for k in range(1, len(t)) if up[k] > up[k - 1]]
        cpu.plot(mid, pct, color=colour, lw=1.4, label=r["label"], gid=f"series-cpu-{i}")
        cpu.plot(mid, user, color=colour, lw=1.0, ls="--")
        rss.plot(t, [b / 2**20 for b in s.get("rss_bytes", [])], color=colour, lw=1.4, gid=f"series-rss-{i}")
        conns.plot(t, s.get("open", []), color=colour, lw=1.4, gid=f"series-open-{i}")
    hist.set_title("Idle kicks: lateness histogram (connections per bin)", fontsize=9, loc="left")
    hist.set_xlabel("close - (message written + idle timeout), ms")
    cpu.set_title("Server CPU, % of one core (user dashed)", fontsize=9, loc="left")
    rss.set_title("Server memory (RSS), MiB", fontsize=9, loc="left")
    conns.set_title("Open connections (server's /stats)", fontsize=9, loc="left")
    for ax in (cpu, rss, conns):
        ax.set_xlabel("time since the first connect, s")
    for ax in (hist, cpu, rss, conns):
        ax.grid(alpha=0.3)
    if len(runs) > 1:
        cpu.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, format="svg")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    runs = []
    for path in args.results:
        with open(path) as f:
            runs.append(json.load(f))
    plot(runs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
