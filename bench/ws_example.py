#!/usr/bin/python3
# Beast's websocket_server_async (Beast 1.81's example/websocket/server/async as the doc package
# ships it, built as websocket_server_async_beast: websocket::stream<beast::tcp_stream>,
# timeout::suggested(server)) against its idlewheel conversion (examples/beast/websocket_server_async.patch
# applied, built as websocket_server_async: the same timeouts through
# idlewheel::beast::set_option on idlewheel::beast::tcp_stream and a wheel_pool): issue 35's
# measures 1 and 2. Both servers are started as `<bin> 127.0.0.1 <port> <threads>` (the
# conversion's optional <idle-ms> is not given: both run timeout::suggested(server), handshake
# 30 s, idle 300 s, pings on), each round on a freshly started server, rounds alternated
# (A B, B A, ...).
#
# Usage: bench/ws_example.py timers --original BIN --converted BIN [--connections N]
#                                   [--messages M] [--threads T] [--out DIR]
#          BIN built with -DBOOST_ASIO_ENABLE_HANDLER_TRACKING (Asio then writes a line per
#          asynchronous operation to stderr: `@asio|<time>|<parent>*<id>|deadline_timer@<impl>
#          .async_wait`; every steady_timer is a "deadline_timer" there). N connections (200) at
#          once, each does the handshake, then M echoes (10) one after another; all stay open
#          until all are done. Run once with 0 messages and once with M, per server. Counts
#          from the log: distinct timer objects (by implementation address) that did an
#          async_wait, async_waits per connection, and per message ((waits with M - waits with
#          0) / (N * M)).
#        bench/ws_example.py load --original BIN --converted BIN [--connections N] [--rounds R]
#                                 [--rate R] [--duration S] [--threads T] [--size B] [--out DIR]
#                                 [--idle I] [--nice N] [--quick]
#          BIN optimised builds. Per round and server: RSS (VmRSS of /proc/PID/status) after
#          the start, with 0 connections; N (5 000) connections handshaken and idle, RSS again
#          (bytes per connection = the RSS difference / N; taken after 1 s, then --idle I (5) s of
#          nothing sent, whose server CPU is reported too); then every connection sends a B-byte
#          (64) binary message every 1/R s (R = 1 per connection per second, each on a phase of
#          its own, one in flight; a late one is sent at once) for S (10) s and reads its echo;
#          server CPU per echoed message = utime + stime (/proc/PID/stat) over that window /
#          echoes received. 3 rounds per server by default; --quick: 1 round, 500 connections,
#          3 s.
# --nice N: run (client and servers) at that niceness in a scheduler autogroup of its own, as
# wrk_http.sh --nice (e.g. -10 as root on a shared machine).
# The client is this Python process (python3-websockets, asyncio, one connection per
# coroutine); the soft descriptor limit is raised to the hard one. The load average is printed
# before and after.
import argparse
import asyncio
import os
import random
import re
import resource
import socket
import statistics
import subprocess
import sys
import time

import websockets

TCK = os.sysconf("SC_CLK_TCK")


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime, stime (fields 14 and 15)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_server(binary, threads, stderr):
    port = free_port()
    proc = subprocess.Popen([binary, "127.0.0.1", str(port), str(threads)], stdout=subprocess.DEVNULL, stderr=stderr)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{binary} did not listen on {port}")


def stop_server(proc):
    proc.kill()
    proc.wait()


async def connect_all(port, n, concurrency=100):
    sem = asyncio.Semaphore(concurrency)

    async def one(_):
        async with sem:
            return await websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None, max_size=None,
                                            compression=None, open_timeout=60, close_timeout=1)
    return await asyncio.gather(*[one(i) for i in range(n)])


def abort_all(conns):
    for ws in conns:
        ws.transport.abort()


# ---- measure 1: timers armed (handler tracking) ----

TIMER_WAIT = re.compile(r"^@asio\|[0-9.]+\|[0-9]+\*([0-9]+)\|deadline_timer@(0x[0-9a-f]+|\(nil\))\.async_wait$")


def parse_tracking(path):
    waits, timers = 0, {}
    for line in open(path, errors="replace"):
        m = TIMER_WAIT.match(line.rstrip("\n"))
        if m:
            waits += 1
            timers[m.group(2)] = timers.get(m.group(2), 0) + 1
    return waits, timers


async def tracking_client(port, n, messages, payload):
    conns = await connect_all(port, n)

    async def echo(ws):
        for _ in range(messages):
            await ws.send(payload)
            got = await ws.recv()
            assert got == payload
    await asyncio.gather(*[echo(ws) for ws in conns])
    await asyncio.sleep(0.5)  # let the servers' last operations be logged
    return conns


