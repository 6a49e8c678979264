#!/usr/bin/env bash
# Instructions per ingested sample of Vigil scraping ../shared/bench-target,
# counted by callgrind: a figure that, unlike CPU seconds, does not move
# when the machine is busy. Compare two builds with it (issue 9).
#
#   bench/profile_scrape.sh [--vigil build/vigil] [--targets 20]
#       [--series 1000] [--warmup 40] [--window 60] [--out FILE]
#
# Runs vigil under valgrind --tool=callgrind (about 50x slower, so keep
# --targets small) with T targets x S series every 5 s, zeroes the counts
# after --warmup seconds (every series is then cached), dumps them after
# --window more and prints
#   samples=N Ir=I Ir/sample=I/N profile=FILE
# where N is prometheus_tsdb_head_samples_appended_total over the window.
# Ir counts user-space instructions of every thread (kernel time is not
# seen: use perf or compare_scrape.sh for that). Read the profile with
# callgrind_annotate FILE, or kcachegrind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# free_port, metric, cpu_seconds
source "$here/lib.sh"
shared=${VIGIL_SHARED_DIR:-$root/../shared}
vigil=$root/build/vigil targets=20 series=1000 warmup=40 window=60 out=
while [ $# -gt 0 ]; do
  case $1 in
    --vigil) vigil=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "profile_scrape.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in curl python3 g++ valgrind callgrind_control; do
  command -v $tool >/dev/null || { echo "profile_scrape.sh: needs $tool" >&2; exit 2; }
done
[ -x "$vigil" ] || { echo "profile_scrape.sh: no $vigil" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-profile-scrape.XXXXXX")
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
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$tport/metrics/0" >/dev/null && break; sleep 0.1; done

{
  printf 'global:\n  scrape_interval: 5s\n  scrape_timeout: 5s\n'
  printf 'scrape_configs:\n  - job_name: bench\n    static_configs:\n'
  for ((i = 0; i < targets; i++)); do
    printf "      - targets: ['127.0.0.1:%s']\n" "$tport"
    printf "        labels: {__metrics_path__: /metrics/%d, instance: 'target-%d'}\n" "$i" "$i"
  done
} >"$work/prometheus.yml"
port=$(free_port)
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.%p" \
  "$vigil" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$port" --log.level=error >"$work/vigil.log" 2>&1 &
vpid=$!
PIDS+=("$vpid")
api=http://127.0.0.1:$port
for _ in $(seq 600); do curl -sf "$api/-/ready" >/dev/null && break; sleep 0.5; done
curl -sf "$api/-/ready" >/dev/null || { echo "profile_scrape.sh: vigil not ready" >&2; cat "$work/vigil.log" >&2; exit 1; }
sleep "$warmup"
s0=$(metric "$api/metrics" prometheus_tsdb_head_samples_appended_total)
callgrind_control -z "$vpid" >/dev/null 2>&1
sleep "$window"
s1=$(metric "$api/metrics" prometheus_tsdb_head_samples_appended_total)
callgrind_control -d "$vpid" >/dev/null 2>&1
profile=$work/callgrind.$vpid.1
for _ in $(seq 50); do [ -s "$profile" ] && break; sleep 0.2; done
ir=$(awk '/^summary:/ { print $2; exit }' "$profile")
if [ -n "$out" ]; then cp "$profile" "$out"; profile=$out; else profile="(discarded; use --out)"; fi
python3 -c "s = $s1 - $s0; print(f'samples={s} Ir=$ir Ir/sample={$ir / max(s, 1):.0f} profile=$profile')"
