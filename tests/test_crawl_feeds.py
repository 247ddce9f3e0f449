"""Feeds and sitemaps as sources, end to end (issue 12), on a served site
(tests/mocksite_feeds.py): three runs of ``scrapy crawl news`` on its home page.

1. version 1 at 2024-10-02 12:00: the feed is discovered from the home page's ``<link
   rel=alternate>``, the news sitemap from robots.txt; their on-site entries are fetched, the
   off-site one is dropped and counted, an article the home page and the feed both list is
   fetched once and records both sources; entry dates become the articles' publication times;
2. version 2 at 14:00: the feed gains two entries (one behind a redirector): exactly those are
   new, the redirector is unwrapped;
3. at 18:00: the feed, unchanged, is asked for with ``If-None-Match`` and answers 304.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from newscrawl import defaults
from newscrawl.algorithms.pubdate import parse_datetime
from newscrawl.fingerprint import NewsRequestFingerprinter
from tests.helpers import crawl, open_store, stats_of
from tests.mocksite_feeds import FEED_ITEMS, HOST, PUB_DATES, SITEMAP_ARTICLE, article_path

REPO = Path(__file__).resolve().parents[1]
# A day apart: the feed's first listing (entries days apart) plans its revisit hours ahead
# (cold start from the listing's publication times, newscrawl/algorithms/listing.py).
RUNS = [("1", "2024-10-02T12:00:00+00:00"), ("2", "2024-10-03T12:00:00+00:00"),
        ("2", "2024-10-04T12:00:00+00:00")]


@contextmanager
def feed_site(state_file: Path):
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "mocksite_feeds.py"),
                             str(state_file)], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"mocksite_feeds.py did not print its URL (got {line!r})")
        yield json.loads(line)["url"]
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("feeds")
    state = tmp / "state"
    out = []
    with feed_site(state) as url:
        for version, now in RUNS:
            state.write_text(version)
            log = Path(f"{state}.log")
            log.write_text("")
            proc = crawl(["-a", f"start_urls={url}", "-a", "depth=1", "-a", f"now={now}"],
                         tmp / "data", settings={"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": HOST})
            requests = [json.loads(line) for line in log.read_text().splitlines()]
            out.append((stats_of(proc.stderr), requests))
        with open_store(tmp / "data") as store:
            pages = {d["url"]: d for d in store.pages.find()}
            articles = {d["url"]: d for d in store.articles.find()}
            hosts = {d["_id"]: d for d in store.db.hosts.find()}
            hosts["report"] = store.discovered_sources()
    return url.rstrip("/"), out, pages, articles, hosts


def _other_port(base: str) -> str:
    """The mock site's host on the next port (a feed entry there is off-site)."""
    host, port = base.rsplit(":", 1)
    return f"{host}:{int(port) + 1}"


def _n(stats, key):
    return int(stats.get(f"newscrawl/feeds/{key}", 0))


def test_sources_are_discovered_and_kept_per_site(runs):
    base, out, _pages, _articles, hosts = runs
    listed = {(s["url"], s["kind"], s["via"]) for s in hosts[HOST]["sources"]}
    assert listed == {(f"{base}/feed.xml", "feed", "alternate"),
                      (f"{base}/news-sitemap.xml", "sitemap", "robots")}
    assert [(r["site"], r["kind"]) for r in hosts["report"]] == [(HOST, "feed"), (HOST, "sitemap")]
    stats = out[0][0]
    assert (_n(stats, "discovered/feed"), _n(stats, "discovered/sitemap")) == (1, 1)


def test_entries_become_articles_offsite_dropped_one_request_per_article(runs):
    base, out, pages, articles, _hosts = runs
    stats, requests = out[0]
    assert _n(stats, "offsite") == 2  # another domain, and the same host on another port
    assert not [url for url in pages if url.startswith(_other_port(base))]
    expected = {base + article_path(n) for n in FEED_ITEMS[1]} | {base + article_path(SITEMAP_ARTICLE)}
    assert expected <= set(articles)
    fetched = [r["path"] for r in requests if r["method"] == "GET" and r["path"].startswith("/politik/")]
    assert sorted(fetched) == sorted(set(fetched)), "an article was requested twice"
    both = pages[base + article_path(1)]["sources"]  # on the home page and in the feed
    assert sorted((s["kind"], s["url"]) for s in both) == [("channel", f"{base}/"),
                                                          ("feed", f"{base}/feed.xml")]
    assert articles[base + article_path(2)]["weight"] == pytest.approx(defaults.NEWSCRAWL_FEEDS_WEIGHT)
    assert [s["kind"] for s in articles[base + article_path(2)]["sources"]] == ["feed"]


def test_entry_dates_date_the_articles(runs):
    base, _out, _pages, articles, _hosts = runs
    for n in FEED_ITEMS[1]:
        doc = articles[base + article_path(n)]
        assert doc["published_source"] == "feed"
        assert doc["published"] == parse_datetime(PUB_DATES[n])
    sitemap_doc = articles[base + article_path(SITEMAP_ARTICLE)]
    assert sitemap_doc["published_source"] == "sitemap"
    assert sitemap_doc["published"] == dt.datetime(2024, 10, 2, 4, 0, tzinfo=dt.timezone.utc)


def test_second_run_finds_exactly_the_new_entries_redirector_unwrapped(runs):
    base, out, pages, articles, _hosts = runs
    stats, requests = out[1]
    assert _n(stats, "new_entries") == len(set(FEED_ITEMS[2]) - set(FEED_ITEMS[1]))
    assert base + article_path(4) in articles
    assert not [r for r in requests if "redirect" in r["path"]]
    feed = pages[f"{base}/feed.xml"]
    fp = NewsRequestFingerprinter().page_fp
    assert set(feed["feed_entries"]) == {fp(base + article_path(n)) for n in FEED_ITEMS[2]} | {
        fp("http://elsewhere.example/a.html"), fp(_other_port(base) + article_path(9))}
    # the scheduler's yield per visit, as for channel pages: on-site entries new to the crawl
    # (article 1 came from the home page first)
    visits = [h["new_links"] for h in feed["history"] if h.get("status") == 200]
    assert visits[:2] == [len(set(FEED_ITEMS[1]) - {1}), len(set(FEED_ITEMS[2]) - set(FEED_ITEMS[1]))]
    assert feed["role"] == "feed" and feed["estimator"] == "channel_scheduler"


def test_unchanged_feed_is_asked_for_with_a_conditional_get(runs):
    _base, out, _pages, _articles, _hosts = runs
    _stats, requests = out[2]
    feed = [r for r in requests if r["path"] == "/feed.xml"]
    assert feed[0]["method"] == "GET" and feed[0]["if_none_match"] and feed[0]["status"] == 304
