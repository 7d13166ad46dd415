#!/bin/sh
# loadgen --url against demo_server as if it were any server (ctest label "smoke"): the promises
# on the command line (--expect-idle, --expect-ping-interval, --expect-pong-timeout), verdicts
# from the client side alone. 50 WebSocket clients with no /stats, then 50 raw TCP clients
# (tcp://) with /stats read as a cross-check (--http-port: --expect-idle must match the server's
# idle timeout), 5 s each with a 2 s idle timeout; and --expect-close-code idle=1000 (passes)
# and idle=4000 (loadgen must exit 1 with a wrong outcome). Exits non-zero on any failed verdict or if the
# idle clients were not closed.
#
# usage: url_smoke.sh DEMO_SERVER LOADGEN WORK_DIR
set -eu
demo=$1
loadgen=$2
out=$3
mkdir -p "$out"
. "$(cd "$(dirname "$0")/.." && pwd)/server_control.sh"  # start_server, stop_servers
trap stop_servers EXIT INT TERM

start_server server "" --tcp-port 0 --http-port 0 --idle-timeout 2s --ping-interval 400ms --pong-timeout 800ms \
    --ping-jitter 100ms --tick 10ms --quiet || exit 1

closed() {  # FILE ROLE OUTCOME COUNT: the JSON shows COUNT clients of ROLE ended with OUTCOME
    if ! python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r["outcomes"][sys.argv[2]][sys.argv[3]] != int(sys.argv[4]))' "$@"; then
        echo "url_smoke: expected $4 $2 clients to end with $3 in $1" >&2
        exit 1
    fi
}

"$loadgen" --url "ws://127.0.0.1:$http_port/" --expect-idle 2s --expect-ping-interval 400ms --expect-pong-timeout 800ms \
    --ping-jitter 100ms -n 50 --idle 20 --active 20 --pingers 5 --dead 5 --interval 200ms --allowance 2s --duration 5s \
    --connect-rate 500 --no-progress --json "$out/ws.json"
closed "$out/ws.json" idle ws_idle_close 20
closed "$out/ws.json" pinger ws_idle_close 5
closed "$out/ws.json" dead dropped 5

# A close code required per role (--expect-close-code): demo_server closes idle clients with 1000.
"$loadgen" --url "ws://127.0.0.1:$http_port/" --expect-idle 2s --expect-close-code idle=1000 -n 10 --idle 10 \
    --allowance 2s --duration 5s --no-progress --json "$out/code.json"
closed "$out/code.json" idle ws_idle_close 10
status=0
"$loadgen" --url "ws://127.0.0.1:$http_port/" --expect-idle 2s --expect-close-code idle=4000 -n 10 --idle 10 \
    --allowance 2s --duration 5s --no-progress --json "$out/wrong_code.json" >"$out/wrong_code.txt" || status=$?
if [ "$status" -ne 1 ] || ! grep -q 'wrong outcome: idle client ws_idle_close (1000).*expected close 4000' "$out/wrong_code.txt"; then
    cat "$out/wrong_code.txt" >&2
    echo "url_smoke: --expect-close-code idle=4000 against 1000 closes: exit $status, expected 1 and a wrong outcome" >&2
    exit 1
fi

"$loadgen" --url "tcp://127.0.0.1:$tcp_port" --expect-idle 2s --http-port "$http_port" -n 50 --interval 200ms \
    --allowance 2s --duration 5s --connect-rate 500 --no-progress --json "$out/tcp.json"
closed "$out/tcp.json" idle dropped 25
echo "url_smoke: loadgen --url passed"
