#!/usr/bin/env python3
"""Replay the LLM rule pack over stored data and print when each alert fires.

Reads rules/recording.yml and rules/alerts.yml, inlines the llm:* recording
rules into each alert expression, asks a Prometheus-compatible server for the
expression over a time range (/api/v1/query_range) and applies each alert's
`for`. Approximation: one step = one evaluation; the recording rules are
evaluated on the fly instead of being backfilled.

Used to check the pack against examples/gen_cluster.py (see README.md):

  python3 examples/gen_cluster.py /tmp/c.om
  promtool tsdb create-blocks-from openmetrics /tmp/c.om /tmp/cdb
  printf 'global:\n  scrape_interval: 15s\n' > /tmp/p.yml
  prometheus --storage.tsdb.path=/tmp/cdb --storage.tsdb.retention.time=10y \
      --config.file=/tmp/p.yml --web.listen-address=127.0.0.1:19191 &
  python3 examples/llm/demo_check.py --url http://127.0.0.1:19191

usage: demo_check.py [--url URL] [--start 1767225600] [--hours 3] [--step 15]
Needs PyYAML.
"""
import argparse
import json
import os
import re
import urllib.parse
import urllib.request

import yaml

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:19191")
    ap.add_argument("--start", type=int, default=1767225600)
    ap.add_argument("--hours", type=float, default=3)
    ap.add_argument("--step", type=int, default=15)
    a = ap.parse_args()
    end = a.start + int(a.hours * 3600) - a.step

    rec = {}
    for g in yaml.safe_load(open(os.path.join(HERE, "recording.yml")))["groups"]:
        for r in g["rules"]:
            rec[r["record"]] = r["expr"].strip()

    def inline(e):
        for name in sorted(rec, key=len, reverse=True):
            e = re.sub(re.escape(name) + r"(?![\w:])", lambda _m, n=name: "(" + rec[n] + ")", e)
        return e

    def query(expr):
        q = urllib.parse.urlencode({"query": expr, "start": a.start, "end": end, "step": a.step})
        d = json.load(urllib.request.urlopen(a.url + "/api/v1/query_range?" + q))
        return d["data"]["result"]

    def seconds(s):
        if not s:
            return 0
        return sum(int(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in re.findall(r"(\d+)([smh])", s))

    def when(t):
        return "%6.2f min (%4.1f%%)" % ((t - a.start) / 60, (t - a.start) * 100 / (a.hours * 3600))

    for g in yaml.safe_load(open(os.path.join(HERE, "alerts.yml")))["groups"]:
        for r in g["rules"]:
            hold = seconds(r.get("for"))
            res = query(inline(r["expr"]))
            print("%-22s %s" % (r["alert"], "no series" if not res else ""))
            for s in res:
                ts = [int(float(v[0])) for v in s["values"]]
                runs, first, prev = [], None, None
                for t in ts:
                    if first is None:
                        first = t
                    elif t != prev + a.step:
                        runs.append((first, prev))
                        first = t
                    prev = t
                if first is not None:
                    runs.append((first, prev))
                firing = [(b + hold, e) for b, e in runs if e - b >= hold]
                lab = ",".join("%s=%s" % (k, v) for k, v in sorted(s["metric"].items())
                               if k in ("instance", "gpu", "reason"))
                vals = [float(v[1]) for v in s["values"]]
                for b, e in firing:
                    print("    %-40s firing %s .. %s  value %.4g..%.4g" % (lab, when(b), when(e), min(vals), max(vals)))
                if not firing:
                    print("    %-40s pending only" % lab)


if __name__ == "__main__":
    main()
