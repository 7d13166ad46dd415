#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test twice — an
# optimised build with assertions (with the benchmarks' smoke runs, the fuzzers' short run,
# the TSan server run, the Python client and the headless-Chromium dashboard check), then the
# library, demo and reliability tests again under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
jobs=$(nproc)

cmake -S . -B build/test -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O2 -g" -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_BENCH=ON >/dev/null
cmake --build build/test -j"$jobs"
ctest --test-dir build/test --output-on-failure -j"$jobs"

cmake -S . -B build/asan -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g" -DIDLEWHEEL_WERROR=ON \
  -DIDLEWHEEL_SANITIZE=address,undefined >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE "browser|tsan"
