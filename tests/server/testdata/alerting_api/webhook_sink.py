#!/usr/bin/env python3
"""A webhook receiver for the alerting tests: appends every POSTed body,
one JSON document per line, to OUT, and answers 200.

usage: webhook_sink.py PORT OUT
"""
import http.server
import json
import sys


class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        with open(sys.argv[2], "a") as out:
            out.write(json.dumps(json.loads(body)) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
