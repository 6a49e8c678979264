#!/usr/bin/env bash
# The training run of a profile-guided build (`make release`): an
# instrumented vigil (VIGIL_PGO=generate) scrapes the simulated GPU fleet
# (vigil-sim: vLLM v0/v1 and SGLang engines, dcgm-exporter, node_exporter,
# the gateway) every second with the LLM rule pack, while a client asks
# the dashboard's instant and range queries, series, labels and /metrics;
# chunks are cut and sealed from the second minute. Then vigil stops on
# SIGTERM, which writes its profile. The benchmark target
# (../shared/bench-target) is not used: the figures of bench/README.md are
# measured on a load the profile never saw.
#
# usage: bench/pgo_train.sh VIGIL VIGIL_SIM [SECONDS]   (default 150)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vigil=${1:?usage: pgo_train.sh VIGIL VIGIL_SIM [SECONDS]}
sim=${2:?usage: pgo_train.sh VIGIL VIGIL_SIM [SECONDS]}
secs=${3:-150}
work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-pgo-train.XXXXXX")
sim_pid="" vigil_pid=""
cleanup() {
  [ -n "$vigil_pid" ] && kill "$vigil_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $root/examples/llm/rules/recording.yml
  - $root/examples/llm/rules/alerts.yml
scrape_configs:
  - job_name: sim
    file_sd_configs:
      - files: [$work/targets.json]
  - job_name: vigil
    static_configs:
      - targets: [127.0.0.1:$port]
EOF
"$sim" --hosts=12 --engines=vllm-v1,sglang,vllm-v0 --sd-file="$work/targets.json" \
  >"$work/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/targets.json" ] && break; sleep 0.1; done
[ -s "$work/targets.json" ] || { echo "pgo_train: vigil-sim did not start:" >&2; cat "$work/sim.log" >&2; exit 1; }
"$vigil" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$port" >"$work/vigil.log" 2>&1 &
vigil_pid=$!
url=http://127.0.0.1:$port
for _ in $(seq 300); do curl -sf "$url/-/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$url/-/ready" >/dev/null ||
  { echo "pgo_train: vigil did not become ready:" >&2; cat "$work/vigil.log" >&2; exit 1; }
queries=(
  'sum(rate(vllm:generation_tokens_total[1m]))'
  'histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[1m])))'
  'topk(20, count by (__name__)({__name__=~".+"}))'
  'avg by (instance) (DCGM_FI_DEV_GPU_UTIL)'
  'up == 0'
)
end=$((SECONDS + secs))
while [ "$SECONDS" -lt "$end" ]; do
  sleep 2
  now=$(date +%s)
  for q in "${queries[@]}"; do
    curl -s --data-urlencode "query=$q" "$url/api/v1/query" >/dev/null
    curl -s --data-urlencode "query=$q" --data-urlencode "start=$((now - 300))" \
      --data-urlencode "end=$now" --data-urlencode step=15 "$url/api/v1/query_range" >/dev/null
  done
  curl -s "$url/api/v1/series?match%5B%5D=up" >/dev/null
  curl -s "$url/api/v1/labels" >/dev/null
  curl -s -H 'Accept-Encoding: gzip' "$url/metrics" >/dev/null
done
samples=$(curl -s "$url/metrics" | awk '/^prometheus_tsdb_head_samples_appended_total/ { print $2 }')
kill "$vigil_pid"
rc=0; wait "$vigil_pid" || rc=$?
vigil_pid=""
[ "$rc" = 0 ] || { echo "pgo_train: vigil exited $rc:" >&2; tail -20 "$work/vigil.log" >&2; exit 1; }
echo "pgo_train: ${secs}s, ${samples:-0} samples appended"
