#!/usr/bin/python3
"""A release that abandons unsent data resets: no orphan socket stays in the kernel.

Usage: release_resets.py PATH_TO_DEMO_SERVER wheel|asio [EXTRA SERVER ARGS...]

A client that does not read (its receive buffer shrunk to 4 KiB before connect) sends 12 KiB and
then nothing. The server echoes it; the echo leaves the session's queue for the kernel (the
check: /stats unsent_bytes is 0 while the server's socket still holds unacknowledged bytes,
/proc/net/tcp tx_queue > 0), and the kernel cannot deliver it. The server then releases the
client (--idle-timeout 1s; WebSocket: the idle close frame cannot be delivered either, so the
close handshake ends at --close-timeout 0.5s). The server's side of the connection must then be
gone from /proc/net/tcp (a reset: SO_LINGER {1, 0}); a FIN queued behind the unsent echo would
leave it there in FIN-WAIT-1, an orphan the kernel keeps for minutes. Three cases, one after the
other: raw TCP and wss:// on a --tls server (its raw-TCP port is plain), ws:// on a plain one.
Pings are off (--ping-interval 0s): the release is the idle verdict in every case. Prints one
PASS or FAIL line; every wait is bounded; the servers are stopped by PID.
"""

import json
import os
import select
import socket
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from clients import Failure, check  # noqa: E402
import clients  # noqa: E402

IDLE = 1.0
CLOSE = 0.5
SLACK = 3.0      # upper-bound allowance: a loaded 2-core machine
ECHO = 12 * 1024  # the client takes ~4 KiB, the kernel holds the rest: no queue in the session
TCP_STATES = {"01": "ESTABLISHED", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE",
              "08": "CLOSE_WAIT", "09": "LAST_ACK", "0B": "CLOSING"}


def start(binary, mode, tls, extra, err):
    args = [binary, "--tcp-port", "0", "--http-port", "0", "--timers", mode, "--tick", "10ms",
            "--idle-timeout", f"{round(IDLE * 1000)}ms", "--close-timeout", f"{round(CLOSE * 1000)}ms",
            "--handshake-timeout", "5s", "--ping-interval", "0s"] + (["--tls"] if tls else []) + extra
    proc, fields = clients.start_demo_server(args, err, timeout=30, need=("tcp", "http"))
    return proc, {k: int(v.rsplit(":", 1)[1]) for k, v in fields.items() if k in ("tcp", "http")}


def stats(port, tls):
    scheme = "https" if tls else "http"
    with urllib.request.urlopen(f"{scheme}://127.0.0.1:{port}/stats", timeout=5,
                                context=clients.tls_client_context() if tls else None) as r:
        return json.load(r)


def server_side(server_port, client_port):
    """(state, tx_queue) of the server's socket of this connection in /proc/net/tcp, or None."""
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            local, remote, state, queues = fields[1], fields[2], fields[3], fields[4]
            if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
                return TCP_STATES.get(state, state), int(queues.split(":")[0], 16)
    return None


