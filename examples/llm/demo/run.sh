#!/usr/bin/env bash
# The live demo behind `make demo`: a simulated GPU fleet (vigil-sim) with
# three hours of history, Vigil scraping it live with the LLM rule pack, and
# the alerts printed on this console as they change.
#
#   examples/llm/demo/run.sh              # until Ctrl-C
#   examples/llm/demo/run.sh --for 540    # 540 s, then check and stop:
#                                         # exit 0 only if the check passes
#
# Steps: vigil-sim --backfill=3h --live writes the history of the fleet
# (4 engine hosts cycling vLLM V1, SGLang, vLLM V0, plus one TRT-LLM host
# whose engine has no /metrics) and keeps serving it live; `vigil tsdb import
# openmetrics` loads the history into $DEMO_DIR/tsdb; vigil serves
# examples/llm/demo/prometheus.yml and routes its alerts with the built-in
# router through examples/llm/alertmanager.yml to alert_sink.py, a webhook
# sink that prints each notification. The
# incidents of scenario.yml start 2 and 3 minutes after this script.
#
# Run from anywhere; needs $BUILD/vigil and $BUILD/vigil-sim (make demo
# builds them). Every process started here is stopped on exit, Ctrl-C or
# TERM, by its PID. Environment (defaults):
#   BUILD=build  DEMO_DIR=demo-data     (relative to the repository)
#   DEMO_PORT=9090                      Vigil's HTTP API on 127.0.0.1
#   DEMO_SIM_PORT=9300                  vigil-sim control; pages on the next
#                                       1 + 3 x hosts ports
#   DEMO_SINK_PORT=9093                 the webhook sink (Alertmanager's port)
#   DEMO_HOSTS=4                        engine hosts (plus one TRT-LLM)
#   DEMO_STEP=15s                       backfill step
#   DEMO_SECONDS=0                      same as --for (0: until Ctrl-C)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
DEMO_DIR=${DEMO_DIR:-demo-data}
DEMO_PORT=${DEMO_PORT:-9090}
DEMO_SIM_PORT=${DEMO_SIM_PORT:-9300}
DEMO_SINK_PORT=${DEMO_SINK_PORT:-9093}
DEMO_HOSTS=${DEMO_HOSTS:-4}
DEMO_STEP=${DEMO_STEP:-15s}
seconds=${DEMO_SECONDS:-0}
# scenario.yml's times count from --start = now - 3h: keep the two together.
BACKFILL=3h
BACKFILL_S=10800

