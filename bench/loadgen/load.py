#!/usr/bin/python3
"""The load test behind scripts/load.sh: loadgen processes against demo_server processes it
starts itself (on loopback, stopped by their PIDs), or against any server (--url: nothing is
started); one progress line a second merged over every process; at the end the verdict per role
over all processes, a summary JSON and an HTML report (bench/loadgen/report.py).

usage: load.py --loadgen PATH [--demo-server PATH] [--connections N] [--processes P]
               [--servers S] [--duration D] [--out DIR] [--idle X --active X --pingers X
               --dead X --stalled X] [--url URL PROMISE...] [any other loadgen option]

Without --url: S demo_server processes (--reuse-port when S > 1: the kernel spreads the
connections over them), with idle timeout 6 s, ping 1 s + jitter <= 500 ms, pong 2 s,
handshake deadline 4 s, tick 10 ms; every loadgen is told the same promises (--expect-idle
...) and reads /stats as a cross-check. With --url, every option not listed above goes to
every loadgen as given (the promise flags: --expect-idle, --expect beast-timeouts, ...).

A process holds at most its descriptor limit (20 000 here): P defaults to one loadgen per
15 000 connections, S to one server per 12 000; each loadgen connects from its own three
loopback source addresses (127.0.0.2+3k, when the server is on 127.*). Mix shares with a
decimal point are fractions (the same in every process); whole numbers are counts, split.
IDLEWHEEL_LOAD_CONNECTIONS and IDLEWHEEL_LOAD_OUT, when set, replace the defaults of --connections
(4000) and --out (build/load/report): the test that runs the README's commands as written uses
them. Every process is bounded: loadgen by its --duration, then SIGKILL 60 s later; the servers get
SIGTERM at the end. Exit status: 0 every role passed in every process, 1 a verdict failed or
a process did not finish, 2 a bad command line, 3 nothing could be run.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

ROLES = ("idle", "active", "pinger", "dead", "stalled")
MIX_FLAGS = {"idle": "--idle", "active": "--active", "pinger": "--pingers", "dead": "--dead", "stalled": "--stalled"}
# What the demo started here promises, as demo_server flags and as loadgen's expectation.
DEMO_TIMING = {"idle": "6s", "ping": "1s", "pong": "2s", "jitter": "500ms", "handshake": "4s", "tick": "10ms"}
DEFAULT_MIX = {"idle": "0.3", "active": "0.3", "pinger": "0.15", "dead": "0.15", "stalled": "0.1"}
PER_LOADGEN = 15000
PER_SERVER = 12000


def seconds(text):
    """'500ms', '6s', '2m', '250us' -> seconds (loadgen's duration format)."""
    m = re.fullmatch(r"(\d+)(us|ms|s|m)", text or "")
    if not m:
        raise ValueError(f"not a duration: {text!r} (a whole number and us, ms, s or m)")
    return int(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(2)]


def option_value(extra, name):
    """The value of --name V or --name=V among the pass-through options, or None."""
    for i, arg in enumerate(extra):
        if arg == name and i + 1 < len(extra):
            return extra[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def split_share(share, k, processes):
    """Process k's part of a mix share: a fraction as is, a count split evenly."""
    if "." in share:
        return share
    total = int(share)
    return str(total // processes + (1 if k < total % processes else 0))


def ask_promise(loadgen, promise, mix):
    """loadgen's reading of the promise flags (--print-promise): the windows per role, as JSON."""
    counts = any("." not in share for share in mix.values())
    cmd = [loadgen, "--print-promise"] + promise + (["-n", str(len(mix))] if counts else [])
    for role, share in mix.items():
        cmd += [MIX_FLAGS[role], "1" if counts else share]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(2)
    return json.loads(done.stdout)


def longest_promise(promise, extra):
    """The longest time a client may wait for its verdict, from the promise, in seconds (observe:
    20 s, long enough for the common heartbeats and idle timeouts)."""
    if promise["expect"] == "observe":
        return 20
    due = [r["to_s"] for r in promise["roles"].values() if r["closed"]]
    return max(due) if due else 0


class Process:
    def __init__(self, popen, name, deadline):
        self.popen, self.name, self.deadline = popen, name, deadline


def start_servers(demo, count, out):
    """count demo_servers on loopback sharing their ports; returns (processes, tcp_port, http_port)."""
    t = DEMO_TIMING
    args = ["--idle-timeout", t["idle"], "--ping-interval", t["ping"], "--pong-timeout", t["pong"],
            "--ping-jitter", t["jitter"], "--handshake-timeout", t["handshake"], "--tick", t["tick"],
            "--max-connections", "19500", "--quiet"] + (["--reuse-port"] if count > 1 else [])
    servers, ports = [], None
    for k in range(count):
        port_args = ["--tcp-port", "0", "--http-port", "0"] if ports is None else ["--tcp-port", ports[0], "--http-port", ports[1]]
        listen, log = os.path.join(out, f"server-{k}.out"), os.path.join(out, f"server-{k}.log")
        with open(listen, "w") as stdout, open(log, "w") as stderr:
            proc = subprocess.Popen([demo] + port_args + args, stdout=stdout, stderr=stderr)
        servers.append(proc)
        deadline = time.monotonic() + 10
        while True:
            with open(listen) as f:
                m = re.search(r"^listening tcp=\S+:(\d+) http=\S+:(\d+)$", f.read(), re.M)
            if m:
                ports = ports or (m.group(1), m.group(2))
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(servers)
                raise RuntimeError(f"demo_server did not start (see {log})")
            time.sleep(0.05)
    return servers, ports[0], ports[1]


def stop(servers):
    for proc in servers:
        if proc.poll() is None:
            proc.terminate()
    for proc in servers:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def progress_line(t, docs, mix_planned, detail):
    """One line of at most 120 columns: connections up, kicked (closed by the server) and failed,
    summed over the processes; with detail, the same per role on the lines below."""
    rows, total = [], {"planned": 0, "connected": 0, "kicked": 0, "failed": 0}
    for role in ROLES:
        sums = {key: sum(d.get(role, {}).get(key, 0) for d in docs) for key in total}
        if not sums["planned"] and not mix_planned.get(role):
            continue
        for key in total:
            total[key] += sums[key]
        rows.append(f"{'':9}{role:<8} {sums['connected']}/{sums['planned']} up, {sums['kicked']} kicked, "
                    f"{sums['failed']} failed")
    line = (f"[load {t:5.0f}s] {total['connected']}/{total['planned']} up, {total['kicked']} kicked, "
            f"{total['failed']} failed")
    return "\n".join([line] + rows) if detail else line


def merge(docs, exits):
    """The verdict per role over every process (bench/loadgen/report.py draws it)."""
    keys = ("open", "connect_failed", "handshake_failed", "ws_idle_close", "ws_other_close", "dropped", "error",
            "false_kicks", "missed_kicks", "wrong_outcomes", "unresolved", "errors")
    roles = {}
    for doc in docs:
        for role in ROLES:
            o = (doc or {}).get("outcomes", {}).get(role)
            if not o:
                continue
            m = roles.setdefault(role, {"count": 0, "expected": o["expected"], "role_passed": True,
                                        **{k: 0 for k in keys}})
            m["count"] += doc["scenario"]["mix"][role]
            for k in keys:
                m[k] += o[k]
            m["role_passed"] = m["role_passed"] and o["role_passed"]
            if m["expected"] != o["expected"]:
                m["expected"] += "/" + o["expected"]
    complete = all(d is not None for d in docs)
    passed = complete and all(d["checks"]["passed"] for d in docs) and all(e == 0 for e in exits) and bool(roles)
    return {"processes": len(docs), "complete": complete, "exit_codes": exits, "passed": passed,
            "connections": sum(d["scenario"]["connections"] for d in docs if d),
            "ready": sum(d["connect"]["ready"] for d in docs if d), "roles": roles,
            "problems": merged_problems(docs)}


def merged_problems(docs):
    """Each kind of problem once, its counts added over the processes, the first example kept."""
    kinds = {}
    for doc in docs:
        for p in (doc or {}).get("problems", []):
            k = kinds.setdefault(p["what"], dict(p, count=0))
            k["count"] += p["count"]
    return list(kinds.values())


def print_summary(summary, where, out):
    out.write(f"== load: {summary['connections']} connections, {summary['processes']} loadgen process"
              f"{'es' if summary['processes'] != 1 else ''}, {where} ==\n")
    out.write(f"{'role':<8} {'count':>7}  {'expected':<24} {'verdict':<8} got\n")
    unbounded = []
    for role in ROLES:
        m = summary["roles"].get(role)
        if not m:
            continue
        got = "  ".join(f"{k} {m[k]}" for k in report.OUTCOME_KEYS if m[k])
        verdict = "pass" if m["role_passed"] else "FAIL" + "".join(
            f" {label} {m[k]}" for k, label in report.VERDICT_KEYS if m[k])
        if m["role_passed"] and m["expected"] == "unbounded":
            closed = m["ws_idle_close"] + m["ws_other_close"] + m["dropped"]
            verdict = f"pass (unbounded{f': {closed} closed,' if closed else ','} {m['open']} open at the end)"
            if m["open"]:
                unbounded.append(f"{role} {m['open']}")
        out.write(f"{role:<8} {m['count']:>7}  {m['expected']:<24} {verdict:<8} {got}\n")
    for p in summary["problems"][:10]:
        out.write(f"  ! {p['count']:6d} x {p['what']}, e.g. {p['example']}\n")
    if not summary["complete"]:
        out.write("  ! a loadgen process left no result (see its loadgen-K.txt)\n")
    note = f"; unbounded, open at the end: {', '.join(unbounded)}" if unbounded else ""
    verdict = ("PASS: every role passed in every process" if summary["passed"]
               else "FAIL: " + (report.failed_roles(summary) or "a loadgen process failed"))
    out.write(f"checks: {verdict}{note}"
              f" ({summary['ready']} of {summary['connections']} connections up; loadgen exit codes "
              f"{' '.join(map(str, summary['exit_codes']))})\n")


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/load.sh", description=__doc__.split("\n\n")[0], allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--loadgen", required=True)
    parser.add_argument("--demo-server")
    parser.add_argument("--connections", "-n", type=int, default=int(os.environ.get("IDLEWHEEL_LOAD_CONNECTIONS", 4000)))
    parser.add_argument("--processes", type=int)
    parser.add_argument("--servers", type=int)
    parser.add_argument("--duration")
    parser.add_argument("--out", default=os.environ.get("IDLEWHEEL_LOAD_OUT", "build/load/report"))
    parser.add_argument("--url")
    for role, flag in MIX_FLAGS.items():
        parser.add_argument(flag, dest=role)
    args, extra = parser.parse_known_args(argv)
    if args.connections < 1:
        parser.error("--connections must be at least 1")
    processes = args.processes or max(1, math.ceil(args.connections / PER_LOADGEN))
    if processes < 1 or args.connections / processes > 19000:
        parser.error(f"{args.connections} connections need at least {math.ceil(args.connections / 19000)} processes "
                     "(one holds at most 19 000)")
    own_demo = args.url is None
    if own_demo and not args.demo_server:
        parser.error("without --url, --demo-server is needed (the demo to start)")
    server_count = args.servers or max(1, math.ceil(args.connections / PER_SERVER)) if own_demo else 0
    if own_demo and args.connections / server_count > 19000:
        parser.error(f"{args.connections} connections need at least {math.ceil(args.connections / 19000)} servers")
    mix = {r: getattr(args, r) for r in ROLES}
    if all(v is None for v in mix.values()):  # loadgen's rule: a role not given while others were has none
        if (args.url or "").startswith("tcp://"):
            mix = {"idle": "0.5", "active": "0.5"}
        else:
            mix = dict(DEFAULT_MIX)  # a role the promise leaves unbounded stays: either end passes
    mix = {r: v for r, v in mix.items() if v is not None}
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if re.fullmatch(r"(loadgen|progress|server)-\d+\..*|summary\.(json|txt)|report\.html", name):
            os.remove(os.path.join(out, name))

    servers = []
    try:
        if own_demo:
            servers, tcp_port, http_port = start_servers(args.demo_server, server_count, out)
            t = DEMO_TIMING
            target = ["--url", f"ws://127.0.0.1:{http_port}/", "--http-port", http_port, "--expect-idle", t["idle"],
                      "--expect-ping-interval", t["ping"], "--expect-pong-timeout", t["pong"], "--ping-jitter", t["jitter"],
                      "--handshake-timeout", t["handshake"]]
            where = f"{server_count} demo_server process{'es' if server_count != 1 else ''} ({target[1]})"
        else:
            target = ["--url", args.url]
            where = args.url
        promise = target + extra
        rate = float(option_value(extra, "--connect-rate") or 2000)
        per_process = math.ceil(args.connections / processes)
        # Past every client's due time: the connect phase, the longest promise, the allowance and 3 s.
        margin = seconds(option_value(extra, "--allowance") or "1s") + 3
        told = ask_promise(args.loadgen, promise, mix)
        duration = args.duration or f"{math.ceil(per_process / rate + longest_promise(told, extra) + margin)}s"
        host = re.sub(r"^\w+://\[?([^\]/]*?)\]?(:\d+)?(/.*)?$", r"\1", target[1])
        print(f"load: {args.connections} connections over {processes} loadgen process{'es' if processes != 1 else ''}"
              f" against {where}, {duration}; results in {out}", flush=True)
        sys.stdout.write(told["text"])

        procs, left = [], args.connections
        for k in range(processes):
            n = left // (processes - k)
            left -= n
            cmd = [args.loadgen, "-n", str(n), "--duration", duration,
                   *([] if option_value(extra, "--connect-rate") else ["--connect-rate", str(int(rate))]), "--seed", str(k + 1), "--label", f"loadgen-{k}", "--no-progress",
                   "--json", os.path.join(out, f"loadgen-{k}.json"),
                   "--progress-file", os.path.join(out, f"progress-{k}.json")] + promise
            for role, share in mix.items():
                cmd += [MIX_FLAGS[role], split_share(share, k, processes)]
            if processes > 1 and host.startswith("127.") and option_value(extra, "--first-source") is None:
                cmd += ["--first-source", f"127.0.0.{2 + 3 * k}", "--source-addresses", "3"]
            with open(os.path.join(out, f"loadgen-{k}.txt"), "w") as log:
                procs.append(Process(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), f"loadgen-{k}",
                                     time.monotonic() + seconds(duration) + 60))

        start, shown, last_detail = time.monotonic(), None, -10.0
        while any(p.popen.poll() is None for p in procs):
            time.sleep(1)
            for p in procs:
                if p.popen.poll() is None and time.monotonic() > p.deadline:
                    p.popen.kill()
            docs = [read_json(os.path.join(out, f"progress-{k}.json")) or {} for k in range(processes)]
            t = time.monotonic() - start
            # Per role every 5 s, or when a role's counts changed since they were last shown.
            per_role = progress_line(t, docs, mix, True).split("\n", 1)[-1]
            detail = per_role != shown and t - last_detail >= 5
            if detail:
                shown, last_detail = per_role, t
            print(progress_line(t, docs, mix, detail), flush=True)
        exits = [p.popen.wait() for p in procs]
    finally:
        stop(servers)

    docs = [read_json(os.path.join(out, f"loadgen-{k}.json")) for k in range(processes)]
    if all(d is None for d in docs):
        for k in range(processes):
            with open(os.path.join(out, f"loadgen-{k}.txt")) as f:
                sys.stderr.write(f.read()[-2000:])
        print("load: no loadgen process left a result", file=sys.stderr)
        return 3
    if processes == 1:
        with open(os.path.join(out, "loadgen-0.txt")) as f:
            sys.stdout.write(f.read())
    summary = merge(docs, exits)
    summary["target"] = where
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        print_summary(summary, where, f)
    print_summary(summary, where, sys.stdout)
    report.write(os.path.join(out, "report.html"), summary, [d for d in docs if d])
    print(f"report: {os.path.join(out, 'report.html')}")
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ValueError as e:  # a bad duration
        print(f"load: {e}", file=sys.stderr)
        sys.exit(2)
    except (RuntimeError, OSError) as e:  # a server that did not start, a program not found
        print(f"load: {e}", file=sys.stderr)
        sys.exit(3)
