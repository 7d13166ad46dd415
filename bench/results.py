#!/usr/bin/env python3
"""Tables across several loadgen runs, each with its targets checked.

    results.py overhead   DIR      none.json, wheel.json, asio.json in DIR (bench/compare.sh)
    results.py saturation DIR      DIR/sat-T-N-MODE.json for every threads T (or ioT: --io-threads T), connections N, mode
    results.py scale      DIR      DIR/loadgen-*.json and DIR/monitor.json (bench/scale.sh)
    results.py monitor    OUT PID... [--seconds S]   samples the servers' RSS, descriptors and CPU
                                                     every second into OUT, for at most S seconds

Every number comes from the loadgen result files (see bench/loadgen/README.md for what each
one means) or from /proc. Exit status: 0 when every run passed loadgen's checks (and, with
--strict, every target was met), 1 otherwise, 2 on a bad command line or missing input.
"""
import glob
import json
import math
import os
import sys
import time


def load(path):
    with open(path) as f:
        return json.load(f)


def get(doc, *path, default=None):
    for key in path:
        if not isinstance(doc, dict) or key not in doc or doc[key] is None:
            return default
        doc = doc[key]
    return doc


def percentile(sorted_values, q):
    """Nearest rank, as loadgen computes it."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), math.ceil(q * len(sorted_values))))
    return sorted_values[rank - 1]


def verdict(ok):
    return "met" if ok else "MISSED"


def passed(doc):
    return bool(get(doc, "checks", "passed", default=False))


def checks_line(doc):
    c = doc.get("checks", {})
    return "false %d, missed %d, wrong %d, unresolved %d, errors %d" % (
        c.get("false_kicks", 0), c.get("missed_kicks", 0), c.get("wrong_outcomes", 0),
        c.get("unresolved", 0), c.get("errors", 0))


def machine_line(docs):
    busy = [get(d, "machine", "busy_percent") for d in docs]
    busy = [b for b in busy if b is not None]
    load_end = get(docs[-1], "machine", "loadavg_at_end", default="?")
    return "machine busy %s %% during the runs, load average at the end %s" % (
        "/".join("%.0f" % b for b in busy) or "?", load_end)


# --- compare.sh: liveness overhead against --timers=none -----------------------------------

def overhead(directory, strict):
    runs = {}
    for mode in ("none", "wheel", "asio"):
        path = os.path.join(directory, mode + ".json")
        if not os.path.exists(path):
            print("results.py: %s is missing" % path, file=sys.stderr)
            return 2
        runs[mode] = load(path)

    def cpu(doc, window):
        return get(doc, "server_cost", window, "cpu_us_per_message")

    def median(doc):
        return get(doc, "server_cost", "steady_intervals", "cpu_us_per_message_median")

    def rss(doc):
        return get(doc, "server_cost", "rss_bytes_per_connection")

    rows = [
        ("CPU per echoed message, steady (us)", lambda d: cpu(d, "steady"), "%.2f"),
        ("  same, median of the intervals (us)", median, "%.2f"),
        ("  same, while all connections were open (us)", lambda d: cpu(d, "full_load"), "%.2f"),
        ("RSS per connection (bytes)", rss, "%.0f"),
    ]
    n = get(runs["wheel"], "scenario", "connections", default=0)
    print("liveness overhead = mode - none, at %d connections (%s)" % (n, machine_line(list(runs.values()))))
    print("%-46s %10s %10s %10s | %12s %12s | %11s" % ("", "none", "wheel", "asio", "wheel - none", "asio - none",
                                                      "wheel/asio"))
    ratios = {}
    for title, value, form in rows:
        v = {m: value(d) for m, d in runs.items()}
        if any(x is None for x in v.values()):
            print("%-46s %s" % (title, "  (not measured in every run)"))
            continue
        ow, oa = v["wheel"] - v["none"], v["asio"] - v["none"]
        ratio = ow / oa if oa > 0 else float("nan")
        ratios[title] = ratio
        print(("%-46s %10s %10s %10s | %12s %12s | %11s") % (
            title, form % v["none"], form % v["wheel"], form % v["asio"], ("%+" + form[1:]) % ow,
            ("%+" + form[1:]) % oa, "%.3f" % ratio if oa > 0 else "n/a (asio<=0)"))
    others = []
    for mode, doc in runs.items():
        others.append("%s: %s; wake-ups %d, timer re-arms %d; late-kick p99 %.2f ms" % (
            mode, checks_line(doc), get(doc, "server_cost", "wheel_wakeups", default=0),
            get(doc, "server_cost", "asio_timer_rearms", default=0),
            get(doc, "kick_lateness_ms", "idle", "p99", default=float("nan"))))
    print("\n".join(others))
    cpu_ratio = ratios.get(rows[0][0])
    mem_ratio = ratios.get(rows[3][0])
    targets_ok = True
    if cpu_ratio is not None:
        ok = cpu_ratio == cpu_ratio and cpu_ratio <= 0.20
        targets_ok &= ok
        print("target: wheel's CPU overhead <= 20 %% of asio's: %.1f %% -> %s" % (100 * cpu_ratio, verdict(ok)))
    if mem_ratio is not None:
        ok = mem_ratio == mem_ratio and mem_ratio <= 0.30
        targets_ok &= ok
        print("target: wheel's memory overhead <= 30 %% of asio's: %.1f %% -> %s" % (100 * mem_ratio, verdict(ok)))
    all_passed = all(passed(d) for d in runs.values())
    print("checks: %s" % ("every run passed" if all_passed else "FAILED: " + ", ".join(m for m, d in runs.items() if not passed(d))))
    if not all_passed or (strict and not targets_ok):
        return 1
    return 0


# --- saturation.sh: closed-loop echoes per second ---------------------------------------------

def saturation(directory, strict):
    found = {}
    for path in glob.glob(os.path.join(directory, "sat-*.json")):
        _, shape, conns, mode = os.path.basename(path)[:-5].split("-")
        # shape: T (demo_server --threads T) or ioT (--io-threads T); sorted per-thread first
        key = (1, int(shape[2:])) if shape.startswith("io") else (0, int(shape))
        found[(key, int(conns), mode)] = load(path)
    if not found:
        print("results.py: no sat-*.json in %s" % directory, file=sys.stderr)
        return 2
    print("closed loop: every client sends its next message when the echo arrives (%s)" %
          machine_line(list(found.values())))
    print("echoes per second (the server's count, steady window); per CPU-second: the same divided by the")
    print("server's CPU use, what one fully busy core would serve when the server is not the bottleneck")
    shape_name = lambda k: ("io:%d" % k[1]) if k[0] else "%d" % k[1]
    print("%-7s %11s | %10s %10s %10s | %10s %9s | %-16s | %10s %10s %10s | %10s" % (
        "threads", "connections", "none", "wheel", "asio", "wheel/none", "asio/none", "server CPU %",
        "none/CPU-s", "wheel/CPU-s", "asio/CPU-s", "wheel/none"))
    all_passed = all(passed(d) for d in found.values())
    targets_ok = True
    modes = ("none", "wheel", "asio")
    for threads, conns in sorted({(t, n) for t, n, _ in found}):
        rate, busy, per_cpu = {}, {}, {}
        for mode in modes:
            doc = found.get((threads, conns, mode))
            rate[mode] = get(doc, "server_cost", "steady", "messages_per_s") if doc else None
            busy[mode] = get(doc, "server_cost", "steady", "cpu_percent") if doc else None
            cpu_us = get(doc, "server_cost", "steady", "cpu_us_per_message") if doc else None
            per_cpu[mode] = 1e6 / cpu_us if cpu_us else None

        def ratio(d, a, b):
            return d[a] / d[b] if d[a] is not None and d[b] else float("nan")

        rw = ratio(rate, "wheel", "none")
        targets_ok &= rw == rw and rw >= 0.97
        cell = lambda x: "%10.0f" % x if x is not None else "%10s" % "-"
        print("%-7s %11d | %s %s %s | %10.3f %9.3f | %-16s | %s %s %s | %10.3f" % (
            shape_name(threads), conns, cell(rate["none"]), cell(rate["wheel"]), cell(rate["asio"]), rw, ratio(rate, "asio", "none"),
            "/".join("%.0f" % busy[m] if busy[m] is not None else "-" for m in modes),
            cell(per_cpu["none"]), cell(per_cpu["wheel"]), cell(per_cpu["asio"]), ratio(per_cpu, "wheel", "none")))
    bad = sorted("%s threads, %d connections, %s: %s" % (shape_name(t), n, m, checks_line(d)) for (t, n, m), d in found.items() if not passed(d))
    print("target: wheel >= 97 %% of none in every row -> %s" % verdict(targets_ok))
    print("checks: %s" % ("every run passed" if all_passed else "FAILED: " + "; ".join(bad)))
    if not all_passed or (strict and not targets_ok):
        return 1
    return 0


# --- scale.sh: many servers, many loadgens ---------------------------------------------------

def scale(directory, strict, expect):
    paths = sorted(glob.glob(os.path.join(directory, "loadgen-*.json")))
    if not paths:
        print("results.py: no loadgen-*.json in %s" % directory, file=sys.stderr)
        return 2
    docs = [load(p) for p in paths]
    monitor_path = os.path.join(directory, "monitor.json")
    monitor = load(monitor_path) if os.path.exists(monitor_path) else None

    total = lambda *path: sum(get(d, *path, default=0) for d in docs)
    planned = total("scenario", "connections")
    ready = total("connect", "ready")
    lateness = sorted([v / 1000.0 for d in docs for v in d.get("idle_lateness_us", [])] +
                      [v / 1000.0 for d in docs for v in d.get("pinger_lateness_us", [])])
    tick_ms = get(docs[0], "server", "tick_ms", default=0)
    sent = total("echo", "sent")
    print("%d loadgen processes: %d connections planned, %d up (connect phase up to %.1f s)" % (
        len(docs), planned, ready, max(get(d, "connect", "phase_s", default=0) for d in docs)))
    print("kicks      %d idle + pinger kicks; lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms (tick %.0f ms)" % (
        len(lateness), percentile(lateness, 0.5), percentile(lateness, 0.99), lateness[-1] if lateness else float("nan"),
        tick_ms))
    print("dead       %d dropped by the heartbeat" % total("dead_detection_s", "n"))
    print("checks     false kicks %d (early %d), missed %d, wrong %d, unresolved %d, errors %d; past two ticks exactly: %d" % (
        total("checks", "false_kicks"), total("checks", "early_kicks"), total("checks", "missed_kicks"),
        total("checks", "wrong_outcomes"), total("checks", "unresolved"), total("checks", "errors"),
        total("checks", "past_two_ticks")))
    lag = max(get(d, "client", "loop_lag_ms", "max", default=0) for d in docs)
    print("loadgen    CPU %.1f s in all; worst event-loop lag %.1f ms%s" % (
        total("client", "cpu_s"), lag, " (over 100 ms: loadgen was overloaded, lateness is overstated)" if lag > 100 else ""))

    rss_per_conn = None
    if monitor:
        samples = monitor["samples"]
        first = samples[0]
        peak = max(samples, key=lambda s: sum(s["fds"]))
        conns = sum(peak["fds"]) - sum(first["fds"])
        rss_delta = sum(peak["rss"]) - sum(first["rss"])
        if conns > 0:
            rss_per_conn = rss_delta / conns
        last = samples[-1]
        cpu = [b - a for a, b in zip(first["cpu"], last["cpu"])]
        seconds = last["t"] - first["t"]
        print("servers    %d processes; at the peak (%.0f s) %d connections open, RSS %.1f MiB in all (%.1f MiB before)" % (
            len(monitor["pids"]), peak["t"], sum(peak["fds"]) - sum(first["fds"]), sum(peak["rss"]) / 2**20,
            sum(first["rss"]) / 2**20))
        print("           RSS per connection %s; CPU %.1f s in all over %.0f s (%s s per process), %.2f us per message sent" % (
            "%.0f B" % rss_per_conn if rss_per_conn is not None else "-", sum(cpu), seconds,
            " ".join("%.1f" % c for c in cpu), 1e6 * sum(cpu) / sent if sent else float("nan")))
    print("machine    " + machine_line(docs))

    targets_ok = True
    bad = total("checks", "false_kicks")
    missed = total("checks", "missed_kicks")
    print("target: 0 false kicks -> %s" % verdict(bad == 0))
    print("target: 0 missed kicks -> %s" % verdict(missed == 0))
    p99 = percentile(lateness, 0.99)
    p99_ok = p99 == p99 and p99 <= tick_ms + 10
    print("target: p99 lateness <= one tick + 10 ms = %.0f ms: %.2f ms -> %s" % (tick_ms + 10, p99, verdict(p99_ok)))
    targets_ok &= bad == 0 and missed == 0 and p99_ok
    all_passed = all(passed(d) for d in docs) and ready == planned and (expect is None or planned == expect)
    print("checks: %s" % ("every loadgen passed, every connection was up" if all_passed else
                          "FAILED: " + "; ".join("%s: %s" % (os.path.basename(p), checks_line(d)) for p, d in zip(paths, docs)
                                                 if not passed(d)) + ("; %d of %d connections up" % (ready, planned))))
    if not all_passed or (strict and not targets_ok):
        return 1
    return 0


def monitor(out, pids, max_seconds):
    """Samples RSS, open descriptors and CPU of each server once a second until they are all gone
    (or max_seconds passed); writes the samples as JSON."""
    page = os.sysconf("SC_PAGE_SIZE")
    hz = os.sysconf("SC_CLK_TCK")
    start = time.monotonic()
    samples = []
    while time.monotonic() - start < max_seconds:
        rss, fds, cpu, alive = [], [], [], 0
        for pid in pids:
            try:
                with open("/proc/%d/statm" % pid) as f:
                    rss.append(int(f.read().split()[1]) * page)
                fds.append(len(os.listdir("/proc/%d/fd" % pid)))
                with open("/proc/%d/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                cpu.append((int(fields[11]) + int(fields[12])) / hz)
                alive += 1
            except (OSError, IndexError, ValueError):
                rss.append(samples[-1]["rss"][len(rss)] if samples else 0)
                fds.append(0)
                cpu.append(samples[-1]["cpu"][len(cpu)] if samples else 0)
        if alive == 0:
            break
        samples.append({"t": round(time.monotonic() - start, 3), "rss": rss, "fds": fds, "cpu": cpu})
        with open(out + ".tmp", "w") as f:
            json.dump({"pids": pids, "samples": samples}, f)
        os.replace(out + ".tmp", out)
        time.sleep(1)
    return 0


def main(argv):
    strict = "--strict" in argv
    argv = [a for a in argv if a != "--strict"]
    expect = None
    if "--expect" in argv:
        i = argv.index("--expect")
        expect = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) >= 2 and argv[0] == "overhead":
        return overhead(argv[1], strict)
    if len(argv) >= 2 and argv[0] == "saturation":
        return saturation(argv[1], strict)
    if len(argv) >= 2 and argv[0] == "scale":
        return scale(argv[1], strict, expect)
    if len(argv) >= 3 and argv[0] == "monitor":
        seconds = 600.0
        if "--seconds" in argv:
            i = argv.index("--seconds")
            seconds = float(argv[i + 1])
            del argv[i:i + 2]
        return monitor(argv[1], [int(p) for p in argv[2:]], seconds)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
