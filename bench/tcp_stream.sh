#!/usr/bin/env bash
# boost::beast::tcp_stream against idlewheel::beast::tcp_stream (issue 24 item 6), side by side
# in one run: builds idlewheel_tcp_stream_bench (Release) and prints
#   1. ns of CPU per read at N connections, every connection with a read always pending:
#      a raw tcp::socket read, each stream with expires_after(30s) + async_read_some; the
#      deadline's cost (stream - raw) and its ratio; then each stream with and without a
#      deadline in alternate sweeps, and the difference (the deadline's cost, paired);
#   2. sizeof and heap bytes per connection: each stream alone (built, and with a read pending
#      with a 30 s deadline), under websocket::stream (ours with a websocket_liveness), under
#      ssl_stream.
# What each case does: bench/micro/bench_tcp_stream.cpp.
#
# Usage: bench/tcp_stream.sh [--rounds N] [--sizes LIST] [--min-time S] [--quick]
#   --rounds N    repetitions of every read case, interleaved at random across all cases
#                 (Google Benchmark --benchmark_enable_random_interleaving), so that other jobs
#                 on a shared machine hit every contender alike; medians are reported. Default 7
#   --sizes LIST  connections of the read cases, default 1000,10000,19000 (19 000: the most
#                 that fits a hard descriptor limit of 20 000, as this process holds one end
#                 of each connection and a child process the other)
#   --min-time S  Google Benchmark's minimum time per repetition (CPU time of the timed
#                 sweeps), default 0.5
#   --nice N      measure at this niceness, in a scheduler autogroup of its own with that
#                 niceness (default 0; e.g. -10 as root, on a machine other jobs are using)
#   --quick       sizes 100,1000, 1 round, 0.05 s: a rehearsal, not a result
# Environment: BUILD_DIR (default build/bench), OUT_DIR (default $BUILD_DIR/tcp_stream).
# Builds at nice 19 with one job (the machine is shared). About 6 minutes with the defaults.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build/bench}
out=${OUT_DIR:-$build/tcp_stream}
args=("$@")
rounds=7
sizes=1000,10000,19000
min_time=0.5
niceness=0
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --min-time) min_time=$2; shift ;;
    --nice) niceness=$2; shift ;;
    --quick) rounds=1; sizes=100,1000; min_time=0.05 ;;
    *) echo "tcp_stream.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

nice -n 19 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON \
  -DIDLEWHEEL_BUILD_TESTS=OFF -DIDLEWHEEL_BUILD_DEMO=OFF >/dev/null
nice -n 19 cmake --build "$build" -j1 --target idlewheel_tcp_stream_bench >/dev/null
mkdir -p "$out"

# With --nice, measure in a session of its own (a scheduler autogroup: with autogroup scheduling,
# niceness only counts within a session) with that niceness, as bench/compare.sh --nice does.
# After the build, so that the build keeps nice 19; the re-run finds everything built.
if [ "$niceness" != 0 ]; then
  if [ -z "${IDLEWHEEL_BENCH_SESSION:-}" ] && command -v setsid >/dev/null 2>&1; then
    IDLEWHEEL_BENCH_SESSION=1 exec setsid -w "$0" "${args[@]}"
  fi
  if [ -w /proc/self/autogroup ]; then
    echo "$niceness" >/proc/self/autogroup 2>/dev/null || echo "$(basename "$0"): could not set the autogroup niceness" >&2
  fi
  renice -n "$niceness" -p $$ >/dev/null 2>&1 || echo "$(basename "$0"): could not renice" >&2
fi

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "command: bench/tcp_stream.sh ${args[*]}"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- lib bench || echo ' (+ working tree changes)')"
  echo "nproc: $(nproc), cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "compiler: $(${CXX:-c++} --version | head -1), boost: $(dpkg-query -W -f='${Version}' libboost1.81-dev 2>/dev/null || echo '?')"
  echo "descriptors: soft $(ulimit -Sn), hard $(ulimit -Hn)"
  echo "niceness: $(nice) (autogroup: $(cat /proc/self/autogroup 2>/dev/null || echo '?'))"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

"$build/bench/micro/idlewheel_tcp_stream_bench" --sizes="$sizes" --memory_n=1000 \
  --benchmark_repetitions="$rounds" --benchmark_enable_random_interleaving=true \
  --benchmark_min_time="$min_time" \
  --benchmark_out="$out/tcp_stream.json" --benchmark_out_format=json --benchmark_format=console \
  >"$out/console.txt" 2>&1
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

