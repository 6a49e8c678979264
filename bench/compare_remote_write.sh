#!/usr/bin/env bash
# Remote write, Vigil beside Prometheus 2.42: both scrape the same loopback
# targets and remote-write to the same kind of receiver (a fresh
# victoria-metrics each), one server after another.
#
#   bench/compare_remote_write.sh [--targets 20] [--series 1000]
#       [--interval 5s] [--warmup 30] [--window 120] [--outage 120]
#       [--servers "vigil prometheus"] [--vigil build/vigil]
#
# Each server runs twice on a fresh data directory: once without
# remote_write (the baseline), once with it. Over the --window seconds
# after --warmup it reports, from /proc/PID/stat and /proc/PID/status:
#   - CPU: utime+stime of the server with remote write, minus the
#     baseline's over the same window, per million samples the server says
#     it sent (prometheus_remote_storage_samples_total);
#   - RSS added: the median VmRSS with remote write minus the baseline's;
#   - then the receiver is stopped for --outage seconds: the RSS growth
#     over the outage (last sample minus the one 10 s in) and the CPU
#     used meanwhile; then the receiver comes back and the time until the
#     backlog is sent (queue_highest_sent_timestamp_seconds within 2
#     intervals of now) is reported as "drain".
# Prints a Markdown table. Needs curl, python3, g++ (for the target),
# prometheus and victoria-metrics.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=${VIGIL_SHARED_DIR:-$root/../shared}
targets=20 series=1000 interval=5s warmup=30 window=120 outage=120
servers="vigil prometheus" vigil=$root/build/vigil
while [ $# -gt 0 ]; do
  case $1 in
    --targets) targets=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --outage) outage=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --vigil) vigil=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "compare_remote_write.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in curl python3 g++ prometheus victoria-metrics; do
  command -v $tool >/dev/null || { echo "compare_remote_write.sh: needs $tool" >&2; exit 2; }
