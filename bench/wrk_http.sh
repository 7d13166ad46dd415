#!/usr/bin/env bash
# Beast's http_server_async (or, with --example, another of Beast's HTTP examples that takes the
# same arguments: http_server_awaitable) against its idlewheel conversion under wrk (issue 24
# item 6; issue 35 for http_server_awaitable):
# keep-alive GETs of one small file over 1 000 connections, rounds interleaved A B A B ...,
# each round on a freshly started server. Reports, per side, the median over the rounds of
# requests per second (wrk's count) and of the server's CPU per request (utime + stime from
# /proc/PID/stat before and after the wrk run, over wrk's request count), and the ratios.
#
# Usage: bench/wrk_http.sh [--example NAME] [--original BIN --converted BIN] [--src DIR] [--rounds N]
#                          [--duration S] [--connections C] [--server-threads T]
#                          [--wrk-threads W] [--out DIR] [--quick]
#   --original/--converted  the two server binaries (both take <address> <port> <doc_root>
#                 <threads>); without them both are compiled from --src
#   --example NAME  which example: http_server_async (default) or http_server_awaitable; the
#                 sources are Beast's file as the Boost doc package ships it (--upstream) and
#                 that file with examples/beast/NAME.patch applied
#   --upstream DIR  the folder holding beast/example/ (default the doc package's,
#                 /usr/share/doc/libboost1.81-doc/examples/libs; scripts/setup.sh test)
#   --src DIR     a tree with examples/beast/NAME.patch (the conversion), compiled with g++ -O3
#                 -DNDEBUG (as a CMake Release build) against this tree's lib/include; default
#                 this tree
#   --rounds N    rounds per side, default 5; --duration S seconds per wrk run, default 10
#   --connections C  default 1000; --server-threads T, default 2; --wrk-threads W, default 1
#   --out DIR     binaries, runs and results; default build/wrk_http (build/wrk_http_NAME with
#                 --example NAME)
#   --nice N      measure at this niceness (server and wrk), in a scheduler autogroup of its
#                 own with that niceness (default 0; e.g. -10 as root on a shared machine)
#   --quick       2 rounds of 3 s: a rehearsal, not a result
# Why one wrk thread: the machine has 2 cores and the server has 2 threads; one wrk thread
# (epoll over all 1 000 connections) leaves the server as much CPU as a load generator on the
# same machine can. Requests per second are then the machine's (server and wrk share it);
# CPU per request is the server's own. The soft descriptor limit is raised to the hard one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
args=("$@")
original="" converted="" src=$root example=http_server_async
upstream=/usr/share/doc/libboost1.81-doc/examples/libs
rounds=5 duration=10 connections=1000 server_threads=2 wrk_threads=1 niceness=0
out=""
while [ $# -gt 0 ]; do
  case $1 in
    --example) example=$2; shift ;;
    --original) original=$2; shift ;;
    --converted) converted=$2; shift ;;
    --src) src=$2; shift ;;
    --upstream) upstream=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --duration) duration=$2; shift ;;
    --connections) connections=$2; shift ;;
    --server-threads) server_threads=$2; shift ;;
    --wrk-threads) wrk_threads=$2; shift ;;
    --out) out=$2; shift ;;
    --nice) niceness=$2; shift ;;
    --quick) rounds=2; duration=3 ;;
    *) echo "wrk_http.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
# Default output: build/wrk_http (build/wrk_http_NAME for another example).
if [ -z "$out" ]; then
  out=$root/build/wrk_http
  [ "$example" = http_server_async ] || out=${out}_$example
fi
command -v wrk >/dev/null || { echo "wrk_http.sh: wrk not found (apt-get install wrk)" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)"
mkdir -p "$out/bin" "$out/docroot" "$out/runs"

if [ -z "$original" ] || [ -z "$converted" ]; then
  case $example in
    http_server_async) beast_file=$upstream/beast/example/http/server/async/$example.cpp ;;
    http_server_awaitable) beast_file=$upstream/beast/example/http/server/awaitable/$example.cpp ;;
    *) echo "wrk_http.sh: unknown example $example" >&2; exit 2 ;;
  esac
  for f in "$beast_file" "$src/examples/beast/$example.patch"; do
    [ -f "$f" ] || { echo "wrk_http.sh: $f not found (give --original and --converted, or --src, --upstream)" >&2; exit 2; }
  done
  # The conversion's source: Beast's file with the patch applied (only when the patch is newer).
  converted_src=$out/bin/$example.cpp
  if [ ! -f "$converted_src" ] || [ "$src/examples/beast/$example.patch" -nt "$converted_src" ]; then
    patch -s -o "$converted_src" "$beast_file" "$src/examples/beast/$example.patch"
  fi
  build() {  # build <source> <binary>: only when the source is newer
    if [ ! -x "$2" ] || [ "$1" -nt "$2" ]; then
      echo "compiling $1" >&2
      nice -n 19 g++ -std=c++20 -O3 -DNDEBUG -I"$root/lib/include" -o "$2" "$1" -pthread
    fi
  }
  original=$out/bin/${example}_beast
  converted=$out/bin/$example
  build "$beast_file" "$original"
  build "$converted_src" "$converted"
fi

