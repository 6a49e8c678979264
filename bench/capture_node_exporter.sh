#!/usr/bin/env bash
# Records a real capture of prometheus-node-exporter into an OpenMetrics
# backfill file that bench/compare_import.sh accepts: node_exporter runs on
# 127.0.0.1:PORT, is scraped every INTERVAL seconds for DURATION seconds
# (in real time), and the scrapes are regrouped so that each family is
# contiguous, each series is contiguous within its family and timestamps
# (seconds with millisecond precision, taken when each scrape started)
# ascend, ending with "# EOF".
#
# usage: bench/capture_node_exporter.sh OUT.om
# env:   DURATION=600  INTERVAL=2  PORT=19100
#        NODE_EXPORTER=prometheus-node-exporter
set -euo pipefail
OUT=${1:?usage: capture_node_exporter.sh OUT.om}
DURATION=${DURATION:-600}
INTERVAL=${INTERVAL:-2}
PORT=${PORT:-19100}
NODE_EXPORTER=${NODE_EXPORTER:-prometheus-node-exporter}
RAW=$(mktemp -d)

"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$PORT" >"$RAW/node_exporter.log" 2>&1 &
NE_PID=$!
trap 'kill $NE_PID 2>/dev/null || true; rm -rf "$RAW"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && break; sleep 0.1; done

# One file per scrape, named by the scrape's start time in milliseconds.
start=$(date +%s%3N)
n=$((DURATION / INTERVAL))
for i in $(seq 0 $((n - 1))); do
  target=$((start + i * INTERVAL * 1000))
  now=$(date +%s%3N)
  if [ "$now" -lt "$target" ]; then
    sleep "$(printf '%d.%03d' $(((target - now) / 1000)) $(((target - now) % 1000)))"
  fi
  ts=$(date +%s%3N)
  curl -sf "http://127.0.0.1:$PORT/metrics" -o "$RAW/$ts.prom" || echo "scrape at $ts failed" >&2
done

python3 - "$RAW" "$OUT" <<'EOF'
import os, sys
raw, out = sys.argv[1], sys.argv[2]
families = {}  # family -> (metadata lines, {series -> [(ts_ms, value)]})
order = []
for name in sorted((f for f in os.listdir(raw) if f.endswith(".prom")),
                   key=lambda f: int(f[:-5])):
    ts = int(name[:-5])
    fam = None
    for line in open(os.path.join(raw, name)):
        line = line.rstrip("\n")
        if not line:
            continue
        if line.startswith("# "):
            parts = line.split(" ", 3)
            if parts[1] == "TYPE" and parts[3] == "untyped":
                line = f"# TYPE {parts[2]} unknown"  # the OpenMetrics name
            if parts[1] in ("HELP", "TYPE"):
                fam = parts[2]
                if fam not in families:
                    families[fam] = ([], {})
                    order.append(fam)
                meta = families[fam][0]
                if line not in meta:
                    meta.append(line)
            continue
        series, value = line.rsplit(" ", 1)
        if fam is None:
            fam = series.split("{", 1)[0]
            families.setdefault(fam, ([], {}))
            if fam not in order:
                order.append(fam)
        families[fam][1].setdefault(series, []).append((ts, value))
with open(out, "w") as w:
    for fam in order:
        meta, series = families[fam]
        for m in meta:
            w.write(m + "\n")
        for s, points in series.items():
            for ts, v in points:
                w.write(f"{s} {v} {ts // 1000}.{ts % 1000:03d}\n")
    w.write("# EOF\n")
EOF
echo "$OUT: $(grep -vc '^#' "$OUT") samples, $(grep -v '^#' "$OUT" | awk '{print $1}' | sort -u | wc -l) series"
