#!/usr/bin/env bash
# Self-test of .ci/lint.sh: builds a tiny repository with one deliberate
# violation of each rule (and the allowed cases next to them), and checks
# that the linter reports each violation, stays quiet on the allowed cases,
# and passes once the violations are gone. Runs in about a second.
# LINT_SELFTEST_VERBOSE=1 prints the linter's output on the test tree.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vigil-lint-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
git init -q .
cp "$here/../.clang-format" .

put() {  # put FILE LINE...: a file with the given lines
  mkdir -p "$(dirname "$1")"
  local f=$1; shift
  printf '%s\n' "$@" >"$f"
}

# Allowed: the layers in order, both layouts of the template port, the server
# rooms, white-box tests, the bench exception.
put core/labels.h '#pragma once' 'int Labels();'
put core/go/strconv.h '#pragma once' '#include "core/labels.h"'
put storage/querier.h '#pragma once' '#include "core/labels.h"'
put storage/db.h '#pragma once' '#include "storage/querier.h"'
put storage/internal/chunk.h '#pragma once' '#include "rocksdb/db.h"'
put storage/internal/db_impl.cc '#include "storage/internal/chunk.h"'
put promql/engine.h '#pragma once' '#include "storage/querier.h"'
put promql/internal/eval.h '#pragma once' '#include "promql/engine.h"'
put promql/promqltest/test.h '#pragma once' '#include "promql/engine.h"' '#include "storage/db.h"'
put rules/manager.h '#pragma once' '#include "promql/promqltest/test.h"'
put rules/internal/template_funcs_prom.cc '#include "promql/engine.h"'   # old layout
put rules/template/text/exec.h '#pragma once' '#include "core/labels.h"'  # new layout
put rules/template/funcs.cc '#include "rules/template/text/exec.h"'
put rules/template/internal/lexer.h '#pragma once' '#include "core/labels.h"'
put rules/template/lexer.cc '#include "rules/template/internal/lexer.h"'
put rules/group.cc '#include "rules/manager.h"' '#include "rules/template/text/exec.h"'
put server/scrape/internal/loop.h '#pragma once' '#include "rules/manager.h"'
put server/server.cc '#include "server/scrape/internal/loop.h"'
put server/cli_tsdb.cc '#include "storage/db.h"'                             # old layout
put tests/storage/chunk_test.cc '#include "storage/internal/chunk.h"'
put bench/chunk_bench.cc '#include "storage/internal/chunk.h"'
put examples/embed.cc '#include "storage/db.h"' '#include "fmt/format.h"'
put core/beside.cc '#include "labels.h"'
# Format the allowed files with the clang-format lint.sh will use (14 first).
cf=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}
"$cf" -i $(find . -name '*.cc' -o -name '*.h') || exit 2
good_files=$(find . -name '*.cc' -o -name '*.h' | sed 's|^\./||')

# Violations, one per rule. Each line of `expect` must appear in the output.
put core/upward.h '#pragma once' '' '#include "storage/db.h"'
put rules/template/up.cc '#include "rules/manager.h"'
put storage/uses_server.cc '#include "server/server.h"'
put server/server.h '#pragma once'
put examples/peek.cc '#include "storage/internal/chunk.h"'
put bench/new_bench.cc '#include "storage/internal/chunk.h"'
put rules/alerting.cc '#include "rules/template/internal/lexer.h"'
put storage/leaky.h '#pragma once' '#include "rocksdb/db.h"' '#include "storage/internal/chunk.h"'
put promql/bad_seam.cc '#include "storage/db.h"'
put promql/uses_promqltest.cc '#include "promql/promqltest/test.h"'
put core/missing.cc '#include "core/nope.h"'
put core/angle.cc '#include <core/labels.h>'
put core/ugly.cc 'int g();' '' 'int  f( ){return 1;}'
git add -A

expect=(
  'core/upward.h:3: layering: core (core/upward.h) includes storage'
  'rules/template/up.cc:1: layering: rules/template (rules/template/up.cc) includes rules (rules/manager.h)'
  'storage/uses_server.cc:1: layering: storage (storage/uses_server.cc) includes server'
  'examples/peek.cc:1: internal: examples/peek.cc includes storage/internal/chunk.h'
  'bench/new_bench.cc:1: internal: bench/new_bench.cc includes storage/internal/chunk.h'
  'rules/alerting.cc:1: internal: rules/alerting.cc includes rules/template/internal/lexer.h'
  'storage/leaky.h:2: public-header: storage/leaky.h is a public header of storage and includes a RocksDB header'
  'storage/leaky.h:3: public-header: storage/leaky.h is a public header of storage and includes an internal/ header'
  'promql/bad_seam.cc:1: layering: promql includes storage/db.h'
  'promql/uses_promqltest.cc:1: layering: promql (promql/uses_promqltest.cc) includes promql/promqltest'
  'core/missing.cc:1: include-path: "core/nope.h" resolves neither'
  'core/angle.cc:1: include-style: <core/labels.h> is a project header'
  'core/ugly.cc:3: format: not formatted per .clang-format'
  'bench/chunk_bench.cc:1: note: includes storage/internal/chunk.h (allowed'
)

out=$(bash "$here/lint.sh" --root "$tmp" 2>&1)
rc=$?
fail=0
if [ $rc -eq 0 ]; then echo "lint selftest: lint.sh passed a tree with violations"; fail=1; fi
for e in "${expect[@]}"; do
  if ! grep -qF -- "$e" <<<"$out"; then echo "lint selftest: not reported: $e"; fail=1; fi
done
# Only the misformatted file is reported for format.
if grep ': format: ' <<<"$out" | grep -qv '^core/ugly.cc:'; then
  echo "lint selftest: format reported on a formatted file:"; grep ': format: ' <<<"$out"; fail=1
fi
# Nothing is reported against the allowed files.
for f in $good_files; do
  if grep -E "^$f:[0-9]+: [a-z-]+:" <<<"$out" | grep -qv ': note:'; then
    echo "lint selftest: allowed file reported:"; grep -E "^$f:" <<<"$out"; fail=1
  fi
done
# Once the violations are gone, the same tree passes.
git rm -q -f core/upward.h rules/template/up.cc storage/uses_server.cc examples/peek.cc \
  bench/new_bench.cc rules/alerting.cc storage/leaky.h promql/bad_seam.cc promql/uses_promqltest.cc \
  core/missing.cc \
  core/angle.cc core/ugly.cc
out2=$(bash "$here/lint.sh" --root "$tmp" 2>&1)
if [ $? -ne 0 ]; then echo "lint selftest: clean tree fails:"; printf '%s\n' "$out2"; fail=1; fi

if [ $fail -ne 0 ] || [ -n "${LINT_SELFTEST_VERBOSE:-}" ]; then
  echo "--- lint.sh output on the test tree:"; printf '%s\n' "$out"
fi
[ $fail -eq 0 ] || exit 1
echo "lint selftest: ok (${#expect[@]} cases)"
