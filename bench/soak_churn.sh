#!/usr/bin/env bash
# The churn soak: vigil-sim with churn (engine pods restarting with new
# `pod`/`instance` labels, and a per-request label exploding the engine
# pages' cardinality for a while) scraped by vigil with the LLM rule pack
# (examples/llm/rules, as `make demo` loads it), for SOAK_SECONDS with an
# accelerated clock: the run sees the pod turnovers of 24 h.
#
# Scaling (24 h -> SOAK_SECONDS): in a day each pod restarts every 10 min
# (144 restarts per host) and a cardinality explosion opens every 4 h for
# 10 min (6 windows); here pods restart every SOAK_SECONDS/144 s and an
# explosion opens every SOAK_SECONDS/6 s for 1/24 of that. Scrapes and rule
# evaluations run every second (15 s in the real day). Head GC's idle time
# scales the same way: --storage.tsdb.head-idle's default of 3 h becomes
# SOAK_SECONDS/8 s (SOAK_HEAD_IDLE overrides it, in seconds; 0 turns head
# GC off); the server runs it once a minute, with retention.
#
# Every SOAK_SAMPLE s it records vigil's RSS (/proc), the head series, the
# engine's query-duration and the rule groups' last-duration metrics from
# vigil's own /metrics, its CPU time, the machine's busy time and RocksDB's
# compactions, and the wall time of four dashboard queries; at the
# end it prints the RSS slope over the second half (MiB/hour, least
# squares) and the latencies at the start and the end. SOAK_ASAN=1 runs the
# binaries of build-asan (ASan + LSan) and fails if LeakSanitizer reports
# a leak when vigil stops on SIGTERM.
#
# usage: bench/soak_churn.sh [OUT_DIR]
# env:   SOAK_SECONDS=1800 SOAK_SAMPLE=10 SOAK_HOSTS=8 SOAK_EXPLODE=2000
#        SOAK_VALGRIND=0 (1: vigil under valgrind's leak checker instead)
#        SOAK_HEAPTRACK=0 (1: heaptrack attached to vigil, which is then
#        killed with SIGKILL at the end: heaptrack_leaks.txt in OUT lists
#        the heap live then, by allocation site, heaptrack_leaks.folded
#        the same as folded stacks)
#        SOAK_HEAD_IDLE=SOAK_SECONDS/8 SOAK_ASAN=0 BUILD=build (build-asan with SOAK_ASAN=1; the
#        simulator always from SIM_BUILD=build)
set -euo pipefail
# The whole script is one brace group, which bash reads to its end before
# running any of it: editing this file while a run goes on cannot change
# what that run does next.
{
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SOAK_SECONDS=${SOAK_SECONDS:-1800}
SOAK_SAMPLE=${SOAK_SAMPLE:-10}
SOAK_HOSTS=${SOAK_HOSTS:-8}
SOAK_EXPLODE=${SOAK_EXPLODE:-2000}
SOAK_ASAN=${SOAK_ASAN:-0}
if [ "$SOAK_ASAN" = 1 ]; then BUILD=${BUILD:-build-asan}; else BUILD=${BUILD:-build}; fi
BUILD=$(cd "$ROOT" && cd "$BUILD" && pwd)
# The simulator is the load, not what is checked: the plain build's.
SIM_BUILD=$(cd "$ROOT" && cd "${SIM_BUILD:-build}" && pwd)
OUT=${1:-$(mktemp -d /tmp/soak.XXXXXX)}
mkdir -p "$OUT"
for b in "$BUILD/vigil" "$SIM_BUILD/vigil-sim"; do
  [ -x "$b" ] || { echo "soak: $b missing (build it first)" >&2; exit 2; }
done

CHURN=$(( SOAK_SECONDS / 144 )); [ "$CHURN" -ge 1 ] || CHURN=1
HEAD_IDLE=${SOAK_HEAD_IDLE:-$(( SOAK_SECONDS / 8 ))}
EVERY=$(( SOAK_SECONDS / 6 )); [ "$EVERY" -ge 2 ] || EVERY=2
FOR=$(( EVERY / 24 )); [ "$FOR" -ge 1 ] || FOR=1
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$OUT/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $ROOT/examples/llm/rules/recording.yml
  - $ROOT/examples/llm/rules/alerts.yml
scrape_configs:
  - job_name: sim
    file_sd_configs:
      - files: [$OUT/targets.json]
        refresh_interval: 1s
  - job_name: vigil
    static_configs:
      - targets: [127.0.0.1:$PORT]
EOF

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=0}
"$SIM_BUILD/vigil-sim" --hosts="$SOAK_HOSTS" --engines=vllm-v1,sglang,vllm-v0 \
  --sd-file="$OUT/targets.json" --churn="${CHURN}s" --explode="$SOAK_EXPLODE" \
  --explode-every="${EVERY}s" --explode-for="${FOR}s" >"$OUT/sim.log" 2>&1 &
