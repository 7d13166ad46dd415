#!/usr/bin/env bash
# GET /metrics against the real Prometheus tools (Debian's `prometheus` package, 2.42; scripts/
# setup.sh test installs it). Loopback only, temporary directories, bounded, and everything it
# starts is killed on exit.
#
#   prometheus.sh promtool DEMO_SERVER   for --timers=wheel, asio and none: some traffic, then
#                                        /metrics piped to `promtool check metrics` (format and
#                                        lint: any problem fails), and the server exits 0 on SIGTERM
#   prometheus.sh scrape DEMO_SERVER     a real Prometheus scrapes demo_server every second; waits
#                                        (at most 60 s) until its HTTP API answers
#                                        up{job="idlewheel"} = 1 and a counter the test drove
set -euo pipefail

what=${1:?usage: prometheus.sh promtool|scrape DEMO_SERVER}
demo=${2:?usage: prometheus.sh promtool|scrape DEMO_SERVER}
fail() { echo "prometheus.sh $what: FAIL: $*" >&2; exit 1; }
for tool in curl promtool prometheus; do
  command -v "$tool" >/dev/null || fail "$tool not found (Debian: apt-get install prometheus curl; or scripts/setup.sh test)"
done

tmp=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# start_server NAME ARGS...: demo_server on free ports; sets http_port, tcp_port, server_pid.
start_server() {
  local name=$1
  shift
  "$demo" --tcp-port 0 --http-port 0 --quiet "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  server_pid=$!
  pids+=("$server_pid")
  local i
  for ((i = 0; i < 100; i++)); do
    grep -q '^listening ' "$tmp/$name.out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || fail "demo_server $* exited at start: $(cat "$tmp/$name.err")"
    sleep 0.1
  done
  local line
  line=$(grep '^listening ' "$tmp/$name.out") || fail "demo_server printed no listening line in 10 s"
  tcp_port=$(sed -E 's/.*tcp=[^ ]*:([0-9]+).*/\1/' <<<"$line")
  http_port=$(sed -E 's/.*http=[^ ]*:([0-9]+).*/\1/' <<<"$line")
}

# tcp_echo PORT TEXT: one line through the raw-TCP echo (bash's /dev/tcp), checked.
tcp_echo() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf '%s\n' "$2" >&3
  IFS= read -r -t 5 reply <&3 || true
  exec 3<&- 3>&-
  [ "$reply" = "$2" ] || fail "TCP echo on port $1 returned '$reply', not '$2'"
}

# stop_server NAME: SIGTERM, then exit 0 within 10 s.
stop_server() {
  kill -TERM "$server_pid"
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$server_pid" 2>/dev/null && fail "demo_server still running 10 s after SIGTERM"
  local code=0
  wait "$server_pid" || code=$?
  [ "$code" -eq 0 ] || fail "demo_server exited $code after SIGTERM: $(cat "$tmp/$1.err")"
}

case "$what" in
  promtool)
    for mode in wheel asio none; do
      start_server "$mode" --timers="$mode" --idle-timeout 300ms
      tcp_echo "$tcp_port" "hello metrics"
      sleep 0.6  # the idle kick (with timers) and a wheel snapshot: the histogram has counts
      curl -fsS --max-time 5 -D "$tmp/$mode.head" -o "$tmp/$mode.metrics" "http://127.0.0.1:$http_port/metrics" ||
        fail "--timers=$mode: GET /metrics failed"
      grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$tmp/$mode.head" ||
        fail "--timers=$mode: wrong Content-Type: $(cat "$tmp/$mode.head")"
      if ! promtool check metrics <"$tmp/$mode.metrics" >"$tmp/$mode.promtool" 2>&1; then
        cat "$tmp/$mode.promtool" >&2
        fail "--timers=$mode: promtool check metrics reported the problems above"
      fi
      families=$(grep -c '^# TYPE ' "$tmp/$mode.metrics")
      echo "--timers=$mode: promtool check metrics: clean ($families families, $(wc -c <"$tmp/$mode.metrics") bytes)"
      stop_server "$mode"
    done
    ;;
  scrape)
    start_server scrape --timers=wheel
    for ((i = 0; i < 5; i++)); do tcp_echo "$tcp_port" "scraped $i"; done
    # A free port for Prometheus (it needs a fixed one): try random ports until one is not in
    # use and Prometheus came up on it (another process may take it in between: try again).
    prom_port=""
    attempt=0
    while [ -z "$prom_port" ] && [ $attempt -lt 5 ]; do
      attempt=$((attempt + 1))
      port=$((20000 + RANDOM % 20000))
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue  # something listens there
      cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: idlewheel
    metrics_path: /metrics
    static_configs:
      - targets: ["127.0.0.1:$http_port"]
EOF
      rm -rf "$tmp/tsdb"
      prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
        --web.listen-address="127.0.0.1:$port" >"$tmp/prometheus.log" 2>&1 &
      prom_pid=$!
      pids+=("$prom_pid")
      for ((i = 0; i < 300; i++)); do  # at most 30 s to be ready
        if curl -s --max-time 1 "http://127.0.0.1:$port/-/ready" 2>/dev/null | grep -qi ready; then
          prom_port=$port
          break
        fi
        kill -0 "$prom_pid" 2>/dev/null || break
        sleep 0.1
      done
      if [ -z "$prom_port" ]; then
        kill -KILL "$prom_pid" 2>/dev/null || true
        wait "$prom_pid" 2>/dev/null || true
      fi
    done
    [ -n "$prom_port" ] || fail "Prometheus did not come up on a free port: $(tail -5 "$tmp/prometheus.log")"
    echo "Prometheus on 127.0.0.1:$prom_port scrapes demo_server on 127.0.0.1:$http_port"

    # query EXPR: the first result's value, or nothing.
    query() {
      curl -s --max-time 2 "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" |
        sed -nE 's/.*"value":\[[^,]*,"([^"]*)"\].*/\1/p'
    }
    up="" echoed=""
    deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
      up=$(query 'up{job="idlewheel"}')
      echoed=$(query 'idlewheel_demo_messages_echoed_total{job="idlewheel"}')
      [ "$up" = 1 ] && [ -n "$echoed" ] && [ "$echoed" -ge 5 ] 2>/dev/null && break
      sleep 0.5
    done
    [ "$up" = 1 ] || fail "up{job=\"idlewheel\"} is '$up' after 60 s; targets: $(curl -s --max-time 2 "http://127.0.0.1:$prom_port/api/v1/targets")"
    [ -n "$echoed" ] && [ "$echoed" -ge 5 ] 2>/dev/null ||
      fail "idlewheel_demo_messages_echoed_total is '$echoed', expected >= 5 (5 TCP echoes)"
    bucket=$(query 'sum(idlewheel_demo_wheel_expiry_lateness_seconds_bucket{job="idlewheel",le="+Inf"})')
    [ -n "$bucket" ] || fail "the lateness histogram is not in Prometheus"
    echo "Prometheus: up{job=\"idlewheel\"} = $up, idlewheel_demo_messages_echoed_total = $echoed, lateness histogram count = $bucket"
    stop_server scrape
    ;;
  *) fail "unknown check '$what' (promtool or scrape)" ;;
esac
echo "prometheus.sh $what: passed"
