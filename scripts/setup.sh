#!/usr/bin/env bash
# Installs the Debian packages idlewheel needs that are missing (nothing if all are there).
# test includes libboost1.81-doc: Beast's and Asio's examples, which examples/beast/*.patch and
# examples/asio/*.patch convert (examples/CMakeLists.txt finds them there), and patch to apply them.
# Usage: scripts/setup.sh [test|demo|load|bench|docs]...
set -euo pipefail

pkgs=(g++ cmake make libboost1.81-dev libboost-program-options1.81-dev libboost-json1.81-dev)
for what in "$@"; do
  case "$what" in
    test) pkgs+=(libboost-test1.81-dev libboost1.81-doc patch doxygen libssl-dev openssl libasio-dev debian-archive-keyring python3-websockets python3-matplotlib chromium clang libclang-rt-14-dev libbenchmark-dev libevent-dev libuv1-dev pkg-config prometheus curl haproxy wrk) ;;
    demo) pkgs+=(libssl-dev) ;;  # demo_server --tls
    load) pkgs+=(libssl-dev python3 python3-matplotlib) ;;  # scripts/load.sh: loadgen (--tls), demo_server, bench/loadgen/load.py and its report's plots
    docs) pkgs+=(doxygen) ;;     # scripts/docs.sh: the API reference (docs/reference/)
    bench) pkgs+=(libssl-dev libbenchmark-dev libevent-dev libuv1-dev pkg-config libnetty-java default-jdk-headless python3) ;;
    *) echo "setup.sh: unknown component '$what'" >&2; exit 2 ;;
  esac
done

# test: Node's ws package for bench/loadgen/servers/ (loadgen_third_party_ws), from the npm
# registry at the version package-lock.json pins; node and npm from Debian when there are none.
npm_servers=""
for what in "$@"; do
  if [ "$what" = test ]; then
    npm_servers=$(cd "$(dirname "$0")/../bench/loadgen/servers" && pwd)
    command -v npm >/dev/null || pkgs+=(nodejs npm)
  fi
done
install_npm() {
  if [ -n "$npm_servers" ] && [ ! -f "$npm_servers/node_modules/ws/package.json" ]; then
    echo "setup.sh: installing ws (npm ci in $npm_servers)"
    (cd "$npm_servers" && npm ci --no-audit --no-fund >/dev/null)
  fi
}

missing=()
for p in "${pkgs[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then missing+=("$p"); fi
done
[ ${#missing[@]} -eq 0 ] && { install_npm; exit 0; }

echo "setup.sh: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_npm
