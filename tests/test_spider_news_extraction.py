"""The news spider's article path: bodies that are not HTML are skipped (counted, logged), the
publication date's source and confidence reach the item, deep DOMs are counted."""

from __future__ import annotations

import datetime as dt
import logging
import os

import pytest

from tests.test_spider_news import NOW, _articles, _response, _spider


@pytest.mark.parametrize("body, why", [
    (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "signature"),
    (bytes(range(256)) * 4 + os.urandom(256), "binary"),
])
def test_non_html_body_served_as_html_is_a_counted_logged_skip(body, why, caplog):
    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 100_000})
    url = "https://www.heise.de/news/some-article-123.html"
    with caplog.at_level(logging.INFO, logger="spiders.news"):
        assert _articles(spider, _response(url, body)) == []
    stats = spider.crawler.stats
    assert stats.get_value("newscrawl/spider/skipped_non_html") == 1
    assert stats.get_value(f"newscrawl/spider/skipped_non_html/{why}") == 1
    assert any(url in r.getMessage() and why in r.getMessage() for r in caplog.records)


def test_article_item_carries_the_date_resolution():
    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 100_000})
    html = ("<html><head><title>T</title>"
            '<meta property="article:published_time" content="2024-10-01T09:30:00+02:00">'
            '<meta property="article:modified_time" content="2024-10-01T12:00:00+02:00">'
            "</head><body><article><h1>Titel</h1>"
            + "<p>Ein Absatz mit genug Text fuer die Extraktion des Artikels.</p>" * 5
            + "</article></body></html>").encode()
    item = _articles(spider, _response("https://www.heise.de/news/2024/10/01/a.html", html))[0]
    assert item["published"] == dt.datetime(2024, 10, 1, 7, 30, tzinfo=dt.timezone.utc)
    assert item["published_source"] == "og" and item["published_confidence"] == 0.95  # + url
    assert item["modified"] == dt.datetime(2024, 10, 1, 10, 0, tzinfo=dt.timezone.utc)


def test_a_date_after_the_fetch_is_not_taken():
    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 100_000})
    html = ("<html><head><title>T</title>"
            '<meta property="article:published_time" content="2031-01-01T00:00:00Z">'
            "</head><body><article><h1>Titel</h1>"
            + "<p>Ein Absatz mit genug Text fuer die Extraktion des Artikels.</p>" * 5
            + "</article></body></html>").encode()
    item = _articles(spider, _response("https://www.heise.de/news/a.html", html))[0]
    assert item["fetched_at"] < dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)  # run clock NOW
    assert NOW.startswith("2024") and item["published"] is None


def test_deep_dom_is_counted():
    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 1_000_000})
    html = ("<html><head><title>T</title></head><body><article><h1>Titel</h1>" + "<div>" * 3000
            + "<p>Ein Absatz mit genug Text fuer die Extraktion des Artikels ganz unten.</p>" * 3
            + "</div>" * 3000 + "</article></body></html>").encode()
    item = _articles(spider, _response("https://www.heise.de/news/deep.html", html))[0]
    assert "ganz unten" in item["text"]
    assert spider.crawler.stats.get_value("newscrawl/extraction/dom_flattened") == 1
    assert spider.crawler.stats.get_value("newscrawl/extraction/dom_truncated") is None


def _page(title: str, body: str) -> bytes:
    return (f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}"
            "</article></body></html>").encode()


def test_soft_404s_and_index_pages_are_stored_as_nodes_counted_and_logged_once(caplog):
    from newscrawl.items import ArticleItem, NodeItem

    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 100_000})
    stats = spider.crawler.stats
    not_found = _page("Seite nicht gefunden", "<p>Die angeforderte Seite existiert leider nicht mehr. "
                      "Bitte nutzen Sie die Suche.</p>")
    listing = _page("Kalender Mai 2024", "".join(
        f"<p>Meldung {i}: ein Absatz mit genug Text fuer die Extraktion des Artikels.</p>"
        for i in range(8)))
    with caplog.at_level(logging.INFO, logger="spiders.news"):
        items = []
        for i in range(3):
            items += _articles(spider, _response(f"https://www.heise.de/news/{i}/a-{i}.html", not_found))
        items += _articles(spider, _response("https://www.heise.de/calendar/2024/05/archive", listing))
    assert all(isinstance(it, NodeItem) and not isinstance(it, ArticleItem) for it in items)
    assert [it["page_kind"] for it in items] == ["soft_404"] * 3 + ["calendar"]
    assert items[0]["kind"] == "node" and items[0]["title"] == "Seite nicht gefunden"
    assert stats.get_value("newscrawl/extraction/soft_404") == 3
    assert stats.get_value("newscrawl/extraction/calendar") == 1
    assert stats.get_value("newscrawl/extraction/ok") is None
    logged = [r.getMessage() for r in caplog.records if "Not storing" in r.getMessage()]
    assert len(logged) == 2 and "soft_404" in logged[0] and "calendar" in logged[1]


def test_the_same_page_on_three_urls_of_a_site_is_a_soft_404():
    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 100_000})
    moved = _page("Heise", "<p>Dieser Inhalt ist umgezogen. Sie finden unsere aktuellen Meldungen "
                  "auf der Startseite, im Newsticker und in unseren Ressorts.</p>" * 3)
    kinds = [_articles(spider, _response(f"https://www.heise.de/news/x-{i}.html", moved))[0]
             .get("page_kind") for i in range(4)]
    assert kinds == [None, None, "soft_404", "soft_404"]
    assert spider.crawler.stats.get_value("newscrawl/extraction/soft_404") == 2


def test_article_item_keeps_the_publishers_local_time():
    spider = _spider({"NEWSCRAWL_EXTRACT_MAX_BYTES": 100_000})
    html = ("<html><head><title>T</title>"
            '<meta property="article:published_time" content="2024-10-01T09:30:00+02:00">'
            "</head><body><article><h1>Titel</h1>"
            + "".join(f"<p>Absatz {i} mit genug Text fuer die Extraktion des Artikels.</p>" for i in range(5))
            + "</article></body></html>").encode()
    item = _articles(spider, _response("https://www.heise.de/news/a-1.html", html))[0]
    assert item["published_local"] == "2024-10-01T09:30:00+02:00"
    assert item["published"] == dt.datetime(2024, 10, 1, 7, 30, tzinfo=dt.timezone.utc)
