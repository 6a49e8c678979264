#!/usr/bin/env bash
# Runs tests/ui/ui_test.mjs, or exits 77 (CTest: skipped) saying what is
# missing. Arguments come from tests/ui/ui_test.cmake:
#   --vigil= --sim= --node= --modules= --chromium= --ui-built= --out=
set -uo pipefail
declare -A a
for arg in "$@"; do
  k=${arg%%=*}; a[${k#--}]=${arg#*=}
done
skip() { echo "SKIPPED: $*"; exit 77; }
[ "${a[ui-built]:-OFF}" = ON ] || skip "vigil is built without the web UI (no node/npm at configure time, or -DVIGIL_BUILD_UI=OFF)"
[ -n "${a[node]:-}" ] && [ -x "${a[node]}" ] || skip "no node (apt-get install nodejs npm)"
[ -n "${a[chromium]:-}" ] && [ -x "${a[chromium]}" ] || skip "no chromium (apt-get install chromium)"
[ -f "${a[modules]}/playwright-core/package.json" ] || skip "no playwright-core in ${a[modules]} (npm ci of the UI failed?)"
if ! grep -q 'assets/app-' "$(dirname "${a[modules]}")/../ui_bundle.cc" 2>/dev/null; then
  skip "the UI bundle was not built (npm or esbuild failed at build time; see the build log)"
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "${a[node]}" "$here/ui_test.mjs" --vigil="${a[vigil]}" --sim="${a[sim]}" \
  --modules="${a[modules]}" --chromium="${a[chromium]}" --out="${a[out]}" \
  --root="$(cd "$here/../.." && pwd)"
