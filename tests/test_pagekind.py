"""Page kinds that are not articles (newscrawl/algorithms/pagekind.py).

The real pages are read in place from ../shared/corpus (sets 04, 08, 11); those tests skip
without it.
"""

from __future__ import annotations

import gzip

import pytest

from newscrawl.algorithms.extraction import extract_article
from newscrawl.algorithms.pagekind import (
    REPEAT_URLS, RepeatTracker, declares_article, index_kind, page_kind,
)
from tests.conftest import shared_path

ARTICLE_TEXT = "Der Bundestag hat am Donnerstag den Haushalt beschlossen. " * 40  # 2,320 chars


@pytest.mark.parametrize("title", [
    "Seite nicht gefunden | Beispiel Zeitung", "404 - Page not found", "Page Not Found",
    "Страница не найдена", "页面不存在", "ページが見つかりません", "Página no encontrada",
    "Pagina non trovata", "Page introuvable", "Error 404", "Nie znaleziono strony",
])
def test_not_found_titles_are_soft_404s(title):
    assert page_kind("https://example.com/politik/2024/05/03/x.html", title=title,
                     text="Die gesuchte Seite gibt es leider nicht. Zur Startseite") == "soft_404"


def test_a_not_found_title_with_a_long_text_is_an_article():
    # an article *about* a 404 error page
    assert page_kind("https://example.com/tech/404-pages", title="Why 404 pages matter",
                     text=ARTICLE_TEXT) is None


@pytest.mark.parametrize("title", ["Found: the lost city", "Kohle: 404 Millionen", None])
def test_ordinary_titles_are_not_soft_404s(title):
    assert page_kind("https://example.com/a/b", title=title, text=ARTICLE_TEXT) is None


def test_tiny_text_alone_is_not_a_soft_404():
    # a broken or truncated real page keeps its few words as an article (tests/mocksite.py BROKEN)
    url = "https://example.com/news/12345"
    assert page_kind(url, title="Kaputt", text="Text ohne Ende") is None
    assert page_kind(url, title="Kaputt", text="") is None


@pytest.mark.parametrize("url, kind", [
    ("https://example.com/calendar/2024/05/archive", "calendar"),
    ("https://example.de/kalender/2024/05/", "calendar"),
    ("https://example.com/archive/2024/05/", "archive"),
    ("https://example.com/archive/2024/05/page/2", "archive"),
    ("https://example.de/archiv/", "archive"),
    ("https://example.com/2024/05/", "archive"),
    ("https://example.com/2024/05/30/", "archive"),
    ("https://example.com/tag/elections/", "tag"),
    ("https://example.com/tags/elections/page/3", "tag"),
    ("https://example.de/thema/bundestag", "tag"),
    ("https://example.com/author/jane-doe/", "author"),
    ("https://example.de/autor/max-muster/seite/2", "author"),
    # articles
    ("https://example.com/archives/2012/10/my-post.html", None),
    ("https://example.com/archives/123", None),
    ("http://blog.wenxuecity.com/archives.php?date=200506&blogID=1854&wid=2", None),
    ("https://example.com/2024/05/30/budget-vote.html", None),
    ("https://example.com/author/jane-doe/my-post-title/", None),
    ("https://example.com/tag/2024", None),
    ("https://example.com/", None),
    ("https://example.com/politik/", None),
])
def test_index_kinds_by_path(url, kind):
    assert index_kind(url) == kind


def test_index_paths_declaring_an_article_are_articles():
    url = "https://example.com/tag/elections/"
    assert page_kind(url, title="Elections", text=ARTICLE_TEXT) == "tag"
    assert page_kind(url, title="Elections", text=ARTICLE_TEXT, article_markup=True) is None


@pytest.mark.parametrize("ld_type, og_type, expected", [
    ("NewsArticle", None, True), (["WebPage", "BlogPosting"], None, True),
    ("http://schema.org/Article", None, True), (None, "article", True),
    ("WebPage", "website", False), (None, None, False), ({"x": 1}, None, False),
])
def test_declares_article(ld_type, og_type, expected):
    assert declares_article(ld_type, og_type) is expected


def test_the_same_page_on_many_urls_of_a_site_is_a_soft_404():
    tracker = RepeatTracker()
    title, text = "Beispiel Zeitung", "Diese Seite wurde verschoben. " * 10
    flags = [tracker.seen("example.de", f"https://example.de/a/{i}", title, text)
             for i in range(REPEAT_URLS + 2)]
    assert flags == [False] * (REPEAT_URLS - 1) + [True] * 3
    # the same URL again does not count twice; another site and another text are apart
    tracker2 = RepeatTracker()
    assert not any(tracker2.seen("example.de", "https://example.de/a/1", title, text) for _ in range(5))
    assert not tracker.seen("other.de", "https://other.de/a/1", title, text)
    assert not tracker.seen("example.de", "https://example.de/b/1", title, "Ein anderer Text")


def test_the_repeat_tracker_is_bounded():
    tracker = RepeatTracker(max_sites=3, per_site=2)
    for i in range(10):
        for j in range(5):
            tracker.seen(f"site{i}.de", f"https://site{i}.de/{j}", f"title {j}", "x")
    assert len(tracker._sites) == 3
    assert all(len(pages) <= 2 for pages in tracker._sites.values())
    with pytest.raises(ValueError):
        RepeatTracker(threshold=1)


# --- real pages ------------------------------------------------------------------------------


@pytest.mark.parametrize("parts, url", [
    (("04_fundus_multilingual_articles_gt", "de", "Postillon_2024_04_25.html.gz"),
     "https://www.der-postillon.com/2018/04/ostsee-krokodil.html"),
    (("04_fundus_multilingual_articles_gt", "de", "DW_2023_04_28.html.gz"),
     "https://www.dw.com/de/ukrainische-gegenoffensive-ziele-chancen-risiken/a-65464327"),
])
def test_real_articles_have_no_page_kind(parts, url):
    raw = shared_path("corpus", *parts).read_bytes()
    details: dict = {}
    res = extract_article(gzip.decompress(raw).decode("utf-8", "replace"), url, _details=details)
    assert page_kind(url, title=res["title"], text=res["text"],
                     article_markup=details["article_markup"]) is None


def test_real_home_page_served_under_an_archive_url_is_an_archive_page():
    # a real list page (set 11: netease rolling news) answered for a calendar-archive URL
    folder = shared_path("corpus", "11_gerapy_zh_list-vs-detail")
    pages = sorted(p for p in folder.rglob("*.htm*") if "list" in str(p).lower())
    if not pages:
        pytest.skip(f"no list page under {folder}")
    html = pages[0].read_bytes().decode("utf-8", "replace")
    details: dict = {}
    url = "https://news.163.com/calendar/2024/05/archive"
    res = extract_article(html, url, _details=details)
    assert page_kind(url, title=res["title"], text=res["text"],
                     article_markup=details["article_markup"]) == "calendar"
