#!/usr/bin/env python3
"""A stand-in for the Agones SDK sidecar's REST API, for cradle-server's tests.

    agones_standin.py PORT_FILE CALLS_FILE [PORT [REFUSED_FILE]]

Listens on 127.0.0.1 at PORT (default: a free port), writes the port to PORT_FILE and
serves the calls of Agones' sdk.swagger.json that cradle-server makes, as the sidecar's
gateway does:

  POST /ready, /health, /shutdown, /allocate, /reserve   a JSON object body -> 200 {}
  PUT  /metadata/label  {"key": K, "value": V}           -> 200 {}
  GET  /gameserver                                       -> 200 {GameServer}
  GET  /watch/gameserver   a stream (chunked) of {"result": {GameServer}} lines: the
                           GameServer now, then one line per change

Every call appends "<monotonic seconds> <path> <body>" to CALLS_FILE. A call that breaks
the API (a wrong method, a Content-Type other than application/json on a body, a body
that is not a JSON object, a label whose key or value Kubernetes would refuse) gets
400 or 405 and a line "<seconds> BAD <path> <why>" in CALLS_FILE.bad, which a test
expects to stay empty. Anything else gets 404.

The GameServer's status.state follows the calls: Scheduled, Ready after /ready,
Allocated after /allocate or SIGUSR2 (an allocation from outside, as a matchmaker's),
Shutdown after /shutdown; labels set show in object_meta.labels with Agones' prefix
"agones.dev/sdk-".

With REFUSED_FILE it starts as a sidecar that is not ready yet: every call gets 503 and
its line goes to REFUSED_FILE instead, until SIGUSR1 (installed before PORT_FILE is
written); from then on it answers as above. Runs until killed.
"""
import http.server
import json
import os
import re
import signal
import sys
import threading
import time

LABEL_KEY = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
POSTS = ("/ready", "/health", "/shutdown", "/allocate", "/reserve")
STATE_AFTER = {"/ready": "Ready", "/allocate": "Allocated", "/shutdown": "Shutdown"}


class World:
    """The GameServer as the sidecar knows it; watchers wait on `changed`."""

    def __init__(self):
        self.lock = threading.Condition()
        self.state = "Scheduled"
        self.labels = {}
        self.version = 0

    def document(self):
        return {"object_meta": {"name": "cradle-test", "namespace": "default",
                                "labels": dict(self.labels)},
                "status": {"state": self.state, "address": "127.0.0.1"}}

    def change(self, state=None, label=None):
        with self.lock:
            if state:
                self.state = state
            if label:
                self.labels["agones.dev/sdk-" + label[0]] = label[1]
            self.version += 1
            self.lock.notify_all()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as libcurl reuses its connection

    def log_message(self, fmt, *args):  # quiet
        pass

    def record(self, body, bad=None):
        up = self.server.refused_file is None
        target = self.server.calls_file if up else self.server.refused_file
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"{time.monotonic():.3f} {self.path} {body or '-'}\n")
        if bad and up:
            with open(self.server.calls_file + ".bad", "a", encoding="utf-8") as f:
                f.write(f"{time.monotonic():.3f} BAD {self.command} {self.path} {bad}\n")
        return up

    def reply(self, status, document):
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(length).decode("utf-8", "replace") if length else ""

    def check_body(self, text):
        """The JSON object a body must be, or (None, why)."""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if kind != "application/json":
            return None, f"Content-Type {kind or 'missing'}"
        try:
            value = json.loads(text)
        except ValueError as e:
            return None, f"body is not JSON: {e}"
        if not isinstance(value, dict):
            return None, "body is not a JSON object"
        return value, None

    def refuse(self, text, status, why):
        if self.record(text, why):
            self.reply(status, {"error": why})
        else:
            self.reply(503, {})

    def do_POST(self):
        text = self.body()
        if self.path not in POSTS:
            return self.refuse(text, 404 if self.path not in ("/metadata/label", "/gameserver") else 405,
                               "no such POST")
        value, why = self.check_body(text)
        if why:
            return self.refuse(text, 400, why)
        if self.path != "/reserve" and value:
            return self.refuse(text, 400, "the body must be {}")
        if not self.record(text):
            return self.reply(503, {})
        if self.path in STATE_AFTER:
            self.server.world.change(state=STATE_AFTER[self.path])
        self.reply(200, {})

    def do_PUT(self):
        text = self.body()
        if self.path != "/metadata/label":
            return self.refuse(text, 405 if self.path in POSTS else 404, "no such PUT")
        value, why = self.check_body(text)
        if not why:
            key, val = value.get("key"), value.get("value")
            if set(value) != {"key", "value"} or not isinstance(key, str) or not isinstance(val, str):
                why = "a label is {\"key\": string, \"value\": string}"
            elif not LABEL_KEY.match(key) or not LABEL_VALUE.match(val):
                why = f"not a Kubernetes label: {key}={val}"
        if why:
            return self.refuse(text, 400, why)
        if not self.record(text):
            return self.reply(503, {})
        self.server.world.change(label=(key, val))
        self.reply(200, {})

    def do_GET(self):
        if self.path == "/gameserver":
            if not self.record(""):
                return self.reply(503, {})
            with self.server.world.lock:
                return self.reply(200, self.server.world.document())
        if self.path != "/watch/gameserver":
            return self.refuse("", 405 if self.path in POSTS else 404, "no such GET")
        if not self.record(""):
            return self.reply(503, {})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        world, seen = self.server.world, -1
        try:
            while True:
                with world.lock:
                    while world.version == seen:
                        world.lock.wait(1.0)
                    seen = world.version
                    line = (json.dumps({"result": world.document()}) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    port_file, calls_file = sys.argv[1], sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    http.server.ThreadingHTTPServer.daemon_threads = True
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.calls_file = calls_file
    server.refused_file = sys.argv[4] if len(sys.argv) > 4 else None
    server.world = World()

    def come_up(signum, frame):
        server.refused_file = None

    def allocated(signum, frame):  # a matchmaker's allocation, from outside
        threading.Thread(target=server.world.change, kwargs={"state": "Allocated"}).start()

    signal.signal(signal.SIGUSR1, come_up)
    signal.signal(signal.SIGUSR2, allocated)
    tmp = port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
