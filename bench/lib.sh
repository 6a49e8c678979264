# Shared by the side-by-side scripts in bench/ (source it).

# start_prometheus DATA_DIR PORT WORK: runs Prometheus 2.42 on 127.0.0.1:PORT
# over the TSDB blocks in DATA_DIR, waits until it is ready, then 3 s more
# so it has loaded its blocks before it is timed. It is killed when the
# calling script exits. Its log goes to WORK/prom.log.
start_prometheus() {
  local data=$1 port=$2 work=$3
  printf 'global:\n  scrape_interval: 15s\n' > "$work/prometheus.yml"
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$data" \
    --web.listen-address="127.0.0.1:$port" --storage.tsdb.retention.time=100y \
    --log.level=error >"$work/prom.log" 2>&1 &
  PROM_PID=$!
  trap 'kill $PROM_PID ${VM_PID:-} 2>/dev/null || true' EXIT
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.1; done
  sleep 3
}

stop_prometheus() {
  kill "$PROM_PID" 2>/dev/null || true
  wait "$PROM_PID" 2>/dev/null || true
}

# start_victoriametrics DATA_DIR PORT WORK: runs VictoriaMetrics on
# 127.0.0.1:PORT with its rollup-result cache off (repeated queries would
# otherwise be answered from it) and waits until it is healthy.
start_victoriametrics() {
  local data=$1 port=$2 work=$3
  victoria-metrics -storageDataPath="$data" -httpListenAddr="127.0.0.1:$port" \
    -retentionPeriod=100y -search.disableCache -loggerLevel=ERROR >"$work/vm.log" 2>&1 &
  VM_PID=$!
  trap 'kill ${PROM_PID:-} $VM_PID 2>/dev/null || true' EXIT
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
}

stop_victoriametrics() {
  kill "$VM_PID" 2>/dev/null || true
  wait "$VM_PID" 2>/dev/null || true
}
