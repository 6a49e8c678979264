#!/usr/bin/env python3
"""A scrape target for the drills: every GET of /metrics counts itself, and
the page's samples are a known function of that count N:

    drill_scrapes_total N
    drill_pad{i="0".."PADS-1"} N * 1000 + i
    drill_victim N          (the series the crash drill deletes)

so a stored sample's value says which scrape it came from.

usage: counter_target.py PORT PADS
"""
import http.server
import sys

PADS = int(sys.argv[2])
count = 0


class Target(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global count
        count += 1
        lines = ["# TYPE drill_scrapes_total counter",
                 "drill_scrapes_total %d" % count,
                 "drill_victim %d" % count]
        lines += ['drill_pad{i="%d"} %d' % (i, count * 1000 + i)
                  for i in range(PADS)]
        body = ("\n".join(lines) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Target).serve_forever()
