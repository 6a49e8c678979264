#!/usr/bin/env python3
"""An HTTPS /metrics target for the TLS tests: a real TLS stack (Python's
ssl, OpenSSL) in front of a tiny HTTP/1.1 handler.

  https_server.py PORT_FILE CERT KEY [--client-ca CA] [--max-tls 1.2]

Listens on 127.0.0.1 (an ephemeral port, written to PORT_FILE once it
accepts). Every response carries X-Sni (the server name the client sent,
"" for none) and X-Host (the Host header it asked for).
"""
import argparse
import http.server
import os
import ssl

ap = argparse.ArgumentParser()
ap.add_argument("port_file")
ap.add_argument("cert")
ap.add_argument("key")
ap.add_argument("--client-ca", default="")
ap.add_argument("--max-tls", default="")
args = ap.parse_args()


def remember_sni(sock, name, ctx):
    sock.sni_seen = name or ""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b"# TYPE tls_ok gauge\ntls_ok 1\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Sni", getattr(self.connection, "sni_seen", ""))
        self.send_header("X-Host", self.headers.get("Host", ""))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(args.cert, args.key)
ctx.sni_callback = remember_sni
if args.client_ca:
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(args.client_ca)
if args.max_tls == "1.2":
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
