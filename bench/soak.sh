#!/bin/sh
# Soak test (not run by CI): one demo_server kept up for a long time while loadgen opens
# 19 000 connections again and again, each round a mix of idle, active, ping-answering and
# dead clients. Prints one line per round (false / missed / early kicks must all be 0) and the
# server's RSS and CPU over time, so a leak or a slow drift shows; exits 1 if any round failed.
#
# usage: bench/soak.sh [--minutes M] [--connections N] [--timers wheel|asio] [--round D] [--out DIR]
#   defaults: 30 minutes, 19000 connections, wheel, rounds of 100s (idle timeout 10s, ping 3s,
#   pong 3s, active clients every 1s).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
minutes=30
connections=19000
timers=wheel
round=100s
out=$root/build/soak
while [ $# -gt 0 ]; do
    case $1 in
        --minutes) minutes=$2; shift ;;
        --connections) connections=$2; shift ;;
        --timers) timers=$2; shift ;;
        --round) round=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | grep '^#'; exit 0 ;;
        *) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

build=$root/build/loadgen
"$root/scripts/setup.sh" bench
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON -DIDLEWHEEL_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target demo_server loadgen >/dev/null
mkdir -p "$out"

"$build/demo_server/demo_server" --tcp-port 0 --http-port 0 --timers "$timers" --idle-timeout 10s \
    --ping-interval 3s --pong-timeout 3s --ping-jitter 1s --max-connections $((connections + 500)) --quiet \
    >"$out/server.out" 2>"$out/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT INT TERM
i=0
while ! grep -q '^listening' "$out/server.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 100 ] && { echo "soak.sh: server did not start" >&2; exit 1; }
    sleep 0.1
done
http=$(sed -n 's/.*http=[^:]*:\([0-9]*\).*/\1/p' "$out/server.out")
echo "soak: $connections connections per round, rounds of $round, $minutes minutes, timers=$timers, server pid $server"

end=$(( $(date +%s) + minutes * 60 ))
n=0
failed=0
printf '%-6s %-8s %6s %6s %6s %8s %12s %10s\n' round elapsed false missed early passed server_rss cpu_s
start=$(date +%s)
while [ "$(date +%s)" -lt "$end" ]; do
    n=$((n + 1))
    # loadgen's own exit status says the same as the checks printed below: count a round once.
    "$build/bench/loadgen/loadgen" --http-port "$http" -n "$connections" --duration "$round" \
        --ping-interval 3s --pong-timeout 3s --ping-jitter 1s --seed "$n" --no-progress \
        --json "$out/round-$n.json" >"$out/round-$n.txt" 2>&1 || true
    /usr/bin/python3 - "$out/round-$n.json" "$n" "$(( $(date +%s) - start ))" <<'EOF' || failed=$((failed + 1))
import json, sys
d = json.load(open(sys.argv[1]))
c = d["checks"]; after = d["stats"]["after"]; proc = after["process"]
print(f'{sys.argv[2]:<6} {sys.argv[3] + "s":<8} {c["false_kicks"]:>6} {c["missed_kicks"]:>6} {c["early_kicks"]:>6} '
      f'{str(c["passed"]):>8} {proc["rss_bytes"] / 1048576:>9.1f} MiB {proc["cpu_user_s"] + proc["cpu_system_s"]:>10.1f}')
sys.exit(0 if c["passed"] and c["false_kicks"] == 0 and c["missed_kicks"] == 0 and c["early_kicks"] == 0 else 1)
EOF
done
kill -TERM "$server"
wait "$server" || { echo "soak: server exit status $?" >&2; failed=$((failed + 1)); }
trap - EXIT INT TERM
echo "soak: $n rounds, $failed failed; per-round JSON and loadgen output in $out"
[ "$failed" -eq 0 ]
