#!/usr/bin/env python3
"""Simulated LLM-serving GPU cluster, written as an OpenMetrics backfill file.

A compact generator kept for bench/compare_rules.sh (deterministic for a
given --seed); the demo and everything else use examples/sim/ (vigil-sim). Each host has
8 GPUs exported by dcgm-exporter, one vLLM engine and node-exporter CPU
counters, scraped every --step seconds. Incidents are injected so the alert
rules have something to find:

  * KV-cache saturation on host 0 from 40% to 60% of the run: the cache
    fills to ~99%, requests queue up and preemptions climb.
  * An XID 79 error ("GPU has fallen off the bus") on host 1, GPU 3 at 70%:
    DCGM_FI_DEV_XID_ERRORS holds the last XID code (a gauge, not a counter).

Families are contiguous and timestamps ascend within each series, as
`promtool tsdb create-blocks-from openmetrics` and `vigil tsdb import
openmetrics` require.

usage: gen_cluster.py OUT [--hosts 4] [--hours 3] [--step 15] [--start 1767225600]
"""
import argparse
import math
import random
import zlib

TTFT_LE = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
           1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
ITL_LE = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
          2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]
MODEL = "meta-llama/Llama-3.1-70B-Instruct"


def num(v):
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


class Writer:
    def __init__(self, path, ts):
        self.f = open(path, "w")
        self.ts = ts

    def family(self, name, typ, help_):
        self.f.write(f"# HELP {name} {help_}\n# TYPE {name} {typ}\n")

    def series(self, name, labels, values):
        lab = ",".join(f'{k}="{v}"' for k, v in labels)
        w = self.f.write
        for t, v in zip(self.ts, values):
            w(f"{name}{{{lab}}} {num(v)} {t}\n")

    def close(self):
        self.f.write("# EOF\n")
        self.f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--hours", type=float, default=3)
    ap.add_argument("--step", type=int, default=15)
    ap.add_argument("--start", type=int, default=1767225600)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    n = int(a.hours * 3600 / a.step)
    ts = [a.start + i * a.step for i in range(n)]
    sat = (int(n * 0.4), int(n * 0.6))  # KV-cache saturation window, host 0
    xid_at = int(n * 0.7)                # XID 79 on host 1, GPU 3
    out = Writer(a.out, ts)

    def rnd(*key):
        return random.Random(zlib.crc32(repr((a.seed,) + key).encode()))

    def walk(r, lo, hi, x, sigma, digits=None):
        vals = []
        for _ in range(n):
            x = min(hi, max(lo, x + r.gauss(0, sigma)))
            vals.append(round(x, digits) if digits is not None else x)
        return vals

    def saturated(h, i):
        return h == 0 and sat[0] <= i < sat[1]

    hosts = [f"gpu-node-{h}" for h in range(a.hosts)]

    # Load per host and step: requests running, drives everything else.
    load = {}
    for h in range(a.hosts):
        r = rnd("load", h)
        base = walk(r, 20, 120, 60, 2.0)
        load[h] = [min(256, b * (2.2 if saturated(h, i) else 1.0)) for i, b in enumerate(base)]

    def gpu_labels(h, g):
        return [("Hostname", hosts[h]), ("UUID", f"GPU-{h:04d}{g:04d}-7f3a-4c1e-9b2d"),
                ("device", f"nvidia{g}"), ("gpu", str(g)), ("instance", f"{hosts[h]}:9400"),
                ("job", "dcgm-exporter"), ("modelName", "NVIDIA H100 80GB HBM3")]

    for fam, help_, fn in [
        ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
         lambda h, g, i, r: min(100, round(load[h][i] * 0.8 + r.gauss(0, 4)))),
        ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).",
         lambda h, g, i, r: round(45 + load[h][i] * 0.2 + r.gauss(0, 0.5))),
        ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).",
         lambda h, g, i, r: round(120 + load[h][i] * 4.5 + r.gauss(0, 8), 3)),
        ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
         lambda h, g, i, r: 76000 + (2500 if saturated(h, i) else 0) + r.randint(0, 40)),
    ]:
        out.family(fam, "gauge", help_)
        for h in range(a.hosts):
            for g in range(8):
                r = rnd(fam, h, g)
                out.series(fam, gpu_labels(h, g), [fn(h, g, i, r) for i in range(n)])

    out.family("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.")
    for h in range(a.hosts):
        for g in range(8):
            vals = [79 if (h == 1 and g == 3 and i >= xid_at) else 0 for i in range(n)]
            out.series("DCGM_FI_DEV_XID_ERRORS", gpu_labels(h, g), vals)

    base = lambda h: [("engine", "0"), ("instance", f"{hosts[h]}:8000"), ("job", "vllm"),
                      ("model_name", MODEL)]
    out.family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.")
    for h in range(a.hosts):
        out.series("vllm:num_requests_running", base(h), [round(x) for x in load[h]])
    out.family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.")
    for h in range(a.hosts):
        r = rnd("wait", h)
        out.series("vllm:num_requests_waiting", base(h),
                   [round(40 + r.gauss(0, 5)) if saturated(h, i) else max(0, round(r.gauss(0.5, 1)))
                    for i in range(n)])
    out.family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.")
    for h in range(a.hosts):
        r = rnd("kv", h)
        out.series("vllm:kv_cache_usage_perc", base(h),
                   [round(min(0.999, 0.985 + r.random() * 0.014) if saturated(h, i)
                          else min(0.95, load[h][i] / 160 + r.gauss(0, 0.01)), 4) for i in range(n)])

    for fam, help_, per_req in [("vllm:prompt_tokens", "Number of prefill tokens processed.", 900),
                                ("vllm:generation_tokens", "Number of generation tokens processed.", 250),
                                ("vllm:num_preemptions", "Cumulative number of preemption from the engine.", 0)]:
        out.family(fam, "counter", help_)
        for h in range(a.hosts):
            r = rnd(fam, h)
            x, vals = r.randint(0, 10 ** 6), []
            for i in range(n):
                if per_req:
                    x += max(0, round(load[h][i] * per_req * a.step / 60 * (1 + r.gauss(0, 0.1))))
                elif saturated(h, i):
                    x += r.randint(0, 6)
                vals.append(x)
            out.series(fam + "_total", base(h), vals)

    out.family("vllm:request_success", "counter", "Count of successfully processed requests.")
    for h in range(a.hosts):
        for reason in ["abort", "length", "stop"]:
            r = rnd("succ", h, reason)
            share = {"abort": 0.01, "length": 0.09, "stop": 0.9}[reason]
            x, vals = 0, []
            for i in range(n):
                x += max(0, round(load[h][i] * share * a.step / 20 * (1 + r.gauss(0, 0.2))))
                vals.append(x)
            out.series("vllm:request_success_total", base(h) + [("finished_reason", reason)], vals)

    for fam, les, mu, help_ in [
        ("vllm:time_to_first_token_seconds", TTFT_LE, -1.6, "Histogram of time to first token in seconds."),
        ("vllm:inter_token_latency_seconds", ITL_LE, -3.4, "Histogram of inter-token latency in seconds."),
    ]:
        out.family(fam, "histogram", help_)
        for h in range(a.hosts):
            r = rnd(fam, h)
            counts, total, rows = [0] * (len(les) + 1), 0.0, []
            for i in range(n):
                k = max(0, int(load[h][i] * a.step / 40))
                m = mu + (1.8 if saturated(h, i) else 0.0)
                for _ in range(k):
                    x = math.exp(r.gauss(m, 0.5))
                    total += x
                    counts[next((j for j, le in enumerate(les) if x <= le), len(les))] += 1
                rows.append((list(counts), total))
            for j, le in enumerate(les + [math.inf]):
                lab = base(h) + [("le", "+Inf" if le == math.inf else repr(float(le)))]
                out.series(fam + "_bucket", lab, [sum(c[:j + 1]) for c, _ in rows])
            out.series(fam + "_count", base(h), [sum(c) for c, _ in rows])
            out.series(fam + "_sum", base(h), [round(s, 6) for _, s in rows])

    out.family("node_cpu_seconds_total", "counter", "Seconds the CPUs spent in each mode.")
    for h in range(a.hosts):
        for cpu in range(8):
            for mode, rate in [("idle", 0.6), ("system", 0.08), ("user", 0.3)]:
                r = rnd("cpu", h, cpu, mode)
                x, vals = r.random() * 1e5, []
                for _ in range(n):
                    x += max(0.0, rate * a.step * (1 + r.gauss(0, 0.2)))
                    vals.append(round(x, 2))
                out.series("node_cpu_seconds_total",
                           [("cpu", str(cpu)), ("instance", f"{hosts[h]}:9100"),
                            ("job", "node-exporter"), ("mode", mode)], vals)
    out.close()


if __name__ == "__main__":
    main()
