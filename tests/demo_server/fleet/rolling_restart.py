#!/usr/bin/python3
"""A rolling restart through a real HAProxy: deploy/haproxy/haproxy.cfg (Debian's haproxy 2.6)
in front of 3 demo_server processes, a loadgen --reconnect load through it, and each server in
turn stopped with SIGTERM (--drain-spread), taken out of rotation by the health check (GET
/healthz answers 503 from the signal on), drained, exited 0 and started again on its port.

Usage: rolling_restart.py DEMO_SERVER LOADGEN [--clients N] [--out DIR] [--bench] [--lifetime SECONDS]
  --bench: the bench/fleet.sh form (more clients, longer timeouts), prints a figures table.

Everything listens on 127.0.0.1, on ports picked free at the start. HAProxy's config is the
recipe's own file, its ports, socket and timeouts set through the environment; haproxy, the
servers and loadgen are started here and killed by PID in a `finally`, whatever happens.

What is asserted ("no echo lost" is defined in docs/fleet.md; loadgen's sequence numbers,
bench/loadgen/README.md "Reconnecting"):
  - /healthz: 200 from every server before the restart; each SIGTERM'd server is seen DOWN by
    HAProxy's health check (its stats socket) while it still runs, within 2 check intervals +
    slack of the signal; each server exits 0 and its restart is seen UP again.
  - loadgen's own checks pass: no active client ends closed (every 1001 was followed by a
    reconnect through HAProxy, and it carried on), no early, missed or wrong kick (idle and pinger
    clients: 1000 "idle timeout" at the server's idle timeout, never before; dead clients
    dropped by the heartbeat), no error, no failed connect or upgrade.
  - echoes: per client every echo is the awaited sequence number (in order, no gap, no
    duplicate: echo_mismatch 0), and every message sent was echoed once, or was still in
    flight when loadgen stopped (echoes lost 0).
  - rebalancing: the servers run with --max-lifetime 9s --max-lifetime-jitter 4s (sessions
    closed with 1001 "max lifetime", their clients reconnect through leastconn); 16 s after the
    last restarted server is back UP, each server holds 1/3 +- 0.08 of the open sessions (the
    active clients). With --lifetime 0 the spread is printed, not asserted (the baseline).
  - an HAProxy reload (a new haproxy with -sf) with 3 tunnels open: the old process is still
    there after 1 s (its tunnels), gone within hard-stop-after (2 s here) + slack, its tunnels
    cut; the new one upgrades. HAProxy's request log (option httplog) has lines; the retried
    ones are counted and printed.
  - the servers (every process, restarted ones included, summed from the /stats document each
    prints as it exits) agree with the clients:
      websocket_going_away (1001 sent) == closes with 1001 the clients saw (going_away), but for
        those of the last half second (--max-lifetime closes go on until loadgen stops)
      closed.idle (1000 idle timeout)  == idle + pinger clients that ended with 1000 idle
      closed.dead_peer                 == dead clients dropped
      echoed = messages - messages_unechoed,
        clients' echoes <= echoed <= clients' echoes + messages in flight at the end
      messages_unechoed (read after the close began) <= messages the clients resent
      reconnects == closes with 1001 (every 1001 led to a new session), but for the last half
        second's
Prints one PASS or FAIL line (and the figures); exits non-zero on failure.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import clients  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPE = os.path.join(HERE, "..", "..", "..", "deploy", "haproxy", "haproxy.cfg")

# The test's settings; --bench uses the second column.
SETTINGS = {
    #                 test    bench
    "clients":       (2400,   9000),
    "idle_timeout":  (8.0,    15.0),
    "ping_interval": (2.0,    5.0),
    "pong_timeout":  (2.0,    5.0),
    "ping_jitter":   (0.5,    1.0),
    "close_timeout": (1.0,    2.0),
    "drain_spread":  (2.0,    5.0),
    "check_inter":   (0.3,    0.5),
    "interval":      (0.5,    1.0),   # active clients' send interval
    "settle":        (3.0,    4.0),   # after every client is up, before the first SIGTERM
    "connect_rate":  (800,    1500),
    # --max-lifetime (0: off) and --max-lifetime-jitter: the rebalancing after the restarts.
    # Longer than the idle timeout, so idle clients and pingers still meet their idle kick.
    "max_lifetime":  (9.0,    0.0),
    "lifetime_jitter": (4.0,  0.0),
}
SPREAD_TOLERANCE = 0.08  # each server's share of the open sessions within 1/3 +- this
HARD_STOP_AFTER = 2.0    # FLEET_HARD_STOP_AFTER here: shorter than a raw client's dead-peer drop (ping + pong)
SLACK = 4.0          # upper bounds on a loaded 2-core machine (loadgen --allowance too)
TALLY = clients.Tally()     # every failed check, printed as it happens; the run goes on
check = TALLY.check
failures = TALLY.failures
free_port = clients.free_port


def wait_line(proc, prefix, timeout):
    """The first stdout line starting with prefix (bounded)."""
    end = time.monotonic() + timeout
    import select
    buf = b""
    while time.monotonic() < end:
        r, _, _ = select.select([proc.stdout], [], [], 0.2)
        if r:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
            for line in buf.split(b"\n"):
                if line.startswith(prefix.encode()):
                    return line.decode()
        if proc.poll() is not None and not r:
            break
    return None


class Server:
    def __init__(self, binary, port, s, workdir, index):
        self.binary, self.port, self.s, self.workdir, self.index = binary, port, s, workdir, index
        self.generation = 0
        self.proc = None
        self.finals = []   # the final /stats of every process that exited

    def start(self):
        s = self.s
        log = open(os.path.join(self.workdir, "server%d.%d.log" % (self.index, self.generation)), "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--address", "127.0.0.1", "--tcp-port", "0", "--http-port", str(self.port),
             "--idle-timeout", "%dms" % (s["idle_timeout"] * 1000),
             "--ping-interval", "%dms" % (s["ping_interval"] * 1000),
             "--pong-timeout", "%dms" % (s["pong_timeout"] * 1000),
             "--ping-jitter", "%dms" % (s["ping_jitter"] * 1000),
             "--close-timeout", "%dms" % (s["close_timeout"] * 1000),
             "--drain-spread", "%dms" % (s["drain_spread"] * 1000),
             "--max-lifetime", "%dms" % (s["max_lifetime"] * 1000),
             "--max-lifetime-jitter", "%dms" % (s["lifetime_jitter"] * 1000), "--quiet"],
            stdout=subprocess.PIPE, stderr=log)
        log.close()
        self.generation += 1
        line = wait_line(self.proc, "listening", 15)
        if line is None:
            raise RuntimeError("server %d did not start (see %s)" % (self.index, self.workdir))
        return line

    def stop_and_collect(self, timeout):
        """SIGTERM, wait for the exit, keep the final stats. Returns (exit code, seconds)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        return self.collect(t0, timeout)

    def collect(self, t0, timeout):
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        for line in out.decode(errors="replace").splitlines():
            if line.startswith("final stats "):
                self.finals.append(json.loads(line[len("final stats "):]))
        return self.proc.returncode, time.monotonic() - t0


