#!/usr/bin/env python3
"""CPU and wall time of one API request to a running server, with the
requests spaced out as a dashboard sends them (not back to back, where
every thread stays awake between requests).

  request_cost.py --pid PID --url http://127.0.0.1:9090 [--query 1]
      [--requests 300] [--gap 0.05]

The server's CPU (utime + stime from /proc/PID/stat) over the run, minus
its idle rate measured for 5 s before, divided by the requests; and the
median wall time of a request. One keep-alive connection.
"""
import argparse
import http.client
import os
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--query", default="1")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--gap", type=float, default=0.05)
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    tck = os.sysconf("SC_CLK_TCK")

    def cpu():
        f = open("/proc/%d/stat" % a.pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tck

    c0, t0 = cpu(), time.time()
    time.sleep(5)
    idle = (cpu() - c0) / (time.time() - t0)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80)
    lat = []
    c0, t0 = cpu(), time.time()
    for _ in range(a.requests):
        s = time.time()
        q = urllib.parse.urlencode({"query": a.query, "time": s})
        conn.request("GET", u.path.rstrip("/") + "/api/v1/query?" + q)
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit("request_cost.py: HTTP %d: %s" % (r.status, a.query))
        lat.append(time.time() - s)
        time.sleep(a.gap)
    used = cpu() - c0 - idle * (time.time() - t0)
    lat.sort()
    print("%.3f ms CPU per request, median wall %.3f ms (idle %.4f cores)" %
          (used / a.requests * 1000, lat[len(lat) // 2] * 1000, idle))


if __name__ == "__main__":
    main()
