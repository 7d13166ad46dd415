#!/usr/bin/env bash
# demo_server under ThreadSanitizer: build it with -fsanitize=thread in its
# own build directory, run it with --threads 2, drive it for a while with concurrent TCP and
# WebSocket echo clients, connection churn, idle clients that get kicked (WebSocket ones answer
# pings) and /stats + /metrics pollers, stop it with SIGTERM, and fail if TSan reported anything.
#
#   tsan.sh [SOURCE_DIR [TSAN_BUILD_DIR [RELIABILITY_LOAD]]]
#
# SOURCE_DIR defaults to this repository, TSAN_BUILD_DIR to SOURCE_DIR/build/tsan.
# RELIABILITY_LOAD is the client program (tests/reliability/load_driver.cpp) from a normal,
# uninstrumented build; without it the script builds one in TSAN_BUILD_DIR (instrumented, slower).
# TSAN_DRIVE_SECONDS (default 10) sets the length of the drive. Exit 0 clean, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
build=${2:-$src/build/tsan}
load=${3:-}
seconds=${TSAN_DRIVE_SECONDS:-10}

fail() {
  echo "tsan.sh: FAIL: $*" >&2
  exit 1
}

mkdir -p "$build"
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g" \
  -DIDLEWHEEL_SANITIZE=thread -DIDLEWHEEL_BUILD_DEMO=ON -DIDLEWHEEL_BUILD_TESTS="$([[ -n "$load" ]] && echo OFF || echo ON)" \
  >"$build/tsan_configure.log" 2>&1 || { cat "$build/tsan_configure.log"; fail "configure"; }
targets=(demo_server)
[[ -n "$load" ]] || targets+=(reliability_load)
cmake --build "$build" --target "${targets[@]}" -j 2 >"$build/tsan_build.log" 2>&1 || { tail -50 "$build/tsan_build.log"; fail "build"; }
[[ -n "$load" ]] || load=$build/tests/reliability/reliability_load
server=$build/demo_server/demo_server
# Make sure this really is an instrumented binary.
instrumented=$(nm "$server" 2>/dev/null | grep -c __tsan_func_entry || true)
[[ "$instrumented" != 0 ]] || fail "$server is not built with -fsanitize=thread"

work=$(mktemp -d /tmp/idlewheel_tsan.XXXXXX)
pid=
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# halt_on_error: the first report ends the server with exit code 66; the log is also grepped.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4"
"$server" --threads 2 --quiet --tcp-port 0 --http-port 0 --idle-timeout 2s --ping-interval 500ms \
  --pong-timeout 1s --ping-jitter 100ms --handshake-timeout 3s >"$work/stdout" 2>"$work/stderr" &
pid=$!

# The listening line (TSan start-up is slow on a loaded machine: up to 30 s).
line=
for _ in $(seq 1 300); do
  line=$(head -n1 "$work/stdout" 2>/dev/null || true)
  [[ "$line" == listening* ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[[ "$line" == listening* ]] || { cat "$work/stderr"; fail "demo_server did not start"; }
tcp_port=${line#*tcp=*:}; tcp_port=${tcp_port%% *}
http_port=${line##*:}
echo "tsan.sh: $line (pid $pid); driving for ${seconds}s"

drive_status=0
timeout $((seconds + 60)) "$load" --tcp-port "$tcp_port" --http-port "$http_port" --seconds "$seconds" --threads 2 \
  --slots 4 --tcp-echoers 3 --websocket-echoers 3 --stats-pollers 2 --idlers 2 --expect-kicks 4 || drive_status=$?

server_alive=1
kill -0 "$pid" 2>/dev/null || server_alive=0
status=0
if [[ $server_alive == 1 ]]; then
  kill -TERM "$pid"
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    fail "demo_server did not exit within 30 s of SIGTERM"
  fi
fi
wait "$pid" || status=$?
pid=

reports=$(grep -c "WARNING: ThreadSanitizer" "$work/stderr" || true)
if [[ "$reports" != 0 || $status != 0 ]]; then
  cat "$work/stderr"
  fail "ThreadSanitizer reported $reports problem(s); demo_server exit status $status"
fi
[[ $drive_status == 0 ]] || { tail -20 "$work/stderr"; fail "the clients did not get what they expected (status $drive_status)"; }
echo "tsan.sh: clean: no ThreadSanitizer report, demo_server exited 0 after SIGTERM"
