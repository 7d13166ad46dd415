#!/bin/sh
# loadgen --url against a server that is not demo_server (ctest labels "smoke;examples"): starts
# SERVER 127.0.0.1 0 SERVER_ARGS... on loopback, reads the port from its "listening on port N"
# line, runs 400 WebSocket clients for 5 s with Beast's timeout semantics as the expectation
# (--expect beast-timeouts --idle-timeout 1000ms --handshake-timeout 500ms: idle, active and
# pinger clients answer pings and are never closed, dead clients are dropped 1 s after their
# upgrade request, stalled ones, which send half an upgrade request, 500 ms after their
# connect), no /stats, then stops the server by its PID.
#
#   kept:   every verdict must pass (a server with Beast's timeouts, idle 1000 ms: handshake
#           500 ms), and the JSON must show every dead and stalled client dropped and every
#           other client open;
#   missed: the server keeps its dead and stalled clients (Beast's timeout::suggested: idle
#           300 s, handshake 30 s): loadgen must exit 1 and name the dead and stalled roles'
#           missed kicks, the other roles passing.
#
# usage: any_server.sh LOADGEN WORK_DIR kept|missed SERVER [SERVER_ARGS...]
#
# In SERVER_ARGS, @CERT@ and @KEY@ stand for a throwaway self-signed certificate and its key
# (made here with openssl, valid one day) and @DOCROOT@ for an empty directory: the TLS and flex
# examples take them. Two variables change the clients: ANY_SERVER_SCHEME=wss (TLS clients,
# the certificate not checked; default ws) and ANY_SERVER_HANDSHAKE_MS (the promised handshake
# deadline, default 500: a server that bounds its HTTP phase with expires_after(T) drops a
# stalled client at T).
set -eu
loadgen=$1
out=$2
want=$3
server=$4
shift 4
scheme=${ANY_SERVER_SCHEME:-ws}
handshake_ms=${ANY_SERVER_HANDSHAKE_MS:-500}
mkdir -p "$out" "$out/docroot"
rm -f "$out/server.out"  # else the wait below may read the port of a previous run before the shell truncates it

for a in "$@"; do
    case $a in
    @CERT@ | @KEY@)
        if [ ! -s "$out/cert.pem" ]; then
            openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
                -keyout "$out/key.pem" -out "$out/cert.pem" 2>/dev/null
        fi
        ;;
    esac
done
args=""
for a in "$@"; do
    case $a in
    @CERT@) a=$out/cert.pem ;;
    @KEY@) a=$out/key.pem ;;
    @DOCROOT@) a=$out/docroot ;;
    esac
    args="$args $a"  # no argument here holds a space
done

# shellcheck disable=SC2086 # the arguments split as given
"$server" 127.0.0.1 0 $args >"$out/server.out" 2>"$out/server.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT INT TERM
i=0
until grep -q '^listening on port ' "$out/server.out" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "any_server: $server printed no port" >&2
        exit 1
    fi
    sleep 0.1
done
port=$(sed -n 's/^listening on port //p' "$out/server.out")

rc=0
"$loadgen" --url "$scheme://127.0.0.1:$port/" --expect beast-timeouts --idle-timeout 1000ms --handshake-timeout "${handshake_ms}ms" \
    -n 400 --idle 0.25 --active 0.25 --pingers 0.2 --dead 0.2 --stalled 0.1 --interval 200ms \
    --duration 5s --connect-rate 2000 --allowance 1s --no-progress --json "$out/result.json" >"$out/loadgen.txt" || rc=$?
cat "$out/loadgen.txt"
kill "$pid"
wait "$pid" 2>/dev/null || true
trap - EXIT INT TERM

role_line() {  # ROLE: its row of the outcome table
    grep -E "^ +$1 +[0-9]+ " "$out/loadgen.txt"
}
fail() {
    echo "any_server: $*" >&2
    exit 1
}
case $want in
kept)
    [ "$rc" -eq 0 ] || fail "loadgen exited $rc, expected 0 (every verdict passed)"
    python3 - "$out/result.json" <<'EOF' || fail "the outcomes are not those of Beast's timeouts"
import json, sys
r = json.load(open(sys.argv[1]))
o, mix = r["outcomes"], r["scenario"]["mix"]
ok = all(o[k]["open"] == mix[k] and o[k]["role_passed"] for k in ("idle", "active", "pinger"))
ok = ok and all(o[k]["dropped"] == mix[k] and o[k]["role_passed"] for k in ("dead", "stalled"))
ok = ok and r["checks"]["passed"]
sys.exit(0 if ok else 1)
EOF
    ;;
missed)
    [ "$rc" -eq 1 ] || fail "loadgen exited $rc, expected 1 (dead and stalled clients not dropped)"
    for r in dead stalled; do
        role_line "$r" | grep -q 'FAIL missed' || fail "the $r role is not reported as missed"
        grep -q "missed kick: $r client" "$out/loadgen.txt" || fail "no 'missed kick: $r client' problem line"
    done
    for r in idle active pinger; do
        role_line "$r" | grep -q ' pass ' || fail "role $r did not pass"
    done
    ;;
*) fail "want kept or missed, not $want" ;;
esac
echo "any_server: $want as expected"
