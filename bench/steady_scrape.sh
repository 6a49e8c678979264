#!/usr/bin/env bash
# Vigil and its peers scraping the same loopback targets at the same time,
# for long enough that every server reaches its steady state (Vigil's open
# chunks are cut after 91-120 samples, 8-10 minutes at 5 s; Prometheus's
# head chunks are cut at 120 samples and memory-mapped).
# compare_scrape.sh measures each server alone over a few minutes; this one
# shows how memory and CPU per sample move over the first hour, with every
# server under the same load on the machine at the same moment.
#
#   bench/steady_scrape.sh [--targets 100] [--series 1000] [--interval 5s]
#       [--minutes 45] [--period 5]
#       [--servers "vigil prometheus victoriametrics"] [--vigil build/vigil]
#       [--variant "vigil-NAME=BINARY [VAR=VALUE...]"]...
#
# Each --variant adds one more Vigil, called vigil-NAME, running BINARY
# with the given environment (e.g. VIGIL_TEST_MAX_CHUNK_SAMPLES=120, or
# LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2): two
# builds or two settings under the same load at once, which is the
# comparison this 2-core machine's noise allows (--servers vigil for the
# default build beside them, or --servers "" for the variants alone).
#
# Load: ../shared/bench-target, one process serving T targets x S series
# (deterministic values), scraped by every server with its own fresh data
# directory. Every 30 s it samples each server's VmRSS and RssAnon; every
# --period minutes it prints, per server, the median RSS and anonymous
# memory over the period, the active series (the server's own count), RSS
# per series, and CPU seconds (utime+stime) per million samples ingested
# over the period (Prometheus and Vigil:
# prometheus_tsdb_head_samples_appended_total; VictoriaMetrics:
# vm_rows_added_to_storage_total), and for Vigil its own head memory
# estimate (vigil_head_memory_bytes). Prints a Markdown table at the end.
set -euo pipefail
# The whole script is one brace group, which bash reads to its end before
# running any of it: editing this file while a run goes on cannot change
# what that run does next.
{
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
source "$here/scrape_lib.sh"
shared=${VIGIL_SHARED_DIR:-$root/../shared}
targets=100 series=1000 interval=5s minutes=45 period=5
servers="vigil prometheus victoriametrics" vigil=$root/build/vigil
declare -A VARIANT_BIN VARIANT_ENV
variants=""
while [ $# -gt 0 ]; do
  case $1 in
    --targets) targets=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --period) period=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --vigil) vigil=$2; shift 2 ;;
    --variant)
      [[ $2 =~ ^(vigil-[A-Za-z0-9_.-]+)=([^[:space:]]+)([[:space:]]+(.*))?$ ]] ||
        { echo "steady_scrape.sh: --variant wants \"vigil-NAME=BINARY [VAR=VALUE...]\", not $2" >&2; exit 2; }
      vname=${BASH_REMATCH[1]}
      VARIANT_BIN[$vname]=${BASH_REMATCH[2]}
      VARIANT_ENV[$vname]=${BASH_REMATCH[4]}
      [ -x "${VARIANT_BIN[$vname]}" ] ||
        { echo "steady_scrape.sh: --variant $vname: no executable ${VARIANT_BIN[$vname]}" >&2; exit 2; }
      variants+=" $vname"; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "steady_scrape.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in targets series minutes period; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "steady_scrape.sh: --$v wants a positive integer, not ${!v}" >&2; exit 2; }
done
setup_scrape_bench steady_scrape.sh
servers="$servers$variants"
[ -n "${servers// }" ] || { echo "steady_scrape.sh: no server to run" >&2; exit 2; }
tport=$(free_port)
start_target "$targets" "$series" "$tport"
write_config "$targets" "$tport" "$work/scrape.yml"

declare -A pid api samples cpu
for s in $servers; do
  start_server "$s" "$work/scrape.yml" "$work/data-$s" "$(free_port)"
  pid[$s]=$SPID; api[$s]=$SAPI
  samples[$s]=0; cpu[$s]=$(cpu_seconds "$SPID")
done
echo "# $servers: $targets x $series series every $interval, together, ${minutes} min" >&2

rows=()
for ((p = period; p <= minutes; p += period)); do
  for s in $servers; do : >"$work/rss-$s"; : >"$work/anon-$s"; done
  end=$((SECONDS + period * 60))
  while [ $SECONDS -lt $end ]; do
    for s in $servers; do
      kill -0 "${pid[$s]}" 2>/dev/null ||
        { echo "steady_scrape.sh: $s died; log:" >&2; tail -20 "$work/$s.log" >&2; exit 1; }
      rss_bytes "${pid[$s]}" >>"$work/rss-$s"; anon_bytes "${pid[$s]}" >>"$work/anon-$s"
    done
    sleep 30
  done
  for s in $servers; do
    read -r n active <<<"$(counts "$s" "${api[$s]}")"
    c=$(cpu_seconds "${pid[$s]}")
    head=""
    [[ $s == vigil* ]] && head=$(metric "${api[$s]}/metrics" vigil_head_memory_bytes)
    rss=$(median "$work/rss-$s"); anon=$(median "$work/anon-$s")
    rows+=("$(awk -v s="$s" -v p="$p" -v n0="${samples[$s]}" -v n1="$n" -v c0="${cpu[$s]}" \
      -v c1="$c" -v rss="$rss" -v anon="$anon" -v act="$active" -v head="$head" \
      'BEGIN { m = (n1 - n0) / 1e6
               printf "| %d | %s | %.0f | %.0f | %.0f | %.0f | %s | %s |", p, s, act,
                 rss / 1048576, rss / act, anon / 1048576,
                 (m > 0 ? sprintf("%.2f", (c1 - c0) / m) : "-"),
                 (head == "" ? "-" : sprintf("%.1f", head / 1048576)) }')")
    echo "${rows[-1]}" >&2
    samples[$s]=$n; cpu[$s]=$c
  done
done

echo "Scrape at $interval of $targets targets x $series series, servers side by side, ${period}-minute periods; $(nproc) cores, $(date -u +%F)"
echo
echo "| minute | server | active series | RSS MiB (median) | RSS B / series | anon MiB (median) | CPU s / M samples | Vigil head MiB |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
exit
}
