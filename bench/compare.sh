#!/bin/sh
# Runs the same loadgen scenario against demo_server --timers=none (no liveness at all: the
# baseline), --timers=wheel and --timers=asio, one after the other, each server started here on
# port 0 and stopped with SIGTERM. Prints each mode's liveness overhead (CPU per echoed message
# and RSS per connection minus the baseline's) and the ratio wheel/asio of those overheads
# against the targets (bench/results.py overhead), then wheel and asio side by side (kick
# lateness, false/missed kicks) with a combined JSON and SVG. The server and loadgen are
# separate processes, each under its own descriptor limit, so 19 000 connections fit.
#
# usage: bench/compare.sh [--quick] [--out DIR] [--build DIR] [--connections N] [--duration D]
#                         [--server-threads N] [--io-threads N] [--shards S] [--client-threads N]
#                         [--nice N] [--pin] [--no-heartbeat] [-- extra loadgen options]
#   default: 19000 WebSocket connections (40 % idle, 40 % active at 1 s, 10 % pingers, 10 % dead),
#            idle timeout 10s, ping interval 3s, pong timeout 3s, jitter 1s, tick 10ms, 40 s per mode
#   --server-threads N: demo_server --threads N (an io_context per thread, a wheel each); default 1
#   --io-threads N: demo_server --io-threads N instead (ONE io_context run by N threads, a
#            wheel_pool for --timers=wheel, a strand and a steady_timer per connection for asio);
#            --shards S adds --shards S (the pool's shards). Exits 77 (skipped) when this
#            demo_server has no --io-threads (or --shards). Leave out --pin with N > 1: it would
#            put every server thread on CPU 0
#   --quick: 500 connections, idle timeout 3s, ping 1s / pong 1s / jitter 500ms, 10 s per mode
#   --nice N: run in a session of its own (a scheduler autogroup) with this niceness, e.g. -10 as
#            root, so other jobs on a shared machine do not starve the measurement; the output says so
#   --pin:   server on CPU 0, loadgen on the other CPUs (taskset), so the two do not migrate between
#            sharing a CPU and not: on a VM that changes the server's system time per message
#   --no-heartbeat: no pings (--ping-interval 0 for server and loadgen) and no pinger or dead
#            clients (50 % idle, 50 % active): the overhead of idle detection and deadlines
#            alone, without the ping and pong traffic every liveness mode sends alike
#   --strict: also fail when a target is missed (the smoke test does not: ratios of a 500-connection
#            run on a busy CI machine are noise)
# Exit status: 0 when every run passed its checks (no false, missed or wrong kicks), 1 otherwise.
set -eu
command_line="$0 $*"

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/server_control.sh"
own_session_if_nice "$0" "$@"
build=$root/build/loadgen
out=
connections=19000
duration=40s
idle_timeout=10s
ping_interval=3s
pong_timeout=3s
ping_jitter=1s
tick=10ms
interval=1s
connect_rate=5000
server_threads=1
io_threads=
shards=
client_threads=1
quick=0
niceness=
pin=0
strict=
no_heartbeat=0
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1; connections=500; duration=10s; idle_timeout=3s; ping_interval=1s; pong_timeout=1s; ping_jitter=500ms ;;
        --out) out=$2; shift ;;
        --build) build=$2; shift ;;
        --connections) connections=$2; shift ;;
        --duration) duration=$2; shift ;;
        --server-threads) server_threads=$2; shift ;;
        --io-threads) io_threads=$2; shift ;;
        --shards) shards=$2; shift ;;
        --client-threads) client_threads=$2; shift ;;
        --nice) niceness=$2; shift ;;
        --pin) pin=1 ;;
        --no-heartbeat) no_heartbeat=1 ;;
        --strict) strict=--strict ;;
        --) shift; break ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | grep '^#'; exit 0 ;;
        *) echo "compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
