"""A webhook receiver on 127.0.0.1 (a free port) for the alert tests: records every POST with
the time it arrived, and answers the statuses it is told to (then 200)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """``with Receiver(statuses=[500]) as r: ... r.url ... r.calls`` (each call: ``t``,
    ``headers`` (lower-case names), ``body`` bytes, ``json``, ``status`` answered)."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.calls.append({"t": time.time(), "status": status, "body": body,
                                           "headers": {k.lower(): v for k, v in self.headers.items()},
                                           "json": json.loads(body or b"null")})
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def ok_calls(self) -> list[dict[str, Any]]:
        with self.lock:
            return [c for c in self.calls if c["status"] == 200]