def timers(a):
    os.makedirs(a.out, exist_ok=True)
    payload = os.urandom(a.size)
    results = {}
    order = [("original", a.original), ("converted", a.converted)]
    for i, m in enumerate([0, a.messages]):
        for side, binary in (order if i % 2 == 0 else order[::-1]):
            log = os.path.join(a.out, f"tracking-{side}-{m}.log")
            with open(log, "w") as err:
                proc, port = start_server(binary, a.threads, err)
                time.sleep(0.3)
                conns = asyncio.run(tracking_client(port, a.connections, m, payload))
                stop_server(proc)
                abort_all(conns)
            waits, tmap = parse_tracking(log)
            results[(side, m)] = (waits, tmap)
            print(f"{side} messages={m}: async_waits {waits}, distinct timers {len(tmap)}, log {log}", flush=True)
    n, m = a.connections, a.messages
    print(f"\n{n} connections; the second run {m} echoes per connection")
    print("| | Beast's websocket_server_async | idlewheel conversion |")
    print("|---|---:|---:|")
    rows = []
    for side in ("original", "converted"):
        w0, t0 = results[(side, 0)]
        wm, tm = results[(side, m)]
        rows.append((len(t0), len(tm), w0, wm, w0 / n, wm / n, (wm - w0) / (n * m) if m else float("nan"),
                     max(tm.values()) if tm else 0))
    o, c = rows
    print(f"| distinct timer objects that waited, handshake only | {o[0]:,} | {c[0]:,} |")
    print(f"| distinct timer objects that waited, {m} echoes each | {o[1]:,} | {c[1]:,} |")
    print(f"| async_waits, handshake only | {o[2]:,} | {c[2]:,} |")
    print(f"| async_waits, {m} echoes each | {o[3]:,} | {c[3]:,} |")
    print(f"| async_waits per connection, handshake only | {o[4]:.2f} | {c[4]:.2f} |")
    print(f"| async_waits per connection, {m} echoes each | {o[5]:.2f} | {c[5]:.2f} |")
    print(f"| async_waits per echoed message | {o[6]:.2f} | {c[6]:.2f} |")
    print(f"| most async_waits on one timer, {m} echoes each | {o[7]:,} | {c[7]:,} |")


# ---- measures 1 and 2: bytes per connection, CPU per echoed message ----

async def load_client(proc, port, a, payload):
    pid = proc.pid
    await asyncio.sleep(1.0)
    rss0 = rss_kib(pid)
    t_conn = time.monotonic()
    conns = await connect_all(port, a.connections)
    t_conn = time.monotonic() - t_conn
    await asyncio.sleep(1.0)
    i0 = cpu_ticks(pid)
    await asyncio.sleep(a.idle)
    idle_ticks = cpu_ticks(pid) - i0
    rss1 = rss_kib(pid)
    period = 1.0 / a.rate
    echoed = 0
    late = 0
    c0 = cpu_ticks(pid)
    start = time.monotonic() + 0.1
    end = start + a.duration

    async def run(ws):
        nonlocal echoed, late
        nxt = start + random.random() * period
        while nxt < end:
            d = nxt - time.monotonic()
            if d > 0:
                await asyncio.sleep(d)
            elif d < -period:
                late += 1
            await ws.send(payload)
            await ws.recv()
            echoed += 1
            nxt += period
    await asyncio.gather(*[run(ws) for ws in conns])
    took = time.monotonic() - start
    c1 = cpu_ticks(pid)
    rss2 = rss_kib(pid)
    return conns, rss0, rss1, rss2, idle_ticks, c1 - c0, echoed, took, late, t_conn


