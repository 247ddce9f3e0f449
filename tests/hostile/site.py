"""A hostile web site on loopback addresses: one handler per case, every connection recorded.

The site is a set of stdlib HTTP servers (one per loopback address it needs, each on port 0),
run in threads of the test process, so a test can look at what reached them: every accepted
connection (:attr:`HostileSite.connections`) and every request line
(:attr:`HostileSite.requests`). Handlers write raw bytes when they must (a reset mid-body, a
short body, a slow drip), so the crawler meets the faults a real server produces.

Adding a case::

    @case("my-case", article=True)          # served under /my-case/ on the main host
    def my_case(h: Handler, path: str) -> None:
        # every path under /my-case/ but the entry page: here, the article the entry links to
        h.send(200, article_page("My case").encode(), headers={"X-Odd": "yes"})

and a test in ``tests/hostile/test_*.py`` taking the ``hostile`` fixture
(``hostile.article("my-case")``, ``hostile.stat(...)``, ``hostile.log_lines(...)``,
``hostile.site.requests_to("/my-case/")``). Modules of cases are listed in
``tests/hostile/conftest.py`` (``CASE_MODULES``).

A case is reached from its entry page ``/<name>/``; with ``article=True`` the default entry
page links to one article-shaped URL (:meth:`Case.article_path`) that the handler serves, so the
link classification sends it to the article extractor. A case may also serve the entry page
itself (``path == "/<name>/"``), or live on another loopback address (``host=``: each host is
its own server, with its own politeness and robots.txt). The crawl of every case runs once per
test session (``tests/hostile/conftest.py``); each case's test then asserts on the stored
result, the log and the stats.

Run ``python -m tests.hostile.site`` to browse the site by hand: it prints the entry URLs.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: Loopback addresses of the site, by role. ``trap`` is never allowed to the crawler: nothing
#: may ever connect to it. The others are separate hosts for politeness and robots.txt cases.
HOSTS = {
    "main": "127.0.0.1",
    "trap": "127.0.0.9",
    "robots5xx": "127.0.0.21",
    "robots4xx": "127.0.0.22",
    "crawldelay": "127.0.0.23",
    "retryafter": "127.0.0.24",
    "bigrobots": "127.0.0.25",
    "other": "127.0.0.30",
    "partner": "127.0.0.31",
    "head405": "127.0.0.41",
    "head501": "127.0.0.42",
    "head403": "127.0.0.43",
}


@dataclass
class Case:
    """One hostile case: a handler for every path under ``/<name>/`` on ``host``.

    Attributes:
        name: path segment and test name.
        handler: ``handler(h, path)`` answers one request (``h.command`` is the method).
        host: key of :data:`HOSTS` serving the case.
        article: the default entry page links to :meth:`article` (an article-shaped URL).
        entry: entry path; default ``/<name>/``.
        crawl: which crawl of the session enters it: ``"main"`` (the one crawl of every
            case) or ``"rerun"`` (two crawls, two days apart, on a data folder of their own:
            cases that need a known page).
    """

    name: str
    handler: Callable[[Handler, str], None]
    host: str = "main"
    article: bool = False
    entry: str = ""
    crawl: str = "main"

    def __post_init__(self) -> None:
        self.entry = self.entry or f"/{self.name}/"

    def article_path(self) -> str:
        return f"/{self.name}/2024-10-01/{self.name}-article-of-the-day-1.html"


#: Every case, by name (its path segment).
CASES: dict[str, Case] = {}
#: Handlers of paths outside any case, by host key and path (robots.txt).
ROBOTS: dict[str, Callable[[Handler, str], None]] = {}
#: Entry URLs that are not a case's entry page (odd host spellings), built from the site.
EXTRA_ENTRIES: list[Callable[[HostileSite], str]] = []


def extra_entry(build: Callable[[HostileSite], str]) -> Callable[[HostileSite], str]:
    """Register ``build(site) -> URL`` as one more entry URL of the crawl."""
    EXTRA_ENTRIES.append(build)
    return build


def case(name: str, *, host: str = "main", article: bool = False, entry: str = "",
         crawl: str = "main") -> Callable[[Callable[[Handler, str], None]],
                                          Callable[[Handler, str], None]]:
    """Register ``handler`` as the case ``name`` (see :class:`Case`)."""
    def register(handler: Callable[[Handler, str], None]) -> Callable[[Handler, str], None]:
        if name in CASES:
            raise ValueError(f"hostile case {name!r} registered twice")
        CASES[name] = Case(name, handler, host=host, article=article, entry=entry, crawl=crawl)
        return handler
    return register


def robots(host: str) -> Callable[[Callable[[Handler, str], None]], Callable[[Handler, str], None]]:
    """Register the ``/robots.txt`` handler of ``host`` (default: an empty 404)."""
    def register(handler: Callable[[Handler, str], None]) -> Callable[[Handler, str], None]:
        ROBOTS[host] = handler
        return handler
    return register


def page(title: str, body: str = "") -> bytes:
    """A small UTF-8 HTML page."""
    return (f"<html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body>{body}</body></html>").encode()


def article_page(title: str, paragraphs: int = 6) -> str:
    """An article that the extractor keeps (title, date, several paragraphs), as text."""
    text = "".join(f"<p>Absatz {k}: Die Regierung berät heute über den Haushalt und die "
                   f"Opposition kritisiert die Pläne scharf.</p>" for k in range(paragraphs))
    return (f"<html><head><meta charset='utf-8'><title>{title}</title>"
            f"<meta property='article:published_time' content='2024-10-01T08:30:00+02:00'>"
            f"</head><body><article><h1>{title}</h1>{text}</article></body></html>")


class Handler(BaseHTTPRequestHandler):
    """Dispatch each request to its case by the first path segment; record it."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib's name)
        pass

    @property
    def site(self) -> HostileSite:
        return self.server.site

    @property
    def host_key(self) -> str:
        return self.server.host_key

    def send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
             content_type: str = "text/html; charset=utf-8") -> None:
        """Answer ``status`` with ``body`` (Content-Length set; no body for HEAD)."""
        self.send_response(status)
        headers = {"Content-Type": content_type, **(headers or {})}
        for name, value in headers.items():
            if value is not None:
                self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _dispatch(self) -> None:
        path = self.path.split("?", 1)[0]
        self.site.record_request(self.host_key, self.command, self.path)
        try:
            if path == "/robots.txt":
                handler = ROBOTS.get(self.host_key)
                if handler is None:
                    self.send(404, b"", content_type="text/plain")
                else:
                    handler(self, path)
                return
            name = path.strip("/").split("/", 1)[0]
            entry = CASES.get(name)
            if entry is None or entry.host != self.host_key:
                self.send(404, page("not found"))
                return
            if path == entry.entry and entry.article:
                link = entry.article_path()
                self.send(200, page(entry.name, f"<ul><li><a href='{link}'>Artikel</a></li></ul>"))
                return
            entry.handler(self, path)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = _dispatch  # noqa: N815 (stdlib's names)
    do_HEAD = _dispatch  # noqa: N815


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, site: HostileSite, host_key: str) -> None:
        self.site = site
        self.host_key = host_key
        super().__init__((HOSTS[host_key], 0), Handler)

    def verify_request(self, request: object, client_address: object) -> bool:
        self.site.record_connection(self.host_key, client_address)
        return True


