"""Feeds and sitemaps as discovery sources (newscrawl/algorithms/feeds.py) on the real files of
set 14 and on hostile inputs.

Every file of ../shared/corpus/14_feeds_sitemaps is parsed: the entries of each feed, sitemap and
robots.txt are counted independently here (a plain regex over the bytes) and compared with the
parser's. Tests reading the corpus skip without it.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from newscrawl.algorithms.feeds import (
    FeedRef,
    SitemapStats,
    discover_feeds,
    is_feed_like,
    is_sitemap_like,
    parse_feed,
    parse_sitemap,
    sitemaps_from_robots,
    sniff_kind,
)
from newscrawl.algorithms.urls import unwrap_redirect
from tests.conftest import SHARED, shared_path

UTC = timezone.utc
SET14 = SHARED / "corpus" / "14_feeds_sitemaps"


def _captures() -> list[dict[str, str]]:
    """The rows of set 14's captures.tsv (path, captured, kind, encoding_note ...)."""
    path = SET14 / "captures.tsv"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


_ROWS = _captures()
_IDS = [row["path"] for row in _ROWS] or ["corpus-absent"]


def _row(request_param: dict[str, str] | str) -> tuple[dict[str, str], Path]:
    if not isinstance(request_param, dict):
        shared_path("corpus", "14_feeds_sitemaps", "captures.tsv")  # skips
        raise AssertionError("unreachable")
    return request_param, shared_path("corpus", "14_feeds_sitemaps", request_param["path"])


