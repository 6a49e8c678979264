#!/usr/bin/env python3
"""The probe tests' targets: an OpenAI-compatible engine in every state a
probe must tell apart.

  target.py PORT_FILE [--tls CERT KEY]

Listens on 127.0.0.1 (an ephemeral port, written to PORT_FILE once it
accepts), HTTP/1.1, one thread per connection. Paths (any method):
  /v1/completions, /ok   200 with {"choices":[...]}
  /slow?ms=N             the same after N ms
  /hang                  reads the request and never answers
  /500                   500 with a JSON error
  /wrong                 200 without "choices"
  /count                 how many requests /shared saw, then resets it
  /shared                the same as /slow?ms=800, counted
"""
import argparse
import http.server
import os
import ssl
import threading
import time
import urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("port_file")
ap.add_argument("--tls", nargs=2, default=None)
args = ap.parse_args()

lock = threading.Lock()
shared_count = 0
OK = b'{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"!"}]}'


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        global shared_count
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path == "/hang":
            time.sleep(3600)
        elif u.path == "/slow":
            time.sleep(int(q.get("ms", ["500"])[0]) / 1000.0)
            self.send(200, OK)
        elif u.path == "/shared":
            with lock:
                shared_count += 1
            time.sleep(0.8)
            self.send(200, OK)
        elif u.path == "/count":
            with lock:
                c, shared_count = shared_count, 0
            self.send(200, str(c).encode())
        elif u.path == "/500":
            self.send(500, b'{"error":"internal"}')
        elif u.path == "/wrong":
            self.send(200, b'{"error":"model not loaded"}')
        else:
            self.send(200, OK)

    do_GET = do_POST = do_HEAD = handle_any

    def log_message(self, *a):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
if args.tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls[0], args.tls[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
tmp = args.port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, args.port_file)
srv.serve_forever()
