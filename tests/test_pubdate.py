"""The publication-date resolver (newscrawl/algorithms/pubdate.py) and its use by extract_article.

Real pages are read in place from ../shared/corpus (sets 06, 08, 12); those tests skip without it.
"""

from __future__ import annotations

import gzip
from datetime import date, datetime, timedelta, timezone

import pytest
from lxml import html as lxml_html

from newscrawl.algorithms.extraction import extract_article
from newscrawl.algorithms.pubdate import date_from_url, resolve_dates
from tests.conftest import shared_path

UTC = timezone.utc


def _tree(head: str = "", body: str = ""):
    return lxml_html.document_fromstring(
        f"<html><head>{head}</head><body><article>{body}<p>text</p></article></body></html>")


@pytest.mark.parametrize("url, expected", [
    ("https://example.com/politik/2024/09/30/wahl.html", date(2024, 9, 30)),
    ("https://example.com/2024-09-30-wahl", date(2024, 9, 30)),
    ("https://www.automobilwoche.de/article/20211103/AGENTURMELDUNGEN/311039909", date(2021, 11, 3)),
    ("http://www.xinhuanet.com/local/2020-02/19/c_1125597921.htm", date(2020, 2, 19)),
    ("https://prachatai.com/journal/2020/06/88083", None),  # year and month only
    ("https://example.com/a?date=2024-09-30", None),  # the query is not the path
    ("https://example.com/1234567890123/", None),
    ("https://example.com/2024/13/45/x", None),
    ("", None),
])
def test_date_from_url(url, expected):
    assert date_from_url(url) == expected


