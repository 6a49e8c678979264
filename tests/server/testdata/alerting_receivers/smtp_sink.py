#!/usr/bin/env python3
"""A one-message SMTP sink for the email receiver's tests (plain SMTP, no TLS).

Usage: smtp_sink.py DIR [--reject-auth] [--no-auth] [--login-only]

Binds 127.0.0.1:0, writes the port to DIR/port, serves one SMTP session
(EHLO advertising AUTH PLAIN LOGIN, only LOGIN under --login-only, none
under --no-auth; AUTH PLAIN and LOGIN
accepted, or refused with 535 under --reject-auth; MAIL, RCPT, DATA, QUIT)
and writes what arrived to DIR/session.json: the EHLO name, the decoded AUTH
credentials, the envelope, the message as received (dot-unstuffed) and, as
Python's email package parses it, the Subject and each part's type and
decoded body.
Exits after the session (or after 30 s without a client).
"""
import base64
import email
import email.header
import email.policy
import json
import os
import socket
import sys


def main():
    out_dir = sys.argv[1]
    reject_auth = "--reject-auth" in sys.argv
    no_auth = "--no-auth" in sys.argv
    mechs = "LOGIN" if "--login-only" in sys.argv else "PLAIN LOGIN"
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(30)
    tmp = os.path.join(out_dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(tmp, os.path.join(out_dir, "port"))
    conn, _ = srv.accept()
    conn.settimeout(30)
    rf = conn.makefile("rb")
    session = {"ehlo": None, "auth": None, "mail_from": None, "rcpt": [],
               "data": None, "commands": []}

    def send(line):
        conn.sendall(line.encode() + b"\r\n")

    def readline():
        line = rf.readline()
        if not line:
            raise EOFError
        return line.decode("utf-8", "replace").rstrip("\r\n")

    send("220 sink.test ESMTP ready")
    try:
        while True:
            line = readline()
            verb = line.split(" ", 1)[0].upper()
            session["commands"].append(verb)
            arg = line[len(verb):].strip()
            if verb in ("EHLO", "HELO"):
                session["ehlo"] = arg
                if no_auth:
                    send("250 sink.test")
                else:
                    send("250-sink.test")
                    send("250 AUTH " + mechs)
            elif verb == "AUTH":
                parts = arg.split(" ")
                mech = parts[0].upper()
                if mech == "PLAIN":
                    if len(parts) > 1:
                        resp = parts[1]
                    else:
                        send("334 ")
                        resp = readline()
                    fields = base64.b64decode(resp).decode().split("\0")
                    session["auth"] = {"mech": "PLAIN", "identity": fields[0],
                                       "username": fields[1],
                                       "password": fields[2]}
                elif mech == "LOGIN":
                    send("334 " + base64.b64encode(b"Username:").decode())
                    user = base64.b64decode(readline()).decode()
                    send("334 " + base64.b64encode(b"Password:").decode())
                    pw = base64.b64decode(readline()).decode()
                    session["auth"] = {"mech": "LOGIN", "username": user,
                                       "password": pw}
                else:
                    send("504 unrecognized authentication type")
                    continue
                if reject_auth:
                    send("535 5.7.8 authentication credentials invalid")
                else:
                    send("235 2.7.0 authentication successful")
            elif verb == "MAIL":
                session["mail_from"] = arg
                send("250 ok")
            elif verb == "RCPT":
                session["rcpt"].append(arg)
                send("250 ok")
            elif verb == "DATA":
                send("354 end with <CRLF>.<CRLF>")
                lines = []
                while True:
                    raw = rf.readline()
                    if not raw:
                        raise EOFError
                    if raw == b".\r\n":
                        break
                    if raw.startswith(b".."):
                        raw = raw[1:]
                    lines.append(raw.decode("utf-8", "replace"))
                session["data"] = "".join(lines)
                send("250 ok queued")
            elif verb == "QUIT":
                send("221 bye")
                break
            elif verb in ("RSET", "NOOP"):
                send("250 ok")
            else:
                send("502 command not implemented")
    except (EOFError, OSError):
        pass
    conn.close()
    if session["data"] is not None:
        # Python's own MIME parser reads the message back: the headers
        # decoded, and each part's decoded body.
        msg = email.message_from_string(session["data"],
                                        policy=email.policy.default)
        session["subject"] = str(msg["Subject"])
        session["content_type"] = msg.get_content_type()
        session["parts"] = [
            {"type": part.get_content_type(),
             "body": part.get_payload(decode=True).decode("utf-8")}
            for part in msg.iter_parts()]
    tmp = os.path.join(out_dir, "session.tmp")
    with open(tmp, "w") as f:
        json.dump(session, f)
    os.rename(tmp, os.path.join(out_dir, "session.json"))


if __name__ == "__main__":
    main()
