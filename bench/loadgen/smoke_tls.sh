#!/bin/sh
# Smoke test for loadgen --tls: demo_server --tls (its HTTP port speaks TLS only, with a
# self-signed certificate made at start) on port 0, then 50 wss:// clients for 5 s with a 2 s
# idle timeout: 20 idle, 20 active, 5 pingers, 5 dead, /stats over https. As smoke.sh's
# WebSocket part: loadgen exits non-zero on any false, missed or wrong kick and on connection
# errors, and this script checks that every idle, pinger and dead client was kicked the way
# its role expects. Then --url wss:// with 10 stalled clients (the TLS handshake, then half an
# upgrade request): the server's handshake deadline (1 s) must drop each. Exits 77 (ctest: skipped) with a demo_server that has no --tls.
#
# usage: smoke_tls.sh DEMO_SERVER LOADGEN WORK_DIR
set -eu
demo=$1
loadgen=$2
out=$3
mkdir -p "$out"
. "$(cd "$(dirname "$0")/.." && pwd)/server_control.sh"  # start_server, stop_servers, require_server_support
require_server_support --tls
trap stop_servers EXIT INT TERM

# As smoke.sh: the heartbeat (ping 400ms + jitter <= 100ms + pong 800ms) well inside the idle
# timeout (2s), so dead clients are the heartbeat's and idle ones the idle timeout's.
timing="--idle-timeout 2s --ping-interval 400ms --pong-timeout 800ms --ping-jitter 100ms"
start_server server "" --tls --tcp-port 0 --http-port 0 $timing --handshake-timeout 1s --tick 10ms --quiet || exit 1
if [ -z "$http_port" ]; then  # in case the listening line names the TLS port https=
    http_port=$(sed -n 's/.* https=[^ ]*:\([0-9]*\).*/\1/p' "$out/server.out")
fi
work=$out

check_kicked() {  # FILE ROLE OUTCOME COUNT: the JSON shows COUNT clients of ROLE ended with OUTCOME
    if ! python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r["outcomes"][sys.argv[2]][sys.argv[3]] != int(sys.argv[4]))' "$@"; then
        echo "smoke_tls: expected $4 $2 clients to end with $3 in $1" >&2
        exit 1
    fi
}

# WebSocket over TLS: 20 idle, 20 active, 5 pingers, 5 dead (no certificate check: the
# server's certificate is self-signed).
"$loadgen" --tls --http-port "$http_port" --protocol ws -n 50 --idle 20 --active 20 --pingers 5 --dead 5 --interval 200ms \
    $timing --allowance 2s --duration 5s --connect-rate 500 --no-progress --json "$work/wss.json"
check_kicked "$work/wss.json" idle ws_idle_close 20
check_kicked "$work/wss.json" pinger ws_idle_close 5
check_kicked "$work/wss.json" dead dropped 5

# Stalled over TLS: judged against the handshake deadline from the client side (--url wss://).
"$loadgen" --url "wss://127.0.0.1:$http_port/" --expect-idle 2s --expect-ping-interval 400ms --expect-pong-timeout 800ms \
    --ping-jitter 100ms --handshake-timeout 1s -n 20 --idle 5 --active 5 --stalled 10 --interval 200ms --allowance 2s \
    --duration 5s --connect-rate 500 --no-progress --json "$work/wss_stalled.json"
check_kicked "$work/wss_stalled.json" stalled dropped 10
echo "smoke_tls: loadgen --tls passed"
