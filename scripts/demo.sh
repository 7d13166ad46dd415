#!/usr/bin/env bash
# Builds and runs the demo. Arguments go to the demo program (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh demo
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_TESTS=OFF >/dev/null
cmake --build build/demo -j"$(nproc)" --target demo_server
exec build/demo/demo_server/demo_server "$@"
