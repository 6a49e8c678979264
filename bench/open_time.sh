#!/usr/bin/env bash
# Open time: how long `vigil` takes from start to /-/ready 200, and to its
# first committed scrape, on a data directory with SERIES active series and
# DURATION of head data (bench/open_time_gen.cc fills it the way a running
# server leaves it: one commit per target and scrape, WAL on, head
# checkpointed every 256 MiB of WAL, then ended as by kill -9; with
# SETTLE=1, the default, once RocksDB has caught up with its compactions,
# as a server writing at a scrape's pace does: the generator writes ~40x
# faster, and SETTLE=0 leaves the open its compaction backlog).
#
# Three restarts on a copy of that directory:
#   kill9-gen   as the generator left it (kill -9: WAL records since the
#               last checkpoint replayed)
#   clean       after a SIGTERM of the server of the first run (checkpoint
#               at close, nothing replayed)
#   kill9-live  after a kill -9 of the server of the second run, which
#               scraped itself for KILL_AFTER seconds
# For each: seconds to /-/ready, to the first scrape committed after start
# (vigil scrapes its own /metrics every second), the open breakdown from
# vigil's log, and the RSS once ready.
#
# usage: bench/open_time.sh [WORK_DIR]
# env:   SERIES=1000000 TARGETS=1000 INTERVAL=30s DURATION=2h BUILD=build
#        KILL_AFTER=10 SETTLE=1 (the generated directory in WORK_DIR/gen-*
#        is reused)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SERIES=${SERIES:-1000000}
TARGETS=${TARGETS:-1000}
INTERVAL=${INTERVAL:-30s}
DURATION=${DURATION:-2h}
KILL_AFTER=${KILL_AFTER:-10}
SETTLE=${SETTLE:-1}
BUILD=$(cd "$ROOT" && cd "${BUILD:-build}" && pwd)
WORK=${1:-/tmp/open_time}
mkdir -p "$WORK"
for b in vigil open_time_gen; do
  [ -x "$BUILD/$b" ] || { echo "open_time: $BUILD/$b missing (build it first)" >&2; exit 2; }
done

GEN=$WORK/gen-$SERIES-$INTERVAL-$DURATION
settle=()
if [ "$SETTLE" = 1 ]; then GEN=$GEN-settled; settle=(--settle); fi
if [ ! -f "$GEN.done" ]; then
  rm -rf "$GEN"
  echo "generating $SERIES series x $DURATION at $INTERVAL into $GEN" >&2
  s=$(date +%s.%N)
  "$BUILD/open_time_gen" --dir="$GEN" --series="$SERIES" --targets="$TARGETS" \
    --interval="$INTERVAL" --duration="$DURATION" "${settle[@]}" >"$GEN.done.tmp"
  e=$(date +%s.%N)
  echo "generation: $(python3 -c "print(f'{$e-$s:.0f}')") s" >>"$GEN.done.tmp"
  mv "$GEN.done.tmp" "$GEN.done"
fi
echo "data: $(cat "$GEN.done" | tr '\n' ' ')"
echo "data dir: $(du -sh "$GEN" | cut -f1)"
RUN=$WORK/run
rm -rf "$RUN"
cp -a "$GEN" "$RUN"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: self
    static_configs:
      - targets: [127.0.0.1:$PORT]
EOF

VIGIL=
trap '[ -n "$VIGIL" ] && kill -9 $VIGIL 2>/dev/null || true' EXIT
now() { date +%s.%N; }
# start CASE: starts vigil on $RUN and reports its open.
start() {
  local name=$1 log=$WORK/vigil-$1.log
  local t0; t0=$(now)
  "$BUILD/vigil" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$RUN" \
    --web.listen-address="127.0.0.1:$PORT" >"$log" 2>&1 &
  VIGIL=$!
  until curl -sf -o /dev/null "$URL/-/ready"; do
    kill -0 $VIGIL 2>/dev/null || { echo "vigil died: $log" >&2; tail "$log" >&2; exit 1; }
    sleep 0.02
  done
  local tr; tr=$(now)
  local rss; rss=$(awk '/^VmRSS/ {print $2}' /proc/$VIGIL/status)
  # CPU seconds (user + system) the process had used once ready: on a
  # shared machine wall time depends on the neighbours, this does less.
  local cpu; cpu=$(awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' /proc/$VIGIL/stat)
  # The first scrape of its own /metrics committed after the start.
  local q="count(timestamp(up{job=\"self\"}) > ${t0%.*})"
  until curl -s --get "$URL/api/v1/query" --data-urlencode "query=$q" | grep -q '"value"'; do
    sleep 0.02
  done
  local ts; ts=$(now)
  python3 - "$name" "$t0" "$tr" "$ts" "$rss" "$log" "$cpu" <<'EOF'
import sys, re, datetime
name, t0, tr, ts, rss, log, cpu = sys.argv[1], *map(float, sys.argv[2:5]), int(sys.argv[5]), sys.argv[6], float(sys.argv[7])
print(f"{name}: ready {tr-t0:.2f} s ({cpu:.2f} CPU s), first scrape committed {ts-t0:.2f} s, RSS at ready {rss/1024:.0f} MiB")
# Log lines: ts=2026-...Z ... msg="..."; times relative to the process start.
marks = []
for line in open(log):
    m = re.search(r'ts=(\S+)', line); g = re.search(r'msg="([^"]*)"', line)
    if not (m and g): continue
    t = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp()
    extra = " ".join(re.findall(r'(?:records|step|ms)=\S+', line))
    marks.append(f"{t-t0:+.2f}s {g.group(1)}" + (f" ({extra})" if extra else ""))
print("  log: " + "; ".join(marks[:14]))
EOF
}
stop_term() {
  local t0; t0=$(now)
  kill -TERM $VIGIL; wait $VIGIL || true; VIGIL=
  echo "  SIGTERM to exit: $(python3 -c "print(f'{$(now)-$t0:.2f}')") s"
}

start kill9-gen
sleep 2
stop_term
start clean
sleep "$KILL_AFTER"
kill -9 $VIGIL; wait $VIGIL 2>/dev/null || true; VIGIL=
start kill9-live
stop_term
echo "data dir after the runs: $(du -sh "$RUN" | cut -f1)"
