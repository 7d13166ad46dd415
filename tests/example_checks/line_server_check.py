#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of the plain-Asio line servers examples/asio/line_server_*.cpp (one thread;
the first line must be "HELLO", answered "WELCOME"; "PING" when the peer is quiet, answered
"PONG"; every other line echoed). With the idle time T they use: login H = T/2, ping interval
P = T/8, pong time Q = T/4.

    line_server_check.py SERVER 1 [T_MS] [--bye]

Starts SERVER 0 T_MS (it prints "listening on port N" first) and runs, all at once over
loopback, three clients of each kind:
  - silent: connects, sends nothing: closed at H (the login deadline), never before;
  - trickling: a byte every T/10, never a newline: closed at H too (bytes do not extend it);
  - wrong login: "HI": closed at once;
  - overlong: logs in, then sends 8192 bytes without a newline: closed at once (a line is at
    most 4096 bytes), long before T;
  - idle: logs in, then only answers each PING with a PONG: every PING no sooner than P after
    its last byte (the heartbeat sent), at least 3 of them; closed at T (a PONG is a sign of
    life, not a message), never before;
  - dead: logs in, then never answers: a PING, then closed no sooner than P + Q after the
    login and well before T (the dead-peer verdict, not idleness);
  - active: logs in, sends a line every T/4 for 2.5 T, answering PINGs: each line back within
    SLACK, never closed.
