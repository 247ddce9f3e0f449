"""LinkClassificationMiddleware as a Scrapy component, on a real captured home page."""

import pytest
from scrapy.http import HtmlResponse, Request

from middlewares.linkclass import LinkClassificationMiddleware
from newscrawl import meta
from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.items import ArticleItem, NodeItem
from spiders.news import NewsSpider
from tests.conftest import component_crawler, open_spider, shared_path

SZ = "https://www.sueddeutsche.de/"


def _setup(settings=None, **spider_args):
    crawler = component_crawler(settings)
    spider = NewsSpider.from_crawler(crawler, start_urls=SZ, **spider_args)
    open_spider(crawler, spider)
    return crawler, spider, LinkClassificationMiddleware.from_crawler(crawler)


def _home_response(depth=0):
    body = shared_path("corpus", "01_frontpage-archive_de_home-sections", "sueddeutsche.de_2024-10-01",
                       "index.html").read_bytes()
    request = Request(SZ, meta={meta.ENTRY_URL: SZ, meta.START_URL: SZ, meta.DEPTH: depth,
                                meta.ROLE: "entry"})
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
    assert sport.meta[meta.ROLE] == "node" and sport.meta[meta.DEPTH] == 1
    assert sport.meta[meta.START_URL] == SZ and sport.meta[meta.ENTRY_URL] == SZ
    assert sport.meta[meta.REFERER] == SZ and sport.meta[meta.PARENT_WEIGHT] == 1.0
    article = by_url["https://www.sueddeutsche.de/politik/libanon-israel-buergerkrieg-lux.RKQ8PqAWYWXaxgmp2UQ4YL"]
    assert article.callback == spider.parse_article
    assert article.meta[meta.LINK_CLASS] == "downward"
    assert article.meta[meta.FEATURES]["html_tag"] == 1
    # links and items are keyed by the one page fingerprint (www. folded)
    page_fp = NewsRequestFingerprinter().page_fp
    assert item["fp"] == page_fp(SZ) == page_fp("https://sueddeutsche.de/")
    assert {link["target_fp"] for link in item["links"]} == {page_fp(link["target_url"])
                                                            for link in item["links"]}
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
    assert top.meta[meta.WEIGHT] == max(r.meta[meta.WEIGHT] for r in requests)


def test_frame_chains_stop_at_the_frame_depth_limit():
    _, spider, mw = _setup(depth="0")
    body = b"<html><body><iframe src='/frame/1.html'></iframe><a href='/x'>x</a></body></html>"

    def response(url, frame_depth):
        request_meta = {meta.ENTRY_URL: SZ, meta.DEPTH: 0, meta.ROLE: "frame",
                        meta.FRAME_DEPTH: frame_depth}
        return HtmlResponse(url, body=body, encoding="utf-8", request=Request(url, meta=request_meta))

    first = [o for o in _run(mw, spider, response(SZ + "page.html", 0)) if isinstance(o, Request)]
    frames = [r for r in first if r.meta[meta.LINK_CLASS] == "frame"]
    assert [r.url for r in frames] == ["https://www.sueddeutsche.de/frame/1.html"]
    assert frames[0].meta[meta.FRAME_DEPTH] == 1
    nested = [o for o in _run(mw, spider, response(frames[0].url, 1)) if isinstance(o, Request)]
    assert not [r for r in nested if r.meta[meta.LINK_CLASS] == "frame"]


def test_one_page_under_two_names_is_one_link():
    crawler, spider, mw = _setup()
    body = (b"<html><body><a href='https://www.sueddeutsche.de/politik/kanzler-trifft-minister-1.html'>a</a>"
            b"<a href='https://sueddeutsche.de/politik/kanzler-trifft-minister-1.html'>a</a>"
            b"<a href='https://www.sueddeutsche.de/sport'>s</a></body></html>")
    request = Request(SZ, meta={meta.ENTRY_URL: SZ, meta.START_URL: SZ, meta.DEPTH: 0, meta.ROLE: "entry"})
    item = _run(mw, spider, HtmlResponse(SZ, body=body, encoding="utf-8", request=request))[0]
    assert len(item["links"]) == 2 == sum(item["link_counts"].values())
    per_site = {k: v for k, v in crawler.stats.get_stats().items()
                if k.startswith("newscrawl/linkclass/") and k.endswith("/sueddeutsche.de")}
    assert sum(per_site.values()) == 2


# --- issue 10: channels on other branches and sister hosts, service links dropped -------------

def _sport_response(depth=0):
    body = shared_path("corpus", "01_frontpage-archive_de_home-sections", "sueddeutsche.de_2024-10-01",
                       "sport.html").read_bytes()
    url = SZ + "sport"
    request = Request(url, meta={meta.ENTRY_URL: url, meta.START_URL: url, meta.DEPTH: depth,
                                 meta.ROLE: "entry"})
    return HtmlResponse(url, body=body, encoding="utf-8", request=request)


def test_channels_on_other_branches_are_requested_and_service_links_are_not():
    crawler, spider, mw = _setup(depth="1")
    out = _run(mw, spider, _sport_response())
    nodes = {r.url: r for r in out if isinstance(r, Request) and r.callback == spider.parse_node}
    # /sport's page links /politik and /thema/Bundesliga: CROSSWISE, followed as channels
    politik = nodes["https://www.sueddeutsche.de/politik"]
    assert politik.meta[meta.LINK_CLASS] == "crosswise" and politik.meta[meta.DEPTH] == 1
    assert politik.meta[meta.ROLE] == "node"
    assert "https://www.sueddeutsche.de/thema/Bundesliga" in nodes
    assert "https://sz-magazin.sueddeutsche.de/" in nodes  # a sister host's channel
    assert not [u for u in nodes if "gutscheine" in u or "stellenmarkt" in u or "raetsel" in u]
    assert "https://www.sueddeutsche.de/" not in nodes  # UPWARD: dropped (seed 004)
    stats = crawler.stats.get_stats()
    assert stats["newscrawl/linkclass/dropped/service:host"] > 0
    assert stats["newscrawl/linkclass/dropped/service:path"] > 0
    item = out[0]
    dropped = {link["target_url"] for link in item["links"] if link["role"] == "dropped"}
    assert "https://produkte.sueddeutsche.de/" in dropped  # the subscription shop


def test_node_requests_stop_at_the_depth_limit():
    _, spider, mw = _setup(depth="0")
    out = _run(mw, spider, _sport_response())
    assert not [r for r in out if isinstance(r, Request) and r.meta[meta.ROLE] == "node"]


def test_rules_file_setting_reaches_the_classifier(tmp_path):
    import json
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"sites": {"sueddeutsche.de": {"paths": ["thema"]}}}))
    crawler, spider, mw = _setup({"NEWSCRAWL_LINKCLASS_RULES": str(rules)}, depth="1")
    out = _run(mw, spider, _sport_response())
    nodes = [r.url for r in out if isinstance(r, Request) and r.callback == spider.parse_node]
    assert "https://www.sueddeutsche.de/politik" in nodes
    assert not [u for u in nodes if "/thema/" in u]
    assert crawler.stats.get_value("newscrawl/linkclass/dropped/service:path") > 20


def test_a_bad_rules_file_stops_the_crawl_at_start(tmp_path):
    bad = tmp_path / "rules.json"
    bad.write_text('{"hosts": "shop"}')
    with pytest.raises(ValueError, match="rules.json"):
        _setup({"NEWSCRAWL_LINKCLASS_RULES": str(bad)})
