#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of examples/asio/timeouts_server.patch applied: Asio's own
example/cpp11/timeouts/server.cpp (a newline-delimited chat over TCP, one io_context on one
thread; a deadline for each line read and for each line written, 30 s each, and an empty line,
the client's heartbeat, answered with one when nothing else is queued), its two deadline timers
per connection and their actors replaced by idlewheel::operation_deadline on one wheel_timer.

    timeouts_server_check.py SERVER 1 [T_MS]

Starts SERVER 0 127.0.0.1 UDP_PORT T_MS (the test's substitutions,
tests/example_checks/upstream_test_main.hpp: the 30 s become T; port 0, the port read from its
"listening on port N" line; UDP_PORT a socket of this check's, which receives the broadcast
copy of each message) and runs, all at once over loopback:
  - silent clients (connect, send nothing): closed by the server at T, never before;
  - trickling clients (a byte every T/10, never a newline): the read deadline covers the whole
    line, so closed at T too, never before;
  - heartbeat clients (an empty line every T/4 for 2.5 T): a line back within SLACK each time
    (the heartbeat answered on time), never closed;
  - chat clients (a message every T/4 for 2.5 T): each message comes back (the channel delivers
    it to every session), never closed;
  - churn: workers connecting, sending a heartbeat, reading it back, closing, as fast as they can.
Lower bounds take no slack (never early: each is measured from before the client connects);
upper bounds take SLACK. The server must be alive at the end, its stderr free of sanitizer
reports; it is then stopped with SIGTERM. Exit 0 if every check passed.
"""

import asyncio
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import clients  # noqa: E402

SERVER, _, T, SLACK = clients.example_args(1.0)
tally = clients.Tally()
check = tally.check
seen = {}


def cut(kind, took, got):
    check(got is not None, f"{kind}: not closed within {T + SLACK:.1f}s")
    if got is None:
        return
    lo, hi = seen.get(kind, (took, took))
    seen[kind] = (min(lo, took), max(hi, took))
    check(took >= T, f"{kind}: closed after {took:.3f}s, before the deadline {T}s")
    check(took <= T + SLACK, f"{kind}: closed only after {took:.3f}s")


async def silent(port, i):
    t0 = time.monotonic()
    s = await clients.raw_connect(port, SLACK)
    try:
        got = await clients.read_to_eof(s, T + SLACK)
        cut("silent", time.monotonic() - t0, got)
    finally:
        s.close()


async def trickle(port, i):
    took, got = await clients.trickle_until_closed(port, b"x", T / 10, T + SLACK)
    cut("trickle", took, got)


async def open_lines(port):
    return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), SLACK)


async def heartbeat(port, i):
    reader, writer = await open_lines(port)
    try:
        end = time.monotonic() + 2.5 * T
        while time.monotonic() < end:
            t_sent = time.monotonic()
            writer.write(b"\n")
            await writer.drain()
            try:
                line = await asyncio.wait_for(reader.readline(), SLACK)
            except asyncio.TimeoutError:
                line = None
            if not check(line, f"heartbeat {i}: no line back within {SLACK}s (closed: {line == b''})"):
                return
            check(time.monotonic() - t_sent <= SLACK, f"heartbeat {i}: answered after {time.monotonic() - t_sent:.3f}s")
            await asyncio.sleep(max(0.0, t_sent + T / 4 - time.monotonic()))
    finally:
        writer.close()


async def chat(port, i):
    reader, writer = await open_lines(port)
    try:
        end = time.monotonic() + 2.5 * T
        k = 0
        while time.monotonic() < end:
            t_sent = time.monotonic()
            mine = f"chat {i} {k}".encode()
            writer.write(mine + b"\n")
            await writer.drain()
            deadline = time.monotonic() + SLACK
            while True:
                try:
                    line = await asyncio.wait_for(reader.readline(), max(0.01, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    line = None
                if not check(line, f"chat {i}: message {k} not back within {SLACK}s (closed: {line == b''})"):
                    return
                if line.rstrip(b"\n") == mine:
                    break
            k += 1
            await asyncio.sleep(max(0.0, t_sent + T / 4 - time.monotonic()))
    finally:
        writer.close()


async def churn(port, i, stats, until):
    while time.monotonic() < until:
        try:
            reader, writer = await open_lines(port)
            writer.write(b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), SLACK)
            writer.close()
            if line == b"\n":
                stats["answered"] += 1
        except (OSError, asyncio.TimeoutError):
            stats["failed"] += 1


async def main(port):
    stats = {"answered": 0, "failed": 0}
    until = time.monotonic() + 2 * T
    named = [(f"silent {i}", silent(port, i)) for i in range(3)]
    named += [(f"trickle {i}", trickle(port, i)) for i in range(3)]
    named += [(f"heartbeat {i}", heartbeat(port, i)) for i in range(3)]
    named += [(f"chat {i}", chat(port, i)) for i in range(2)]
    named += [(f"churn {i}", churn(port, i, stats, until)) for i in range(4)]
    for name, e in await clients.failed_tasks(named):
        check(False, f"{name}: {e!r}")
    print(f"churn: {stats}", flush=True)
    check(stats["answered"] >= 30, f"churn: only {stats['answered']} heartbeats answered")


def run():
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # the broadcast copies land here
    udp.bind(("127.0.0.1", 0))
    proc, port = clients.start_announcing([SERVER, "0", "127.0.0.1", str(udp.getsockname()[1]), str(int(T * 1000))])
    try:
        if port is None:
            return 1
        print(f"server on port {port}, T {T}s", flush=True)
        asyncio.run(main(port))
        check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
    finally:
        _, err = clients.stop_by_sigterm(proc)
        udp.close()
    tally.check_stderr_clean(err)
    for kind, (lo, hi) in sorted(seen.items()):
        print(f"  {kind:10} closed after {lo:.3f} .. {hi:.3f} s (T {T}s)", flush=True)
    return tally.verdict("timeouts_server_check", "server stderr, last lines:\n" + "\n".join(err.splitlines()[-30:]))


if __name__ == "__main__":
    sys.exit(run())
