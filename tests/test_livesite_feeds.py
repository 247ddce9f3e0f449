"""The feeds mode of the live loopback site (tests/livesite.py), read with the crawl's own
feed and sitemap parsers (newscrawl/algorithms/feeds.py): what the benchmark's feeds mode serves.

With ``feeds: true`` the home page announces the site feed, each channel page its own feed,
robots.txt names a news sitemap, and every feed / sitemap lists exactly the articles published so
far (checked against the site's own ``articles.jsonl``). With feeds off the site is unchanged.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from newscrawl.algorithms.feeds import (
    discover_feeds,
    is_feed_like,
    parse_feed,
    parse_sitemap,
    sitemaps_from_robots,
)
from tests.helpers import REPO

HOSTS = ["127.0.0.41"]


@contextmanager
def live_site(tmp: Path, **cfg):
    config = {"hosts": HOSTS, "rates": [[30.0, 10.0]], "duration": 60, "day": 60,
              "amplitude": 0.5, "index_size": 5, "initial": 4, "correct_share": 0.0,
              "correct_after": 10, "no_validators": "", "no_head": "", "seed": 3, **cfg}
    (tmp / "site.json").write_text(json.dumps(config))
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"),
                             str(tmp / "site.json"), str(tmp / "site")],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"livesite.py did not print its URLs (got {line!r})")
        ready = json.loads(line)
        yield ready["hosts"][HOSTS[0]].rstrip("/"), tmp / "site"
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _published(site_dir: Path, until: float, channel: int | None = None) -> list[dict]:
    articles = [json.loads(x) for x in (site_dir / "articles.jsonl").read_text().splitlines() if x]
    return sorted((a for a in articles if a["published"] <= until
                   and (channel is None or a["channel"] == channel)),
                  key=lambda a: a["published"], reverse=True)


def test_feeds_mode_serves_feeds_and_a_news_sitemap(tmp_path):
    with live_site(tmp_path, feeds=True, feed_size=8, sitemap_size=50) as (base, site_dir):
        status, _h, home = _get(base + "/")
        assert status == 200
        found = discover_feeds(home, base + "/")
        assert [(f.url, f.kind) for f in found] == [(base + "/feed.xml", "rss")]
        status, _h, channel_page = _get(base + "/section1/")
        assert [f.url for f in discover_feeds(channel_page, base + "/section1/")] == [
            base + "/section1/feed.xml"]

        t0 = time.time()
        status, headers, body = _get(base + "/feed.xml")
        t1 = time.time()
        assert status == 200 and headers["Content-Type"].startswith("application/rss+xml")
        assert is_feed_like(body, headers["Content-Type"])
        result = parse_feed(body, base + "/feed.xml", headers)
        assert result.ok and not result.bozo and result.kind == "rss"
        urls = [e.url for e in result.entries]
        # the newest 8 of every article published by then (one may appear in the instant between)
        expected_before = [base + a["path"] for a in _published(site_dir, t0)][:8]
        expected_after = [base + a["path"] for a in _published(site_dir, t1)][:8]
        assert urls in (expected_before, expected_after)
        by_url = {base + a["path"]: a for a in _published(site_dir, t1)}
        for e in result.entries:
            assert abs(e.published.timestamp() - by_url[e.url]["published"]) < 1.0
            assert e.title == f"Story {by_url[e.url]['id']} of section {by_url[e.url]['channel']} on {HOSTS[0]}"

        status, _h, section = _get(base + "/section1/feed.xml")
        entries = parse_feed(section, base + "/section1/feed.xml").entries
        assert entries and all(by_url.get(e.url, {"channel": 1})["channel"] == 1 for e in entries)
        assert _get(base + "/section9/feed.xml")[0] == 404

        # conditional GET: the same validators answer 304 until an article is published
        status, headers, body = _get(base + "/feed.xml")
        etag = headers["ETag"]
        again = _get(base + "/feed.xml", {"If-None-Match": etag})[0]
        assert again in (304, 200)  # 200 only if an article was published in between
        log = [json.loads(x) for x in (site_dir / "requests.jsonl").read_text().splitlines()]
        feed_lines = [r for r in log if r["path"] == "/feed.xml" and r["status"] == 200]
        assert feed_lines and all(len(r["listed"]) == 8 for r in feed_lines)

        status, _h, robots = _get(base + "/robots.txt")
        sitemaps = sitemaps_from_robots(robots, base + "/robots.txt")
        assert sitemaps == [base + "/news-sitemap.xml"]
        t0 = time.time()
        status, headers, body = _get(sitemaps[0])
        t1 = time.time()
        assert status == 200 and headers["Content-Type"].startswith("application/xml")
        entries = list(parse_sitemap(body, sitemaps[0]))
        listed = [e.url for e in entries]
        assert listed in ([base + a["path"] for a in _published(site_dir, t0)][:50],
                          [base + a["path"] for a in _published(site_dir, t1)][:50])
        assert all(e.news_title and e.news_publication_date for e in entries)


def test_without_feeds_the_site_is_unchanged(tmp_path):
    with live_site(tmp_path) as (base, _site_dir):
        status, _h, home = _get(base + "/")
        assert status == 200 and b"<link" not in home and discover_feeds(home, base) == []
        assert b"<link" not in _get(base + "/section0/")[2]
        assert _get(base + "/robots.txt")[2] == b"User-agent: *\nAllow: /\n"
        for path in ("/feed.xml", "/section0/feed.xml", "/news-sitemap.xml"):
            assert _get(base + path)[0] == 404, path
