#!/bin/sh
# Saturation: how many echoes a second demo_server serves with no liveness (--timers=none), one
# timing wheel per thread (wheel) and one steady_timer per connection (asio), when every client
# sends its next message as soon as the echo arrives (loadgen --closed-loop; all clients
# active). Runs every mode at each connection count, first with the server on one thread pinned
# to CPU 0, then with --threads 2 on both CPUs; loadgen runs on the last CPU. Prints echoed
# messages per second (the server's own count over the steady window), their ratios to none,
# and the target (wheel >= 97 % of none) via bench/results.py saturation.
#
# usage: bench/saturation.sh [--quick] [--out DIR] [--build DIR] [--connections "N ..."] [--nice N]
#                            [--threads "T ..."] [--io-threads "T ..."] [--shards S] [--duration D] [--strict]
#   default: 1000 and 19000 connections, server threads 1 and 2, 20 s per run (12 runs)
#   --threads "T ...": demo_server --threads T (an io_context per thread) for each T; "" for none
#   --io-threads "T ...": also demo_server --io-threads T (ONE io_context run by T threads, a
#            wheel_pool for wheel) for each T, the server on every CPU; rows "io:T". --shards S
#            adds --shards S to those runs. Exits 77 (skipped) when this demo_server has no
#            --io-threads (or --shards)
#   --quick: 100 connections, threads 1 and 2, 4 s per run (the test suite's smoke run)
#   --nice N: run everything at niceness N in a scheduler autogroup of its own (e.g. -10 as root
#            on a shared machine, as compare.sh --nice)
#   --strict: also fail when the target is missed
# Exit status: 0 when every run passed loadgen's checks (no client closed, no errors), 1 otherwise.
set -eu
command_line="$0 $*"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/server_control.sh"
own_session_if_nice "$0" "$@"
build=$root/build/loadgen
out=
connection_counts="1000 19000"
thread_counts="1 2"
io_thread_counts=
shards=
duration=20s
strict=
niceness=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) connection_counts=100; duration=4s ;;
        --out) out=$2; shift ;;
        --build) build=$2; shift ;;
        --connections) connection_counts=$2; shift ;;
        --threads) thread_counts=$2; shift ;;
        --io-threads) io_thread_counts=$2; shift ;;
        --shards) shards=$2; shift ;;
        --duration) duration=$2; shift ;;
        --strict) strict=--strict ;;
        --nice) niceness=$2; shift ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | grep '^#'; exit 0 ;;
        *) echo "saturation.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$out" ] || out=$build/saturation
mkdir -p "$out"
rm -f "$out"/sat-*.json
find_programs "$build"
require_server_support "none:"
if [ -n "$io_thread_counts" ]; then require_server_support "--io-threads"; fi
if [ -n "$shards" ]; then
    [ -n "$io_thread_counts" ] || { echo "saturation.sh: --shards needs --io-threads" >&2; exit 2; }
    require_server_support "--shards"
fi
if [ -n "$niceness" ]; then set_niceness "$niceness"; fi
trap stop_servers EXIT INT TERM

cpus=$(nproc)
last=$((cpus - 1))
echo "saturation.sh: $command_line"
echo "saturation.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $cpus CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); results in $out"
timing="--idle-timeout 60s --ping-interval 5s --pong-timeout 5s --ping-jitter 1s"
failed=0
# Each entry: T (demo_server --threads T) or ioT (--io-threads T).
shapes=
for t in $thread_counts; do shapes="$shapes $t"; done
for t in $io_thread_counts; do shapes="$shapes io$t"; done
for shape in $shapes; do
    case $shape in
        io*) threads=${shape#io}; threading="--io-threads $threads${shards:+ --shards $shards}" ;;
        *) threads=$shape; threading="--threads $threads" ;;
    esac
    # One server thread: pinned to CPU 0, loadgen on the last CPU. Two: the server may use
    # every CPU (it shares the last one with loadgen: on 2 cores there is no other way).
    if [ "$threads" -eq 1 ]; then server_cpus=0; else server_cpus=0-$last; fi
    for n in $connection_counts; do
        for mode in none wheel asio; do
            name=sat-$shape-$n-$mode
            start_server "$name" "taskset -c $server_cpus" --timers="$mode" $threading --tcp-port 0 --http-port 0 \
                $timing --max-connections $((n + 500)) --quiet || exit 1
            echo "== $mode, demo_server $threading on CPU $server_cpus, $n closed-loop connections =="
            rc=0
            taskset -c "$last" "$loadgen" --http-port "$http_port" --protocol ws -n "$n" --idle 0 --active "$n" --pingers 0 --dead 0 \
                --closed-loop --connect-rate 5000 $timing --duration "$duration" --label "$mode" --no-progress \
                --json "$out/$name.json" >"$out/$name.txt" 2>&1 || rc=$?
            grep -E '^(server cost|  steady|checks)' "$out/$name.txt" || true
            [ $rc -eq 0 ] || { failed=1; tail -5 "$out/$name.txt"; }
            stop_servers
            sleep 1
        done
    done
done
echo "== saturation =="
python3 "$here/results.py" saturation "$out" $strict | tee "$out/saturation.txt"
grep -q '^checks: every run passed' "$out/saturation.txt" || failed=1
if [ -n "$strict" ] && grep -q 'MISSED' "$out/saturation.txt"; then failed=1; fi
echo "saturation.sh: load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
