"""newscrawl.algorithms.feedlinks: entries of feeds and sitemaps as article links (issue 12)."""

from __future__ import annotations

import datetime as dt

import pytest

from newscrawl.algorithms import feedlinks
from newscrawl.algorithms.feeds import SitemapEntry
from newscrawl.algorithms.linkclass import StartURL
from tests.conftest import shared_path

UTC = dt.timezone.utc
NOW = dt.datetime(2024, 10, 2, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize("url, verdict", [
    ("https://www.cnn.com/2020/04/23/asia/wuhan/index.html", "content"),  # sister host, same site
    ("https://cnn.it/34Z2w0t", "offsite"),
    ("http://elsewhere.example/a.html", "offsite"),
    ("https://edition.cnn.com/shop/mug-2020-04-23.html", "service"),
    ("ftp://edition.cnn.com/a", "invalid"),
    ("not a url", "invalid"),
])
def test_entry_verdict_against_the_entry_url(url, verdict):
    assert feedlinks.entry_verdict(StartURL.parse("http://edition.cnn.com/"), url) == verdict


@pytest.mark.parametrize("url, verdict", [
    ("http://127.0.0.1:18712/secret.html", feedlinks.OFFSITE),  # another port: off-site
    ("http://127.0.0.1/secret.html", feedlinks.OFFSITE),
    ("http://127.0.0.1:18711/news/2024/05/01/story.html", feedlinks.CONTENT),
])
def test_entry_on_another_port_is_offsite(url, verdict):
    assert feedlinks.entry_verdict(StartURL.parse("http://127.0.0.1:18711/"), url) == verdict


def test_sources_are_merged_without_duplicates_first_sighting_kept():
    sources = feedlinks.merge_source(None, "channel", "https://s.example/", 10.0)
    sources = feedlinks.merge_source(sources, "feed", "https://s.example/rss", 20.0)
    assert feedlinks.merge_source(sources, "feed", "https://s.example/rss", 30.0) is None
    assert [(s["kind"], s["seen_at"]) for s in sources] == [("channel", 10.0), ("feed", 20.0)]
    items = feedlinks.item_sources(sources)
    assert items[1]["seen_at"] == dt.datetime.fromtimestamp(20.0, UTC)


def test_sitemap_pick_keeps_recent_and_news_entries_and_children():
    day = 86400.0
    old = dt.datetime.fromtimestamp(NOW - 10 * day, UTC)
    fresh = dt.datetime.fromtimestamp(NOW - 3600, UTC)
    entries = [
        SitemapEntry("https://s.example/a-2024-10-02.html", news_publication_date=fresh),
        SitemapEntry("https://s.example/b.html", lastmod=old),  # old archive page
        SitemapEntry("https://s.example/c.html"),  # undated page of a plain sitemap
        SitemapEntry("https://s.example/sitemap-1.xml.gz", is_sitemap=True),  # undated child
        SitemapEntry("https://s.example/sitemap-0.xml", lastmod=old, is_sitemap=True),
        SitemapEntry("https://s.example/d.html", lastmod=fresh),
    ]
    picked, skipped = feedlinks.sitemap_pick(entries, now=NOW, max_age=2 * day, limit=10)
    assert [e.url.rsplit("/", 1)[1] for e in picked] == ["a-2024-10-02.html", "sitemap-1.xml.gz",
                                                         "d.html"]
    assert skipped == 3
    assert len(feedlinks.sitemap_pick(entries, now=NOW, max_age=2 * day, limit=1)[0]) == 1


def test_entry_facts_carry_the_date_as_written():
    class Entry:
        url, title, published, updated = "https://s.example/a.html", "A", None, None
        published_raw = "2018-09-18 14:38:10"

    facts = feedlinks.entry_facts("feed", Entry(), "https://s.example/rss")
    assert facts == {"kind": "feed", "url": "https://s.example/rss", "title": "A",
                     "feed_date": "2018-09-18 14:38:10"}
    news = SitemapEntry("https://s.example/b.html", news_title="B",
                        news_publication_raw="2024-10-02T06:00:00+02:00")
    assert feedlinks.entry_facts("sitemap", news, "https://s.example/sm.xml")["sitemap_date"] == \
        "2024-10-02T06:00:00+02:00"


def test_every_feed_and_sitemap_of_set_14_is_read_or_a_reasoned_skip():
    folder = shared_path("corpus", "14_feeds_sitemaps")
    read = 0
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix in (".txt", ".tsv", ".md") or "LICENSE" in path.name \
                or path.name in ("COPYING", "NOTICE"):
            continue
        body = path.read_bytes()
        kind = feedlinks.source_role(body, None)
        if kind is None:
            continue
        result = feedlinks.read_source(kind, body, "https://example.org/x.xml", now=NOW,
                                       max_entries=100_000, max_age=1e12)
        assert result.format or result.error, path
        if result.format:
            read += 1
            assert result.entries or kind == "sitemap", path
    assert read >= 60
