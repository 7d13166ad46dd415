# Shell functions shared by compare.sh, saturation.sh, scale.sh and loadgen/smoke.sh (sourced, POSIX sh):
# running in a session of one's own for --nice, building the two programs, starting
# demo_server and waiting for its "listening" line, stopping servers with SIGTERM.

# own_session_if_nice "$0" "$@": with --nice among the arguments, re-executes the script in a
# session of its own (setsid: a new scheduler autogroup), so that its niceness counts (with
# autogroup scheduling niceness only counts within a session). Returns in the new session.
own_session_if_nice() {
    script=$1
    shift
    for arg in "$@"; do
        if [ "$arg" = --nice ] && [ -z "${IDLEWHEEL_BENCH_SESSION:-}" ] && command -v setsid >/dev/null 2>&1; then
            IDLEWHEEL_BENCH_SESSION=1 exec setsid -w "$script" "$@"
        fi
    done
}

# find_programs BUILD_DIR: sets $demo and $loadgen. Uses $IDLEWHEEL_DEMO_SERVER and
# $IDLEWHEEL_LOADGEN when both are set (the test suite passes its own binaries, nothing is
# built), otherwise builds both targets in BUILD_DIR (a Release build, configured if needed).
find_programs() {
    if [ -n "${IDLEWHEEL_DEMO_SERVER:-}" ] && [ -n "${IDLEWHEEL_LOADGEN:-}" ]; then
        demo=$IDLEWHEEL_DEMO_SERVER
        loadgen=$IDLEWHEEL_LOADGEN
        return
    fi
    echo "$(basename "$0"): building demo_server and loadgen in $1"
    if [ ! -f "$1/CMakeCache.txt" ]; then
        cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON -DIDLEWHEEL_BUILD_TESTS=OFF >/dev/null
    fi
    cmake --build "$1" -j2 --target demo_server loadgen >/dev/null
    demo=$1/demo_server/demo_server
    loadgen=$1/bench/loadgen/loadgen
}

# start_server NAME RUNNER ARGS...: starts "$RUNNER $demo ARGS" in the background with its
# output in $out/NAME.out and .log, waits (at most 10 s) for its listening line, and sets
# $started_pid, $tcp_port and $http_port. Appends the pid to $servers. RUNNER may be empty
# ("") or e.g. "taskset -c 0".
start_server() {
    name=$1
    runner=$2
    shift 2
    rm -f "$out/$name.out" "$out/$name.log"
    $runner "$demo" "$@" >"$out/$name.out" 2>"$out/$name.log" &
    started_pid=$!
    servers="$servers $started_pid"
    i=0
    until grep -q '^listening ' "$out/$name.out" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 100 ] || ! kill -0 "$started_pid" 2>/dev/null; then
            echo "$(basename "$0"): demo_server $* did not start" >&2
            cat "$out/$name.log" >&2
            return 1
        fi
        sleep 0.1
    done
    tcp_port=$(sed -n 's/^listening tcp=[^ ]*:\([0-9]*\) .*/\1/p' "$out/$name.out")
    http_port=$(sed -n 's/.* http=[^ ]*:\([0-9]*\)$/\1/p' "$out/$name.out")
}

# stop_servers: SIGTERM to every server started here, then wait for each (bounded by its
# --close-timeout).
stop_servers() {
    for pid in $servers; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in $servers; do wait "$pid" 2>/dev/null || true; done
    servers=
}
servers=

# set_niceness N: this script and everything it starts run at niceness N, in a scheduler
# autogroup of their own (with autogroup scheduling niceness only counts within a session, so
# the script must have been started by setsid: see own_session_if_nice above). Needs root for N < 0.
set_niceness() {
    renice -n "$1" -p $$ >/dev/null || echo "$(basename "$0"): could not renice" >&2
    if [ -w /proc/self/autogroup ]; then
        echo "$1" >/proc/self/autogroup 2>/dev/null || echo "$(basename "$0"): could not set the autogroup niceness" >&2
    fi
}

# require_server_support OPTION...: exits 77 (ctest: skipped) when demo_server's --help does not
# mention every OPTION, e.g. a demo_server from before --timers=none or --reuse-port.
require_server_support() {
    help=$("$demo" --help 2>&1 || true)
    for option in "$@"; do
        if ! printf '%s\n' "$help" | grep -q -- "$option"; then
            echo "$(basename "$0"): this demo_server has no $option: skipped" >&2
            exit 77
        fi
    done
}
