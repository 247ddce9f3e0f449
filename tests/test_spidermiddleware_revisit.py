"""RevisitSpiderMiddleware: fingerprints decide changed / unchanged; new, due and not-due links;
the request builders of re-runs."""

from __future__ import annotations

import asyncio

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from middlewares.revisit import RevisitSpiderMiddleware, due_article_requests, due_channel_requests, seed_request
from newscrawl.algorithms.changedetect import links_fingerprint, text_fingerprint
from newscrawl.algorithms.revisitplan import RevisitConfig, new_record, record_visit
from newscrawl.algorithms.urls import url_fingerprint as fp
from newscrawl.crawlstate import META_HOW, META_KEY, RunState, to_doc
from newscrawl.items import ArticleItem, NodeItem
from spiders.news import NewsSpider

HOME = "https://s.example/"
A1 = "https://s.example/politik/2024-10-01/kanzler-trifft-minister-1.html"
A2 = "https://s.example/politik/2024-10-02/opposition-kritisiert-plaene-2.html"
NOW = 1_730_000_000.0
CFG = RevisitConfig()


def _setup(records=(), budget=None):
    crawler = get_crawler(NewsSpider, {})
    crawler.stats.open_spider()
    spider = NewsSpider.from_crawler(crawler, start_urls=HOME)
    crawler.spider = spider
    state = RunState(CFG, now=NOW, budget=budget)
    state.load([to_doc(r) for r in records])
    crawler.newscrawl_revisit = state
    return RevisitSpiderMiddleware.from_crawler(crawler), spider, state, crawler.stats


def _visited(url, role, *, at, fingerprint=None, **kw):
    rec = new_record(fp(url), url, now=at, role=role, request={"entry_url": HOME, "depth": 1})
    return record_visit(rec, now=at, cfg=CFG, status=200, how="first", fingerprint=fingerprint, **kw)


def _response(url, meta):
    return HtmlResponse(url, body=b"<html><body>x</body></html>", request=Request(url, meta=meta))


def _out(mw, response, objects):
    return list(mw.process_spider_output(response, iter(objects)))


def test_unchanged_article_is_dropped_changed_one_marked():
    old = _visited(A1, "content", at=NOW - 86400 * 30, fingerprint=text_fingerprint("T", "alt"))
    mw, spider, state, stats = _setup([old])
    meta = {"newscrawl_role": "content", META_KEY: state.revisit_meta(fp(A1), A1),
            META_HOW: "fingerprint"}
    same = ArticleItem(kind="article", fp=fp(A1), url=A1, role="content", title="T", text="alt")
    assert _out(mw, _response(A1, meta), [same]) == []
    assert stats.get_value("newscrawl/revisit/unchanged/fingerprint") == 1
    meta[META_HOW] = "head"
    changed = ArticleItem(kind="article", fp=fp(A1), url=A1, role="content", title="T", text="neu")
    assert _out(mw, _response(A1, meta), [changed]) == [changed]
    assert state.changed_articles == {fp(A1): text_fingerprint("T", "alt")}
    assert [h["how"] for h in state.get(fp(A1))["history"]] == ["first", "fingerprint", "head"]
    assert state.host_policy("s.example").counts == {"true_change": 1}  # HEAD told the truth


def test_channel_fingerprint_is_the_link_set_and_new_links_are_counted():
    old = _visited(HOME, "node", at=NOW - 3600, fingerprint=links_fingerprint([A1]))
    known = _visited(A1, "content", at=NOW - 3600)
    mw, spider, state, _ = _setup([old, known])
    links = [{"target_url": u, "target_fp": fp(u), "role": "content"} for u in (A1, A2)]
    links.append({"target_url": "https://ads.example.net/x", "target_fp": "ad", "role": "dropped"})
    item = NodeItem(kind="node", fp=fp(HOME), url=HOME, role="node", links=links)
    meta = {"newscrawl_role": "node", META_KEY: state.revisit_meta(fp(HOME), HOME)}
    assert _out(mw, _response(HOME, meta), [item]) == [item]
    rec = state.get(fp(HOME))
    assert rec["history"][-1]["new_links"] == 1 and rec["listed"] == 2
    assert rec["fingerprint"] == links_fingerprint([A1, A2])  # the ad link is not part of it


def test_links_new_due_and_not_due():
    fresh = _visited(A1, "content", at=NOW - 60)  # visited a minute ago: not due
    mw, spider, state, stats = _setup([fresh])
    linked = [Request(u, meta={"newscrawl_role": "content", "newscrawl_weight": 0.5})
              for u in (A1, A2, A2)]
    out = _out(mw, _response(HOME, {}), linked)
    assert [r.url for r in out] == [A2]
    assert out[0].meta[META_KEY] == {"fp": fp(A2), "url": A2, "known": False}
    assert state.get(fp(A2))["last_visit"] is None  # known now, to visit
    assert stats.get_value("newscrawl/revisit/not_due") == 1
    assert stats.get_value("newscrawl/revisit/new") == 1
    assert stats.get_value("newscrawl/revisit/already_scheduled") == 1


def test_budget_orders_by_expected_new_articles():
    mw, spider, state, _ = _setup(budget=10)
    out = _out(mw, _response(HOME, {}), [
        Request(A1, meta={"newscrawl_role": "content", "newscrawl_weight": 1.0}),
        Request("https://s.example/sport/", meta={"newscrawl_role": "node"}),
    ])
    assert [r.priority for r in out] == [1900, 1000]


def test_re_run_requests():
    channel = _visited("https://s.example/politik/", "node", at=NOW - 86400)
    article = _visited(A1, "content", at=NOW - 86400 * 30)
    mw, spider, state, stats = _setup([channel, article])
    seed = seed_request(state, Request(HOME, meta={"newscrawl_role": "entry"}))
    assert seed.meta[META_KEY]["known"] is False and state.get(fp(HOME))["seed"]
    channels = list(due_channel_requests(state, spider, stats))
    assert [r.url for r in channels] == ["https://s.example/politik/"]
    assert channels[0].callback == spider.parse_node and channels[0].meta[META_KEY]["known"]
    articles = due_article_requests(state, spider, stats)
    assert [r.url for r in articles] == [A1] and articles[0].callback == spider.parse_article
    assert due_article_requests(state, spider, stats) == []  # scheduled once per run
    assert asyncio.run(_collect(spider.start()))  # the spider's start() works with a state too


async def _collect(gen):
    return [x async for x in gen]


def test_disabled():
    crawler = get_crawler(NewsSpider, {"NEWSCRAWL_REVISIT_ENABLED": False})
    with pytest.raises(NotConfigured):
        RevisitSpiderMiddleware.from_crawler(crawler)
