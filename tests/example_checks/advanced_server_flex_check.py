#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of examples/advanced_server_flex (Beast's advanced server, flex: plain and TLS
on one port, HTTP and WebSocket, one io_context on N threads, a strand per connection; its
timeouts, Beast's HTTP expiries and Beast's WebSocket timeouts, on an idlewheel::wheel_pool:
the WebSocket ones set with idlewheel::beast::set_option(ws, timeout)).

    advanced_server_flex_check.py SERVER THREADS [T_MS [--one-request-per-connection]]

--one-request-per-connection: for examples/advanced_server_flex_awaitable (Beast 1.81's
coroutine flex server, converted, and Beast's own file): as Beast wrote it, its HTTP path reuses
one request parser for every request of a connection and sets one expiry for the whole
connection (at its start, never renewed). Measured with Beast's own file: a second request on a
keep-alive connection is answered "400 Illegal request-target", and the connection is cut T
after its start whatever it does. So in this mode the HTTP keep-alive clients (active, idle) are
left out, HTTP is one request with Connection: close (the churn), and every other check is run
as it is (the silent and slowloris cuts are measured from before the connect already).

Makes a doc_root with one file in a temporary directory, starts SERVER 127.0.0.1 0 DOC_ROOT
THREADS T_MS (the example with the test's substitutions, tests/example_checks/upstream_test_main.hpp,
and Beast's certificate, which the TLS clients do not check; port 0: it prints the one it got; its HTTP
expiry is then T, its WebSocket timeouts Beast's websocket::stream_base::timeout{T / 2, T, true})
and runs, all at once over loopback, for plain and TLS alike:
  - HTTP keep-alive active clients: a GET every T/4 for 2.5 T, each answered 200 with the file,
    never cut;
  - HTTP keep-alive idle clients: one GET, then silence: closed by the server, never before T
    after the request was sent;
  - slowloris: request headers a byte every 50 ms, never finished: cut never before T after the
    connect (the server's expiry is set after that, at the start of the read), and by T + slack;
  - a TCP client that never sends a byte (no ClientHello, no request): cut at T;
  - a TLS client that stops after the first bytes of a ClientHello, and one that sends a whole
    ClientHello and then stops mid-handshake: dropped at T;
  - ws:// and wss:// active echo clients: a message every T/4 for 2.5 T, every echo back, never cut;
  - ws:// and wss:// reading clients (the websockets library, which answers pings): only read
    for 2.5 T: never closed; then one message still echoes;
  - ws:// and wss:// pong clients (by hand): each keep-alive ping no sooner than T/2 after the
    client's last byte (within T/2 + slack), answered with a pong; never dropped, at least 2
    pings in 2.5 T; then one message still echoes;
  - ws:// and wss:// dead peers (by hand: pings read, never answered): one ping no sooner than
    T/2 after the upgrade request, then dropped without a close frame no sooner than T after it;
  - churn: HTTP and HTTPS requests with Connection: close, ws and wss echoes, TLS handshakes
    abandoned, connections reset.
Lower bounds take no slack; upper bounds take SLACK (TSan on a loaded 2-core machine). The server
must still be alive at the end (no crash, no abort, no sanitizer report: with halt_on_error one
ends it), then SIGTERM (by PID) must stop it with exit status 0. Exit 0 if every check passed.
"""

import asyncio
import os
import socket
import ssl
import sys
import tempfile
import time

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import clients  # noqa: E402

ONE_REQUEST_PER_CONNECTION = "--one-request-per-connection" in sys.argv
if ONE_REQUEST_PER_CONNECTION:
    sys.argv.remove("--one-request-per-connection")
SERVER, THREADS, T, SLACK = clients.example_args(1.0)  # SLACK: upper bounds only (a loaded 2-core machine, TSan)
BODY = b"<html>idlewheel flex</html>\n"
seen = {}  # kind -> (min, max) of the cut times measured, for the report
tally = clients.Tally()
check = tally.check


def note(kind, took):
    lo, hi = seen.get(kind, (took, took))
    seen[kind] = (min(lo, took), max(hi, took))


async def open_http(port, tls):
    return await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, ssl=clients.tls_client_context() if tls else None,
                                server_hostname="127.0.0.1" if tls else None), SLACK)


def get_request(close=False):
    return (b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
            (b"Connection: close\r\n" if close else b"") + b"\r\n")


async def read_response(reader):
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), SLACK)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    body = await asyncio.wait_for(reader.readexactly(length), SLACK)
    return head.split(b"\r\n")[0], body


def name(tls):
    return "https" if tls else "http"


async def http_active(port, tls, i):
    reader, writer = await open_http(port, tls)
    try:
        end = time.monotonic() + 2.5 * T
        n = 0
        while time.monotonic() < end:
            writer.write(get_request())
            await writer.drain()
            status, body = await read_response(reader)
            check(status == b"HTTP/1.1 200 OK" and body == BODY, f"{name(tls)} active {i}: {status!r} {body[:40]!r}")
            n += 1
            await asyncio.sleep(T / 4)
        check(n >= 8, f"{name(tls)} active {i}: only {n} responses")
    finally:
        writer.close()


async def http_idle(port, tls, i):
    reader, writer = await open_http(port, tls)
    try:
        t0 = time.monotonic()  # before the request: the server's expiry is set after it reads it
        writer.write(get_request())
        await writer.drain()
        status, body = await read_response(reader)
        check(status == b"HTTP/1.1 200 OK" and body == BODY, f"{name(tls)} idle {i}: {status!r}")
        closed = await clients.stream_read_to_eof(reader, T + SLACK)
        took = time.monotonic() - t0
        note(f"{name(tls)} idle keep-alive", took)
        check(closed is not None, f"{name(tls)} idle {i}: not closed within {T + SLACK:.1f}s")
        check(took >= T, f"{name(tls)} idle {i}: closed after {took:.3f}s, before T {T}s")
    finally:
        writer.close()


async def slowloris(port, tls, i):
    t0 = time.monotonic()  # before the connect (and the TLS handshake): the read starts after it
    reader, writer = await open_http(port, tls)
    request = get_request()[:-2]  # never the end of the headers
    done = asyncio.Event()

    async def trickle():
        for k in range(10 ** 6):
            if done.is_set():
                return
            try:
                writer.write(request[k % len(request):k % len(request) + 1] if k < len(request) else b"X")
                await writer.drain()
            except (ConnectionError, ssl.SSLError, OSError):
                return
            await asyncio.sleep(0.05)

    sender = asyncio.create_task(trickle())
    try:
        closed = await clients.stream_read_to_eof(reader, T + SLACK)
        took = time.monotonic() - t0
        done.set()
        note(f"{name(tls)} slowloris", took)
        check(closed is not None, f"{name(tls)} slowloris {i}: not cut within {T + SLACK:.1f}s")
        check(took >= T, f"{name(tls)} slowloris {i}: cut after {took:.3f}s, before T {T}s")
    finally:
        done.set()
        await sender
        writer.close()


async def silent(port, kind, i):
    """kind: 'tcp' sends nothing; 'hello-start' the first 6 bytes of a ClientHello; 'hello' a whole
    ClientHello (the server answers, then waits for the rest of the handshake forever)."""
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    s = await clients.raw_connect(port, SLACK)
    try:
        if kind != "tcp":
            hello = clients.client_hello()
            await loop.sock_sendall(s, hello[:6] if kind == "hello-start" else hello)
        closed = await clients.read_to_eof(s, T + SLACK)
        took = time.monotonic() - t0
        note(f"silent {kind}", took)
        check(closed is not None, f"silent {kind} {i}: not cut within {T + SLACK:.1f}s")
        check(took >= T, f"silent {kind} {i}: cut after {took:.3f}s, before T {T}s")
    finally:
        s.close()


def ws_uri(port, tls):
    return f"{'wss' if tls else 'ws'}://127.0.0.1:{port}/"


def ws_connect(port, tls, **kw):
    return websockets.connect(ws_uri(port, tls), ssl=clients.tls_client_context() if tls else None, ping_interval=None,
                              open_timeout=SLACK, **kw)


async def ws_active(port, tls, i):
    async with ws_connect(port, tls, max_size=None) as ws:
        await clients.keep_echoing(ws, f"active {i}", f"{ws_uri(port, tls)} active {i}", T / 4, 2.5 * T, SLACK, check)


async def ws_reading(port, tls, i):
    async with ws_connect(port, tls) as ws:
        await clients.expect_kept(ws, f"{'wss' if tls else 'ws'} reading {i}", 2.5 * T, SLACK, check)


async def ws_pong(port, tls, i, pings):
    label = f"{'wss' if tls else 'ws'} pong {i}"
    reader, writer, t_sent, head = await clients.ws_upgrade_by_hand(port, SLACK, clients.tls_client_context() if tls else None)
    try:
        if check(head.startswith(b"HTTP/1.1 101"), f"{label}: no 101: {head[:40]!r}"):
            pings.append(await clients.answer_pings(reader, writer, label, t_sent, T, 2.5 * T, SLACK, check))
    finally:
        writer.transport.abort()


async def ws_dead_peer(port, tls, i):
    label = f"{'wss' if tls else 'ws'} dead peer {i}"
    reader, writer, t_sent, head = await clients.ws_upgrade_by_hand(port, SLACK, clients.tls_client_context() if tls else None)
    try:
        if check(head.startswith(b"HTTP/1.1 101"), f"{label}: no 101: {head[:40]!r}"):
            took = await clients.expect_dead_peer_drop(reader, label, t_sent, T, SLACK, check)
            if took is not None:
                note(f"{'wss' if tls else 'ws'} dead peer", took)
    finally:
        writer.transport.abort()


async def churn(port, i, stats, until):
    loop = asyncio.get_running_loop()
    n = 0
    while time.monotonic() < until:
        await asyncio.sleep(0.005)  # churn, not a flood: a sanitizer build's server keeps up
        kind = n % 7
        n += 1
        if kind in (0, 1):  # one request, Connection: close, plain or TLS
            reader, writer = await open_http(port, kind == 1)
            writer.write(get_request(close=True))
            await writer.drain()
            status, body = await read_response(reader)
            check(status == b"HTTP/1.1 200 OK" and body == BODY, f"churn {i}: {status!r}")
            writer.close()
            stats["http"] += 1
        elif kind in (2, 3):  # a ws or wss echo
            async with ws_connect(port, kind == 3) as ws:
                msg = f"churn {i} {n}"
                await ws.send(msg)
                got = await asyncio.wait_for(ws.recv(), SLACK)
                check(got == msg, f"churn {i}: echo {got!r}")
            stats["ws"] += 1
        elif kind == 4:  # a TLS handshake abandoned after the ClientHello
            s = await clients.raw_connect(port, SLACK)
            await loop.sock_sendall(s, clients.client_hello())
            s.close()
            stats["abandoned"] += 1
        else:  # reset right after the connect (5) or after a request (6)
            s = await clients.raw_connect(port, SLACK)
            if kind == 6:
                await loop.sock_sendall(s, get_request())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
            stats["reset"] += 1


async def main(port):
    stats = {"http": 0, "ws": 0, "abandoned": 0, "reset": 0}
    pings = []
    until = time.monotonic() + 2.5 * T
    named = []
    for tls in (False, True):
        if not ONE_REQUEST_PER_CONNECTION:
            named += [(f"{name(tls)} active {i}", http_active(port, tls, i)) for i in range(4)]
            named += [(f"{name(tls)} idle {i}", http_idle(port, tls, i)) for i in range(4)]
        named += [(f"{name(tls)} slowloris {i}", slowloris(port, tls, i)) for i in range(3)]
        named += [(f"ws active {tls} {i}", ws_active(port, tls, i)) for i in range(4)]
        named += [(f"ws reading {tls} {i}", ws_reading(port, tls, i)) for i in range(4)]
        named += [(f"ws pong {tls} {i}", ws_pong(port, tls, i, pings)) for i in range(3)]
        named += [(f"ws dead peer {tls} {i}", ws_dead_peer(port, tls, i)) for i in range(3)]
    for kind in ("tcp", "hello-start", "hello"):
        named += [(f"silent {kind} {i}", silent(port, kind, i)) for i in range(3)]
    named += [(f"churn {i}", churn(port, i, stats, until)) for i in range(6)]
    t0 = time.monotonic()
    for what, r in await clients.failed_tasks(named):
        check(False, f"{what}: raised {type(r).__name__}: {r!r} ({time.monotonic() - t0:.1f}s in)")
    print(f"pong clients: {pings} pings answered each", flush=True)
    check(all(n >= 2 for n in pings), f"pong: fewer than 2 pings in 2.5 T: {pings}")
    print(f"churn: {stats}", flush=True)
    check(stats["http"] >= 10 and stats["ws"] >= 10, f"churn: only {stats}")


def run():
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        with open(os.path.join(root, "index.html"), "wb") as f:
            f.write(BODY)
        return run_server(root)


def run_server(root):
    proc, port = clients.start_announcing([SERVER, "127.0.0.1", "0", root, str(THREADS), str(int(T * 1000))])
    try:
        if port is None:
            return 1
        print(f"server on port {port}, {THREADS} threads, T {T}s", flush=True)
        asyncio.run(main(port))
        check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
    finally:
        status, err = clients.stop_by_sigterm(proc)
    check(status == 0, f"server exit status after SIGTERM: {status}")
    tally.check_stderr_clean(err)
    for kind, (lo, hi) in sorted(seen.items()):
        print(f"  {kind:22} cut after {lo:.3f} .. {hi:.3f} s (T {T}s)", flush=True)
    return tally.verdict("advanced_server_flex_check",
                         "server stderr, last lines:\n" + "\n".join(err.splitlines()[-30:]))


if __name__ == "__main__":
    sys.exit(run())
