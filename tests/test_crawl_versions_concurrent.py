"""Article versions stay exact when crawls overlap: two ``scrapy crawl news`` processes on one data
folder, and two distributed workers on one Redis and one store, re-crawl the same 50 edited
articles; each round must add exactly 50 version documents, none holding the current text. Five
rounds each, on a small site served in this process (127.0.0.1)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore
from tests.helpers import REPO, stats_of
from tests.redis_helpers import REDIS_URL, delete_namespace, redis_client

pytestmark = pytest.mark.slow

ARTICLES = 50
#: Rounds of each test: 5 with NEWSCRAWL_TEST_FULL=1 (the acceptance size), 3 by default.
ROUNDS = 5 if os.environ.get("NEWSCRAWL_TEST_FULL") == "1" else 3
START = dt.datetime(2024, 10, 2, tzinfo=dt.timezone.utc)
SETTINGS = {"LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": "False",
            "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.1,localhost",
            "NEWSCRAWL_HEADPROBE_VERIFY_START": "0", "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": "0"}


def _path(n: int) -> str:
    return f"/politik/2024-10-01/meldung-{n}.html"


class _Site(BaseHTTPRequestHandler):
    """Home page, a channel page listing 50 articles; version ``server.version`` of the text."""

    def log_message(self, *args) -> None:  # quiet
        pass

    def _page(self) -> bytes | None:
        version = self.server.version  # type: ignore[attr-defined]
        nav = '<nav><a href="/">Start</a> <a href="/politik/">Politik</a></nav>'
        head = '<html lang="de"><head><meta charset="utf-8"><title>{}</title></head><body>'
        if self.path == "/":
            teasers = "".join(f'<article><a href="{_path(n)}"><h2>Meldung {n}</h2></a></article>'
                              for n in (1, 2))
            return (head.format("Start") + nav + teasers + "</body></html>").encode()
        if self.path == "/politik/":
            items = "".join(f'<li><a href="{_path(n)}">Meldung {n}: Ausschuss berät</a></li>'
                            for n in range(1, ARTICLES + 1))
            return (head.format("Politik") + nav + f"<ul>{items}</ul></body></html>").encode()
        for n in range(1, ARTICLES + 1):
            if self.path == _path(n):
                text = "".join(f"<p>Absatz {k} der Meldung {n}: Der Ausschuss berät in Fassung "
                               f"{version} über die Vorlage, die Opposition kündigt Widerstand "
                               f"gegen die Pläne der Regierung an.</p>" for k in range(1, 5))
                return (head.format(f"Meldung {n}: Ausschuss berät") + nav
                        + f"<article><h1>Meldung {n}: Ausschuss berät</h1>{text}</article>"
                        + "</body></html>").encode()
        return None

    def _answer(self, head: bool) -> None:
        if self.path == "/robots.txt":
            body, headers = b"User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}
            status = 200
        elif (body := self._page()) is not None:
            etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            headers = {"Content-Type": "text/html; charset=utf-8", "ETag": etag,
                       "Last-Modified": formatdate(START.timestamp(), usegmt=True)}
            status = 200
        else:
            status, body, headers = 404, b"not found", {"Content-Type": "text/plain"}
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(head=True)


@contextmanager
def site() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    httpd.version = 1  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def _start(url: str, data: Path, now: dt.datetime, log: Path, **settings: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI", "REDIS_URL")}
    env["NEWSCRAWL_DATA_DIR"] = str(data)
    cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={url}",
           "-a", f"now={now.isoformat()}"]
    for key, value in {**SETTINGS, **settings}.items():
        cmd += ["-s", f"{key}={value}"]
    with open(log, "w", encoding="utf-8") as out:
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)


def _run_together(url: str, data: Path, now: dt.datetime, tmp: Path, name: str,
                  **settings: str) -> list[dict]:
    logs = [tmp / f"{name}-{i}.log" for i in range(2)]
    procs = [_start(url, data, now, log, **settings) for log in logs]
    for proc in procs:
        proc.wait(timeout=300)
    texts = [log.read_text(encoding="utf-8") for log in logs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(t[-3000:] for t in texts)
    return [stats_of(t) for t in texts]


def _check_round(store: NewsStore, expected: int, version: int) -> None:
    assert store.versions.count_documents({}) == expected
    current = {a["fp"]: a["text"] for a in store.articles.find({}, {"fp": 1, "text": 1})}
    assert sum(f"in Fassung {version} " in text for text in current.values()) == ARTICLES
    for kept in store.versions.find({}, {"fp": 1, "text": 1, "version": 1}):
        assert kept["text"] != current[kept["fp"]], "the current text was kept as old"
    per_article = {}
    for kept in store.versions.find({}, {"fp": 1, "version": 1}):
        per_article.setdefault(kept["fp"], []).append(kept["version"])
    assert all(sorted(v) == list(range(1, version)) for v in per_article.values())


def _recrawl_rounds(tmp: Path, run, name: str) -> list[int]:
    """Round 0 stores version 1 (one process); rounds 1..5 edit every article and run ``run``.
    Returns per round the changed articles both crawls together saw (a measure of overlap)."""
    data = tmp / "data"
    seen = []
    with site() as httpd, EmbeddedMongo(data) as server:  # held: the crawls reuse it
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        proc = _start(url, data, START, tmp / f"{name}-first.log")
        assert proc.wait(timeout=300) == 0, (tmp / f"{name}-first.log").read_text()[-3000:]
        store = NewsStore.connect(server.uri)
        try:
            assert store.articles.count_documents({}) == ARTICLES
            for rnd in range(1, ROUNDS + 1):
                httpd.version = rnd + 1  # type: ignore[attr-defined]
                stats = run(url, data, START + dt.timedelta(days=30 * rnd), tmp, f"{name}{rnd}")
                seen.append(sum(int(s.get(key, 0)) for s in stats
                                for key in ("newscrawl/revisit/changed/head",
                                            "newscrawl/revisit/changed/fingerprint")))
                _check_round(store, ARTICLES * rnd, rnd + 1)
        finally:
            store.close()
    return seen


def test_two_crawls_at_once_keep_each_change_once(tmp_path):
    seen = _recrawl_rounds(tmp_path, _run_together, "together")
    assert all(n >= ARTICLES for n in seen), seen  # every change seen by at least one crawl
    print(f"changed articles seen by the two crawls per round: {seen}")


def test_two_distributed_workers_keep_each_change_once(tmp_path):
    client = redis_client()
    namespace = f"nctest-versions-{uuid.uuid4().hex[:8]}"
    settings = {"NEWSCRAWL_DISTRIBUTED": "True", "REDIS_URL": REDIS_URL,
                "NEWSCRAWL_REDIS_NAMESPACE": namespace, "NEWSCRAWL_REDIS_IDLE_CLOSE": "1.5",
                "NEWSCRAWL_REDIS_WORKER_TIMEOUT": "3"}

    def workers(url, data, now, tmp, name):
        return _run_together(url, data, now, tmp, name, **settings)

    try:
        seen = _recrawl_rounds(tmp_path, workers, "workers")
    finally:
        delete_namespace(client, namespace)
    assert all(n >= ARTICLES for n in seen), seen
    print(f"changed articles seen by the two workers per round: {seen}")
