#!/usr/bin/env python3
"""Server CPU per query of two running servers holding the same data (two
builds scraping the same targets, as bench/ab_scrape.sh starts them),
measured alternately A, B in four rounds so both see the same load.

  ab_query_cost.py QUERY N PID_A PORT_A PID_B PORT_B [instant]

Per round and server: N requests on one keep-alive connection, 20 ms
apart; the server's CPU (utime + stime from /proc/PID/stat) over them
minus its rate in the 3 s before (scraping), divided by N; and the
median wall time. A range query covers the last 5 minutes at 15 s steps
(compare_scrape.sh's Q2 window); `instant` asks /api/v1/query instead.
"""
import http.client
import os
import statistics
import sys
import time
import urllib.parse


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    q, n = sys.argv[1], int(sys.argv[2])
    servers = [(int(sys.argv[3]), int(sys.argv[4])),
               (int(sys.argv[5]), int(sys.argv[6]))]
    instant = len(sys.argv) > 7 and sys.argv[7] == "instant"
    tck = os.sysconf("SC_CLK_TCK")

    def cpu(pid):
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tck

    now = int(time.time())
    if instant:
        path = "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    else:
        path = "/api/v1/query_range?" + urllib.parse.urlencode(
            {"query": q, "start": now - 300, "end": now, "step": 15})
    for rnd in range(4):
        for name, (pid, port) in zip("AB", servers):
            c0, t0 = cpu(pid), time.time()
            time.sleep(3)
            idle = (cpu(pid) - c0) / (time.time() - t0)
            conn = http.client.HTTPConnection("127.0.0.1", port)
            lat = []
            c0, t0 = cpu(pid), time.time()
            for _ in range(n):
                s = time.time()
                conn.request("GET", path)
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    sys.exit("%s: HTTP %d" % (name, r.status))
                lat.append(time.time() - s)
                time.sleep(0.02)
            used = cpu(pid) - c0 - idle * (time.time() - t0)
            print("round %d %s: cpu %.2f ms/query, wall median %.2f ms" %
                  (rnd, name, used / n * 1000, statistics.median(lat) * 1000))


if __name__ == "__main__":
    main()
