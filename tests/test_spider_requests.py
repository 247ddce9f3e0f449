"""spiders.requests: the requests of re-runs (entries with their state, due known pages)."""

from __future__ import annotations

import asyncio

from scrapy.http import Request

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.algorithms.revisitplan import RevisitConfig, new_record, record_visit
from newscrawl.crawlstate import to_doc
from newscrawl.fingerprint import NewsRequestFingerprinter
from spiders.news import NewsSpider
from spiders.requests import (
    RECHECK_PRIORITY,
    due_article_requests,
    due_channel_requests,
    entry_request,
    pending_requests,
    seed_request,
)
from tests.conftest import component_crawler, open_spider

HOME = "https://s.example/"
A1 = "https://s.example/politik/2024-10-01/kanzler-trifft-minister-1.html"
NOW = 1_730_000_000.0
CFG = RevisitConfig()
fp = NewsRequestFingerprinter().page_fp


def _visited(url, role, *, at, **request):
    rec = new_record(fp(url), url, now=at, role=role, request={"entry_url": HOME, "depth": 1, **request})
    return record_visit(rec, now=at, cfg=CFG, status=200, how="first")


def _setup(records=()):
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": NOW})
    spider = NewsSpider.from_crawler(crawler, start_urls=HOME)
    open_spider(crawler, spider)
    state = crawler.get_extension(CrawlStateExtension).state
    state.load([to_doc(r) for r in records])
    return spider, state, crawler.stats


async def _collect(gen):
    return [x async for x in gen]


def test_re_run_requests():
    channel = _visited("https://s.example/politik/", "node", at=NOW - 86400)
    article = _visited(A1, "content", at=NOW - 86400 * 30)
    spider, state, stats = _setup([channel, article])
    seed = seed_request(state, Request(HOME, meta={meta.ROLE: "entry"}), page_fp=fp)
    assert seed.meta[meta.REVISIT]["known"] is False and state.get(fp(HOME))["seed"]
    channels = list(due_channel_requests(state, spider, stats))
    assert [r.url for r in channels] == ["https://s.example/politik/"]
    assert channels[0].callback == spider.parse_node and channels[0].meta[meta.REVISIT]["known"]
    articles = due_article_requests(state, spider, stats)
    assert [r.url for r in articles] == [A1] and articles[0].callback == spider.parse_article
    assert articles[0].priority == RECHECK_PRIORITY
    assert due_article_requests(state, spider, stats) == []  # scheduled once per run
    assert asyncio.run(_collect(spider.start()))  # the spider's start() works with a state too


def test_a_known_page_is_requested_as_it_was_found():
    channel = _visited("https://s.example/politik/", "node", at=NOW - 86400, start_url=HOME,
                       link_class="downward", features={"image": 1}, parent_weight=1.0, referer=HOME)
    channel["weight"] = 0.7
    spider, state, stats = _setup([channel])
    (request,) = due_channel_requests(state, spider, stats)
    assert {k: request.meta[k] for k in (meta.ENTRY_URL, meta.START_URL, meta.DEPTH, meta.LINK_CLASS,
                                         meta.FEATURES, meta.PARENT_WEIGHT, meta.WEIGHT,
                                         meta.REFERER, meta.ROLE)} == {
        meta.ENTRY_URL: HOME, meta.START_URL: HOME, meta.DEPTH: 1, meta.LINK_CLASS: "downward",
        meta.FEATURES: {"image": 1}, meta.PARENT_WEIGHT: 1.0, meta.WEIGHT: 0.7, meta.REFERER: HOME,
        meta.ROLE: "node"}


def test_pending_articles_are_prioritised_by_the_records_weight():
    pending = new_record(fp(A1), A1, now=NOW - 60, role="content", request={"entry_url": HOME})
    pending["weight"] = 1.0
    spider, state, stats = _setup([pending])
    (request,) = due_channel_requests(state, spider, stats)
    assert request.url == A1 and request.priority == 1900 and request.callback == spider.parse_article


def test_entry_request():
    request = entry_request(HOME, print)
    assert request.priority == 10_000_000 and request.callback is print
    assert request.meta[meta.ROLE] == "entry" and request.meta[meta.LINK_CLASS] == "entry"
    assert request.meta[meta.WEIGHT] == 1.0 and request.meta[meta.ENTRY_URL] == HOME


def test_pending_requests_are_the_pages_found_and_never_fetched_of_this_runs_entries():
    pending = new_record(fp(A1), A1, now=NOW - 60, role="content",
                         request={"entry_url": HOME, "depth": 1, "referer": HOME})
    other_entry = new_record(fp("https://t.example/a/1.html"), "https://t.example/a/1.html",
                             now=NOW - 60, role="content",
                             request={"entry_url": "https://t.example/"})
    channel = new_record(fp(HOME + "politik/"), HOME + "politik/", now=NOW - 60, role="node",
                         request={"entry_url": HOME, "depth": 1})
    done = _visited(HOME + "politik/2024-10-02/done-2.html", "content", at=NOW - 60)
    spider, state, stats = _setup([pending, other_entry, channel, done])
    requests = pending_requests(state, spider, skip={fp(HOME + "politik/")}, stats=stats)
    assert [r.url for r in requests] == [A1]
    assert requests[0].callback == spider.parse_article
    assert requests[0].meta[meta.REFERER] == HOME and fp(A1) in state.scheduled
    assert stats.get_value("newscrawl/revisit/requeued") == 1
