#!/usr/bin/env bash
# Builds examples/embed_append_query.cc as a project outside Vigil and runs
# it: `installed` installs the build tree into a temporary prefix and uses
# find_package(vigil) (then pkg-config's vigil.pc); `subdirectory` pulls the
# source tree in with add_subdirectory(). Run by CTest (CMakeLists.txt).
#   run.sh installed|subdirectory SOURCE_DIR BUILD_DIR
set -euo pipefail
mode=$1 src=$2 build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

check_output() {  # the example prints the series and its 10 samples
  local out
  out=$("$1" "$tmp/db-$2")
  echo "$out"
  grep -q 'vllm:num_requests_running' <<<"$out"
  [ "$(grep -c '^  1767225' <<<"$out")" = 10 ]
}

case $mode in
  installed)
    cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
    # Installed headers are the public ones only.
    if find "$tmp/prefix/include" -path '*internal*' | grep -q .; then
      echo "internal headers were installed"; exit 1
    fi
    cmake -S "$src/tests/package/consumer" -B "$tmp/b" "${gen[@]}" \
      -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DVIGIL_EXAMPLE="$src/examples/embed_append_query.cc" >/dev/null
    cmake --build "$tmp/b"
    check_output "$tmp/b/embed_append_query" cmake
    pc=$(find "$tmp/prefix" -name vigil.pc)
    export PKG_CONFIG_PATH=$(dirname "$pc")
    # shellcheck disable=SC2046
    g++ -o "$tmp/embed_pc" "$src/examples/embed_append_query.cc" \
      $(pkg-config --cflags --libs vigil)
    check_output "$tmp/embed_pc" pc
    ;;
  subdirectory)
    # Unoptimised: this proves that a parent project can build and link
    # the libraries from source, and -O0 compiles them about three times
    # faster than -O3 (the longest test of the suite otherwise).
    cmake -S "$src/tests/package/consumer" -B "$tmp/b" "${gen[@]}" \
      -DVIGIL_SOURCE="$src" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O0 \
      -DVIGIL_EXAMPLE="$src/examples/embed_append_query.cc" >/dev/null
    cmake --build "$tmp/b" -j "$(nproc)"
    check_output "$tmp/b/embed_append_query" subdir
    ;;
  *) echo "usage: run.sh installed|subdirectory SOURCE_DIR BUILD_DIR"; exit 2 ;;
esac
echo "ok: $mode"
