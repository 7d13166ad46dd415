#!/bin/sh
# Smoke test for loadgen (ctest label "smoke"): demo_server on port 0, then 50 WebSocket clients
# and 50 raw TCP clients for 5 s each with a 2 s idle timeout. loadgen exits non-zero on any
# false, missed or wrong kick, on connection errors, and when an idle client was not kicked
# before the run ended; this script also checks that the idle clients were indeed kicked.
# The times leave room for a busy CI machine (a 2 s allowance); precision is compare.sh's job.
#
# usage: smoke.sh DEMO_SERVER LOADGEN WORK_DIR
set -eu
demo=$1
loadgen=$2
out=$3
mkdir -p "$out"
. "$(cd "$(dirname "$0")/.." && pwd)/server_control.sh"  # start_server, stop_servers
trap stop_servers EXIT INT TERM

# Heartbeat (ping 400ms + jitter <= 100ms + pong 800ms) well inside the idle timeout (2s), so
# dead clients are the heartbeat's and idle ones the idle timeout's.
timing="--idle-timeout 2s --ping-interval 400ms --pong-timeout 800ms --ping-jitter 100ms"
start_server server "" --tcp-port 0 --http-port 0 $timing --tick 10ms --quiet || exit 1
work=$out

check_kicked() {  # FILE ROLE OUTCOME COUNT: the JSON shows COUNT clients of ROLE ended with OUTCOME
    if ! python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r["outcomes"][sys.argv[2]][sys.argv[3]] != int(sys.argv[4]))' "$@"; then
        echo "smoke: expected $4 $2 clients to end with $3 in $1" >&2
        exit 1
    fi
}

# WebSocket: 20 idle, 20 active, 5 pingers, 5 dead.
"$loadgen" --http-port "$http_port" --protocol ws -n 50 --idle 20 --active 20 --pingers 5 --dead 5 --interval 200ms \
    $timing --allowance 2s --duration 5s --connect-rate 500 --no-progress --json "$work/ws.json"
check_kicked "$work/ws.json" idle ws_idle_close 20
check_kicked "$work/ws.json" pinger ws_idle_close 5
check_kicked "$work/ws.json" dead dropped 5

# Raw TCP: 25 idle, 25 active.
"$loadgen" --http-port "$http_port" --tcp-port "$tcp_port" --protocol tcp -n 50 --interval 200ms \
    --allowance 2s --duration 5s --connect-rate 500 --no-progress --json "$work/tcp.json"
check_kicked "$work/tcp.json" idle dropped 25
# The plot of both runs (matplotlib; what bench/compare.sh draws): an SVG with its four panels.
/usr/bin/python3 "$(dirname "$0")/plot.py" "$work/ws.json" "$work/tcp.json" --out "$work/plot.svg"
[ "$(grep -c 'id="series-' "$work/plot.svg")" -ge 8 ] || { echo "smoke: plot.py drew no series" >&2; exit 1; }
echo "smoke: loadgen passed"
