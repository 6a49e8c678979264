#!/usr/bin/env bash
# Vigil lint: what STYLE.md and DESIGN.md say, checked.
#   1. format:   every tracked *.cc / *.h is formatted per .clang-format
#                (clang-format 14, the version the tree was formatted with)
#   2. layering: the include graph of DESIGN.md (.ci/layering.py has the table)
# Usage: .ci/lint.sh [--root DIR]   (default: the repository this script is in)
# Prints `file:line: rule: what (why)` per problem; exits 1 if there is any.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ "${1:-}" = "--root" ]; then root=$(cd "$2" && pwd); fi
cd "$root" || exit 2

# clang-format versions format differently: prefer 14, the tree's version.
CLANG_FORMAT=${CLANG_FORMAT:-}
if [ -z "$CLANG_FORMAT" ]; then
  for c in clang-format-14 clang-format; do
    command -v "$c" >/dev/null 2>&1 && { CLANG_FORMAT=$c; break; }
  done
fi
if [ -z "$CLANG_FORMAT" ]; then
  echo "lint: clang-format not found (make lint installs it: apt-get install clang-format)" >&2
  exit 2
fi
if ! "$CLANG_FORMAT" --version | grep -q 'version 14\.'; then
  echo "lint: warning: $("$CLANG_FORMAT" --version) is not clang-format 14; its output may differ" >&2
fi

list_sources() {
  if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -z -- '*.cc' '*.h'
  else
    find . -path ./build -prune -o -path './build-*' -prune -o -path './.*' -prune -o \
      \( -name '*.cc' -o -name '*.h' \) -type f -printf '%P\0'
  fi
}

failed=0

# 1. Formatting: a few clang-format processes over all files, two at a time.
# A tracked file deleted in the work tree is skipped.
fmt_out=$(list_sources | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
  xargs -0 -r -n 50 -P "$(nproc 2>/dev/null || echo 2)" \
    "$CLANG_FORMAT" --style=file --dry-run --Werror 2>&1)
fmt_rc=$?
if [ $fmt_rc -ne 0 ]; then
  # One line per place: "file:line:col: error: code should be clang-formatted".
  bad=$(printf '%s\n' "$fmt_out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' |
    sed -E 's/^([^:]+):([0-9]+):[0-9]+: .*/\1 \2/' |
    awk '{ if (!($1 in first)) { first[$1] = $2; order[++n] = $1 } count[$1]++ }
         END { for (i = 1; i <= n; i++) { f = order[i]
                 printf "%s:%s: format: not formatted per .clang-format (%d place(s); first shown)\n", f, first[f], count[f] } }')
  if [ -n "$bad" ]; then
    printf '%s\n' "$bad"
    files=$(printf '%s\n' "$bad" | cut -d: -f1 | sort -u)
    echo "format: $(printf '%s\n' "$files" | wc -l) file(s) differ from .clang-format (STYLE.md §3.3); fix with:" >&2
    printf '%s\n' "$files" | sed "s/^/  $CLANG_FORMAT -i /" >&2
  else
    printf '%s\n' "$fmt_out" >&2
    echo "format: clang-format failed (exit $fmt_rc)" >&2
  fi
  failed=1
else
  echo "format: ok"
fi

# 2. Layering.
python3 "$here/layering.py" --root "$root" || failed=1

# 3. Test names CTest can run: catch_discover_tests passes each name to the
# test binary on its command line, where ';' splits it, a leading '-' reads
# as an option and a backslash is an escape; such a test
# would fail in CI without ever running.
names=$(git ls-files -z -- 'tests/*_test.cc' 2>/dev/null |
  xargs -0 -r grep -nE 'TEST_CASE\("(-|[^"]*[;\\])' 2>/dev/null)
if [ -n "$names" ]; then
  printf '%s\n' "$names" | sed -E 's/^([^:]+:[0-9]+):.*/\1: test-name: a name with ; or \\ or a leading - cannot be run by CTest (rename it)/'
  failed=1
else
  echo "test names: ok"
fi

exit $failed
