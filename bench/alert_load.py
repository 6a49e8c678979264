#!/usr/bin/env python3
"""Feeds an Alertmanager v2 API the alert stream of bench/compare_alerting.sh.

  alert_load.py --url http://127.0.0.1:9093 --alerts 10000 --groups 1000 \
      --rounds 12 --every 10 [--flip 0.05] [--batch 64]

Every round POSTs every alert to /api/v2/alerts in batches of --batch (a
Prometheus notifier's batch size), as a Prometheus server resends firing
alerts: the same labels, startsAt fixed, endsAt now + 4 rounds. Each round
a deterministic --flip fraction of the alerts is sent resolved (endsAt =
now) and fires again the round after, so groups keep changing. Alert i is
in group i % groups (label `group`), named A<group % 100>; grouping by
(alertname, group) therefore makes --groups groups.

Prints one line: the alert updates posted and the seconds it took.
Standard library only; exits non-zero if any POST fails.
"""
import argparse
import datetime
import json
import sys
import time
import urllib.request


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--alerts", type=int, default=10000)
    p.add_argument("--groups", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--every", type=float, default=10)
    p.add_argument("--flip", type=float, default=0.05)
    p.add_argument("--batch", type=int, default=64)
    a = p.parse_args()
    start = time.time()
    starts = rfc3339(start)
    flip_every = int(1 / a.flip) if a.flip > 0 else 0
    posted = 0
    for r in range(a.rounds):
        t_round = start + r * a.every
        delay = t_round - time.time()
        if delay > 0:
            time.sleep(delay)
        now = time.time()
        alerts = []
        for i in range(a.alerts):
            g = i % a.groups
            resolved = flip_every and (i + r) % flip_every == 0
            alerts.append({
                "labels": {"alertname": f"A{g % 100}", "group": str(g),
                           "instance": f"host-{i // a.groups}:9100",
                           "severity": "warning"},
                "annotations": {"summary": f"alert {i} of group {g}"},
                "startsAt": starts,
                "endsAt": rfc3339(now if resolved else now + 4 * a.every),
                "generatorURL": "http://127.0.0.1:9090/graph?g0.expr=up",
            })
        for b in range(0, len(alerts), a.batch):
            body = json.dumps(alerts[b:b + a.batch]).encode()
            req = urllib.request.Request(
                a.url + "/api/v2/alerts", data=body, method="POST",
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                if resp.status != 200:
                    print(f"POST failed: {resp.status}", file=sys.stderr)
                    return 1
        posted += len(alerts)
    print(f"{posted} {time.time() - start:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
