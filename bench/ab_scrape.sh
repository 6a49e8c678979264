#!/usr/bin/env bash
# Two Vigil builds scraping the same loopback targets at the same time:
# CPU seconds per million ingested samples of each. On a shared machine
# sequential runs move by +-15 %; running A and B at once exposes both to
# the same load, so their ratio is the figure to compare (issue 9).
#
#   bench/ab_scrape.sh A_BINARY B_BINARY [--targets 100] [--series 1000]
#       [--warmup 60] [--window 120]
#
# Prints one line per build: samples=N cpu=Ss cpu_s_per_M=X (utime+stime
# from /proc/PID/stat over the window; samples from the build's own
# prometheus_tsdb_head_samples_appended_total).
#
# With --queries N (0: none) it then times compare_scrape.sh's three
# queries through both builds' HTTP APIs, which hold the same data: three
# rounds, A then B, each the median of N curl runs 0.2 s apart (ms).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# free_port, metric, cpu_seconds
source "$here/lib.sh"
shared=${VIGIL_SHARED_DIR:-$root/../shared}
[ $# -ge 2 ] || { sed -n '2,17p' "$0"; exit 2; }
a=$1 b=$2; shift 2
targets=100 series=1000 warmup=60 window=120 queries=0
while [ $# -gt 0 ]; do
  case $1 in
    --targets) targets=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    *) echo "ab_scrape.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-ab-scrape.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bash "$shared/bench-target/build.sh" "$work/metrics_target" >/dev/null
tport=$(free_port)
"$work/metrics_target" --port "$tport" --targets "$targets" --series "$series" \
  >"$work/target.log" 2>&1 &
PIDS+=($!)
{
  printf 'global:\n  scrape_interval: 5s\n  scrape_timeout: 5s\n'
  printf 'scrape_configs:\n  - job_name: bench\n    static_configs:\n'
  for ((i = 0; i < targets; i++)); do
    printf "      - targets: ['127.0.0.1:%s']\n" "$tport"
    printf "        labels: {__metrics_path__: /metrics/%d, instance: 'target-%d'}\n" "$i" "$i"
  done
} >"$work/prometheus.yml"
vpids=() ports=()
for bin in "$a" "$b"; do
  port=$(free_port)
  "$bin" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data.$port" \
    --web.listen-address="127.0.0.1:$port" --log.level=error >"$work/vigil.$port.log" 2>&1 &
  PIDS+=($!); vpids+=($!); ports+=("$port")
done
for port in "${ports[@]}"; do
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.1; done
done
sleep "$warmup"
s0=() c0=()
for k in 0 1; do
  s0+=("$(metric "http://127.0.0.1:${ports[$k]}/metrics" prometheus_tsdb_head_samples_appended_total)")
  c0+=("$(cpu_seconds "${vpids[$k]}")")
done
sleep "$window"
names=("A $a" "B $b")
for k in 0 1; do
  s1=$(metric "http://127.0.0.1:${ports[$k]}/metrics" prometheus_tsdb_head_samples_appended_total)
  c1=$(cpu_seconds "${vpids[$k]}")
  python3 -c "s = $s1 - ${s0[$k]}; c = $c1 - ${c0[$k]}; print(f'${names[$k]}: samples={s} cpu={c:.2f}s cpu_s_per_M={c / max(s, 1) * 1e6:.3f}')"
done

[ "$queries" -gt 0 ] || exit 0
for round in 1 2 3; do
  for k in 0 1; do
    api=http://127.0.0.1:${ports[$k]}/api/v1 now=$(date +%s)
    echo "round $round ${names[$k]%% *}:" \
      "Q1 $(median_query_ms "$api/query?query=$BENCH_Q1&time=$now" "$queries") ms," \
      "Q2 $(median_query_ms "$api/query_range?query=$BENCH_Q2&start=$((now - 300))&end=$now&step=15" "$queries") ms," \
      "Q3 $(median_query_ms "$api/query?query=$BENCH_Q3&time=$now" "$queries") ms"
  done
done
