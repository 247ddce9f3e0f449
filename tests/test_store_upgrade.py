"""NewsStore.upgrade: a store written by older code is brought to schema 2, every stored URL
fingerprint recomputed from the stored URLs with the crawl's one fingerprint (``www.`` folded),
records that now collide merged; idempotent.

The last test opens a REAL data folder written by the code of commit b5b2faf (its own ``scrapy
crawl news`` against a loopback site whose pages link to each other under ``news.example.com``
and ``www.news.example.com``), upgrades it and re-crawls it incrementally with this code.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from hashlib import sha1
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from newscrawl.algorithms.fingerprint import url_fingerprint_bytes
from newscrawl.algorithms.urls import url_fingerprint
from newscrawl.store import SCHEMA_VERSION, NewsStore, StoreError
from newscrawl.store.upgrade import PROBE_URLS
from newscrawl.fingerprint import NewsRequestFingerprinter
from tests.helpers import REPO, open_store, stats_of

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=UTC)
OLD_COMMIT = "b5b2faf"


def folded(url: str) -> str:
    """The crawl's one page fingerprint at the default settings (``www.`` folded, no aliases)."""
    return url_fingerprint_bytes(url).hex()


def at(hours: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours)


# -- upgrade on documents written the old way -----------------------------------------------------

A_BARE, A_WWW = "http://news.example.com/a.html", "http://www.news.example.com/a.html"
B_WWW, HOME = "http://www.news.example.com/b.html", "http://news.example.com/"


def old_record(url: str, **fields: Any) -> dict[str, Any]:
    fp = url_fingerprint(url)
    return {"_id": fp, "fp": fp, "url": url, "role": "content", "last_visit": None, "visits": 0,
            "first_seen": T0, "seed": False, "history": [], "pagerank": 0.5, **fields}


def old_page(kind: str, url: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "fp": url_fingerprint(url), "url": url, "site": "example.com",
            "title": url, "text": "text", "weight": 0.5, **fields}


def old_link(source: str, target: str, **fields: Any) -> dict[str, Any]:
    return {"source_fp": url_fingerprint(source), "target_fp": url_fingerprint(target),
            "source_url": source, "target_url": target, "link_class": "downward", **fields}


def write_old_store(store: NewsStore) -> None:
    """Documents as b5b2faf stored them: keys from ``url_fingerprint`` (no www folding), and
    versions without ``content_fp`` (no unique ``(fp, content_fp)`` index before schema 3)."""
    store.versions.drop_index("fp_1_content_fp_1")
    store.pages.insert_many([
        old_record(A_BARE, last_visit=at(5), visits=3, first_seen=at(1), weight=0.2),
        old_record(A_WWW, last_visit=at(2), visits=1, first_seen=T0, seed=True, weight=0.7),
        old_record(B_WWW, visits=0),
        old_record(HOME, role="entry", seed=True, last_visit=at(5), visits=3),
    ])
    store.write_pages([old_page("article", A_WWW, fetched_at=at(2), weight=0.9)], now=T0)
    store.write_pages([old_page("article", A_BARE, fetched_at=at(5), title="newest")], now=at(4))
    store.write_pages([old_page("node", HOME, links=[old_link(HOME, A_BARE), old_link(HOME, A_WWW),
                                                     old_link(HOME, B_WWW)], fetched_at=at(5))],
                      now=at(5))
    store.versions.insert_many([
        {"fp": url_fingerprint(A_WWW), "url": A_WWW, "version": 1, "archived_at": at(1)},
        {"fp": url_fingerprint(A_BARE), "url": A_BARE, "version": 1, "archived_at": at(3)},
        {"fp": url_fingerprint(A_WWW), "url": A_WWW, "version": 2, "archived_at": at(4)},
    ])
    store.stage("run-x", "items", [old_page("node", B_WWW, links=[old_link(B_WWW, A_WWW)])])
    store.stage("run-x", "pages", [old_record(B_WWW)])


def all_keys_follow(store: NewsStore, page_fp: Callable[[str], str]) -> None:
    for rec in store.pages.find():
        assert rec["_id"] == rec["fp"] == page_fp(rec["url"]), rec["url"]
    for name in ("articles", "nodes", "article_versions"):
        for doc in store.db[name].find():
            assert doc["fp"] == page_fp(doc["url"]), (name, doc["url"])
    for link in store.links.find():
        assert (link["source_fp"], link["target_fp"]) == \
            (page_fp(link["source_url"]), page_fp(link["target_url"]))


