#!/usr/bin/env bash
# Vigil, Prometheus 2.42 and VictoriaMetrics 1.79 (+ vmalert) side by side on
# the simulated GPU fleet (vigil-sim), one server after another, each with a
# fresh data directory, the same targets, the same window and the LLM rule
# pack (examples/llm/rules). bench/compare/README.md says what is measured.
#
#   bench/compare/run.sh [--sizes "100 25"] [--interval 5s] [--warmup 60]
#       [--window 300] [--repeat 10] [--step 30] [--range 3600]
#       [--servers "vigil prometheus victoriametrics"] [--vigil build/vigil]
#       [--sim build/vigil-sim] [--out bench/RESULTS.md] [--no-write]
#       [--quick]
#
#   --sizes     engine hosts of the fleet, one run of every server per size
#               (a host is ~1,480 series: vLLM V1/V1/SGLang/V0 cycled,
#               8 GPUs with ECC counters, a 96-CPU node-exporter page)
#   --interval  scrape interval (and timeout) of every server
#   --warmup    seconds between a server's start and the measured window
#   --window    seconds of the measured window (CPU, RSS, samples)
#   --repeat    curl runs per query; the median is reported
#   --step      step of the range queries (s); --range their length (s),
#               ending now, whatever the window (a short run has less data)
#   --out       where the Markdown report goes (--no-write: stdout only)
#   --quick     a ~3-minute smoke run: --sizes 10 --warmup 20 --window 40
#               --repeat 5 (flags after --quick override it)
#
# Stops every process it started (by PID) on exit, Ctrl-C or TERM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmdline="bench/compare/run.sh $*"
sizes="100 25" interval=5s warmup=60 window=300 repeat=10 step=30 range=3600
servers="vigil prometheus victoriametrics"
vigil=$root/build/vigil sim=$root/build/vigil-sim
out=$root/bench/RESULTS.md write=1 quick=0
rules_dir=$root/examples/llm/rules
die() { echo "run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --step) step=$2; shift 2 ;;
    --range) range=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --vigil) vigil=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-write) write=0; shift ;;
    --quick) quick=1 sizes=10 warmup=20 window=40 repeat=5; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
for n in $sizes $warmup $window $repeat $step $range; do
  case $n in ''|*[!0-9]*) die "sizes, --warmup, --window, --repeat, --step and --range want whole numbers, not '$n'" ;; esac
done
case $interval in *[0-9]s) ;; *) die "--interval wants seconds such as 5s, not '$interval'" ;; esac
for s in $servers; do
  case $s in vigil|prometheus|victoriametrics) ;; *) die "unknown server '$s' (vigil, prometheus, victoriametrics)" ;; esac
done
for tool in curl python3 du; do command -v $tool >/dev/null || die "needs $tool"; done
[ -x "$sim" ] || die "no $sim (cmake --build build --target vigil-sim)"
case " $servers " in *" vigil "*) [ -x "$vigil" ] || die "no $vigil (cmake --build build --target vigil)" ;; esac
case " $servers " in *" prometheus "*) command -v prometheus >/dev/null || die "no prometheus on PATH" ;; esac
case " $servers " in *" victoriametrics "*)
  command -v victoria-metrics >/dev/null || die "no victoria-metrics on PATH"
  command -v vmalert >/dev/null || die "no vmalert on PATH (the rule pack needs it)" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench-compare.XXXXXX")
PIDS=()
stopping=0
cleanup() {
  [ "$stopping" = 1 ] && return
  stopping=1
  trap '' INT TERM
  local p alive
  [ -n "${NAP_PID:-}" ] && kill "$NAP_PID" 2>/dev/null
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 100); do
    alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# Sleeps in the background and waits for it, so that a trapped signal is
# handled at once rather than after the sleep.
NAP_PID=
nap() {
  sleep "$1" &
  NAP_PID=$!
  wait "$NAP_PID" || true
  NAP_PID=
}

