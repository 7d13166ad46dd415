#!/usr/bin/env bash
# The real-time tests on a loaded machine: two busy loops keep both cores of the CI machine
# saturated while ctest runs the tests labelled "loaded" (the reliability and demo suites whose
# bounds are real time: every wake-up, the server's and the client's, may then come late).
# Usage: tests/loaded/run.sh BUILD_DIR [more ctest arguments]. The busy loops always end.
set -euo pipefail
build=$1
shift
busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${busy[@]}" 2>/dev/null || true
}
trap stop_busy EXIT
for _ in 1 2; do
  (while :; do :; done) &
  busy+=("$!")
done
start=$SECONDS
ctest --test-dir "$build" --output-on-failure -L loaded -j"$(nproc)" "$@"
echo "tests/loaded/run.sh: the loaded tests passed in $((SECONDS - start)) s with two busy loops"