def test_a_new_store_gets_the_schema_document(store: NewsStore) -> None:
    assert store.schema_version() == 1
    counts = store.upgrade(folded)
    assert counts["version"] == SCHEMA_VERSION and counts["from_version"] == 1
    assert not any(v for k, v in counts.items() if k not in ("version", "from_version"))
    assert store.schema_version() == SCHEMA_VERSION
    meta = store.db["meta"].find_one({"_id": "schema"})
    assert meta["fingerprints"] == [folded(url) for url in PROBE_URLS]
    assert store.upgrade(folded)["from_version"] == SCHEMA_VERSION  # current: nothing to do


def test_upgrade_rekeys_from_the_urls_and_merges_collisions(store: NewsStore) -> None:
    write_old_store(store)
    counts = store.upgrade(folded)
    all_keys_follow(store, folded)
    assert (counts["pages"], counts["pages_merged"]) == (2, 1)  # A_WWW and B_WWW move
    assert counts["articles_merged"] == 1 and counts["links_merged"] == 1
    assert counts["staging"] == 2 and counts["versions"] == 2
    # the most recently visited record survives, with the earliest first_seen, the seed flag
    # and the highest weight of the merged ones; its PageRank is recomputed by the next run
    rec = store.pages.find_one({"_id": folded(A_BARE)})
    assert rec["url"] == A_BARE and rec["visits"] == 3 and rec["last_visit"] == at(5)
    assert rec["first_seen"] == T0 and rec["seed"] is True and rec["role"] == "entry"
    assert rec["weight"] == 0.7 and rec["pagerank"] is None
    assert store.pages.count_documents({}) == 3
    # the most recently fetched article survives, with the earliest first_seen, highest weight
    (art,) = store.articles.find()
    assert art["title"] == "newest" and art["first_seen"] == at(2) and art["weight"] == 0.9
    assert store.links.count_documents({}) == 2
    # the merged article's versions, renumbered in the order they were archived
    versions = sorted((v["version"], v["archived_at"]) for v in store.versions.find())
    assert versions == [(1, at(1)), (2, at(3)), (3, at(4))]
    staged = {e["target"]: e["doc"] for e in store.staging.find({"run": "run-x"})}
    assert staged["pages"]["_id"] == staged["pages"]["fp"] == folded(B_WWW)
    assert staged["items"]["links"][0]["target_fp"] == folded(A_BARE)
    # idempotent: nothing left to do, nothing changes
    before = sorted(str(d) for d in store.pages.find())
    again = store.upgrade(folded)
    assert not any(v for k, v in again.items() if k not in ("version", "from_version"))
    assert sorted(str(d) for d in store.pages.find()) == before
    assert store.merge_staged("run-x")["pages"] == 1  # the staged run merges as usual


def test_a_changed_fingerprint_rekeys_again(store: NewsStore) -> None:
    write_old_store(store)
    store.upgrade(folded)
    unfolded = url_fingerprint  # NEWSCRAWL_ALIAS_FOLD_WWW switched off
    counts = store.upgrade(unfolded)
    assert counts["from_version"] == SCHEMA_VERSION and counts["pages"] > 0
    all_keys_follow(store, unfolded)


def test_keys_that_move_onto_each_other_lose_nothing(store: NewsStore) -> None:
    """x's record moves to y's key while y's moves on to z's: written in that order."""
    urls = {"x": "http://s.example/x", "y": "http://s.example/y", "z": "http://s.example/z"}
    chain = {urls["x"]: "y", urls["y"]: "z", urls["z"]: "q"}
    store.pages.insert_many([{"_id": k, "fp": k, "url": urls[k], "visits": i}
                             for i, k in enumerate("xyz")])
    store.versions.drop_index("fp_1_content_fp_1")  # as before schema 3
    store.versions.insert_many([{"fp": k, "url": urls[k], "version": 1} for k in "xyz"])
    counts = store.upgrade(lambda url: chain.get(url, "probe"))
    assert counts["pages"] == 3 and counts["pages_merged"] == 0
    assert {d["_id"]: d["visits"] for d in store.pages.find()} == {"y": 0, "z": 1, "q": 2}
    assert sorted((v["fp"], v["version"]) for v in store.versions.find()) == \
        [("q", 1), ("y", 1), ("z", 1)]


