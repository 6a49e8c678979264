#!/usr/bin/env python3
"""The demo's alert console: a webhook receiver plus a rule watcher.

  alert_sink.py --listen 127.0.0.1:9093 --poll http://127.0.0.1:9090 \
      [--state sd/alerts.json] [--t0 EPOCH]

- Receives the notifications of Vigil's built-in router (Alertmanager's
  webhook message, POSTed to any path but /api/v2/alerts: the receiver's
  name, the group and its firing and resolved alerts) and prints one line
  per notification and one per alert in it.
- Also stands in for an external Alertmanager: what a Prometheus server
  sends to one (`POST /api/v2/alerts`, a JSON list of {labels, annotations,
  startsAt, endsAt, generatorURL}) prints a line when an alert starts
  firing or is resolved. Repeats are not printed.
- Polls the server's `/api/v1/alerts` every 2 s and prints each alert's
  rule state as it changes: pending, firing, inactive. Alertmanager never
  sees `pending`; this is where the `for:` wait shows.
- With --state, keeps a JSON file of the alert names seen firing and
  resolved (run.sh --for reads it).

Python 3 standard library only. Stops on SIGINT/SIGTERM.
"""
import argparse
import datetime
import http.server
import json
import os
import signal
import sys
import threading
import time
import urllib.request

SHOWN = ("node", "instance", "gpu", "reason")
lock = threading.Lock()
seen = {"firing": set(), "resolved": set(), "pending": set()}
state_file = None


t0 = None


def now():
    """Wall clock, and with --t0 the time since the demo started (+m:ss)."""
    s = datetime.datetime.now().strftime("%H:%M:%S")
    if t0 is not None:
        d = int(time.time() - t0)
        s += f" +{d // 60}:{d % 60:02d}"
    return s


def describe(labels):
    inner = ",".join(f'{k}="{labels[k]}"' for k in SHOWN if k in labels)
    return f"{labels.get('alertname', '?')}{{{inner}}}"


def emit(source, what, labels, text=""):
    sev = labels.get("severity", "")
    line = f"{now()}  [{source}] {what:<9} {describe(labels)} {sev}"
    if text:
        line += f": {text}"
    with lock:
        print(line, flush=True)
        seen.setdefault(what.strip().lower(), set()).add(labels.get("alertname", "?"))
        save_state()


def save_state():
    """Writes the --state file (the caller holds the lock)."""
    if state_file:
        with open(state_file + ".tmp", "w") as f:
            json.dump({k: sorted(v) for k, v in seen.items()}, f)
        os.replace(state_file + ".tmp", state_file)


def key(labels):
    return tuple(sorted(labels.items()))


def parse_time(s):
    """RFC 3339 with up to nanoseconds, e.g. 2026-01-01T00:00:00.123456789Z."""
    s = s.replace("Z", "+00:00")
    if "." in s:
        head, rest = s.split(".", 1)
        n = len(rest) - len(rest.lstrip("0123456789"))
        s = f"{head}.{rest[:n][:6].ljust(6, '0')}{rest[n:]}"
    t = datetime.datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=datetime.timezone.utc)


class Sink(http.server.BaseHTTPRequestHandler):
    notified = {}  # alert key -> "FIRING" or "RESOLVED"

    def do_POST(self):
        if self.path.rstrip("/") != "/api/v2/alerts":
            self.webhook()
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            alerts = json.loads(body)
        except ValueError as e:
            self.send_error(400, f"not JSON: {e}")
            return
        utc = datetime.datetime.now(datetime.timezone.utc)
        for a in alerts:
            labels = a.get("labels", {})
            ends = a.get("endsAt")
            try:
                resolved = bool(ends) and not ends.startswith("0001") and parse_time(ends) <= utc
            except ValueError:
                resolved = False
            status = "RESOLVED" if resolved else "FIRING"
            k = key(labels)
            if Sink.notified.get(k) != status:
                Sink.notified[k] = status
                emit("alertmanager", status, labels,
                     "" if resolved else a.get("annotations", {}).get("summary", ""))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def webhook(self):
        """One notification of the built-in router (webhook message v4)."""
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            msg = json.loads(body)
            alerts = msg["alerts"]
        except (ValueError, KeyError, TypeError) as e:
            self.send_error(400, f"not a webhook message: {e}")
            return
        firing = [a for a in alerts if a.get("status") == "firing"]
        with lock:
            print(f"{now()}  [router] notify    {msg.get('receiver', '?')}: "
                  f"{len(firing)} firing, {len(alerts) - len(firing)} resolved, "
                  f"group {msg.get('groupKey', '?')}", flush=True)
        for a in alerts:
            labels = a.get("labels", {})
            status = a.get("status", "?")
            emit("router", status.upper(), labels,
                 a.get("annotations", {}).get("summary", "") if status == "firing" else "")
            with lock:
                seen.setdefault("notified_" + status, set()).add(labels.get("alertname", "?"))
                save_state()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):  # Alertmanager's readiness probes, for curl users
        if self.path in ("/-/ready", "/-/healthy"):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"OK")
        else:
            self.send_error(404)

    def log_message(self, *args):
        pass


def poll(url, stop):
    last = {}
    failing = False
    while not stop.wait(2):
        try:
            with urllib.request.urlopen(url + "/api/v1/alerts", timeout=5) as r:
                alerts = json.load(r)["data"]["alerts"]
            failing = False
        except Exception as e:  # the server may not be up yet
            if not failing and last:
                print(f"{now()}  [rules] cannot read {url}/api/v1/alerts: {e}", flush=True)
            failing = True
            continue
        cur = {key(a["labels"]): (a["state"], a["labels"]) for a in alerts}
        for k, (st, labels) in cur.items():
            if last.get(k, (None,))[0] != st:
                emit("rules", st.upper(), labels)
        for k, (st, labels) in last.items():
            if k not in cur:
                emit("rules", "INACTIVE", labels)
        last = cur


def main():
    global state_file, t0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1:9093")
    p.add_argument("--poll", help="Vigil's URL, e.g. http://127.0.0.1:9090")
    p.add_argument("--state", help="JSON file of alert names seen per state")
    p.add_argument("--t0", type=float, help="epoch seconds the demo started")
    a = p.parse_args()
    state_file = a.state
    t0 = a.t0
    host, port = a.listen.rsplit(":", 1)
    srv = http.server.ThreadingHTTPServer((host, int(port)), Sink)
    srv.daemon_threads = True
    stop = threading.Event()

    def on_signal(*_):
        stop.set()
        threading.Thread(target=srv.shutdown).start()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    if a.poll:
        threading.Thread(target=poll, args=(a.poll, stop), daemon=True).start()
    srv.serve_forever(poll_interval=0.5)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
