#!/usr/bin/env bash
# tests/beast_flex_start.cpp (Beast 1.81's http_server_flex start: async_detect_ssl started from
# the listener's strand, the stream on a shard's) under ThreadSanitizer, as a release build
# (-DNDEBUG: the executor check of debug builds is off, the stream's own check is on): a churn of
# HTTP and HTTPS clients on 2 threads, run 3 times. Builds that program alone in BUILD_DIR
# (default SOURCE_DIR/build/tsan-flex-start), with IDLEWHEEL_TSAN_JOBS build jobs (default 2).
# Exit 0 only if every run answers every request with no ThreadSanitizer report (halt_on_error:
# a report ends the program with exit code 66).
#
#   tsan_flex_start.sh [SOURCE_DIR [BUILD_DIR]]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
build=${2:-$src/build/tsan-flex-start}
mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1 -DNDEBUG" -DIDLEWHEEL_SANITIZE=thread \
  -DIDLEWHEEL_BUILD_DEMO=OFF -DIDLEWHEEL_BUILD_TESTS=ON -DIDLEWHEEL_BUILD_BENCH=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target beast_flex_start -j "${IDLEWHEEL_TSAN_JOBS:-2}" >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; exit 1; }
program=$build/tests/beast_flex_start
[[ $(nm "$program" | grep -c __tsan_func_entry || true) != 0 ]] || { echo "$program is not instrumented" >&2; exit 1; }
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4"
for run in 1 2 3; do
  "$program" 2 60 3
done
echo "tsan_flex_start.sh: 3 runs clean (2 threads, 60 clients x 3 connections, half TLS)"
