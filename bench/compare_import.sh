#!/usr/bin/env bash
# Side-by-side import of one OpenMetrics file into Vigil, Prometheus
# (promtool tsdb create-blocks-from openmetrics) and VictoriaMetrics
# (/api/v1/import/prometheus on 127.0.0.1). Prints, for each: bytes per
# sample (whole data directory), import wall time and peak RSS, and the
# ratios against Vigil.
#
# usage: bench/compare_import.sh [FILE]   (default: generate with
#        ../shared/bench-data/gen_openmetrics.py, its default shape)
# env:   VIGIL=build/vigil  WORK=/tmp/vigil-bench  VM_PORT=18428
set -euo pipefail
cd "$(dirname "$0")/.."
VIGIL=${VIGIL:-build/vigil}
WORK=${WORK:-/tmp/vigil-bench}
VM_PORT=${VM_PORT:-18428}
mkdir -p "$WORK"
FILE=${1:-}
if [ -z "$FILE" ]; then
  FILE=$WORK/default.om
  [ -f "$FILE" ] || python3 ../shared/bench-data/gen_openmetrics.py "$FILE"
fi
SAMPLES=$(grep -vc '^#' "$FILE")
echo "file: $FILE ($SAMPLES samples)"

# rss_kb and wall seconds of a command, via GNU time.
measure() {  # name, command...
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>&1 || {
    echo "$name failed:"; cat "$WORK/$name.out"; exit 1; }
}
dir_bytes() { du -sb "$1" | cut -f1; }

rm -rf "$WORK/vigil-data" "$WORK/prom-data" "$WORK/vm-data"
measure vigil "$VIGIL" tsdb import openmetrics "$FILE" "$WORK/vigil-data"
measure prom promtool tsdb create-blocks-from openmetrics "$FILE" "$WORK/prom-data"

# VictoriaMetrics wants Prometheus text with millisecond timestamps. Printed
# with %.0f: awk would print a non-integral product (fractional seconds,
# as in real captures) as 1.79612e+12.
awk '!/^#/ { $NF = sprintf("%.0f", $NF * 1000) } !/^#/' "$FILE" > "$WORK/vm-input.prom"
victoria-metrics -storageDataPath="$WORK/vm-data" -httpListenAddr="127.0.0.1:$VM_PORT" \
  -retentionPeriod=100y -loggerLevel=ERROR >"$WORK/vm.log" 2>&1 &
VM_PID=$!
trap 'kill $VM_PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$VM_PORT/health" >/dev/null && break; sleep 0.1; done
start=$(date +%s.%N)
curl -sf --data-binary "@$WORK/vm-input.prom" "http://127.0.0.1:$VM_PORT/api/v1/import/prometheus"
curl -sf "http://127.0.0.1:$VM_PORT/internal/force_flush"
end=$(date +%s.%N)
# VictoriaMetrics compresses further when it merges parts in the
# background; size it after a forced merge so it is not penalised.
curl -sf "http://127.0.0.1:$VM_PORT/internal/force_merge" || true
for _ in $(seq 300); do
  merges=$(curl -s "http://127.0.0.1:$VM_PORT/metrics" | awk '/^vm_active_merges/ {s+=$2} END {print s+0}')
  [ "$merges" = 0 ] && break
  sleep 0.2
done
sleep 2
VM_RSS=$(awk '/VmHWM/ {print $2}' "/proc/$VM_PID/status")
VM_ROWS=$(curl -s "http://127.0.0.1:$VM_PORT/metrics" | awk '/^vm_rows\{type="storage\/(big|small)"\}/ {s+=$2} END {print s+0}')
# Sample parts alone (without the inverted index, caches and metadata).
VM_PARTS=$(curl -s "http://127.0.0.1:$VM_PORT/metrics" | awk '/^vm_data_size_bytes\{type="storage\/(big|small)"\}/ {s+=$2} END {print s+0}')
kill $VM_PID; wait $VM_PID 2>/dev/null || true
trap - EXIT
echo "$(echo "$end - $start" | bc) $VM_RSS" > "$WORK/vm.time"

printf "\n%-16s %12s %10s %10s %12s\n" system bytes bytes/smp wall_s peak_rss_MB
row() {  # name dir timefile
  local bytes wall rss
  bytes=$(dir_bytes "$2"); read -r wall rss < "$3"
  printf "%-16s %12d %10.3f %10.2f %12.1f\n" "$1" "$bytes" \
    "$(echo "$bytes / $SAMPLES" | bc -l)" "$wall" "$(echo "$rss / 1024" | bc -l)"
  eval "${1//[^a-z]/}_bps=$(echo "$bytes / $SAMPLES" | bc -l); ${1//[^a-z]/}_wall=$wall; ${1//[^a-z]/}_rss=$rss"
}
row vigil "$WORK/vigil-data" "$WORK/vigil.time"
row prometheus "$WORK/prom-data" "$WORK/prom.time"
row victoriametrics "$WORK/vm-data" "$WORK/vm.time"
echo "(VictoriaMetrics rows stored: $VM_ROWS; its sample parts alone: $VM_PARTS bytes, $(echo "scale=3; $VM_PARTS / $SAMPLES" | bc) bytes/sample)"
# Its data/ directory: the sample parts with their per-part files, without
# indexdb/ (the inverted index) and cache/ (over 1 MB even for a small import).
VM_DATA=$(dir_bytes "$WORK/vm-data/data")
echo "(VictoriaMetrics data/ directory: $VM_DATA bytes, $(echo "scale=3; $VM_DATA / $SAMPLES" | bc) bytes/sample; indexdb/ $(dir_bytes "$WORK/vm-data/indexdb"), cache/ $(dir_bytes "$WORK/vm-data/cache"))"
printf "\nratios (other / vigil): bytes/sample  prometheus %.2fx  victoriametrics %.2fx\n" \
  "$(echo "$prometheus_bps / $vigil_bps" | bc -l)" "$(echo "$victoriametrics_bps / $vigil_bps" | bc -l)"
printf "                        wall time     prometheus %.2fx  victoriametrics %.2fx\n" \
  "$(echo "$prometheus_wall / $vigil_wall" | bc -l)" "$(echo "$victoriametrics_wall / $vigil_wall" | bc -l)"
printf "                        peak RSS      prometheus %.2fx  victoriametrics %.2fx\n" \
  "$(echo "$prometheus_rss / $vigil_rss" | bc -l)" "$(echo "$victoriametrics_rss / $vigil_rss" | bc -l)"
