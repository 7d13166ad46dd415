#!/usr/bin/env bash
# Before/after of a change to the library, both builds side by side in one run: builds
# idlewheel_micro and idlewheel_sim (Release) from REV (default: the first parent of HEAD) in
# a worktree of its own and from the working tree, then runs the chosen cases of both builds
# interleaved, ROUNDS times each (so that a change of machine load hits both alike), and
# prints each case's median per build and the ratio after/before.
#
# Usage: bench/ab_compare.sh [--rev REV] [--rounds N] [--quick]
#   default cases: touch/idlewheel_watch_pure (on_read) and schedule_cancel/idlewheel_*_per_tick
#   at N = 100 000, and the 1 000 000-session simulation (manual clock: work per simulated
#   second, in ns of CPU per session).
# Environment: BUILD_DIR (default build/ab).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build/ab}
rev=HEAD~1
rounds=5
sim_args=(--sessions=1000000 --seconds=30 --warmup=30)
min_time=0.3
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) rev="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --quick) rounds=1; sim_args=(--sessions=100000 --seconds=5 --warmup=30); min_time=0.05; shift ;;
    *) echo "ab_compare.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

"$root/scripts/setup.sh" bench >/dev/null
old_src="$build/old-src"
rm -rf "$old_src"
git -C "$root" worktree prune
git -C "$root" worktree add --detach -q "$old_src" "$rev"
trap 'git -C "$root" worktree remove --force "$old_src" >/dev/null 2>&1 || true' EXIT

for side in old new; do
  src=$root
  [ "$side" = old ] && src=$old_src
  cmake -S "$src" -B "$build/$side" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON \
    -DIDLEWHEEL_BUILD_TESTS=OFF -DIDLEWHEEL_BUILD_DEMO=OFF >/dev/null
  cmake --build "$build/$side" -j"$(nproc)" --target idlewheel_micro idlewheel_sim >/dev/null
done

filter='^(touch/idlewheel_watch_pure|schedule_cancel/idlewheel_(node|handle)_per_tick)/100000$'
out="$build/results"
mkdir -p "$out"
rm -f "$out"/*.json
echo "rev before: $(git -C "$root" rev-parse --short "$rev"), after: working tree of $(git -C "$root" rev-parse --short HEAD)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  for side in old new; do
    "$build/$side/bench/micro/idlewheel_micro" --sizes=100000 --benchmark_filter="$filter" \
      --benchmark_min_time="$min_time" --benchmark_format=json >"$out/micro_${side}_$r.json" 2>/dev/null
    "$build/$side/bench/sim/idlewheel_sim" "${sim_args[@]}" --json="$out/sim_${side}_$r.json" >/dev/null
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys, glob, os
out, rounds = sys.argv[1], int(sys.argv[2])
def micro(side):
    per = {}
    for f in sorted(glob.glob(os.path.join(out, f"micro_{side}_*.json"))):
        for b in json.load(open(f))["benchmarks"]:
            per.setdefault(b["name"], []).append(b["real_time"])
    return per
def sim(side):
    vals = {}
    for f in sorted(glob.glob(os.path.join(out, f"sim_{side}_*.json"))):
        d = json.load(open(f))
        for k in ("cpu_share_of_one_core", "ns_per_session_second", "cpu_percent"):
            if k in d: vals.setdefault(k, []).append(float(d[k]))
    return vals
rows = []
mo, mn = micro("old"), micro("new")
for name in sorted(set(mo) & set(mn)):
    a, b = statistics.median(mo[name]), statistics.median(mn[name])
    rows.append((name + " (ns)", a, b))
so, sn = sim("old"), sim("new")
for k in sorted(set(so) & set(sn)):
    rows.append(("sim " + k, statistics.median(so[k]), statistics.median(sn[k])))
if not rows:
    print("no results"); sys.exit(1)
w = max(len(r[0]) for r in rows)
print(f"{'case':<{w}}  {'before':>10}  {'after':>10}  after/before   (median of {rounds} interleaved rounds)")
for name, a, b in rows:
    print(f"{name:<{w}}  {a:>10.3f}  {b:>10.3f}  {b / a:>11.3f}")
EOF
