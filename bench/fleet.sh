#!/bin/sh
# A rolling restart at about 9 000 WebSocket connections through one HAProxy (Debian's haproxy
# 2.6, deploy/haproxy/haproxy.cfg) over 3 demo_server processes: tests/demo_server/fleet/rolling_restart.py
# in its --bench form (server idle timeout 15s, ping 5s / pong 5s, close 2s, --drain-spread 5s;
# health check every 500ms; 60 % active clients every 1s, 20 % idle, 10 % pingers, 10 % dead),
# with every check of the fleet test. Then, for comparison, the same idle kick measured directly
# against one demo_server (no proxy, 3 000 connections). Prints the figures
# bench/results/2026-11-27-fleet-rolling-restart.md reports ("Rolling restart through
# HAProxy"): connections moved, reconnect time p50/p99, echoes
# lost, kick lateness through the proxy and direct, HAProxy's CPU against the servers'.
#
# usage: bench/fleet.sh [--connections N] [--out DIR] [--build DIR]
#   default: 9000 connections (HAProxy holds two descriptors per connection: 18 000 of the
#   20 000 a process may hold here), build/loadgen, out in a temporary directory.
# Loopback only; every process is started here and stopped by PID.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build/loadgen
out=
connections=9000
while [ $# -gt 0 ]; do
  case $1 in
    --connections) connections=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: bench/fleet.sh [--connections N] [--out DIR] [--build DIR]" >&2; exit 2 ;;
  esac
done
demo=${IDLEWHEEL_DEMO_SERVER:-$build/demo_server/demo_server}
loadgen=${IDLEWHEEL_LOADGEN:-$build/bench/loadgen/loadgen}
for f in "$demo" "$loadgen"; do
  [ -x "$f" ] || { echo "fleet.sh: $f missing: cmake --build $build --target demo_server loadgen" >&2; exit 2; }
done
command -v haproxy >/dev/null || { echo "fleet.sh: haproxy missing: scripts/setup.sh test" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/fleet-bench.XXXXXX)
mkdir -p "$out"
echo "fleet.sh: $connections connections, files in $out"
echo "== through HAProxy, rolling restart =="
status=0
python3 "$root/tests/demo_server/fleet/rolling_restart.py" "$demo" "$loadgen" --bench --clients "$connections" --out "$out/fleet" || status=1

echo "== direct: one demo_server, no proxy, 3000 connections =="
server_pid=
cleanup() { [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT
"$demo" --address 127.0.0.1 --tcp-port 0 --http-port 0 --idle-timeout 15s --ping-interval 5s --pong-timeout 5s \
  --ping-jitter 1s --close-timeout 2s --quiet >"$out/direct.server.out" 2>"$out/direct.server.log" &
server_pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/^listening .*http=[^:]*:\([0-9]*\).*/\1/p' "$out/direct.server.out")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "fleet.sh: the direct server did not start" >&2; exit 1; }
"$loadgen" --http-port "$port" -n 3000 --idle 0.2 --active 0.6 --pingers 0.1 --dead 0.1 --interval 1s \
  --ping-interval 5s --pong-timeout 5s --ping-jitter 1s --allowance 3s --connect-rate 1500 --threads 2 \
  --duration 25s --json "$out/direct.json" --no-progress >"$out/direct.log" 2>&1 || status=1
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
f = json.load(open(out + "/fleet/figures.json"))
d = json.load(open(out + "/direct.json"))
rc = f["reconnect"]
print("connections            %d through one HAProxy, 3 servers" % f["clients"])
print("connections moved      %d (closed with 1001 and reconnected: %d)" % (rc["going_away"], rc["reconnects"]))
print("reconnect time         p50 %.1f ms, p99 %.1f ms, max %.1f ms (1001 close frame -> upgraded again; n %d)"
      % (rc["reconnect_ms"]["p50"], rc["reconnect_ms"]["p99"], rc["reconnect_ms"]["max"], rc["reconnect_ms"]["n"]))
d_ = rc["reconnect_dead_ms"]
print("  dead clients          p50 %.1f ms, p99 %.1f ms (n %d: they wait out the server's --close-timeout)"
      % (d_["p50"], d_["p99"], d_["n"]))
print("retried attempts       %d connect failed, %d upgrade failed" % (rc["retry_connect_failed"], rc["retry_upgrade_failed"]))
print("echoes                 %d messages, %d resent, %d out of order, echoes lost %d"
      % (rc["messages"], rc["resent"], rc["echo_mismatch"], rc["echoes_lost"]))
for name, k in (("through HAProxy", f["kick_lateness_ms"]), ("direct", d["kick_lateness_ms"])):
    i = k["idle"]
    print("idle kick lateness     %-16s n %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (name, i["n"], i["p50"], i["p99"], i["max"]))
for r in f["restarts"]:
    print("restart %s             DOWN after %.2f s, exited after %.2f s, UP after %.2f s"
          % (r["server"], r["down_after_s"], r["exit_after_s"], r["up_after_s"]))
servers = sum(f["server_cpu_s"].values())
print("CPU over the run       HAProxy %.1f s, servers %.1f s (all 6 processes), loadgen %.1f s; run %.0f s"
      % (f["haproxy_cpu_s"], servers, f["loadgen_cpu_s"], f["duration_s"]))
PY
exit $status