SIM=$!
VIGIL=
cleanup() {
  [ -n "$VIGIL" ] && kill "$VIGIL" 2>/dev/null || true
  kill "$SIM" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$OUT/targets.json" ] && break; sleep 0.1; done

WRAP=()
if [ "${SOAK_VALGRIND:-0}" = 1 ]; then
  # Without an ASan build at hand: valgrind's leak checker on the plain one.
  WRAP=(valgrind --leak-check=full --errors-for-leak-kinds=definite
        --log-file="$OUT/valgrind.log")
fi
"${WRAP[@]}" "$BUILD/vigil" --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/data" \
  --web.listen-address="127.0.0.1:$PORT" --storage.tsdb.head-idle="${HEAD_IDLE}s" \
  >"$OUT/vigil.log" 2>&1 &
VIGIL=$!
URL=http://127.0.0.1:$PORT
for _ in $(seq 1200); do curl -sf "$URL/-/ready" >/dev/null && break; sleep 0.1; done
HT=
if [ "${SOAK_HEAPTRACK:-0}" = 1 ]; then
  # Attached (so that VIGIL stays vigil's pid, whose /proc the samples
  # read); vigil is killed with SIGKILL at the end, so that what heaptrack
  # reports as leaked is what was live then.
  command -v heaptrack >/dev/null || { echo "soak: SOAK_HEAPTRACK needs heaptrack" >&2; exit 2; }
  heaptrack -o "$OUT/heaptrack" -p "$VIGIL" >"$OUT/heaptrack.log" 2>&1 &
  HT=$!
  for _ in $(seq 300); do grep -q "injection finished" "$OUT/heaptrack.log" 2>/dev/null && break; sleep 0.1; done
fi
echo "soak: ${SOAK_SECONDS}s, $SOAK_HOSTS hosts, pods restart every ${CHURN}s," \
  "$SOAK_EXPLODE exploding series/host for ${FOR}s every ${EVERY}s," \
  "head GC after ${HEAD_IDLE}s idle; $OUT" >&2

QUERIES=(
  'sum by (variant) (rate(vllm:generation_tokens_total[1m]))'
  'histogram_quantile(0.99, sum by (le, variant) (rate(vllm:time_to_first_token_seconds_bucket[1m])))'
  'count by (job) (up)'
  'topk(5, count by (__name__) ({job="vllm"}))'
)
qtime() {  # wall seconds of one instant query (NaN on a timeout)
  local t
  t=$(curl -s --max-time 60 -o /dev/null -w '%{time_total}' --get "$URL/api/v1/query" \
    --data-urlencode "query=$1") || t=NaN
  echo "$t"
}
echo "t rss_kib head_series query_sum_s query_count rule_group_max_s q1_s q2_s q3_s q4_s cold_series head_mem_bytes rocksdb_mem_bytes vigil_cpu_s machine_busy_s compactions anon_kib malloc_free_bytes" >"$OUT/samples.txt"
TCK=$(getconf CLK_TCK)
t0=$(date +%s)
while :; do
  now=$(date +%s); el=$(( now - t0 ))
  [ "$el" -ge "$SOAK_SECONDS" ] && break
  kill -0 "$VIGIL" 2>/dev/null || { echo "soak: vigil died (see $OUT/vigil.log)" >&2; exit 1; }
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$VIGIL/status")
  m=$(curl -s --max-time 60 "$URL/metrics" || true)
  hs=$(awk '$1=="prometheus_tsdb_head_series" {print $2}' <<<"$m")
  qsum=$(awk '/^prometheus_engine_query_duration_seconds_sum\{slice="inner_eval"\}/ {print $2}' <<<"$m")
  qcnt=$(awk '/^prometheus_engine_query_duration_seconds_count\{slice="inner_eval"\}/ {print $2}' <<<"$m")
  rg=$(awk '/^prometheus_rule_group_last_duration_seconds\{/ {if ($2>x) x=$2} END {print x+0}' <<<"$m")
  cold=$(awk '$1=="vigil_tsdb_cold_series" {print $2}' <<<"$m")
  hmem=$(awk '$1=="vigil_head_memory_bytes" {print $2}' <<<"$m")
  rmem=$(awk '$1=="vigil_rocksdb_memory_bytes" {print $2}' <<<"$m")
  comp=$(awk '$1=="vigil_rocksdb_compactions_total" {print $2}' <<<"$m")
  # Where RSS goes besides the head and RocksDB: anonymous memory (the rest
  # is the binary's and libraries' pages) and malloc's free heap in it.
  anon=$(awk '/^RssAnon/ {print $2}' "/proc/$VIGIL/status")
  mfree=$(awk '$1=="vigil_malloc_free_bytes" {print $2}' <<<"$m")
  # vigil's CPU (utime + stime) and every core's non-idle time, in seconds:
  # queries and rules share two cores with scraping, RocksDB's compactions
  # and the simulator, so a latency that rises with the machine's load is
  # told apart from one that rises with the data.
  vcpu=$(awk -v t="$TCK" '{print ($14 + $15) / t}' "/proc/$VIGIL/stat")
  busy=$(awk -v t="$TCK" '$1=="cpu" {print ($2+$3+$4+$7+$8+$9) / t}' /proc/stat)
  qs=""
  for q in "${QUERIES[@]}"; do qs="$qs $(qtime "$q")"; done
  echo "$el $rss ${hs:-0} ${qsum:-0} ${qcnt:-0} $rg$qs ${cold:-0} ${hmem:-0} ${rmem:-0} $vcpu $busy ${comp:-0} ${anon:-0} ${mfree:-0}" >>"$OUT/samples.txt"
  # Each rule group's last duration, and once a minute every rule's
  # evaluation time (/api/v1/rules): which rules' cost rises, if any.
  awk -v t="$el" '/^prometheus_rule_group_last_duration_seconds\{/ {
    g = $1; sub(/.*rule_group="/, "", g); sub(/".*/, "", g); print t, g, $2 }' <<<"$m" >>"$OUT/groups.txt"
  if [ "$el" -ge "${next_rules:-0}" ]; then
    mkdir -p "$OUT/rules"
    curl -s --max-time 60 -o "$OUT/rules/$el.json" "$URL/api/v1/rules" || true
    next_rules=$(( el + 60 ))
  fi
  sleep "$SOAK_SAMPLE"
