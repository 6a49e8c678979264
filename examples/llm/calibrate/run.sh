#!/usr/bin/env bash
# `make calibrate-demo`: the source article's threshold calibration end to
# end on the simulator (docs/calibration.md). vigil-sim backfills a 70 / 90 /
# 110 % load-step scenario (steps.yml), `vigil tsdb import` loads it,
# `vigil calibrate` reads the three steps and prints the table, and with
# --write the proposed rule file and the threshold ledger land in
# $CALIB_DIR/proposed/ (checked with `vigil check rules`).
set -euo pipefail
BUILD=${BUILD:-build}
DIR=${CALIB_DIR:-calibrate-data}
HERE=$(cd "$(dirname "$0")" && pwd)
START=${CALIB_START:-1796045100}   # 2026-11-30T13:25:00Z: the daily peak
rm -rf "$DIR/data" "$DIR/history.om"
mkdir -p "$DIR"
echo "== vigil-sim: 5 min warm-up, then 20 min at 70 %, 90 %, 110 % of design load"
"$BUILD/vigil-sim" --hosts=2 --rps=20 --start="$START" \
  --scenario="$HERE/steps.yml" --backfill=65m --backfill-file="$DIR/history.om"
echo "== import"
"$BUILD/vigil" tsdb import openmetrics "$DIR/history.om" "$DIR/data"
rm -f "$DIR/history.om"
w() { echo "--window=$1=$((START + $2))..$((START + $3))"; }
echo "== calibrate (each step read from 5 min after it starts)"
"$BUILD/vigil" calibrate --storage.tsdb.path="$DIR/data" \
  --rules="$HERE/../rules/alerts.yml" \
  "$(w load70 600 1500)" "$(w load90 1800 2700)" "$(w load110 3000 3900)" \
  --write="$DIR/proposed" --author="${USER:-calibrate-demo}"
"$BUILD/vigil" check rules "$DIR/proposed/alerts.yml"
echo "== ledger ($DIR/proposed/thresholds-ledger.yml), last entry:"
awk '/^- when:/{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' \
  "$DIR/proposed/thresholds-ledger.yml"
