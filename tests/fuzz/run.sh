#!/usr/bin/env bash
# Runs Vigil's libFuzzer targets (tests/fuzz/*_fuzz.cc, built as
# fuzz_<surface> in a -DVIGIL_FUZZ=ON build; docs/reliability.md).
#
#   run.sh fuzz BUILD_DIR SECONDS [JOBS]
#       Fuzzes every target for SECONDS each, JOBS (default 2) at a time,
#       starting from its seed corpus (corpus/<surface>/), its regressions
#       (regressions/<surface>/) and what earlier runs in BUILD_DIR found
#       (BUILD_DIR/fuzz/corpus/<surface>/, where new inputs go). A crash,
#       leak, timeout (-timeout=10 s) or out-of-memory (-rss_limit_mb=2048)
#       is written to BUILD_DIR/fuzz/findings/<surface>/ and fails the run.
#       FUZZ_TARGETS="a b" limits the run to those surfaces.
#   run.sh replay BINARY SURFACE
#       Runs BINARY once over every file of regressions/SURFACE/ and
#       corpus/SURFACE/ (what CTest's "fuzz: SURFACE regressions" does).
#   run.sh replay-all BUILD_DIR
#       The same for every target.
#
# Fuzzing writes its logs to BUILD_DIR/fuzz/logs/<surface>.log and prints
# per target the executions, the coverage reached and the CPU seconds.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)

surfaces() {
  if [ -n "${FUZZ_TARGETS:-}" ]; then
    printf '%s\n' $FUZZ_TARGETS
    return
  fi
  for f in "$here"/*_fuzz.cc; do
    basename "$f" _fuzz.cc
  done
}

# The input files of a surface's regression replay, NUL-separated.
replay_files() {
  local s=$1 d
  for d in "$here/regressions/$s" "$here/corpus/$s"; do
    [ -d "$d" ] && find "$d" -type f ! -name '.*' ! -name '*.md' -print0
  done
}

replay() {
  local bin=$1 s=$2 n
  if [ ! -x "$bin" ]; then
    echo "fuzz replay: $bin is not built (configure with -DVIGIL_FUZZ=ON)" >&2
    return 2
  fi
  n=$(replay_files "$s" | tr -cd '\0' | wc -c)
  if [ "$n" -eq 0 ]; then
    echo "fuzz replay $s: no inputs in tests/fuzz/regressions/$s or corpus/$s" >&2
    return 1
  fi
  # libFuzzer given files (not directories) runs each once and exits 0 only
  # if none crashed. xargs keeps the command line short.
  if replay_files "$s" | xargs -0 "$bin" -rss_limit_mb=2048 -timeout=30 \
      >"${TMPDIR:-/tmp}/fuzz-replay-$s.$$.log" 2>&1; then
    echo "fuzz replay $s: $n inputs OK"
    rm -f "${TMPDIR:-/tmp}/fuzz-replay-$s.$$.log"
    return 0
  fi
  tail -n 60 "${TMPDIR:-/tmp}/fuzz-replay-$s.$$.log" >&2
  echo "fuzz replay $s: FAILED (log: ${TMPDIR:-/tmp}/fuzz-replay-$s.$$.log)" >&2
  return 1
}

fuzz_one() {
  local build=$1 secs=$2 s=$3
  local bin="$build/fuzz_$s" out="$build/fuzz"
  local corpus="$out/corpus/$s" findings="$out/findings/$s/" log="$out/logs/$s.log"
  mkdir -p "$corpus" "$findings" "$out/logs"
  local dict=()
  [ -f "$here/dict/$s.dict" ] && dict=(-dict="$here/dict/$s.dict")
  local seeds=()
  for d in "$here/corpus/$s" "$here/regressions/$s"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  local t0 t1 rc
  t0=$(date +%s)
  # -max_total_time bounds the run; -timeout and -rss_limit_mb make a slow
  # or greedy input a finding instead of a hang.
  local TIMEFORMAT='%3U %3S'
  { time "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$findings" \
    "${dict[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1; } 2>"$log.time"
  rc=$?
  t1=$(date +%s)
  local cpu
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$log.time" 2>/dev/null)
  local execs cov
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
  if [ $rc -ne 0 ]; then
    echo "fuzz $s: FOUND a problem after $((t1 - t0)) s (exit $rc); inputs in $findings"
    grep -E 'ERROR: |FUZZ_CHECK|SUMMARY' "$log" | head -n 5 | sed 's/^/  /'
    echo "  log: $log"
    echo "  reproduce: $bin $findings<file>; then fix, and add the input to tests/fuzz/regressions/$s/"
    return 1
  fi
  echo "fuzz $s: ok, ${cpu:-?} CPU s in $((t1 - t0)) s, ${execs:-?} executions, coverage ${cov:-?}"
}

cmd=${1:-}
case "$cmd" in
  fuzz)
    build=${2:?usage: run.sh fuzz BUILD_DIR SECONDS [JOBS]}
    secs=${3:?usage: run.sh fuzz BUILD_DIR SECONDS [JOBS]}
    jobs=${4:-2}
    build=$(cd "$build" && pwd)
    missing=""
    for s in $(surfaces); do
      [ -x "$build/fuzz_$s" ] || missing="$missing fuzz_$s"
    done
    if [ -n "$missing" ]; then
      echo "run.sh fuzz: not built in $build:$missing" >&2
      exit 2
    fi
    export -f fuzz_one
    export here
    surfaces | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$0" "$1" "$2"' "$build" "$secs" {}
    rc=$?
    [ $rc -eq 0 ] || { echo "fuzz: some target found a problem (see above)" >&2; exit 1; }
    ;;
  replay)
    replay "${2:?usage: run.sh replay BINARY SURFACE}" "${3:?usage: run.sh replay BINARY SURFACE}"
    ;;
  replay-all)
    build=${2:?usage: run.sh replay-all BUILD_DIR}
    rc=0
    for s in $(surfaces); do
      replay "$build/fuzz_$s" "$s" || rc=1
    done
    exit $rc
    ;;
  *)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
