# Shared by the scripts that run Vigil, Prometheus and VictoriaMetrics
# scraping ../shared/bench-target (compare_scrape.sh, steady_scrape.sh).
# Source lib.sh first. The caller sets `interval` (the scrape interval),
# `vigil` (the binary) and `shared` (../shared), then calls
# setup_scrape_bench, which makes `work` (a scratch directory for configs
# and logs) and the array PIDS (every process started is added, and
# stopped when the script exits).

rss_bytes() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }
anon_bytes() { awk '/^RssAnon:/ { print $2 * 1024 }' "/proc/$1/status"; }
median() { sort -g "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

setup_scrape_bench() {  # NAME: checks the inputs, makes work, builds the target
  local name=$1
  [ -x "$vigil" ] || { echo "$name: no $vigil (make vigil first)" >&2; exit 2; }
  [ -f "$shared/bench-target/metrics_target.cpp" ] ||
    { echo "$name: no bench target under $shared (set VIGIL_SHARED_DIR)" >&2; exit 2; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-${name%.sh}.XXXXXX")
  PIDS=()
  trap scrape_bench_cleanup EXIT
  trap 'exit 130' INT TERM
  bash "$shared/bench-target/build.sh" "$work/metrics_target" >/dev/null
}

scrape_bench_cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}

start_target() {  # N SERIES PORT -> sets TPID; adds it to PIDS
  "$work/metrics_target" --port "$3" --targets "$1" --series "$2" \
    >"$work/target.log" 2>&1 &
  TPID=$!; PIDS+=("$TPID")
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$3/metrics/0" >/dev/null && return 0
    kill -0 "$TPID" 2>/dev/null || break
    sleep 0.1
  done
  echo "$(basename "$0"): the bench target did not start; its log:" >&2
  cat "$work/target.log" >&2
  exit 1
}

write_config() {  # N PORT FILE: one job, N targets of the bench target
  local n=$1 port=$2 file=$3
  {
    printf 'global:\n  scrape_interval: %s\n  scrape_timeout: %s\n' "$interval" "$interval"
    printf 'scrape_configs:\n  - job_name: bench\n    static_configs:\n'
    for ((i = 0; i < n; i++)); do
      printf "      - targets: ['127.0.0.1:%s']\n" "$port"
      printf "        labels: {__metrics_path__: /metrics/%d, instance: 'target-%d'}\n" "$i" "$i"
    done
  } >"$file"
}

# NAME is vigil, prometheus, victoriametrics, or vigil-SOMETHING: a Vigil
# run as `env ${VARIANT_ENV[NAME]} ${VARIANT_BIN[NAME]}` (steady_scrape.sh
# --variant; both associative arrays, set by the caller).
start_server() {  # NAME CONFIG DATA PORT -> sets SPID, SAPI; adds SPID to PIDS
  local name=$1 cfg=$2 data=$3 port=$4
  case $name in
    vigil|vigil-*)
      local bin=$vigil envs=()
      if [ "$name" != vigil ]; then
        bin=${VARIANT_BIN[$name]}
        read -r -a envs <<<"${VARIANT_ENV[$name]:-}"
      fi
      env "${envs[@]}" "$bin" --config.file="$cfg" --storage.tsdb.path="$data" \
        --web.listen-address="127.0.0.1:$port" --log.level=error \
        >"$work/$name.log" 2>&1 &
      SPID=$!; SREADY=/-/ready ;;
    prometheus)
      prometheus --config.file="$cfg" --storage.tsdb.path="$data" \
        --web.listen-address="127.0.0.1:$port" --log.level=error \
        >"$work/$name.log" 2>&1 &
      SPID=$!; SREADY=/-/ready ;;
    victoriametrics)
      victoria-metrics -storageDataPath="$data" -httpListenAddr="127.0.0.1:$port" \
        -promscrape.config="$cfg" -retentionPeriod=100y -search.disableCache \
        -search.maxUniqueTimeseries=10000000 \
        -loggerLevel=ERROR >"$work/$name.log" 2>&1 &
      SPID=$!; SREADY=/health ;;
  esac
  PIDS+=("$SPID")
  SAPI=http://127.0.0.1:$port
  for _ in $(seq 300); do curl -sf "$SAPI$SREADY" >/dev/null && return 0; sleep 0.1; done
  echo "$(basename "$0"): $name did not become ready; log:" >&2
  cat "$work/$name.log" >&2
  exit 1
}

stop_server() {
  kill "$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
}

counts() {  # NAME API -> "samples series" (the server's own counts)
  local m=$2/metrics
  if [ "$1" = victoriametrics ]; then
    # Series created since start: the active ones here, where nothing
    # churns. (The hour's metric-id cache, read before, is filled lazily
    # and read 0 in one run of session 45, and again in an empty hour.)
    echo "$(metric "$m" vm_rows_added_to_storage_total) $(metric "$m" vm_new_timeseries_created_total)"
  else
    echo "$(metric "$m" prometheus_tsdb_head_samples_appended_total) $(metric "$m" prometheus_tsdb_head_series)"
  fi
}
