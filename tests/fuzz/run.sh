#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (their own CMake project, build/fuzz by default) and
# runs each for SECONDS (default 60) on a temporary copy of its seed corpus, so the corpus in
# the repository is never flooded. The targets run side by side (SECONDS of wall time in all,
# sharing the cores; --one-by-one runs them in turn, each on a core of its own). One summary line per target; exit status 1 if a target
# crashed, hit a sanitizer, a model mismatch, a timeout or the RSS limit (or did not build).
#
#   tests/fuzz/run.sh [SECONDS] [--build-dir DIR] [--cxx CLANG++] [--jobs N] [--one-by-one] [TARGET...]
#
# SECONDS 0 runs each target once over its seed corpus only (a quick regression check).
# Findings are kept in <build dir>/artifacts/<target>/ and the full logs in <build dir>/logs/;
# replay one with: <build dir>/<target> <artifact>   (IDLEWHEEL_FUZZ_TRACE=1 prints each step).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

seconds=60
build="$root/build/fuzz"
cxx="${IDLEWHEEL_FUZZ_CXX:-}"
jobs="$(nproc 2>/dev/null || echo 2)"
targets=()
one_by_one=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --cxx) cxx="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --one-by-one) one_by_one=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    [0-9]*) seconds="$1"; shift ;;
    fuzz_*) targets+=("$1"); shift ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_wheel fuzz_idle_watch fuzz_wheel_timer)

if [ -z "$cxx" ]; then
  for candidate in clang++ clang++-14 clang++-15 clang++-16; do
    if command -v "$candidate" >/dev/null 2>&1; then cxx="$candidate"; break; fi
  done
fi
# The full path, as CMake's find_program gives it to the fuzz_smoke test: a build directory
# configured by either is then reused by the other, not reconfigured for "another" compiler.
[ -z "$cxx" ] || cxx=$(command -v "$cxx" || echo "$cxx")
if [ -z "$cxx" ]; then
  echo "run.sh: clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

# Per-target input size bound: fuzz_wheel reads 8 bytes per random draw (about 40 per
# operation), so it needs longer inputs than fuzz_idle_watch (2 to 8 bytes per operation).
max_len() {
  case "$1" in
    fuzz_wheel) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

mkdir -p "$build/logs"
build="$(cd "$build" && pwd)"
echo "fuzz: building ${targets[*]} with $cxx in $build"
if ! cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE= >"$build/logs/configure.log" 2>&1; then
  cat "$build/logs/configure.log" >&2
  echo "fuzz: configure FAILED" >&2
  exit 1
fi
if ! cmake --build "$build" -j"$jobs" --target "${targets[@]}" >"$build/logs/build.log" 2>&1; then
  tail -n 60 "$build/logs/build.log" >&2
  echo "fuzz: build FAILED (full log: $build/logs/build.log)" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/idlewheel-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The value of "stat::<name>: N" in a libFuzzer log (-print_final_stats=1).
stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -n 1; }

# Fuzzes one target; its summary goes to logs/TARGET.summary; exit status 1 if it failed.
fuzz_one() {
  local target=$1 failed=0
  corpus="$work/$target"
  artifacts="$build/artifacts/$target"
  log="$build/logs/$target.log"
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*
  if [ -d "$here/corpus/$target" ]; then cp "$here/corpus/$target"/* "$corpus"/ 2>/dev/null || true; fi
  seeds=$(find "$corpus" -type f | wc -l)

  if [ "$seconds" -eq 0 ]; then length=(-runs=0); else length=(-max_total_time="$seconds"); fi
  status=0
  "$build/$target" "${length[@]}" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || status=$?

  runs=$(stat "$log" number_of_executed_units)
  rate=$(stat "$log" average_exec_per_sec)
  rss=$(stat "$log" peak_rss_mb)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2 || true)  # none if a seed crashed
  units=$(find "$corpus" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    printf 'fuzz: %-16s OK      %s runs in %s s (%s exec/s), coverage %s, corpus %s -> %s, peak RSS %s MB\n' \
      "$target" "${runs:-?}" "$seconds" "${rate:-?}" "${cov:-?}" "$seeds" "$units" "${rss:-?}"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    printf 'fuzz: %-16s FAILED  exit %s after %s runs; finding: %s; log: %s\n' \
      "$target" "$status" "${runs:-?}" "${artifact:-none}" "$log"
    if grep -q "^$target: " "$log"; then
      # The harness's description (or a failed assertion) and the last operations, without
      # the stack of its abort().
      sed -n "/^$target: /,/ERROR: libFuzzer/p" "$log" | grep -v "ERROR: libFuzzer" | head -n 50 | sed 's/^/    /'
    else
      grep -E -m1 -A 40 "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:" "$log" | head -n 45 | sed 's/^/    /' || true
    fi
    [ -z "$artifact" ] || echo "    replay: $build/$target $artifact"
  fi
  return "$failed"
}

failed=0
pids=()
for target in "${targets[@]}"; do
  if [ "$one_by_one" -eq 1 ]; then
    fuzz_one "$target" >"$build/logs/$target.summary" || failed=1
  else
    fuzz_one "$target" >"$build/logs/$target.summary" &
    pids+=($!)
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
for target in "${targets[@]}"; do cat "$build/logs/$target.summary"; done
exit "$failed"
