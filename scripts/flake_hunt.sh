#!/usr/bin/env bash
# The flake hunt: reruns the timing-sensitive tests many times and prints each test's failures
# out of its runs, per build and per machine state, so a rare failure shows up as a count
# instead of as a red CI run weeks later.
#
# Usage: scripts/flake_hunt.sh [--rounds N] [--minutes M] [--builds "test asan"]
#                              [--states "alone loaded"] [--label REGEX] [--out DIR]
#
#   --rounds N    rounds of every (build, state) pair, interleaved: round 1 of each pair, then
#                 round 2 of each ..., so a run cut short by --minutes has tested every pair
#                 about as often (default 10)
#   --minutes M   stop starting new runs after M minutes (default: no limit)
#   --builds      build folders under build/ to use, as scripts/test.sh makes them: "test"
#                 (optimised) and "asan" (AddressSanitizer + UBSan, run with test.sh's options
#                 and its label exclusions); a missing one is configured and built first
#   --states      "alone": ctest -j$(nproc) as test.sh runs it; "loaded": the same with two busy
#                 loops keeping both cores saturated (tests/loaded/run.sh's way)
#   --label       ctest label regex of the tests to hunt in (default loaded|examples: the
#                 reliability and demo suites whose bounds are wall-clock time, which carry the
#                 label "loaded", and the converted Beast examples' checks; add io_threads for
#                 those suites again on one io_context run by 2 threads, reliability for the
#                 churn runs too, minutes each). Left
#                 out always: the TSan, browser and Prometheus checks (minutes each, run once by
#                 test.sh); in the asan build also the io_threads repeats, as test.sh leaves them
#   --out DIR     where each run's ctest output and JUnit file go (default build/flake_hunt,
#                 emptied first); the output of every failed run is kept there for the cause
#
# Prints one line per test that ever failed (and a summary line per pair); exits 1 if any test
# failed in any run, 0 otherwise. The busy loops always end with the script.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=10 minutes=0 builds="test asan" states="alone loaded" label='loaded|examples' out=build/flake_hunt
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --builds) builds=$2; shift 2 ;;
    --states) states=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "flake_hunt.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
  esac
done
jobs=$(nproc)
rm -rf "$out"
mkdir -p "$out"

busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${busy[@]}" 2>/dev/null || true
  busy=()
}
trap stop_busy EXIT

source scripts/build_flags.sh  # the flags scripts/test.sh builds with: the hunt runs that very build
ensure_build() {  # NAME: configure and build build/NAME the way scripts/test.sh does
  local name=$1
  case "$name" in
    test) flags=("${optimised_build_flags[@]}") ;;
    asan) flags=("${asan_build_flags[@]}") ;;
    *) echo "flake_hunt.sh: unknown build '$name' (test or asan)" >&2; exit 2 ;;
  esac
  # Configured again each time: a folder test.sh made with older flags takes today's.
  cmake -S . -B "build/$name" "${flags[@]}" >/dev/null
  cmake --build "build/$name" -j"$jobs" >/dev/null
}

run_once() {  # BUILD STATE ROUND: one ctest run; its JUnit file in $out
  local build=$1 state=$2 round=$3 exclude='tsan|browser|prometheus'
  local base="$out/$build-$state-r$round"
  [ "$build" = asan ] && exclude=$asan_excluded_labels
  if [ "$state" = loaded ]; then
    for _ in 1 2; do
      (while :; do :; done) &
      busy+=("$!")
    done
  fi
  local rc=0
  env "${asan_test_env[@]}" ctest --test-dir "build/$build" --output-on-failure -j"$jobs" -L "$label" -LE "$exclude" \
    --output-junit "$PWD/$base.xml" >"$base.log" 2>&1 || rc=$?
  stop_busy
  if [ $rc -eq 0 ]; then rm -f "$base.log"; fi
  echo "flake_hunt.sh: $build $state round $round: $(grep -Eo '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$base.log" 2>/dev/null || echo passed) ($(date +%H:%M:%S))"
}

for b in $builds; do ensure_build "$b"; done
start=$SECONDS
for ((r = 1; r <= rounds; r++)); do
  for b in $builds; do
    for s in $states; do
      if [ "$minutes" -gt 0 ] && [ $((SECONDS - start)) -ge $((minutes * 60)) ]; then break 3; fi
      run_once "$b" "$s" "$r"
    done
  done
done

# The table: every test's failures out of its runs, per (build, state), from the JUnit files.
python3 - "$out" <<'EOF'
import collections, glob, os, re, sys
import xml.etree.ElementTree as ET
out = sys.argv[1]
runs = collections.defaultdict(lambda: collections.Counter())    # (build, state) -> test -> runs
fails = collections.defaultdict(lambda: collections.Counter())
rounds = collections.Counter()
for path in sorted(glob.glob(os.path.join(out, "*.xml"))):
    m = re.match(r"(.+)-(alone|loaded)-r(\d+)\.xml$", os.path.basename(path))
    if not m:
        continue
    pair = (m.group(1), m.group(2))
    rounds[pair] += 1
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name")
        if case.find("skipped") is not None:
            continue
        runs[pair][name] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            fails[pair][name] += 1
any_fail = False
for pair in sorted(rounds):
    tests = runs[pair]
    failed = {t: n for t, n in fails[pair].items() if n}
    any_fail |= bool(failed)
    print(f"flake_hunt: {pair[0]:5} {pair[1]:6} {rounds[pair]:3} rounds, {len(tests)} tests, "
          f"{sum(tests.values())} runs, {sum(failed.values())} failed")
    for t in sorted(failed, key=lambda t: -failed[t]):
        print(f"flake_hunt:   {t}: failed {failed[t]} of {tests[t]}")
sys.exit(1 if any_fail else 0)
EOF
