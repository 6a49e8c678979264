#!/usr/bin/env python3
"""Turns bench/compare/run.sh's results.tsv into the Markdown report.

results.tsv: SIZE<TAB>SERVER<TAB>KEY<TAB>VALUE, one measurement a line (run.sh
writes it); queries.tsv: queries.py's output. Prints the report on stdout.
"""
import argparse
import math
import sys
from collections import defaultdict
from datetime import datetime, timezone

SERVERS = ["vigil", "prometheus", "victoriametrics"]
PEERS = ["prometheus", "victoriametrics"]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def load(path):
    data = defaultdict(lambda: defaultdict(dict))  # size -> server -> key
    with open(path, encoding="utf-8") as f:
        for line in f:
            size, server, key, value = line.rstrip("\n").split("\t", 3)
            data[size][server][key] = value
    return data


def derived(m, interval_s):
    """The table's figures of one server at one size."""
    samples_w = num(m.get("samples_window"))
    active = num(m.get("active"))
    out = {
        "cpu_per_m": num(m.get("cpu_s")) / (samples_w / 1e6) if samples_w > 0 else math.nan,
        "samples_w": samples_w / 1e6,
        "active": active,
        "llm": num(m.get("llm_series")),
        "rss_steady": num(m.get("rss_steady")) / 2**20,
        "rss_peak": num(m.get("rss_peak")) / 2**20,
        "rss_per_series": num(m.get("rss_steady")) / active if active > 0 else math.nan,
        "disk_per_sample": num(m.get("disk_bytes")) / num(m.get("samples_total"))
        if num(m.get("samples_total")) > 0 else math.nan,
        "disk_mib": num(m.get("disk_bytes")) / 2**20,
        "snap_per_sample": num(m.get("snapshot_bytes")) / num(m.get("samples_total"))
        if num(m.get("samples_total")) > 0 else math.nan,
        "stop_s": num(m.get("stop_ms")) / 1000,
        "ready_s": num(m.get("restart_ready_ms")) / 1000,
        "first_query_s": num(m.get("restart_query_ms")) / 1000,
        "sim_cpu": num(m.get("sim_cpu_s")),
    }
    return out


# (key, label, target ratio or None, compare against: "best" peer or one peer)
ROWS = [
    ("cpu_per_m", "CPU s / M samples ingested (rules included)", 0.5, "best"),
    ("samples_w", "M samples ingested in the window (server's count)", None, None),
    ("active", "active series (server's count)", None, None),
    ("llm", "llm:* series at the end (the rules ran)", None, None),
    ("rss_steady", "RSS MiB, steady (median over the window)", None, None),
    ("rss_peak", "RSS MiB, peak (VmHWM, whole run)", None, None),
    ("rss_per_series", "RSS B / active series (steady)", 0.5, "best"),
    ("disk_mib", "disk MiB after the stop (du -sb)", None, None),
    ("disk_per_sample", "disk B / sample ingested", 1.0, "victoriametrics"),
    ("snap_per_sample", "snapshot B / sample (admin snapshot before the stop)", None, None),
    ("stop_s", "stop (SIGTERM to exit, flushing) s", None, None),
    ("ready_s", "restart with that data: ready s", None, None),
    ("first_query_s", "restart with that data: first answer with data s", None, None),
]


def ratio_cells(vals, target, against, present):
    if "vigil" not in present or target is None:
        return "", "", ""
    peers = [p for p in PEERS if p in present and not math.isnan(vals[p])]
    if against != "best":
        peers = [p for p in peers if p == against]
    if not peers or math.isnan(vals["vigil"]):
        return "-", f"<= {target:g}x", ""
    best = min(peers, key=lambda p: vals[p])
    if vals[best] == 0:
        return "-", f"<= {target:g}x", ""
    r = vals["vigil"] / vals[best]
    return f"{r:.2f}x ({best})", f"<= {target:g}x", "yes" if r <= target else "no"