class HostileSite:
    """Every server of the site, started on port 0 of its loopback address.

    Attributes:
        connections: ``(host key, client address, time)`` of every accepted connection.
        requests: ``(host key, method, path with query, time)`` of every request.
    """

    def __init__(self, hosts: tuple[str, ...] = tuple(HOSTS)) -> None:
        self.connections: list[tuple[str, object, float]] = []
        self.requests: list[tuple[str, str, str, float]] = []
        self._lock = threading.Lock()
        self.servers = {key: _Server(self, key) for key in hosts}
        self._threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05},
                                          daemon=True) for s in self.servers.values()]
        for thread in self._threads:
            thread.start()

    def record_connection(self, host_key: str, client: object) -> None:
        with self._lock:
            self.connections.append((host_key, client, time.time()))

    def record_request(self, host_key: str, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((host_key, method, path, time.time()))

    def base(self, host_key: str = "main") -> str:
        """``http://ADDRESS:PORT`` of a host (no trailing slash)."""
        address, port = self.servers[host_key].server_address[:2]
        return f"http://{address}:{port}"

    def url(self, path: str, host_key: str = "main") -> str:
        return self.base(host_key) + path

    def entry_urls(self, crawl: str = "main") -> list[str]:
        """The entry URL of every registered case of ``crawl``, then (main crawl) the extra
        entries."""
        return ([self.url(c.entry, c.host) for c in CASES.values() if c.crawl == crawl]
                + ([build(self) for build in EXTRA_ENTRIES] if crawl == "main" else []))

    def port(self, host_key: str) -> int:
        return int(self.servers[host_key].server_address[1])

    def requests_to(self, prefix: str, host_key: str = "main") -> list[tuple[str, str, str, float]]:
        """Requests for paths starting with ``prefix`` on ``host_key``."""
        with self._lock:
            return [r for r in self.requests if r[0] == host_key and r[2].startswith(prefix)]

    def connections_to(self, host_key: str) -> list[tuple[str, object, float]]:
        with self._lock:
            return [c for c in self.connections if c[0] == host_key]

    def close(self) -> None:
        for server in self.servers.values():
            server.shutdown()
            server.server_close()


def main() -> None:  # pragma: no cover - manual use
    from tests.hostile.conftest import CASE_MODULES  # registers the cases

    site = HostileSite()
    assert CASE_MODULES
    for url in site.entry_urls():
        print(url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        site.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
