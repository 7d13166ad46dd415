#!/usr/bin/python3
"""demo_server against a WebSocket client no one on this project wrote: Python's `websockets`
(Debian's python3-websockets; run with /usr/bin/python3).

Usage: python_ws_client.py PATH_TO_DEMO_SERVER

Starts the server (ports 0, a short idle timeout), echoes text and binary messages, then stays
silent and expects the server's close 1000 "idle timeout" — not before the idle timeout, and
within a generous bound after — as websockets reports it; then stops the server with SIGTERM
and expects exit status 0. Prints one PASS or FAIL line; exits non-zero on failure. Every wait
is bounded, and the server is killed whatever happens.
"""

import asyncio
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from clients import Failure, check  # noqa: E402
import clients  # noqa: E402

IDLE_TIMEOUT_S = 0.8
SLACK_S = 1.5           # upper-bound allowance: loaded 2-core CI, sanitizer builds
OVERALL_LIMIT_S = 60    # below ctest's TIMEOUT, so the cleanup always runs


def start_server(binary, stderr_file):
    """Starts demo_server; returns (process, "host:port" of HTTP). Waits at most 10 s."""
    proc, fields = clients.start_demo_server(
        [binary, "--tcp-port", "0", "--http-port", "0", "--idle-timeout", "800ms", "--ping-interval", "0s"],
        stderr_file, timeout=10, need=("http",))
    return proc, fields["http"]


def close_code_and_reason(ws, exc):
    """The close frame the server sent, as websockets reports it (any version from 10 on)."""
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is not None:
        return rcvd.code, rcvd.reason
    return getattr(ws, "close_code", getattr(exc, "code", None)), getattr(ws, "close_reason", getattr(exc, "reason", None))


async def exercise(http):
    import websockets  # noqa: E402 (a clear message if it is missing, below)

    # ping_interval=None: the client itself sends nothing unasked, so it is really silent.
    async with websockets.connect(f"ws://{http}/", ping_interval=None, max_size=2**20, open_timeout=10,
                                  close_timeout=5) as ws:
        texts = ["hello", "h\u00e9llo w\u00f6rld \u2713", "", "x" * 50000]
        for text in texts:
            await ws.send(text)
            echo = await asyncio.wait_for(ws.recv(), 5)
            check(isinstance(echo, str), f"text message came back as {type(echo).__name__}")
            check(echo == text, f"text echo differs ({len(echo)} vs {len(text)} characters)")
        for size in (1, 256, 4096, 60000):
            data = bytes((i * 7 + size) & 0xFF for i in range(size))
            await ws.send(data)
            echo = await asyncio.wait_for(ws.recv(), 5)
            check(isinstance(echo, bytes), f"binary message came back as {type(echo).__name__}")
            check(echo == data, f"binary echo of {size} bytes differs")

        # Silence: the server must close with 1000 "idle timeout", not before the idle timeout
        # counted from its last read, which comes after this moment (taken before the last send;
        # the echo's arrival may be late on a loaded machine, so it is no safe reference).
        silent_from = time.monotonic()
        await ws.send("last words")
        check(await asyncio.wait_for(ws.recv(), 5) == "last words", "the last echo differs")
        try:
            unexpected = await asyncio.wait_for(ws.recv(), IDLE_TIMEOUT_S + SLACK_S + 2)
            raise Failure(f"expected the idle close, got a message: {unexpected!r}")
        except websockets.exceptions.ConnectionClosed as e:
            waited = time.monotonic() - silent_from
            code, reason = close_code_and_reason(ws, e)
            check(code == 1000, f"close code {code}, expected 1000")
            check(reason == "idle timeout", f"close reason {reason!r}, expected 'idle timeout'")
            check(waited >= IDLE_TIMEOUT_S, f"kicked after {waited:.3f} s, before the idle timeout {IDLE_TIMEOUT_S} s")
            check(waited <= IDLE_TIMEOUT_S + SLACK_S, f"kicked after {waited:.3f} s, too late")
            return f"idle close 1000 'idle timeout' after {waited:.3f} s"
        except asyncio.TimeoutError:
            raise Failure("no close from the server after the idle timeout")


def main():
    if len(sys.argv) != 2:
        print("usage: python_ws_client.py PATH_TO_DEMO_SERVER", file=sys.stderr)
        return 2
    missing = clients.websockets_missing("python_ws_client")
    if missing:
        print(missing)
        return 1
    import websockets
    proc = None
    stderr_file = tempfile.TemporaryFile()
    try:
        proc, http = start_server(sys.argv[1], stderr_file)
        detail = asyncio.run(asyncio.wait_for(exercise(http), OVERALL_LIMIT_S))
        clients.sigterm_expect_exit_0(proc, timeout=5)
        print(f"PASS: python_ws_client (websockets {websockets.__version__}): text and binary echoed, {detail}, "
              "exit 0 after SIGTERM")
        return 0
    except Exception as e:  # one FAIL line, whatever went wrong
        print(f"FAIL: python_ws_client: {type(e).__name__}: {e}")
        clients.kill_if_running(proc)
        stderr_file.seek(0)
        print("---- demo_server stderr:\n" + stderr_file.read().decode(errors="replace") + "----", file=sys.stderr)
        return 1
    finally:
        clients.kill_if_running(proc)
        stderr_file.close()

if __name__ == "__main__":
    sys.exit(main())
