#!/bin/sh
# Scale: 100 000 real WebSocket connections on one machine. A process may hold at most 20 000
# descriptors here, so this starts 6 demo_server processes sharing the ports (--reuse-port:
# the kernel spreads connections over them) and enough loadgen processes (at most 17 000
# connections each), every loadgen on its own loopback source addresses (127.0.0.2, .3, ...)
# so no address runs short of ephemeral ports. The usual mix: 40 % idle, 40 % active,
# 10 % answering pings only, 10 % dead. Then bench/results.py scale aggregates every process's
# results: kick lateness p50/p99/max over all idle and pinger clients, false/missed kicks, and
# (sampled from /proc once a second) the servers' RSS per connection and CPU.
#
# usage: bench/scale.sh [--quick] [--connections N] [--servers S] [--timers wheel|asio]
#                       [--duration D] [--out DIR] [--build DIR] [--nice N] [--strict]
#   default: 100000 connections, 6 servers (1 thread each, wheel), 6 loadgens, idle timeout
#            45s, ping 30s / pong 10s / jitter 2s (every connection is up before the first kick
#            or drop, so RSS per connection is read at the peak), active clients every 5s,
#            90 s; at most about 2 minutes in all
#   --quick: 3000 connections, 6 servers, 2 loadgens, idle timeout 3s, ping 1s / pong 1s, 10 s
#   --nice N: run everything at niceness N in a scheduler autogroup of its own (e.g. -10 as root
#            on a shared machine, as compare.sh --nice)
#   --strict: also fail when a target is missed (p99 lateness <= one tick + 10 ms)
# Every process is bounded: loadgen stops at --duration, timeout(1) guards it, the servers get
# SIGTERM at the end. Loopback only.
# Exit status: 0 when every loadgen passed its checks and every connection was up, 1 otherwise.
set -eu
command_line="$0 $*"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/server_control.sh"
own_session_if_nice "$0" "$@"
build=$root/build/loadgen
out=
connections=100000
server_count=6
timers=wheel
duration=90s
per_loadgen=17000
timing="--idle-timeout 45s --ping-interval 30s --pong-timeout 10s --ping-jitter 2s"
interval=5s
connect_rate=700
strict=
niceness=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) connections=3000; per_loadgen=1500; duration=10s; interval=500ms; connect_rate=1000
                 timing="--idle-timeout 3s --ping-interval 1s --pong-timeout 1s --ping-jitter 500ms" ;;
        --connections) connections=$2; shift ;;
        --servers) server_count=$2; shift ;;
        --timers) timers=$2; shift ;;
        --duration) duration=$2; shift ;;
        --out) out=$2; shift ;;
        --build) build=$2; shift ;;
        --strict) strict=--strict ;;
        --nice) niceness=$2; shift ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | grep '^#'; exit 0 ;;
        *) echo "scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$out" ] || out=$build/scale
mkdir -p "$out"
rm -f "$out"/loadgen-*.json "$out"/monitor.json
find_programs "$build"
require_server_support --reuse-port
if [ -n "$niceness" ]; then set_niceness "$niceness"; fi

loadgens=$(( (connections + per_loadgen - 1) / per_loadgen ))
seconds=$(echo "$duration" | sed -n 's/^\([0-9]*\)s$/\1/p')
[ -n "$seconds" ] || { echo "scale.sh: --duration must be whole seconds (e.g. 90s)" >&2; exit 2; }
# Each server holds about connections / servers of them; room for an uneven spread.
max_per_server=$(( connections / server_count * 3 / 2 + 500 ))
if [ $max_per_server -gt 19500 ]; then max_per_server=19500; fi

monitor=
cleanup() {
    stop_servers
    if [ -n "$monitor" ]; then wait "$monitor" 2>/dev/null || true; fi
}
trap cleanup EXIT INT TERM

echo "scale.sh: $command_line"
echo "scale.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scale.sh: $connections WebSocket connections, $server_count demo_server --timers=$timers --reuse-port, $loadgens loadgen processes, $duration; $timing; results in $out"

server_args="--timers=$timers --threads 1 --reuse-port $timing --tick 10ms --handshake-timeout 30s --max-connections $max_per_server --quiet"
start_server server-1 "" --tcp-port 0 --http-port 0 $server_args || exit 1
ports="--tcp-port $tcp_port --http-port $http_port"
k=2
while [ $k -le "$server_count" ]; do
    start_server "server-$k" "" $ports $server_args || exit 1
    k=$((k + 1))
done
echo "scale.sh: servers$servers share tcp port $tcp_port and http port $http_port"
python3 "$here/results.py" monitor "$out/monitor.json" $servers --seconds $((seconds + 60)) &
monitor=$!
sleep 1  # the monitor's first sample is the servers' baseline

pids=
k=0
left=$connections
while [ $k -lt "$loadgens" ]; do
    n=$(( left / (loadgens - k) ))
    left=$((left - n))
    # Three source addresses each (one per 8000 connections at most), all apart.
    first=127.0.0.$((2 + 3 * k))
    timeout -k 5 $((seconds + 60)) "$loadgen" --http-port "$http_port" --protocol ws -n "$n" \
        --idle 0.4 --active 0.4 --pingers 0.1 --dead 0.1 --interval "$interval" --connect-rate "$connect_rate" \
        --first-source "$first" --source-addresses 3 --seed $((k + 1)) $timing --duration "$duration" \
        --label "loadgen-$k" --no-progress --json "$out/loadgen-$k.json" >"$out/loadgen-$k.txt" 2>&1 &
    pids="$pids $!"
    k=$((k + 1))
done
failed=0
for pid in $pids; do wait "$pid" || failed=1; done
stop_servers
wait "$monitor" 2>/dev/null || true
monitor=

echo "== scale: $connections connections, $server_count servers, $loadgens loadgens =="
python3 "$here/results.py" scale "$out" --expect "$connections" $strict | tee "$out/scale.txt"
grep -q '^checks: every loadgen passed' "$out/scale.txt" || failed=1
if [ -n "$strict" ] && grep -q 'MISSED' "$out/scale.txt"; then failed=1; fi
if [ $failed -ne 0 ]; then
    for f in "$out"/loadgen-*.txt; do grep -E '^(checks|  *[a-z].*: )' "$f" | head -5; done
fi
echo "scale.sh: load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
