#!/usr/bin/env python3
"""A stand-in for the Agones SDK sidecar's REST API, for cradle-server's tests.

    agones_standin.py PORT_FILE CALLS_FILE [PORT [REFUSED_FILE]]

Listens on 127.0.0.1 at PORT (default: a free port), writes the port to PORT_FILE, and
answers POST /ready, /health, /shutdown (and the SDK's other POSTs) with 200
and "{}", appending one line "<monotonic seconds> <path> <body>" per call to
CALLS_FILE. Anything else gets 404. Runs until killed.

With REFUSED_FILE it starts as a sidecar that is not ready yet: every POST
gets 503 and its line goes to REFUSED_FILE instead, until SIGUSR1 (installed
before PORT_FILE is written); from then on it answers as above.
"""
import http.server
import os
import signal
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        ok = self.path in ("/ready", "/health", "/shutdown", "/allocate", "/reserve")
        up = self.server.refused_file is None
        with open(self.server.calls_file if up else self.server.refused_file, "a", encoding="utf-8") as f:
            f.write(f"{time.monotonic():.3f} {self.path} {body or '-'}\n")
        self.send_response((200 if ok else 404) if up else 503)
        self.send_header("Content-Type", "application/json")
        reply = b"{}"
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, fmt, *args):  # quiet
        pass


def main():
    port_file, calls_file = sys.argv[1], sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    http.server.HTTPServer.allow_reuse_address = True
    server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    server.calls_file = calls_file
    server.refused_file = sys.argv[4] if len(sys.argv) > 4 else None

    def come_up(signum, frame):
        server.refused_file = None

    signal.signal(signal.SIGUSR1, come_up)
    tmp = port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
