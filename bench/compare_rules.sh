#!/usr/bin/env bash
# Side-by-side cost of one rule-evaluation cycle of the LLM pack
# (examples/llm/rules): every rule expression evaluated as an instant query
# at the same time, on the same simulated cluster, in Vigil and Prometheus.
#   Vigil:      in-process Engine::InstantQuery (build/promql_bench, median)
#   Prometheus: the server's own execTotalTime (query?stats=all, median)
# Alert expressions that read llm:* recorded series get the recording
# rule's expression inlined, so both engines compute them from raw data.
#
# usage: bench/compare_rules.sh [HOSTS]   (default 25: 200 GPUs, 25 vLLM engines)
# env:   VIGIL=build/vigil BENCH=build/promql_bench WORK=/tmp/vigil-rbench
#        PROM_PORT=19091 RUNS=10
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
VIGIL=${VIGIL:-build/vigil}
BENCH=${BENCH:-build/promql_bench}
WORK=${WORK:-/tmp/vigil-rbench}
PROM_PORT=${PROM_PORT:-19091}
RUNS=${RUNS:-10}
HOSTS=${1:-25}
START=1767225600   # 2026-01-01T00:00:00Z
HOURS=2
T=$((START + HOURS * 3600 - 15))
mkdir -p "$WORK"

python3 examples/gen_cluster.py "$WORK/data.om" --hosts "$HOSTS" --hours "$HOURS" --start "$START"
rm -rf "$WORK/vigil" "$WORK/prom"
"$VIGIL" tsdb import openmetrics "$WORK/data.om" "$WORK/vigil" >/dev/null
promtool tsdb create-blocks-from openmetrics "$WORK/data.om" "$WORK/prom" >/dev/null

# One line per rule: name<TAB>expression (newlines folded), llm:* inlined.
python3 - examples/llm/rules/recording.yml examples/llm/rules/alerts.yml > "$WORK/rules.tsv" <<'PY'
import re, sys, yaml
recorded, rows = {}, []
for path in sys.argv[1:]:
    for g in yaml.safe_load(open(path))["groups"]:
        for r in g["rules"]:
            expr = " ".join(r["expr"].split())
            for name in sorted(recorded, key=len, reverse=True):
                expr = re.sub(re.escape(name) + r"(?![\w:])", "(" + recorded[name] + ")", expr)
            if "record" in r:
                recorded[r["record"]] = expr
            rows.append((r.get("record") or r.get("alert"), expr))
for name, expr in rows:
    print(f"{name}\t{expr}")
PY
cut -f2 "$WORK/rules.tsv" > "$WORK/queries.txt"

VIGIL_BENCH_DIR="$WORK/vigil" VIGIL_BENCH_QUERIES="$WORK/queries.txt" \
VIGIL_BENCH_END=$((T * 1000)) VIGIL_BENCH_STEP=0 \
  "$BENCH" --benchmark_repetitions=$RUNS --benchmark_report_aggregates_only=true \
  --benchmark_format=json > "$WORK/vigil.json" 2>/dev/null

# Prometheus starts after Vigil's runs and gets 3 s to load its blocks.
start_prometheus "$WORK/prom" "$PROM_PORT" "$WORK"

python3 - "$WORK/vigil.json" "$WORK/rules.tsv" "$PROM_PORT" "$T" "$RUNS" <<'PY'
import json, statistics, sys, urllib.parse, urllib.request
vj, tsv, port, t, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
vigil = {}  # ms: the median of the repetitions (the one run when RUNS=1)
for b in json.load(open(vj))["benchmarks"]:
    if b.get("aggregate_name") == "median" or b.get("run_type") == "iteration":
        vigil[b["run_name"]] = b["real_time"]
print(f"{'rule':32} {'series':>6} {'vigil ms':>9} {'prom ms':>9} {'prom/vigil':>10}")
tv = tp = 0.0
for line in open(tsv).read().splitlines():
    name, q = line.split("\t", 1)
    times, n = [], 0
    for _ in range(runs):
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode(
            {"query": q, "time": t, "stats": "all"})
        r = json.load(urllib.request.urlopen(url))
        times.append(r["data"]["stats"]["timings"]["execTotalTime"] * 1000)
        n = len(r["data"]["result"])
    p, v = statistics.median(times), vigil[q]
    tv, tp = tv + v, tp + p
    print(f"{name:32} {n:6} {v:9.3f} {p:9.3f} {p / v:9.2f}x")
print(f"\nwhole cycle: vigil {tv:.2f} ms, prometheus {tp:.2f} ms, prom/vigil {tp / tv:.2f}x")
PY
