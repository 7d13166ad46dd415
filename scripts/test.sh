#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test twice — an
# optimised build with assertions (with the benchmarks' smoke runs, the fuzzers' short run,
# the TSan server run, the Python client, the headless-Chromium dashboard check, the promtool /
# Prometheus checks of /metrics, the TLS suites: demo_server --tls against hostile TLS
# clients, the dashboard over https, loadgen --tls, and the fleet test: HAProxy, started by the
# test, in front of 3 demo_servers through a rolling restart, each run here only); then the
# matrix: the library's unit tests (with the Beast liveness test and the coroutine example's
# smoke run where there is Beast, and tests/cpp17: every header and a program as C++17) on
# every other supported Asio and on clang 14, warnings as errors, Asio's deprecated API off
# (BOOST_ASIO_NO_DEPRECATED / ASIO_NO_DEPRECATED) everywhere:
#   Boost 1.83, 1.88    g++ 12    Debian 13's headers (scripts/fetch_boost.sh)
#   Boost 1.90          clang 14  Debian unstable's headers (scripts/fetch_boost.sh)
#   Boost 1.92          g++ 12    Debian unstable's headers (scripts/fetch_boost.sh)
#   standalone Asio 1.22  g++ 12    the system's (Debian 12's libasio-dev)
#   standalone Asio 1.36  clang 14  Debian unstable's libasio-dev (scripts/fetch_asio.sh)
# (Boost.Test header-only with the fetched Boosts; the fetched headers are unpacked into build/
# without touching the system's apt. If Debian unstable has moved on from a version, the fetch
# says so and the run stops there.) Then the library, demo and reliability tests again under
# AddressSanitizer + UBSan (not the browser, TSan, Prometheus, --io-threads and TLS suites).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
jobs=$(nproc)
start=$SECONDS

# -g1 (here and in the ASan build): line tables and inlined frames, no variable locations.
# ASan and UBSan reports keep file:line in every frame; most sampled objects took 17-42 % less
# CPU to compile than with -g.
cmake -S . -B build/test -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O2 -g1" -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_BENCH=ON \
  -DIDLEWHEEL_FUZZ_BUILD_DIR="$PWD/build/fuzz" >/dev/null  # shared with tests/fuzz/run.sh's default (.ci/run)
cmake --build build/test -j"$jobs"
ctest --test-dir build/test --output-on-failure -j"$jobs"
tests/loaded/run.sh build/test  # the real-time suites again, both cores kept busy

# The matrix: unit tests only (-O1: they compile faster and run in seconds), warnings as errors.
matrix_flags=(-DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O1 -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_DEMO=OFF -DIDLEWHEEL_BUILD_BENCH=OFF
  -DIDLEWHEEL_BUILD_BEAST_EXAMPLES=OFF)
matrix() {  # NAME CMAKE_ARGS...: configure build/test-NAME, build, run
  local name=$1 begin=$SECONDS
  shift
  cmake -S . -B "build/test-$name" "${matrix_flags[@]}" "$@" >/dev/null
  cmake --build "build/test-$name" -j"$jobs"
  ctest --test-dir "build/test-$name" --output-on-failure -j"$jobs"
  echo "test.sh: matrix $name passed in $((SECONDS - begin)) s"
}
fetched() {  # SCRIPT VERSION DEST: the include directory, or the fetch's own reason and exit
  "scripts/$1" "$2" "$3" || { echo "test.sh: the matrix stops: $1 $2 failed (its reason is above)" >&2; exit 1; }
}
for version in 1.83 1.88 1.90 1.92; do
  include=$(fetched fetch_boost.sh "$version" "build/boost-$version")
  compiler=()
  [ "$version" = 1.90 ] && compiler=(-DCMAKE_CXX_COMPILER=clang++)
  matrix "boost-$version" -DIDLEWHEEL_BOOST_ROOT="${include%/include}" "${compiler[@]}"
done
matrix standalone-asio -DIDLEWHEEL_STANDALONE_ASIO=ON
include=$(fetched fetch_asio.sh 1.36 build/asio-1.36)
matrix standalone-asio-1.36 -DIDLEWHEEL_STANDALONE_ASIO=ON -DIDLEWHEEL_ASIO_INCLUDE_DIR="$include" -DCMAKE_CXX_COMPILER=clang++

cmake -S . -B build/asan -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" -DIDLEWHEEL_WERROR=ON \
  -DIDLEWHEEL_SANITIZE=address,undefined -DIDLEWHEEL_BUILD_BEAST_EXAMPLES=OFF >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE "browser|tsan|prometheus|io_threads|tls|fleet"

echo "test.sh: all passed in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