# With --nice, measure in a session of its own (a scheduler autogroup: with autogroup scheduling,
# niceness only counts within a session) with that niceness, as bench/compare.sh --nice does.
# After the build, so that the build keeps nice 19; the re-run finds everything built.
if [ "$niceness" != 0 ]; then
  if [ -z "${IDLEWHEEL_BENCH_SESSION:-}" ] && command -v setsid >/dev/null 2>&1; then
    IDLEWHEEL_BENCH_SESSION=1 exec setsid -w "$0" "${args[@]}"
  fi
  if [ -w /proc/self/autogroup ]; then
    echo "$niceness" >/proc/self/autogroup 2>/dev/null || echo "$(basename "$0"): could not set the autogroup niceness" >&2
  fi
  renice -n "$niceness" -p $$ >/dev/null 2>&1 || echo "$(basename "$0"): could not renice" >&2
fi

# The document: a small file.
head -c 128 /dev/zero | tr '\0' 'x' >"$out/docroot/index.html"
port=$((20000 + RANDOM % 20000))
tck=$(getconf CLK_TCK)

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "command: bench/wrk_http.sh ${args[*]}"
  echo "original: $original ($(sha256sum "$original" | cut -c1-12))"
  echo "converted: $converted ($(sha256sum "$converted" | cut -c1-12))"
  echo "example: $example"
  echo "source: $src ($(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "wrk: $(wrk -v 2>&1 | head -1); -t$wrk_threads -c$connections -d${duration}s; server threads: $server_threads"
  echo "descriptors: soft $(ulimit -Sn), hard $(ulimit -Hn); nproc $(nproc)"
  echo "niceness: $(nice) (autogroup: $(cat /proc/self/autogroup 2>/dev/null || echo '?'))"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_one() {  # run_one <side> <binary> <round>
  local side=$1 bin=$2 round=$3
  "$bin" 127.0.0.1 "$port" "$out/docroot" "$server_threads" 2>"$out/runs/$side-$round.stderr" &
  local pid=$!
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.05
  done
  local load0; load0=$(cut -d' ' -f1 /proc/loadavg)
  local t0; t0=$(cpu_ticks $pid)
  wrk -t"$wrk_threads" -c"$connections" -d"${duration}s" "http://127.0.0.1:$port/index.html" >"$out/runs/$side-$round.wrk"
  local t1; t1=$(cpu_ticks $pid)
  local rss; rss=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
  kill $pid; wait $pid 2>/dev/null || true
  local load1; load1=$(cut -d' ' -f1 /proc/loadavg)
  local rps reqs errs
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$out/runs/$side-$round.wrk")
  reqs=$(awk '/requests in/ {print $1}' "$out/runs/$side-$round.wrk")
  errs=$(awk '/Socket errors|Non-2xx/ {printf "%s ", $0}' "$out/runs/$side-$round.wrk")
  echo "$side $round $rps $reqs $((t1 - t0)) $tck $rss $load0 $load1 ${errs:-none}" | tee -a "$out/rounds.txt"
  port=$((port + 1))
  sleep 1
}

: >"$out/rounds.txt"
echo "side round requests/s requests server_cpu_ticks clk_tck peak_rss_kib load_before load_after errors"
for r in $(seq "$rounds"); do
  # A B, then B A: neither side always goes first.
  if [ $((r % 2)) = 1 ]; then order="original converted"; else order="converted original"; fi
  for side in $order; do
    if [ "$side" = original ]; then run_one original "$original" "$r"; else run_one converted "$converted" "$r"; fi
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

python3 - "$out/rounds.txt" "$connections" "$example" <<'PY'
import statistics, sys
rows = [l.split(maxsplit=9) for l in open(sys.argv[1]) if l.strip()]
conns = int(sys.argv[2])
example = sys.argv[3]
data = {}
for side, rnd, rps, reqs, ticks, tck, rss, *_ in rows:
    d = data.setdefault(side, {"rps": [], "us": [], "rss": []})
    d["rps"].append(float(rps))
    d["us"].append(int(ticks) / int(tck) / int(reqs) * 1e6)
    d["rss"].append(int(rss) * 1024 / conns)
med = {s: {k: statistics.median(v) for k, v in d.items()} for s, d in data.items()}
rng = lambda s, k, f: f"{f.format(min(data[s][k]))}-{f.format(max(data[s][k]))}"
n = len(data["original"]["rps"])
print(f"\nmedian of {n} rounds per side (min-max)")
print(f"| | Beast's {example} | idlewheel conversion | conversion / Beast |")
print("|---|---:|---:|---:|")
o, c = med["original"], med["converted"]
print(f"| requests per second (wrk) | {o['rps']:,.0f} ({rng('original','rps','{:,.0f}')}) | {c['rps']:,.0f} ({rng('converted','rps','{:,.0f}')}) | {c['rps']/o['rps']:.3f} |")
print(f"| server CPU per request (µs) | {o['us']:.2f} ({rng('original','us','{:.2f}')}) | {c['us']:.2f} ({rng('converted','us','{:.2f}')}) | {c['us']/o['us']:.3f} |")
print(f"| server peak RSS per connection (bytes) | {o['rss']:,.0f} | {c['rss']:,.0f} | {c['rss']/o['rss']:.3f} |")
PY