done

rc=0
if [ -n "$HT" ]; then
  kill -KILL "$VIGIL"
  wait "$VIGIL" 2>/dev/null || true
  VIGIL=
  wait "$HT" || true
  f=$(compgen -G "$OUT/heaptrack.*[zs][st]" | head -1 || true)
  echo "soak: heap live at the end (SIGKILL): heaptrack_print -f $f --print-leaks 1" >&2
  heaptrack_print -f "$f" --print-leaks 1 --print-peaks 0 --print-allocators 0 \
    --print-temporary 0 --flamegraph-cost-type leaked \
    -F "$OUT/heaptrack_leaks.folded" >"$OUT/heaptrack_leaks.txt" 2>&1 || true
  grep -E "^(PEAK|MEMORY LEAKS|total memory leaked|[0-9.]+[KMG]?B? leaked)" "$OUT/heaptrack_leaks.txt" | head -5 >&2 || true
else
  kill -TERM "$VIGIL"
  wait "$VIGIL" || rc=$?
  VIGIL=
  echo "vigil exit status after SIGTERM: $rc" >&2
fi

python3 - "$OUT/samples.txt" "$SOAK_SECONDS" "$EVERY" "$HEAD_IDLE" <<'EOF'
import os, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
rows = [[float(x) for x in r] for r in rows if len(r) >= 10]
if len(rows) < 4:
    sys.exit("soak: too few samples")
