"""The news spider: its arguments, its settings and run objects (bound at spider_opened), its
entry requests and page callbacks."""

import asyncio
import datetime as dt

import pytest
from scrapy.exceptions import CloseSpider
from scrapy.http import HtmlResponse, Request, Response

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.items import ArticleItem, NodeItem
from newscrawl.settingscheck import SPIDER_ARGUMENTS, SettingsError
from spiders.news import NewsSpider
from tests.conftest import component_crawler, open_spider

NOW = "2024-10-02T08:00:00Z"


def test_bad_seed_lines_are_counted_when_the_crawl_starts(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes("\ufeffhttps://www.qq.com/\nhttp://\nnot a url\nftp://x/\nhttps:///path\n"
                      "www.sina.com.cn/\n".encode("utf-8"))
    crawler = component_crawler()
    spider = NewsSpider.from_crawler(crawler, seeds=str(seeds))
    assert spider.entry_urls == ["https://www.qq.com/", "http://www.sina.com.cn/"]
    open_spider(crawler, spider)
    first = asyncio.run(spider.start().__anext__())  # counted when the crawl starts
    assert first.url == "https://www.qq.com/" and crawler.stats.get_value("newscrawl/seeds/skipped") == 4


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": "two"}, "depth must be a whole number"),
    ({"depth": "-1"}, "depth must be >= 0"),
    ({"strategy": "random"}, "strategy must be one of"),
])
def test_bad_spider_arguments_fail_clearly(kwargs, message):
    crawler = component_crawler()
    with pytest.raises(ValueError, match=message):
        NewsSpider.from_crawler(crawler, start_urls="https://www.heise.de/", **kwargs)


@pytest.mark.parametrize("settings, message", [
    ({"NEWSCRAWL_DEPTH": "two"}, "NEWSCRAWL_DEPTH must be a whole number, got 'two'"),
    ({"NEWSCRAWL_DEPTH": "-1"}, "NEWSCRAWL_DEPTH must be >= 0"),
    ({"NEWSCRAWL_STRATEGY": "random"}, "NEWSCRAWL_STRATEGY must be one of bfs, dfs, best"),
])
def test_bad_settings_are_refused_before_anything_opens(settings, message):
    # The add-on checks them when Scrapy applies the settings: before any extension (the
    # store) is built.
    with pytest.raises(SettingsError, match=message):
        component_crawler(settings)


def test_a_bad_setting_that_got_past_the_addon_closes_the_spider():
    crawler = component_crawler()
    spider = NewsSpider.from_crawler(crawler, start_urls="https://www.heise.de/")
    crawler.settings.frozen = False
    crawler.settings.set("NEWSCRAWL_STRATEGY", "random")
    with pytest.raises(CloseSpider) as info:
        open_spider(crawler, spider)
    assert info.value.reason == "bad_settings"


def test_unknown_settings_are_warned_about_with_the_closest_name(caplog):
    with caplog.at_level("WARNING"):
        component_crawler({"NEWSCRAWL_DEPHT": 1, "NEWSCRAWL_ZZZ": 2})
    assert "Unknown setting NEWSCRAWL_DEPHT ignored (did you mean NEWSCRAWL_DEPTH?)" in caplog.text
    assert "Unknown setting NEWSCRAWL_ZZZ ignored" in caplog.text


def test_bad_entries_are_counted_by_reason_and_one_that_cannot_be_requested_is_skipped():
    crawler = component_crawler()
    spider = NewsSpider.from_crawler(
        crawler, start_urls="https://www.heise.de/,javascript:x,http://a.example:99999/,"
                            "https://www.zeit.de/index,mailto:x@example.org")
    spider.entry_urls.insert(1, "https://[::1/broken")  # refused only when its request is built
    open_spider(crawler, spider)

    async def collect():
        return [r.url async for r in spider.start()]

    urls = asyncio.run(collect())
    assert urls == ["https://www.heise.de/", "https://www.zeit.de/index"]
    stats = crawler.stats.get_stats()
    assert stats["newscrawl/seeds/skipped"] == 4
    assert stats["newscrawl/seeds/skipped_not_http"] == 2
    assert stats["newscrawl/seeds/skipped_bad_port"] == 1
    assert stats["newscrawl/seeds/skipped_bad_url"] == 1
    assert stats["newscrawl/seeds/requested"] == 2


def _spider(settings=None, **kwargs):
    crawler = component_crawler({"NEWSCRAWL_EXTRACT_MAX_BYTES": 2000, "NEWSCRAWL_REVISIT_NOW": NOW,
                                 **(settings or {})})
    spider = NewsSpider.from_crawler(crawler, start_urls="https://www.heise.de/", **kwargs)
    spider.extract_in_thread = False  # no reactor here: extract inline
    open_spider(crawler, spider)
    return spider


async def _collect(gen):
    return [x async for x in gen]


def _articles(spider, response):
    return asyncio.run(_collect(spider.parse_article(response)))


def test_settings_defaults_and_arguments():
    spider = _spider(depth="3", strategy="best")
    assert spider.max_depth == 3 and spider.strategy == "best"
    assert _spider().max_depth == 2 and _spider().strategy == "bfs"
    assert _spider({"NEWSCRAWL_DEPTH": 1}).max_depth == 1
    assert _spider({"NEWSCRAWL_DEPTH": 1}, depth="0").max_depth == 0  # the argument wins


