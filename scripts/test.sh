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
# The ASan and matrix builds (in that order) run in the background at nice 19 while the
# optimised build's tests run, and then the ASan tests; every test runs in the foreground,
# after its build. Each phase prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
jobs=$(nproc)
start=$SECONDS

phase() {  # NAME START: one line per phase, for the CI log (what each part of the run costs)
  echo "test.sh: $1 took $((SECONDS - $2)) s"
}

# The builds' flags: scripts/build_flags.sh (scripts/flake_hunt.sh builds with the same).
source scripts/build_flags.sh
begin=$SECONDS
cmake -S . -B build/test "${optimised_build_flags[@]}" \
  -DIDLEWHEEL_FUZZ_BUILD_DIR="$PWD/build/fuzz" >/dev/null  # shared with tests/fuzz/run.sh's default (.ci/run)
cmake --build build/test -j"$jobs"
phase "the optimised build" "$begin"

# The matrix: unit tests only (-O1: they compile faster and run in seconds), warnings as errors.
matrix_flags=(-DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O1 -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_DEMO=OFF -DIDLEWHEEL_BUILD_BENCH=OFF
  -DIDLEWHEEL_BUILD_BEAST_EXAMPLES=OFF)
matrix_builds=()
matrix_build() {  # NAME CMAKE_ARGS...: configure and build build/test-NAME
  local name=$1 begin=$SECONDS
  shift
  cmake -S . -B "build/test-$name" "${matrix_flags[@]}" "$@" >/dev/null
  cmake --build "build/test-$name" -j"$jobs"
  matrix_builds+=("$name")
  phase "building matrix $name" "$begin"
}
fetched() {  # SCRIPT VERSION DEST: the include directory, or the fetch's own reason and exit
  "scripts/$1" "$2" "$3" || { echo "test.sh: the matrix stops: $1 $2 failed (its reason is above)" >&2; exit 1; }
}

# The builds of the ASan run and of the matrix go on in the background at the lowest priority
# (nice 19) while the optimised build's tests run: most of those wait on sockets and clocks,
# and the real-time ones are made to pass with both cores busy (tests/loaded/run.sh runs them
# beside two busy loops at normal priority). Every test itself runs in the foreground at
# normal priority, after its build. The background's output is printed when it ends
# (build/background.log); any failure there fails the run.
background() {
  set +m  # its own commands stay in its process group
  renice -n 19 -p "$BASHPID" >/dev/null
  # The ASan tree first: its tests (mostly waiting on sockets and clocks) then run in the
  # foreground while the matrix builds here.
  local begin=$SECONDS
  cmake -S . -B build/asan "${asan_build_flags[@]}" >/dev/null
  cmake --build build/asan -j"$jobs"
  phase "building for ASan" "$begin"
  touch build/background.asan_built
  # Debian unstable's newest Boost and Asio, asked today (scripts/newest_in_debian.sh), so the
  # matrix follows unstable by itself; Debian 13's Boosts are pinned.
  read -r sid_boost sid_asio < <(scripts/newest_in_debian.sh build/sid) ||
    { echo "test.sh: could not ask Debian unstable for its newest Boost and Asio (the reason is above)" >&2; exit 1; }
  echo "test.sh: Debian unstable has Boost $sid_boost and standalone Asio $sid_asio today: the matrix tests those"
  local boosts=(1.83 1.88) version include extra
  case " ${boosts[*]} 1.81 " in *" $sid_boost "*) ;; *) boosts+=("$sid_boost") ;; esac
  for version in "${boosts[@]}"; do
    include=$(fetched fetch_boost.sh "$version" "build/boost-$version")
    extra=(-DIDLEWHEEL_TEST_BEAST=OFF)  # the middle of the range: no Beast tests and examples
    [ "$version" = "${boosts[-1]}" ] && extra=(-DCMAKE_CXX_COMPILER=clang++)  # the newest: all, on clang
    matrix_build "boost-$version" -DIDLEWHEEL_BOOST_ROOT="${include%/include}" "${extra[@]}"
  done
  matrix_build standalone-asio -DIDLEWHEEL_STANDALONE_ASIO=ON
  if [ "$sid_asio" != 1.22 ]; then
    include=$(fetched fetch_asio.sh "$sid_asio" "build/asio-$sid_asio")
    matrix_build "standalone-asio-$sid_asio" -DIDLEWHEEL_STANDALONE_ASIO=ON -DIDLEWHEEL_ASIO_INCLUDE_DIR="$include" \
      -DCMAKE_CXX_COMPILER=clang++
  fi
  echo "${matrix_builds[*]}" >build/background.matrix
}
rm -f build/background.matrix build/background.asan_built
set -m  # the background in a process group of its own: ended with everything it started
background >build/background.log 2>&1 &
background_pid=$!
set +m
end_background() { kill -- -"$background_pid" 2>/dev/null || true; }
trap end_background EXIT

begin=$SECONDS
ctest --test-dir build/test --output-on-failure -j"$jobs"
phase "the optimised build's tests" "$begin"
tests/loaded/run.sh build/test  # the real-time suites again, both cores kept busy

# The ASan tests as soon as their build is done, beside the matrix's builds (a failure here ends
# the background too: the trap). If the background fails before, its log says why below.
begin=$SECONDS
while [ ! -e build/background.asan_built ] && kill -0 "$background_pid" 2>/dev/null; do sleep 2; done
if [ -e build/background.asan_built ]; then
  echo "test.sh: waited $((SECONDS - begin)) s for the ASan build"
  begin=$SECONDS
  env "${asan_test_env[@]}" ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE "$asan_excluded_labels"
  phase "the ASan tests" "$begin"
fi

begin=$SECONDS
background_status=0
wait "$background_pid" || background_status=$?
trap - EXIT
echo "test.sh: ---- the background builds (build/background.log), waited for $((SECONDS - begin)) s more ----"
cat build/background.log
[ "$background_status" = 0 ] || { echo "test.sh: the background builds failed (exit $background_status): see above" >&2; exit 1; }

read -r -a matrix_builds <build/background.matrix
for name in "${matrix_builds[@]}"; do
  begin=$SECONDS
  ctest --test-dir "build/test-$name" --output-on-failure -j"$jobs"
  phase "testing matrix $name" "$begin"
done


echo "test.sh: all passed in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
