#!/usr/bin/env python3
"""Median latency of a GET over one kept-alive HTTP/1.1 connection.

    keepalive_latency.py URL REPEAT

Opens one connection (as Grafana keeps its connections to a data source),
sends REPEAT GETs of URL on it 0.2 s apart, and prints the median time from
sending a request to reading the last byte of its response, in ms, with
two decimals. The first request is not timed (it opens the connection).
Prints "failed" and the response on stderr if a response is not a
Prometheus API success; exits 2 on a usage error.
"""
import http.client
import statistics
import sys
import time
import urllib.parse


def main():
    if len(sys.argv) != 3:
        print("usage: keepalive_latency.py URL REPEAT", file=sys.stderr)
        return 2
    url = urllib.parse.urlsplit(sys.argv[1])
    repeat = int(sys.argv[2])
    path = url.path + ("?" + url.query if url.query else "")
    conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
    times = []
    for r in range(repeat + 1):
        if r > 0:
            time.sleep(0.2)
        start = time.perf_counter()
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        elapsed = time.perf_counter() - start
        if resp.status != 200 or b'"status":"success"' not in body:
            print("query failed: %s: %s" % (sys.argv[1], body[:300]),
                  file=sys.stderr)
            print("failed", end="")
            return 0
        if r > 0:
            times.append(elapsed)
    print("%.2f" % (statistics.median(times) * 1000), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