done
[ -x "$vigil" ] || { echo "compare_remote_write.sh: no $vigil (make vigil first)" >&2; exit 2; }
[ -f "$shared/bench-target/metrics_target.cpp" ] ||
  { echo "compare_remote_write.sh: no bench target under $shared (set VIGIL_SHARED_DIR)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-compare-rw.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
metric() {  # metric URL NAME: the sum of a family's series
  curl -s "$1/metrics" | awk -v n="$2" '$1 == n || index($1, n"{") == 1 {s += $2} END {printf "%.0f\n", s}'
}
wait_http() { for _ in $(seq 300); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; return 1; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
hz=$(getconf CLK_TCK)

"$shared/bench-target/build.sh" "$work/metrics_target" >/dev/null
tport=$(free_port)
"$work/metrics_target" --port "$tport" --targets "$targets" --series "$series" >/dev/null 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$tport/metrics/0"

# config_distinct FILE WITH_RW VM_PORT: one job per simulated host
# (/metrics/I), optionally remote-writing to VM_PORT.
config_distinct() {
  python3 - "$1" "$tport" "$targets" "$interval" "$2" "$3" <<'EOF'
import sys
f, port, n, interval, rw, vm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
out = ["global: {scrape_interval: %s}" % interval, "scrape_configs:"]
for i in range(n):
    out += ["  - job_name: t%d" % i, "    metrics_path: /metrics/%d" % i,
            "    static_configs: [{targets: ['127.0.0.1:%s']}]" % port]
if rw == "1":
    out += ["remote_write:", "  - url: http://127.0.0.1:%s/api/v1/write" % vm, "    name: vm"]
open(f, "w").write("\n".join(out) + "\n")
EOF
}

start_server() {  # start_server KIND CONFIG DATA PORT -> SERVER_PID
  local kind=$1 cfg=$2 data=$3 port=$4
  if [ "$kind" = vigil ]; then
    "$vigil" --config.file="$cfg" --storage.tsdb.path="$data" \
      --web.listen-address="127.0.0.1:$port" --log.level=error >"$work/$kind.log" 2>&1 &
  else
    prometheus --config.file="$cfg" --storage.tsdb.path="$data" \
      --web.listen-address="127.0.0.1:$port" --log.level=error >"$work/$kind.log" 2>&1 &
  fi
  SERVER_PID=$!
  PIDS+=($SERVER_PID)
  wait_http "http://127.0.0.1:$port/-/ready"
}
start_vm() {  # start_vm DATA PORT -> VM_PID
  victoria-metrics -storageDataPath="$1" -httpListenAddr="127.0.0.1:$2" \
    -retentionPeriod=100y -loggerLevel=ERROR >>"$work/vm.log" 2>&1 &
  VM_PID=$!
  PIDS+=($VM_PID)
  wait_http "http://127.0.0.1:$2/health"
}
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# window PID URL SECONDS -> W_CPU (s) W_RSS (median KiB) W_SENT W_RSS_FIRST W_RSS_LAST
window() {
  local pid=$1 url=$2 secs=$3 c0 s0 rss=() i
  c0=$(cpu_ticks "$pid"); s0=$(metric "$url" prometheus_remote_storage_samples_total)
  for i in $(seq 1 $((secs / 5))); do sleep 5; rss+=("$(rss_kb "$pid")"); done
  W_CPU=$(python3 -c "print(($(cpu_ticks "$pid") - $c0) / $hz)")
  W_SENT=$(( $(metric "$url" prometheus_remote_storage_samples_total) - s0 ))
  W_RSS=$(printf '%s\n' "${rss[@]}" | median)
  W_RSS_FIRST=${rss[1]:-${rss[0]}}
  W_RSS_LAST=${rss[-1]}
}

printf '| server | samples sent/s | CPU s per 1M sent (RW only) | RSS added by RW (MiB) | outage: RSS growth (MiB) | outage: CPU s | drain after outage (s) |\n'
printf '|---|---|---|---|---|---|---|\n'
for kind in $servers; do
  port=$(free_port)
  # Baseline, no remote write.
  config_distinct "$work/base.yml" 0 0
  start_server "$kind" "$work/base.yml" "$work/$kind-base" "$port"
  sleep "$warmup"
  window "$SERVER_PID" "http://127.0.0.1:$port" "$window"
  base_cpu=$W_CPU base_rss=$W_RSS
  stop_pid "$SERVER_PID"
  # With remote write to a fresh victoria-metrics.
  vport=$(free_port)
  start_vm "$work/vm-$kind" "$vport"
  config_distinct "$work/rw.yml" 1 "$vport"
  start_server "$kind" "$work/rw.yml" "$work/$kind-rw" "$port"
  sleep "$warmup"
  window "$SERVER_PID" "http://127.0.0.1:$port" "$window"
  rw_cpu=$W_CPU rw_rss=$W_RSS sent=$W_SENT
  # The outage.
  stop_pid "$VM_PID"
  window "$SERVER_PID" "http://127.0.0.1:$port" "$outage"
  out_cpu=$W_CPU out_growth=$(( W_RSS_LAST - W_RSS_FIRST ))
  start_vm "$work/vm-$kind" "$vport"
  t0=$(date +%s)
  step=${interval%s}
  while :; do
    hs=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^prometheus_remote_storage_queue_highest_sent_timestamp_seconds/ {print $2}')
    now=$(date +%s)
    python3 -c "import sys; sys.exit(0 if ${hs:-0} >= $now - 2*$step else 1)" && break
    [ $((now - t0)) -gt 900 ] && break
    sleep 1
  done
  drain=$(( $(date +%s) - t0 ))
  stop_pid "$SERVER_PID"
  stop_pid "$VM_PID"
  python3 - "$kind" "$sent" "$window" "$rw_cpu" "$base_cpu" "$rw_rss" "$base_rss" "$out_growth" "$out_cpu" "$drain" <<'EOF'
import sys
k, sent, win, cpu, bcpu, rss, brss, grow, ocpu, drain = sys.argv[1:]
sent, win = int(sent), float(win)
per = (float(cpu) - float(bcpu)) / (sent / 1e6) if sent else float("nan")
print("| %s | %.0f | %.2f | %.1f | %.1f | %.1f | %s |" % (
    k, sent / win, per, (int(rss) - int(brss)) / 1024, int(grow) / 1024, float(ocpu), drain))
EOF
done