def test_a_store_of_newer_code_is_refused(store: NewsStore) -> None:
    store.db["meta"].insert_one({"_id": "schema", "version": SCHEMA_VERSION + 1})
    with pytest.raises(StoreError, match="schema version"):
        store.upgrade(folded)


# -- a real data folder written by b5b2faf ---------------------------------------------------------

SITE_HOSTS = ("news.example.com", "www.news.example.com")
BARE, WWW = (f"http://{host}" for host in SITE_HOSTS)
LAST_MODIFIED = "Mon, 30 Sep 2024 08:00:00 GMT"


def article_path(n: int) -> str:
    return f"/politik/2024-10-0{n}/meldung-nummer-{n}-aus-der-hauptstadt-{n}.html"


def _page(path: str) -> str | None:
    """HTML of ``path`` (the same under both host names), or None (404). The home page and the
    channel link to the articles under both names, article 1 under both."""
    head = '<html lang="de"><head><meta charset="utf-8"><title>{}</title>{}</head><body>'
    nav = f'<nav><a href="/">Start</a> <a href="/politik/">Politik</a> ' \
          f'<a href="{WWW}/wirtschaft/">Wirtschaft</a></nav>'
    if path == "/":
        teasers = "".join(f'<article><a href="{host}{article_path(n)}"><h2>Meldung {n} aus der '
                          f'Hauptstadt</h2></a></article>' for n, host in ((1, WWW), (2, "")))
        return head.format("Nachrichten", "") + nav + teasers + "</body></html>"
    channels = {"/politik/": [(1, BARE), (1, WWW), (2, ""), (3, BARE), (4, WWW)],
                "/wirtschaft/": [(5, WWW), (6, BARE), (2, WWW)]}
    if path in channels:
        items = "".join(f'<li><a href="{host}{article_path(n)}">Meldung {n} aus der Hauptstadt'
                        f"</a></li>" for n, host in channels[path])
        return head.format(path.strip("/").title(), "") + nav + f"<ul>{items}</ul></body></html>"
    for n in range(1, 7):
        if path == article_path(n):
            text = "".join(f"<p>Absatz {k} der Meldung {n}: Die Regierung berät heute in der "
                           f"Hauptstadt über den Haushalt, und die Opposition kündigt scharfen "
                           f"Widerstand gegen die Pläne an.</p>" for k in range(1, 7))
            meta = (f'<meta property="article:published_time" content="2024-10-0{n}T08:30:00'
                    f'+02:00"><meta name="author" content="Anna Autorin">')
            return (head.format(f"Meldung {n} aus der Hauptstadt", meta) + nav
                    + f"<article><h1>Meldung {n} aus der Hauptstadt</h1>{text}</article>"
                    + "</body></html>")
    return None


class _ProxiedSite(BaseHTTPRequestHandler):
    """The site, reached as an HTTP proxy (``http_proxy``): requests carry absolute URLs, so the
    crawler resolves no host name and every byte stays on 127.0.0.1. Answers HEAD and
    conditional GETs (ETag, Last-Modified) as a well-behaved news site does."""

    protocol_version = "HTTP/1.1"
    server: Any

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(head=True)

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _answer(self, *, head: bool) -> None:
        url = urlsplit(self.path)
        host = (url.hostname or self.headers.get("Host", "")).split(":")[0].lower()
        path = url.path or "/"
        status, body, headers = 404, b"not found", {"Content-Type": "text/plain"}
        if host in SITE_HOSTS and path == "/robots.txt":
            status, body = 200, b"User-agent: *\nAllow: /\n"
        elif host in SITE_HOSTS and (html := _page(path)) is not None:
            body = html.encode()
            etag = '"' + sha1(body).hexdigest()[:16] + '"'
            status, headers = 200, {"Content-Type": "text/html; charset=utf-8", "ETag": etag,
                                    "Last-Modified": LAST_MODIFIED}
            if self.headers.get("If-None-Match") == etag or \
                    self.headers.get("If-Modified-Since") == LAST_MODIFIED:
                status, body = 304, b""
        self.server.requests.append((self.server.run, self.command, host, path, status))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


