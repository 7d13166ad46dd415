#!/bin/sh
# Tests of scripts/load.sh, the load test in one command (ctest, label "load"; the test build's
# programs through IDLEWHEEL_LOADGEN / IDLEWHEEL_DEMO_SERVER, so nothing is built or installed).
#
#   report:    300 connections of every role against the demo the command starts itself: exit 0,
#              "pass" for every role in the printed table, then the HTML report in headless
#              Chromium (report_check.py: the verdict table's text, the three plots' pixels).
#   processes: the multi-process path: 600 connections over 2 loadgen and 2 demo_server
#              processes: the progress lines (at most 120 columns, per role every few seconds),
#              the merged summary (its counts are the sum of
#              the processes' results, every role passes); then --url against a demo_server
#              started here with a wrong promise (--expect none: its idle kicks are false
#              kicks) over 2 processes: exit 1 and a FAIL for the idle role.
#
# usage: load_test.sh report|processes WORK_DIR
set -eu
mode=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
: "${IDLEWHEEL_LOADGEN:?set IDLEWHEEL_LOADGEN}" "${IDLEWHEEL_DEMO_SERVER:?set IDLEWHEEL_DEMO_SERVER}"
fail() { echo "load_test $mode: $*" >&2; exit 1; }

every_role_passed() {  # OUTPUT ROLES...: the printed summary says pass for each role and PASS
    file=$1
    shift
    for role in "$@"; do
        grep -Eq "^$role +[0-9]+ .* pass " "$file" || { cat "$file" >&2; fail "no pass for $role in $file"; }
    done
    grep -q '^checks: PASS' "$file" || { cat "$file" >&2; fail "no 'checks: PASS' in $file"; }
}

case $mode in
report)
    status=0
    "$root/scripts/load.sh" --connections 300 --connect-rate 1000 --allowance 2s --out "$out/report" >"$out/report.txt" 2>&1 || status=$?
    [ "$status" -eq 0 ] || { cat "$out/report.txt" >&2; fail "scripts/load.sh exited $status"; }
    every_role_passed "$out/report.txt" idle active pinger dead stalled
    grep -q '^== loadgen: loadgen-0' "$out/report.txt" || fail "loadgen's own table was not printed"
    /usr/bin/python3 "$here/report_check.py" "$out/report/report.html" "$out/report.png"
    ;;
processes)
    status=0
    "$root/scripts/load.sh" --connections 600 --processes 2 --servers 2 --connect-rate 1000 --allowance 2s \
        --out "$out/two" >"$out/two.txt" 2>&1 || status=$?
    [ "$status" -eq 0 ] || { cat "$out/two.txt" >&2; fail "scripts/load.sh --processes 2 exited $status"; }
    every_role_passed "$out/two.txt" idle active pinger dead stalled
    grep -q '^== load: 600 connections, 2 loadgen processes, 2 demo_server processes' "$out/two.txt" ||
        fail "the summary does not say 2 loadgen and 2 demo_server processes"
    [ "$(grep -c '^\[load ' "$out/two.txt")" -ge 3 ] || fail "fewer than 3 progress lines"
    grep -Eq '^\[load +[0-9]+s\] 600/600 up, [0-9]+ kicked, 0 failed$' "$out/two.txt" ||
        fail "no progress line with every connection up"
    grep -Eq '^ {9}idle +[0-9]+/[0-9]+ up, [0-9]+ kicked, 0 failed$' "$out/two.txt" || fail "no per-role progress line for idle"
    awk '/^\[load / && length($0) > 120 { bad = 1 } END { exit bad }' "$out/two.txt" || fail "a progress line is wider than 120 columns"
    # The merged summary is the sum of the processes' own results.
    /usr/bin/python3 - "$out/two" <<'PY' || fail "the merged summary is not the sum of the processes' results"
import glob, json, os, sys
d = sys.argv[1]
summary = json.load(open(os.path.join(d, "summary.json")))
runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, "loadgen-*.json")))]
assert len(runs) == 2 and summary["processes"] == 2, (len(runs), summary["processes"])
assert all(r["scenario"]["connections"] > 0 for r in runs)
assert len({r["scenario"]["first_source"] for r in runs}) == 2, "the processes share their source addresses"
for role, m in summary["roles"].items():
    assert m["count"] == sum(r["scenario"]["mix"][role] for r in runs), role
    for key in ("ws_idle_close", "dropped", "open", "false_kicks", "missed_kicks"):
        assert m[key] == sum(r["outcomes"][role][key] for r in runs), (role, key)
assert summary["connections"] == 600 and summary["ready"] == 600 and summary["passed"], summary
PY
    # Any server, a wrong promise: the server kicks idle clients, --expect none says it never does.
    . "$root/bench/server_control.sh"
    demo=$IDLEWHEEL_DEMO_SERVER
    trap stop_servers EXIT INT TERM
    start_server wrong "" --tcp-port 0 --http-port 0 --idle-timeout 2s --ping-interval 0s --tick 10ms --quiet || exit 1
    status=0
    "$root/scripts/load.sh" --url "ws://127.0.0.1:$http_port/" --expect none --connections 200 --processes 2 \
        --idle 0.5 --active 0.5 --duration 5s --out "$out/wrong" >"$out/wrong.txt" 2>&1 || status=$?
    [ "$status" -eq 1 ] || { cat "$out/wrong.txt" >&2; fail "a wrong promise: scripts/load.sh exited $status, not 1"; }
    grep -Eq '^idle +100 +open +FAIL false 100' "$out/wrong.txt" || { cat "$out/wrong.txt" >&2; fail "no FAIL for the idle role"; }
    grep -Eq '^active +100 .* pass ' "$out/wrong.txt" || fail "the active role did not pass"
    grep -q '^checks: FAIL' "$out/wrong.txt" || fail "no 'checks: FAIL'"
    kill -0 "$started_pid" || fail "scripts/load.sh --url stopped the server it did not start"
    ;;
*) fail "unknown mode (report or processes)" ;;
esac
echo "load_test $mode: passed"