mix="--idle 0.4 --active 0.4 --pingers 0.1 --dead 0.1"
if [ $no_heartbeat -eq 1 ]; then ping_interval=0s; mix="--idle 0.5 --active 0.5"; fi
[ -n "$out" ] || out=$build/compare
mkdir -p "$out"

find_programs "$build"
require_server_support "none:"
# The server's threading: an io_context per thread (--threads), or one io_context on N threads.
threading="--threads $server_threads"
if [ -n "$io_threads" ]; then
    require_server_support "--io-threads"
    threading="--io-threads $io_threads"
elif [ -n "$shards" ]; then
    echo "compare.sh: --shards needs --io-threads" >&2; exit 2
fi
if [ -n "$shards" ]; then
    require_server_support "--shards"
    threading="$threading --shards $shards"
fi

run=
if [ -n "$niceness" ]; then
    run="nice -n $niceness"
    if [ -w /proc/self/autogroup ]; then
        echo "$niceness" >/proc/self/autogroup 2>/dev/null || echo "compare.sh: could not set the autogroup niceness" >&2
    fi
fi
run_server=$run
run_client=$run
cpus=$(nproc)
if [ $pin -eq 1 ]; then
    if [ "$cpus" -lt 2 ]; then echo "compare.sh: --pin needs 2 CPUs" >&2; exit 2; fi
    run_server="$run taskset -c 0"
    run_client="$run taskset -c 1-$((cpus - 1))"
fi
echo "compare.sh: $command_line"
echo "compare.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "compare.sh: demo_server $threading; $connections connections, $duration per mode, idle timeout $idle_timeout, ping $ping_interval / pong $pong_timeout / jitter $ping_jitter, tick $tick${niceness:+, niceness $niceness}$( [ $pin -eq 1 ] && echo ", server pinned to CPU 0, loadgen to CPUs 1-$((cpus - 1))"); results in $out"

trap stop_servers EXIT INT TERM

timing="--idle-timeout $idle_timeout --ping-interval $ping_interval --pong-timeout $pong_timeout --ping-jitter $ping_jitter"
failed=0
for mode in none wheel asio; do
    # Room above the scenario for the /stats requests: at --max-connections the server would
    # accept and close them at once.
    start_server "server-$mode" "$run_server" --timers="$mode" $threading --tcp-port 0 --http-port 0 \
        $timing --tick "$tick" --max-connections $((connections + 500)) --quiet || exit 1
    server=$started_pid
    echo "== $mode: demo_server --timers=$mode $threading (pid $server, http port $http_port) =="
    rc=0
    $run_client "$loadgen" --http-port "$http_port" --protocol ws -n "$connections" --threads "$client_threads" \
        $mix --interval "$interval" --connect-rate "$connect_rate" \
        $timing --duration "$duration" --label "$mode" --json "$out/$mode.json" "$@" \
        | tee "$out/$mode.txt" || rc=$?
    # tee hides loadgen's status in plain sh; the JSON carries the verdict.
    if ! grep -q '"passed":true' "$out/$mode.json" 2>/dev/null; then rc=1; fi
    [ $rc -eq 0 ] || failed=1
    stop_servers
    sleep 2  # let the kernel reap the closed sockets before the next server starts
done

echo "== wheel vs asio =="
"$loadgen" --combine "$out/wheel.json" "$out/asio.json" --json "$out/compare.json" | tee "$out/compare.txt" || true
/usr/bin/python3 "$here/loadgen/plot.py" "$out/wheel.json" "$out/asio.json" --out "$out/compare.svg" || failed=1
echo "== liveness overhead: none, wheel, asio =="
python3 "$here/results.py" overhead "$out" $strict | tee "$out/overhead.txt" || failed=1
# tee hides the status: the table's last line carries it.
grep -q '^checks: every run passed' "$out/overhead.txt" || failed=1
if [ -n "$strict" ] && grep -q 'MISSED' "$out/overhead.txt"; then failed=1; fi
echo "compare.sh: load average $(cut -d' ' -f1-3 /proc/loadavg); wrote $out/compare.json, $out/compare.svg and $out/overhead.txt"
exit $failed
