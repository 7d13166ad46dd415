#!/bin/sh
# scripts/load.sh --url against two servers people run, each judged by its preset (ctest
# loadgen_third_party_*; servers in bench/loadgen/servers/, started here on 127.0.0.1 and
# stopped by their PIDs; 300 connections of every role):
#
#   ws:     Node's `ws` with its README's heartbeat, interval 1000 ms: --expect ws-heartbeat
#           --heartbeat 1s must pass (dead clients terminate()d 1..2 s after their handshake;
#           stalled ones unbounded, open at the end); then the same server with its interval
#           doubled behind the flag's back (2000 ms) must fail, the banner naming the dead role
#           and its count of missed kicks, in the printed summary and in the HTML report's banner,
#           whose close-time plot (checked in headless Chromium) shows the late closes.
#   python: Python's `websockets` (python3-websockets), ping_interval 1 s, ping_timeout 1 s:
#           --expect python-websockets --ping-interval 1s --ping-timeout 1s must pass (dead
#           clients closed with 1011 2..3 s after their handshake); then the server with both
#           doubled (2 s, 2 s) must fail, naming the dead role and its count.
#
# The failing runs take --allowance 500ms, so that every late close is past its window's end.
# Exit 77 (skipped) when node or the ws package is missing (scripts/setup.sh test installs them).
#
# usage: third_party.sh ws|python WORK_DIR     (IDLEWHEEL_LOADGEN: the loadgen to run)
set -eu
mode=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${IDLEWHEEL_LOADGEN:?set IDLEWHEEL_LOADGEN}"
mkdir -p "$out"
fail() { echo "third_party $mode: $*" >&2; exit 1; }

server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap stop_server EXIT INT TERM

start() {  # NAME COMMAND...: starts a server, sets $port from its "listening on port N"
    name=$1
    shift
    rm -f "$out/$name.server"
    "$@" >"$out/$name.server" 2>&1 &
    server_pid=$!
    tries=0
    port=
    while [ -z "$port" ]; do
        port=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$out/$name.server")
        tries=$((tries + 1))
        [ "$tries" -lt 200 ] || { cat "$out/$name.server" >&2; fail "$name did not start"; }
        [ -n "$port" ] || sleep 0.05
    done
}

load() {  # NAME ARGS...: scripts/load.sh --url against $port; sets $status
    name=$1
    shift
    status=0
    IDLEWHEEL_DEMO_SERVER= "$root/scripts/load.sh" --url "ws://127.0.0.1:$port/" --connections 300 --connect-rate 1000 \
        --out "$out/$name" "$@" >"$out/$name.txt" 2>&1 || status=$?
}

passes() {  # NAME: exit 0, every role passed, stalled unbounded
    [ "$status" -eq 0 ] || { cat "$out/$1.txt" >&2; fail "$1: scripts/load.sh exited $status, not 0"; }
    grep -q '^checks: PASS' "$out/$1.txt" || fail "$1: no 'checks: PASS'"
    grep -Eq '^stalled +30 +unbounded +pass \(unbounded, [0-9]+ open at the end\)' "$out/$1.txt" ||
        { cat "$out/$1.txt" >&2; fail "$1: the stalled role is not reported unbounded, open at the end"; }
}

fails_on_dead() {  # NAME: exit 1, the banner names the dead role and the count summary.json has
    [ "$status" -eq 1 ] || { cat "$out/$1.txt" >&2; fail "$1: scripts/load.sh exited $status, not 1"; }
    missed=$(sed -n 's/^checks: FAIL: dead (\([0-9]*\) missed of 45).*/\1/p' "$out/$1.txt")
    [ -n "$missed" ] && [ "$missed" -gt 0 ] || { cat "$out/$1.txt" >&2; fail "$1: the banner does not name the dead role's missed kicks"; }
    /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); sys.exit(s["roles"]["dead"]["missed_kicks"] != int(sys.argv[2]) or not all(m["role_passed"] for r, m in s["roles"].items() if r != "dead"))' \
        "$out/$1/summary.json" "$missed" || fail "$1: the banner's count is not summary.json's, or another role failed"
    # The report names the failure in its banner and shows the late closes against the window.
    grep -q '<div id="overall" class="fail">FAIL: dead (' "$out/$1/report.html" || fail "$1: the report's banner does not name the dead role"
    /usr/bin/python3 "$here/report_check.py" "$out/$1/report.html" "$out/$1.png" --expect-fail \
        --plots plot-closes,plot-connections,plot-echo >"$out/$1.check" 2>&1 ||
        { cat "$out/$1.check" >&2; fail "$1: report_check.py"; }
    echo "third_party $mode: $1 failed as it should: $(grep '^checks: ' "$out/$1.txt")"
}

case $mode in
ws)
    servers=$here/servers
    command -v node >/dev/null && [ -f "$servers/node_modules/ws/package.json" ] ||
        { echo "third_party ws: skipped: node or bench/loadgen/servers/node_modules/ws missing (scripts/setup.sh test)"; exit 77; }
    start ws node "$servers/ws_heartbeat.js" 1000
    load ws_kept --expect ws-heartbeat --heartbeat 1s
    stop_server
    passes ws_kept
    start ws_doubled node "$servers/ws_heartbeat.js" 2000
    load ws_doubled --expect ws-heartbeat --heartbeat 1s --allowance 500ms
    stop_server
    fails_on_dead ws_doubled
    ;;
python)
    start python /usr/bin/python3 "$here/servers/python_websockets.py" 1 1
    load python_kept --expect python-websockets --ping-interval 1s --ping-timeout 1s
    stop_server
    passes python_kept
    grep -Eq '^dead +45 +2s\.\.3s@handshake:frame=1011 +pass .*ws_other_close 45' "$out/python_kept.txt" ||
        { cat "$out/python_kept.txt" >&2; fail "python_kept: the dead clients were not all closed with 1011 in their window"; }
    start python_doubled /usr/bin/python3 "$here/servers/python_websockets.py" 2 2
    load python_doubled --expect python-websockets --ping-interval 1s --ping-timeout 1s --allowance 500ms
    stop_server
    fails_on_dead python_doubled
    ;;
*) fail "unknown mode (ws or python)" ;;
esac
echo "third_party $mode: passed"
