"""The server behind ab-steady and ab-drift: answers every request after FAST seconds, and after SLOW seconds
from AFTER seconds past its first request on (a stack whose speed changes mid-run).

    python3 speed-change-server.py PORT FAST SLOW AFTER
"""

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, fast, slow, after = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
first: list[float] = []


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        now = time.monotonic()
        if not first:
            first.append(now)
        time.sleep(fast if now - first[0] < after else slow)
        body = b"Hello bar\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
