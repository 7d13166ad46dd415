#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of examples/websocket_server_async_ssl (Beast's async WebSocket SSL server,
one io_context on N threads, a strand per session, the stream over idlewheel::beast::tcp_stream
on an idlewheel::wheel_pool; the TLS handshake bounded by the tcp_stream's expiry, as in
Beast's example, then Beast's WebSocket timeouts on the wheel with
idlewheel::beast::set_option(ws, timeout)).

    server_async_ssl_check.py SERVER THREADS [IDLE_MS]

Starts SERVER 127.0.0.1 0 THREADS IDLE_MS (the example with the test's substitutions,
tests/example_checks/upstream_test_main.hpp: Beast's certificate, example/common/), learns the
port from its first line; the example then bounds the TLS handshake by IDLE (Beast's 30 s) and
sets Beast's websocket::stream_base::timeout{IDLE / 2, IDLE, true}. Runs, all at once over
loopback (wss, the certificate not checked):
  - active clients: a message every IDLE/4 for 2.5 x IDLE; every echo comes back, never closed;
  - reading clients (the websockets library, which answers pings): TLS, upgrade, then only read
    for 2.5 x IDLE: never closed; then one message still echoes;
  - pong clients (by hand, over TLS): each keep-alive ping no sooner than IDLE/2 after the
    client's last byte (within IDLE/2 + slack), answered with a pong; never dropped, at least 2
    pings in 2.5 x IDLE; then one message still echoes;
  - dead peers (by hand, over TLS: pings read, never answered): one ping no sooner than IDLE/2
    after the upgrade request, then dropped (no close frame) no sooner than IDLE after it;
  - no-hello clients: TCP connect, never a ClientHello: dropped at the TLS handshake's expiry
    (IDLE), never before;
  - half-hello clients: half a ClientHello, then nothing (stopped mid-TLS-handshake): the same;
  - no-upgrade clients: TLS completes, no HTTP upgrade ever: dropped at the WebSocket handshake
    deadline (IDLE/2 after TLS), never before, never answered;
  - churn: workers connecting, echoing one message, closing, as fast as they can, plus peers
    that give up mid-TLS-handshake and peers that reset right after the upgrade.
Lower bounds take no slack (the library's contract: never early; each is measured from
before the client connects or sends, so the server's own time is shorter); upper bounds take
SLACK (a loaded 2-core machine, ThreadSanitizer). The server must still be alive at the end
(no crash, no abort, no sanitizer report: with halt_on_error a report ends it), then it is
stopped by its PID with SIGTERM. Exit 0 if every check passed.
"""

import asyncio
import os
import socket
import sys
import tempfile
import time

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import clients  # noqa: E402

SERVER, THREADS, IDLE, SLACK = clients.example_args(1.5)  # SLACK: upper bounds only (a loaded 2-core machine, TSan)
DEADLINE = IDLE / 2  # the WebSocket handshake deadline (timeout{IDLE / 2, IDLE, true})
TLS_DEADLINE = IDLE  # the TLS handshake's: Beast's expires_after(30 s), the test's IDLE
tally = clients.Tally()
check = tally.check


async def tls_connect(port, ctx):
    return await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="127.0.0.1"), SLACK)


def wss(port):
    return f"wss://127.0.0.1:{port}/"


async def active(port, ctx, i):
    async with websockets.connect(wss(port), ssl=ctx, ping_interval=None, max_size=None) as ws:
        await clients.keep_echoing(ws, f"active {i}", f"active {i}", IDLE / 4, 2.5 * IDLE, SLACK, check)


async def reading(port, ctx, i):
    async with websockets.connect(wss(port), ssl=ctx, ping_interval=None) as ws:
        await clients.expect_kept(ws, f"reading {i}", 2.5 * IDLE, SLACK, check)


async def pong(port, ctx, i, seen):
    reader, writer, t_sent, head = await clients.ws_upgrade_by_hand(port, SLACK, ctx)
    try:
        if check(head.startswith(b"HTTP/1.1 101"), f"pong {i}: no 101: {head[:40]!r}"):
            seen.append(await clients.answer_pings(reader, writer, f"pong {i}", t_sent, IDLE, 2.5 * IDLE, SLACK, check))
    finally:
        writer.transport.abort()


async def dead_peer(port, ctx, i, seen):
    reader, writer, t_sent, head = await clients.ws_upgrade_by_hand(port, SLACK, ctx)
    try:
        if check(head.startswith(b"HTTP/1.1 101"), f"dead peer {i}: no 101: {head[:40]!r}"):
            took = await clients.expect_dead_peer_drop(reader, f"dead peer {i}", t_sent, IDLE, SLACK, check)
            if took is not None:
                seen.append(took)
    finally:
        writer.transport.abort()


def check_deadline_drop(name, took, got, seen, deadline=DEADLINE):
    """A connection the server ended at its handshake deadline: never early, not late beyond
    SLACK, never answered."""
    check(got is not None, f"{name}: not dropped within {deadline + SLACK:.1f}s")
    if got is None:
        return
    seen.append(took)
    check(b"101" not in got, f"{name}: answered: {got[:40]!r}")
    check(took >= deadline, f"{name}: dropped after {took:.3f}s, before the handshake deadline {deadline}s")
    check(took <= deadline + SLACK, f"{name}: dropped only after {took:.3f}s")


async def raw_tcp(port, first_bytes, name, seen):
    """TCP only: sends first_bytes (maybe none), then nothing; waits for the server to end it."""
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    s = await clients.raw_connect(port, SLACK)
    try:
        if first_bytes:
            await loop.sock_sendall(s, first_bytes)
        got = await clients.read_to_eof(s, TLS_DEADLINE + SLACK)
        check_deadline_drop(name, time.monotonic() - t0, got, seen, TLS_DEADLINE)
    finally:
        s.close()


async def no_upgrade(port, ctx, i, seen):
    t0 = time.monotonic()
    reader, writer = await tls_connect(port, ctx)
    try:
        got = await clients.stream_read_to_eof(reader, DEADLINE + SLACK)
        check_deadline_drop(f"no-upgrade {i}", time.monotonic() - t0, got, seen)
    finally:
        writer.transport.abort()


async def churn(port, ctx, hello, i, stats, until):
    loop = asyncio.get_running_loop()
    n = 0
    while time.monotonic() < until:
        await asyncio.sleep(0.005)  # churn, not a flood: a sanitizer build's server keeps up
        kind = n % 5
        n += 1
        if kind == 3:  # gives up mid-TLS-handshake
            s = await clients.raw_connect(port, SLACK)
            await loop.sock_sendall(s, hello[: len(hello) // 3])
            s.close()
            stats["aborted"] += 1
            continue
        if kind == 4:  # reset right after the upgrade
            reader, writer = await tls_connect(port, ctx)
            writer.write(clients.upgrade_request(f"127.0.0.1:{port}"))
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), SLACK)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            writer.transport.abort()
            stats["reset"] += 1
            continue
        async with websockets.connect(wss(port), ssl=ctx, ping_interval=None) as ws:
            msg = f"churn {i} {n}"
            await ws.send(msg)
            got = await asyncio.wait_for(ws.recv(), SLACK)
            check(got == msg, f"churn {i}: echo {got!r}")
            stats["echoed"] += 1


def spread(name, values):
    if values:
        print(f"{name}: {len(values)} ended after {min(values):.3f}-{max(values):.3f}s", flush=True)


async def main(port, ctx):
    hello = clients.client_hello(ctx)
    stats = {"echoed": 0, "aborted": 0, "reset": 0}
    seen = {k: [] for k in ("pings answered", "dead peer", "no-hello", "half-hello", "no-upgrade")}
    until = time.monotonic() + 2.5 * IDLE
    named = [(f"active {i}", active(port, ctx, i)) for i in range(10)]
    named += [(f"reading {i}", reading(port, ctx, i)) for i in range(10)]
    named += [(f"pong {i}", pong(port, ctx, i, seen["pings answered"])) for i in range(5)]
    named += [(f"dead peer {i}", dead_peer(port, ctx, i, seen["dead peer"])) for i in range(5)]
    named += [(f"no-hello {i}", raw_tcp(port, b"", f"no-hello {i}", seen["no-hello"])) for i in range(4)]
    named += [(f"half-hello {i}", raw_tcp(port, hello[: len(hello) // 2], f"half-hello {i}", seen["half-hello"]))
              for i in range(4)]
    named += [(f"no-upgrade {i}", no_upgrade(port, ctx, i, seen["no-upgrade"])) for i in range(4)]
    named += [(f"churn {i}", churn(port, ctx, hello, i, stats, until)) for i in range(8)]
    for name, r in await clients.failed_tasks(named):
        check(False, f"{name}: raised {type(r).__name__}: {r!r} after {time.monotonic() - until + 2.5 * IDLE:.1f}s")
    pings = seen.pop("pings answered")
    print(f"pong clients: {pings} pings answered each", flush=True)
    for name, values in seen.items():
        spread(name, values)
    check(all(n >= 2 for n in pings), f"pong: fewer than 2 pings in 2.5 IDLE: {pings}")
    print(f"churn: {stats}", flush=True)
    check(stats["echoed"] >= 30, f"churn: only {stats['echoed']} echoed sessions")


def run():
    with tempfile.TemporaryDirectory(prefix="idlewheel-tls-") as directory:
        ctx = clients.tls_client_context()  # Beast's example certificate (www.example.com): not checked
        proc, port = clients.start_announcing([SERVER, "127.0.0.1", "0", str(THREADS), str(int(IDLE * 1000))])
        try:
            if port is None:
                return 1
            print(f"server on port {port}, {THREADS} threads, idle {IDLE}s, handshake deadline {DEADLINE}s",
                  flush=True)
            asyncio.run(main(port, ctx))
            check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
        finally:
            _, err = clients.stop_by_sigterm(proc)
    tally.check_stderr_clean(err)
    return tally.verdict("server_async_ssl_check", "server stderr, last lines:\n" + "\n".join(err.splitlines()[-30:]))


if __name__ == "__main__":
    sys.exit(run())
