#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test twice — an
# optimised build with assertions (with the benchmarks' smoke runs, the fuzzers' short run,
# the TSan server run, the Python client, the headless-Chromium dashboard check and the
# promtool / Prometheus checks of /metrics); then the
# library's unit tests on every other supported Asio: Boost 1.83 and 1.88 (headers from
# Debian 13, fetched by scripts/fetch_boost.sh, Boost.Test header-only) and standalone Asio
# (Debian 12's libasio-dev, 1.22); then the library, demo and reliability tests again under
# AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
jobs=$(nproc)
start=$SECONDS

cmake -S . -B build/test -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O2 -g" -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_BENCH=ON >/dev/null
cmake --build build/test -j"$jobs"
ctest --test-dir build/test --output-on-failure -j"$jobs"
tests/loaded/run.sh build/test  # the real-time suites again, both cores kept busy

# The matrix: unit tests only (-O1: they compile faster and run in seconds), warnings as errors.
matrix_flags=(-DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O1 -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_DEMO=OFF -DIDLEWHEEL_BUILD_BENCH=OFF)
for version in 1.83 1.88; do
  include=$(scripts/fetch_boost.sh "$version" "build/boost-$version")
  cmake -S . -B "build/test-boost-$version" "${matrix_flags[@]}" -DIDLEWHEEL_BOOST_ROOT="${include%/include}" >/dev/null
  cmake --build "build/test-boost-$version" -j"$jobs"
  ctest --test-dir "build/test-boost-$version" --output-on-failure -j"$jobs"
done
cmake -S . -B build/test-standalone-asio "${matrix_flags[@]}" -DIDLEWHEEL_STANDALONE_ASIO=ON >/dev/null
cmake --build build/test-standalone-asio -j"$jobs"
ctest --test-dir build/test-standalone-asio --output-on-failure -j"$jobs"

cmake -S . -B build/asan -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g" -DIDLEWHEEL_WERROR=ON \
  -DIDLEWHEEL_SANITIZE=address,undefined >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE "browser|tsan|prometheus"

echo "test.sh: all passed in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
