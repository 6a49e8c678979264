#!/usr/bin/env python3
"""The demo's pass/fail check (run.sh --for N runs it before stopping).

  check.py --url http://127.0.0.1:9090 --rules ../rules/recording.yml \
      --state sd/alerts.json

Passes (exit 0) only if
- every active target is up, except the TRT-LLM engine (job "trtllm"),
  whose /metrics is missing on purpose (LLMEngineDown);
- every llm:* recording rule of the rule file has at least one series now
  (and no rule reports an evaluation error);
- KVCacheCritical or KVCacheHigh, and XidError, were seen firing, and the
  built-in router notified XidError firing and then resolved (alert_sink.py's
  --state file);
- InferenceProbeFailing was seen firing (scenario.yml's engine hang, caught
  by the llm-probe job through Vigil's /probe) and LLMEngineDown never fired
  for a vLLM or SGLang engine (the hung engine's `up` stayed 1).
Prints one line per check. Python 3 standard library only.
"""
import argparse
import json
import re
import sys
import urllib.parse
import urllib.request


def get(url, path, **params):
    q = ("?" + urllib.parse.urlencode(params)) if params else ""
    with urllib.request.urlopen(url + path + q, timeout=10) as r:
        return json.load(r)["data"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--rules", required=True)
    p.add_argument("--state", required=True)
    a = p.parse_args()
    failures = []

    def check(ok, what):
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            failures.append(what)

    targets = get(a.url, "/api/v1/targets")["activeTargets"]
    down = [t for t in targets if t["health"] != "up"]
    bad = [t for t in down if t["labels"].get("job") != "trtllm"]
    check(targets and not bad,
          f"{len(targets)} targets, {len(down)} down"
          + (f" (only TRT-LLM)" if down and not bad else "")
          + "".join(f"\n         {t['labels'].get('job')} {t['scrapeUrl']}: {t['lastError']}"
                    for t in bad))

    names = sorted(set(re.findall(r"record:\s*(llm:\S+)", open(a.rules).read())))
    empty = []
    for n in names:
        if not get(a.url, "/api/v1/query", query=f"count({n})")["result"]:
            empty.append(n)
    check(names and not empty,
          f"{len(names) - len(empty)} of {len(names)} llm:* recording rules have values"
          + (f"; empty: {', '.join(empty)}" if empty else ""))

    errors = [f"{r['name']}: {r.get('lastError')}"
              for g in get(a.url, "/api/v1/rules")["groups"] for r in g["rules"]
              if r.get("health") not in ("ok", "unknown")]
    check(not errors, "every rule evaluates" + "".join(f"\n         {e}" for e in errors))

    try:
        seen = json.load(open(a.state))
    except (OSError, ValueError):
        seen = {}
    firing = set(seen.get("firing", []))
    check(bool(firing & {"KVCacheCritical", "KVCacheHigh"}), "a KV-cache alert fired")
    check("XidError" in firing, "XidError fired")
    check("InferenceProbeFailing" in firing,
          "InferenceProbeFailing fired (the engine hang, caught by the probe)")
    engine_down = get(a.url, "/api/v1/query",
                      query='count_over_time(ALERTS{alertname="LLMEngineDown",'
                            'alertstate="firing",job=~"vllm|sglang"}[15m])')["result"]
    check(not engine_down,
          "LLMEngineDown stayed silent for vLLM/SGLang (up stayed 1 during the hang)")
    probes = get(a.url, "/api/v1/query", query='probe_success{job="llm-probe"}')["result"]
    check(len(probes) > 0 and all(p["value"][1] == "1" for p in probes),
          f"{len(probes)} inference probes answer again after the hang")
    notified = set(seen.get("notified_firing", []))
    check("XidError" in notified,
          "the built-in router notified XidError (oncall-critical webhook)")
    check("XidError" in set(seen.get("notified_resolved", [])),
          "the built-in router notified XidError resolved (send_resolved)")
    print(f"  alerts seen firing: {', '.join(sorted(firing)) or 'none'}; "
          f"resolved: {', '.join(sorted(seen.get('resolved', []))) or 'none'}; "
          f"notified: {', '.join(sorted(notified)) or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
