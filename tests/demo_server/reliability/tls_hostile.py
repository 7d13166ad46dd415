#!/usr/bin/python3
"""Hostile TLS clients against the real `demo_server --tls`, in one timer mode, with a control
client served throughout. Python's own `ssl` (OpenSSL) drives the TLS side by hand over plain
sockets (ssl.MemoryBIO), so a client can stop anywhere in the handshake; the control client is
Python's `websockets` (Debian's python3-websockets), which answers pings by itself.

Usage: tls_hostile.py PATH_TO_DEMO_SERVER wheel|asio|none [EXTRA SERVER ARGS...]

The server: --tls (self-signed certificate made at start), --handshake-timeout 1.5s,
--idle-timeout 4s, pings after 0.5 s of silence with 0.1 s jitter, --pong-timeout 0.5s.
The cases run at the same time; T is the handshake timeout, "closed" means the server closed the
TCP connection (EOF or reset seen by the client), timed from the client's connect():

  case                 what the client does                       wheel, asio              none (no liveness)
  silent_tcp           connects, never sends a ClientHello        closed in [T, T+slack]   open at T+2 s
  trickled_hello       its ClientHello one byte per 20 ms         closed in [T, T+slack]   open at T+2 s
  abandoned_handshake  ClientHello, reads the server's flight,    closed in [T, T+slack]   open at T+2 s
                       never sends its Finished
  tls_no_request       completes TLS, never sends a request       closed in [T, T+slack]   open at T+2 s
  vanishing_peer       TLS + WebSocket upgrade, one echo, then    closed in [1.0, 1.1+     open at T+2 s
                       never reads TLS again (no pong)            slack] s after the message
                                                                  (dead_peer)
  close_notify_withheld  TLS + upgrade, sends a close frame, reads  closed in [C, C+slack]   open at T+2 s
                       the server's, then never sends its TLS     after its close frame
                       close_notify nor FIN (Beast's TLS teardown (client_close: counted
                       waits for it)                              by what started it)
  close_behind_echo    TLS + upgrade, 768 KiB of messages never   closed in [C, C+slack]   open at T+2 s
                       read (the echo stuck), then a close frame, after its close frame
                       then nothing; the end seen without reading (client_close)
  not_tls              plain HTTP on the TLS port                 closed at once (< 1 s), tls_failed +1 and a
                                                                  "tls handshake failed" log line, every mode
  oversized_hello      a handshake record opening a ClientHello   closed at once (< 1 s), tls_failed +1, every
                       that declares 100 000 bytes (over the      mode
                       server's 16 KiB bound), 16 KiB of it
  corrupt_record_request  completes TLS, then a record that does  closed at once (< 1 s), tls_failed +1 (not
                       not decrypt instead of a request            bad_request), nothing decrypted comes back
                                                                  (no HTTP 400), every mode
  corrupt_record_wss   TLS + upgrade, one echo, then a record     closed at once (< 1 s), tls_failed +1 (not
                       that does not decrypt                      error), every mode
  control              wss:// echo every 100 ms, GET /stats over  never cut, every echo right, every mode
                       https:// at the end

Then /stats (over https, read until the counts settle: a client sees its connection end before the
server has counted the close) must show the closes by cause: handshake_timeout +4 and dead_peer +1
(wheel, asio), client_close +2 (wheel, asio: the withheld close_notify, the close behind the
echo; C = --close-timeout 1 s),
tls_failed +4, bad_request and error +0 (every mode); a wss:// client open at SIGTERM must get close 1001, and the server
must exit 0. Prints one PASS or
FAIL line; exits non-zero on failure. Every wait is bounded; the server is killed whatever
happens.
"""

import asyncio
import http.client
import json
import os
import select
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from clients import Failure, check  # noqa: E402
import clients  # noqa: E402

T = 1.5                 # --handshake-timeout
PING = 0.5              # --ping-interval (the heartbeat: a ping after PING of silence, +jitter)
JITTER = 0.1
PONG = 0.5              # --pong-timeout
CLOSE = 1.0             # --close-timeout
SLACK = 2.0             # upper-bound allowance: a loaded 2-core machine, sanitizer builds
OPEN_FOR = T + 2.0      # none: still open this long after connect
EARLY = 0.005           # clock granularity between the client's and the server's clocks


def ms(seconds):
    return f"{round(seconds * 1000)}ms"


