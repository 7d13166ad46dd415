# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""What the Python test clients share: failing a check, starting and stopping the server under
test, TLS client contexts, raw loopback sockets, a WebSocket upgrade request.

Used by tests/example_checks/*_check.py, tests/demo_server/functional/{dashboard_check,
python_ws_client}.py and tests/demo_server/reliability/tls_hostile.py. Each finds it from its
own path (ctest's COMMAND lines name only the script):

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
    import clients

Standard library only (run with Debian's /usr/bin/python3, 3.11 here): importing it never
imports `websockets` (http_server_async_check.py runs under the interpreter CMake found,
which may not have it); websockets_missing() is the one place that tries it.

Failing a check, two ways (a script uses one):
  Failure, check(ok, what)   raises Failure(what) at the first failed check; the demo_server
                             scripts catch it and print one "FAIL: <script>: ..." line.
  Tally                      tally.check(ok, what) records `what`, prints "FAIL: what" and goes
                             on, so a run lists every failure (the example checks);
                             tally.failures is the list; tally.verdict(name, evidence) prints
                             the last lines and returns the exit code (0 or 1).

The server under test (every wait bounded unless said; the process always stopped by its PID):
  example_args(default_s)    SERVER THREADS [MS] from sys.argv: (server, threads, seconds,
                             slack = 2 s + seconds, an upper-bound allowance only).
  start_announcing(argv, skip_noise=False)
                             an example server printing "listening on port N" first: Popen with
                             stdout piped (text), stderr to a temporary file (a pipe nobody
                             reads during the run fills up, and a server writing an error line
                             per connection then blocks in write(2): Beast's coroutine examples
                             do), and server_env(); returns
                             (proc, port), port None (after printing "server did not start: ...")
                             if the first line is not that. No timeout of its own: readline waits
                             for the line or EOF, bounded by ctest's TIMEOUT. skip_noise: lines
                             before it are skipped (a debugger's own).
  stop_by_sigterm(proc, timeout=30)
                             SIGTERM by PID if it still runs, then collects it: (exit status,
                             stderr text or None: start_announcing's file, or the pipe);
                             after `timeout` s it is killed and the status is None.
  Tally.check_stderr_clean(err)
                             one failed check if the server's stderr has a sanitizer report, a
                             runtime error or an "idlewheel:" line (its last 6000 characters
                             printed).
  server_env()               os.environ with TSAN_OPTIONS defaulted (halt_on_error=1,
                             exitcode=66): a ThreadSanitizer report ends the server.
  start_demo_server(argv, stderr_file, timeout, need=("http",))
                             demo_server, stdout piped: waits at most `timeout` s for its line
                             "listening tcp=HOST:PORT http=HOST:PORT ..."; returns (proc, fields)
                             (fields: {"tcp": "HOST:PORT", ...}). Raises Failure, the process
                             killed first, if no line comes in time, stdout closes first, or the
                             line does not start with "listening " or lacks a field of `need`.
  sigterm_expect_exit_0(proc, timeout=5)
                             SIGTERM, then Failure if demo_server runs `timeout` s later or
                             exits with a status other than 0.
  kill_if_running(proc, timeout=10)
                             SIGKILL and reap, if proc is not None and still runs.
  stop_process_group(proc)   SIGTERM (5 s), then SIGKILL (10 s), to proc's whole process group
                             (a browser started with start_new_session=True), until it is gone.
  free_port()                a loopback port free at the moment of the call (someone may take
                             it before the server binds: the caller retries).
  make_certificate(directory)
                             a throwaway self-signed certificate and key (openssl req, RSA 2048,
                             one day, CN and subjectAltName IP 127.0.0.1) in `directory`:
                             (cert path, key path); raises CalledProcessError if openssl fails.
  websockets_missing(name)   None if `import websockets` works, else the FAIL line to print.

Clients (the timeouts are the caller's: each is an upper bound, seconds):
  tls_client_context(cafile=None)
                             with cafile: trusts that certificate only (verified, hostname
                             checked); without: accepts any certificate (the servers' are
                             self-signed, made at start).
  client_hello(ctx=None, server_hostname="127.0.0.1")
                             the bytes of the ClientHello `ctx` sends first (no socket: memory
                             BIOs); an IP as server_hostname sends no SNI.
  upgrade_request(authority, key=None)
                             a WebSocket upgrade request for "/" with Host `authority`; key None:
                             a fresh random Sec-WebSocket-Key.
  raw_connect(port, timeout, host="127.0.0.1")
                             a non-blocking TCP socket connected within `timeout` (else
                             asyncio.TimeoutError, the socket closed).
  read_to_eof(sock, limit)   (async, a raw non-blocking socket) everything until EOF or a reset;
                             None if `limit` s pass without a byte or the end.
  stream_read_to_eof(reader, limit)
                             the same on an asyncio StreamReader (plain or TLS): an abrupt end of
                             TLS counts as the end.
  trickle_until_closed(port, data, period, limit)
                             (async) connects and sends `data` every `period` s (a line never
                             finished) until the server closes or `limit` s pass: (seconds from
                             before the connect to the end, read_to_eof's result: None if no end).
  failed_tasks(named)        (async) runs [(name, coroutine)] at once: [(name, exception)] of
                             those that raised.

WebSocket clients (these two import websockets when called; `ws` is an open client connection,
`check` the script's):
  keep_echoing(ws, name, label, period, duration, timeout, check)
                             (async) sends "NAME N" every `period` s for `duration` s, each echo
                             awaited within `timeout` s (else asyncio.TimeoutError) and checked
                             equal; at least 8 echoes checked. Failures read "LABEL: ...".
  expect_idle_close(ws, label, t0, idle, limit, check)
                             (async) only reads, for at most `limit` s: checks the server closes
                             with 1000 "idle timeout", not before `idle` s after t0 (monotonic),
                             and sends no message. Returns the seconds from t0 to the close, or
                             None if no close came.
  expect_kept(ws, label, duration, timeout, check)
                             (async) only reads (the client library answers pings) for
                             `duration` s: checks that no message and no close comes, then that
                             one message still echoes within `timeout` s.

Raw WebSocket clients (no library: they see and time each ping; plain or TLS asyncio streams):
  ws_upgrade_by_hand(port, timeout, ctx=None)
                             (async) connects (TLS with `ctx`), sends an upgrade request, reads
                             the response head: (reader, writer, t_sent, head), t_sent the
                             monotonic time just before the request was written (the server
                             received its last byte after it).
  read_ws_frame(reader, limit)
                             (async) one unmasked server frame: (opcode, payload); raises
                             asyncio.TimeoutError after `limit` s, IncompleteReadError at EOF.
  client_ws_frame(opcode, payload=b"")
                             a masked client frame (FIN set).
  answer_pings(reader, writer, label, t_last, idle, duration, slack, check)
                             (async) Beast's keep-alive pings (timeout{.., idle, true}) answered:
                             for `duration` s after t_last, each ping checked to come no sooner
                             than idle / 2 after the last byte this client sent and within
                             idle / 2 + slack, and answered with a pong at once; nothing else may
                             come (no close, no drop). Then one text message must echo. Returns
                             the number of pings.
  expect_dead_peer_drop(reader, label, t_last, idle, slack, check)
                             (async) Beast's keep-alive ping unanswered: one ping, no sooner than
                             idle / 2 after t_last (the last byte this client sent) and within
                             idle / 2 + slack, then the connection dropped (EOF or reset, no
                             close frame, nothing else) no sooner than idle after t_last and
                             within idle + slack. Returns the seconds from t_last to the drop,
                             or None.
"""

import asyncio
import base64
import os
import select
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

LOOPBACK = "127.0.0.1"


# ---- failing a check ---------------------------------------------------------------------------

class Failure(Exception):
    """A check failed; the message says what."""


def check(ok, what):
    if not ok:
        raise Failure(what)


class Tally:
    """Failed checks, counted and printed as they happen; the run goes on."""

    SERVER_STDERR_MARKERS = ("ThreadSanitizer", "AddressSanitizer", "runtime error", "idlewheel:")

    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        """Counts and prints `what` if not ok; returns ok (so a caller can go on only if it held)."""
        if not ok:
            self.failures.append(what)
            print("FAIL:", what, flush=True)
        return ok

    def check_stderr_clean(self, err):
        for marker in self.SERVER_STDERR_MARKERS:
            if marker in err:
                self.check(False, f"server stderr has {marker!r}")
                print(err[-6000:], flush=True)
                break

    def verdict(self, name, evidence=None):
        """0 if no check failed; else prints `evidence` (if not None) and the count, returns 1."""
        if self.failures:
            if evidence is not None:
                print(evidence, flush=True)
            print(f"{name}: {len(self.failures)} checks failed", flush=True)
            return 1
        print(f"{name}: every check passed", flush=True)
        return 0


# ---- the server under test ---------------------------------------------------------------------

def example_args(default_s):
    server = sys.argv[1]
    threads = int(sys.argv[2])
    seconds = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else default_s
    return server, threads, seconds, 2.0 + seconds


def server_env():
    env = dict(os.environ)
    env.setdefault("TSAN_OPTIONS", "halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4")
    return env


ANNOUNCEMENT = "listening on port "


def _stderr_text(proc, err):
    errfile = getattr(proc, "stderr_file", None)
    if err is None and errfile is not None:
        errfile.seek(0)
        err = errfile.read()
        errfile.close()
    return err


def start_announcing(argv, skip_noise=False):
    errfile = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errfile, env=server_env(), text=True)
    proc.stderr_file = errfile
    line = proc.stdout.readline()
    while line and not line.startswith(ANNOUNCEMENT) and skip_noise:
        line = proc.stdout.readline()
    if not line.startswith(ANNOUNCEMENT):
        if proc.poll() is not None:
            errfile.seek(0)
            print("server did not start:", line, errfile.read(), flush=True)
        else:
            print("server did not start:", line, flush=True)
        return proc, None
    return proc, int(line.split()[-1])


def stop_by_sigterm(proc, timeout=30):
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=timeout)
        return proc.returncode, _stderr_text(proc, err)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return None, _stderr_text(proc, err)


def start_demo_server(argv, stderr_file, timeout, need=("http",)):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr_file)
    try:
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None:
                raise Failure(f"no listening line from demo_server (got {line!r})")
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 0.1))
            if ready:
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:
                    raise Failure(f"demo_server closed stdout before its listening line (got {line!r})")
                line += chunk
        text = line.decode()
        fields = dict(f.split("=", 1) for f in text.split()[1:] if "=" in f)
        check(text.startswith("listening ") and all(k in fields for k in need), f"unexpected listening line {text!r}")
        return proc, fields
    except BaseException:
        kill_if_running(proc)
        raise


def sigterm_expect_exit_0(proc, timeout=5):
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"demo_server still running {timeout} s after SIGTERM")
    check(code == 0, f"demo_server exited with {code} after SIGTERM")


def kill_if_running(proc, timeout=10):
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(timeout=timeout)


def stop_process_group(proc):
    if proc is None:
        return
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return  # the whole group is gone
            time.sleep(0.05)
    if proc.poll() is None:
        proc.wait(timeout=10)


def free_port():
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def make_certificate(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", f"/CN={LOOPBACK}", "-addext", f"subjectAltName=IP:{LOOPBACK}",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def websockets_missing(name):
    try:
        import websockets  # noqa: F401
        return None
    except ImportError:
        return (f"FAIL: {name}: Debian's python3-websockets is not installed for {sys.executable} "
                "(scripts/setup.sh test installs it)")


# ---- clients -----------------------------------------------------------------------------------

def tls_client_context(cafile=None):
    if cafile is not None:
        return ssl.create_default_context(cafile=cafile)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def client_hello(ctx=None, server_hostname=LOOPBACK):
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = (ctx or tls_client_context()).wrap_bio(incoming, outgoing, server_hostname=server_hostname)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def upgrade_request(authority, key=None):
    if key is None:
        key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET / HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


async def raw_connect(port, timeout, host=LOOPBACK):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(s, (host, port)), timeout)
    except BaseException:
        s.close()
        raise
    return s


# asyncio.TimeoutError is the built-in TimeoutError from Python 3.11, an OSError: it is caught
# first, or a timeout would count as the server's end of the connection.

async def read_to_eof(sock, limit):
    loop = asyncio.get_running_loop()
    data = b""
    try:
        while True:
            chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), limit)
            if not chunk:
                return data
            data += chunk
    except asyncio.TimeoutError:
        return None
    except (ConnectionResetError, BrokenPipeError):
        return data


async def stream_read_to_eof(reader, limit):
    data = b""
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(65536), limit)
            if not chunk:
                return data
            data += chunk
    except asyncio.TimeoutError:
        return None
    except (OSError, EOFError):  # a reset, an abrupt end of TLS (ssl.SSLError is an OSError)
        return data


async def trickle_until_closed(port, data, period, limit):
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    s = await raw_connect(port, limit)
    try:
        reader = asyncio.ensure_future(read_to_eof(s, limit))
        while not reader.done() and time.monotonic() - t0 < limit:
            try:
                await loop.sock_sendall(s, data)
            except OSError:
                break
            await asyncio.wait([reader], timeout=period)
        got = await reader
        return time.monotonic() - t0, got
    finally:
        s.close()


async def failed_tasks(named):
    results = await asyncio.gather(*(c for _, c in named), return_exceptions=True)
    return [(name, r) for (name, _), r in zip(named, results) if isinstance(r, BaseException)]


# ---- WebSocket clients -------------------------------------------------------------------------

async def keep_echoing(ws, name, label, period, duration, timeout, check):
    end = time.monotonic() + duration
    n = 0
    while time.monotonic() < end:
        msg = f"{name} {n}"
        await ws.send(msg)
        got = await asyncio.wait_for(ws.recv(), timeout)
        check(got == msg, f"{label}: echo {got!r} != {msg!r}")
        n += 1
        await asyncio.sleep(period)
    check(n >= 8, f"{label}: only {n} echoes")


async def expect_idle_close(ws, label, t0, idle, limit, check):
    import websockets
    try:
        await asyncio.wait_for(ws.recv(), limit)
        check(False, f"{label}: got a message")
    except websockets.ConnectionClosed as e:
        took = time.monotonic() - t0
        code = e.rcvd.code if e.rcvd else None
        reason = e.rcvd.reason if e.rcvd else None
        check(code == 1000 and reason == "idle timeout", f"{label}: closed with {code} {reason!r}")
        check(took >= idle, f"{label}: closed after {took:.3f}s, before the idle timeout {idle}s")
        return took
    except asyncio.TimeoutError:
        check(False, f"{label}: not closed within {limit:.1f}s")
    return None


async def expect_kept(ws, label, duration, timeout, check):
    import websockets
    try:
        got = await asyncio.wait_for(ws.recv(), duration)
        check(False, f"{label}: got a message {got!r}")
        return
    except asyncio.TimeoutError:
        pass  # nothing came, and the connection is open: kept
    except websockets.ConnectionClosed as e:
        check(False, f"{label}: closed by the server ({e!r}) though it answered every ping")
        return
    await ws.send(f"{label} still here")
    got = await asyncio.wait_for(ws.recv(), timeout)
    check(got == f"{label} still here", f"{label}: echo {got!r}")


# ---- raw WebSocket clients ---------------------------------------------------------------------

async def ws_upgrade_by_hand(port, timeout, ctx=None):
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(LOOPBACK, port, ssl=ctx, server_hostname=LOOPBACK if ctx else None), timeout)
    t_sent = time.monotonic()
    writer.write(upgrade_request(f"{LOOPBACK}:{port}"))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    return reader, writer, t_sent, head


async def read_ws_frame(reader, limit):
    async def frame():
        b0, b1 = await reader.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(await reader.readexactly(2), "big")
        elif n == 127:
            n = int.from_bytes(await reader.readexactly(8), "big")
        return b0 & 0x0F, await reader.readexactly(n)
    return await asyncio.wait_for(frame(), limit)


def client_ws_frame(opcode, payload=b""):
    mask = os.urandom(4)
    n = len(payload)
    length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return bytes([0x80 | opcode]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


WS_TEXT, WS_CLOSE, WS_PING, WS_PONG = 0x1, 0x8, 0x9, 0xA


async def answer_pings(reader, writer, label, t_last, idle, duration, slack, check):
    end = t_last + duration
    pings = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        try:
            op, payload = await read_ws_frame(reader, min(end, t_last + idle / 2 + slack) - now)
        except asyncio.TimeoutError:
            if time.monotonic() < end:
                check(False, f"{label}: no ping within {idle / 2 + slack:.1f}s of silence")
                return pings
            break
        except (asyncio.IncompleteReadError, OSError) as e:
            check(False, f"{label}: dropped ({type(e).__name__}) {time.monotonic() - t_last:.3f}s after its last "
                         f"pong, though it answered every ping")
            return pings
        took = time.monotonic() - t_last
        if not check(op == WS_PING, f"{label}: a frame with opcode {op:#x} ({payload[:20]!r}), expected pings only"):
            return pings
        pings += 1
        check(took >= idle / 2, f"{label}: ping {pings} {took:.3f}s after its last byte, before idle / 2 = {idle / 2}s")
        check(took <= idle / 2 + slack, f"{label}: ping {pings} only {took:.3f}s after its last byte")
        t_last = time.monotonic()
        writer.write(client_ws_frame(WS_PONG, payload))
        await writer.drain()
    message = f"{label} kept".encode()
    writer.write(client_ws_frame(WS_TEXT, message))
    await writer.drain()
    while True:
        op, payload = await read_ws_frame(reader, slack)
        if op == WS_PING:  # one may have been due as the message went out
            writer.write(client_ws_frame(WS_PONG, payload))
            continue
        check(op == WS_TEXT and payload == message, f"{label}: echo {op:#x} {payload[:40]!r}")
        return pings


async def expect_dead_peer_drop(reader, label, t_last, idle, slack, check):
    ping_at = None
    while True:
        try:
            op, payload = await read_ws_frame(reader, max(0.0, t_last + idle + slack - time.monotonic()))
        except asyncio.TimeoutError:
            check(False, f"{label}: not dropped within {idle + slack:.1f}s of its last byte")
            return None
        except (asyncio.IncompleteReadError, OSError):
            break  # the drop: EOF, a reset, an abrupt end of TLS
        took = time.monotonic() - t_last
        if ping_at is None and op == WS_PING:
            ping_at = took
            check(took >= idle / 2, f"{label}: ping {took:.3f}s after its last byte, before idle / 2 = {idle / 2}s")
            check(took <= idle / 2 + slack, f"{label}: ping only {took:.3f}s after its last byte")
        else:
            check(False, f"{label}: a frame with opcode {op:#x} ({payload[:20]!r}) {took:.3f}s in, expected one "
                         f"ping then a drop")
    took = time.monotonic() - t_last
    check(ping_at is not None, f"{label}: dropped after {took:.3f}s without a ping first")
    check(took >= idle, f"{label}: dropped {took:.3f}s after its last byte, before idle = {idle}s")
    check(took <= idle + slack, f"{label}: dropped only {took:.3f}s after its last byte")
    return took
