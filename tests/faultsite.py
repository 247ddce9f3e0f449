"""A small news site for fault tests, served by a real HTTP server on 127.0.0.1 port 0.

A home page links ``CHANNELS`` channel pages; each channel lists ``PER_CHANNEL`` tiny articles
(``CHANNELS * PER_CHANNEL`` = 300 by default). Every page has a fixed ``Last-Modified`` and
answers HEAD and ``If-Modified-Since`` (304), so a re-run finds the home and channel pages
"unchanged" and reads their links no more: what a run lost on a crash stays lost unless the
crawl state kept it. Article answers are slowed by ``delay`` seconds so a crawl lasts long
enough to be killed at chosen moments; the server counts the GETs of every path.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHANNELS = 10
PER_CHANNEL = 30
LAST_MODIFIED = formatdate(1727769600, usegmt=True)  # 2024-10-01T08:00:00Z


def article_paths(channels: int = CHANNELS, per_channel: int = PER_CHANNEL) -> list[str]:
    """Every article path of the site."""
    return [f"/chan{c}/2024-10-01/article-story-number-{c}-{n}.html"
            for c in range(channels) for n in range(per_channel)]


def _page(title: str, body: str) -> bytes:
    return (f"<html><head><title>{title}</title></head><body>{body}</body></html>").encode()


class FaultSite:
    """The site's pages and its request log (thread-safe)."""

    def __init__(self, *, channels: int = CHANNELS, per_channel: int = PER_CHANNEL,
                 delay: float = 0.08) -> None:
        self.channels = channels
        self.per_channel = per_channel
        self.delay = delay
        self.gets: Counter[str] = Counter()
        self._lock = threading.Lock()

    def body(self, path: str) -> bytes | None:
        if path == "/":
            links = "".join(f'<li><a href="/chan{c}/">Channel {c}</a></li>'
                            for c in range(self.channels))
            return _page("Fault News", f"<nav><ul>{links}</ul></nav>")
        for c in range(self.channels):
            if path == f"/chan{c}/":
                links = "".join(
                    f'<li><a href="/chan{c}/2024-10-01/article-story-number-{c}-{n}.html">'
                    f"Story {c}-{n}</a></li>" for n in range(self.per_channel))
                return _page(f"Channel {c}", f'<a href="/">Home</a><ul>{links}</ul>')
        if path.startswith("/chan") and path.endswith(".html"):
            name = path.rsplit("/", 1)[-1][:-5]
            text = f"<p>Report {name}: the council met today and agreed on the budget.</p>" * 3
            return _page(f"Story {name}", f"<article><h1>Story {name}</h1>{text}</article>")
        return None

    def count(self, path: str) -> None:
        with self._lock:
            self.gets[path] += 1

    def articles_fetched(self) -> int:
        with self._lock:
            return sum(1 for p in self.gets if p.endswith(".html"))


def _handler(site: FaultSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002 - quiet
            pass

        def _answer(self, send_body: bool) -> None:
            body = site.body(self.path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if send_body and self.path.endswith(".html") and site.delay:
                time.sleep(site.delay)
            if self.headers.get("If-Modified-Since") == LAST_MODIFIED:
                self.send_response(304)
                self.send_header("Last-Modified", LAST_MODIFIED)
                self.end_headers()
                return
            if send_body:
                site.count(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Last-Modified", LAST_MODIFIED)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def do_GET(self):  # noqa: N802 - http.server's name
            self._answer(True)

        def do_HEAD(self):  # noqa: N802
            self._answer(False)

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a crawler killed mid-answer resets its connections: expected here


@contextmanager
def serve(site: FaultSite):
    """Serve ``site`` on 127.0.0.1 (a free port) in a thread; yield its base URL."""
    server = _Server(("127.0.0.1", 0), _handler(site))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