def non_reader(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window stays small
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def read_http_head(s, recv):
    head = b""
    deadline = time.monotonic() + 5
    while b"\r\n\r\n" not in head:
        check(time.monotonic() < deadline, "no upgrade answer in 5 s")
        head += recv()
    check(head.startswith(b"HTTP/1.1 101"), f"upgrade refused: {head[:60]!r}")
    check(head.endswith(b"\r\n\r\n"), "bytes after the 101 answer")


def masked_binary(payload):
    mask = b"\x0a\x0b\x0c\x0d"
    length = len(payload)
    header = bytes([0x82, 0x80 | 126]) + length.to_bytes(2, "big") if length > 125 else bytes([0x82, 0x80 | length])
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def expect_reset_release(name, sock, server_port, stats_of, label_cause):
    """After the client sent its last byte: the precondition (echo in the kernel, none queued), then
    the release, then no orphan."""
    client_port = sock.getsockname()[1]
    deadline = time.monotonic() + IDLE  # the precondition must be seen before the idle verdict
    while True:
        side = server_side(server_port, client_port)
        unsent = stats_of()["unsent_bytes"]
        if side is not None and side[0] == "ESTABLISHED" and side[1] > 0 and unsent == 0:
            break
        check(time.monotonic() < deadline,
              f"{name}: no echo held by the kernel alone before the release (server socket {side}, unsent_bytes {unsent})")
        time.sleep(0.02)
    end = time.monotonic() + IDLE + CLOSE + SLACK
    while True:
        side = server_side(server_port, client_port)
        if side is None:
            break  # reset: the server's socket is gone
        check(side[0] == "ESTABLISHED",
              f"{name}: after its release the server's socket is {side[0]} with {side[1]} bytes unsent (an orphan, "
              "no reset)")
        check(time.monotonic() < end, f"{name}: not released within {IDLE + CLOSE + SLACK} s")
        time.sleep(0.02)
    # The client learns at once: a reset, not a FIN it would see only after reading the echo.
    # (Linux hands out the bytes already received first, then the reset.)
    sock.settimeout(2)
    reset = False
    for _ in range(ECHO + 2):  # bounded: each recv returns at least a byte, or ends the loop
        try:
            if not sock.recv(65536):
                break  # a FIN
        except ConnectionResetError:
            reset = True
            break
        except socket.timeout:
            break
    check(reset, f"{name}: the client's socket was not reset")
    return label_cause


def tcp_case(ports, tls):
    with non_reader(ports["tcp"]) as s:
        s.sendall(os.urandom(ECHO))
        return expect_reset_release("raw TCP", s, ports["tcp"], lambda: stats(ports["http"], tls), "idle")


def ws_case(ports, tls):
    name = "wss://" if tls else "ws://"
    with non_reader(ports["http"]) as s:
        upgrade = clients.upgrade_request("localhost")
        if tls:
            from tls_hostile import ManualTls
            t = ManualTls(s)
            t.handshake(time.monotonic() + 5)
            t.send(upgrade)
            read_http_head(s, lambda: t.recv_until(b"\r\n\r\n", time.monotonic() + 5))
            send = t.send
        else:
            s.sendall(upgrade)
            read_http_head(s, lambda: s.recv(1))  # a byte at a time: nothing after the head is taken
            send = s.sendall
        for _ in range(ECHO // 1024):
            send(masked_binary(os.urandom(1024)))
        s.settimeout(None)
        return expect_reset_release(name, s, ports["http"], lambda: stats(ports["http"], tls), "idle")


def run(binary, mode, extra):
    failures = []
    for tls, cases in ((True, (tcp_case, ws_case)), (False, (ws_case,))):
        err = tempfile.TemporaryFile()
        proc = None
        try:
            proc, ports = start(binary, mode, tls, extra, err)
            before = stats(ports["http"], tls)["closed"]
            for case in cases:  # every case runs: a failure is reported with the others
                try:
                    case(ports, tls)
                except Failure as e:
                    failures.append(str(e))
            deadline = time.monotonic() + 5
            while True:  # the server counts the closes a moment after the client saw them
                idle = stats(ports["http"], tls)["closed"]["idle"] - before["idle"]
                if idle >= len(cases) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            check(idle == len(cases), f"closed.idle grew by {idle}, expected {len(cases)}")
            clients.sigterm_expect_exit_0(proc)
        except Failure as e:
            failures.append(str(e))
        finally:
            clients.kill_if_running(proc)
            if failures:
                err.seek(0)
                print(err.read().decode(errors="replace")[-3000:], flush=True)
            err.close()
    check(not failures, "; ".join(failures))


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("wheel", "asio"):
        print("usage: release_resets.py PATH_TO_DEMO_SERVER wheel|asio [EXTRA SERVER ARGS...]", file=sys.stderr)
        return 2
    extra = sys.argv[3:] + os.environ.get("IDLEWHEEL_DEMO_ARGS", "").split()
    try:
        run(sys.argv[1], sys.argv[2], extra)
    except Failure as e:
        print(f"FAIL: release_resets --timers={sys.argv[2]}: {e}")
        return 1
    print(f"PASS: release_resets --timers={sys.argv[2]}: raw TCP, wss:// and ws:// non-readers released with a reset, "
          "no orphan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