results=$work/results.tsv
: >"$results"
rec() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$results"; }  # SIZE SERVER KEY VALUE
now_ms() { date +%s%3N; }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# metric URL NAME: the sum of the samples of NAME (any labels) on a /metrics
# page, or the one sample of a full series text such as 'x{type="y"}'.
metric() {
  curl -sf "$1" | awk -v n="$2" '
    index($0, n) == 1 { c = substr($0, length(n) + 1, 1)
                        if (c == " " || c == "{") { sum += $NF; seen = 1 } }
    END { if (seen) printf "%.0f\n", sum; else print 0 }'
}
cpu_seconds() {  # PID... -> utime+stime of all, in seconds
  local hz p t=0
  hz=$(getconf CLK_TCK)
  for p in "$@"; do t=$(awk -v hz="$hz" -v t="$t" '{ print t + ($14 + $15) / hz }' "/proc/$p/stat"); done
  echo "$t"
}
status_kb() {  # FIELD PID... -> sum of a /proc/PID/status field, bytes
  local f=$1 p t=0
  shift
  for p in "$@"; do t=$(awk -v f="$f:" -v t="$t" '$1 == f { print t + $2 * 1024 }' "/proc/$p/status"); done
  echo "$t"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%.6f\n", a[int((NR + 1) / 2)]; else print "nan" }'; }

python3 "$here/queries.py" "$rules_dir/recording.yml" >"$work/queries.tsv"

write_configs() {  # SD_FILE: $work/prom.yml (Vigil, Prometheus), $work/vm-scrape.yml
  local sd=$1
  cat >"$work/prom.yml" <<EOF
global:
  scrape_interval: $interval
  scrape_timeout: $interval
  evaluation_interval: 15s
rule_files:
  - $rules_dir/recording.yml
  - $rules_dir/alerts.yml
scrape_configs:
  - job_name: sim
    file_sd_configs:
      - files: [$sd]
EOF
  cat >"$work/vm-scrape.yml" <<EOF
global:
  scrape_interval: $interval
  scrape_timeout: $interval
scrape_configs:
  - job_name: sim
    file_sd_configs:
      - files: [$sd]
EOF
}

# start_server NAME DATA PORT [norules] -> SPID (+ VMALERT_PID), SAPI, SREADY;
# returns once the server answers its readiness endpoint.
start_server() {
  local name=$1 data=$2 port=$3 norules=${4:-}
  VMALERT_PID=
  case $name in
    vigil)
      "$vigil" --config.file="$work/prom.yml" --storage.tsdb.path="$data" \
        --web.listen-address="127.0.0.1:$port" --web.enable-admin-api --log.level=error \
        >>"$work/$name.log" 2>&1 &
      SPID=$!; SREADY=/-/ready ;;
    prometheus)
      prometheus --config.file="$work/prom.yml" --storage.tsdb.path="$data" \
        --storage.tsdb.retention.time=100y --web.enable-admin-api \
        --web.listen-address="127.0.0.1:$port" --log.level=error \
        >>"$work/$name.log" 2>&1 &
      SPID=$!; SREADY=/-/ready ;;
    victoriametrics)
      victoria-metrics -storageDataPath="$data" -httpListenAddr="127.0.0.1:$port" \
        -promscrape.config="$work/vm-scrape.yml" -retentionPeriod=100y -search.disableCache \
        -search.latencyOffset=0s -search.maxUniqueTimeseries=10000000 -loggerLevel=ERROR >>"$work/$name.log" 2>&1 &
      SPID=$!; SREADY=/health ;;
  esac
  PIDS+=("$SPID")
  SAPI=http://127.0.0.1:$port
  for _ in $(seq 1200); do
    curl -sf -o /dev/null "$SAPI$SREADY" && break
    kill -0 "$SPID" 2>/dev/null || { cat "$work/$name.log" >&2; die "$name exited"; }
    sleep 0.05
  done
  curl -sf -o /dev/null "$SAPI$SREADY" || { cat "$work/$name.log" >&2; die "$name did not become ready"; }
  if [ "$name" = victoriametrics ] && [ -z "$norules" ]; then
    # The rule pack: vmalert reads from VictoriaMetrics and writes the
    # recording rules' (and ALERTS) series back through remote write.
    # Notifications go to a port nothing listens on (the other two servers
    # have no Alertmanager either).
    vmalert -rule="$rules_dir/recording.yml" -rule="$rules_dir/alerts.yml" \
      -datasource.url="$SAPI" -remoteWrite.url="$SAPI" -evaluationInterval=15s \
      -notifier.url="http://127.0.0.1:$(free_port)" -httpListenAddr="127.0.0.1:$(free_port)" \
      -loggerLevel=ERROR >>"$work/vmalert.log" 2>&1 &
    VMALERT_PID=$!
    PIDS+=("$VMALERT_PID")
  fi
}

