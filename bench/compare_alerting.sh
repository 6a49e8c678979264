#!/usr/bin/env bash
# The built-in Alertmanager against the real one (Debian's
# prometheus-alertmanager 0.25), fed the same alert stream, one after the
# other, each with a fresh data directory (issue 11's speed target).
#
#   bench/compare_alerting.sh [--alerts 10000] [--groups 1000] [--rounds 12]
#       [--every 10] [--flip 0.05] [--servers "vigil alertmanager"]
#       [--vigil build/vigil]
#
# Load (bench/alert_load.py): --alerts alerts in --groups groups, all POSTed
# to /api/v2/alerts every --every seconds for --rounds rounds in batches of
# 64, as Prometheus resends them; each round 5 % are sent resolved and fire
# again the next round. Routing: group_by [alertname, group], group_wait
# 1s, group_interval 10s, one webhook receiver (a Python sink counting
# notifications). For each server it reports
#   - CPU seconds of the server process (utime+stime from /proc/PID/stat)
#     over the whole load, per alert update posted (microseconds);
#   - RSS: the median of VmRSS sampled every second during the load minus
#     the RSS before the first alert, per active alert (bytes), and VmHWM;
#   - notifications the sink received (both should be about equal).
# Prints a Markdown table with Vigil / Alertmanager ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
alerts=10000 groups=1000 rounds=12 every=10 flip=0.05
servers="vigil alertmanager" vigil=$root/build/vigil
while [ $# -gt 0 ]; do
  case $1 in
    --alerts) alerts=$2; shift 2 ;;
    --groups) groups=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --flip) flip=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --vigil) vigil=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "compare_alerting.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in curl python3; do
  command -v $tool >/dev/null || { echo "compare_alerting.sh: needs $tool" >&2; exit 2; }
done
[ -x "$vigil" ] || { echo "compare_alerting.sh: no $vigil (make vigil first)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-compare-alerting.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
cpu_seconds() {  # PID -> utime+stime in seconds
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
wait_ready() {  # URL PID
  for _ in $(seq 200); do
    kill -0 "$2" 2>/dev/null || return 1
    curl -sf -o /dev/null "$1" && return 0
    sleep 0.1
  done
  return 1
}

# The webhook sink: counts notifications and the alerts in them.
sink_port=$(free_port)
cat >"$work/sink.py" <<'PY'
import http.server, json, sys, threading
n = {"notifications": 0, "alerts": 0}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            n["notifications"] += 1
            n["alerts"] += len(json.loads(body).get("alerts", []))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def do_GET(self):
        with lock:
            out = json.dumps(n).encode()
            if self.path == "/reset":
                n["notifications"] = n["alerts"] = 0
        self.send_response(200); self.send_header("Content-Length", str(len(out))); self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.daemon_threads = True
s.serve_forever()
PY
python3 "$work/sink.py" "$sink_port" & PIDS+=($!)

cat >"$work/am.yml" <<YML
route:
  receiver: sink
  group_by: [alertname, group]
  group_wait: 1s
  group_interval: 10s
  repeat_interval: 1h
receivers:
  - name: sink
    webhook_configs:
      - url: http://127.0.0.1:$sink_port/notify
        send_resolved: true
YML
printf 'global:\n  evaluation_interval: 1m\n' >"$work/prometheus.yml"

results=()
for server in $servers; do
  port=$(free_port)
  data="$work/data-$server"
  mkdir -p "$data"
  case $server in
    vigil)
      "$vigil" --config.file="$work/prometheus.yml" --storage.tsdb.path="$data" \
        --alertmanager.config.file="$work/am.yml" \
        --web.listen-address="127.0.0.1:$port" >"$work/$server.log" 2>&1 &
      pid=$! ;;
    alertmanager)
      command -v prometheus-alertmanager >/dev/null ||
        { echo "# skipping alertmanager: prometheus-alertmanager not installed" >&2; continue; }
      prometheus-alertmanager --config.file="$work/am.yml" --storage.path="$data" \
        --web.listen-address="127.0.0.1:$port" --cluster.listen-address= \
        >"$work/$server.log" 2>&1 &
      pid=$! ;;
    *) echo "compare_alerting.sh: unknown server $server" >&2; exit 2 ;;
  esac
  PIDS+=("$pid")
  wait_ready "http://127.0.0.1:$port/-/ready" "$pid" ||
    { echo "compare_alerting.sh: $server did not start:" >&2; tail -5 "$work/$server.log" >&2; exit 1; }
  sleep 2
  curl -sf -o /dev/null "http://127.0.0.1:$sink_port/reset"
  base_kib=$(rss_kib "$pid")
  cpu0=$(cpu_seconds "$pid")
  echo "# $server: $alerts alerts in $groups groups, $rounds rounds every ${every}s" >&2
  python3 "$here/alert_load.py" --url "http://127.0.0.1:$port" --alerts "$alerts" \
    --groups "$groups" --rounds "$rounds" --every "$every" --flip "$flip" \
    >"$work/load.out" &
  load=$!
  : >"$work/rss"
  while kill -0 "$load" 2>/dev/null; do rss_kib "$pid" >>"$work/rss"; sleep 1; done
  wait "$load" || { echo "compare_alerting.sh: the load against $server failed" >&2; exit 1; }
  sleep "$every"  # the last round's notifications
  cpu1=$(cpu_seconds "$pid")
  hwm=$(hwm_kib "$pid")
  read -r posted _ <"$work/load.out"
  rss_med=$(sort -n "$work/rss" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  sunk=$(curl -sf "http://127.0.0.1:$sink_port/")
  notes=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["notifications"])' "$sunk")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  results+=("$server $(python3 -c "
import sys
cpu0, cpu1, posted, base, med, hwm, alerts = map(float, sys.argv[1:8])
print(f'{(cpu1 - cpu0) / posted * 1e6:.2f} {(med - base) * 1024 / alerts:.0f} {med / 1024:.1f} {hwm / 1024:.1f} {cpu1 - cpu0:.2f}')
" "$cpu0" "$cpu1" "$posted" "$base_kib" "$rss_med" "$hwm" "$alerts") $notes $posted")
done

echo
echo "| server | CPU µs / alert update | RSS B / alert | RSS median MiB | RSS peak MiB | CPU s | notifications | updates posted |"
echo "|---|---|---|---|---|---|---|---|"
for r in "${results[@]}"; do
  set -- $r
  echo "| $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 |"
done
if [ ${#results[@]} -eq 2 ]; then
  set -- ${results[0]}; v_cpu=$2 v_mem=$3
  set -- ${results[1]}; a_cpu=$2 a_mem=$3
  python3 -c "
import sys
vc, vm, ac, am = map(float, sys.argv[1:5])
print(f'\nVigil / Alertmanager: CPU per update {vc / ac:.2f}x, memory per alert {vm / am:.2f}x (target: at most 0.5x each)')
" "$v_cpu" "$v_mem" "$a_cpu" "$a_mem"
fi
echo
echo "$(date -u +%F) $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo);" \
  "$(prometheus-alertmanager --version 2>&1 | head -1)"
