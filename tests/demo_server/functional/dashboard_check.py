#!/usr/bin/python3
"""The dashboard in a real browser: headless Chromium (Debian's `chromium`) driven over the
Chrome DevTools Protocol with Python's `websockets` (Debian's python3-websockets; run with
/usr/bin/python3). No npm, no Selenium.

Usage: dashboard_check.py [--tls] PATH_TO_DEMO_SERVER [SCREENSHOT.png]   (default ./dashboard.png)

With --tls the server runs with --tls (its self-signed certificate made at start): the page is
opened as https:// (Chromium told to accept the certificate: --ignore-certificate-errors), must
report location.protocol "https:", and every client below speaks TLS (wss://, https://).

1. starts demo_server (ports 0, idle timeout 2 s) and Chromium with a fresh profile;
2. opens http://HOST:PORT/ and waits until the page shows live numbers (status "live",
   document.body.dataset.samples counting, 0 open TCP / WebSocket sessions);
3. opens 3 TCP and 2 WebSocket clients (kept active) and waits until the cards show 3 and 2,
   then closes one TCP client and waits for 2;
4. lets the clients go silent and waits until the "kicked: idle" card counts the 4 kicks and
   the open counts are back to 0;
5. sends a WebSocket frame that breaks the protocol and an upgrade with an invalid key, and waits
   until the "closes by cause" table shows them (protocol_error, bad_request) and has one row for
   every cause /stats reports;
6. saves a PNG screenshot (Page.captureScreenshot) and checks it is a real picture (PNG
   signature, > 10 KB).

Every wait is bounded; Chromium (its whole process group) and the server are always killed.
Prints one PASS or FAIL line; exits non-zero on failure.
"""

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from clients import Failure, check  # noqa: E402
import clients  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
IDLE_TIMEOUT_S = 2
OVERALL_LIMIT_S = 100   # below ctest's TIMEOUT (120 s), so the cleanup always runs
STEP_LIMIT_S = 20       # any one wait for the page
TLS = False             # --tls


def client_tls():
    """A TLS context for the server's self-signed certificate (not verified), or None."""
    return clients.tls_client_context() if TLS else None


def scheme(plain):
    return plain + "s" if TLS else plain


def start_server(binary, stderr_file):
    proc, fields = clients.start_demo_server(
        [binary, "--tcp-port", "0", "--http-port", "0", "--idle-timeout", f"{IDLE_TIMEOUT_S}s", "--ping-interval", "0s"]
        + (["--tls"] if TLS else []),
        stderr_file, timeout=10, need=("tcp", "http"))
    return proc, fields["tcp"], fields["http"]


def start_chromium(profile_dir, stderr_file):
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            # Containers often have a tiny /dev/shm; a fixed window makes the screenshot readable.
            "--disable-dev-shm-usage", "--window-size=1280,900", "--hide-scrollbars",
            f"--user-data-dir={profile_dir}", "--remote-debugging-port=0", "about:blank"]
    if TLS:
        args.insert(1, "--ignore-certificate-errors")  # the server's self-signed certificate
    # Its own process group, so the renderer and helper processes go with it.
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr_file, start_new_session=True)


async def devtools_endpoint(profile_dir, chromium):
    """ws://127.0.0.1:PORT/devtools/browser/ID from the DevToolsActivePort file (bounded)."""
    path = os.path.join(profile_dir, "DevToolsActivePort")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if chromium.poll() is not None:
            raise Failure(f"chromium exited with {chromium.returncode} before DevTools was ready")
        try:
            with open(path) as f:
                lines = f.read().split("\n")
            if len(lines) >= 2 and lines[0].strip() and lines[1].strip():
                return f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"
        except FileNotFoundError:
            pass
        await asyncio.sleep(0.1)
    raise Failure("chromium wrote no DevToolsActivePort within 30 s")


