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

# free_port: a free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# metric URL NAME: on a /metrics page, the sum of the samples of NAME (any
# labels; Prometheus 2.42 splits some by type="float|histogram"), or the
# one sample of a full series text such as 'vm_cache_entries{type="x"}'.
metric() {
  curl -sf "$1" | awk -v n="$2" '
    index($0, n) == 1 { c = substr($0, length(n) + 1, 1)
                        if (c == " " || c == "{") { sum += $NF; seen = 1 } }
    END { if (seen) printf "%.0f\n", sum }'
}

# cpu_seconds PID: utime+stime of the process, in seconds.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}
