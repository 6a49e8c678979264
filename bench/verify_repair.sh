#!/usr/bin/env bash
# Time of `vigil tsdb verify` and `vigil tsdb repair` on an imported
# directory: SERIES series x SAMPLES samples (15 s apart, noisy gauges), then
# one byte flipped in the largest table file.
#   bash bench/verify_repair.sh [SERIES] [SAMPLES]
set -euo pipefail
SERIES=${1:-2000}
SAMPLES=${2:-2880}
VIGIL=${VIGIL:-build/vigil}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$SERIES" "$SAMPLES" > "$work/in.om" <<'PY'
import math, sys
n, m = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout
out.write("# TYPE g gauge\n")
for s in range(n):
    for i in range(m):
        out.write('g{s="%d"} %.3f %d\n' % (s, math.sin(i * 0.1 + s) * 1000, 1767225600 + i * 15))
out.write("# EOF\n")
PY
"$VIGIL" tsdb import openmetrics "$work/in.om" "$work/d" >/dev/null
echo "directory: $(du -sh "$work/d" | cut -f1), $((SERIES * SAMPLES)) samples"
t0=$(date +%s.%N); "$VIGIL" tsdb verify "$work/d" >/dev/null; t1=$(date +%s.%N)
echo "verify (clean): $(echo "$t1 - $t0" | bc) s"
big=$(ls -S "$work"/d/*.sst | head -1)
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0x5a; open(p,'wb').write(b)" "$big"
t0=$(date +%s.%N); "$VIGIL" tsdb verify "$work/d" >/dev/null || true; t1=$(date +%s.%N)
echo "verify (one damaged table): $(echo "$t1 - $t0" | bc) s"
t0=$(date +%s.%N); "$VIGIL" tsdb repair "$work/d" > "$work/repair.out" || true; t1=$(date +%s.%N)
echo "repair: $(echo "$t1 - $t0" | bc) s, $(grep -c 'chunks of series' "$work/repair.out") series windows reported lost"
