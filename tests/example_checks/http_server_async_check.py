#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Black-box check of examples/http_server_async (Beast's async HTTP server, one io_context on N
threads, a strand per session, its stream an idlewheel::beast::tcp_stream on a wheel_pool), or of
Beast's own file built as http_server_async_beast: both take the same arguments. Also of
examples/http_server_awaitable (Beast's C++20-coroutine HTTP server, converted the same way, a
session per coroutine on a shard's strand) and http_server_awaitable_beast: same arguments;
their timeout lines read "Error in session: The socket was closed due to a timeout [...]"
(a system_error's what(): the code and where it was thrown in brackets).

    http_server_async_check.py SERVER THREADS [TIMEOUT_MS]

Makes a doc root (a temp dir with one small file), starts
SERVER 127.0.0.1 PORT DOCROOT THREADS TIMEOUT_MS on a free port, and runs, all at once over
loopback (T = TIMEOUT_MS):
  - active keep-alive clients: a request every T/4 for 2.5 T on one connection: never cut,
    every response 200 with the file's body;
  - idle keep-alive clients: one request, then nothing: closed by the server;
  - slowloris clients: request headers a byte every 50 ms, never finished: cut, never answered;
  - silent clients: connect, send nothing: cut;
  - half-closed clients: a request then shutdown(SHUT_WR): answered, then closed at once (the
    server reads the end of the stream); and one that half-closes without a request;
  - pipelined clients: two requests in one write, then a third: all answered, in order;
  - churn: a few workers connecting, one request (keep-alive, or Connection: close), close.

When the server's deadline starts. The example calls expires_after(T) before every read of a
request, so a session's read deadline is armed when that read starts: after the accept, and
after the write of the previous response completed (the completion of the server's write, not
the client's receipt of the bytes: the two are not ordered). The request read covers the whole
request; bytes arriving do not extend its deadline. So, with the only client-side times that
certainly precede the server's arming:
  - idle: closed no earlier than T after the client began to send its request (the server
    read it and wrote the response before arming); not later than T + SLACK after the client
    read the response's last byte. The close measured from that receipt is printed too (it is
    about T, but can be a little under T: the server may arm before the client reads);
  - slowloris and silent: closed no earlier than T after the client began to connect (the
    server accepts, then arms), not later than T + SLACK after it.
Lower bounds take no slack; upper bounds take SLACK (a loaded 2-core machine, ThreadSanitizer).

The server's stderr must hold exactly one "read: ...timeout" line per idle, slowloris and
silent client ("read: ..." for the async servers, "Error in session: ..." for the coroutine
ones; so no active, half-closed, pipelined or churn session timed out, and no one was
cut twice) and nothing else; the server must still be alive at the end (no crash, no abort, no
sanitizer report: with halt_on_error a report ends it); then it is stopped with SIGTERM by its
PID and must end by that signal. Exit 0 if every check passed.
"""

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import clients  # noqa: E402

SERVER, THREADS, T, SLACK = clients.example_args(1.5)  # SLACK: upper bounds only (a loaded 2-core machine, TSan)
N_ACTIVE, N_IDLE, N_SLOWLORIS, N_SILENT, N_HALF, N_PIPELINED, N_CHURN = 10, 10, 5, 5, 4, 4, 4
TIMEOUT_MESSAGE = "The socket was closed due to a timeout"  # beast::error::timeout's message
# What may come before it on its line: Beast's fail(ec, "read") (async), or the coroutine
# examples' session handler; after it, a system_error's what() adds "[category:code]", and
# " at file:line ..." inside the brackets when the code carries where it was set (Beast's).
TIMEOUT_PREFIXES = ("Error in session", "read")
WHAT_SUFFIX = re.compile(r" \[[a-z.]+:\d+( at [^\]\n]*)?\]")
BODY = (f"idlewheel http_server_async_check {os.getpid()} {time.time()}\n" * 4).encode()
seen = {}  # what was measured, by kind: a list of seconds
tally = clients.Tally()
check = tally.check


def measured(kind, seconds):
    seen.setdefault(kind, []).append(seconds)


def request(close=False):
    extra = "Connection: close\r\n" if close else ""
    return f"GET /small.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode()


class Conn:
    """A non-blocking client socket with a receive buffer and an HTTP/1.1 response reader."""

    def __init__(self, sock):
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.buf = b""
        self.last_byte_at = None  # when the last byte of the last response was read

    @classmethod
    async def connect(cls, port):
        return cls(await clients.raw_connect(port, SLACK))

    async def send(self, data):
        await self.loop.sock_sendall(self.sock, data)

    async def _more(self, deadline):
        chunk = await asyncio.wait_for(self.loop.sock_recv(self.sock, 65536), max(0.0, deadline - time.monotonic()))
        if not chunk:
            raise EOFError("closed by the server")
        self.buf += chunk

    async def response(self, limit=None):
        """(status, headers, body) of the next response; raises EOFError, ConnectionError or
        asyncio.TimeoutError."""
        deadline = time.monotonic() + (SLACK if limit is None else limit)
        while b"\r\n\r\n" not in self.buf:
            await self._more(deadline)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            await self._more(deadline)
        body, self.buf = self.buf[:length], self.buf[length:]
        self.last_byte_at = time.monotonic()
        return status, headers, body

    async def until_closed(self, limit):
        """Reads to the end; returns (bytes read, when it ended), or (bytes, None) if the server
        did not end the connection within `limit` seconds."""
        deadline = time.monotonic() + limit
        try:
            while True:
                await self._more(deadline)
        except (EOFError, ConnectionResetError, BrokenPipeError):
            return self.buf, time.monotonic()
        except asyncio.TimeoutError:
            return self.buf, None

    def closed_now(self):
        """True if the server has closed (a non-blocking peek sees the end or a reset)."""
        try:
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True

    def close(self):
        self.sock.close()


def check_ok(who, response):
    status, headers, body = response
    check(status == 200 and body == BODY, f"{who}: {status} with {len(body)} bytes {body[:40]!r}")


async def active(port, i):
    c = await Conn.connect(port)
    try:
        end = time.monotonic() + 2.5 * T
        n = 0
        while time.monotonic() < end:
            await c.send(request())
            check_ok(f"active {i} #{n}", await c.response())
            n += 1
            await asyncio.sleep(T / 4)
        check(n >= 8, f"active {i}: only {n} responses")
        check(not c.closed_now(), f"active {i}: closed by the server")
    finally:
        c.close()


async def idle(port, i):
    c = await Conn.connect(port)
    try:
        sent_at = time.monotonic()
        await c.send(request())
        check_ok(f"idle {i}", await c.response())
        rest, closed_at = await c.until_closed(T + SLACK)
        check(rest == b"", f"idle {i}: got {rest[:40]!r} after the response")
        if closed_at is None:
            return check(False, f"idle {i}: not closed within {T + SLACK:.1f}s of the response")
        measured("idle, from the request sent", closed_at - sent_at)
        measured("idle, from the response read", closed_at - c.last_byte_at)
        check(closed_at - sent_at >= T,
              f"idle {i}: closed {closed_at - sent_at:.3f}s after the request was sent, before the timeout {T}s")
    finally:
        c.close()


async def slowloris(port, i):
    began = time.monotonic()
    c = await Conn.connect(port)
    head = b"GET /small.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "  # then 'a' forever: never ends
    try:
        k = 0
        while time.monotonic() - began < T + SLACK and not c.closed_now():
            try:
                await c.send(head[k:k + 1] if k < len(head) else b"a")
            except (ConnectionResetError, BrokenPipeError):
                break
            k += 1
            await asyncio.sleep(0.05)
        rest, closed_at = await c.until_closed(0.5)
        check(rest == b"", f"slowloris {i}: answered {rest[:40]!r}")
        if closed_at is None:
            return check(False, f"slowloris {i}: not cut within {T + SLACK:.1f}s of the connect ({k} bytes sent)")
        measured("slowloris, from the connect", closed_at - began)
        check(closed_at - began >= T, f"slowloris {i}: cut {closed_at - began:.3f}s after the connect, before {T}s")
        check(k >= 0.5 * T / 0.05, f"slowloris {i}: only {k} bytes sent before the cut")
    finally:
        c.close()


async def silent(port, i):
    began = time.monotonic()
    c = await Conn.connect(port)
    try:
        rest, closed_at = await c.until_closed(T + SLACK)
        check(rest == b"", f"silent {i}: got {rest[:40]!r}")
        if closed_at is None:
            return check(False, f"silent {i}: not cut within {T + SLACK:.1f}s of the connect")
        measured("silent, from the connect", closed_at - began)
        check(closed_at - began >= T, f"silent {i}: cut {closed_at - began:.3f}s after the connect, before {T}s")
    finally:
        c.close()


async def half_closed(port, i):
    """A request then shutdown(SHUT_WR) (odd i: the shutdown without a request): answered, then
    the server ends the connection on reading the end of the stream, not on its deadline (the
    stderr count shows no timeout for it)."""
    c = await Conn.connect(port)
    try:
        if i % 2 == 0:
            await c.send(request())
        c.sock.shutdown(socket.SHUT_WR)
        shut_at = time.monotonic()
        if i % 2 == 0:
            check_ok(f"half-closed {i}", await c.response())
        rest, closed_at = await c.until_closed(SLACK)
        check(rest == b"", f"half-closed {i}: got {rest[:40]!r} after the response")
        if closed_at is None:
            return check(False, f"half-closed {i}: not closed within {SLACK:.1f}s of the shutdown")
        measured("half-closed, closed after the shutdown", closed_at - shut_at)
    finally:
        c.close()


async def pipelined(port, i):
    c = await Conn.connect(port)
    try:
        await c.send(request() + request())  # one write
        check_ok(f"pipelined {i} #1", await c.response())
        check_ok(f"pipelined {i} #2", await c.response())
        await c.send(request(close=True))  # the connection is still there; then the server closes it
        check_ok(f"pipelined {i} #3", await c.response())
        rest, closed_at = await c.until_closed(SLACK)
        check(rest == b"" and closed_at is not None, f"pipelined {i}: not closed after Connection: close ({rest[:40]!r})")
    finally:
        c.close()


async def churn(port, i, stats, until):
    while time.monotonic() < until:
        close = stats["sessions"] % 2 == 1  # every other one asks the server to close
        c = await Conn.connect(port)
        try:
            await c.send(request(close))
            check_ok(f"churn {i}", await c.response())
            if close:
                rest, closed_at = await c.until_closed(SLACK)
                check(rest == b"" and closed_at is not None, f"churn {i}: not closed after Connection: close")
        finally:
            c.close()
        stats["sessions"] += 1
        await asyncio.sleep(0.002)


async def main(port):
    stats = {"sessions": 0}
    until = time.monotonic() + 2.5 * T
    named = [(f"active {i}", active(port, i)) for i in range(N_ACTIVE)]
    named += [(f"idle {i}", idle(port, i)) for i in range(N_IDLE)]
    named += [(f"slowloris {i}", slowloris(port, i)) for i in range(N_SLOWLORIS)]
    named += [(f"silent {i}", silent(port, i)) for i in range(N_SILENT)]
    named += [(f"half-closed {i}", half_closed(port, i)) for i in range(N_HALF)]
    named += [(f"pipelined {i}", pipelined(port, i)) for i in range(N_PIPELINED)]
    named += [(f"churn {i}", churn(port, i, stats, until)) for i in range(N_CHURN)]
    started = time.monotonic()
    for name, r in await clients.failed_tasks(named):
        check(False, f"{name}: raised {type(r).__name__}: {r!r} (run ended after {time.monotonic() - started:.1f}s)")
    print(f"churn: {stats['sessions']} sessions", flush=True)
    check(stats["sessions"] >= 30, f"churn: only {stats['sessions']} sessions")


def served(port):
    """True once the server answers GET /small.txt with this run's body (so it is ours)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(request(close=True))
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            return data.startswith(b"HTTP/1.1 200") and data.endswith(b"\r\n\r\n" + BODY)
    except OSError:
        return False


def start(docroot, errfile):
    """Starts the server on a free port (the example prints nothing, so the port is chosen
    here; another process may take it first: then the server fails to bind, and a new port is
    tried). Returns (process, port) or (None, None)."""
    for _ in range(5):
        port = clients.free_port()
        errfile.seek(0)
        errfile.truncate()
        proc = subprocess.Popen([SERVER, "127.0.0.1", str(port), docroot, str(THREADS), str(int(T * 1000))],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errfile, env=clients.server_env())
        deadline = time.monotonic() + 60  # a sanitizer build starts slowly on a loaded machine
        while time.monotonic() < deadline and proc.poll() is None:
            if served(port):
                return proc, port
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        errfile.seek(0)
        err = errfile.read()
        if "bind: " not in err:
            print(f"server did not start (exit {proc.returncode}):\n{err[-3000:]}", flush=True)
            return None, None
    print("server did not start: no free port in 5 tries", flush=True)
    return None, None


def summary():
    for kind, values in seen.items():
        print(f"{kind}: {min(values):.3f}-{max(values):.3f}s over {len(values)} (T {T}s)", flush=True)


def run():
    with tempfile.TemporaryDirectory(prefix="http_server_async_check.") as docroot, \
            tempfile.TemporaryFile("w+", prefix="http_server_async_check.stderr.") as errfile:
        with open(os.path.join(docroot, "small.txt"), "wb") as f:
            f.write(BODY)
        proc, port = start(docroot, errfile)
        if proc is None:
            return 1
        print(f"server pid {proc.pid} on port {port}, {THREADS} threads, timeout {T}s", flush=True)
        try:
            asyncio.run(main(port))
            time.sleep(0.2)  # the server's stderr line for the last cut
            check(proc.poll() is None, f"server died during the run (exit {proc.returncode})")
            check(served(port), "the server no longer answers at the end")
        finally:
            clients.stop_by_sigterm(proc)  # stderr is in errfile
        check(proc.returncode == -signal.SIGTERM, f"server ended with {proc.returncode}, not by SIGTERM")
        errfile.seek(0)
        err = errfile.read()
    # Beast's fail() writes its line in three pieces (what, ": ", the message) with no lock, so
    # two threads' lines can interleave ("readread: ...", "read: read: ..."): count the
    # messages, and what is left once every piece of a timeout line is taken out (each piece
    # alone) must be nothing.
    timeouts = err.count(TIMEOUT_MESSAGE)
    expected = N_IDLE + N_SLOWLORIS + N_SILENT
    rest = WHAT_SUFFIX.sub("", err).replace(TIMEOUT_MESSAGE, "").replace(": ", "")
    for prefix in TIMEOUT_PREFIXES:
        rest = rest.replace(prefix, "")
    rest = rest.split()
    print(f"server stderr: {timeouts} timeout messages (expected {expected}), other text: {len(rest)} words", flush=True)
    check(timeouts == expected, f"{timeouts} sessions timed out, expected {expected} (idle, slowloris, silent)")
    others = err.splitlines() if rest else []
    check(not rest, "server stderr has other lines than the timeouts")
    summary()
    return tally.verdict("http_server_async_check", "server stderr, last other lines:\n" + "\n".join(others[-40:]))


if __name__ == "__main__":
    sys.exit(run())
