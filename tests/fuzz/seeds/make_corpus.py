#!/usr/bin/env python3
"""Rebuilds the checked-in seed corpora of tests/fuzz/corpus/ from the
project's fixtures and tests (docs/reliability.md, "Fuzzing").

Usage: python3 tests/fuzz/seeds/make_corpus.py [--shared DIR]

Reads the real /metrics pages and the upstream PromQL test scripts of
VIGIL_SHARED_DIR (default: ../shared beside the repository), the rule files,
configs and alertmanager.yml files of examples/ and tests/, and the
hand-written seeds of tests/fuzz/seeds/<surface>/. Every seed is small
(libFuzzer runs with -max_len=8192) and named by the hash of its content,
so re-running the script gives the same files. Standard library only.
"""

import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HERE = os.path.join(ROOT, "tests", "fuzz")
MAX = 6000  # bytes per seed


def put(surface, data):
    if isinstance(data, str):
        data = data.encode()
    data = data[:MAX]
    if not data:
        return
    d = os.path.join(HERE, "corpus", surface)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def files(pattern_dirs, exts):
    for base in pattern_dirs:
        base = os.path.join(ROOT, base)
        for dp, dn, fn in os.walk(base):
            dn[:] = [d for d in dn if d not in ("node_modules", "build")]
            for f in sorted(fn):
                if f.endswith(exts):
                    yield os.path.join(dp, f)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def chunks_of_lines(data, size):
    """Pieces of about `size` bytes cut at line ends."""
    out, cur = [], b""
    for line in data.splitlines(keepends=True):
        if len(cur) + len(line) > size and cur:
            out.append(cur)
            cur = b""
        cur += line
    if cur:
        out.append(cur)
    return out


def main():
    shared = os.path.join(ROOT, "..", "shared")
    if len(sys.argv) == 3 and sys.argv[1] == "--shared":
        shared = sys.argv[2]
    for s in os.listdir(os.path.join(HERE, "corpus")) if os.path.isdir(
            os.path.join(HERE, "corpus")) else []:
        shutil.rmtree(os.path.join(HERE, "corpus", s))

    # exposition: pieces of the real pages (the first and a few from inside).
    for p in sorted(files([os.path.join(shared, "fixtures", "metrics")], (".txt",))):
        pieces = chunks_of_lines(read(p), 3000)
        for piece in pieces[:2] + pieces[len(pieces) // 2:len(pieces) // 2 + 1]:
            put("exposition", piece)
    # ... and the text/OpenMetrics literals of the parser's tests.
    for p in files(["tests/core"], ("textparse_test.cc", "textparse_dialect_test.cc")):
        for m in re.finditer(rb'R"\((.*?)\)"', read(p), re.S):
            put("exposition", m.group(1))

    # PromQL: the expressions of every eval line of the test scripts.
    exprs = []
    for p in sorted(files([os.path.join(shared, "conformance", "promql"),
                           "tests/promql/testdata", "promql"], (".test",))):
        for line in read(p).decode(errors="replace").splitlines():
            m = re.match(r"\s*eval(?:_fail|_ordered|_warn|_info)?\s+(?:instant|range)"
                         r"\s+(?:at\s+\S+|from\s+\S+\s+to\s+\S+\s+step\s+\S+)"
                         r"(?:\s+\S+)*?\s+(.*)$", line)
            if m:
                exprs.append(m.group(1).strip())
    for p in files(["examples", "tests/rules/testdata"], (".yml",)):
        for m in re.finditer(r"^\s*expr:\s*(.+)$", read(p).decode(errors="replace"), re.M):
            e = m.group(1).strip().strip("|>").strip()
            if e:
                exprs.append(e.strip("'\""))
    exprs = sorted(set(exprs))
    for i, e in enumerate(exprs):
        if i % 2 == 0:
            put("promql_parse", e)
        if i % 6 == 0:
            put("promql_eval", e)
    for e in ["rate(http_requests_total[5m])",
              "sum by (job) (rate(http_requests_total[5m]))",
              "histogram_quantile(0.9, sum by (le) (rate(latency_seconds_bucket[5m])))",
              "gauge offset 1m", "cpu_usage @ 300", "max_over_time(gauge[10m:1m])",
              "topk(2, cpu_usage)", "count_values(\"v\", up)",
              "label_replace(up, \"x\", \"$1\", \"job\", \"(.*)\")",
              "http_requests_total / on (instance) group_left cpu_usage",
              "sparse unless up", "absent(nope)", "sort_desc(gauge)",
              "predict_linear(http_requests_total[10m], 60)",
              "quantile_over_time(0.5, cpu_usage[5m])", "timestamp(up)"]:
        put("promql_eval", e)
        put("promql_parse", e)

    # Rule files and templates.
    for p in files(["examples/llm/rules", "tests/rules/testdata"], (".yml",)):
        if "/tests/" in p and "/unit" in p:
            continue
        data = read(p)
        if b"groups:" in data:
            put("rule_file", data)
        for m in re.finditer(rb"\{\{.*?\}\}[^\n]*", data):
            put("template", m.group(0).strip(b"'\" "))
    # prometheus.yml and alertmanager.yml files.
    for p in files(["examples", "tests/server/testdata/config", "tests/rules/testdata/config"],
                   (".yml",)):
        data = read(p)
        if b"scrape_configs" in data or b"global:" in data or b"rule_files" in data:
            if b"receivers:" not in data:
                put("prometheus_config", data)
    for p in files(["examples/llm", "tests/server/testdata/alertmanager"], (".yml",)):
        data = read(p)
        if b"receivers:" in data or b"route:" in data:
            put("alertmanager_config", data)

    # Hand-written seeds (matchers, API requests, templates, ...).
    seeds = os.path.join(HERE, "seeds")
    for s in sorted(os.listdir(seeds)):
        d = os.path.join(seeds, s)
        if os.path.isdir(d) and s != "remote_write_text":
            for f in sorted(os.listdir(d)):
                path = os.path.join(d, f)
                if f.endswith(".lines"):  # one seed per line, \n escaped
                    for line in read(path).splitlines():
                        if line.strip():
                            put(s, line.replace(b"\\n", b"\n"))
                else:
                    put(s, read(path))

    # remote_write: Remote-Write 1.0 / 2.0 messages written by protoc from
    # text format, behind the target's mode byte (bit 1: compress here).
    proto = os.path.join(ROOT, "server", "remote", "proto")
    for name, msg, mode in [("remote_v1.proto", "prometheus.WriteRequest", 2),
                            ("remote_v2.proto", "io.prometheus.write.v2.Request", 3)]:
        d = os.path.join(seeds, "remote_write_text")
        for f in sorted(os.listdir(d)):
            if not f.startswith(name.split(".")[0][-2:]):
                continue
            text = read(os.path.join(d, f))
            r = subprocess.run(["protoc", "--proto_path", proto, "--encode", msg, name],
                               input=text, capture_output=True, cwd=proto)
            if r.returncode != 0:
                sys.exit("protoc failed on %s: %s" % (f, r.stderr.decode()))
            put("remote_write", bytes([mode]) + r.stdout)

    total = 0
    for dp, _, fn in os.walk(os.path.join(HERE, "corpus")):
        for f in fn:
            total += os.path.getsize(os.path.join(dp, f))
    for s in sorted(os.listdir(os.path.join(HERE, "corpus"))):
        print("%-20s %4d seeds" % (s, len(os.listdir(os.path.join(HERE, "corpus", s)))))
    print("total %d KB" % (total // 1024))


if __name__ == "__main__":
    main()