@contextmanager
def proxied_site() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ProxiedSite)
    httpd.requests, httpd.run = [], 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def run_crawl(code: Path, data: Path, proxy: str, now: str) -> str:
    """``scrapy crawl news`` of the code in ``code`` (its own settings) on the data folder."""
    drop = ("MONGO_URI", "NEWSCRAWL_MONGO_URI", "PYTHONPATH", "no_proxy", "NO_PROXY",
            "SCRAPY_SETTINGS_MODULE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(NEWSCRAWL_DATA_DIR=str(data), http_proxy=proxy, HTTP_PROXY=proxy)
    cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={BARE}/",
           "-a", f"now={now}", "-s", "LOG_LEVEL=INFO",
           # no verification GETs: every unchanged page must be answered by its HEAD
           "-s", "NEWSCRAWL_HEADPROBE_VERIFY_START=0", "-s", "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR=0"]
    proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return proc.stderr


def old_code(tmp: Path) -> Path:
    """The tree of commit b5b2faf, or a skip naming what is missing."""
    if shutil.which("git") is None:
        pytest.skip("needs git to check out the code of commit b5b2faf")
    found = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{OLD_COMMIT}^{{commit}}"],
                           capture_output=True)
    if found.returncode != 0:
        pytest.skip(f"commit {OLD_COMMIT} is not in this clone's history (a shallow clone?)")
    tree = tmp / "old-code"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", OLD_COMMIT],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def stored_keys(store: NewsStore) -> dict[str, set[Any]]:
    return {"pages": {(d["_id"], d["url"]) for d in store.pages.find()},
            "articles": {(d["fp"], d["url"]) for d in store.articles.find()},
            "nodes": {(d["fp"], d["url"]) for d in store.nodes.find()},
            "links": {(d["source_fp"], d["target_fp"], d["source_url"], d["target_url"])
                      for d in store.links.find()}}


def project_page_fp() -> Callable[[str], str]:
    """The page fingerprint the crawl components use at default settings (the store is upgraded
    to it by the store extension)."""
    return NewsRequestFingerprinter().page_fp


@pytest.mark.slow
def test_a_folder_written_by_b5b2faf_is_upgraded_and_recrawled_incrementally(tmp_path) -> None:
    old = old_code(tmp_path)
    data = tmp_path / "data"
    with proxied_site() as site:
        proxy = f"http://127.0.0.1:{site.server_address[1]}"
        run_crawl(old, data, proxy, "2024-10-02T00:00:00Z")
        first = list(site.requests)
        # the folder as b5b2faf left it: upgraded (a copy) to the folded fingerprint
        copy = tmp_path / "copy"
        shutil.copytree(data, copy, ignore=shutil.ignore_patterns("server.json", "leases", ".lock"))
        with open_store(copy) as store:
            before = stored_keys(store)
            counts = store.upgrade(folded)
            after = stored_keys(store)
            all_keys_follow(store, folded)
            assert store.schema_version() == SCHEMA_VERSION
        assert counts["pages_merged"] and counts["links_merged"], counts
        for name in before:  # nothing lost: every URL's folded key is still there
            if name == "links":
                assert {(folded(s), folded(t)) for *_k, s, t in before[name]} == \
                    {(s, t) for s, t, *_u in after[name]}
            else:
                assert {folded(url) for _k, url in before[name]} == {k for k, _u in after[name]}
        # the folder itself, opened by this code's crawl (the store extension upgrades it to the
        # crawl's page fingerprint) and re-crawled
        site.run = 1
        log = run_crawl(REPO, data, proxy, "2024-11-01T00:00:00Z")
        assert "Upgraded the store to the current fingerprints" in log
        with open_store(data) as store:
            assert store.schema_version() == SCHEMA_VERSION
            all_keys_follow(store, project_page_fp())
    again = [r for r in site.requests if r[0] == 1]
    stats = stats_of(log)
    full = [(host, path) for _run, method, host, path, status in again
            if method == "GET" and status == 200 and path != "/robots.txt"]
    assert full == [], f"pages fetched in full again although unchanged: {full}\n{first}\n{again}"
    # every page of the first crawl was checked (HEAD, or a conditional GET answered 304)
    def page(host: str, path: str) -> tuple[str, str]:
        return host.removeprefix("www."), path

    fetched = {page(host, path) for _run, method, host, path, status in first
               if method == "GET" and status == 200 and path != "/robots.txt"}
    checked = {page(host, path) for _run, method, host, path, status in again
               if (method, status) in (("HEAD", 200), ("GET", 304))}
    assert checked == fetched, again
    # channel pages are checked by a conditional GET once the host answered its first HEAD
    unchanged = sum(int(stats.get(f"newscrawl/revisit/unchanged/{how}", 0))
                    for how in ("head", "conditional"))
    assert unchanged == len(fetched), stats
