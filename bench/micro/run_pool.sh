#!/usr/bin/env bash
# The figures of bench/results/2026-11-25-wheel-pool.md in one command: the per-message
# liveness cost in each threading shape (idlewheel_pool_bench) and the load imbalance between
# a wheel_pool's shards (idlewheel_pool_imbalance), with the machine's state around them.
#
# Usage: bench/micro/run_pool.sh [--rounds N] [--nice N] [--quick]
#   --rounds N  repetitions of every micro case, interleaved at random across the cases
#               (Google Benchmark --benchmark_enable_random_interleaving), so that a burst of
#               other jobs on a shared machine hits every contender alike; default 5
#   --nice N    run the benchmarks at this niceness, in a scheduler autogroup of their own with
#               that niceness (default 0; e.g. -10 as root to be less disturbed by other jobs)
#   --quick     10 000 sessions, 1 repetition, 20 000 assignments of 100 ms mean lifetime: a
#               rehearsal, not a result
# Environment: BUILD_DIR (default build/pool; configured here with ccache when new),
#              OUT_DIR (default $BUILD_DIR/pool-results).
# Takes about 4 minutes on 2 cores (5 rounds).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build/pool}
out=${OUT_DIR:-$build/pool-results}
args=("$@")
rounds=5
niceness=0
sessions=100000
assignments=100000
lifetimes="1000 100"
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --nice) niceness=$2; shift ;;
    --quick) rounds=1; sessions=10000; assignments=20000; lifetimes=100 ;;
    *) echo "run_pool.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

# With --nice, run in a session of its own (a scheduler autogroup: with autogroup scheduling,
# niceness only counts within a session) and give that autogroup the niceness too, as
# bench/compare.sh --nice does.
if [ "$niceness" != 0 ]; then
  if [ -z "${IDLEWHEEL_BENCH_SESSION:-}" ] && command -v setsid >/dev/null 2>&1; then
    IDLEWHEEL_BENCH_SESSION=1 exec setsid -w "$0" "${args[@]}"
  fi
  if [ -w /proc/self/autogroup ]; then
    echo "$niceness" >/proc/self/autogroup 2>/dev/null || echo "run_pool.sh: could not set the autogroup niceness" >&2
  fi
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON -DIDLEWHEEL_BUILD_TESTS=OFF \
    -DIDLEWHEEL_BUILD_DEMO=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build "$build" -j2 --target idlewheel_pool_bench idlewheel_pool_imbalance >/dev/null
mkdir -p "$out"

# Busy share of the whole machine (every process, ours included) between two /proc/stat reads.
cpu_sample() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
busy_since() {
  read -r b1 t1 <<<"$1"
  read -r b2 t2 <<<"$(cpu_sample)"
  awk -v b=$((b2 - b1)) -v t=$((t2 - t1)) 'BEGIN { printf "%.0f %%", t ? 100 * b / t : 0 }'
}

echo "run_pool.sh ${args[*]}: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- lib bench/micro bench/sim || echo ' + changes'), $(nproc) CPUs, niceness $niceness"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(cpu_sample)
nice -n "$niceness" "$build/bench/micro/idlewheel_pool_bench" --sessions="$sessions" \
  --benchmark_repetitions="$rounds" --benchmark_enable_random_interleaving=true --benchmark_min_time=0.3 \
  --benchmark_out="$out/pool_bench.json" --benchmark_out_format=json >"$out/pool_bench.txt"
echo "micro: load average $(cut -d' ' -f1-3 /proc/loadavg) at its end; the machine $(busy_since "$start") busy during it"
python3 "$root/bench/micro/pool_report.py" "$out/pool_bench.json" | tee "$out/pool_report.txt"

echo
echo "== imbalance between shards: wheel_pool round robin (pool.next()), 8 shards, 2 threads, $assignments assignments =="
start=$(cpu_sample)
for life in $lifetimes; do
  nice -n "$niceness" "$build/bench/sim/idlewheel_pool_imbalance" --shards=8 --threads=2 --assignments="$assignments" \
    --rate=10000 --mean-lifetime-ms="$life" | tee "$out/imbalance_$life.txt"
done
echo "imbalance: load average $(cut -d' ' -f1-3 /proc/loadavg) at its end; the machine $(busy_since "$start") busy during it"
