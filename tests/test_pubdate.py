"""The publication-date resolver (newscrawl/algorithms/pubdate.py) and its use by extract_article.

Real pages are read in place from ../shared/corpus (sets 06, 08, 12); those tests skip without it.
"""

from __future__ import annotations

import gzip
from datetime import date, datetime, timedelta, timezone

import pytest
from lxml import html as lxml_html

from newscrawl.algorithms.extraction import extract_article
from newscrawl.algorithms.pubdate import date_from_url, parse_datetime, resolve_dates, url_bounds
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


@pytest.mark.parametrize("markup, source", [
    ('<meta property="article:published_time" content="2024-09-29T10:03:00Z">', "og"),
    ('<script type="application/ld+json">{"@type": "NewsArticle", '
     '"datePublished": "2024-09-29T10:03:00Z"}</script>', "jsonld"),
    ('<span itemprop="datePublished" content="2024-09-29T10:03:00Z"></span>', "microdata"),
])
def test_page_markup_wins_over_the_sitemap_date(markup, source):
    # The page's own published markup is the publisher's statement about this page; a news
    # sitemap, often generated from a lagging CMS field, stays a candidate below it.
    res = resolve_dates(_tree(markup), "https://example.com/a",
                        sitemap_date="2024-09-29T09:00:00+00:00", extensive=False)
    assert res.source == source and res.published == datetime(2024, 9, 29, 10, 3, tzinfo=UTC)
    assert "sitemap" in {c.source for c in res.candidates}


def test_sitemap_date_wins_without_page_markup_and_over_the_feed():
    tree = _tree('<meta name="dc.date.issued" content="2024-09-29T11:00:00Z">')
    res = resolve_dates(tree, "https://example.com/a", sitemap_date="2024-09-29T09:58:00+00:00",
                        feed_date="Sun, 29 Sep 2024 12:00:00 GMT", extensive=False)
    assert res.source == "sitemap" and res.published == datetime(2024, 9, 29, 9, 58, tzinfo=UTC)
    # the feed date stays below the page's markup
    tree = _tree('<meta property="article:published_time" content="2024-09-29T10:03:00Z">')
    res = resolve_dates(tree, "https://example.com/a", feed_date="Sun, 29 Sep 2024 09:00:00 GMT",
                        extensive=False)
    assert res.source == "og" and res.published == datetime(2024, 9, 29, 10, 3, tzinfo=UTC)


def test_a_later_markup_date_is_an_update():
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


# --- wrong dates found on the corpus: one test per cause ------------------------------------


def _page(*parts: str) -> str:
    raw = shared_path("corpus", *parts).read_bytes()
    return (gzip.decompress(raw) if parts[-1].endswith(".gz") else raw).decode("utf-8", "replace")


def test_a_labelled_date_beats_htmldate_taking_a_teasers_date():
    # DW 2023-04-28 (set 04): no date markup; htmldate took the first <span class="date">,
    # a related story's 24.04.2023; the fact box says "Datum 28.04.2023" (a list item)
    html = _page("04_fundus_multilingual_articles_gt", "de", "DW_2023_04_28.html.gz")
    res = extract_article(html, "https://www.dw.com/de/ukrainische-gegenoffensive-ziele-chancen-risiken/"
                          "a-65464327", fetched_at=datetime(2023, 4, 28, 20, 25, tzinfo=UTC))
    assert res["published_source"] == "label"
    assert res["published"].date() == date(2023, 4, 28)


def test_a_labelled_date_beats_an_event_listing_time_element():
    # sonntag-sachsen.de (set 06): "VERÖFFENTLICHT AM 07.06.2019"; before, an unmarked <time> of
    # an event listing (2019-12-11) won, and htmldate read the header's date of the day
    html = _page("06_trafilatura_eval", "cache", "sonntag-sachsen.de.emanuel.html")
    res = resolve_dates(lxml_html.document_fromstring(html),
                        "https://www.sonntag-sachsen.de/emanuel-scobel-wird-thomanerchor-geschaeftsfuehrer")
    assert res.source == "label" and res.local == date(2019, 6, 7)


