#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test twice — an
# optimised build with assertions (with the benchmarks' smoke runs, the fuzzers' short run,
# the TSan server run, the Python client, the headless-Chromium dashboard check, the promtool /
# Prometheus checks of /metrics, the API reference (ctest api_reference: Doxygen builds
# docs/reference/ and fails on any undocumented public name) and the TLS suites: demo_server
# --tls against hostile TLS clients, the dashboard over https, loadgen --tls, and the fleet
# test: HAProxy, started by the test, in front of 3 demo_servers through a rolling restart,
# each run here only); then the matrix: the library's unit tests (with the Beast liveness test and the
# coroutine example's smoke run where there is Beast, and tests/cpp17: every header and a
# program as C++17) on every other supported Asio and on clang 14, warnings as errors, Asio's
# deprecated API off (BOOST_ASIO_NO_DEPRECATED / ASIO_NO_DEPRECATED) everywhere:
#   Boost 1.83, 1.88      g++ 12    Debian 13's headers (scripts/fetch_boost.sh), pinned; the
#                                   Beast tests and examples left out (IDLEWHEEL_TEST_BEAST=OFF;
#                                   cpp17_program still builds the Beast glue as C++17)
#   Boost newest          clang 14  the newest libboostX.Y-dev Debian unstable has on the day
#                                   (scripts/newest_in_debian.sh; 1.92 on 2026-11-27)
#   standalone Asio 1.22  g++ 12    the system's (Debian 12's libasio-dev)
#   standalone Asio newest clang 14 Debian unstable's libasio-dev on the day (1.36 on 2026-11-27)
# (Boost.Test header-only with the fetched Boosts; the fetched headers are unpacked into build/
# without touching the system's apt. The run names the versions unstable has; it stops only if
# Debian's servers cannot be read.) Then the library, demo and reliability tests again under
# AddressSanitizer + UBSan (not the browser, TSan, Prometheus, --io-threads, TLS and docs suites).
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
# Debian unstable's newest Boost and Asio, asked today (scripts/newest_in_debian.sh), so the
# matrix follows unstable by itself; Debian 13's Boosts are pinned.
read -r sid_boost sid_asio < <(scripts/newest_in_debian.sh build/sid) ||
  { echo "test.sh: could not ask Debian unstable for its newest Boost and Asio (the reason is above)" >&2; exit 1; }
echo "test.sh: Debian unstable has Boost $sid_boost and standalone Asio $sid_asio today: the matrix tests those"
boosts=(1.83 1.88)
case " ${boosts[*]} 1.81 " in *" $sid_boost "*) ;; *) boosts+=("$sid_boost") ;; esac
for version in "${boosts[@]}"; do
  include=$(fetched fetch_boost.sh "$version" "build/boost-$version")
  extra=(-DIDLEWHEEL_TEST_BEAST=OFF)  # the middle of the range: no Beast tests and examples
  [ "$version" = "${boosts[-1]}" ] && extra=(-DCMAKE_CXX_COMPILER=clang++)  # the newest: all, on clang
  matrix "boost-$version" -DIDLEWHEEL_BOOST_ROOT="${include%/include}" "${extra[@]}"
done
matrix standalone-asio -DIDLEWHEEL_STANDALONE_ASIO=ON
if [ "$sid_asio" != 1.22 ]; then
  include=$(fetched fetch_asio.sh "$sid_asio" "build/asio-$sid_asio")
  matrix "standalone-asio-$sid_asio" -DIDLEWHEEL_STANDALONE_ASIO=ON -DIDLEWHEEL_ASIO_INCLUDE_DIR="$include" -DCMAKE_CXX_COMPILER=clang++
fi

cmake -S . -B build/asan -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" -DIDLEWHEEL_WERROR=ON \
  -DIDLEWHEEL_SANITIZE=address,undefined -DIDLEWHEEL_BUILD_BEAST_EXAMPLES=OFF >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE "browser|tsan|prometheus|io_threads|tls|docs|fleet"

echo "test.sh: all passed in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
