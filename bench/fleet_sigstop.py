#!/usr/bin/python3
"""A frozen server behind the recipe's HAProxy (docs/fleet.md, "A frozen server"): two
demo_server processes behind deploy/haproxy/haproxy.cfg, one of them SIGSTOPped; measures how
long HAProxy takes to mark it DOWN, and how long new WebSocket upgrades through HAProxy wait
meanwhile (20 clients, each upgrading again 50 ms after its last answer, for the freeze and 2 s
after DOWN).

Usage: bench/fleet_sigstop.py DEMO_SERVER [FLEET_VAR=VALUE ...]
  e.g. FLEET_TIMEOUT_CHECK=2s FLEET_TIMEOUT_SERVER=30s; HAPROXY_CFG=FILE in the environment
  runs another config file. Prints two lines. Everything listens on 127.0.0.1 (free ports); the
  processes started here are killed by PID at the end, the frozen one continued first.
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "demo_server", "fleet"))
import clients  # noqa: E402
import rolling_restart  # noqa: E402

UPGRADE = (b"GET / HTTP/1.1\r\nHost: fleet\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def main():
    binary = sys.argv[1]
    overrides = dict(a.split("=", 1) for a in sys.argv[2:])
    cfg = os.environ.get("HAPROXY_CFG", os.path.join(HERE, "..", "deploy", "haproxy", "haproxy.cfg"))
    front = clients.free_port()
    ports = [clients.free_port() for _ in range(2)]
    procs = []
    sock_dir = tempfile.mkdtemp(prefix="fleet-sigstop.")
    try:
        for p in ports:
            procs.append(subprocess.Popen([binary, "--address", "127.0.0.1", "--tcp-port", "0", "--http-port", str(p),
                                           "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        sock = os.path.join(sock_dir, "haproxy.sock")
        env = dict(os.environ, FLEET_BIND="127.0.0.1:%d" % front, FLEET_SERVER1="127.0.0.1:%d" % ports[0],
                   FLEET_SERVER2="127.0.0.1:%d" % ports[1], FLEET_SERVER3="127.0.0.1:%d" % ports[1],
                   FLEET_STATS_SOCKET=sock, **overrides)
        procs.append(subprocess.Popen(["haproxy", "-f", cfg, "-db"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.STDOUT))
        for name in ("s1", "s2"):
            if not rolling_restart.wait_state(sock, name, "UP", 15):
                raise RuntimeError("haproxy: %s never UP" % name)
        time.sleep(1.5)
        answers = []  # (started, seconds, status line or error)
        stop = threading.Event()

        def upgrader():
            while not stop.is_set():
                t = time.monotonic()
                try:
                    with socket.create_connection(("127.0.0.1", front), timeout=60) as s:
                        s.settimeout(60)
                        s.sendall(UPGRADE)
                        answers.append((t, time.monotonic() - t, s.recv(100).split(b"\r\n")[0].decode()))
                except OSError as e:
                    answers.append((t, time.monotonic() - t, repr(e)))
                time.sleep(0.05)

        t0 = time.monotonic()
        procs[0].send_signal(signal.SIGSTOP)
        threads = []
        for _ in range(20):
            threads.append(threading.Thread(target=upgrader, daemon=True))
            threads[-1].start()
            time.sleep(0.1)
        down = rolling_restart.wait_state(sock, "s1", "DOWN", 60)
        took = time.monotonic() - t0
        time.sleep(2)
        stop.set()
        for t in threads:
            t.join(70)
        waits = sorted(a[1] for a in answers)
        print("DOWN %.2f s after SIGSTOP%s %s" % (took, "" if down else " (not seen DOWN)", overrides or ""))
        print("upgrades: %d; longest wait %.2f s; %d waited over 1 s; answers %s"
              % (len(answers), waits[-1], sum(1 for w in waits if w > 1), sorted(set(a[2] for a in answers))))
    finally:
        for p in procs:
            try:
                p.send_signal(signal.SIGCONT)
                p.kill()
                p.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for f in os.listdir(sock_dir):
            os.unlink(os.path.join(sock_dir, f))
        os.rmdir(sock_dir)


if __name__ == "__main__":
    main()