class DevTools:
    """A minimal CDP client: one command at a time, events ignored."""

    def __init__(self, ws):
        self.ws = ws
        self.last_id = 0

    async def call(self, method, params=None, session=None, timeout=STEP_LIMIT_S):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self.ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"no answer to {method} within {timeout} s")
            reply = json.loads(await asyncio.wait_for(self.ws.recv(), left))
            if reply.get("id") == self.last_id:
                if "error" in reply:
                    raise Failure(f"{method}: {reply['error']}")
                return reply.get("result", {})


# null while the page is still loading (no body or cards yet).
PAGE_STATE = """!document.body || !document.getElementById('c-tcp') ? null : JSON.stringify({
  samples: Number(document.body.dataset.samples || 0),
  status: document.getElementById('status').className,
  tcp: document.getElementById('c-tcp').textContent,
  ws: document.getElementById('c-ws').textContent,
  accepted: document.getElementById('c-accepted').textContent,
  idle: document.getElementById('c-idle').textContent,
  msgs: document.getElementById('c-msgs').textContent,
  meta: document.getElementById('meta').textContent,
  errors: document.getElementById('c-errors').textContent,
  causes: Object.fromEntries([...document.querySelectorAll('#t-causes tr')].map(r => [r.id.slice(6), r.cells[1].textContent])),
  rows: [...document.querySelectorAll('#t-causes tr')].map(r => [r.id.slice(6), r.cells[0].textContent, r.cells[0].title,
                                                              r.className === 'error'])
})"""


async def provoke_protocol_error_and_bad_key(http):
    """One WebSocket session ended by an unmasked frame (1002) and one upgrade with key 'abc' (400)."""
    host, port = http.rsplit(":", 1)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port), ssl=client_tls()), 10)
    writer.write(clients.upgrade_request(http, key="dGhlIHNhbXBsZSBub25jZQ=="))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    check(head.startswith(b"HTTP/1.1 101"), f"upgrade refused: {head!r}")
    writer.write(b"\x81\x02hi")  # a text frame without the mask every client frame must have
    close = await asyncio.wait_for(reader.readexactly(4), 10)
    check(close[0] == 0x88 and close[2:4] == b"\x03\xea", f"expected close 1002, got {close!r}")
    writer.close()
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port), ssl=client_tls()), 10)
    writer.write(clients.upgrade_request(http, key="abc"))
    answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    check(answer.startswith(b"HTTP/1.1 400"), f"an invalid key got {answer[:40]!r}, not 400")
    writer.close()


def stats_causes(http):
    """/stats's table of close causes (close_causes.hpp) as the dashboard's rows must show it:
    [name, label, tooltip, error] in the table's order; `closed` must count exactly those."""
    import urllib.request
    with urllib.request.urlopen(f"{scheme('http')}://{http}/stats", timeout=10, context=client_tls()) as r:
        doc = json.load(r)
    check(doc["tls"] == TLS, f"/stats says tls={doc['tls']}, the server was started with tls={TLS}")
    rows = [[c["name"], c["label"], f"{c['name']}: {c['help']}", c["error"]] for c in doc["close_causes"]]
    check([r[0] for r in rows] == list(doc["closed"]), f"/stats closed {list(doc['closed'])} is not its close_causes {rows}")
    return rows


async def page_state(cdp, session):
    result = await cdp.call("Runtime.evaluate", {"expression": PAGE_STATE, "returnByValue": True}, session)
    if "exceptionDetails" in result:
        raise Failure(f"evaluating the page state failed: {result['exceptionDetails']}")
    value = result["result"].get("value")
    return json.loads(value) if value is not None else None


async def wait_for_page(cdp, session, what, condition, timeout=STEP_LIMIT_S):
    deadline = time.monotonic() + timeout
    state = error = None
    while time.monotonic() < deadline:
        try:
            state = await page_state(cdp, session)
        except Failure as e:  # e.g. the context went away while the page (re)loads: ask again
            state, error = None, e
        if state is not None and condition(state):
            return state
        await asyncio.sleep(0.1)
    raise Failure(f"the dashboard never showed {what} within {timeout} s; last state: {state}; last error: {error}")