half = [r for r in rows if r[0] >= rows[-1][0] / 2]
xs = [r[0] / 3600 for r in half]; ys = [r[1] / 1024 for r in half]
mx, my = st.mean(xs), st.mean(ys)
sxx = sum((x - mx) ** 2 for x in xs)
slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
# The slope's standard error: RSS goes up and down with queries, merges and
# memtable flushes, so a slope means something only against its noise.
resid = [y - (my + slope * (x - mx)) for x, y in zip(xs, ys)]
se = (sum(r * r for r in resid) / max(1, len(xs) - 2)) ** 0.5 / sxx ** 0.5
q = max(1, len(ys) // 4)
quarters = [st.mean(ys[i * q:(i + 1) * q]) for i in range(4) if ys[i * q:(i + 1) * q]]
n = max(2, len(rows) // 10)
first, last = rows[:n], rows[-n:]
# The tenth that starts at the half: once the head is in steady state (head
# GC has run for a while), latency should stay where it is from here on.
mid = half[:n]
def med(rs, i):
    v = [r[i] for r in rs if r[i] == r[i]]
    return st.median(v) if v else float("nan")
def mean_query(rs):  # engine inner_eval mean over the window, from the histogram
    dc = rs[-1][4] - rs[0][4]
    return (rs[-1][3] - rs[0][3]) / dc if dc > 0 else float("nan")
print(f"samples: {len(rows)} over {rows[-1][0]:.0f} s (24 h equivalent: {sys.argv[2]} s)")
print(f"RSS: start {rows[0][1]/1024:.0f} MiB, half {half[0][1]/1024:.0f} MiB, end {rows[-1][1]/1024:.0f} MiB, max {max(r[1] for r in rows)/1024:.0f} MiB")
print(f"RSS slope over the second half: {slope:.1f} MiB/hour (least squares, {len(half)} samples; "
      f"95% interval {slope - 2 * se:.1f} .. {slope + 2 * se:.1f})")
print("RSS over the second half: min %.0f, max %.0f MiB; mean of each quarter: %s MiB" % (
    min(ys), max(ys), " / ".join(f"{m:.0f}" for m in quarters)))
print(f"head series: half {half[0][2]:.0f}, end {rows[-1][2]:.0f}, max {max(r[2] for r in rows):.0f} (slope over the second half "
      f"{(half[-1][2]-half[0][2])/max(1e-9,(half[-1][0]-half[0][0])/3600):.0f}/hour)")
if len(rows[-1]) > 12:
    print(f"cold series (head GC, on disk): half {half[0][10]:.0f}, end {rows[-1][10]:.0f}")
    print(f"head memory (estimate): half {half[0][11]/2**20:.0f} MiB, end {rows[-1][11]/2**20:.0f} MiB, max {max(r[11] for r in rows)/2**20:.0f} MiB; "
          f"RocksDB memtables + table readers: half {half[0][12]/2**20:.0f} MiB, end {rows[-1][12]/2**20:.0f} MiB")
if len(rows[-1]) > 17:
    # RSS = file-backed pages + anonymous; anonymous = head + RocksDB +
    # malloc's free heap + the rest (scrape, rules, queries' leftovers...).
    def quart(i, scale=1):
        vs = [r[i] * scale for r in half]
        return " / ".join(f"{st.mean(vs[j * q:(j + 1) * q]):.0f}" for j in range(4) if vs[j * q:(j + 1) * q])
    for r in half:
        r.append(r[16] / 1024 - (r[11] + r[12] + r[17]) / 2**20)
    print(f"second half, quarter means (MiB): anonymous {quart(16, 1/1024)}; malloc free {quart(17, 1/2**20)}; "
          f"anonymous less head, RocksDB and free heap {quart(18)}")
print("latency in three tenths of the run: the first, the one from the half, the last")
print(f"engine query duration (inner_eval mean, rules and API): {mean_query(first)*1e3:.2f} / {mean_query(mid)*1e3:.2f} / {mean_query(last)*1e3:.2f} ms")
print(f"slowest rule group's last duration (median): {med(first,5)*1e3:.2f} / {med(mid,5)*1e3:.2f} / {med(last,5)*1e3:.2f} ms")
for i in range(4):
    print(f"query {i+1} wall time (median): {med(first,6+i)*1e3:.1f} / {med(mid,6+i)*1e3:.1f} / {med(last,6+i)*1e3:.1f} ms")
# The same by explosion period: each period holds one explosion and the
# same number of pod restarts, so periods compare like with like, where a
# tenth of the run may or may not hold an explosion. The head is in steady
# state from the first period that starts after head GC's idle time and a
# GC pass (once a minute); latency should not rise from period to period
# after that.
every, idle = float(sys.argv[3]), float(sys.argv[4])
NCPU = os.cpu_count() or 1
steady = (idle + 60) if idle > 0 else 0
print(f"by explosion period ({every:.0f} s; * = head in steady state, from {steady:.0f} s):")
print("  period       n  RSS MiB  head k  cold k  vigil CPU %  machine busy %  compactions  engine ms  rule group ms  q1 / q2 / q3 / q4 ms (medians)")
k = 0
while k * every < rows[-1][0]:
    ps = [r for r in rows if k * every <= r[0] < (k + 1) * every]
    k += 1
    if len(ps) < 2:
        continue
    lo = (k - 1) * every
    cold = f"{med(ps, 10) / 1e3:6.0f}" if len(ps[-1]) > 12 else "     -"
    # CPU as a share of one core (vigil) and of all cores (the machine).
    if len(ps[-1]) > 15:
        dt = ps[-1][0] - ps[0][0]
        cpu = (f"{(ps[-1][13] - ps[0][13]) / dt * 100:11.0f} "
               f"{(ps[-1][14] - ps[0][14]) / dt / NCPU * 100:15.0f} "
               f"{ps[-1][15] - ps[0][15]:12.0f}")
    else:
        cpu = f"{'-':>11} {'-':>15} {'-':>12}"
    print(f"  {lo:5.0f}-{lo + every:<5.0f}{'*' if lo >= steady else ' '} {len(ps):3d} {st.mean(r[1] for r in ps) / 1024:8.0f} "
          f"{med(ps, 2) / 1e3:7.0f} {cold} {cpu} {mean_query(ps) * 1e3:10.1f} {med(ps, 5) * 1e3:14.0f}  "
          + " / ".join(f"{med(ps, 6 + i) * 1e3:.1f}" for i in range(4)))
EOF

# Per rule group and per rule: medians of the groups' last durations by
# explosion period, and the rules whose evaluation time rose the most from
# the first steady period to the last, with the longest range each reads
# (a rule reading [1h] holds every series churned through that hour, so
# its cost grows until the run is older than its range and offset).
python3 - "$OUT" "$EVERY" "$HEAD_IDLE" <<'EOF'
import json, os, re, sys, statistics as st
out, every, idle = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
steady = (idle + 60) if idle > 0 else 0
groups = {}
if os.path.exists(f"{out}/groups.txt"):
    for line in open(f"{out}/groups.txt"):
        t, g, v = line.split()
        groups.setdefault(g, []).append((float(t), float(v)))
if not groups:
    sys.exit(0)
last_t = max(t for vs in groups.values() for t, _ in vs)
periods = [k * every for k in range(int(last_t // every) + 1) if k * every >= steady]
if not periods:
    sys.exit(0)
def pmed(vs, lo):
    x = [v for t, v in vs if lo <= t < lo + every]
    return st.median(x) * 1e3 if x else float("nan")
print("rule groups, median last duration (ms) by steady explosion period:")
for g in sorted(groups, key=lambda g: -pmed(groups[g], periods[-1]))[:8]:
    print(f"  {g[-56:]:>56}  " + " / ".join(f"{pmed(groups[g], lo):.1f}" for lo in periods))
rules = {}
rdir = f"{out}/rules"
for f in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
    try:
        d = json.load(open(f"{rdir}/{f}"))["data"]["groups"]
    except Exception:
        continue
    for g in d:
        for r in g["rules"]:
            key = (g["name"], r["name"], r["query"])
            rules.setdefault(key, []).append((float(f[:-5]), float(r.get("evaluationTime", 0.0))))
def reach(q):  # seconds back from the evaluation time the rule reads
    secs = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    r = max([int(n) * secs[u] for n, u in re.findall(r"\[(\d+)([smhd])", q)] or [0])
    o = max([int(n) * secs[u] for n, u in re.findall(r"offset (\d+)([smhd])", q)] or [0])
    return r + o
if len(periods) >= 2 and rules:
    a0, b0 = periods[0], periods[-1]
    rows = []
    for key, vs in rules.items():
        a, b = pmed(vs, a0), pmed(vs, b0)
        if a == a and b == b:
            rows.append((b - a, a, b, key))
    rows.sort(reverse=True)
    print("rules whose evaluation time rose most, first steady period -> last (ms; how far back each reads):")
    for d, a, b, (g, n, q) in rows[:10]:
        print(f"  {a:6.2f} -> {b:6.2f}  {reach(q):5d} s  {g}/{n}")
    near = [r for r in rows if reach(r[3][2]) <= 600]
    far = [r for r in rows if reach(r[3][2]) > 600]
    print(f"  rules reading at most 600 s back ({len(near)}): {sum(r[1] for r in near):.1f} -> {sum(r[2] for r in near):.1f} ms; "
          f"further ({len(far)}): {sum(r[1] for r in far):.1f} -> {sum(r[2] for r in far):.1f} ms")
EOF

if [ "$SOAK_ASAN" = 1 ]; then
  if grep -q "LeakSanitizer" "$OUT/vigil.log"; then
    echo "soak: LeakSanitizer reported leaks:" >&2
    grep -A20 "LeakSanitizer" "$OUT/vigil.log" | head -60 >&2
    exit 1
  fi
  grep -q "ERROR: AddressSanitizer\|runtime error:" "$OUT/vigil.log" && {
    echo "soak: ASan/UBSan reported errors (see $OUT/vigil.log)" >&2; exit 1; }
  echo "soak: no leak reported by LeakSanitizer" >&2
fi
if [ "${SOAK_VALGRIND:-0}" = 1 ]; then
  grep -E "definitely lost|indirectly lost|ERROR SUMMARY" "$OUT/valgrind.log" >&2
  grep -q "definitely lost: 0 bytes\|no leaks are possible" "$OUT/valgrind.log" || {
    echo "soak: valgrind reports definite leaks (see $OUT/valgrind.log)" >&2; exit 1; }
fi
[ "$rc" = 0 ] || exit 1
exit
}