python3 - "$out/tcp_stream.json" <<'PY'
import json, statistics, sys
from collections import defaultdict

runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
reads = defaultdict(list)   # (contender, n) -> ns_per_read of each repetition
paired = defaultdict(list)  # (stream, n) -> (with, without, cost) of each repetition
memory = {}
for b in runs:
    parts = b["run_name"].split("/")
    if parts[0] == "read":
        reads[(parts[1], int(parts[2]))].append(b["ns_per_read"])
    elif parts[0] == "paired":
        paired[(parts[1], int(parts[2]))].append((b["ns_with_deadline"], b["ns_without_deadline"], b["ns_deadline_cost"]))
    elif parts[0] == "memory":
        memory[(parts[1], parts[2])] = b

def med(c, n):
    return statistics.median(reads[(c, n)])

def spread(c, n):
    v = reads[(c, n)]
    return f"{min(v):.0f}-{max(v):.0f}"

def ratio(a, b):
    return f"{a / b:.1f}x" if b > 0 else "idlewheel's <= 0 (within the noise)"

sizes = sorted({n for (_, n) in reads})
reps = min(len(v) for v in reads.values())
print(f"\nns of CPU per read, separate cases (median of {reps} repetitions; min-max in brackets)")
print("| connections | raw tcp::socket | beast::tcp_stream | idlewheel tcp_stream | deadline's cost: beast - raw | idlewheel - raw | beast's / idlewheel's |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for n in sizes:
    raw, be, iw = med("raw", n), med("beast", n), med("idlewheel", n)
    print(f"| {n:,} | {raw:.0f} ({spread('raw', n)}) | {be:.0f} ({spread('beast', n)}) | {iw:.0f} ({spread('idlewheel', n)}) "
          f"| {be - raw:+.0f} | {iw - raw:+.0f} | {ratio(be - raw, iw - raw)} |")

if paired:
    preps = min(len(v) for v in paired.values())
    print(f"\nns of CPU per read, each stream with and without a deadline in alternate sweeps (median of {preps} repetitions; the cost's min-max in brackets)")
    print("| connections | beast: with / without | beast's deadline cost | idlewheel: with / without | idlewheel's deadline cost | beast's / idlewheel's |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in sorted({n for (_, n) in paired}):
        row = []
        costs = []
        for c in ("beast", "idlewheel"):
            v = paired[(c, n)]
            w, o, k = (statistics.median(x[i] for x in v) for i in range(3))
            ks = [x[2] for x in v]
            costs.append(k)
            row.append(f"{w:.0f} / {o:.0f} | {k:+.0f} ({min(ks):+.0f} to {max(ks):+.0f})")
        print(f"| {n:,} | {row[0]} | {row[1]} | {ratio(costs[0], costs[1])} |")

names = {
    "beast_tcp_stream": "`boost::beast::tcp_stream`",
    "idlewheel_tcp_stream": "`idlewheel::beast::tcp_stream`",
    "ws_beast_tcp_stream": "`websocket::stream<boost::beast::tcp_stream>`",
    "ws_idlewheel_tcp_stream_liveness": "`websocket::stream<idlewheel::beast::tcp_stream>` + `websocket_liveness` (+ `enable_shared_from_this`)",
    "ssl_beast_tcp_stream": "`ssl_stream<boost::beast::tcp_stream>`",
    "ssl_idlewheel_tcp_stream": "`ssl_stream<idlewheel::beast::tcp_stream>`",
}
if memory:
    n = int(next(iter(memory.values()))["run_name"].split("/")[3])
    print(f"\nbytes per connection ({n:,} connections; the connected socket's reactor state not counted)")
    print("| object | state | sizeof | heap (malloc footprint) | heap (usable bytes counted) | allocations | sizeof + heap footprint |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for kind in names:
      for state in ("built", "armed"):
        if (kind, state) not in memory: continue
        b = memory[(kind, state)]
        extra = f" (of which `websocket_liveness` {b['sizeof_liveness']:.0f})" if "sizeof_liveness" in b else ""
        print(f"| {names.get(kind, kind)} | {state} | {b['sizeof']:.0f}{extra} | {b['heap_footprint_per_conn']:.0f} "
              f"| {b['heap_counted_per_conn']:.0f} | {b['allocs_per_conn']:.2f} | {b['sizeof'] + b['heap_footprint_per_conn']:.0f} |")
    print(f"\nsizeof(net::steady_timer) = {next(iter(memory.values()))['sizeof_steady_timer']:.0f} "
          "(websocket::stream's impl holds one, in the heap bytes above, in both ws rows)")
PY
