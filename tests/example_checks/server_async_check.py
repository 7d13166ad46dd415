#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of examples/websocket_server_async (Beast's async WebSocket server, one
io_context on N threads, a strand per session, liveness on an idlewheel::wheel_pool).

    server_async_check.py SERVER THREADS [IDLE_MS]

Starts SERVER 127.0.0.1 0 THREADS IDLE_MS and runs, all at once over loopback:
  - active clients: a message every IDLE/4 for 2.5 x IDLE; every echo comes back, never closed;
  - idle clients: handshake, then only read (pings are answered by the client library): closed
    by the server with 1000 "idle timeout", never before IDLE after the connect;
  - ping-silent clients (a dead peer): handshake by hand, then never read, so no pong: dropped
    (no close frame) after ping interval + pong timeout (2/3 IDLE), before IDLE;
  - slowloris clients: the HTTP upgrade request a byte every 50 ms: dropped at the handshake
    deadline (IDLE/2), never answered 101;
  - churn: workers connecting, echoing one message, closing, as fast as they can, plus peers
    that stop mid-handshake and peers that reset right after the handshake.
Each outcome is asserted; the server must still be alive at the end (no crash, no abort, no
ThreadSanitizer report: with halt_on_error a report ends it), then it is stopped with SIGTERM.
Exit 0 if every check passed.
"""

import asyncio
import base64
import os
import signal
import socket
import subprocess
import sys
import time

import websockets

SERVER = sys.argv[1]
THREADS = int(sys.argv[2])
IDLE = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 1.5
SLACK = 2.0 + IDLE  # upper bounds: a loaded 2-core machine, possibly TSan (never a lower bound)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


def upgrade_request(port):
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


async def active(port, i):
    async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None, max_size=None) as ws:
        end = time.monotonic() + 2.5 * IDLE
        n = 0
        while time.monotonic() < end:
            msg = f"active {i} {n}"
            await ws.send(msg)
            got = await asyncio.wait_for(ws.recv(), SLACK)
            check(got == msg, f"active {i}: echo {got!r} != {msg!r}")
            n += 1
            await asyncio.sleep(IDLE / 4)
        check(n >= 8, f"active {i}: only {n} echoes")


async def idle(port, i):
    t0 = time.monotonic()
    async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None) as ws:
        try:
            await asyncio.wait_for(ws.recv(), IDLE + SLACK)
            check(False, f"idle {i}: got a message")
        except websockets.ConnectionClosed as e:
            took = time.monotonic() - t0
            code = e.rcvd.code if e.rcvd else None
            reason = e.rcvd.reason if e.rcvd else None
            check(code == 1000 and reason == "idle timeout", f"idle {i}: closed with {code} {reason!r}")
            check(took >= IDLE, f"idle {i}: closed after {took:.3f}s, before the idle timeout {IDLE}s")
        except asyncio.TimeoutError:
            check(False, f"idle {i}: not closed within {IDLE + SLACK:.1f}s")


async def raw_connect(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    await asyncio.wait_for(asyncio.get_running_loop().sock_connect(s, ("127.0.0.1", port)), SLACK)
    return s


async def read_http_response(loop, s, limit):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await asyncio.wait_for(loop.sock_recv(s, 4096), limit)
        if not chunk:
            break
        data += chunk
    return data


async def read_to_eof(loop, s, limit):
    """Everything until EOF or reset; None if the peer did not end the connection in time."""
    data = b""
    try:
        while True:
            chunk = await asyncio.wait_for(loop.sock_recv(s, 65536), limit)
            if not chunk:
                return data
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        return data
    except asyncio.TimeoutError:
        return None


async def ping_silent(port, i):
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    s = await raw_connect(port)
    try:
        await loop.sock_sendall(s, upgrade_request(port))
        head = await read_http_response(loop, s, SLACK)
        check(head.startswith(b"HTTP/1.1 101"), f"ping-silent {i}: no 101: {head[:40]!r}")
        # Never read again before 0.6 IDLE: the ping waits unread, no pong goes back. Still open then?
        await asyncio.sleep(max(0.0, t0 + 0.6 * IDLE - time.monotonic()))
        try:
            peek = s.recv(65536, socket.MSG_PEEK)
            check(peek != b"", f"ping-silent {i}: closed before ping interval + pong timeout")
        except BlockingIOError:
            pass  # nothing yet: open
        rest = await read_to_eof(loop, s, IDLE + SLACK)
        took = time.monotonic() - t0
        check(rest is not None, f"ping-silent {i}: not dropped within {IDLE + SLACK:.1f}s")
        if rest is not None:
            check(rest[:1] == b"\x89", f"ping-silent {i}: no ping before the drop: {rest[:8]!r}")
            check(b"\x88" not in rest, f"ping-silent {i}: got a close frame, expected a drop: {rest[:16]!r}")
            check(took >= 2 * IDLE / 3, f"ping-silent {i}: dropped after {took:.3f}s, before 2/3 of {IDLE}s")
    finally:
        s.close()


async def slowloris(port, i):
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    s = await raw_connect(port)
    req = upgrade_request(port)
    try:
        for b in req[:-4]:  # never the end of the request
            try:
                await loop.sock_sendall(s, bytes([b]))
            except (ConnectionResetError, BrokenPipeError):
                break
            try:
                if s.recv(1, socket.MSG_PEEK) == b"":
                    break  # closed by the server
            except BlockingIOError:
                pass
            except ConnectionResetError:
                break
            await asyncio.sleep(0.05)
            if time.monotonic() - t0 > IDLE / 2 + SLACK:
                break
        rest = await read_to_eof(loop, s, SLACK)
        took = time.monotonic() - t0
        check(rest is not None and b"101" not in (rest or b""), f"slowloris {i}: not dropped, or answered: {rest!r}")
        check(took >= IDLE / 2, f"slowloris {i}: dropped after {took:.3f}s, before the handshake deadline {IDLE / 2}s")
        check(took <= IDLE / 2 + SLACK, f"slowloris {i}: dropped only after {took:.3f}s")
    finally:
        s.close()


async def churn(port, i, stats, until):
    loop = asyncio.get_running_loop()
    n = 0
    while time.monotonic() < until:
        await asyncio.sleep(0.005)  # churn, not a flood: a sanitizer build's server keeps up
        kind = n % 5
        n += 1
        if kind == 3:  # stops mid-handshake
            s = await raw_connect(port)
            await loop.sock_sendall(s, upgrade_request(port)[:40])
            s.close()
            stats["aborted"] += 1
            continue
        if kind == 4:  # reset right after the handshake
            s = await raw_connect(port)
            await loop.sock_sendall(s, upgrade_request(port))
            await read_http_response(loop, s, SLACK)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
            stats["reset"] += 1
            continue
        async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None) as ws:
            msg = f"churn {i} {n}"
            await ws.send(msg)
            got = await asyncio.wait_for(ws.recv(), SLACK)
            check(got == msg, f"churn {i}: echo {got!r}")
            stats["echoed"] += 1


async def main(port):
    stats = {"echoed": 0, "aborted": 0, "reset": 0}
    until = time.monotonic() + 2.5 * IDLE
    named = [(f"active {i}", active(port, i)) for i in range(10)]
    named += [(f"idle {i}", idle(port, i)) for i in range(10)]
    named += [(f"ping-silent {i}", ping_silent(port, i)) for i in range(5)]
    named += [(f"slowloris {i}", slowloris(port, i)) for i in range(5)]
    named += [(f"churn {i}", churn(port, i, stats, until)) for i in range(8)]
    results = await asyncio.gather(*(c for _, c in named), return_exceptions=True)
    for (name, _), r in zip(named, results):
        if isinstance(r, BaseException):
            check(False, f"{name}: raised {type(r).__name__}: {r!r} after {time.monotonic() - until + 2.5 * IDLE:.1f}s")
    print(f"churn: {stats}", flush=True)
    check(stats["echoed"] >= 30, f"churn: only {stats['echoed']} echoed sessions")


def run():
    env = dict(os.environ)
    env.setdefault("TSAN_OPTIONS", "halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4")
    proc = subprocess.Popen([SERVER, "127.0.0.1", "0", str(THREADS), str(int(IDLE * 1000))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = proc.stdout.readline()
        while line and not line.startswith("listening on port ") and os.environ.get("SERVER_ASYNC_CHECK_SKIP_NOISE"):
            line = proc.stdout.readline()  # a debugger's own lines before the server's
        if not line.startswith("listening on port "):
            print("server did not start:", line, proc.stderr.read() if proc.poll() is not None else "", flush=True)
            return 1
        port = int(line.split()[-1])
        print(f"server on port {port}, {THREADS} threads, idle {IDLE}s", flush=True)
        asyncio.run(main(port))
        check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    for marker in ("ThreadSanitizer", "AddressSanitizer", "runtime error", "idlewheel:"):
        if marker in err:
            check(False, f"server stderr has {marker!r}")
            print(err[-6000:], flush=True)
            break
    if failures:
        print("server stderr, last lines:\n" + "\n".join(err.splitlines()[-30:]), flush=True)
        print(f"server_async_check: {len(failures)} checks failed", flush=True)
        return 1
    print("server_async_check: every check passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run())
