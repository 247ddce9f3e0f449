"""The news spider's arguments and page callbacks."""

import asyncio

import pytest
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.test import get_crawler

from newscrawl.items import ArticleItem, NodeItem
from spiders.news import NewsSpider, read_entry_urls


def test_entry_urls_from_argument_and_seeds_file(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# portals\nhttps://www.qq.com/\n\nwww.sina.com.cn/  # no scheme\nhttps://www.qq.com/\n"
                     "junk line here\nftp://files.example/\n")
    assert read_entry_urls("https://a.example/, https://b.example/", str(seeds)) == [
        "https://a.example/", "https://b.example/", "https://www.qq.com/", "http://www.sina.com.cn/"]


@pytest.mark.parametrize("kwargs, message", [
    ({}, "give entry URLs"),
    ({"seeds": "/nonexistent/seeds.txt"}, "cannot read seeds file"),
    ({"start_urls": "http://"}, "no host"),
])
def test_bad_entry_arguments_fail_clearly(kwargs, message):
    with pytest.raises(ValueError, match=message):
        read_entry_urls(**kwargs)


def test_bad_seed_lines_are_skipped_and_counted(tmp_path, caplog):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes("\ufeffhttps://www.qq.com/\nhttp://\nnot a url\nftp://x/\nhttps:///path\n"
                      "www.sina.com.cn/\n".encode("utf-8"))
    skipped = []
    with caplog.at_level("WARNING"):
        urls = read_entry_urls(seeds=str(seeds), skipped=skipped)
    assert urls == ["https://www.qq.com/", "http://www.sina.com.cn/"]  # BOM dropped
    assert [entry for entry, _ in skipped] == ["http://", "not a url", "ftp://x/", "https:///path"]
    assert "Skipping entry 'http://'" in caplog.text
    crawler = get_crawler(NewsSpider)
    spider = NewsSpider.from_crawler(crawler, seeds=str(seeds))
    assert spider.entry_urls == urls
    first = asyncio.run(spider.start().__anext__())  # counted when the crawl starts
    assert first.url == urls[0] and crawler.stats.get_value("newscrawl/seeds/skipped") == 4


def test_seeds_file_not_utf8_is_one_clear_error(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes("https://www.qq.com/\nhttps://www.heise.de/Stra\u00dfe\n".encode("latin-1"))
    with pytest.raises(ValueError) as info:
        read_entry_urls(seeds=str(seeds))
    message = str(info.value)
    assert str(seeds) in message and "not UTF-8" in message
    assert "byte offset 45 (line 2)" in message and "0xdf" in message and "\n" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_only_bad_seed_lines_is_a_clear_error(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://\nftp://x/\n# comment\n")
    with pytest.raises(ValueError, match=r"no valid entry URL \(2 skipped; first: 'http://'"):
        read_entry_urls(seeds=str(seeds))


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": "two"}, "depth must be a whole number"),
    ({"depth": "-1"}, "depth must be >= 0"),
    ({"strategy": "random"}, "strategy must be one of"),
])
def test_bad_spider_arguments_fail_clearly(kwargs, message):
    crawler = get_crawler(NewsSpider)
    with pytest.raises(ValueError, match=message):
        NewsSpider.from_crawler(crawler, start_urls="https://www.heise.de/", **kwargs)


def _spider(**kwargs):
    crawler = get_crawler(NewsSpider, {"NEWSCRAWL_EXTRACT_MAX_BYTES": 2000})
    spider = NewsSpider.from_crawler(crawler, start_urls="https://www.heise.de/", **kwargs)
    spider.extract_in_thread = False  # no reactor here: extract inline
    crawler.stats.open_spider()
    return spider


def _articles(spider, response):
    import asyncio
    return asyncio.run(_collect(spider.parse_article(response)))


def test_settings_defaults_and_arguments():
    spider = _spider(depth="3", strategy="best")
    assert spider.max_depth == 3 and spider.strategy == "best"
    assert _spider().max_depth == 2 and _spider().strategy == "bfs"


async def _collect(gen):
    return [x async for x in gen]


def test_start_requests_are_entries(event_loop=None):
    import asyncio
    spider = _spider()
    requests = asyncio.run(_collect(spider.start()))
    assert [r.url for r in requests] == ["https://www.heise.de/"]
    meta = requests[0].meta
    assert meta["newscrawl_role"] == "entry" and meta["newscrawl_depth"] == 0
    assert meta["newscrawl_start_url"] == "https://www.heise.de/"


def _response(url, body, content_type=b"text/html; charset=utf-8", meta=None):
    request = Request(url, meta=meta or {"newscrawl_role": "content", "newscrawl_depth": 1})
    return HtmlResponse(url, body=body, headers={"Content-Type": content_type}, request=request)


def test_parse_node_and_parse_article():
    spider = _spider()
    node = next(iter(spider.parse_node(_response("https://www.heise.de/", b"<title> heise </title>"))))
    assert isinstance(node, NodeItem) and node["title"] == "heise" and node["site"] == "heise.de"
    html = (b"<html><head><title>T</title></head><body><article><h1>Titel</h1>"
            + b"<p>Ein Absatz mit genug Text fuer die Extraktion.</p>" * 5 + b"</article></body></html>")
    html = html[:1990]
    article = _articles(spider, _response("https://www.heise.de/news/a-b-c-d-1.html", html))[0]
    assert isinstance(article, ArticleItem) and article["kind"] == "article" and len(article["fp"]) == 16


def test_huge_and_non_html_pages_are_counted_skips():
    spider = _spider()
    big = _response("https://www.heise.de/news/big-page-here-now-1.html", b"<html>" + b"x" * 5000)
    article = _articles(spider, big)[0]
    assert article["text"] == "" and spider.crawler.stats.get_value(
        "newscrawl/extraction/skipped_too_large") == 1
    pdf = Response("https://www.heise.de/a.pdf", body=b"%PDF-1.4", request=Request("https://www.heise.de/a.pdf"))
    assert _articles(spider, pdf) == []
    assert spider.crawler.stats.get_value("newscrawl/spider/skipped_non_html") == 1
