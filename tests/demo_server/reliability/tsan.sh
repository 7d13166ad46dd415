#!/usr/bin/env bash
# demo_server under ThreadSanitizer: build it with -fsanitize=thread in its
# own build directory, then three runs in wheel mode: --threads 2 (an io_context per thread),
# --io-threads 4 (one io_context on 4 threads, more than this machine's 2 cores, with a
# wheel_pool) and --io-threads 2. Each is driven for a while with concurrent TCP and WebSocket
# echo clients, connection churn, idle clients that get kicked (WebSocket ones answer pings),
# ping-silent WebSocket clients the heartbeat must drop, slowloris clients the handshake
# deadline must cut, and /stats + /metrics pollers; every outcome is asserted by the clients and
# against the server's /stats (reliability_load). Then SIGTERM: the server must exit 0, and TSan
# must have reported nothing. Then --tls --io-threads 4 against tls_hostile.py's clients.
#
#   tsan.sh [SOURCE_DIR [TSAN_BUILD_DIR [RELIABILITY_LOAD]]]
#
# SOURCE_DIR defaults to this repository, TSAN_BUILD_DIR to SOURCE_DIR/build/tsan.
# RELIABILITY_LOAD is the client program (tests/demo_server/reliability/load_driver.cpp) from a normal,
# uninstrumented build; without it the script builds one in TSAN_BUILD_DIR (instrumented, slower).
# TSAN_DRIVE_SECONDS (default 10) sets the length of each drive; TSAN_SHAPES (default
# "--threads=2 --io-threads=4 --io-threads=2") the runs. Exit 0 clean, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../../.." && pwd)}
build=${2:-$src/build/tsan}
load=${3:-}
seconds=${TSAN_DRIVE_SECONDS:-10}
shapes=${TSAN_SHAPES:-"--threads=2 --io-threads=4 --io-threads=2"}

fail() {
  echo "tsan.sh: FAIL: $*" >&2
  exit 1
}

mkdir -p "$build"
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" \
  -DIDLEWHEEL_SANITIZE=thread -DIDLEWHEEL_BUILD_DEMO=ON -DIDLEWHEEL_BUILD_TESTS="$([[ -n "$load" ]] && echo OFF || echo ON)" \
  >"$build/tsan_configure.log" 2>&1 || { cat "$build/tsan_configure.log"; fail "configure"; }
targets=(demo_server)
[[ -n "$load" ]] || targets+=(reliability_load)
cmake --build "$build" --target "${targets[@]}" -j 2 >"$build/tsan_build.log" 2>&1 || { tail -50 "$build/tsan_build.log"; fail "build"; }
[[ -n "$load" ]] || load=$build/tests/demo_server/reliability/reliability_load
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

# One run: the server in threading shape $1 (e.g. --io-threads=4), driven, stopped, checked.
run_shape() {
  local shape=$1
  # Times: a ping after 500 ms of silence, dead 2 s later (ping-silent clients: >= 2.5 s; an
  # echo round trip of the TSan build on 4 threads of a busy 2-core machine can take over a
  # second, so a shorter pong timeout would drop busy echoers too); the handshake deadline 2 s
  # (slowloris: cut as handshake_timeout, before --idle-timeout 4 s).
  # Empty the files here, not only in the child's redirection: the loop below may read before
  # the child has truncated them and would take the previous shape's listening line (seen: the
  # drive then went to a closed port).
  : >"$work/stdout"
  : >"$work/stderr"
  "$server" "$shape" --timers=wheel --quiet --tcp-port 0 --http-port 0 --idle-timeout 4s --ping-interval 500ms \
    --pong-timeout 2s --ping-jitter 100ms --handshake-timeout 2s >"$work/stdout" 2>"$work/stderr" &
  pid=$!

  # The listening line (TSan start-up is slow on a loaded machine: up to 30 s).
  local line=
  for _ in $(seq 1 300); do
    line=$(head -n1 "$work/stdout" 2>/dev/null || true)
    [[ "$line" == listening* ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ "$line" == listening* ]] || { cat "$work/stderr"; fail "$shape: demo_server did not start"; }
  local tcp_port=${line#*tcp=*:}; tcp_port=${tcp_port%% *}
  local http_port=${line##*:}
  echo "tsan.sh: $shape: $line (pid $pid); driving for ${seconds}s"

  local drive_status=0
  timeout $((seconds + 60)) "$load" --tcp-port "$tcp_port" --http-port "$http_port" --seconds "$seconds" --threads 2 \
    --slots 4 --tcp-echoers 3 --websocket-echoers 3 --stats-pollers 2 --idlers 2 --ping-silent 1 --slowloris 1 \
    --dead-peer-min-ms 2500 --slowloris-min-ms 2000 --expect-kicks 4 --expect-dead-peers 2 --expect-slowloris-cuts 2 ||
    drive_status=$?

  local server_alive=1
  kill -0 "$pid" 2>/dev/null || server_alive=0
  local status=0
  if [[ $server_alive == 1 ]]; then
    kill -TERM "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid"
      wait "$pid" 2>/dev/null || true
      pid=
      fail "$shape: demo_server did not exit within 30 s of SIGTERM"
    fi
  fi
  wait "$pid" || status=$?
  pid=

  local reports
  reports=$(grep -c "WARNING: ThreadSanitizer" "$work/stderr" || true)
  if [[ "$reports" != 0 || $status != 0 ]]; then
    cat "$work/stderr"
    fail "$shape: ThreadSanitizer reported $reports problem(s); demo_server exit status $status"
  fi
  [[ $drive_status == 0 ]] || { tail -20 "$work/stderr"; fail "$shape: the clients did not get what they expected (status $drive_status)"; }
  echo "tsan.sh: $shape: clean: no ThreadSanitizer report, demo_server exited 0 after SIGTERM"
}

for shape in $shapes; do run_shape "$shape"; done

# --tls on one io_context run by 4 threads: the hostile TLS clients and the wss:// control client
# of tls_hostile.py against the instrumented server. A report ends the server with exit code 66,
# which tls_hostile.py fails on (printing the server's stderr). TSAN_TLS=0 skips it.
if [[ "${TSAN_TLS:-1}" == 1 ]]; then
  /usr/bin/python3 "$here/tls_hostile.py" "$server" wheel --io-threads 4 || fail "--tls --io-threads 4 (output above)"
  shapes+=" --tls+--io-threads=4"
fi
echo "tsan.sh: clean in every shape ($shapes)"
