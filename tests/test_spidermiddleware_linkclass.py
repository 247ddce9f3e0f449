"""LinkClassificationMiddleware as a Scrapy component, on a real captured home page."""

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from middlewares.linkclass import LinkClassificationMiddleware
from newscrawl.items import ArticleItem, NodeItem
from spiders.news import NewsSpider
from tests.conftest import shared_path

SZ = "https://www.sueddeutsche.de/"


def _setup(settings=None, **spider_args):
    crawler = get_crawler(NewsSpider, settings or {})
    spider = NewsSpider.from_crawler(crawler, start_urls=SZ, **spider_args)
    crawler.spider = spider
    crawler.stats.open_spider()
    return crawler, spider, LinkClassificationMiddleware.from_crawler(crawler)


def _home_response(depth=0):
    body = shared_path("corpus", "01_frontpage-archive_de_home-sections", "sueddeutsche.de_2024-10-01",
                       "index.html").read_bytes()
    request = Request(SZ, meta={"newscrawl_entry_url": SZ, "newscrawl_start_url": SZ,
                                "newscrawl_depth": depth, "newscrawl_role": "entry"})
    return HtmlResponse(SZ, body=body, encoding="utf-8", request=request)


def _run(middleware, spider, response):
    item = next(iter(spider.parse_node(response)))
    return list(middleware.process_spider_output(response, [item], spider))


def test_node_item_gets_links_and_requests_carry_meta():
    crawler, spider, mw = _setup()
    out = _run(mw, spider, _home_response())
    item = out[0]
    assert isinstance(item, NodeItem)
    requests = [o for o in out if isinstance(o, Request)]
    counts = item["link_counts"]
    assert counts["downward"] > 200 and counts["crosswise"] > 20 and counts["outward"] > 0
    assert sum(counts.values()) == len(item["links"])
    stats = crawler.stats.get_stats()
    for cls, n in counts.items():
        assert stats[f"newscrawl/linkclass/{cls}"] == n
        assert stats[f"newscrawl/linkclass/{cls}/sueddeutsche.de"] == n
    by_url = {r.url: r for r in requests}
    sport = by_url["https://www.sueddeutsche.de/sport"]
    assert sport.callback == spider.parse_node
    assert sport.meta["newscrawl_role"] == "node" and sport.meta["newscrawl_depth"] == 1
    assert sport.meta["newscrawl_start_url"] == SZ and sport.meta["newscrawl_entry_url"] == SZ
    article = by_url["https://www.sueddeutsche.de/politik/libanon-israel-buergerkrieg-lux.RKQ8PqAWYWXaxgmp2UQ4YL"]
    assert article.callback == spider.parse_article
    assert article.meta["newscrawl_link_class"] == "downward"
    assert article.meta["newscrawl_features"]["html_tag"] == 1
    assert "https://sz-magazin.sueddeutsche.de/" in by_url  # crosswise host entry
    assert not any("swmh-datenschutz" in u for u in by_url)  # outward links are dropped


def test_depth_limit_stops_node_links_but_not_content_links():
    _, spider, mw = _setup(depth="1")
    out = _run(mw, spider, _home_response(depth=1))
    requests = [o for o in out if isinstance(o, Request)]
    assert requests and all(r.callback == spider.parse_article for r in requests)


def test_same_page_twice_is_counted_once():
    crawler, spider, mw = _setup()
    _run(mw, spider, _home_response())
    first = crawler.stats.get_value("newscrawl/linkclass/downward")
    out = _run(mw, spider, _home_response())
    assert crawler.stats.get_value("newscrawl/linkclass/downward") == first
    assert crawler.stats.get_value("newscrawl/linkclass/skipped/duplicate_page") == 1
    assert not [o for o in out if isinstance(o, Request)]


def test_other_output_passes_through_and_disabled_raises_not_configured():
    from scrapy.exceptions import NotConfigured
    crawler, spider, mw = _setup()
    article = ArticleItem(url="https://x/", kind="article")
    assert list(mw.process_spider_output(_home_response(), [article], spider)) == [article]
    with pytest.raises(NotConfigured):
        _setup({"NEWSCRAWL_LINKCLASS_ENABLED": False})


def test_best_first_orders_by_weight():
    _, spider, mw = _setup(strategy="best")
    out = _run(mw, spider, _home_response())
    requests = [o for o in out if isinstance(o, Request)]
    top = max(requests, key=lambda r: r.priority)
    assert top.meta["newscrawl_weight"] == max(r.meta["newscrawl_weight"] for r in requests)


def test_frame_chains_stop_at_the_frame_depth_limit():
    _, spider, mw = _setup(depth="0")
    body = b"<html><body><iframe src='/frame/1.html'></iframe><a href='/x'>x</a></body></html>"

    def response(url, frame_depth):
        meta = {"newscrawl_entry_url": SZ, "newscrawl_depth": 0, "newscrawl_role": "frame",
                "newscrawl_frame_depth": frame_depth}
        return HtmlResponse(url, body=body, encoding="utf-8", request=Request(url, meta=meta))

    first = [o for o in _run(mw, spider, response(SZ + "page.html", 0)) if isinstance(o, Request)]
    frames = [r for r in first if r.meta["newscrawl_link_class"] == "frame"]
    assert [r.url for r in frames] == ["https://www.sueddeutsche.de/frame/1.html"]
    assert frames[0].meta["newscrawl_frame_depth"] == 1
    nested = [o for o in _run(mw, spider, response(frames[0].url, 1)) if isinstance(o, Request)]
    assert not [r for r in nested if r.meta["newscrawl_link_class"] == "frame"]
