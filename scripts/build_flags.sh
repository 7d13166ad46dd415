# The CMake flags of the builds scripts/test.sh makes, sourced by it and by scripts/flake_hunt.sh,
# so the flake hunt runs the very build the test command runs (one source: they cannot drift).
#
# -g1 (both builds): line tables and inlined frames, no variable locations. ASan and UBSan
# reports keep file:line in every frame; most sampled objects took 17-42 % less CPU to compile
# than with -g.
# -O0 for ASan: the ASan + UBSan build compiled in 593 s instead of 1123 s at -O1 (2026-11-27,
# this machine, both cores) and its tests ran in 204 s instead of 137 s; the compute-bound
# test_wheel_differential keeps -O1 (tests/CMakeLists.txt).
# shellcheck shell=bash disable=SC2034  # the arrays are read by the scripts that source this
optimised_build_flags=(-DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=-O2 -g1" -DIDLEWHEEL_WERROR=ON -DIDLEWHEEL_BUILD_BENCH=ON)
asan_build_flags=(-DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=-O0 -g1" -DIDLEWHEEL_WERROR=ON
  -DIDLEWHEEL_SANITIZE=address,undefined -DIDLEWHEEL_BUILD_BEAST_EXAMPLES=OFF)
# How the ASan build's tests run, and what they leave out (the browser, TSan, Prometheus,
# --io-threads, TLS, docs and fleet suites run in the optimised build only).
asan_test_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
asan_excluded_labels='browser|tsan|prometheus|io_threads|tls|docs|fleet'