async def keep_active(tcp_clients, ws_clients, stop):
    """Echo on every client every 300 ms until `stop` is set, so none goes idle meanwhile."""
    while not stop.is_set():
        for reader, writer in tcp_clients:
            writer.write(b"alive\n")
            await writer.drain()
            await asyncio.wait_for(reader.readexactly(6), 5)
        for ws in ws_clients:
            await ws.send("alive")
            await asyncio.wait_for(ws.recv(), 5)
        try:
            await asyncio.wait_for(stop.wait(), 0.3)
        except asyncio.TimeoutError:
            pass


async def exercise(tcp, http, profile_dir, chromium, screenshot):
    import websockets

    endpoint = await devtools_endpoint(profile_dir, chromium)
    async with websockets.connect(endpoint, max_size=64 * 2**20, ping_interval=None, open_timeout=20) as browser:
        cdp = DevTools(browser)
        target = await cdp.call("Target.createTarget", {"url": "about:blank"})
        session = (await cdp.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}))["sessionId"]
        await cdp.call("Page.enable", {}, session)
        await cdp.call("Emulation.setDeviceMetricsOverride",
                       {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
        await cdp.call("Page.navigate", {"url": f"{scheme('http')}://{http}/"}, session)

        first = await wait_for_page(cdp, session, "live numbers",
                                    lambda s: s["samples"] >= 2 and s["status"] == "live" and s["tcp"] == "0" and s["ws"] == "0")

        host, port = tcp.rsplit(":", 1)
        tcp_clients = [await asyncio.wait_for(asyncio.open_connection(host, int(port)), 10) for _ in range(3)]
        protocol = (await cdp.call("Runtime.evaluate", {"expression": "location.protocol", "returnByValue": True},
                                   session))["result"].get("value")
        check(protocol == scheme("http") + ":", f"the page was loaded over {protocol!r}, expected {scheme('http')}:")
        ws_clients = [await websockets.connect(f"{scheme('ws')}://{http}/", ping_interval=None, open_timeout=10, ssl=client_tls())
                      for _ in range(2)]
        stop = asyncio.Event()
        keeper = asyncio.create_task(keep_active(tcp_clients, ws_clients, stop))
        try:
            opened = await wait_for_page(cdp, session, "3 TCP and 2 WebSocket sessions",
                                         lambda s: s["tcp"] == "3" and s["ws"] == "2" and s["samples"] > first["samples"])
            check(int(opened["accepted"]) >= int(first["accepted"]) + 5, f"accepted did not grow by 5: {first} -> {opened}")
            check(int(opened["msgs"]) > int(first["msgs"]), f"messages echoed did not grow: {first} -> {opened}")
            # One TCP client leaves.
            stop.set()
            await asyncio.wait_for(keeper, 10)
            reader, writer = tcp_clients.pop()
            writer.close()
            stop = asyncio.Event()
            keeper = asyncio.create_task(keep_active(tcp_clients, ws_clients, stop))
            await wait_for_page(cdp, session, "2 TCP sessions after one left",
                                lambda s: s["tcp"] == "2" and s["ws"] == "2" and s["samples"] > opened["samples"])
        finally:
            stop.set()
            await asyncio.wait_for(keeper, 10)

        # Silence: the four remaining clients are kicked for idleness, live on the page. (The
        # browser's own spare keep-alive connections may be kicked too: at least four more.)
        kicked = await wait_for_page(cdp, session, "4 more idle kicks",
                                     lambda s: int(s["idle"]) >= int(first["idle"]) + 4 and s["tcp"] == "0" and s["ws"] == "0",
                                     timeout=IDLE_TIMEOUT_S + STEP_LIMIT_S)
        for ws in ws_clients:
            await ws.close()
        for _, writer in tcp_clients:
            writer.close()

        await provoke_protocol_error_and_bad_key(http)
        rows = stats_causes(http)
        check({"protocol_error", "backlog_budget", "http_idle"} <= {r[0] for r in rows}, f"/stats lacks causes: {rows}")
        table = await wait_for_page(cdp, session, "protocol_error and bad_request closes in the cause table",
                                    lambda s: int(s["causes"].get("protocol_error", "0")) >= 1
                                    and int(s["causes"].get("bad_request", "0")) >= 1)
        # One row per cause of the server's table, in its order, with its label, help and error class.
        check(table["rows"] == rows, f"the cause table's rows {table['rows']} are not /stats close_causes {rows}")
        check(int(table["causes"]["idle"]) >= 4, f"the cause table's idle row: {table['causes']}")
        # protocol_error and bad_request are errors (their rows say so), idle is not: at least 2.
        check(int(table["errors"]) >= 2, f"the 'closed on errors' card says {table['errors']}")

        shot = await cdp.call("Page.captureScreenshot", {"format": "png"}, session)
        png = base64.b64decode(shot["data"])
        os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
        with open(screenshot, "wb") as f:
            f.write(png)
        check(png.startswith(b"\x89PNG\r\n\x1a\n"), "the screenshot is not a PNG")
        check(len(png) > 10 * 1024, f"the screenshot is only {len(png)} bytes: an empty page?")
        await cdp.call("Target.closeTarget", {"targetId": target["targetId"]})
        return (f"live samples {first['samples']} -> {kicked['samples']}, TCP 0 -> 3 -> 2 -> 0, WebSocket 0 -> 2 -> 0, "
                f"idle kicks {first['idle']} -> {kicked['idle']}, cause table {table['causes']}; screenshot {screenshot} ({len(png)} bytes)")


def main():
    global TLS
    if len(sys.argv) > 1 and sys.argv[1] == "--tls":
        TLS = True
        del sys.argv[1]
    if len(sys.argv) not in (2, 3):
        print("usage: dashboard_check.py [--tls] PATH_TO_DEMO_SERVER [SCREENSHOT.png]", file=sys.stderr)
        return 2
    screenshot = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.getcwd(), "dashboard.png")
    missing = clients.websockets_missing("dashboard_check")
    if missing:
        print(missing)
        return 1
    if not os.access(CHROMIUM, os.X_OK):
        print(f"FAIL: dashboard_check: {CHROMIUM} not found (scripts/setup.sh test installs Debian's chromium)")
        return 1

    server = chromium = None
    server_err = tempfile.TemporaryFile()
    chromium_err = tempfile.TemporaryFile()
    profile_dir = tempfile.mkdtemp(prefix="idlewheel-chromium-")
    try:
        server, tcp, http = start_server(sys.argv[1], server_err)
        chromium = start_chromium(profile_dir, chromium_err)
        detail = asyncio.run(asyncio.wait_for(exercise(tcp, http, profile_dir, chromium, screenshot), OVERALL_LIMIT_S))
        clients.stop_process_group(chromium)
        clients.sigterm_expect_exit_0(server, timeout=5)
        print(f"PASS: dashboard_check{' (tls)' if TLS else ''}: {detail}")
        return 0
    except Exception as e:  # one FAIL line, whatever went wrong
        print(f"FAIL: dashboard_check: {type(e).__name__}: {e}")
        for name, f in (("demo_server", server_err), ("chromium", chromium_err)):
            f.seek(0)
            print(f"---- {name} stderr (tail):\n" + f.read().decode(errors="replace")[-4000:] + "----", file=sys.stderr)
        return 1
    finally:
        clients.stop_process_group(chromium)
        clients.kill_if_running(server)
        shutil.rmtree(profile_dir, ignore_errors=True)
        server_err.close()
        chromium_err.close()


if __name__ == "__main__":
    sys.exit(main())
