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
import os
import socket
import sys
import time

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import clients  # noqa: E402

SERVER, THREADS, IDLE, SLACK = clients.example_args(1.5)  # SLACK: upper bounds only (a loaded 2-core machine, TSan)
tally = clients.Tally()
check = tally.check


async def active(port, i):
    async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None, max_size=None) as ws:
        await clients.keep_echoing(ws, f"active {i}", f"active {i}", IDLE / 4, 2.5 * IDLE, SLACK, check)


async def idle(port, i):
    t0 = time.monotonic()
    async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None) as ws:
        await clients.expect_idle_close(ws, f"idle {i}", t0, IDLE, IDLE + SLACK, check)


async def read_http_response(loop, s, limit):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await asyncio.wait_for(loop.sock_recv(s, 4096), limit)
        if not chunk:
            break
        data += chunk
    return data


async def ping_silent(port, i):
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    s = await clients.raw_connect(port, SLACK)
    try:
        await loop.sock_sendall(s, clients.upgrade_request(f"127.0.0.1:{port}"))
        head = await read_http_response(loop, s, SLACK)
        check(head.startswith(b"HTTP/1.1 101"), f"ping-silent {i}: no 101: {head[:40]!r}")
        # Never read again before 0.6 IDLE: the ping waits unread, no pong goes back. Still open then?
        await asyncio.sleep(max(0.0, t0 + 0.6 * IDLE - time.monotonic()))
        try:
            peek = s.recv(65536, socket.MSG_PEEK)
            check(peek != b"", f"ping-silent {i}: closed before ping interval + pong timeout")
        except BlockingIOError:
            pass  # nothing yet: open
        rest = await clients.read_to_eof(s, IDLE + SLACK)
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
    s = await clients.raw_connect(port, SLACK)
    req = clients.upgrade_request(f"127.0.0.1:{port}")
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
        rest = await clients.read_to_eof(s, SLACK)
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
            s = await clients.raw_connect(port, SLACK)
            await loop.sock_sendall(s, clients.upgrade_request(f"127.0.0.1:{port}")[:40])
            s.close()
            stats["aborted"] += 1
            continue
        if kind == 4:  # reset right after the handshake
            s = await clients.raw_connect(port, SLACK)
            await loop.sock_sendall(s, clients.upgrade_request(f"127.0.0.1:{port}"))
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
    for name, r in await clients.failed_tasks(named):
        check(False, f"{name}: raised {type(r).__name__}: {r!r} after {time.monotonic() - until + 2.5 * IDLE:.1f}s")
    print(f"churn: {stats}", flush=True)
    check(stats["echoed"] >= 30, f"churn: only {stats['echoed']} echoed sessions")


def run():
    proc, port = clients.start_announcing([SERVER, "127.0.0.1", "0", str(THREADS), str(int(IDLE * 1000))],
                                          skip_noise=bool(os.environ.get("SERVER_ASYNC_CHECK_SKIP_NOISE")))
    try:
        if port is None:
            return 1
        print(f"server on port {port}, {THREADS} threads, idle {IDLE}s", flush=True)
        asyncio.run(main(port))
        check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
    finally:
        _, err = clients.stop_by_sigterm(proc)
    tally.check_stderr_clean(err)
    return tally.verdict("server_async_check", "server stderr, last lines:\n" + "\n".join(err.splitlines()[-30:]))


if __name__ == "__main__":
    sys.exit(run())