# Counted here, independently of the parser: the opening tags of the items of each kind.
_ITEM = re.compile(rb"<item[\s>]")
_ENTRY = re.compile(rb"<entry[\s>]")
_URL = re.compile(rb"<url>")
_SITEMAP = re.compile(rb"<sitemap>")
_SITEMAP_LINE = re.compile(r"^\s*sitemap\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)


@pytest.mark.parametrize("row", _ROWS or ["corpus-absent"], ids=_IDS)
def test_every_file_of_set14_is_read_whole(row):
    """Entries per file equal the file's own count; nothing raises; robots.txt Sitemap lines."""
    row, path = _row(row)
    body = path.read_bytes()
    kind = row["kind"]
    url = "https://example.org/" + path.name
    if kind == "robots.txt":
        lines = _SITEMAP_LINE.findall(body.decode("utf-8", "replace"))
        expected = list(dict.fromkeys(lines))
        assert sitemaps_from_robots(body, url) == expected
        return
    if kind.startswith(("sitemap", "google-news-sitemap")):
        raw = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
        stats = SitemapStats()
        entries = list(parse_sitemap(body, url, stats=stats))
        assert is_sitemap_like(body) and not is_feed_like(body)
        if kind == "sitemapindex":
            assert stats.is_index and all(e.is_sitemap for e in entries)
            assert len(entries) == len(_SITEMAP.findall(raw)) == 4
        else:
            assert stats.kind == "urlset" and not any(e.is_sitemap for e in entries)
            assert len(entries) == len(_URL.findall(raw)) > 0
        assert stats.error == "" and not stats.skipped
        assert all(e.url.startswith(("http://", "https://")) for e in entries)
        return
    result = parse_feed(body, url)
    assert result.ok, result.error
    assert result.kind == ("atom" if kind == "atom" else "rss")
    assert sniff_kind(body) == result.kind and is_feed_like(body)
    items = len((_ENTRY if kind == "atom" else _ITEM).findall(body))
    # every item is an entry, or a counted skip (a second item with the same link)
    assert len(result.entries) + result.skipped_count == items > 0
    assert set(result.skipped) <= {"duplicate"}
    assert len({e.url for e in result.entries}) == len(result.entries)
    for entry in result.entries:
        assert entry.url.startswith(("http://", "https://")), entry
        assert "\ufffd" not in entry.title, entry.title
        for value in (entry.published, entry.updated):
            assert value is None or value.tzinfo is not None


def test_gb2312_feed_titles_are_chinese():
    """news.qq.com's GB2312 feed (Python's expat refuses it): titles in correct Chinese."""
    path = shared_path("corpus", "14_feeds_sitemaps", "rbren_rss-parser_test-input",
                       "news.qq.com_newsgn_2018-09-18_gb2312.xml")
    body = path.read_bytes()
    assert b'encoding="gb2312"' in body[:100].lower()
    result = parse_feed(body, "http://news.qq.com/newsgn/rss_newsgn.xml")
    titles = [e.title for e in result.entries]
    assert len(titles) == 20
    assert "习近平为何如此强调崇尚英雄" in titles[0]
    # every title is mostly CJK and the same text the file's bytes hold in GB18030
    text = body.decode("gb18030")
    for title in titles:
        assert title and title in text.replace("&quot;", '"').replace("&amp;", "&"), title
        assert sum("\u4e00" <= ch <= "\u9fff" for ch in title) >= len(title) // 3, title
    # pubDate "2018-09-18 14:38:10" names no zone: kept as written for the date resolver
    first = result.entries[0]
    assert first.published_raw == "2018-09-18 14:38:10" and not first.date_has_zone


def test_gb2312_feed_without_its_declaration():
    """The same bytes with no XML declaration (feedparser alone reads windows-1252 mojibake)."""
    path = shared_path("corpus", "14_feeds_sitemaps", "rbren_rss-parser_test-input",
                       "news.qq.com_newsgn_2018-09-18_gb2312.xml")
    body = re.sub(rb"^\s*<\?xml[^>]*\?>", b"", path.read_bytes())
    assert not body.lstrip().startswith(b"<?xml ")
    result = parse_feed(body, "http://news.qq.com/newsgn/rss_newsgn.xml")
    assert result.encoding == "gb18030" and len(result.entries) == 20
    assert "习近平为何如此强调崇尚英雄" in result.entries[0].title


def test_gb2312_feed_with_a_charset_header():
    """The HTTP charset, when given, decides (RFC 3023); a wrong UTF-8 claim stays readable."""
    path = shared_path("corpus", "14_feeds_sitemaps", "rbren_rss-parser_test-input",
                       "news.qq.com_newsgn_2018-09-18_gb2312.xml")
    body = path.read_bytes()
    right = parse_feed(body, "http://news.qq.com/x", {b"Content-Type": [b"text/xml; charset=GBK"]})
    assert "习近平" in right.entries[0].title
    bare = parse_feed(body, "http://news.qq.com/x", {"content-type": "text/xml"})
    assert "习近平" in bare.entries[0].title  # text/xml without charset is not US-ASCII here
    wrong = parse_feed(body, "http://news.qq.com/x", {"Content-Type": "text/xml; charset=utf-8"})
    assert wrong.ok and len(wrong.entries) == 20


def test_legacy_encodings_and_odd_dates():
    base = ("corpus", "14_feeds_sitemaps")
    uol = parse_feed(shared_path(*base, "rbren_rss-parser_test-input",
                                 "uol-noticias_2018-09-24_no-xml-decl_latin1.rss").read_bytes(), "u")
    # ISO-8859-1 bytes, no declaration: not UTF-8, so the charset detector decides
    assert uol.encoding == "cp1252" and any("simulações" in e.title for e in uol.entries)
    # Portuguese names: "Seg, 24 Set 2018 19:42:40 -0300"
    assert uol.entries[0].published == datetime(2018, 9, 24, 22, 42, 40, tzinfo=UTC)
    assert uol.dates_unparsed == 0
    korea = parse_feed(shared_path(*base, "mediacloud_rss-fetcher_fixtures",
                                   "real-korean-times.rss").read_bytes(), "u")
    # "Thu,28 Jul 2022 4:35:5 GMT+9" is 19:35:05 UTC the day before (capture 2022-07-27T19:35Z)
    assert korea.entries[0].published_raw == "Thu,28 Jul 2022 4:35:5 GMT+9"
    assert korea.entries[0].published == datetime(2022, 7, 27, 19, 35, 5, tzinfo=UTC)
    oren = parse_feed(shared_path(*base, "danmactough_node-feedparser_test-feeds",
                                  "oren.ru_windows-1251.xml").read_bytes(), "u")
    assert oren.encoding == "windows-1251" and "Бузулуке" in oren.entries[0].title
    golem = parse_feed(shared_path(*base, "spacecowboy_Feeder_test-resources",
                                   "golem-de.xml").read_bytes(), "u")
    assert golem.encoding == "iso-8859-1" and any("ü" in e.title or "ä" in e.title
                                                   for e in golem.entries)


def test_redirector_links_are_unwrapped():
    base = ("corpus", "14_feeds_sitemaps")
    sina = parse_feed(shared_path(*base, "husttic-web_rss_reader",
                                  "sina_tech_rollnews_2013-04-23.xml").read_bytes(), "u")
    assert all(e.link.startswith("http://go.rss.sina.com.cn/redirect.php?url=")
               for e in sina.entries)
    assert all(e.url.startswith("http://tech.sina.com.cn/") for e in sina.entries)
    assert sina.entries[0].url == "http://tech.sina.com.cn/t/2013-04-23/16008270322.shtml"
    cnn = parse_feed(shared_path(*base, "theprojecter_watercooler_feedretriever",
                                 "cnn_world_2010-05-20.rss").read_bytes(), "u")
    assert all("/~r/" in e.link and e.url.startswith("http://www.cnn.com/2010/")
               for e in cnn.entries)
    nyt = parse_feed(shared_path(*base, "theprojecter_watercooler_feedretriever",
                                 "nyt_homepage_2010-05-20.xml").read_bytes(), "u")
    assert all(e.url.startswith("http://") and ".nytimes.com/2010/" in e.url for e in nyt.entries)
    assert nyt.entries[0].url.endswith("?partner=rss&emc=rss")


@pytest.mark.parametrize("url, expected", [
    ("http://go.rss.sina.com.cn/redirect.php?url=http://tech.sina.com.cn/a.shtml?x=1&y=2",
     "http://tech.sina.com.cn/a.shtml?x=1&y=2"),
    ("https://r.example.net/c?u=https%3A%2F%2Fa.example.org%2Fp%3Fq%3D1&sig=z",
     "https://a.example.org/p?q=1"),
    ("https://r.example.net/c?to=https%3A%2F%2Fr2.example.net%2Fc%3Furl%3Dhttps%253A%252F%252Fb.example.org%252F",
     "https://b.example.org/"),
    ("https://example.org/search?q=http://x.org", "https://example.org/search?q=http://x.org"),
    ("https://example.org/a?url=notaurl", "https://example.org/a?url=notaurl"),
    ("https://example.org/a?url=http://", "https://example.org/a?url=http://"),
    ("", ""),
])
def test_unwrap_redirect(url, expected):
    assert unwrap_redirect(url) == expected


def test_discover_feeds_on_real_home_pages():
    cnn = shared_path("corpus", "08_newspaper4k_testdata", "html", "cnn_main_site.html")
    assert discover_feeds(cnn.read_bytes(), "http://edition.cnn.com/") == [
        FeedRef("http://rss.cnn.com/rss/edition.rss", "rss", "CNN - Top Stories [RSS]")]
    zeit = shared_path("corpus", "01_frontpage-archive_de_home-sections", "zeit.de_2023-05-01",
                       "index.html")
    assert [f.url for f in discover_feeds(zeit.read_bytes(), "https://www.zeit.de/index")] == [
        "https://newsfeed.zeit.de/index"]
    heise = shared_path("corpus", "01_frontpage-archive_de_home-sections",
                        "heise.de_2022-01-29_intraday", "2022-01-29T0511", "index.html")
    found = discover_feeds(heise.read_bytes(), "https://www.heise.de/")
    assert ("https://www.heise.de/rss/heise-atom.xml", "atom") in [(f.url, f.kind) for f in found]
    assert not is_feed_like(heise.read_bytes(), "text/html")


def test_discover_feeds_rules():
    page = """<html><head><base href="https://cdn.example.org/x/">
      <link rel="Alternate" type="application/atom+xml; charset=utf-8" href="atom.xml">
      <link rel="alternate" type="application/rss+xml" href="/comments/feed/">
      <link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
      <link rel="alternate" type="text/html" hreflang="en" href="/en/">
      <link rel="stylesheet" type="application/rss+xml" href="/s.rss">
      <link rel="alternate" type="application/rss+xml" href="../atom.xml">
    </head><body></body></html>"""
    assert discover_feeds(page, "https://example.org/") == [
        FeedRef("https://cdn.example.org/x/atom.xml", "atom"),
        FeedRef("https://cdn.example.org/atom.xml", "rss"),
    ]
    assert discover_feeds(b"", "https://example.org/") == []
    assert discover_feeds(b"\x00\xff garbage", "https://example.org/") == []


def test_sitemaps_from_robots_real_files():
    cnn = shared_path("corpus", "14_feeds_sitemaps", "scrapy_protego_robots",
                      "edition.cnn.com_robots.txt")
    found = sitemaps_from_robots(cnn.read_text("utf-8"), "https://edition.cnn.com/robots.txt")
    assert len(found) == 6 and "https://edition.cnn.com/sitemaps/news.xml" in found
    telegraph = shared_path("corpus", "14_feeds_sitemaps", "scrapy_protego_robots",
                            "www.telegraph.co.uk_robots.txt")
    assert len(sitemaps_from_robots(telegraph.read_bytes(), "https://www.telegraph.co.uk/")) == 30
    assert sitemaps_from_robots("Sitemap: ftp://x.org/s.xml\nSitemap: /a.xml\nsitemap: /a.xml",
                                "https://e.org/robots.txt") == ["https://e.org/a.xml"]
    assert sitemaps_from_robots(b"\xff\xfe\x00garbage", "https://e.org/") == []


def test_news_sitemap_fields_and_latin1():
    body = shared_path("corpus", "14_feeds_sitemaps", "anonyfox_magpie-html_cache",
                       "genickbruch.com", "googlenews.xml").read_bytes()
    entries = list(parse_sitemap(io.BytesIO(body), "https://www.genickbruch.com/googlenews.xml"))
    assert entries[0].url == "https://www.genickbruch.com/index.php?befehl=news&meldung=37599"
    assert entries[0].news_publication_date == datetime(2026, 1, 2, 5, 28, 26, tzinfo=UTC)
    assert entries[0].news_publication_raw == "2026-01-02T06:28:26+01:00"
    assert any("fällt" in (e.news_title or "") for e in entries)  # ISO-8859-1 read right


def test_gzipped_sitemap_streams_within_limits():
    body = shared_path("corpus", "14_feeds_sitemaps", "apache_stormcrawler_test-resources",
                       "tripadvisor.sitemap.xml.gz").read_bytes()
    stats = SitemapStats()
    first = list(zip(range(3), parse_sitemap(io.BytesIO(body), "https://t.example/", stats=stats)))
    assert len(first) == 3 and stats.bytes_read < 2_000_000  # streamed, not read whole
    stats = SitemapStats()
    n = sum(1 for _ in parse_sitemap(body, "https://t.example/", max_urls=1000, stats=stats))
    assert n == 1000 and stats.error == "too_many_urls"
    stats = SitemapStats()
    n = sum(1 for _ in parse_sitemap(body, "https://t.example/", max_bytes=100_000, stats=stats))
    assert 0 < n < 1000 and stats.error == "too_large"


# --- hostile and broken inputs: a result or a counted error, never an exception ---------------

_BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>
"""


def test_sitemap_resists_entity_expansion_and_xxe(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    laughs = _BILLION_LAUGHS + (b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                                b"<url><loc>https://e.org/&lol9;</loc></url>"
                                b"<url><loc>https://e.org/ok</loc></url></urlset>")
    stats = SitemapStats()
    entries = list(parse_sitemap(laughs, "https://e.org/s.xml", stats=stats))
    assert all(len(e.url) < 200 for e in entries)
    assert "amplification" in stats.error  # libxml2 stops and says so: counted, not raised
    xxe = (f'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file://{secret}">]>'
           "<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
           "<url><loc>https://e.org/&x;</loc></url></urlset>").encode()
    entries = list(parse_sitemap(xxe, "https://e.org/s.xml"))
    assert not any("TOPSECRET" in e.url for e in entries)


def test_feed_resists_entity_expansion_and_xxe(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    laughs = _BILLION_LAUGHS + (b"<rss version='2.0'><channel><item><title>&lol9;</title>"
                                b"<link>https://e.org/a</link></item></channel></rss>")
    result = parse_feed(laughs, "https://e.org/feed")
    assert all(len(e.title) < 10_000 for e in result.entries)
    xxe = (f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
           "<rss version='2.0'><channel><item><title>a&x;</title>"
           "<link>https://e.org/a</link></item></channel></rss>").encode()
    result = parse_feed(xxe, "https://e.org/feed")
    assert not any("TOPSECRET" in e.title for e in result.entries)


def test_parse_feed_never_opens_a_file_named_by_the_body(tmp_path):
    """feedparser opens a bytes argument as a file name when it can: the body is a stream."""
    secret = tmp_path / "feed.xml"
    secret.write_bytes(b"<rss version='2.0'><channel><item><title>TOPSECRET</title>"
                       b"<link>https://e.org/a</link></item></channel></rss>")
    result = parse_feed(str(secret).encode(), "https://e.org/feed")
    assert result.entries == () and result.error == "not_a_feed"


@pytest.mark.parametrize("body, error", [
    (b"", "empty"),
    (b"   \n", "empty"),
    (b"<!doctype html><html><body><p>Not found</p></body></html>", "not_a_feed"),
    (b"\x00\x01\x02\xff" * 100, "not_a_feed"),
    (b"\x1f\x8b\x08\x00garbage", "parser_error"),
])
def test_parse_feed_on_what_is_no_feed(body, error):
    result = parse_feed(body, "https://e.org/feed")
    assert not result.ok and result.error == error and result.entries == ()


def test_parse_feed_truncated_and_limits():
    items = "".join(f"<item><title>t{i}</title><link>/a/{i}</link><pubDate>nonsense</pubDate>"
                    "</item>" for i in range(10))
    whole = f"<rss version='2.0'><channel>{items}<item><title>no link</title></item>".encode()
    cut = whole[: whole.index(b"<item><title>t7")] + b"<item><title>t7</ti"
    result = parse_feed(cut, "https://e.org/feed/")
    assert result.ok and result.bozo and len(result.entries) == 7
    assert result.entries[0].url == "https://e.org/a/0" and result.entries[0].published is None
    assert result.dates_unparsed == 7
    full = parse_feed(whole, "https://e.org/feed/")
    assert len(full.entries) == 10 and full.skipped == {"no_link": 1}
    assert parse_feed(whole, "u", max_bytes=100).error == "too_large"
    gz = parse_feed(gzip.compress(whole), "https://e.org/feed/")
    assert len(gz.entries) == 10


@pytest.mark.parametrize("body, error", [
    (b"", "empty"),
    (b"<html><body>404</body></html>", "not_a_sitemap"),
    (b"<urlset><url><loc>https://e.org/a</loc></url><url><loc>https://e.o", "xml_error"),
    (b"\x1f\x8b\x08\x00garbage", "gzip_error"),
])
def test_parse_sitemap_on_broken_input(body, error):
    stats = SitemapStats()
    entries = list(parse_sitemap(body, "https://e.org/s.xml", stats=stats))
    assert stats.error.startswith(error)
    if body.startswith(b"<urlset"):
        assert [e.url for e in entries][:1] == ["https://e.org/a"]


def test_sitemap_raw_ampersands_are_kept():
    """``?a=1&b=2`` written raw (not well-formed): the URL keeps ``&b=2``, across chunk ends."""
    locs = [f"https://e.org/p?id={i}&amp;x=1&y={i}&#38;z&lt;" for i in range(5000)]
    body = ("<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
            + "".join(f"<url><loc>{loc}</loc></url>" for loc in locs) + "</urlset>").encode()
    entries = list(parse_sitemap(io.BytesIO(body), "https://e.org/s.xml"))
    assert [e.url for e in entries] == [
        f"https://e.org/p?id={i}&x=1&y={i}&z<" for i in range(5000)]


def test_sitemap_skips_and_text_sitemaps():
    body = (b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
            b"<url><lastmod>2024-01-01</lastmod></url>"
            b"<url><loc>javascript:x()</loc></url>"
            b"<url><loc> /rel </loc><lastmod>2024-01-02</lastmod></url></urlset>")
    stats = SitemapStats()
    entries = list(parse_sitemap(body, "https://e.org/s.xml", stats=stats))
    assert [e.url for e in entries] == ["https://e.org/rel"]
    assert entries[0].lastmod == datetime(2024, 1, 2, tzinfo=UTC)
    assert dict(stats.skipped) == {"no_loc": 1, "bad_url": 1}
    text = b"https://e.org/a\n\nhttps://e.org/b\nnot a url\n"
    stats = SitemapStats()
    assert [e.url for e in parse_sitemap(text, "https://e.org/s.txt", stats=stats)] == [
        "https://e.org/a", "https://e.org/b"]
    assert stats.skipped["bad_url"] == 1


def test_gzip_bomb_sitemap_stops_at_the_limit():
    bomb = gzip.compress(b"<urlset>" + b" " * 20_000_000, compresslevel=9)
    assert len(bomb) < 100_000
    stats = SitemapStats()
    assert list(parse_sitemap(bomb, "https://e.org/s.xml.gz", max_bytes=1_000_000,
                              stats=stats)) == []
    assert stats.error == "too_large" and stats.bytes_read <= 1_000_001 + 65536


@pytest.mark.parametrize("body, ctype, kind", [
    (b"\xef\xbb\xbf<?xml version='1.0'?><!-- x --><rss>", None, "rss"),
    (b"<?xml version='1.0'?>\n<rdf:RDF xmlns:rdf='x'>", None, "rss"),
    (b"<feed xmlns='http://www.w3.org/2005/Atom'>", "text/html", "atom"),
    (b"<sitemapindex>", None, "sitemap"),
    ("<?xml version='1.0' encoding='utf-16'?><feed>".encode("utf-16"), None, "atom"),
    (gzip.compress(b"<urlset><url>", mtime=0), None, "sitemap"),
    (b"<!DOCTYPE html><html><link type='application/rss+xml'>", "application/rss+xml", None),
    (b"", "application/rss+xml", "rss"),
    (b"plain text", "text/plain", None),
])
def test_sniff_kind(body, ctype, kind):
    assert sniff_kind(body, ctype) == kind


# --- feed dates through the date resolver (newscrawl/algorithms/pubdate.py) -------------------


def test_feed_date_is_a_candidate_below_the_page_and_overruled_by_the_url_day():
    from lxml import html as lxml_html

    from newscrawl.algorithms.pubdate import resolve_dates

    url = "http://edition.cnn.com/2013/05/01/world/defining-moments/index.html"
    # CNN's feed re-dated this 2013 story in 2014: the URL's day wins (rule 3)
    res = resolve_dates(None, url, feed_date="Fri, 29 Aug 2014 06:43:50 EDT")
    assert res.source == "url" and res.published.date().isoformat() == "2013-05-01"
    # the same day as the URL: the feed gives the time
    res = resolve_dates(None, url, feed_date="Wed, 01 May 2013 14:02:00 EDT")
    assert res.source == "feed" and res.published == datetime(2013, 5, 1, 18, 2, tzinfo=UTC)
    # the page's own JSON-LD outranks the feed
    tree = lxml_html.document_fromstring(
        '<html><head><script type="application/ld+json">{"@type": "NewsArticle", '
        '"datePublished": "2024-09-30T07:00:00+02:00"}</script></head><body><p>x</p></body></html>')
    res = resolve_dates(tree, "https://e.org/a", feed_date="2024-09-30T09:00:00Z")
    assert res.source == "jsonld"
    # a zone-less feed date (news.qq.com) borrows the page's offset (rule 1)
    tree = lxml_html.document_fromstring(
        '<html><head><meta property="article:modified_time" content="2018-09-18T15:00:00+08:00">'
        '<meta name="dc.date.issued" content="2018-09-18T14:38:10+08:00"></head><body/></html>')
    res = resolve_dates(tree, "http://news.qq.com/a/x.htm", feed_date="2018-09-18 14:38:10")
    assert res.published == datetime(2018, 9, 18, 6, 38, 10, tzinfo=UTC)
    feed_c = next(c for c in res.candidates if c.source == "feed")
    assert feed_c.local.utcoffset().total_seconds() == 8 * 3600


def test_benchmark_scores_corpus_articles_with_a_feed_date(tmp_path, capsys):
    """benchmarks/extraction_quality.py: an article listed in a set-14 feed is extracted with the
    entry's date and scored against its ground truth (a made-up corpus of one page and one feed)."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "extraction_quality.py"
    spec = importlib.util.spec_from_file_location("extraction_quality_bench", path)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    sys.modules["extraction_quality_bench"] = bench
    spec.loader.exec_module(bench)
    feed_dir = tmp_path / "14_feeds_sitemaps" / "x"
    feed_dir.mkdir(parents=True)
    (feed_dir / "feed.xml").write_bytes(
        b"<?xml version='1.0'?><rss version='2.0'><channel><title>t</title>"
        b"<item><title>A</title><link>http://www.example.org/news/a.html?utm_source=rss</link>"
        b"<pubDate>Tue, 01 Oct 2024 01:30:00 +0200</pubDate></item>"
        b"<item><title>B</title><link>https://example.org/2024/09/01/b.html</link>"
        b"<pubDate>Thu, 05 Sep 2024 10:00:00 GMT</pubDate></item></channel></rss>")
    page = tmp_path / "a.html"
    page.write_text("<html><head><title>A</title></head><body><article><h1>A</h1>"
                    + "<p>Some text of the article that is long enough.</p>" * 20
                    + "</article></body></html>", encoding="utf-8")
    items = {"08": [
        {"set": "08", "path": page, "url": "https://example.org/news/a.html", "date": "2024-10-01"},
        {"set": "08", "path": page, "url": "https://example.org/news/other.html", "date": "2024-10-01"},
    ]}
    bench.feed_date_figures(tmp_path, items, "default")
    out = capsys.readouterr().out
    # the page has no date of its own: the feed's is the answer, on the day the feed's offset
    # gives (2024-10-01 01:30 +02:00); the entry's UTC instant alone falls on 2024-09-30
    assert "articles with a feed date: 1/1 (feed date alone 0/1;" in out
    assert "entry's URL (set 14): 0/1 same day" in out and "1 later by more than a day" in out
