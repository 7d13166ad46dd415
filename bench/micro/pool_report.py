#!/usr/bin/env python3
"""The table of bench/results/2026-11-25-wheel-pool.md from idlewheel_pool_bench's JSON output
(--benchmark_out=FILE --benchmark_out_format=json, several repetitions).

For every (threads, per_handler): each contender's ns per touch / re-arm as the median over the
repetitions with their range [min-max], by CPU time (cpu_ns: the threads' CPU time / ops) and by
wall time x threads (wall_x_T_ns), and the ratios the targets of issue 19 are stated in:
  pool / per-thread wheel (target <= 1), shared-io steady_timer re-arm / pool touch (target >= 50),
and the two steady_timer shapes against each other. Ratios are of the medians; the range of a
ratio is the worst and best pairing of the two ranges.

usage: pool_report.py FILE.json
"""
import json
import statistics
import sys

CONTENDERS = ("touch/pool_wheel", "touch/wheel_per_thread", "rearm/steady_timer_shared_io", "rearm/steady_timer_io_per_thread")
SHORT = {"touch/pool_wheel": "pool", "touch/wheel_per_thread": "wheel/thr",
         "rearm/steady_timer_shared_io": "asio shared", "rearm/steady_timer_io_per_thread": "asio io/thr"}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        # name: touch/pool_wheel/threads:2/per_handler:256/manual_time
        parts = b["name"].split("/")
        contender = "/".join(parts[:2])
        threads = int(parts[2].split(":")[1])
        per_handler = int(parts[3].split(":")[1])
        runs.setdefault((per_handler, threads), {}).setdefault(contender, []).append(b)
    return doc.get("context", {}), runs


def stat(samples, key):
    v = sorted(s[key] for s in samples)
    return statistics.median(v), v[0], v[-1]


def fmt(m):
    if m is None:
        return "%8s" % "-"
    med, lo, hi = m
    return "%8.1f [%s-%s]" % (med, num(lo), num(hi))


def num(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x


def ratio(a, b):
    """a / b as median and the range from the worst to the best pairing."""
    if a is None or b is None:
        return None
    return a[0] / b[0], a[1] / b[2], a[2] / b[1]


def fmt_ratio(r):
    if r is None:
        return "%6s" % "-"
    return "%6.2f [%.2f-%.2f]" % r


BASELINES = ("baseline/strand_shared_io", "baseline/io_per_thread")


def minus(a, b):
    """a - b as median and the range from the worst to the best pairing."""
    return a[0] - b[0], a[1] - b[2], a[2] - b[1]


def main(path):
    context, runs = load(path)
    reps = max((len(v) for c in runs.values() for v in c.values()), default=0)
    print("idlewheel_pool_bench: %s sessions in %s groups, %d repetition(s) per case (interleaved at random); "
          "load average at the start %s" % (context.get("sessions", "?"), context.get("groups", "?"), reps,
                                             " ".join("%.2f" % x for x in context.get("load_avg", []))))
    for key, title in (("cpu_ns", "CPU time of the threads / ops"), ("wall_x_T_ns", "wall time x threads / ops")):
        print()
        print("ns per touch / re-arm, %s: median [min-max]" % title)
        print("%-7s %-7s | %-22s %-22s %-22s %-22s | %-19s %-19s %-19s" % (
            "threads", "per_hdl", "pool", "wheel/thr", "asio shared", "asio io/thr",
            "pool / wheel/thr", "asio shared / pool", "asio shared/io/thr"))
        for (per_handler, threads) in sorted(runs, key=lambda k: (-k[0], k[1])):
            c = runs[(per_handler, threads)]
            m = {x: stat(c[x], key) if x in c else None for x in CONTENDERS}
            print("%-7d %-7d | %-22s %-22s %-22s %-22s | %-19s %-19s %-19s" % (
                threads, per_handler, fmt(m[CONTENDERS[0]]), fmt(m[CONTENDERS[1]]), fmt(m[CONTENDERS[2]]),
                fmt(m[CONTENDERS[3]]),
                fmt_ratio(ratio(m["touch/pool_wheel"], m["touch/wheel_per_thread"])),
                fmt_ratio(ratio(m["rearm/steady_timer_shared_io"], m["touch/pool_wheel"])),
                fmt_ratio(ratio(m["rearm/steady_timer_shared_io"], m["rearm/steady_timer_io_per_thread"]))))
    if all(any(b in c for c in runs.values()) for b in BASELINES):
        print()
        print("the handlers alone (same walk, no touch) and the touch net of them, CPU time / ops: median [min-max]")
        print("%-7s %-7s | %-22s %-22s | %-22s %-22s | %-19s" % (
            "threads", "per_hdl", "strand, shared io", "io per thread", "pool - strand", "wheel/thr - io/thr",
            "net pool / net w/thr"))
        for (per_handler, threads) in sorted(runs, key=lambda k: (-k[0], k[1])):
            c = runs[(per_handler, threads)]
            if any(x not in c for x in ("touch/pool_wheel", "touch/wheel_per_thread") + BASELINES):
                continue
            m = {x: stat(c[x], "cpu_ns") for x in ("touch/pool_wheel", "touch/wheel_per_thread") + BASELINES}
            net_pool = minus(m["touch/pool_wheel"], m[BASELINES[0]])
            net_wheel = minus(m["touch/wheel_per_thread"], m[BASELINES[1]])
            print("%-7d %-7d | %-22s %-22s | %-22s %-22s | %-19s" % (
                threads, per_handler, fmt(m[BASELINES[0]]), fmt(m[BASELINES[1]]), fmt(net_pool), fmt(net_wheel),
                "%6.2f" % (net_pool[0] / net_wheel[0]) if net_wheel[0] > 0 else "-"))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