def haproxy_cmd(sock_path, command):
    with socket.socket(socket.AF_UNIX) as c:
        c.settimeout(2)
        c.connect(sock_path)
        c.sendall(command.encode() + b"\n")
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.decode()


def server_states(sock_path):
    """{"s1": "UP", ...} from `show stat` (CSV)."""
    text = haproxy_cmd(sock_path, "show stat")
    lines = text.splitlines()
    header = lines[0].lstrip("# ").split(",")
    col_px, col_sv, col_status = header.index("pxname"), header.index("svname"), header.index("status")
    states = {}
    for line in lines[1:]:
        f = line.split(",")
        if len(f) > col_status and f[col_px] == "demo_servers" and f[col_sv].startswith("s"):
            states[f[col_sv]] = f[col_status]
    return states


def wait_state(sock_path, name, want, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            st = server_states(sock_path).get(name, "")
            if st.startswith(want):
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def healthz(port):
    # 10 s: a single-threaded server draining ~500 sessions on a loaded 2-core machine once took
    # more than 3 s to answer (the answer, not its speed, is what is checked).
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def wait_all_upgraded(servers, n, timeout):
    """Until the servers together have had n WebSocket sessions (open, or closed idle / dead)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        seen = 0
        try:
            for srv in servers:
                with urllib.request.urlopen("http://127.0.0.1:%d/stats" % srv.port, timeout=3) as r:
                    d = json.load(r)
                seen += d["open"]["websocket"] + d["closed"]["idle"] + d["closed"]["dead_peer"]
            if seen >= n:
                return True
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    return False


def wait_no_websocket(port, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=3) as r:
                if json.load(r)["open"]["websocket"] == 0:
                    return True
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("demo_server")
    ap.add_argument("loadgen")
    ap.add_argument("--clients", type=int)
    ap.add_argument("--out")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--lifetime", type=float, help="--max-lifetime in seconds (0: off, the spread is then measured, not asserted)")
    a = ap.parse_args()
    col = 1 if a.bench else 0
    s = {k: v[col] for k, v in SETTINGS.items()}
    if a.clients:
        s["clients"] = a.clients
    if a.lifetime is not None:
        s["max_lifetime"] = a.lifetime
    # When the spread is read: every active client's session then was placed (by leastconn)
    # after the last restarted server was back (test values even with --lifetime 0, to compare).
    spread_wait = SETTINGS["max_lifetime"][0] + SETTINGS["lifetime_jitter"][0] + 3.0
    workdir = a.out or tempfile.mkdtemp(prefix="fleet.")
    os.makedirs(workdir, exist_ok=True)
    procs = []   # everything started, killed by PID in the finally
    servers = []
    haproxy = None
    loadgen = None
    sock_dir = None
    result = None
    started = time.monotonic()
    try:
        front = free_port()
        ports = [free_port() for _ in range(3)]
        servers = [Server(a.demo_server, p, s, workdir, i + 1) for i, p in enumerate(ports)]
        for srv in servers:
            srv.start()
        for srv in servers:
            check(healthz(srv.port) == 200, "server %d: GET /healthz is not 200 while serving" % srv.index)

        # A UNIX socket path is limited to 107 bytes: a short directory of its own, not the build's.
        sock_dir = tempfile.mkdtemp(prefix="fleet-sock.")
        sock_path = os.path.join(sock_dir, "haproxy.sock")
        env = dict(os.environ,
                   FLEET_BIND="127.0.0.1:%d" % front,
                   FLEET_SERVER1="127.0.0.1:%d" % ports[0],
                   FLEET_SERVER2="127.0.0.1:%d" % ports[1],
                   FLEET_SERVER3="127.0.0.1:%d" % ports[2],
                   FLEET_STATS_SOCKET=sock_path,
                   FLEET_MAXCONN=str(s["clients"] + 500),
                   # idle timeout + close timeout + margin: the server, never HAProxy, ends idle sessions
                   FLEET_TIMEOUT_TUNNEL="%ds" % int(s["idle_timeout"] + s["close_timeout"] + 20),
                   FLEET_CHECK_INTER="%dms" % (s["check_inter"] * 1000),
                   FLEET_HARD_STOP_AFTER="%dms" % (HARD_STOP_AFTER * 1000))
        hlog = open(os.path.join(workdir, "haproxy.log"), "wb")
        haproxy = subprocess.Popen(["haproxy", "-f", RECIPE, "-db"], env=env, stdout=hlog, stderr=subprocess.STDOUT)
        hlog.close()
        procs.append(haproxy)
        for name in ("s1", "s2", "s3"):
            if not check(wait_state(sock_path, name, "UP", 15), "haproxy: %s never UP" % name):
                raise RuntimeError("haproxy not ready (see %s/haproxy.log)" % workdir)

        connect_s = s["clients"] / s["connect_rate"]
        restart_s = 3 * (s["drain_spread"] + s["close_timeout"] + 2 * s["check_inter"] + 2.0)
        # + 12 s: a loaded machine connects and restarts more slowly; every idle client reconnected
        # in the last drain must still reach its idle kick before loadgen stops.
        # The spread is read spread_wait after the last restart: loadgen must still run then.
        duration = connect_s + s["settle"] + restart_s + max(s["idle_timeout"] + s["close_timeout"] + 12,
                                                             spread_wait + 20)
        result_path = os.path.join(workdir, "loadgen.json")
        llog = open(os.path.join(workdir, "loadgen.log"), "wb")
        loadgen = subprocess.Popen(
            [a.loadgen, "--http-port", str(front), "-n", str(s["clients"]), "--reconnect",
             "--idle", "0.2", "--active", "0.6", "--pingers", "0.1", "--dead", "0.1",
             "--interval", "%dms" % (s["interval"] * 1000),
             "--ping-interval", "%dms" % (s["ping_interval"] * 1000),
             "--pong-timeout", "%dms" % (s["pong_timeout"] * 1000),
             "--ping-jitter", "%dms" % (s["ping_jitter"] * 1000),
             "--allowance", "%dms" % (SLACK * 1000),
             "--connect-rate", str(s["connect_rate"]), "--threads", "2",
             "--duration", "%dms" % (duration * 1000), "--json", result_path, "--no-progress"],
            stdout=llog, stderr=subprocess.STDOUT)
        llog.close()
        procs.append(loadgen)
        # Every client up (upgraded through HAProxy at least once) before the first SIGTERM:
        # on a loaded machine the connect phase takes longer than connect_s.
        check(wait_all_upgraded(servers, s["clients"], connect_s + 60),
              "not every client got connected within %.0f s" % (connect_s + 60))
        time.sleep(s["settle"])

        restarts = []
        for srv in servers:
            name = "s%d" % srv.index
            t0 = time.monotonic()
            srv.proc.send_signal(signal.SIGTERM)
            # The signal is handled on the server's io_context: a request the server reads before
            # that may still get 200 (seen once on a loaded machine). 503 must come within 3 s.
            code = healthz(srv.port)
            until = time.monotonic() + 3
            while code == 200 and time.monotonic() < until:
                time.sleep(0.05)
                code = healthz(srv.port)
            check(code == 503, "server %d: GET /healthz answered %s after SIGTERM, not 503" % (srv.index, code))
            down = wait_state(sock_path, name, "DOWN", 2 * s["check_inter"] + SLACK)
            t_down = time.monotonic() - t0
            check(down, "haproxy: %s not DOWN within %.1f s of its SIGTERM" % (name, 2 * s["check_inter"] + SLACK))
            check(srv.proc.poll() is None or not down,
                  "server %d exited before HAProxy took it out of rotation" % srv.index)
            rc, t_exit = srv.collect(t0, s["drain_spread"] + s["close_timeout"] + 10)
            check(rc == 0, "server %d: exit code %s after SIGTERM" % (srv.index, rc))
            srv.start()
            up = wait_state(sock_path, name, "UP", 10)
            check(up, "haproxy: restarted %s not UP again" % name)
            restarts.append({"server": name, "down_after_s": round(t_down, 3), "exit_after_s": round(t_exit, 3),
                             "up_after_s": round(time.monotonic() - t0, 3)})
            print("  %s: DOWN %.2f s after SIGTERM, exited 0 after %.2f s, UP again after %.2f s"
                  % (name, t_down, t_exit, time.monotonic() - t0), flush=True)
        last_up = time.monotonic()

        shares = measure_spread(servers, loadgen, last_up, spread_wait, s)
        if a.bench is False and s["max_lifetime"] > 0 and shares is not None:
            check(all(abs(x - 1 / 3) <= SPREAD_TOLERANCE for x in shares),
                  "the fleet is not even %.0f s after the last restart: shares %s (1/3 +- %.2f each)"
                  % (spread_wait, ", ".join("%.3f" % x for x in shares), SPREAD_TOLERANCE))

        try:
            lrc = loadgen.wait(timeout=duration + 60)
        except subprocess.TimeoutExpired:
            lrc = None
        check(lrc == 0, "loadgen exit code %s (its checks failed; see %s/loadgen.log)" % (lrc, workdir))
        haproxy_cpu = process_cpu(haproxy.pid)
        # loadgen has closed its clients; HAProxy then closes their server sides. Once no
        # WebSocket is left on any server, stop the last generation (their final stats): a
        # SIGTERM earlier would send 1001 to sessions whose client is already gone.
        for srv in servers:
            check(wait_no_websocket(srv.port, 15),
                  "server %d: WebSocket sessions still open 15 s after loadgen ended" % srv.index)
        haproxy = reload_haproxy(haproxy, env, front, workdir, procs)
        log_lines(workdir)
        for srv in servers:
            check(wait_no_websocket(srv.port, 15),
                  "server %d: WebSocket sessions still open 15 s after the reload" % srv.index)
        for srv in servers:
            rc, _ = srv.stop_and_collect(s["drain_spread"] + s["close_timeout"] + 10)
            check(rc == 0, "server %d (restarted): exit code %s" % (srv.index, rc))
        with open(result_path) as f:
            result = json.load(f)
        judge(result, servers, s)
        if a.bench:
            report(result, servers, restarts, s, workdir, haproxy_cpu)
    except Exception as e:  # noqa: BLE001 - any failure is reported as FAIL
        check(False, "%s: %s" % (type(e).__name__, e))
    finally:
        for srv in servers:
            if srv.proc is not None and srv.proc.poll() is None:
                procs.append(srv.proc)
        for p in procs:
            if p.poll() is None:
                p.kill()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        if sock_dir is not None:
            shutil.rmtree(sock_dir, ignore_errors=True)
        if a.out is None and not failures:
            shutil.rmtree(workdir, ignore_errors=True)  # a temporary directory: kept only on failure
    took = time.monotonic() - started
    if failures:
        print("FAIL: fleet rolling restart (%d problems, %.0f s; files in %s)" % (len(failures), took, workdir))
        return 1
    print("PASS: fleet rolling restart through haproxy: %d clients, 3 servers restarted in turn (%.0f s)"
          % (s["clients"], took))
    return 0


def open_websockets(port):
    """open.websocket of one server's /stats. A loaded CI machine (a single-threaded server
    busy with ~500 sessions reconnecting at --max-lifetime, compilers beside it) once took
    more than 3 s to answer: three tries of 10 s each, then the error."""
    for attempt in range(3):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=10) as r:
                return json.load(r)["open"]["websocket"]
        except (TimeoutError, OSError):
            if attempt == 2:
                raise


def measure_spread(servers, loadgen, last_up, wait, s):
    """Each server's share of the open WebSocket sessions `wait` s after `last_up` (monotonic): by then the idle,
    pinger and dead clients are gone (kicked or dropped), the active ones are open. None if
    loadgen had already ended."""
    time.sleep(max(0.0, last_up + wait - time.monotonic()))
    if not check(loadgen.poll() is None, "loadgen ended before the spread was read: lengthen its duration"):
        return None
    counts = [open_websockets(srv.port) for srv in servers]
    n = sum(counts)
    if not check(n > 0, "no WebSocket session open when the spread was read"):
        return None
    shares = [c / n for c in counts]
    how = ("--max-lifetime %gs --max-lifetime-jitter %gs" % (s["max_lifetime"], s["lifetime_jitter"])
           if s["max_lifetime"] > 0 else "without --max-lifetime")
    print("  spread %.0f s after the last restart, %s: %s of %d open sessions (s1, s2, s3; even 0.333)"
          % (wait, how, ", ".join("%.3f" % x for x in shares), n), flush=True)
    return shares


def raw_upgrade(port):
    """A WebSocket upgrade through HAProxy on a raw socket; the socket and the status line."""
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"GET / HTTP/1.1\r\nHost: fleet\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = c.recv(4096)
        if not chunk:
            break
        head += chunk
    return c, head.split(b"\r\n", 1)[0].decode(errors="replace")


def reload_haproxy(old, env, front, workdir, procs):
    """An HAProxy reload (a new process with -sf): the old one keeps its WebSocket tunnels, and
    exits at hard-stop-after, cutting them; new upgrades go to the new process. Returns it."""
    tunnels = [raw_upgrade(front) for _ in range(3)]
    check(all(status.startswith("HTTP/1.1 101") for _, status in tunnels),
          "upgrades before the reload: %s" % [st for _, st in tunnels])
    hlog = open(os.path.join(workdir, "haproxy.reloaded.log"), "wb")
    t0 = time.monotonic()
    new = subprocess.Popen(["haproxy", "-f", RECIPE, "-db", "-sf", str(old.pid)], env=env, stdout=hlog,
                           stderr=subprocess.STDOUT)
    hlog.close()
    procs.append(new)
    time.sleep(HARD_STOP_AFTER / 2)
    check(old.poll() is None, "the old haproxy exited %.1f s after the reload with tunnels open: "
          "hard-stop-after untested" % (time.monotonic() - t0))
    try:
        old.wait(timeout=HARD_STOP_AFTER + SLACK)
    except subprocess.TimeoutExpired:
        pass
    gone = time.monotonic() - t0
    check(old.poll() is not None, "the old haproxy still runs %.1f s after the reload (hard-stop-after %gs)"
          % (gone, HARD_STOP_AFTER))
    cut = 0
    for c, _ in tunnels:
        c.settimeout(SLACK)
        try:
            while c.recv(4096):
                pass
            cut += 1
        except ConnectionResetError:
            cut += 1
        except OSError:
            pass
        c.close()
    check(cut == len(tunnels), "only %d of %d tunnels through the old haproxy ended at hard-stop-after" % (cut, len(tunnels)))
    probe, status = raw_upgrade(front)
    probe.close()
    check(status.startswith("HTTP/1.1 101"), "an upgrade after the reload got '%s'" % status)
    print("  reload: the old haproxy exited %.2f s after it (hard-stop-after %gs), its %d tunnels cut; "
          "the new one upgrades" % (gone, HARD_STOP_AFTER, cut), flush=True)
    return new


def log_lines(workdir):
    """HAProxy's request log (option httplog on stdout): one line per request or tunnel; counts
    the lines whose retries field is not 0 (a 503 or a failed connect retried, '+' when
    redispatched)."""
    with open(os.path.join(workdir, "haproxy.log"), errors="replace") as f:
        lines = [line for line in f if " demo_servers/" in line]
    retried = 0
    for line in lines:
        counters = [field for field in line.split() if field.count("/") == 4 and field.split("/")[0].isdigit()]
        if len(counters) >= 2 and counters[1].split("/")[-1] not in ("0",):
            retried += 1
    check(len(lines) > 0, "haproxy logged no request (option httplog)")
    print("  haproxy log: %d requests, %d of them retried" % (len(lines), retried), flush=True)


def total(servers, path):
    n = 0
    for srv in servers:
        for doc in srv.finals:
            v = doc
            for k in path:
                v = v[k]
            n += v
    return n


def judge(r, servers, s):
    checks, rc = r["checks"], r["reconnect"]
    o = r["outcomes"]
    print("  loadgen: %s" % json.dumps(checks))
    print("  reconnect: %s" % json.dumps({k: v for k, v in rc.items() if k != "reconnect_ms"}))
    print("  reconnect time ms: %s" % json.dumps(rc["reconnect_ms"]))
    for p in r["problems"]:
        print("  loadgen problem: %s x%d e.g. %s" % (p["what"], p["count"], p["example"]))
    check(checks["passed"], "loadgen's checks failed")
    for k in ("false_kicks", "early_kicks", "missed_kicks", "wrong_outcomes", "unresolved", "errors"):
        check(checks[k] == 0, "loadgen: %s = %d" % (k, checks[k]))
    check(r["connect"]["connect_failed"] == 0 and r["connect"]["handshake_failed"] == 0, "failed connects or upgrades")
    check(rc["going_away"] > 0, "no client was closed with 1001: the drains did nothing")
    # --max-lifetime closes sessions with 1001 until loadgen stops: a client may have got its
    # 1001 and not reconnected yet (its back-off, at most --reconnect-delay 100 ms, then the
    # upgrade), and a 1001 sent just before the stop may never have been read. Allowed: the
    # lifetime closes of half a second (active clients / (D + J/2) per second); without
    # --max-lifetime the counts are exact.
    late = 0
    if s["max_lifetime"] > 0:
        late = int(r["scenario"]["mix"]["active"] / (s["max_lifetime"] + s["lifetime_jitter"] / 2) * 0.5) + 1
    check(rc["reconnects"] <= rc["going_away"] <= rc["reconnects"] + late,
          "reconnects %d, closes with 1001 %d (allowed: up to %d not yet reconnected at the end)"
          % (rc["reconnects"], rc["going_away"], late))
    check(rc["echoes_lost"] == 0, "echoes lost: %d" % rc["echoes_lost"])
    check(rc["echo_mismatch"] == 0, "echoes out of order / duplicated: %d" % rc["echo_mismatch"])
    check(o["active"]["open"] == r["scenario"]["mix"]["active"], "active clients not all open at the end: %s" % o["active"])
    check(len(servers) == 3 and all(len(srv.finals) == 2 for srv in servers),
          "a server process ended without its final stats")
    shutdown = total(servers, ["websocket_going_away"])
    idle = total(servers, ["closed", "idle"])
    dead = total(servers, ["closed", "dead_peer"])
    messages = total(servers, ["messages"])
    unechoed = total(servers, ["messages_unechoed"])
    echoed = messages - unechoed
    client_idle = o["idle"]["ws_idle_close"] + o["pinger"]["ws_idle_close"]
    client_dropped = o["dead"]["dropped"]
    client_echoes = rc["echoed_in_order"] + rc["echo_mismatch"]
    print("  servers: websocket_going_away %d, closed.idle %d, closed.dead_peer %d, messages %d, unechoed %d"
          % (shutdown, idle, dead, messages, unechoed))
    print("  clients: 1001 %d, 1000 idle %d, dropped %d, echoes %d, pending at end %d, resent %d"
          % (rc["going_away"], client_idle, client_dropped, client_echoes, rc["pending_at_end"], rc["resent"]))
    check(rc["going_away"] <= shutdown <= rc["going_away"] + late,
          "servers sent 1001 %d times, clients saw %d (allowed: up to %d unseen at the end)"
          % (shutdown, rc["going_away"], late))
    check(idle == client_idle, "servers kicked %d idle, clients saw %d idle kicks" % (idle, client_idle))
    check(dead == client_dropped, "servers dropped %d dead peers, clients saw %d drops" % (dead, client_dropped))
    check(client_echoes <= echoed <= client_echoes + rc["pending_at_end"],
          "servers echoed %d, clients got %d (+%d in flight at the end)" % (echoed, client_echoes, rc["pending_at_end"]))
    check(unechoed <= rc["resent"], "servers left %d unechoed, clients resent only %d" % (unechoed, rc["resent"]))
    hz_503 = total(servers, ["healthz", "unavailable"])
    check(hz_503 >= 3, "the drained servers answered /healthz 503 only %d times" % hz_503)


def process_cpu(pid):
    """user + system CPU seconds of a running process (its threads included)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(r, servers, restarts, s, workdir, haproxy_cpu):
    rc = r["reconnect"]
    cpu = {}
    for srv in servers:
        cpu[srv.index] = sum(d["process"]["cpu_user_s"] + d["process"]["cpu_system_s"] for d in srv.finals)
    figures = {"clients": s["clients"], "restarts": restarts, "reconnect": rc,
               "kick_lateness_ms": r["kick_lateness_ms"], "server_cpu_s": cpu, "haproxy_cpu_s": haproxy_cpu,
               "loadgen_cpu_s": r["client"]["cpu_s"], "duration_s": r["scenario"]["duration_s"]}
    with open(os.path.join(workdir, "figures.json"), "w") as f:
        json.dump(figures, f, indent=1)
    print("  figures: %s/figures.json" % workdir)


if __name__ == "__main__":
    sys.exit(main())
