#!/usr/bin/env bash
# The cost of idlewheel::beast::tcp_stream's executor check in a release build
# (IDLEWHEEL_CHECK_STREAM_EXECUTOR, on by default even with NDEBUG): the read case of
# bench/tcp_stream.sh (every connection with a read always pending, expires_after(30s) +
# async_read_some, ns of CPU per read) built twice in one Release build, with the check
# (idlewheel_tcp_stream_bench) and without (idlewheel_tcp_stream_bench_unchecked), run in
# alternation ROUNDS times; prints the medians and their ratio.
#
# Usage: bench/tcp_stream_check_cost.sh [ROUNDS [SIZES]]   (defaults 5, 1000,10000)
# Environment: BUILD_DIR (default build/bench). Builds at nice 19 with one job.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build/bench}
rounds=${1:-5}
sizes=${2:-1000,10000}
nice -n 19 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON \
  -DIDLEWHEEL_BUILD_TESTS=OFF -DIDLEWHEEL_BUILD_DEMO=OFF >/dev/null
nice -n 19 cmake --build "$build" -j1 --target idlewheel_tcp_stream_bench idlewheel_tcp_stream_bench_unchecked >/dev/null
out=$(mktemp -d)
for ((i = 1; i <= rounds; ++i)); do
  for variant in idlewheel_tcp_stream_bench idlewheel_tcp_stream_bench_unchecked; do
    "$build/bench/micro/$variant" --sizes="$sizes" --benchmark_filter='^read/idlewheel/' \
      --benchmark_min_time=0.3 --benchmark_out="$out/$variant.$i.json" --benchmark_out_format=json >/dev/null 2>&1
  done
done
python3 - "$out" "$rounds" <<'PY'
import glob, json, statistics, sys
from collections import defaultdict
out, rounds = sys.argv[1], int(sys.argv[2])
ns = defaultdict(list)  # (variant, n) -> ns per read of each round
for f in glob.glob(f"{out}/*.json"):
    variant = f.rsplit("/", 1)[1].split(".")[0]
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") == "iteration" and b["run_name"].startswith("read/idlewheel/"):
            ns[(variant, int(b["run_name"].split("/")[2]))].append(b["ns_per_read"])
print(f"ns of CPU per read, idlewheel::beast::tcp_stream, Release (median of {rounds} alternating rounds)")
print("| connections | with the check | without | ratio |")
print("|---:|---:|---:|---:|")
for n in sorted({n for (_, n) in ns}):
    w = statistics.median(ns[("idlewheel_tcp_stream_bench", n)])
    wo = statistics.median(ns[("idlewheel_tcp_stream_bench_unchecked", n)])
    print(f"| {n:,} | {w:.0f} | {wo:.0f} | {w / wo:.3f} |")
PY
rm -rf "$out"