@pytest.mark.parametrize("text, expected", [
    ("Autor X  Datum 28.04.2023  Schlagwörter", date(2023, 4, 28)),
    ("Published: March 5, 2020 by X", date(2020, 3, 5)),
    ("Veröffentlicht am 7. Juni 2019", date(2019, 6, 7)),
    ("发布日期：2022年01月28日", date(2022, 1, 28)),
    ("Aktualisiert am 05.04.2025", None),  # an update, not the publication
    ("成文日期：2022年01月27日", None),  # the date a decree was written
    ("Update 28.04.2023", None),
    ("Datum 31.02.2023", None),  # no such day
    ("Posted 02/12/2024", None),  # slashed: D/M or M/D
    ("Date: 2020-03-05", date(2020, 3, 5)),
    ("Release date: 2024-05-01", None),  # a film's, in a review
    ("date 2024-05-01", None),  # the generic word needs its colon
])
def test_labelled_dates(text, expected):
    from newscrawl.algorithms.pubdate import _labelled_date

    assert _labelled_date(text) == expected


def test_htmldate_does_not_take_the_date_of_a_linked_page():
    # NHK News Web Easy (set 06): the only full date htmldate found was in the path of the link
    # to the regular news version, /news/html/20190619/...; the page is of 2019-06-24
    html = _page("06_trafilatura_eval", "eval_selected", "nhk.or.jp.k100.html")
    res = resolve_dates(lxml_html.document_fromstring(html),
                        "https://www3.nhk.or.jp/news/easy/k10011959621000/k10011959621000.html")
    assert res.local != date(2019, 6, 19)
    tree = _tree(body='<ul><li><a href="/news/2019/06/19/other-story.html">Other story</a></li></ul>')
    assert resolve_dates(tree, "https://example.com/news/a-story").published is None


