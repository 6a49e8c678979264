#!/usr/bin/env bash
# Side-by-side PromQL range queries: the same OpenMetrics data imported into
# Vigil (vigil tsdb import) and Prometheus (promtool tsdb create-blocks-from
# openmetrics, then `prometheus` on 127.0.0.1). Each query is timed
#   Vigil:      in-process Engine::RangeQuery (build/promql_bench, median)
#   Prometheus: the server's own execTotalTime (query_range?stats=all,
#               median of the runs), which excludes HTTP and JSON like ours
# and the ratio prometheus/vigil is printed.
#
# usage: bench/compare_query.sh [N_SERIES...]   (default: 10 100 1000)
# env:   VIGIL=build/vigil BENCH=build/promql_bench WORK=/tmp/vigil-qbench
#        PROM_PORT=19090 VM_PORT=18429 RUNS=10
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
VIGIL=${VIGIL:-build/vigil}
BENCH=${BENCH:-build/promql_bench}
WORK=${WORK:-/tmp/vigil-qbench}
PROM_PORT=${PROM_PORT:-19090}
VM_PORT=${VM_PORT:-18429}
RUNS=${RUNS:-10}
SIZES=${*:-10 100 1000}
mkdir -p "$WORK"
START=1767225600   # 2026-01-01T00:00:00Z
HOURS=2
END=$((START + HOURS * 3600 - 15))
QSTART=$((END - 3600))

# Data like Prometheus's promql/bench_test.go: counters a_N, b_N and a
# classic histogram h_N_bucket with 5 buckets, per series label l.
python3 - "$WORK/data.om" $START $HOURS $SIZES <<'PY'
import sys
out, start, hours, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(x) for x in sys.argv[4:]]
n = hours * 3600 // 15
with open(out, "w") as f:
    for N in sizes:
        for fam in ("a", "b"):
            f.write(f"# TYPE {fam}_{N} counter\n")
            for i in range(N):
                for s in range(n):
                    f.write(f'{fam}_{N}_total{{l="{i}"}} {s * (1 + i % 7)} {start + s * 15}\n')
        f.write(f"# TYPE h_{N} histogram\n")
        for i in range(N):
            for j, le in enumerate(["0.1", "0.5", "1", "5", "+Inf"]):
                for s in range(n):
                    f.write(f'h_{N}_bucket{{l="{i}",le="{le}"}} {s * (j + 1)} {start + s * 15}\n')
    f.write("# EOF\n")
PY

rm -rf "$WORK/vigil" "$WORK/prom" "$WORK/vm-data"
"$VIGIL" tsdb import openmetrics "$WORK/data.om" "$WORK/vigil" >/dev/null
promtool tsdb create-blocks-from openmetrics "$WORK/data.om" "$WORK/prom" >/dev/null

: > "$WORK/queries.txt"
for N in $SIZES; do
  for q in "a_N_total" "rate(a_N_total[1m])" "sum(rate(a_N_total[5m]))" \
           "sum by (l) (rate(a_N_total[5m]))" "a_N_total + b_N_total" "a_N_total > bool 100" \
           "topk(5, a_N_total)" "histogram_quantile(0.9, sum by (le) (rate(h_N_bucket[5m])))" \
           "max_over_time(rate(a_N_total[1m])[10m:1m])" "abs(a_N_total)"; do
    echo "${q//_N/_$N}" >> "$WORK/queries.txt"
  done
done

VIGIL_BENCH_DIR="$WORK/vigil" VIGIL_BENCH_QUERIES="$WORK/queries.txt" \
VIGIL_BENCH_START=$((QSTART * 1000)) VIGIL_BENCH_END=$((END * 1000)) VIGIL_BENCH_STEP=15000 \
  "$BENCH" --benchmark_repetitions=$RUNS --benchmark_report_aggregates_only=true \
  --benchmark_format=json > "$WORK/vigil.json" 2>/dev/null