With --bye (servers whose session parts with a line) the idle clients must get "BYE idle"
last, and the dead ones must not. Lower bounds take no slack (each is measured from before the
client's own send or connect); upper bounds take SLACK (2 s + T), but the dead clients' (T: a
margin of 5/8 T). The server must be alive at the end and its stderr clean; then, with one
client logged in and still connected, SIGTERM must end it with status 0 (it closes every
session: the client sees the end), its last line the counts: idle 3, dead peers
3, login timeouts 6. Exit 0 if every check passed.
"""

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import clients  # noqa: E402

SERVER, _, T, SLACK = clients.example_args(2.0)
BYE = "--bye" in sys.argv[4:]
H, P, Q = T / 2, T / 8, T / 4
tally = clients.Tally()
check = tally.check
seen = {}


def note(kind, took):
    lo, hi = seen.get(kind, (took, took))
    seen[kind] = (min(lo, took), max(hi, took))


async def readline(reader, limit):
    """A line without its newline; "" at EOF or a reset; None after `limit` s."""
    try:
        line = await asyncio.wait_for(reader.readline(), limit)
    except asyncio.TimeoutError:
        return None
    except OSError:
        return ""
    return line.decode(errors="replace").rstrip("\n")


async def connect(port):
    return await asyncio.wait_for(asyncio.open_connection(clients.LOOPBACK, port), SLACK)


async def login(port, label):
    """Connects and logs in: (reader, writer, the time just before HELLO was sent)."""
    reader, writer = await connect(port)
    t_hello = time.monotonic()
    writer.write(b"HELLO\n")
    await writer.drain()
    line = await readline(reader, SLACK)
    check(line == "WELCOME", f"{label}: {line!r} after HELLO, expected 'WELCOME'")
    return reader, writer, t_hello


async def silent(port, i):
    t0 = time.monotonic()
    s = await clients.raw_connect(port, SLACK)
    try:
        got = await clients.read_to_eof(s, H + SLACK)
        took = time.monotonic() - t0
        if check(got is not None, f"silent {i}: not closed within {H + SLACK:.1f}s"):
            note("silent", took)
            check(took >= H, f"silent {i}: closed after {took:.3f}s, before the login time {H}s")
            check(got == b"", f"silent {i}: got {got[:40]!r}")
    finally:
        s.close()


async def trickle(port, i):
    took, got = await clients.trickle_until_closed(port, b"H", T / 10, H + SLACK)
    if check(got is not None, f"trickle {i}: not closed within {H + SLACK:.1f}s"):
        note("trickle", took)
        check(took >= H, f"trickle {i}: closed after {took:.3f}s, before the login time {H}s")


async def wrong_login(port, i):
    reader, writer = await connect(port)
    try:
        t0 = time.monotonic()
        writer.write(b"HI\n")
        await writer.drain()
        line = await readline(reader, SLACK)
        check(line == "", f"wrong login {i}: {line!r} after HI, expected the end (within {SLACK:.1f}s)")
        note("wrong login", time.monotonic() - t0)
    finally:
        writer.close()


async def overlong(port, i):
    reader, writer, _ = await login(port, f"overlong {i}")
    try:
        t0 = time.monotonic()
        writer.write(b"x" * 8192)  # no newline: past the servers' 4096-byte line
        await writer.drain()
        line = await readline(reader, T / 2)
        check(line == "", f"overlong {i}: {line!r} within {T / 2}s of an 8192-byte line, expected the end")
        note("overlong", time.monotonic() - t0)
    finally:
        writer.close()


async def idle(port, i):
    reader, writer, t_hello = await login(port, f"idle {i}")
    t_last, pings, last = t_hello, 0, None
    try:
        while True:
            line = await readline(reader, max(0.01, t_hello + T + SLACK - time.monotonic()))
            now = time.monotonic()
            if line is None:
                check(False, f"idle {i}: not closed within {T + SLACK:.1f}s of its login")
                return
            if line == "":
                break
            if line == "PING":
                pings += 1
                check(now - t_last >= P, f"idle {i}: PING {now - t_last:.3f}s after its last byte, before P = {P}s")
                t_last = time.monotonic()
                writer.write(b"PONG\n")
                await writer.drain()
            else:
                check(BYE and line == "BYE idle", f"idle {i}: got {line!r}")
            last = line
        took = time.monotonic() - t_hello
        note("idle", took)
        check(took >= T, f"idle {i}: closed {took:.3f}s after its login, before the idle time {T}s")
        check(pings >= 3, f"idle {i}: only {pings} PINGs in {took:.3f}s (P = {P}s)")
        if BYE:
            check(last == "BYE idle", f"idle {i}: the last line was {last!r}, expected 'BYE idle'")
    finally:
        writer.close()


async def dead(port, i):
    reader, writer, t_hello = await login(port, f"dead {i}")
    pinged = None
    try:
        while True:
            line = await readline(reader, max(0.01, t_hello + T - time.monotonic()))
            now = time.monotonic() - t_hello
            if line is None:
                check(False, f"dead {i}: not dropped within the idle time {T}s of its login")
                return
            if line == "":
                break
            if line == "PING" and pinged is None:
                pinged = now
                check(now >= P, f"dead {i}: PING {now:.3f}s after its login, before P = {P}s")
            else:
                check(False, f"dead {i}: got {line!r} {now:.3f}s after its login")
        took = time.monotonic() - t_hello
        note("dead", took)
        check(pinged is not None, f"dead {i}: dropped {took:.3f}s after its login without a PING")
        check(took >= P + Q, f"dead {i}: dropped {took:.3f}s after its login, before P + Q = {P + Q}s")
    finally:
        writer.close()


async def active(port, i):
    reader, writer, _ = await login(port, f"active {i}")
    lines = asyncio.Queue()

    async def answer_pings():  # at once, also while the client waits to send its next line
        while True:
            line = await readline(reader, 3 * T + SLACK)
            if line == "PING":
                writer.write(b"PONG\n")
                continue
            await lines.put(line)
            if not line:
                return

    answering = asyncio.ensure_future(answer_pings())
    try:
        end = time.monotonic() + 2.5 * T
        k = 0
        while time.monotonic() < end:
            t_sent = time.monotonic()
            mine = f"line {i} {k}"
            writer.write(mine.encode() + b"\n")
            await writer.drain()
            try:
                line = await asyncio.wait_for(lines.get(), SLACK)
            except asyncio.TimeoutError:
                line = None
            if not check(line, f"active {i}: line {k} not back within {SLACK}s (closed: {line == ''})"):
                return
            if not check(line == mine, f"active {i}: got {line!r}, expected {mine!r}"):
                return
            k += 1
            await asyncio.sleep(max(0.0, t_sent + T / 4 - time.monotonic()))
        check(k >= 8, f"active {i}: only {k} lines echoed")
    finally:
        answering.cancel()
        writer.close()


async def main(port):
    named = []
    for kind in (silent, trickle, wrong_login, overlong, idle, dead, active):
        named += [(f"{kind.__name__} {i}", kind(port, i)) for i in range(3)]
    for name, e in await clients.failed_tasks(named):
        check(False, f"{name}: {e!r}")


def run():
    proc, port = clients.start_announcing([SERVER, "0", str(int(T * 1000))])
    try:
        if port is None:
            return 1
        print(f"server on port {port}, T {T}s (login {H}s, ping {P}s, pong {Q}s)", flush=True)
        asyncio.run(main(port))
        check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
        if proc.poll() is None:
            # One session still open at SIGTERM: the server must end it, then exit.
            with socket.create_connection((clients.LOOPBACK, port), timeout=SLACK) as lingering:
                lingering.sendall(b"HELLO\n")
                check(lingering.recv(8) == b"WELCOME\n", "lingering: no WELCOME")
                os.kill(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    check(False, "server still running 10 s after SIGTERM")
                got = b""
                try:
                    while chunk := lingering.recv(100):
                        got += chunk
                except ConnectionResetError:
                    pass
                except socket.timeout:
                    check(False, f"lingering: no end within {SLACK}s of SIGTERM")
                check(got.replace(b"PING\n", b"") == b"", f"lingering: got {got!r}, expected the end (PINGs at most)")
        if proc.returncode is not None:
            check(proc.returncode == 0, f"server exited with {proc.returncode} after SIGTERM")
            counts = proc.stdout.read().strip()
            print(f"server: {counts}", flush=True)
            for name, n in (("idle", 3), ("dead peers", 3), ("login timeouts", 6)):
                check(f"{name} {n}," in counts + ",", f"the server's counts {counts!r} lack '{name} {n}'")
    finally:
        _, err = clients.stop_by_sigterm(proc)
    tally.check_stderr_clean(err)
    for kind, (lo, hi) in sorted(seen.items()):
        print(f"  {kind:12} closed after {lo:.3f} .. {hi:.3f} s", flush=True)
    return tally.verdict("line_server_check", "server stderr, last lines:\n" + "\n".join(err.splitlines()[-30:]))


if __name__ == "__main__":
    sys.exit(run())