def load(a):
    os.makedirs(a.out, exist_ok=True)
    payload = os.urandom(a.size)
    rows = []
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}")
    print("side round rss0_kib rss_connected_kib rss_after_kib idle_cpu_ticks cpu_ticks clk_tck echoed seconds late connect_s load_before load_after")
    for r in range(1, a.rounds + 1):
        order = [("original", a.original), ("converted", a.converted)]
        for side, binary in (order if r % 2 == 1 else order[::-1]):
            l0 = loadavg()
            with open(os.path.join(a.out, f"{side}-{r}.stderr"), "w") as err:
                proc, port = start_server(binary, a.threads, err)
                conns, rss0, rss1, rss2, iticks, ticks, echoed, took, late, tconn = asyncio.run(load_client(proc, port, a, payload))
                stop_server(proc)
                abort_all(conns)
            l1 = loadavg()
            row = (side, r, rss0, rss1, rss2, iticks, ticks, TCK, echoed, round(took, 2), late, round(tconn, 2), l0, l1)
            rows.append(row)
            print(" ".join(map(str, row)), flush=True)
            time.sleep(1)
    print(f"load average at end: {open('/proc/loadavg').read().split()[:3]}")
    with open(os.path.join(a.out, "rounds.txt"), "w") as f:
        for row in rows:
            f.write(" ".join(map(str, row)) + "\n")
    n = a.connections
    data = {}
    for side, r, rss0, rss1, rss2, iticks, ticks, tck, echoed, took, *_ in rows:
        d = data.setdefault(side, {"bpc": [], "us": [], "rate": [], "bpc_after": [], "idle": []})
        d["idle"].append(iticks / tck)
        d["bpc"].append((rss1 - rss0) * 1024 / n)
        d["bpc_after"].append((rss2 - rss0) * 1024 / n)
        d["us"].append(ticks / tck / echoed * 1e6)
        d["rate"].append(echoed / took)
    med = {s: {k: statistics.median(v) for k, v in d.items()} for s, d in data.items()}
    rng = lambda s, k, f: f"{f.format(min(data[s][k]))}-{f.format(max(data[s][k]))}"
    o, c = med["original"], med["converted"]
    print(f"\nmedian of {len(data['original']['us'])} rounds per side (min-max); {n} connections, "
          f"{a.threads} server threads, {a.rate} message(s) per connection per second for {a.duration} s")
    print("| | Beast's websocket_server_async | idlewheel conversion | conversion / Beast |")
    print("|---|---:|---:|---:|")
    print(f"| RSS per connection, handshaken and idle (bytes) | {o['bpc']:,.0f} ({rng('original','bpc','{:,.0f}')}) | {c['bpc']:,.0f} ({rng('converted','bpc','{:,.0f}')}) | {c['bpc']/o['bpc']:.3f} |")
    print(f"| RSS per connection after the messages (bytes) | {o['bpc_after']:,.0f} ({rng('original','bpc_after','{:,.0f}')}) | {c['bpc_after']:,.0f} ({rng('converted','bpc_after','{:,.0f}')}) | {c['bpc_after']/o['bpc_after']:.3f} |")
    print(f"| server CPU per echoed message (µs) | {o['us']:.2f} ({rng('original','us','{:.2f}')}) | {c['us']:.2f} ({rng('converted','us','{:.2f}')}) | {c['us']/o['us']:.3f} |")
    print(f"| server CPU while all are idle, {a.idle:g} s (s) | {o['idle']:.2f} ({rng('original','idle','{:.2f}')}) | {c['idle']:.2f} ({rng('converted','idle','{:.2f}')}) | |")
    pair = []
    for r in sorted({row[1] for row in rows}):
        by = {row[0]: row for row in rows if row[1] == r}
        pair.append(by["converted"][6] / by["original"][6])
    print(f"| server CPU per echoed message, conversion / Beast within each round: median (min-max) | | | "
          f"{statistics.median(pair):.3f} ({min(pair):.3f}-{max(pair):.3f}) |")
    print(f"| echoes per second (achieved) | {o['rate']:,.0f} ({rng('original','rate','{:,.0f}')}) | {c['rate']:,.0f} ({rng('converted','rate','{:,.0f}')}) | {c['rate']/o['rate']:.3f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("what", choices=["timers", "load"])
    p.add_argument("--original", required=True)
    p.add_argument("--converted", required=True)
    p.add_argument("--connections", type=int)
    p.add_argument("--messages", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rate", type=float, default=1.0)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--idle", type=float, default=5.0)
    p.add_argument("--out")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--nice", type=int, default=0)
    a = p.parse_args()
    if a.nice and not os.environ.get("IDLEWHEEL_BENCH_SESSION"):
        # As wrk_http.sh --nice: a session of its own (a scheduler autogroup), at that niceness.
        os.environ["IDLEWHEEL_BENCH_SESSION"] = "1"
        os.execvp("setsid", ["setsid", "-w", sys.executable] + sys.argv)
    if a.nice:
        try:
            open("/proc/self/autogroup", "w").write(str(a.nice))
        except OSError:
            print("ws_example.py: could not set the autogroup niceness", file=sys.stderr)
        try:
            os.setpriority(os.PRIO_PROCESS, 0, a.nice)
        except OSError:
            print("ws_example.py: could not renice", file=sys.stderr)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    a.out = a.out or os.path.join(root, "build", f"ws_example_{a.what}")
    if a.connections is None:
        a.connections = 200 if a.what == "timers" else 5000
    if a.quick:
        a.rounds, a.duration, a.idle = 1, 3.0, 1.0
        a.connections = min(a.connections, 500)
    print(f"command: bench/ws_example.py {' '.join(sys.argv[1:])}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; nproc {os.cpu_count()}; niceness {os.nice(0)}; "
          f"descriptors {resource.getrlimit(resource.RLIMIT_NOFILE)}; load average {loadavg()}")
    (timers if a.what == "timers" else load)(a)
    print(f"load average at the end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
