#!/usr/bin/env python3
"""A forwarding HTTP proxy for the proxy_url tests.

  http_proxy.py PORT_FILE LOG [--to-loopback]

Listens on 127.0.0.1 (an ephemeral port, written to PORT_FILE). An
absolute-form request ("GET http://host:port/path HTTP/1.1") is forwarded
to its origin and the answer relayed; "CONNECT host:port" opens a tunnel.
Each request line is appended to LOG, with the Proxy-Authorization header
if one came, and any X-Connect-* header of a CONNECT, so a test can see
what went through the proxy. With --to-loopback every origin host is
reached at 127.0.0.1 (the tests name targets that do not resolve, to see
which requests the client proxies).
"""
import http.client
import http.server
import os
import select
import socket
import sys
import urllib.parse

port_file, log_path = sys.argv[1], sys.argv[2]
to_loopback = "--to-loopback" in sys.argv[3:]


def origin(host):
    return "127.0.0.1" if to_loopback else host


def log(line):
    with open(log_path, "a") as f:
        f.write(line + "\n")


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def note(self):
        auth = self.headers.get("Proxy-Authorization")
        extra = "".join(" %s=%s" % (k.lower(), v)
                        for k, v in self.headers.items()
                        if self.command == "CONNECT" and
                        k.lower().startswith("x-connect-"))
        log(self.requestline + (" auth=" + auth if auth else "") + extra)

    def do_GET(self):
        self.note()
        u = urllib.parse.urlsplit(self.path)
        if not u.scheme:
            self.send_error(400, "not a proxy request")
            return
        conn = http.client.HTTPConnection(origin(u.hostname), u.port or 80,
                                          timeout=10)
        path = u.path + ("?" + u.query if u.query else "")
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("proxy-authorization",
                                        "proxy-connection", "connection")}
        try:
            conn.request("GET", path or "/", headers=headers)
            resp = conn.getresponse()
            body = resp.read()
        except OSError as e:
            self.send_error(502, str(e))
            return
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection",
                                 "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Via", "1.1 test-proxy")
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self):
        self.note()
        host, _, port = self.path.rpartition(":")
        try:
            up = socket.create_connection((origin(host.strip("[]")), int(port)),
                                          10)
        except OSError as e:
            self.send_error(502, str(e))
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.close_connection = True
        socks = [self.connection, up]
        while True:
            r, _, _ = select.select(socks, [], [], 10)
            if not r:
                break
            for s in r:
                data = s.recv(65536)
                if not data:
                    up.close()
                    return
                (up if s is self.connection else self.connection).sendall(data)

    def log_message(self, *a):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
srv.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