stop_pid() {  # PID: TERM, then wait for it (60 s at most, then KILL)
  local p=$1 q keep=()
  if kill -TERM "$p" 2>/dev/null; then
    for _ in $(seq 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  fi
  wait "$p" 2>/dev/null || true
  # Forget it, so that the exit trap never signals a reused PID.
  for q in "${PIDS[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done
  PIDS=("${keep[@]}")
}

counts() {  # NAME -> "samples_ingested active_series"
  local m=$SAPI/metrics
  if [ "$1" = victoriametrics ]; then
    echo "$(metric "$m" vm_rows_added_to_storage_total) $(metric "$m" 'vm_cache_entries{type="storage/hour_metric_ids"}')"
  else
    echo "$(metric "$m" prometheus_tsdb_head_samples_appended_total) $(metric "$m" prometheus_tsdb_head_series)"
  fi
}

# result_series FILE -> number of series (or 1 for a scalar) of a query
# answer, "error: ..." if it is not a success.
# snapshot_bytes NAME DATA: asks the server for a snapshot of its data
# (Prometheus writes its head into a block, Vigil a RocksDB checkpoint,
# VictoriaMetrics hard links to its parts), prints `du -sb` of it and
# removes it; "nan" if the server refuses.
snapshot_bytes() {
  local name=$1 data=$2 snap
  if [ "$name" = victoriametrics ]; then
    snap=$(curl -sf "$SAPI/snapshot/create" | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot"])' 2>/dev/null) || snap=
  else
    snap=$(curl -sf -XPOST "$SAPI/api/v1/admin/tsdb/snapshot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["name"])' 2>/dev/null) || snap=
  fi
  if [ -z "$snap" ] || [ ! -d "$data/snapshots/$snap" ]; then echo nan; return 0; fi
  du -sb "$data/snapshots/$snap" | cut -f1
  if [ "$name" = victoriametrics ]; then
    curl -sf -o /dev/null "$SAPI/snapshot/delete?snapshot=$snap" || rm -rf "$data/snapshots/$snap"
  else
    rm -rf "$data/snapshots/$snap"
  fi
}

result_series() {
  python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("error: not JSON"); sys.exit()
if d.get("status") != "success":
    print("error: " + str(d.get("error", d))[:120].replace("\t", " ")); sys.exit()
r = d["data"]["result"]
print(len(r) if isinstance(r, list) else 1)
PY
}

# time_query SIZE NAME KIND ID PROMQL: --repeat curl runs, records the median
# ms and the number of result series of the last answer.
time_query() {
  local size=$1 name=$2 kind=$3 id=$4 q=$5 now ts=()
  now=$(date +%s)
  local args=(--data-urlencode "query=$q")
  if [ "$kind" = instant ]; then
    args+=(--data-urlencode "time=$now"); path=/api/v1/query
  else
    args+=(--data-urlencode "start=$((now - range))" --data-urlencode "end=$now" --data-urlencode "step=$step")
    path=/api/v1/query_range
  fi
  for ((r = 0; r < repeat; r++)); do
    ts+=("$(curl -s -G "${args[@]}" -o "$work/q.json" -w '%{time_total}' "$SAPI$path")")
  done
  rec "$size" "$name" "q:$id" "$(printf '%s\n' "${ts[@]}" | median | awk '{ printf "%.2f", $1 * 1000 }')"
  rec "$size" "$name" "n:$id" "$(result_series "$work/q.json")"
}

# restart_time NAME DATA T: starts NAME again on DATA (no vmalert); sets
# RESTART_READY / RESTART_QUERY to the ms until it is ready and until `up`
# at time T (before the stop) answers with series; stops it again.
restart_time() {
  local name=$1 data=$2 t=$3 t0 n
  RESTART_READY=nan RESTART_QUERY=nan
  t0=$(now_ms)
  start_server "$name" "$data" "$(free_port)" norules
  RESTART_READY=$(( $(now_ms) - t0 ))
  for _ in $(seq 1200); do
    curl -s -G --data-urlencode "query=up" --data-urlencode "time=$t" -o "$work/r.json" \
      "$SAPI/api/v1/query" || true
    n=$(result_series "$work/r.json")
    case $n in error*|0) sleep 0.05 ;; *) RESTART_QUERY=$(( $(now_ms) - t0 )); break ;; esac
  done
  stop_pid "$SPID"
}

echo "# work dir $work; results in $results" >&2
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for n in $sizes; do
  sd=$work/sd-$n.json
  "$sim" --hosts="$n" --engines=vllm-v1,vllm-v1,sglang,vllm-v0 --cpus=96 --ecc --seed=1 \
    --listen=127.0.0.1:0 --sd-file="$sd" >"$work/sim-$n.log" 2>&1 &
  simpid=$!; PIDS+=("$simpid")
  for _ in $(seq 200); do [ -s "$sd" ] && grep -q 'control on' "$work/sim-$n.log" && break; sleep 0.05; done
  [ -s "$sd" ] || { cat "$work/sim-$n.log" >&2; die "vigil-sim wrote no $sd"; }
  # 1 % gateway 5xx, so that the seed's 5xx-ratio query has series to divide.
  control=$(sed -n 's/.*control on \([0-9.:]*\).*/\1/p' "$work/sim-$n.log")
  curl -sf -o /dev/null -XPOST -d '{"kind":"gateway-5xx","fraction":0.01}' "http://$control/control/fault" ||
    die "vigil-sim at $control refused the gateway-5xx fault"
  targets=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$sd")
  write_configs "$sd"
  rec "$n" - targets "$targets"
  for s in $servers; do
    data=$work/data-$s-$n
    rm -rf "$data"
    echo "# $s: $n hosts ($targets targets) every $interval; warm-up ${warmup}s, window ${window}s" >&2
    start_server "$s" "$data" "$(free_port)"
    pids=("$SPID" ${VMALERT_PID:+"$VMALERT_PID"})
    nap "$warmup"
    read -r samples0 _ <<<"$(counts "$s")"
    cpu0=$(cpu_seconds "${pids[@]}"); simcpu0=$(cpu_seconds "$simpid")
    : >"$work/rss"
    end=$((SECONDS + window))
    while [ $SECONDS -lt $end ]; do status_kb VmRSS "${pids[@]}" >>"$work/rss"; nap 2; done
    cpu1=$(cpu_seconds "${pids[@]}"); simcpu1=$(cpu_seconds "$simpid")
    read -r samples1 active <<<"$(counts "$s")"
    rec "$n" "$s" cpu_s "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')"
    rec "$n" "$s" sim_cpu_s "$(awk -v a="$simcpu0" -v b="$simcpu1" 'BEGIN { print b - a }')"
    rec "$n" "$s" samples_window $((samples1 - samples0))
    rec "$n" "$s" active "$active"
    rec "$n" "$s" rss_steady "$(median <"$work/rss")"
    rec "$n" "$s" rss_peak "$(status_kb VmHWM "${pids[@]}")"
    curl -s -G --data-urlencode 'query=count({__name__=~"llm:.+"})' -o "$work/q.json" "$SAPI/api/v1/query"
    rec "$n" "$s" llm_series "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["data"]["result"]; print(r[0]["value"][1] if r else 0)' "$work/q.json")"
    while IFS=$'\t' read -r kind id q; do
      time_query "$n" "$s" "$kind" "$id" "$q"
    done <"$work/queries.tsv"
    read -r samples_total _ <<<"$(counts "$s")"
    rec "$n" "$s" samples_total "$samples_total"
    rec "$n" "$s" snapshot_bytes "$(snapshot_bytes "$s" "$data")"
    tstop=$(date +%s)
    [ -n "${VMALERT_PID:-}" ] && stop_pid "$VMALERT_PID"
    t0=$(now_ms); stop_pid "$SPID"; rec "$n" "$s" stop_ms $(( $(now_ms) - t0 ))
    rec "$n" "$s" disk_bytes "$(du -sb "$data" | cut -f1)"
    restart_time "$s" "$data" "$((tstop - 10))"
    rec "$n" "$s" restart_ready_ms "$RESTART_READY"
    rec "$n" "$s" restart_query_ms "$RESTART_QUERY"
    rm -rf "$data"
  done
  stop_pid "$simpid"
done

machine="$(nproc) cores, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/^MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
versions="vigil: $("$vigil" --version 2>&1 | head -1) ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')); prometheus: $(prometheus --version 2>&1 | head -1); victoria-metrics and vmalert: $(dpkg-query -W -f='${Version}' victoria-metrics 2>/dev/null || echo '?') (Debian)"
python3 "$here/report.py" --results "$results" --queries "$work/queries.tsv" \
  --machine "$machine; load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end" --versions "$versions" --command "$cmdline" --quick "$quick" \
  --interval "$interval" --warmup "$warmup" --window "$window" --repeat "$repeat" \
  --step "$step" --range "$range" >"$work/report.md"
cat "$work/report.md"
if [ "$write" = 1 ]; then cp "$work/report.md" "$out"; echo "# written to $out" >&2; fi
