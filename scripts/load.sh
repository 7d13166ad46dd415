#!/usr/bin/env bash
# The load test in one command: installs what is missing (scripts/setup.sh load), builds only
# loadgen and demo_server (-DIDLEWHEEL_BUILD_LOADGEN=ON in build/load: no Google Benchmark,
# libevent or libuv), starts the demo on loopback, opens a few thousand connections of every
# role, prints a progress line a second and the verdict per role, and writes an HTML report
# (build/load/report/report.html). Exit status 1 when a verdict failed.
#
#   scripts/load.sh                                   # 4000 connections against the demo
#   scripts/load.sh --connections 30000               # several loadgen and demo_server processes
#   scripts/load.sh --url ws://127.0.0.1:PORT/ --expect beast-timeouts --idle-timeout 1000ms \
#                   --handshake-timeout 500ms         # any server (nothing started)
#
# Every option: scripts/load.sh --help (bench/loadgen/load.py); the rest go to loadgen
# (bench/loadgen/README.md). With IDLEWHEEL_LOADGEN (and IDLEWHEEL_DEMO_SERVER) set, those
# programs are used and nothing is installed or built (the test suite does that).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ -z "${IDLEWHEEL_LOADGEN:-}" ]; then
  scripts/setup.sh load
  echo "load.sh: building loadgen and demo_server in build/load (the first time takes minutes)"
  cmake -S . -B build/load -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_TESTS=OFF -DIDLEWHEEL_BUILD_LOADGEN=ON >/dev/null
  cmake --build build/load -j"$(nproc)" --target loadgen demo_server >/dev/null
  IDLEWHEEL_LOADGEN=$root/build/load/bench/loadgen/loadgen
  IDLEWHEEL_DEMO_SERVER=$root/build/load/demo_server/demo_server
fi
exec /usr/bin/python3 bench/loadgen/load.py --loadgen "$IDLEWHEEL_LOADGEN" ${IDLEWHEEL_DEMO_SERVER:+--demo-server "$IDLEWHEEL_DEMO_SERVER"} "$@"
