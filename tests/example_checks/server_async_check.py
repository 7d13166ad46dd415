#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of examples/websocket_server_async and examples/websocket_server_awaitable
(Beast's async and C++20-coroutine WebSocket echo servers, one io_context on N threads, each
session on a strand of an idlewheel::wheel_pool, Beast's WebSocket timeouts on the wheel with
idlewheel::beast::set_option(ws, timeout)).

    server_async_check.py SERVER THREADS [IDLE_MS]

Starts SERVER 127.0.0.1 0 THREADS IDLE_MS; the example then sets Beast's
websocket::stream_base::timeout{IDLE / 2, IDLE, true} (handshake deadline IDLE / 2, idle
timeout IDLE, keep-alive pings on). Runs, all at once over loopback:
  - active clients: a message every IDLE/4 for 2.5 x IDLE; every echo comes back, never closed;
  - reading clients (the websockets library, which answers pings): handshake, then only read
    for 2.5 x IDLE: never closed, never sent a message; then one message still echoes;
  - pong clients (by hand): each keep-alive ping comes no sooner than IDLE/2 after the client's
    last byte (and within IDLE/2 + slack), is answered with a pong; nothing else comes for
    2.5 x IDLE (never dropped), at least 2 pings; then one message still echoes;
  - dead peers (by hand: the upgrade, then pings read but never answered): one ping no sooner
    than IDLE/2 after the upgrade request, then dropped (no close frame) no sooner than IDLE
    after it;
  - handshake deadline: clients that connect and never send a byte, and slowloris clients (the
    upgrade request a byte every 50 ms, never finished): dropped no sooner than IDLE/2 after
    the connect, never answered 101;
  - churn: workers connecting, echoing one message, closing, as fast as they can, plus peers
    that stop mid-handshake and peers that reset right after the handshake.
Lower bounds take no slack (the library's contract: never early; each is measured from a
moment before the server's own); upper bounds take SLACK (a loaded 2-core machine, TSan). The
server must still be alive at the end (no crash, no abort, no ThreadSanitizer report: with
halt_on_error a report ends it), then it is stopped with SIGTERM. Exit 0 if every check passed.
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


async def reading(port, i):
    async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None) as ws:
        await clients.expect_kept(ws, f"reading {i}", 2.5 * IDLE, SLACK, check)


async def read_http_response(loop, s, limit):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await asyncio.wait_for(loop.sock_recv(s, 4096), limit)
        if not chunk:
            break
        data += chunk
    return data


async def pong(port, i, seen):
    reader, writer, t_sent, head = await clients.ws_upgrade_by_hand(port, SLACK)
    try:
        if check(head.startswith(b"HTTP/1.1 101"), f"pong {i}: no 101: {head[:40]!r}"):
            seen.append(await clients.answer_pings(reader, writer, f"pong {i}", t_sent, IDLE, 2.5 * IDLE, SLACK, check))
    finally:
        writer.transport.abort()


async def dead_peer(port, i, seen):
    reader, writer, t_sent, head = await clients.ws_upgrade_by_hand(port, SLACK)
    try:
        if check(head.startswith(b"HTTP/1.1 101"), f"dead peer {i}: no 101: {head[:40]!r}"):
            took = await clients.expect_dead_peer_drop(reader, f"dead peer {i}", t_sent, IDLE, SLACK, check)
            if took is not None:
                seen.append(took)
    finally:
        writer.transport.abort()


async def no_upgrade(port, i, seen):
    t0 = time.monotonic()
    s = await clients.raw_connect(port, SLACK)
    try:
        rest = await clients.read_to_eof(s, IDLE / 2 + SLACK)
        took = time.monotonic() - t0
        check(rest is not None, f"no-upgrade {i}: not dropped within {IDLE / 2 + SLACK:.1f}s")
        if rest is not None:
            seen.append(took)
            check(rest == b"", f"no-upgrade {i}: answered: {rest[:40]!r}")
            check(took >= IDLE / 2, f"no-upgrade {i}: dropped after {took:.3f}s, before the handshake deadline "
                                    f"{IDLE / 2}s")
    finally:
        s.close()


async def slowloris(port, i, seen):
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
        seen.append(took)
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
    seen = {k: [] for k in ("pings answered", "dead peer dropped", "no-upgrade dropped", "slowloris dropped")}
    named += [(f"reading {i}", reading(port, i)) for i in range(10)]
    named += [(f"pong {i}", pong(port, i, seen["pings answered"])) for i in range(5)]
    named += [(f"dead peer {i}", dead_peer(port, i, seen["dead peer dropped"])) for i in range(5)]
    named += [(f"no-upgrade {i}", no_upgrade(port, i, seen["no-upgrade dropped"])) for i in range(4)]
    named += [(f"slowloris {i}", slowloris(port, i, seen["slowloris dropped"])) for i in range(5)]
    named += [(f"churn {i}", churn(port, i, stats, until)) for i in range(8)]
    for name, r in await clients.failed_tasks(named):
        check(False, f"{name}: raised {type(r).__name__}: {r!r} after {time.monotonic() - until + 2.5 * IDLE:.1f}s")
    pings = seen.pop("pings answered")
    print(f"pong clients: {pings} pings answered each", flush=True)
    for what, values in seen.items():
        if values:
            print(f"{what}: {len(values)} after {min(values):.3f} .. {max(values):.3f} s", flush=True)
    check(all(n >= 2 for n in pings), f"pong: fewer than 2 pings in 2.5 IDLE: {pings}")
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