def main():
    ap = argparse.ArgumentParser()
    for a in ["results", "queries", "machine", "versions", "command", "quick",
              "interval", "warmup", "window", "repeat", "step", "range"]:
        ap.add_argument("--" + a, required=True)
    a = ap.parse_args()
    data = load(a.results)
    queries = []
    with open(a.queries, encoding="utf-8") as f:
        for line in f:
            kind, qid, q = line.rstrip("\n").split("\t", 2)
            queries.append((kind, qid, q))
    interval_s = float(a.interval.rstrip("s"))
    range_s, window = int(a.range), int(a.window)
    w = sys.stdout.write

    w("# Side by side on the simulated GPU fleet: Vigil, Prometheus 2.42, "
      "VictoriaMetrics 1.79\n\n")
    if a.quick == "1":
        w("> **Quick smoke run** (`--quick`: 10 hosts, 40 s window, 5 repeats) "
          "that checks the script works. These are not the reference figures: "
          "rerun at full size (`bash bench/compare/run.sh`) and replace this "
          "file.\n\n")
    w(f"- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}\n")
    w(f"- machine: {a.machine}; other processes (builds) may share it\n")
    w(f"- versions: {a.versions}\n")
    w(f"- command: `{a.command.strip()}`\n")
    w(f"- load: `vigil-sim` (vLLM V1, V1, SGLang, vLLM V0 cycled over the hosts, "
      f"8 GPUs each with ECC counters, 96-CPU node pages, one gateway), "
      f"scraped every {a.interval} through its file_sd file; "
      f"1 % of the gateway's requests answered 5xx (fault `gateway-5xx`, so "
      f"the 5xx-ratio query has series); each server {a.warmup} s of warm-up, then a {window} s window; "
      f"rule pack `examples/llm/rules` (recording group every 15 s, alert "
      f"groups at the 15 s evaluation interval)\n")
    w(f"- queries: median `time_total` of {a.repeat} curl runs through each "
      f"server's HTTP API, so ~0.3 ms of it is the connection. Key queries "
      f"(seed section 5.5) instant at the end of the window; `llm:*` rule "
      f"expressions as range queries over the last {range_s} s at a "
      f"{a.step} s step")
    if window + int(a.warmup) < range_s:
        w(f" (the range covers {range_s} s although the server has only "
          f"~{window + int(a.warmup)} s of data)")
    w(". In parentheses: series in the answer (the same everywhere, or the "
      "servers did different work)\n")
    w("- VictoriaMetrics: CPU and RSS are VictoriaMetrics + vmalert (which "
      "evaluates the rule pack and writes the results back through remote "
      "write); its samples count (`vm_rows_added_to_storage_total`) includes "
      "those; `-search.disableCache` so repeats are not answered from its "
      "result cache, `-search.latencyOffset=0s` so it answers for the last "
      "30 s as the other two do (its default hides them). Prometheus and Vigil: `prometheus_tsdb_head_samples_"
      "appended_total`, active series `prometheus_tsdb_head_series`; "
      "VictoriaMetrics: `vm_cache_entries{type=\"storage/hour_metric_ids\"}`\n")
    w("- disk: each server stopped with SIGTERM (Prometheus writes its head to "
      "the WAL and `chunks_head/`, nothing is compacted into a block in a short "
      "run; VictoriaMetrics flushes its in-memory parts; Vigil checkpoints its "
      "open head chunks and truncates its `wal` family, but RocksDB keeps "
      "them in its own write-ahead `.log` until a memtable flush, so after "
      "a short run the directory is mostly that log), then "
      "`du -sb` of the whole data directory, divided by all samples ingested "
      "over the run. A short run measures mostly write-ahead logs and fixed "
      "overhead; the snapshot row (taken just before the stop through the "
      "admin API: Prometheus writes its head into a compacted block, Vigil "
      "a RocksDB checkpoint, VictoriaMetrics hard links to the parts it has "
      "already written, which in a short run leaves out most samples, so its "
      "figure is an undercount; `du -sb` of the snapshot directory) shows "
      "the compacted size of Prometheus and Vigil\n")
    w("- restart: the same binary started again on that directory (no "
      "vmalert); time to its ready endpoint (`/-/ready`, VictoriaMetrics "
      "`/health`) and to the first `up` query (at a time before the stop) "
      "answering with series\n\n")

    for size in sorted(data, key=lambda s: -int(s)):
        per = data[size]
        present = [s for s in SERVERS if s in per]
        targets = per.get("-", {}).get("targets", "?")
        d = {s: derived(per[s], interval_s) for s in present}
        w(f"## {size} hosts ({targets} targets)\n\n")
        w("| | " + " | ".join(present) + " | Vigil / better peer | target | met? |\n")
        w("|---" * (len(present) + 4) + "|\n")
        met = []
        for key, label, target, against in ROWS:
            vals = {s: d[s][key] for s in present}
            digits = 0 if key in ("active", "llm") else 2
            cells = [fmt(vals[s], digits) for s in present]
            r, t, ok = ratio_cells(vals, target, against, present)
            if ok:
                met.append((label, ok))
            w(f"| {label} | " + " | ".join(cells) + f" | {r} | {t} | {ok} |\n")
        qratios = []
        for kind, qid, q in queries:
            vals = {s: num(per[s].get("q:" + qid)) for s in present}
            cells = []
            for s in present:
                n = per[s].get("n:" + qid, "?")
                cells.append(f"{fmt(vals[s])} ({n})")
            r, t, ok = ratio_cells(vals, 0.5, "best", present)
            if ok:
                met.append((qid, ok))
                best = min((p for p in PEERS if p in present), key=lambda p: vals[p])
                qratios.append(vals["vigil"] / vals[best])
            label = f"ms `{qid}`" if kind == "instant" else f"ms `{qid}` 1 h range"
            w(f"| {label} | " + " | ".join(cells) + f" | {r} | {t} | {ok} |\n")
        sim = [f"{s} {fmt(100 * d[s]['sim_cpu'] / window, 1)} %" for s in present]
        w(f"\nvigil-sim's own CPU over the window (share of one core): "
          f"{', '.join(sim)}.\n")
        if met:
            n_ok = sum(1 for _, ok in met if ok == "yes")
            w(f"Targets met: {n_ok} of {len(met)}")
            if qratios:
                g = math.exp(sum(math.log(x) for x in qratios) / len(qratios))
                w(f"; queries: geometric mean of Vigil / faster peer "
                  f"{g:.2f}x, worst {max(qratios):.2f}x")
            w(".\n")
        w("\n")
    w("Queries:\n\n")
    for kind, qid, q in queries:
        w(f"- `{qid}` ({kind}): `{q}`\n")


if __name__ == "__main__":
    main()