def test_the_run_objects_are_the_crawlers():
    spider = _spider()
    run = spider.crawler.get_extension(CrawlStateExtension)
    assert spider.clock is run.state.clock and spider.crawl_state is run.state
    assert spider.page_fp("http://www.heise.de/a") == spider.crawler.request_fingerprinter.page_fp(
        "http://heise.de/a")
    off = _spider({"NEWSCRAWL_REVISIT_ENABLED": False})
    assert off.crawl_state is None and off.clock is off.crawler.get_extension(
        CrawlStateExtension).state.clock


def test_page_fp_needs_an_open_spider():
    spider = NewsSpider.from_crawler(component_crawler(), start_urls="https://www.heise.de/")
    with pytest.raises(RuntimeError, match="not open"):
        spider.page_fp("https://www.heise.de/")


def test_start_requests_are_entries():
    spider = _spider()
    requests = asyncio.run(_collect(spider.start()))
    assert [r.url for r in requests] == ["https://www.heise.de/"]
    request_meta = requests[0].meta
    assert request_meta[meta.ROLE] == "entry" and request_meta[meta.DEPTH] == 0
    assert request_meta[meta.START_URL] == "https://www.heise.de/"
    assert request_meta[meta.REVISIT] == {"fp": spider.page_fp("https://www.heise.de/"),
                                          "url": "https://www.heise.de/", "known": False}


def _response(url, body, content_type=b"text/html; charset=utf-8", request_meta=None):
    request = Request(url, meta=request_meta or {meta.ROLE: "content", meta.DEPTH: 1})
    return HtmlResponse(url, body=body, headers={"Content-Type": content_type}, request=request)


def test_parse_node_and_parse_article():
    spider = _spider()
    node = next(iter(spider.parse_node(_response("https://www.heise.de/", b"<title> heise </title>"))))
    assert isinstance(node, NodeItem) and node["title"] == "heise" and node["site"] == "heise.de"
    html = (b"<html><head><title>T</title></head><body><article><h1>Titel</h1>"
            + b"<p>Ein Absatz mit genug Text fuer die Extraktion.</p>" * 5 + b"</article></body></html>")
    html = html[:1990]
    url = "https://www.heise.de/news/a-b-c-d-1.html"
    article = _articles(spider, _response(url, html))[0]
    assert isinstance(article, ArticleItem) and article["kind"] == "article" and len(article["fp"]) == 16
    assert article["fp"] == NewsRequestFingerprinter().page_fp(url)  # the page fingerprint
    # the run clock, not the wall clock: the run runs "at" NOW
    at = dt.datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    assert at <= article["fetched_at"] < at + dt.timedelta(minutes=5)


def test_item_fields_carry_the_page_context():
    spider = _spider()
    request_meta = {meta.ROLE: "content", meta.ENTRY_URL: "https://www.heise.de/",
                    meta.START_URL: "https://www.heise.de/news/", meta.DEPTH: 2,
                    meta.LINK_CLASS: "downward", meta.FEATURES: {"image": 1},
                    meta.PARENT_WEIGHT: 0.5, meta.WEIGHT: 0.4, meta.REFERER: "https://www.heise.de/news/"}
    node = next(iter(spider.parse_node(_response("https://www.heise.de/news/x/", b"<title>x</title>",
                                                 request_meta=request_meta))))
    assert {k: node[k] for k in ("entry_url", "start_url", "depth", "link_class", "features",
                                 "parent_weight", "referer", "role")} == {
        "entry_url": "https://www.heise.de/", "start_url": "https://www.heise.de/news/", "depth": 2,
        "link_class": "downward", "features": {"image": 1}, "parent_weight": 0.5,
        "referer": "https://www.heise.de/news/", "role": "content"}
    assert "weight" not in node  # the NewsPageRank pipeline computes it


def test_huge_and_non_html_pages_are_counted_skips():
    spider = _spider()
    big = _response("https://www.heise.de/news/big-page-here-now-1.html", b"<html>" + b"x" * 5000)
    article = _articles(spider, big)[0]
    assert article["text"] == "" and spider.crawler.stats.get_value(
        "newscrawl/extraction/skipped_too_large") == 1
    pdf = Response("https://www.heise.de/a.pdf", body=b"%PDF-1.4", request=Request("https://www.heise.de/a.pdf"))
    assert _articles(spider, pdf) == []
    assert spider.crawler.stats.get_value("newscrawl/spider/skipped_non_html") == 1


def test_an_unknown_spider_argument_is_warned_about_with_the_closest_name(caplog):
    crawler = component_crawler()
    with caplog.at_level("WARNING", logger="spiders.news"):
        spider = NewsSpider.from_crawler(crawler, start_urls="https://www.zeit.de/index",
                                         dpeth="0", _job="abc", budget="5")
    warnings = [r.getMessage() for r in caplog.records if r.name == "spiders.news"]
    assert warnings == ["Unknown spider argument dpeth (did you mean depth?)"]
    assert spider.max_depth == 0 and spider._depth_arg is None  # ignored, not read as depth


def test_every_argument_the_extensions_read_is_a_known_spider_argument():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    read = set()
    for path in [*root.glob("extensions/*.py"), *root.glob("middlewares/*.py")]:
        read |= set(re.findall(r'getattr\((?:spider|self\.spider), "(\w+)"',
                               path.read_text(encoding="utf-8")))
    arguments = read - {"name", "entry_urls", "entry_credentials", "max_depth", "crawl_state",
                        "clock", "strategy", "skipped_entries"}
    assert arguments and arguments <= set(SPIDER_ARGUMENTS), arguments - set(SPIDER_ARGUMENTS)
