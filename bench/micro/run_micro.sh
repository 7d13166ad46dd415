#!/usr/bin/env bash
# One command for every figure of bench/results/micro.md, side by side from one run:
#   1. builds idlewheel_micro, idlewheel_sim and the Netty harness (Release, own build dir);
#   2. runs the Google Benchmark cases (idlewheel, asio::steady_timer, libevent, libuv),
#      the Netty HashedWheelTimer harness (skipped with a message without Java or the jar),
#      and the 1 000 000-session simulation on the manual clock and on the real clock;
#   3. prints the tables and ratios (report.py) and keeps every raw file in the output dir.
#
# Usage: bench/micro/run_micro.sh [--quick]
#   --quick   N = 1 000 and 10 000 only, short windows: a rehearsal, not a result
# Environment: BUILD_DIR (default build/bench), OUT_DIR (default $BUILD_DIR/results).
# A full run takes about 6 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build/bench}
out=${OUT_DIR:-$build/results}

sizes=1000,10000,100000,1000000
gbench=(--benchmark_repetitions=3 --benchmark_display_aggregates_only=true --benchmark_min_time=0.2)
netty_args=(--min_ms=300)
sim_manual=(--sessions=1000000 --seconds=60 --warmup=30)
sim_real=(--sessions=1000000 --seconds=30 --warmup=30)
idle_ms=1000
if [ "${1:-}" = "--quick" ]; then
  sizes=1000,10000
  gbench=(--benchmark_min_time=0.05)
  netty_args=(--min_ms=50 --max_rounds=3)
  sim_manual=(--sessions=100000 --seconds=10 --warmup=30)
  sim_real=(--sessions=100000 --seconds=3 --warmup=30)
  idle_ms=200
fi

"$root/scripts/setup.sh" bench
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DIDLEWHEEL_BUILD_BENCH=ON \
  -DIDLEWHEEL_BUILD_TESTS=OFF -DIDLEWHEEL_BUILD_DEMO=OFF >/dev/null
targets=(idlewheel_micro idlewheel_sim)
if cmake --build "$build" --target help | grep netty_timer_bench >/dev/null; then targets+=(netty_timer_bench); fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
mkdir -p "$out"
rm -f "$out"/micro.json "$out"/netty.json "$out"/sim_*.json

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "command: bench/micro/run_micro.sh $*"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "kernel: $(uname -r)"
  echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"
  echo "compiler: $(${CXX:-c++} --version | head -1)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "libevent: $(pkg-config --modversion libevent), libuv: $(pkg-config --modversion libuv), boost: $(dpkg-query -W -f='${Version}' libboost1.81-dev 2>/dev/null || echo '?')"
} | tee "$out/machine.txt"

echo
echo "== Google Benchmark: idlewheel, asio::steady_timer, libevent, libuv"
"$build/bench/micro/idlewheel_micro" --sizes="$sizes" --idle_ms="$idle_ms" "${gbench[@]}" \
  --benchmark_out="$out/micro.json" --benchmark_out_format=json --benchmark_format=console

echo
echo "== Netty HashedWheelTimer"
jar=/usr/share/java/netty-common.jar
classes="$build/bench/micro/netty-classes"
if command -v java >/dev/null && [ -f "$jar" ] && [ -f "$classes/NettyTimerBench.class" ]; then
  java -cp "$classes:$jar" NettyTimerBench --sizes="$sizes" --idle_ms="$idle_ms" "${netty_args[@]}" --json="$out/netty.json"
else
  echo "skipped: needs java, $jar (Debian libnetty-java) and javac at build time (default-jdk-headless)"
fi

echo
echo "== Simulation"
sim_status=0
"$build/bench/sim/idlewheel_sim" "${sim_manual[@]}" --json="$out/sim_manual.json" || sim_status=$?
"$build/bench/sim/idlewheel_sim" --clock=real "${sim_real[@]}" --json="$out/sim_real.json" || sim_status=$?
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

echo
python3 "$root/bench/micro/report.py" --micro "$out/micro.json" --netty "$out/netty.json" \
  --sim "$out/sim_manual.json" --sim "$out/sim_real.json" | tee "$out/report.md"
echo
echo "raw results: $out"
exit "$sim_status"
