"""Hostile cases of encodings, sizes, broken transfers and pages that are not articles (soft 404s,
a calendar archive) (tests/hostile/cases.py): each stores the right result, or skips it with a
counted, logged reason; the crawl itself finishes."""

from __future__ import annotations

from tests.hostile.cases import (
    CALENDAR_ARCHIVE_PATH, GBK_TITLE, HUGE_PAGE_BYTES, LONG_URL_BYTES, MANY_LINKS, RAW_DEFLATE_TITLE,
    SOFT_404_PAGES, soft_404_paths,
)


def test_the_crawl_finishes(hostile):
    assert hostile.stats["finish_reason"] == "'finished'"
    # Download errors are logged with their traceback by Scrapy; nothing else may fail.
    assert not hostile.log_lines(r"Spider error processing|Error processing|Error caught on signal")
    assert hostile.stat("log_count/CRITICAL") == 0


def test_gbk_without_charset_is_decoded(hostile):
    doc = hostile.article("gbk-no-charset")
    assert doc is not None and doc["title"] == GBK_TITLE and "\ufffd" not in doc["text"]
    assert doc["encoding"].lower() in ("gb18030", "gbk")
    assert hostile.stat("newscrawl/charset/undeclared") >= 1


def test_gzip_bomb_is_refused_while_decompressing(hostile):
    assert hostile.article("gzip-bomb") is None
    assert hostile.log_lines(r"WARNING: Ignored response <200 .*/gzip-bomb/.*decompressed")
    assert hostile.stat("httpcompression/response_count") >= 1  # the raw-deflate page


def test_raw_deflate_is_decoded(hostile):
    doc = hostile.article("raw-deflate")
    assert doc is not None and doc["title"] == RAW_DEFLATE_TITLE and "Haushalt" in doc["text"]


def test_binary_labelled_html_stores_no_text(hostile):
    doc = hostile.article("binary-as-html")
    assert doc is None or not doc["text"]
    assert hostile.stat("newscrawl/extraction/empty") + hostile.stat(
        "newscrawl/spider/skipped_non_html") >= 1


def test_redirect_loop_is_counted_and_logged(hostile):
    assert hostile.article("redirect-loop") is None
    assert len(hostile.site.requests_to("/redirect-loop/2024")) == 2
    assert hostile.stat("newscrawl/redirect/loop") == 1
    assert hostile.log_lines(r"WARNING: Dropped http://127.0.0.1:\d+/redirect-loop/.*: its redirect "
                             r"loops back to http://127.0.0.1:\d+/redirect-loop/.* after 2 hops")


def test_calendar_trap_ends_at_the_depth_limit(hostile):
    months = {path.split("?")[0] for _, _, path, _ in hostile.site.requests_to("/calendar-trap/")}
    assert 1 <= len(months) <= 4  # the entry, its pages of depth 1; never an endless walk


def test_slowloris_times_out_and_is_counted(hostile):
    assert hostile.article("slowloris") is None
    assert hostile.stat("downloader/exception_type_count/"
                        "scrapy.exceptions.DownloadTimeoutError") >= 1
    assert hostile.log_lines(r"ERROR: Error downloading <GET .*/slowloris/")


def test_reset_and_short_body_are_data_loss_errors(hostile):
    for name in ("reset-mid-body", "short-body"):
        assert hostile.article(name) is None
        assert hostile.log_lines(rf"ERROR: Error downloading <GET .*/{name}/")
    assert hostile.stat("downloader/exception_type_count/"
                        "scrapy.exceptions.ResponseDataLossError") >= 2


def test_50_mb_page_is_cancelled_at_download_maxsize(hostile):
    assert hostile.article("huge-page") is None
    assert hostile.log_lines(rf"Expected to receive {HUGE_PAGE_BYTES} bytes which is larger than "
                             r"download max size .*/huge-page/")
    assert hostile.stat("downloader/exception_type_count/"
                        "scrapy.exceptions.DownloadCancelledError") >= 1


def test_100000_links_are_capped_and_counted(hostile):
    # counted and logged (INFO: a page with many links is no fault)
    node = hostile.store.nodes.find_one({"url": hostile.url("/many-links/")})
    assert node is not None
    assert hostile.stat("newscrawl/linkclass/skipped/truncated") == MANY_LINKS - 500
    assert hostile.log_lines(rf"INFO: Read the first 500 links of http://127.0.0.1:\d+/many-links/; "
                             rf"{MANY_LINKS - 500} more not read")


def test_10_kb_url_is_dropped_and_counted(hostile):
    assert hostile.stat("urllength/request_ignored_count") >= 1
    assert hostile.log_lines(r"INFO: Ignoring link \(url length > 2083\): http://127.0.0.1:\d+/long-url/")
    assert not hostile.site.requests_to("/long-url/2024")
    assert LONG_URL_BYTES > 2083  # Scrapy's URLLENGTH_LIMIT


def test_every_request_went_to_an_allowed_host(hostile):
    assert hostile.site.connections_to("trap") == []


def test_soft_404s_are_not_stored_as_articles(hostile):
    urls = [hostile.url(p) for p in soft_404_paths()]
    assert all(len(hostile.site.requests_to(p)) >= 1 for p in soft_404_paths())  # all fetched
    assert hostile.store.articles.count_documents({"url": {"$in": urls}}) == 0
    assert hostile.stat("newscrawl/extraction/soft_404") == SOFT_404_PAGES
    nodes = list(hostile.store.nodes.find({"url": {"$in": urls}}))
    assert len(nodes) == SOFT_404_PAGES and {n["page_kind"] for n in nodes} == {"soft_404"}
    assert len(hostile.log_lines(r"Not storing .* a soft_404 page")) == 1  # logged once


def test_a_calendar_archive_page_is_not_stored_as_an_article(hostile):
    url = hostile.url(CALENDAR_ARCHIVE_PATH)
    assert hostile.site.requests_to(CALENDAR_ARCHIVE_PATH)
    assert hostile.store.articles.find_one({"url": url}) is None
    node = hostile.store.nodes.find_one({"url": url})
    # fetched as an article (role content), stored as a node with its kind
    assert node is not None and node["role"] == "content" and node["page_kind"] == "calendar"
    assert hostile.stat("newscrawl/extraction/calendar") == 1