def test_text_timestamps_of_a_comment_list_are_not_the_pages():
    # blog.chinesenewsnet.com 2006 (set 12): a sidebar list of recent comments, each
    # "<li><a>post</a> ... (2006-12-24 03:45:27)</li>", came before the post's own date
    raw, _truth = _set12("35687fb1-3d1f-46ac-a1c1-30ae027b2ae4.html")
    details: dict = {}
    extract_article(raw, "http://blog.chinesenewsnet.com/?p=1700", _details=details)
    assert not any(c.source == "text" and c.day == date(2006, 12, 24) for c in details["date_candidates"])
    tree = _tree(body="<ul><li><a href='/p/1'>Other post</a> (2006-12-24 03:45:27)</li></ul>"
                      "<p>Xinhua 2005-09-19 10:00</p>")
    res = resolve_dates(tree, "https://example.com/?p=1700")
    assert res.source == "text" and res.published == datetime(2005, 9, 19, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize("text, expected", [
    ("发布日期： 7/5/2005 9:23:57 PM", datetime(2005, 7, 5, 21, 23, 57)),  # 12-hour clock: US order
    ("9/17/2004 5:54:13", datetime(2004, 9, 17, 5, 54, 13)),  # 17 is no month
    ("17/09/2004 05:54", datetime(2004, 9, 17, 5, 54)),  # 17 is no month: day first
    ("Eix 02/12/2024 10:16 horas", None),  # El Mundo: 2 December, not February 12
])
def test_slashed_timestamps_are_read_only_when_the_order_is_unambiguous(text, expected):
    from newscrawl.algorithms.pubdate import _text_timestamp

    assert _text_timestamp(text) == expected


def test_an_ambiguous_spanish_byline_is_not_read_month_first():
    # El Mundo 2024-12-02 (set 04): "02/12/2024 10:16 horas" was read as 2024-02-12
    from newscrawl.algorithms.pubdate import _text_timestamp, _visible_text

    html = _page("04_fundus_multilingual_articles_gt", "es", "ElMundo_2024_12_02.html.gz")
    assert "02/12/2024" in html
    stamp = _text_timestamp(_visible_text(lxml_html.document_fromstring(html), lists=False))
    assert stamp is None or stamp.date() != date(2024, 2, 12)


# --- dates that respect their evidence (issue 23, item 2) ------------------------------------


@pytest.mark.parametrize("url, expected", [
    ("https://example.com/politik/2024/09/30/wahl.html", (date(2024, 9, 30), date(2024, 9, 30))),
    ("https://blog.example.com/2012/10/some-post.html", (date(2012, 10, 1), date(2012, 10, 31))),
    ("https://prachatai.com/journal/2020/06/88083", (date(2020, 6, 1), date(2020, 6, 30))),
    ("https://example.com/2024/02/", (date(2024, 2, 1), date(2024, 2, 29))),
    ("https://example.com/2023-12/recap", (date(2023, 12, 1), date(2023, 12, 31))),
    ("https://example.com/news/123456", None),
    ("https://example.com/a?month=2024/05", None),
    ("", None),
])
def test_url_bounds(url, expected):
    assert url_bounds(url) == expected


@pytest.mark.parametrize("value", ["10:52", "10:52 Uhr", "5:54:13 AM", "March", "Monday"])
def test_a_time_or_part_of_a_date_is_no_timestamp(value):
    # dateutil fills the missing parts from today: "10:52" became the fetch day at 10:52
    assert parse_datetime(value) is None


def test_a_time_without_a_date_never_takes_the_fetch_day():
    fetched = datetime(2013, 7, 2, 9, 0, tzinfo=UTC)
    tree = _tree('<meta name="date" content="10:52">', '<span itemprop="datePublished">10:52</span>')
    res = resolve_dates(tree, "https://blog.example.com/2012/10/a-post.html", fetched_at=fetched,
                        extensive=False)
    assert res.published is None


def test_abbr_date_published_is_read_from_its_title():
    tree = _tree(body='<abbr itemprop="datePublished" title="2017-09-09T10:52:00+02:00">10:52</abbr>')
    res = resolve_dates(tree, "https://example.de/a", fetched_at=datetime(2019, 1, 1, tzinfo=UTC),
                        extensive=False)
    assert res.source == "microdata"
    assert res.published == datetime(2017, 9, 9, 8, 52, tzinfo=UTC)
    assert res.local.isoformat() == "2017-09-09T10:52:00+02:00"


def test_the_urls_day_bounds_markup_on_both_sides():
    url = "https://example.com/2024/09/30/story.html"
    for ld in ("2024-09-29T10:00:00+02:00", "2024-10-02T10:00:00+02:00"):
        res = resolve_dates(_tree(), url, ld={"datePublished": ld}, extensive=False)
        assert res.source == "url" and res.published.date() == date(2024, 9, 30), ld
        assert [c.source for c in res.rejected] == ["jsonld"]
    # the page's own offset names the URL's day, or the next: kept with its time
    for ld in ("2024-09-30T23:30:00+02:00", "2024-10-01T00:30:00+02:00"):
        res = resolve_dates(_tree(), url, ld={"datePublished": ld}, extensive=False)
        assert res.source == "jsonld" and res.local.isoformat() == ld
    # a guess from the text must name the URL's day itself
    res = resolve_dates(_tree(body="<div>2024-10-01 00:30</div>"), url)
    assert res.source == "url" and "text" in {c.source for c in res.rejected}


def test_a_utc_time_on_the_day_before_the_urls_day_is_shown_on_the_urls_day():
    # nine.com.au (set 04): /...-20260701-p60bhj.html, datePublished 2026-06-30T16:34:54Z
    res = resolve_dates(_tree(), "https://www.nine.com.au/world-news/x-20260701-p60bhj.html",
                        ld={"datePublished": "2026-06-30T16:34:54Z"}, extensive=False)
    assert res.source == "jsonld" and res.published == datetime(2026, 6, 30, 16, 34, 54, tzinfo=UTC)
    assert isinstance(res.local, datetime) and res.local.date() == date(2026, 7, 1)
    assert res.local.astimezone(UTC) == res.published  # the instant is kept


def test_the_urls_month_bounds_guesses_and_earlier_markup():
    url = "https://blog.example.com/2012/10/a-post.html"
    fetched = datetime(2013, 7, 2, 9, 0, tzinfo=UTC)
    # a byline-like timestamp outside the month (a header clock): rejected
    tree = _tree(body="<div>2013-06-30 08:15</div>")
    res = resolve_dates(tree, url, fetched_at=fetched)
    assert res.published is None or res.published.date() != date(2013, 6, 30)
    # markup before the month: rejected
    res = resolve_dates(_tree(), url, ld={"datePublished": "2012-09-15T10:00:00+02:00"},
                        fetched_at=fetched, extensive=False)
    assert res.published is None and res.rejected[0].source == "jsonld"
    # markup after the month stands (a re-published story)
    res = resolve_dates(_tree(), url, ld={"datePublished": "2013-04-25T08:18:00+02:00"},
                        fetched_at=fetched, extensive=False)
    assert res.source == "jsonld" and res.published.date() == date(2013, 4, 25)


def test_the_fetch_day_is_a_publication_date_only_when_markup_says_so():
    fetched = datetime(2013, 7, 2, 9, 0, tzinfo=UTC)
    url = "https://news.example.ru/politics/12345"
    header_clock = "<div class='top'>2 июля 2013</div><div>2013-07-02 11:40</div>"
    res = resolve_dates(_tree(body=header_clock), url, fetched_at=fetched)
    assert res.published is None or res.published.date() != date(2013, 7, 2)
    assert "text" in {c.source for c in res.rejected}
    # the same day in the page's JSON-LD is the publisher's word
    res = resolve_dates(_tree(body=header_clock), url, fetched_at=fetched,
                        ld={"datePublished": "2013-07-02T11:40:00+04:00"})
    assert res.source == "jsonld" and res.published.date() == date(2013, 7, 2)
    # and so is a labelled date ("Published: ...")
    res = resolve_dates(_tree(body="<p>Published: July 2, 2013</p>"), url, fetched_at=fetched)
    assert res.source == "label" and res.published.date() == date(2013, 7, 2)
    # the fetch day in the URL too
    res = resolve_dates(_tree(body=header_clock), "https://news.example.ru/2013/07/02/x",
                        fetched_at=fetched)
    assert res.published.date() == date(2013, 7, 2)


def test_a_utc_winner_is_shown_in_the_publishers_offset_from_the_modified_time():
    tree = _tree('<meta property="article:modified_time" content="2019-10-20T09:00:00+02:00">')
    res = resolve_dates(tree, "https://example.at/a", ld={"datePublished": "2019-10-18T22:04:00Z"},
                        extensive=False)
    assert res.published == datetime(2019, 10, 18, 22, 4, tzinfo=UTC)
    assert res.local.isoformat() == "2019-10-19T00:04:00+02:00"


@pytest.mark.parametrize("parts, url, fetched, day", [
    # /2018/04/ in the URL, datePublished 2024-04-25 in JSON-LD and <time>: a re-published story
    (("de", "Postillon_2024_04_25.html.gz"), "https://www.der-postillon.com/2018/04/ostsee-krokodil.html",
     datetime(2024, 4, 25, 11, 2, 43, tzinfo=UTC), date(2024, 4, 25)),
    # fetched on its publication day; the date only in markup htmldate reads (not JSON-LD / OG)
    (("de", "BoersenZeitung_2024_10_23.html.gz"),
     "https://www.boersen-zeitung.de/kapitalmaerkte/steigende-us-zinsen-setzen-dax-zu",
     datetime(2024, 10, 23, 23, 15, 1, tzinfo=UTC), date(2024, 10, 23)),
    # UTC datePublished the evening before the URL's day (Sydney)
    (("au", "NineNews_2026_07_04.html.gz"), "https://www.nine.com.au/world-news/usa/supreme-court-"
     "upholds-birthright-citizenship-rejecting-trump-s-proposed-limits-20260701-p60bhj.html",
     datetime(2026, 7, 4, 18, 13, 44, tzinfo=UTC), date(2026, 7, 1)),
])
def test_evidence_rules_on_real_pages(parts, url, fetched, day):
    html = _page("04_fundus_multilingual_articles_gt", *parts)
    details: dict = {}
    res = extract_article(html, url, fetched_at=fetched, _details=details)
    local = details["published_local"]
    assert res["published"] is not None
    assert (local.date() if isinstance(local, datetime) else local) == day


def test_a_utc_time_without_a_zone_takes_the_day_the_page_prints():
    # mercurynews.com (set 06): datePublished 00:30 UTC, the byline's day the one before
    tree = _tree(body="<p class='byline'>Published: January 16, 2023 at 4:30 p.m.</p>")
    res = resolve_dates(tree, "https://www.example.com/letters-1119",
                        ld={"datePublished": "2023-01-17T00:30:41Z"})
    assert res.source == "jsonld" and res.published == datetime(2023, 1, 17, 0, 30, 41, tzinfo=UTC)
    assert res.local.date() == date(2023, 1, 16) and res.local.astimezone(UTC) == res.published
    # a printed day two days off is another date, not the zone's
    tree = _tree(body="<p>Published: January 14, 2023</p>")
    res = resolve_dates(tree, "https://www.example.com/letters-1119",
                        ld={"datePublished": "2023-01-17T00:30:41Z"})
    assert res.local.date() == date(2023, 1, 17)