def test_url_dates_of_the_newspaper4k_labels():
    path = shared_path("corpus", "08_newspaper4k_testdata", "test_urls_pubdate.txt")
    labels = [line.split(" ", 1) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert labels
    for label, url in labels:
        assert (date_from_url(url.strip()) is not None) == (label == "1"), url


def test_precedence_json_ld_over_open_graph_and_time():
    tree = _tree('<meta property="article:published_time" content="2024-09-29T10:00:00+02:00">',
                 '<time datetime="2024-09-01">1 Sept</time>')
    ld = {"@type": "NewsArticle", "datePublished": "2024-09-29T08:00:00Z",
          "dateModified": "2024-09-30T08:00:00Z"}
    res = resolve_dates(tree, "https://example.com/a", ld=ld, extensive=False)
    assert res.published == datetime(2024, 9, 29, 8, 0, tzinfo=UTC)
    assert res.source == "jsonld"
    assert res.confidence == 1.0  # 0.95 + 0.05 for og naming the same day; time disagrees (< 0.8)
    assert res.modified == datetime(2024, 9, 30, 8, 0, tzinfo=UTC)  # kept apart


def test_bare_date_takes_the_time_of_a_same_day_candidate():
    tree = _tree('<meta name="date" content="2024-04-22">',
                 '<time class="published" datetime="2024-04-22T17:33:00+02:00">x</time>')
    res = resolve_dates(tree, "https://example.com/a", extensive=False)
    assert res.source == "meta" and res.published == datetime(2024, 4, 22, 15, 33, tzinfo=UTC)
    assert res.local == datetime(2024, 4, 22, 17, 33, tzinfo=timezone(timedelta(hours=2)))


def test_candidates_after_the_fetch_are_rejected():
    tree = _tree('<meta property="article:published_time" content="2030-01-01T00:00:00Z">')
    fetched = datetime(2024, 10, 1, 12, 0, tzinfo=UTC)
    res = resolve_dates(tree, "https://example.com/2024/09/30/a", fetched_at=fetched, extensive=False)
    assert res.source == "url" and res.published == datetime(2024, 9, 30, tzinfo=UTC)
    assert [c.source for c in res.rejected] == ["og"]


def test_candidates_long_before_the_first_link_are_rejected():
    tree = _tree('<meta property="article:published_time" content="2019-01-01T00:00:00Z">')
    linked = datetime(2024, 10, 1, tzinfo=UTC)
    res = resolve_dates(tree, "https://example.com/a", first_linked_at=linked, extensive=False,
                        feed_date="Tue, 01 Oct 2024 06:00:00 GMT")
    assert res.source == "feed" and res.published == datetime(2024, 10, 1, 6, 0, tzinfo=UTC)
    assert [c.source for c in res.rejected] == ["og"]


def test_sitemap_date_wins_and_a_later_markup_date_is_an_update():
    tree = _tree('<meta property="article:published_time" content="2024-09-29T10:00:00Z">')
    res = resolve_dates(tree, "https://example.com/a", sitemap_date="2024-09-29T09:58:00+00:00",
                        extensive=False)
    assert res.source == "sitemap" and res.published == datetime(2024, 9, 29, 9, 58, tzinfo=UTC)
    # the URL says 2017-07-12; the markup's 2019 date is a later update, not the publication
    tree = _tree('<meta property="article:published_time" content="2019-06-17T16:28:00Z">')
    res = resolve_dates(tree, "https://example.com/2017/07/12/post/", extensive=False)
    assert res.source == "url" and res.published.date() == date(2017, 7, 12)


def test_nothing_found_is_none():
    res = resolve_dates(_tree(), "https://example.com/a", extensive=False)
    assert res.published is None and res.source is None and res.confidence == 0.0
    assert resolve_dates(None, "https://example.com/2024/01/02/x").source == "url"


def _set12(name: str) -> tuple[bytes, str]:
    path = shared_path("corpus", "12_zh-content-extraction_gbk_raw", "original", name)
    raw = path.read_bytes()
    return raw.split(b"\n", 1)[1], (path.parent.parent / "date" / name.replace(".html", ".txt")
                                     ).read_text().strip()


def test_byline_timestamp_of_a_page_without_date_markup():
    # cn.news.yahoo.com 2005: "2005-04-05 06:40更新"; htmldate alone says 2005-03-31 (a related link)
    raw, truth = _set12("2bac7fb2-efbd-4444-99c8-51c72acf5c7d.html")
    assert truth == "2005-04-05 06:40"
    res = extract_article(raw, "http://cn.news.yahoo.com/050404/346/2al02.html")
    assert res["published_source"] == "text"
    assert res["published"] == datetime(2005, 4, 5, 6, 40, tzinfo=UTC)


def test_htmldate_finds_the_date_of_a_page_without_markup_dates():
    # set 06: creativecommons.org, no date markup; the crawl path found no date before
    path = shared_path("corpus", "06_trafilatura_eval", "cache", "creativecommons.org.html")
    res = extract_article(path.read_bytes(), "https://creativecommons.org/2016/05/22/x/")
    assert res["published"] is not None and res["published"].date() == date(2016, 5, 22)
    assert res["published_source"] in {"url", "htmldate"} and 0 < res["published_confidence"] <= 1


def test_extract_article_reports_source_confidence_and_modified():
    path = shared_path("corpus", "04_fundus_multilingual_articles_gt", "de", "BR_2024_04_22.html.gz")
    html = gzip.decompress(path.read_bytes())
    fetched = datetime(2024, 4, 22, 17, 33, 43, tzinfo=UTC)  # meta.info crawl_date
    res = extract_article(html, "https://www.br.de/nachrichten/bayern/x,UAf9GNd", fetched_at=fetched)
    assert res["published"] == datetime(2024, 4, 22, 15, 26, 46, 863186, tzinfo=UTC)  # publishing_date
    assert res["published_source"] == "jsonld" and res["published_confidence"] >= 0.95
    assert res["modified"] is None or res["modified"] >= res["published"]


def test_a_utc_time_is_shown_in_the_offset_the_page_gives_elsewhere():
    # nachrichten.at (set 06) writes datePublished in UTC; the page's day is the next one in +02:00
    tree = _tree('<meta property="article:published_time" content="2019-10-19T00:04:00+02:00">')
    res = resolve_dates(tree, "https://example.at/a", ld={"datePublished": "2019-10-18T22:04:00Z"},
                        extensive=False)
    assert res.source == "jsonld" and res.published == datetime(2019, 10, 18, 22, 4, tzinfo=UTC)
    assert res.local.isoformat() == "2019-10-19T00:04:00+02:00"