# Prometheus starts only after Vigil's runs, so its start-up work (block
# loading, GC) does not compete with them for the two cores; Vigil is not
# running while Prometheus is timed, nor Prometheus while VictoriaMetrics is.
start_prometheus "$WORK/prom" "$PROM_PORT" "$WORK"
python3 - "$WORK/queries.txt" "$PROM_PORT" $QSTART $END $RUNS > "$WORK/prom.json" <<'PY'
import json, statistics, sys, urllib.parse, urllib.request
qf, port, qs, qe, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
out = {}
for q in open(qf).read().splitlines():
    times = []
    for _ in range(runs):
        url = (f"http://127.0.0.1:{port}/api/v1/query_range?" +
               urllib.parse.urlencode({"query": q, "start": qs, "end": qe, "step": 15, "stats": "all"}))
        r = json.load(urllib.request.urlopen(url))
        times.append(r["data"]["stats"]["timings"]["execTotalTime"] * 1000)
    out[q] = statistics.median(times)
json.dump(out, sys.stdout)
PY
stop_prometheus

# VictoriaMetrics (if installed): the same samples through its import API,
# its rollup-result cache off, timed by the "eval:" span of its query trace
# (evaluation without HTTP and JSON, like execTotalTime).
echo '{}' > "$WORK/vm.json"
if command -v victoria-metrics >/dev/null; then
  start_victoriametrics "$WORK/vm-data" "$VM_PORT" "$WORK"
  python3 - "$WORK/data.om" <<'PY' | curl -sf --data-binary @- "http://127.0.0.1:$VM_PORT/api/v1/import/prometheus"
import sys
for line in open(sys.argv[1]):  # OpenMetrics seconds -> text-format milliseconds
    if line.startswith("#"):
        continue
    head, ts = line.rstrip("\n").rsplit(" ", 1)
    sys.stdout.write(f"{head} {int(ts) * 1000}\n")
PY
  curl -sf "http://127.0.0.1:$VM_PORT/internal/force_flush"
  sleep 3
  python3 - "$WORK/queries.txt" "$VM_PORT" $QSTART $END $RUNS > "$WORK/vm.json" <<'PY'
import json, statistics, sys, urllib.parse, urllib.request
qf, port, qs, qe, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def eval_ms(node):
    if node.get("message", "").startswith("eval:"):
        return node["duration_msec"]
    for c in node.get("children", []):
        if (r := eval_ms(c)) is not None:
            return r
    return None
out = {}
for q in open(qf).read().splitlines():
    times = []
    for _ in range(runs):
        url = (f"http://127.0.0.1:{port}/api/v1/query_range?" +
               urllib.parse.urlencode({"query": q, "start": qs, "end": qe, "step": 15, "trace": 1}))
        times.append(eval_ms(json.load(urllib.request.urlopen(url))["trace"]))
    out[q] = statistics.median(times)
json.dump(out, sys.stdout)
PY
  stop_victoriametrics
fi

python3 - "$WORK/vigil.json" "$WORK/prom.json" "$WORK/vm.json" "$WORK/queries.txt" <<'PY'
import json, math, statistics, sys
vj, pj, mj, qf = sys.argv[1:5]
vigil = {}  # ms: the median of the repetitions (the one run when RUNS=1)
for b in json.load(open(vj))["benchmarks"]:
    if b.get("aggregate_name") == "median" or b.get("run_type") == "iteration":
        vigil[b["run_name"]] = b["real_time"]
prom, vm = json.load(open(pj)), json.load(open(mj))
print(f"{'query':66} {'vigil ms':>9} {'prom ms':>9} {'vm ms':>9} {'prom/vigil':>10} {'vm/vigil':>9}")
pr, mr = [], []
for q in open(qf).read().splitlines():
    v, p, m = vigil.get(q, math.nan), prom.get(q, math.nan), vm.get(q, math.nan)
    pr.append(p / v)
    mr.append(m / v)
    print(f"{q:66} {v:9.3f} {p:9.3f} {m:9.3f} {p / v:9.2f}x {m / v:8.2f}x")
def summary(name, rs):
    rs = [r for r in rs if not math.isnan(r)]
    if rs:
        print(f"{name}: min ratio {min(rs):.2f}x, geometric mean {statistics.geometric_mean(rs):.2f}x")
print()
summary("prometheus/vigil", pr)
summary("victoriametrics/vigil", mr)
PY