while [ $# -gt 0 ]; do
  case "$1" in
    --for) seconds=${2:?--for needs seconds}; shift 2 ;;
    --for=*) seconds=${1#--for=}; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "run.sh: --for wants whole seconds, not '$seconds'" >&2; exit 2 ;; esac

api=http://127.0.0.1:$DEMO_PORT
sd=$here/sd
t0=$(date +%s)
say() { printf '%s +%s  %s\n' "$(date +%H:%M:%S)" "$(elapsed)" "$*"; }
elapsed() { local s=$(( $(date +%s) - t0 )); printf '%d:%02d' $((s / 60)) $((s % 60)); }

for b in vigil vigil-sim; do
  [ -x "$BUILD/$b" ] || { echo "run.sh: no $BUILD/$b (make demo builds it)" >&2; exit 1; }
done

# Every port the demo listens on must be free: a leftover from an earlier run
# (or Prometheus on 9090) would answer in our place.
hosts_total=$((DEMO_HOSTS + 1))
ports="$DEMO_PORT $DEMO_SINK_PORT $(seq "$DEMO_SIM_PORT" $((DEMO_SIM_PORT + 1 + 3 * hosts_total)) | tr '\n' ' ')"
busy=$(python3 - $ports <<'PY'
import socket, sys
for p in sys.argv[1:]:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", int(p)))
    except OSError:
        print(p, end=" ")
    finally:
        s.close()
PY
)
if [ -n "$busy" ]; then
  echo "run.sh: port(s) in use: $busy- stop what listens there or set DEMO_PORT / DEMO_SIM_PORT / DEMO_SINK_PORT" >&2
  exit 1
fi

pids=()
stopping=0
cleanup() {
  [ "$stopping" = 1 ] && return
  stopping=1
  trap '' INT TERM
  echo
  say "stopping: ${pids[*]:-nothing}"
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null && say "killed $p (did not stop on TERM)"; done
  wait 2>/dev/null
  rm -f "$DEMO_DIR/backfill.om"
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap cleanup EXIT

# Wait until URL answers 200, while PID lives; $3 seconds at most.
wait_http() {
  local url=$1 pid=$2 limit=$3 i
  for i in $(seq $((limit * 5))); do
    kill -0 "$pid" 2>/dev/null || return 1
    python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

rm -rf "$DEMO_DIR" && mkdir -p "$DEMO_DIR" "$sd" && rm -f "$sd"/*.json
printf '[{"targets":["127.0.0.1:%s"],"labels":{"job":"vigil"}}]\n' "$DEMO_PORT" >"$sd/vigil.json"
# The routing of examples/llm/alertmanager.yml, unchanged but for its relay
# URLs, which become the sink's (it prints every notification).
sed "s#http://10\.0\.0\.50:9099/#http://127.0.0.1:$DEMO_SINK_PORT/#" \
  examples/llm/alertmanager.yml >"$sd/alertmanager.yml"

say "vigil-sim: $DEMO_HOSTS engine hosts + 1 TRT-LLM, writing $BACKFILL of history at a $DEMO_STEP step"
start=$((t0 - BACKFILL_S))
"$BUILD/vigil-sim" --hosts="$DEMO_HOSTS" --engines=vllm-v1,sglang,vllm-v0 --trtllm-hosts=1 --ecc \
  --listen="127.0.0.1:$DEMO_SIM_PORT" --sd-file="$sd/targets.json" \
  --scenario="$here/scenario.yml" --start="$start" \
  --backfill="$BACKFILL" --backfill-step="$DEMO_STEP" --backfill-file="$DEMO_DIR/backfill.om" --live \
  >"$DEMO_DIR/sim.log" 2>&1 &
sim=$!
pids+=("$sim")
if ! wait_http "http://127.0.0.1:$DEMO_SIM_PORT/stats" "$sim" 600; then
  echo "run.sh: vigil-sim did not come up; $DEMO_DIR/sim.log:" >&2; tail -5 "$DEMO_DIR/sim.log" >&2; exit 1
fi
# The probe job's targets: the engines of targets.json, probed through this
# Vigil's /probe (examples/llm/probes.yml).
python3 - "$sd/targets.json" "127.0.0.1:$DEMO_PORT" >"$sd/llm-probe.json" <<'PY'
import json, sys
groups = json.load(open(sys.argv[1]))
out = []
for g in groups:
    labels = dict(g.get("labels", {}))
    if labels.get("job") not in ("vllm", "sglang", "trtllm"):
        continue
    labels.update({"job": "llm-probe", "__probe_via__": sys.argv[2]})
    labels.pop("instance", None)
    out.append({"targets": g["targets"], "labels": labels})
json.dump(out, sys.stdout, indent=1)
PY
t_backfill=$(( $(date +%s) - t0 ))
say "backfill written in ${t_backfill}s ($(du -m "$DEMO_DIR/backfill.om" | cut -f1) MB); the fleet is live"

t1=$(date +%s)
if ! "$BUILD/vigil" tsdb import openmetrics "$DEMO_DIR/backfill.om" "$DEMO_DIR/tsdb" >"$DEMO_DIR/import.log" 2>&1; then
  echo "run.sh: import failed; $DEMO_DIR/import.log:" >&2; tail -5 "$DEMO_DIR/import.log" >&2; exit 1
fi
rm -f "$DEMO_DIR/backfill.om"
say "imported in $(( $(date +%s) - t1 ))s: $(tail -1 "$DEMO_DIR/import.log")"

python3 "$here/alert_sink.py" --listen "127.0.0.1:$DEMO_SINK_PORT" --poll "$api" \
  --state "$sd/alerts.json" --t0 "$t0" &
pids+=("$!")

"$BUILD/vigil" --config.file=examples/llm/demo/prometheus.yml --storage.tsdb.path="$DEMO_DIR/tsdb" \
  --alertmanager.config.file="$sd/alertmanager.yml" \
  --probe.config.file=examples/llm/probes.yml \
  --web.listen-address="127.0.0.1:$DEMO_PORT" >"$DEMO_DIR/vigil.log" 2>&1 &
vigil=$!
pids+=("$vigil")
if ! wait_http "$api/-/ready" "$vigil" 60; then
  echo "run.sh: vigil did not come up; $DEMO_DIR/vigil.log:" >&2; tail -5 "$DEMO_DIR/vigil.log" >&2; exit 1
fi

cat <<MSG
$(say "vigil is up, scraping the fleet every 5s")

  API          $api   (Grafana: a Prometheus data source with this URL)
  targets      $api/api/v1/targets   (TRT-LLM's engine is down on purpose)
  alerts       $api/api/v1/alerts
  probe        $api/probe?module=llm_completion&target=<engine>/v1/completions (probes.yml)
  rules        $api/api/v1/rules
  query        $api/api/v1/query?query=llm:kv_usage:1m
  dashboard    examples/llm/grafana/llm-inference.json (import it in Grafana)
  simulator    http://127.0.0.1:$DEMO_SIM_PORT/control/faults   (inject more: examples/sim/README.md)
  logs         $DEMO_DIR/vigil.log, $DEMO_DIR/sim.log

  Incidents (examples/llm/demo/scenario.yml), from the start of the demo:
    +2:00  KV cache of gpu-node-0 full   KVCacheCritical pending, firing 5 min later
    +3:00  XID 79 on gpu-node-1 GPU 3    XidError firing at once
    +4:00  gpu-node-2's engine hangs     /metrics answers (up 1), inference does not:
                                         InferenceProbeFailing firing 2 min later
    +5:00  XID cleared                   XidError resolved
    +8:00  KV cache back to normal       KVCacheCritical resolved
    +8:00  the hang clears               InferenceProbeFailing resolved
  Routing: examples/llm/alertmanager.yml (critical alerts to oncall-critical,
  group_wait 30s, group_interval 5m; KVCacheCritical inhibits KVCacheHigh).
  [rules] lines are the rule engine's states (/api/v1/alerts), [router]
  lines the notifications the built-in router sent to the webhook sink.
  Silence one:  amtool --alertmanager.url=$api silence add alertname=XidError
  Ctrl-C stops everything.

MSG

if [ "$seconds" -gt 0 ]; then
  while [ $(( $(date +%s) - t0 )) -lt "$seconds" ]; do
    for p in "${pids[@]}"; do
      kill -0 "$p" 2>/dev/null || { say "process $p exited early; see $DEMO_DIR/*.log"; exit 1; }
    done
    sleep 1
  done
  say "checking"
  python3 "$here/check.py" --url "$api" --rules examples/llm/rules/recording.yml --state "$sd/alerts.json"
  rc=$?
  [ "$rc" = 0 ] && say "PASS" || say "FAIL"
  exit "$rc"
fi

while :; do
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || { say "process $p exited; see $DEMO_DIR/*.log"; exit 1; }
  done
  sleep 1
done