def start_server(binary, mode, extra, stderr_file):
    args = [binary, "--tls", "--tcp-port", "0", "--http-port", "0", "--timers", mode, "--tick", "10ms",
            "--handshake-timeout", ms(T), "--idle-timeout", "4s", "--ping-interval", ms(PING),
            "--ping-jitter", ms(JITTER), "--pong-timeout", ms(PONG), "--close-timeout", ms(CLOSE)] + extra
    # 30 s: a sanitizer build starts slowly on a loaded machine
    proc, fields = clients.start_demo_server(args, stderr_file, timeout=30, need=("http",))
    host, port = fields["http"].rsplit(":", 1)
    return proc, host, int(port)


def connect(host, port):
    """The socket and the time just BEFORE connect(): the server accepts after it, so its
    deadlines start after it too (a time taken after connect() returns may be late: the thread
    waits for the GIL, and a close would then look early)."""
    t0 = time.monotonic()
    s = socket.create_connection((host, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s, t0


def wait_closed(sock, until):
    """Reads (and drops) whatever arrives until EOF or reset: the time the server closed, or None
    if the connection is still open at `until` (monotonic)."""
    sock.setblocking(False)
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            continue
        try:
            if not sock.recv(65536):
                return time.monotonic()
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic()
        except BlockingIOError:
            continue


class ManualTls:
    """TLS by hand over a plain socket: the client can stop anywhere, and the raw socket stays
    the client's to read (or not)."""

    def __init__(self, sock):
        self.sock = sock
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = clients.tls_client_context().wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")

    def client_hello(self):
        try:
            self.tls.do_handshake()
        except ssl.SSLWantReadError:
            pass
        return self.outgoing.read()

    def flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def feed(self, deadline):
        ready, _, _ = select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise Failure("the server sent nothing in time")
        data = self.sock.recv(65536)
        if not data:
            raise Failure("the server closed the connection")
        self.incoming.write(data)

    def handshake(self, deadline):
        while True:
            try:
                self.tls.do_handshake()
                self.flush()
                return
            except ssl.SSLWantReadError:
                self.flush()
                self.feed(deadline)

    def send(self, data):
        self.tls.write(data)
        self.flush()

    def recv_until(self, marker, deadline):
        got = b""
        while marker not in got:
            try:
                got += self.tls.read(65536)
            except ssl.SSLWantReadError:
                self.feed(deadline)
        return got


UPGRADE = clients.upgrade_request("localhost", key="dGhlIHNhbXBsZSBub25jZQ==")


def masked_text(payload):
    mask = b"\x01\x02\x03\x04"
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


# ---- the cases: each returns (connected_at, closed_at or None, reference time) ----------------

def silent_tcp(host, port, until):
    s, t0 = connect(host, port)
    with s:
        return t0, wait_closed(s, until(t0)), t0


def trickled_hello(host, port, until):
    s, t0 = connect(host, port)
    with s:
        hello = ManualTls(s).client_hello()
        check(len(hello) > 100, f"a ClientHello of {len(hello)} bytes?")
        s.setblocking(False)
        end = until(t0)
        for i in range(len(hello)):  # one byte per 20 ms: the whole hello would take ~10 s
            try:
                s.send(hello[i:i + 1])
            except (ConnectionResetError, BrokenPipeError):
                return t0, time.monotonic(), t0
            closed = wait_closed(s, min(end, time.monotonic() + 0.02))
            if closed is not None or time.monotonic() >= end:
                return t0, closed, t0
        raise Failure("the whole ClientHello went out byte by byte before any deadline: make it slower")


def abandoned_handshake(host, port, until):
    s, t0 = connect(host, port)
    with s:
        tls = ManualTls(s)
        s.sendall(tls.client_hello())
        tls.feed(t0 + T)  # the server's first flight arrives; the client never answers it
        return t0, wait_closed(s, until(t0)), t0


def tls_no_request(host, port, until):
    s, t0 = connect(host, port)
    with s:
        ManualTls(s).handshake(t0 + T)
        return t0, wait_closed(s, until(t0)), t0


def vanishing_peer(host, port, until):
    s, t0, tls = upgraded(host, port)
    with s:
        last = time.monotonic()  # the server's last read is after this
        tls.send(masked_text(b"hello"))
        echo = tls.recv_until(b"hello", time.monotonic() + 5)
        check(b"hello" in echo, "no echo over wss")
        # From here on the client reads only raw bytes: pings are never decrypted, never answered.
        return t0, wait_closed(s, until(last)), last


def upgraded(host, port):
    s, t0 = connect(host, port)
    tls = ManualTls(s)
    tls.handshake(t0 + T)
    tls.send(UPGRADE)
    head = tls.recv_until(b"\r\n\r\n", t0 + T)
    check(head.startswith(b"HTTP/1.1 101"), f"upgrade over TLS refused: {head[:60]!r}")
    return s, t0, tls


def close_notify_withheld(host, port, until):
    s, t0, tls = upgraded(host, port)
    with s:
        mask = b"\x05\x06\x07\x08"
        body = b"\x03\xe8"  # 1000
        sent = time.monotonic()  # the server's close deadline starts after this
        tls.send(bytes([0x88, 0x80 | len(body)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(body)))
        answer = tls.recv_until(b"\x88", time.monotonic() + 5)
        check(b"\x88" in answer, "no close frame back")
        # The server now waits for this side's close_notify (Beast's TLS teardown): never sent.
        return t0, wait_closed(s, until(sent)), sent


def corrupt_record():
    """An application-data record of TLS 1.2/1.3 framing whose bytes are random: it cannot decrypt."""
    return bytes([23, 3, 3, 0, 64]) + os.urandom(64)


def closed_after(s, sent):
    """wait_closed for a case the server must end at once; a reset while sending counts."""
    return wait_closed(s, sent + 1.0 + SLACK)


def oversized_hello(host, port, until):
    s, t0 = connect(host, port)
    with s:
        hello = bytes([22, 3, 1, 0x40, 0x00, 1]) + (100_000).to_bytes(3, "big") + bytes([3, 3]) + bytes(0x4000 - 6)
        try:
            s.sendall(hello)
        except (ConnectionResetError, BrokenPipeError):
            return t0, time.monotonic(), t0
        return t0, closed_after(s, t0), t0


def corrupt_record_request(host, port, until):
    s, t0 = connect(host, port)
    with s:
        tls = ManualTls(s)
        tls.handshake(t0 + T)
        sent = time.monotonic()
        s.sendall(corrupt_record())  # past the client's TLS object: its own state stays valid
        s.setblocking(False)
        end, closed, plain = sent + 1.0 + SLACK, None, b""
        while closed is None and time.monotonic() < end:
            ready, _, _ = select.select([s], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                continue
            try:
                data = s.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                closed = time.monotonic()
                break
            tls.incoming.write(data)
            try:
                plain += tls.tls.read(65536)  # what the server sent after the bad record, decrypted
            except (ssl.SSLWantReadError, ssl.SSLError, ssl.SSLZeroReturnError):
                pass
        check(not plain, f"the server answered a corrupted record with {plain[:60]!r} (HTTP on a broken TLS stream)")
        return t0, closed, sent


def corrupt_record_wss(host, port, until):
    s, t0, tls = upgraded(host, port)
    with s:
        tls.send(masked_text(b"before"))
        check(b"before" in tls.recv_until(b"before", time.monotonic() + 5), "no echo over wss")
        sent = time.monotonic()
        s.sendall(corrupt_record())
        return t0, closed_after(s, sent), sent


def wait_gone_unread(sock, until):
    """Without reading anything: the time the server reset or ended the connection (POLLERR,
    POLLHUP or POLLRDHUP), or None if it is still open at `until` (monotonic)."""
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return None
        if poller.poll(max(1, int(left * 1000))):
            return time.monotonic()


def close_behind_echo(host, port, until):
    s, t0, tls = upgraded(host, port)
    with s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        payload = bytes(64 * 1024)  # 12 x 64 KiB: far more than the socket buffers hold
        frame = bytes([0x82, 0x80 | 127]) + len(payload).to_bytes(8, "big") + b"\0\0\0\0" + payload  # mask 0
        for _ in range(12):
            tls.send(frame)
        time.sleep(0.3)  # the server has read it all; its echo is stuck behind the unread window
        sent = time.monotonic()  # the server's close deadline starts after this
        tls.send(bytes([0x88, 0x82]) + b"\0\0\0\0" + b"\x03\xe8")
        return t0, wait_gone_unread(s, until(sent)), sent


def not_tls(host, port, until):
    s, t0 = connect(host, port)
    with s:
        s.sendall(b"GET /stats HTTP/1.1\r\nHost: localhost\r\n\r\n")
        return t0, wait_closed(s, t0 + 1.0 + SLACK), t0


async def control(host, port, stop, result):
    import websockets
    sent = 0
    async with websockets.connect(f"wss://{host}:{port}/", ssl=clients.tls_client_context(), ping_interval=None,
                                  open_timeout=10) as ws:
        while not stop.is_set():
            msg = f"control {sent}"
            await ws.send(msg)
            answer = await asyncio.wait_for(ws.recv(), 5)
            check(answer == msg, f"control: sent {msg!r}, got {answer!r}")
            sent += 1
            await asyncio.sleep(0.1)
    result["echoes"] = sent


def get_stats(host, port):
    with urllib.request.urlopen(f"https://{host}:{port}/stats", timeout=10, context=clients.tls_client_context()) as r:
        return json.load(r)


def closes_when_counted(host, port, before, expect, bound=10.0):
    """The growth of /stats closed.* since `before`, read again and again over ONE keep-alive
    https connection until every cause in `expect` grew by exactly its count, one grew past it
    (counts only grow: no point waiting), or `bound` seconds pass. A client sees its connection
    end before the server has counted the close (the client's TLS stack can close the socket
    right after its close_notify; the server still has to read it, finish its teardown and count),
    so one read at once can be early: a sanitizer build with 4 I/O threads was seen 1 short.
    The polling connection is open throughout, so it adds no close of its own to what it reads."""
    conn = http.client.HTTPSConnection(host, port, timeout=10, context=clients.tls_client_context())
    try:
        end = time.monotonic() + bound
        while True:
            conn.request("GET", "/stats")
            response = conn.getresponse()
            check(response.status == 200, f"GET /stats: {response.status}")
            closed = json.loads(response.read())["closed"]
            check(not response.will_close, "/stats closed its keep-alive connection")
            delta = {k: closed[k] - before["closed"].get(k, 0) for k in closed}
            if all(delta.get(k) == n for k, n in expect.items()) or \
               any(delta.get(k, 0) > n for k, n in expect.items()) or time.monotonic() >= end:
                return delta
            time.sleep(0.05)
    finally:
        conn.close()


def run(binary, mode, extra):
    timed = mode != "none"
    server_err = tempfile.TemporaryFile()
    server = None
    try:
        server, host, port = start_server(binary, mode, extra, server_err)
        before = get_stats(host, port)
        check(before["tls"] is True, "/stats does not say tls: true")

        stop = threading.Event()
        control_result = {}

        def control_thread():
            try:
                asyncio.run(asyncio.wait_for(control(host, port, stop, control_result), 60))
            except Exception as e:  # noqa: BLE001 - reported below
                control_result["error"] = repr(e)

        ct = threading.Thread(target=control_thread)
        ct.start()
        time.sleep(0.3)

        handshake_until = (lambda t0: t0 + T + SLACK) if timed else (lambda t0: t0 + OPEN_FOR)
        heartbeat_until = (lambda last: last + PING + JITTER + PONG + SLACK) if timed else (lambda last: last + OPEN_FOR)
        cases = {
            "silent_tcp": (silent_tcp, handshake_until),
            "trickled_hello": (trickled_hello, handshake_until),
            "abandoned_handshake": (abandoned_handshake, handshake_until),
            "tls_no_request": (tls_no_request, handshake_until),
            "vanishing_peer": (vanishing_peer, heartbeat_until),
            "close_notify_withheld": (close_notify_withheld,
                                      (lambda ref: ref + CLOSE + SLACK) if timed else (lambda ref: ref + OPEN_FOR)),
            "close_behind_echo": (close_behind_echo,
                                  (lambda ref: ref + CLOSE + SLACK) if timed else (lambda ref: ref + OPEN_FOR)),
            "not_tls": (not_tls, None),
            "oversized_hello": (oversized_hello, None),
            "corrupt_record_request": (corrupt_record_request, None),
            "corrupt_record_wss": (corrupt_record_wss, None),
        }
        results = {}

        def run_case(name, fn, until):
            try:
                results[name] = fn(host, port, until)
            except Exception as e:  # noqa: BLE001 - reported below
                results[name] = e

        threads = [threading.Thread(target=run_case, args=(n, f, u)) for n, (f, u) in cases.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        stop.set()
        ct.join(30)

        failures, summary = [], []
        for name, r in results.items():
            if isinstance(r, Exception):
                failures.append(f"{name}: {r!r}")
                continue
            _, closed, ref = r
            after = None if closed is None else closed - ref
            summary.append(f"{name} {'open' if after is None else f'{after:.2f}s'}")
            if name in ("not_tls", "oversized_hello", "corrupt_record_request", "corrupt_record_wss"):
                if after is None or after > 1.0 + SLACK:
                    failures.append(f"{name}: still open {1.0 + SLACK} s after its bad bytes (expected closed at once)")
                continue
            low, high = {"vanishing_peer": (PING + PONG, PING + JITTER + PONG + SLACK),
                         "close_notify_withheld": (CLOSE, CLOSE + SLACK),
                         "close_behind_echo": (CLOSE, CLOSE + SLACK)}.get(name, (T, T + SLACK))
            if not timed:
                if after is not None:
                    failures.append(f"{name}: closed after {after:.2f} s with --timers=none (no liveness: expected open)")
            elif after is None:
                failures.append(f"{name}: still open after {high:.2f} s (expected closed in [{low}, {high}])")
            elif after < low - EARLY:
                failures.append(f"{name}: closed EARLY, after {after:.3f} s (expected >= {low})")
        if "error" in control_result:
            failures.append(f"control client: {control_result['error']}")
        elif control_result.get("echoes", 0) < 10:
            failures.append(f"control client: only {control_result.get('echoes', 0)} echoes")

        # tls_failed: not_tls, oversized_hello and the two corrupted records; none of them a bad
        # request or a transport error
        expect = {"tls_failed": 4, "bad_request": 0, "error": 0}
        if timed:
            # client_close: the two above, the control client, the first GET /stats
            expect.update({"handshake_timeout": 4, "dead_peer": 1, "client_close": 4})
        delta = closes_when_counted(host, port, before, expect)
        for cause, n in expect.items():
            if delta.get(cause) != n:
                failures.append(f"/stats closed.{cause} grew by {delta.get(cause)}, expected {n} (all: {delta})")

        # The drain over TLS: a wss:// client open at SIGTERM gets close 1001 (Beast's close
        # handshake and TLS teardown), then the server exits 0.
        signalled = []

        async def parked_until_sigterm():
            import websockets
            async with websockets.connect(f"wss://{host}:{port}/", ssl=clients.tls_client_context(), open_timeout=10) as ws:
                await ws.send("parked")
                await asyncio.wait_for(ws.recv(), 5)
                server.send_signal(signal.SIGTERM)
                signalled.append(True)
                try:
                    await asyncio.wait_for(ws.recv(), CLOSE + SLACK)
                    return "a message instead of the close"
                except websockets.ConnectionClosed as e:
                    return e.rcvd.code if e.rcvd is not None else "no close frame"
        try:
            drained = asyncio.run(asyncio.wait_for(parked_until_sigterm(), 20))
        except Exception as e:  # noqa: BLE001 - reported below
            drained = repr(e)
        if drained != 1001:
            failures.append(f"a wss:// client open at SIGTERM got {drained}, expected close 1001")
        if not signalled:
            server.send_signal(signal.SIGTERM)  # the parked client never got to send it
        try:
            code = server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            failures.append("demo_server still running 10 s after SIGTERM")
            code = None
        if code not in (0, None):
            failures.append(f"demo_server exited with {code} after SIGTERM")
        server_err.seek(0)
        log = server_err.read().decode(errors="replace")
        if "tls handshake failed" not in log:
            failures.append("no 'tls handshake failed' log line for the plain request")
        if failures:
            raise Failure("; ".join(failures) + "\n---- demo_server stderr (tail) ----\n" + log[-3000:])
        return f"--timers={mode}: " + ", ".join(summary) + f"; control {control_result['echoes']} echoes"
    finally:
        clients.kill_if_running(server)
        server_err.close()


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("wheel", "asio", "none"):
        print("usage: tls_hostile.py PATH_TO_DEMO_SERVER wheel|asio|none [EXTRA SERVER ARGS...]", file=sys.stderr)
        return 2
    extra = sys.argv[3:] + os.environ.get("IDLEWHEEL_DEMO_ARGS", "").split()
    try:
        detail = run(sys.argv[1], sys.argv[2], extra)
    except Failure as e:
        print(f"FAIL: tls_hostile: {e}")
        return 1
    print(f"PASS: tls_hostile {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
