#!/usr/bin/python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Bytes of server memory per silent connection on demo_server's HTTP port: plain against --tls.

Usage: silent_connections.py DEMO_SERVER [--count N] [--runs R] [--hello BYTES [--declare BYTES]]
                             [--max-per-connection-ratio X]

For each of plain and --tls (R runs each, a fresh server every run): starts demo_server on
loopback (port 0, --timers wheel, --handshake-timeout and --idle-timeout 120 s so nothing is
closed during the run, --quiet), reads its VmRSS (/proc/PID/status), opens N connections to the
HTTP port that send nothing (TLS with --hello B: one TLS handshake record of B bytes holding
the start of a ClientHello that declares --declare D bytes, default 16 000, within the server's
bound, so the server holds a handshake in progress; B < D), waits until
the server holds N more descriptors (/proc/PID/fd, bounded 30 s) and 0.5 s more, reads VmRSS
again, and prints one line per run:

    silent_connections: tls n=1000 hello=0 rss_before=... KiB rss_after=... KiB per_connection=... bytes

then the median per connection of each kind and their ratio. The server is stopped by its PID.
With --max-per-connection-ratio X it exits 1 when the median TLS figure is over X times the
plain one (the test form, tests/demo_server/reliability/CMakeLists.txt). Kernel memory (the
sockets' buffers) is not in RSS; what is measured is the server process's own.
"""

import argparse
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import clients  # noqa: E402


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def partial_hello(size, declared):
    # One whole handshake record of `size` bytes (TLS 1.0 record version, as clients send first)
    # holding the start of a ClientHello declared `declared` bytes long: the server takes the
    # record and waits for the rest of the hello in the next ones.
    if not 11 <= size < min(declared, 0x4000):
        raise ValueError("--hello must be at least 11, under --declare and under 16384")
    return (bytes([0x16, 3, 1]) + (size - 5).to_bytes(2, "big") + bytes([1]) + declared.to_bytes(3, "big") +
            bytes([3, 3]) + bytes(size - 11))


def one_run(binary, tls, count, hello, declared):
    args = [binary, "--tcp-port", "0", "--http-port", "0", "--timers", "wheel", "--handshake-timeout", "120s",
            "--idle-timeout", "120s", "--quiet"] + (["--tls"] if tls else [])
    err = tempfile.TemporaryFile()
    proc = None
    socks = []
    try:
        proc, fields = clients.start_demo_server(args, err, timeout=30)
        host, port = fields["http"].rsplit(":", 1)
        time.sleep(0.3)
        fds, before = fd_count(proc.pid), vm_rss_kib(proc.pid)
        payload = partial_hello(hello, declared) if hello else b""
        for _ in range(count):
            s = socket.create_connection((host, int(port)), timeout=5)
            if payload:
                s.sendall(payload)
            socks.append(s)
        deadline = time.monotonic() + 30
        while fd_count(proc.pid) < fds + count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server holds {fd_count(proc.pid) - fds} of {count} connections after 30 s")
            time.sleep(0.05)
        time.sleep(0.5)
        after = vm_rss_kib(proc.pid)
        if proc.poll() is not None:
            raise RuntimeError("demo_server ended during the run")
        return before, after
    finally:
        for s in socks:
            s.close()
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        err.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("server")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--hello", type=int, default=0, help="bytes of a ClientHello each TLS connection sends (0: none)")
    p.add_argument("--declare", type=int, default=16_000, help="the ClientHello length --hello's record declares")
    p.add_argument("--max-per-connection-ratio", type=float, default=None)
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, a.count + 256)), hard))
    medians = {}
    for kind in ("plain", "tls"):
        per = []
        for _ in range(a.runs):
            before, after = one_run(a.server, kind == "tls", a.count, a.hello if kind == "tls" else 0, a.declare)
            per.append((after - before) * 1024 / a.count)
            print(f"silent_connections: {kind} n={a.count} hello={a.hello if kind == 'tls' else 0} "
                  f"rss_before={before} KiB rss_after={after} KiB per_connection={per[-1]:.0f} bytes", flush=True)
        medians[kind] = statistics.median(per)
    ratio = medians["tls"] / medians["plain"] if medians["plain"] > 0 else float("inf")
    print(f"silent_connections: median per connection: plain {medians['plain']:.0f} bytes, "
          f"tls {medians['tls']:.0f} bytes, tls/plain {ratio:.2f}", flush=True)
    if a.max_per_connection_ratio is not None and ratio > a.max_per_connection_ratio:
        print(f"FAIL: silent_connections: a silent TLS connection costs {ratio:.2f} x a plain one "
              f"(at most {a.max_per_connection_ratio} x allowed)", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
