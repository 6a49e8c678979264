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

# median_query_ms URL REPEAT: GETs URL REPEAT times, 0.2 s apart (a burst
# of load on the machine then touches a few runs, not all), and prints the
# median of curl's time_total in ms; "failed" (the response on stderr) if
# a response is not a success. The body goes to a pipe, not a file: curl
# opens an output file at the first byte, and that open (0.3-0.7 ms on this
# machine's overlay file system) would count in time_total.
median_query_ms() {
  local url=$1 repeat=$2 out=() resp
  for ((r = 0; r < repeat; r++)); do
    [ "$r" -gt 0 ] && sleep 0.2
    resp=$(curl -s -w '\n%{time_total}' "$url")
    case "$resp" in
      *'"status":"success"'*) ;;
      *) echo "query failed: $url: $(head -c 300 <<<"${resp%$'\n'*}")" >&2
         printf 'failed'; return 0 ;;
    esac
    out+=("${resp##*$'\n'}")
  done
  printf '%s\n' "${out[@]}" | sort -g | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] * 1000 }'
}

# The three queries of issue 9's comparison, URL-encoded: Q1 an instant
# rate sum, Q2 a histogram quantile (run as a range), Q3 a count by name.
urlenc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
BENCH_Q1=$(urlenc 'sum(rate(vllm:generation_tokens_total[1m]))')
BENCH_Q2=$(urlenc 'histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[1m])))')
BENCH_Q3=$(urlenc 'topk(20, count by (__name__)({__name__=~".+"}))')
