#!/usr/bin/env bash
# Builds the API reference (Doxygen; installs it with scripts/setup.sh if missing) into
# build/docs/html and prints the path of its index.html. Fails, listing them, if any public
# name is undocumented (as the ctest api_reference does).
# Usage: scripts/docs.sh [OUTPUT_DIR]   (default build/docs)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v doxygen >/dev/null || scripts/setup.sh docs
out=${1:-build/docs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cmake -DSOURCE_DIR="$PWD" -DOUTPUT_DIR="$out" -P docs/reference/build.cmake >/dev/null
echo "$out/html/index.html"
