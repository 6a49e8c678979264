#!/usr/bin/env python3
"""Checks the #include graph of Vigil against DESIGN.md and STYLE.md §3.1-3.2.

Usage: python3 .ci/layering.py [--root DIR]

Prints one line per violation, `file:line: rule: what (why)`, and exits 1 if
there is any. Reads every tracked *.cc / *.h (git ls-files) of DIR (default:
the repository this script is in). Standard library only.

Everything the rules depend on is in the tables below: when DESIGN.md changes,
change these lines, not the code under them.
"""

import os
import re
import subprocess
import sys

# ---------------------------------------------------------------------------
# The tables.
# ---------------------------------------------------------------------------

# Units of the include graph, bottom up. A file belongs to the unit whose root
# is the longest prefix of its path, so `rules/template/` (below rules) wins
# over `rules/`, and `promql/promqltest/` (a target of its own, above promql)
# over `promql/`. A unit may include itself and the units it lists; nothing
# else. Both layouts of the template port are covered: the old one
# (rules/internal/, part of rules) and the new one (rules/template/,
# rules/template/text/, below rules). Server rooms are not separated: every
# server/ file may include everything below it, and nothing below includes it.
LIBS = ["core", "storage", "promql", "promql/promqltest", "rules/template",
        "rules", "server"]
LAYERS = [
    # unit                 roots                   may include (besides itself)
    ("core",               ["core/"],              []),  # with core/go, core/goyaml, core/textparse
    ("storage",            ["storage/"],           ["core"]),
    ("promql",             ["promql/"],            ["core", "storage"]),
    ("promql/promqltest",  ["promql/promqltest/"], ["core", "storage", "promql"]),
    ("rules/template",     ["rules/template/"],    ["core"]),  # with rules/template/text
    ("rules",              ["rules/"],             ["core", "storage", "promql", "promql/promqltest",
                                                    "rules/template"]),
    ("server",             ["server/"],            ["core", "storage", "promql", "promql/promqltest",
                                                    "rules/template", "rules"]),
    ("examples",           ["examples/"],          LIBS),
    # tests/ also tests the examples' programs (the simulator, examples/sim/)
    ("tests",              ["tests/"],             LIBS + ["examples"]),
    ("bench",              ["bench/"],             LIBS),
]

# Libraries: their headers outside an internal/ folder are public (STYLE §3.2).
LIBRARIES = set(LIBS)

# Units that may include any library's internal/ (STYLE §3.1: only tests/,
# for white-box tests). Everyone else includes X/internal/ only from inside
# the unit that owns it (the unit whose root is the longest prefix of the
# internal/ folder: storage/internal/ from storage/, rules/template/internal/
# from rules/template/ only).
INTERNAL_FROM_ANYWHERE = {"tests"}

# Named exceptions to the internal/ rule: (including file, included header).
# bench/ micro-benchmarks measure internal codecs that have no public header
# (STYLE §3.7 lists "XOR codec, postings intersect" as benches); each such
# include is listed here so it stays visible and a new one must be added on
# purpose. The linter prints a note for each one it uses.
INTERNAL_EXCEPTIONS = {
    ("bench/chunk_bench.cc", "storage/internal/chunk.h"),
}

# Narrower edges: (unit, unit it includes) -> the only headers allowed.
# STYLE §3.1: promql "includes only storage/querier.h, never storage/internal/
# or storage/db.h, so it can run over a fake". (promqltest, a separate
# target, may include all of storage's public headers.)
ONLY_HEADERS = {
    ("promql", "storage"): {"storage/querier.h"},
}

# Included by no public header (STYLE §3.2: RocksDB types never appear in a
# public header; internal/ is not API). Matched on the include as written.
PUBLIC_HEADER_FORBIDDEN = [
    (re.compile(r"(^|/)internal/"), "an internal/ header"),
    (re.compile(r"^rocksdb/"), "a RocksDB header"),
]

# Third-party headers that may be written with quotes (Google style) and do
# not resolve inside the repository.
EXTERNAL_PREFIXES = ("absl/", "fmt/", "re2/", "rocksdb/", "yaml-cpp/",
                     "catch2/", "benchmark/", "httplib.h", "zlib.h",
                     "snappy.h")

DESIGN = 'DESIGN.md "Layers and the one dependency rule"'

# ---------------------------------------------------------------------------

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
PROJECT_TOPS = tuple(sorted({r.split("/")[0] + "/" for _, roots, _ in LAYERS for r in roots}))
ROOTS = sorted(((r, u) for u, roots, _ in LAYERS for r in roots),
               key=lambda ru: -len(ru[0]))
ALLOWED = {u: set(deps) | {u} for u, _, deps in LAYERS}
UNIT_ROOT = {u: roots for u, roots, _ in LAYERS}


def unit_of(path):
    for root, unit in ROOTS:
        if path.startswith(root):
            return unit
    return None


def is_internal(path):
    return "internal" in path.split("/")[:-1]


