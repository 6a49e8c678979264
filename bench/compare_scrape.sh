#!/usr/bin/env bash
# Vigil, Prometheus 2.42 and VictoriaMetrics 1.79 scraping the same loopback
# targets, one server after another, each with a fresh data directory.
#
#   bench/compare_scrape.sh [--sizes "100 400"] [--series 1000]
#       [--interval 5s] [--warmup 60] [--window 300] [--repeat 20]
#       [--servers "vigil prometheus victoriametrics"] [--vigil build/vigil]
#       [--query-time now|fixed]
#
# Load: ../shared/bench-target (T targets x S series, deterministic values;
# built here with its build.sh). For every size and server it reports
#   - CPU seconds of the server process (utime+stime from /proc/PID/stat)
#     over the window, per million samples the server says it ingested
#     over the same window (Prometheus and Vigil:
#     prometheus_tsdb_head_samples_appended_total; VictoriaMetrics:
#     vm_rows_added_to_storage_total);
#   - RSS: the median of VmRSS sampled every 5 s over the window, and that
#     divided by the server's own count of active series, and the median of
#     RssAnon (the part not backed by the binary and its libraries' files)
#     (prometheus_tsdb_head_series; vm_new_timeseries_created_total);
#   - the median latency through each server's HTTP API of three queries,
#     --repeat runs 0.2 s apart (so that a burst of load on the machine
#     touches few of them), measured two ways: with a fresh connection per
#     query (curl's time_total, as a one-shot client such as promtool sees
#     it) and over one kept-alive connection (bench/keepalive_latency.py,
#     as Grafana sees it): Q1 an instant
#     sum(rate(vllm:generation_tokens_total[1m])), Q2 a 5-minute range at
#     15 s of histogram_quantile(0.99, sum by (le) (rate(
#     vllm:time_to_first_token_seconds_bucket[1m]))), Q3 an instant
#     topk(20, count by (__name__)({__name__=~".+"})).
#     The instant queries (Q1, Q3) are asked at the time of each request
#     (no `time=`: the server's now, as Grafana's and promtool's instant
#     queries); with --query-time fixed, at one time taken before the
#     first query (the method before session 36), so that later repeats
#     ask a few scrapes in the past. Q2 ends at that time either way.
# The window starts after --warmup seconds. Prints a Markdown table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# free_port, metric, cpu_seconds; write_config, start_server, counts...
source "$here/lib.sh"
source "$here/scrape_lib.sh"
shared=${VIGIL_SHARED_DIR:-$root/../shared}
sizes="100 400" series=1000 interval=5s warmup=60 window=300 repeat=20
servers="vigil prometheus victoriametrics" vigil=$root/build/vigil
query_time=now
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --vigil) vigil=$2; shift 2 ;;
    --query-time) query_time=$2; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "compare_scrape.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in curl python3 g++; do
  command -v $tool >/dev/null || { echo "compare_scrape.sh: needs $tool" >&2; exit 2; }
done
case $query_time in
  now|fixed) ;;
  *) echo "compare_scrape.sh: --query-time is now or fixed, not $query_time" >&2; exit 2 ;;
esac
setup_scrape_bench compare_scrape.sh


rows=()
for n in $sizes; do
  tport=$(free_port)
  start_target "$n" "$series" "$tport"; tpid=$TPID
  write_config "$n" "$tport" "$work/scrape.yml"
  for s in $servers; do
    rm -rf "$work/data"
    start_server "$s" "$work/scrape.yml" "$work/data" "$(free_port)"
    echo "# $s: $n x $series series every $interval; warm-up ${warmup}s, window ${window}s" >&2
    sleep "$warmup"
    read -r samples0 _ <<<"$(counts "$s" "$SAPI")"
    cpu0=$(cpu_seconds "$SPID")
    : >"$work/rss"; : >"$work/anon"
    end=$((SECONDS + window))
    while [ $SECONDS -lt $end ]; do
      rss_bytes "$SPID" >>"$work/rss"; anon_bytes "$SPID" >>"$work/anon"; sleep 5
    done
    cpu1=$(cpu_seconds "$SPID")
    read -r samples1 active <<<"$(counts "$s" "$SAPI")"
    rss=$(median "$work/rss"); anon=$(median "$work/anon")
    now=$(date +%s)
    at=""; [ "$query_time" = fixed ] && at="&time=$now"
    t1=$(median_query_ms "$SAPI/api/v1/query?query=$BENCH_Q1$at" "$repeat")
    t2=$(median_query_ms "$SAPI/api/v1/query_range?query=$BENCH_Q2&start=$((now - 300))&end=$now&step=15" "$repeat")
    t3=$(median_query_ms "$SAPI/api/v1/query?query=$BENCH_Q3$at" "$repeat")
    k1=$(python3 "$here/keepalive_latency.py" "$SAPI/api/v1/query?query=$BENCH_Q1$at" "$repeat")
    k2=$(python3 "$here/keepalive_latency.py" "$SAPI/api/v1/query_range?query=$BENCH_Q2&start=$((now - 300))&end=$now&step=15" "$repeat")
    k3=$(python3 "$here/keepalive_latency.py" "$SAPI/api/v1/query?query=$BENCH_Q3$at" "$repeat")
    stop_server
    rows+=("$(awk -v s="$s" -v n="$n" -v c0="$cpu0" -v c1="$cpu1" -v a="$samples0" \
      -v b="$samples1" -v rss="$rss" -v anon="$anon" -v act="$active" -v t1="$t1" -v t2="$t2" -v t3="$t3" \
      -v k1="$k1" -v k2="$k2" -v k3="$k3" \
      'BEGIN { m = (b - a) / 1e6;
               printf "| %s | %d k | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %s | %s | %s | %s | %s | %s |",
                 s, act / 1000, m, (c1 - c0) / m, rss / 1048576, rss / act, anon / 1048576, act, t1, t2, t3, k1, k2, k3 }')")
    echo "${rows[-1]}" >&2
  done
  kill "$tpid" 2>/dev/null || true
  wait "$tpid" 2>/dev/null || true
done

echo "Scrape at $interval of ${sizes// /, } targets x $series series; window ${window}s after ${warmup}s; instant queries' time: $query_time; $(nproc) cores, $(date -u +%F)"
echo
echo "| server | active series | M samples in window | CPU s / M samples | RSS MiB (median) | RSS B / series | anon MiB (median) | series (server's count) | Q1 ms | Q2 ms | Q3 ms | Q1 ms, kept-alive | Q2 ms, kept-alive | Q3 ms, kept-alive |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