def internal_owner(path):
    """The unit owning the internal/ folder of `path` (by its folder prefix)."""
    parts = path.split("/")
    folder = "/".join(parts[: parts.index("internal")]) + "/"
    return unit_of(folder)


def tracked_sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.cc", "*.h"],
                             check=True, capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (an unpacked tarball): walk the tree instead.
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            for n in names:
                if n.endswith((".cc", ".h")):
                    files.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))


def resolve(root, src, inc):
    """Where a quoted include lands: beside the file first, then the repo root,
    as the compiler searches. None if neither exists."""
    for base in (os.path.dirname(src), ""):
        cand = os.path.normpath(os.path.join(base, inc))
        if not cand.startswith("..") and os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    return None


def check_file(root, src, problems, notes, used_exceptions):
    src_unit = unit_of(src)
    public_header = (src.endswith(".h") and src_unit in LIBRARIES
                     and not is_internal(src))
    if src_unit is None:
        problems.append(f"{src}:1: layering: file is outside every layer of the table "
                        f"(DESIGN.md: the top level is fixed); add its folder to LAYERS "
                        f"in .ci/layering.py if DESIGN.md gained one")
    with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
        lines = fh.readlines()
    for lineno, line in enumerate(lines, 1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        quote, inc = m.group(1), m.group(2).strip()
        where = f"{src}:{lineno}"
        shown = f'"{inc}"' if quote == '"' else f"<{inc}>"

        if public_header:
            for pattern, what in PUBLIC_HEADER_FORBIDDEN:
                if pattern.search(inc):
                    problems.append(
                        f"{where}: public-header: {src} is a public header of {src_unit} "
                        f"and includes {what} {shown} (STYLE.md §3.2: public headers "
                        f"include only public headers; RocksDB types and internal/ "
                        f"never appear in them); move the include to a .cc or an "
                        f"internal/ header")

        if quote == "<":
            if inc.startswith(PROJECT_TOPS):
                problems.append(f"{where}: include-style: {shown} is a project header; "
                                f'write it with quotes from the repo root: #include "{inc}" '
                                f"(STYLE.md §3.2)")
            continue

        target = resolve(root, src, inc)
        if target is None:
            if inc.startswith(EXTERNAL_PREFIXES) and not inc.startswith(PROJECT_TOPS):
                continue
            problems.append(f"{where}: include-path: {shown} resolves neither from the "
                            f"repo root nor beside {src}; write project includes from "
                            f"the repo root (STYLE.md §3.2)")
            continue
        dst_unit = unit_of(target)
        if dst_unit is None:
            continue  # a header outside the layers (none today); nothing to order

        # 1. Layer order.
        if src_unit is not None and dst_unit not in ALLOWED[src_unit]:
            below = ", ".join(sorted(ALLOWED[src_unit])) or "only itself"
            problems.append(f"{where}: layering: {src_unit} ({src}) includes {dst_unit} "
                            f"({target}): a layer includes only from layers below it "
                            f"({DESIGN}); {src_unit} may include: {below}")
        # 2. Narrower edges.
        elif (src_unit, dst_unit) in ONLY_HEADERS and src_unit != dst_unit \
                and target not in ONLY_HEADERS[(src_unit, dst_unit)] \
                and not is_internal(target):
            only = ", ".join(sorted(ONLY_HEADERS[(src_unit, dst_unit)]))
            problems.append(f"{where}: layering: {src_unit} includes {target}; from "
                            f"{dst_unit} it may include only {only} (STYLE.md §3.1: it "
                            f"reads storage through the Querier seam so it runs over a fake)")

        # 3. internal/ stays inside its owner.
        if is_internal(target):
            owner = internal_owner(target)
            owner_roots = UNIT_ROOT.get(owner, [])
            inside = any(src.startswith(r) for r in owner_roots)
            if inside or src_unit in INTERNAL_FROM_ANYWHERE:
                continue
            if (src, target) in INTERNAL_EXCEPTIONS:
                used_exceptions.add((src, target))
                notes.append(f"{where}: note: includes {target} (allowed by "
                             f"INTERNAL_EXCEPTIONS in .ci/layering.py)")
                continue
            problems.append(f"{where}: internal: {src} includes {target}, which is "
                            f"internal to {owner}: nothing outside "
                            f"a library includes its internal/ ({DESIGN}; STYLE.md §3.1: "
                            f"only tests/ may); use a public header of {owner}")


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if len(argv) >= 2 and argv[0] == "--root":
        root = os.path.abspath(argv[1])
    problems, notes, used = [], [], set()
    files = tracked_sources(root)
    for src in files:
        check_file(root, src, problems, notes, used)
    for src, target in sorted(INTERNAL_EXCEPTIONS - used):
        if os.path.isfile(os.path.join(root, src)):
            notes.append(f"{src}:1: note: INTERNAL_EXCEPTIONS lists ({src}, {target}) but "
                         f"{src} no longer includes it; drop the entry")
    for n in notes:
        print(n)
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} problem(s) in {len(files)} files", file=sys.stderr)
        return 1
    print(f"layering: ok ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
