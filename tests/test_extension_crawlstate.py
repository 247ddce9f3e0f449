"""CrawlStateExtension: the run's state from settings and spider arguments; loaded at open,
written back through the store's writer, re-checks released at the first idle, and the end of
the run (shadow merge, then the summary; PageRank) — against the embedded store."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from unittest.mock import Mock

import pytest
from scrapy import signals
from scrapy.exceptions import DontCloseSpider

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension
from newscrawl.algorithms.revisitplan import RevisitConfig, new_record, record_visit
from newscrawl.crawlstate import to_doc
from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.store import NewsStore
from spiders.news import NewsSpider
from tests.conftest import _free_port, component_crawler

UTC = dt.timezone.utc
HOME = "https://s.example/"
A1 = "https://s.example/politik/2024-10-01/kanzler-trifft-minister-1.html"
NOW = "2024-11-01T00:00:00Z"
T_NOW = dt.datetime(2024, 11, 1, tzinfo=UTC).timestamp()
fp = NewsRequestFingerprinter().page_fp


def _crawler(uri, tmp_path, database="newscrawl", **settings):
    return component_crawler({"NEWSCRAWL_MONGO_URI": uri, "NEWSCRAWL_MONGO_DATABASE": database,
                              "NEWSCRAWL_DATA_DIR": str(tmp_path), "NEWSCRAWL_MONGO_TIMEOUT": 0.5,
                              "NEWSCRAWL_REVISIT_NOW": NOW, **settings},
                             extensions=("store", "crawlstate"))


def _run(crawler, during=None):
    spider = NewsSpider.from_crawler(crawler, start_urls=HOME)
    crawler.spider = spider
    ext = crawler.get_extension(CrawlStateExtension)

    async def scenario():
        await crawler.signals.send_catch_log_async(signal=signals.spider_opened, spider=spider)
        try:
            if during is not None:
                during(ext, spider)
        finally:
            await crawler.signals.send_catch_log_async(signal=signals.spider_closed, spider=spider,
                                                       reason="finished")

    asyncio.run(scenario())
    return ext


def _visited(url, role, *, at, **kw):
    rec = new_record(fp(url), url, now=at, role=role, request={"entry_url": HOME, "depth": 1})
    return record_visit(rec, now=at, cfg=RevisitConfig(), status=200, how="first", **kw)


def _stored(uri, database):
    with NewsStore.connect(uri, database) as store:
        pages, hosts = store.load_state()
        articles = list(store.articles.find({}, {"_id": 0}))
    return {p["_id"]: p for p in pages}, hosts, articles


def test_the_state_comes_from_settings_and_spider_arguments():
    crawler = component_crawler({"NEWSCRAWL_BUDGET": 3, "NEWSCRAWL_UPDATE_MODE": "Shadow"})
    state = crawler.get_extension(CrawlStateExtension).state
    assert (state.budget, state.mode, state.clock.fixed) == (3, "shadow", False)
    crawler.spider = NewsSpider(start_urls=HOME, now=NOW, budget="5")  # -a now= -a budget=
    state = CrawlStateExtension.from_crawler(crawler).state
    assert state.budget == 5 and state.clock.fixed
    assert T_NOW <= state.now() < T_NOW + 60 and state.run_id.startswith("20241101T000000Z")
    with pytest.raises(ValueError, match="NEWSCRAWL_UPDATE_MODE"):
        component_crawler({"NEWSCRAWL_UPDATE_MODE": "sometimes"})
    with pytest.raises(ValueError, match="DAMPING"):
        component_crawler({"NEWSCRAWL_PAGERANK_DAMPING": 1.5})


def test_loaded_at_open_written_back_at_close(embedded, database, tmp_path):
    with NewsStore.connect(embedded.uri, database) as store:
        store.ensure_state_indexes()
        store.write_state([to_doc(_visited(A1, "content", at=T_NOW - 86400 * 30))], [])
    crawler = _crawler(embedded.uri, tmp_path, database)

    def during(ext, spider):
        state = ext.state
        assert ext.recording and state.loaded and state.is_known(fp(A1))
        assert state.is_due(fp(A1))
        state.observe(fp(A1), A1, role="content", status=200, how="fingerprint", changed=False)
        state.ensure(fp(HOME), HOME, role="entry", seed=True, weight=1.0)
        state.learn("s.example", "head_ok")

    ext = _run(crawler, during)
    assert crawler.stats.get_value("newscrawl/crawlstate/loaded") == 1
    assert crawler.stats.get_value("newscrawl/crawlstate/written") == 2
    pages, hosts, _ = _stored(embedded.uri, database)
    assert pages[fp(A1)]["visits"] == 2 and pages[fp(HOME)]["weight"] == 1.0
    # every time of the run is on the run clock
    assert pages[fp(A1)]["last_visit"] >= dt.datetime(2024, 11, 1, tzinfo=UTC)
    assert [h["_id"] for h in hosts] == ["s.example"]
    with pytest.raises(RuntimeError):  # the writer is closed with the spider
        ext.store.writer.submit(print)


def test_due_rechecks_are_released_once_at_the_first_idle(embedded, database, tmp_path):
    with NewsStore.connect(embedded.uri, database) as store:
        store.ensure_state_indexes()
        store.write_state([to_doc(_visited(A1, "content", at=T_NOW - 86400 * 30))], [])
    crawler = _crawler(embedded.uri, tmp_path, database)
    crawler.engine = Mock()
    released = []

    def during(ext, spider):
        with pytest.raises(DontCloseSpider):
            ext.spider_idle(spider)
        ext.spider_idle(spider)  # once per run
        released.extend(call.args[0] for call in crawler.engine.crawl.call_args_list)

    _run(crawler, during)
    assert [r.url for r in released] == [A1] and released[0].callback.__name__ == "parse_article"
    assert crawler.stats.get_value("newscrawl/revisit/due_articles") == 1


def test_shadow_run_is_merged_before_the_summary_and_its_weights_after(embedded, database, tmp_path,
                                                                      caplog):
    crawler = _crawler(embedded.uri, tmp_path, database, NEWSCRAWL_UPDATE_MODE="shadow")
    article = {"kind": "article", "fp": fp(A1), "url": A1, "title": "Kanzler trifft Minister",
               "text": "Absatz", "weight": 0.2, "role": "content", "site": "s.example"}

    def during(ext, spider):
        writer = ext.store.writer
        assert writer.stage_run == ext.state.run_id
        writer.add_page(dict(article))
        ext.state.observe(fp(A1), A1, role="content", status=200, how="first")
        writer.update_weights({fp(A1): 0.9})  # held for the merge

    with caplog.at_level(logging.INFO):
        _run(crawler, during)
    assert crawler.stats.get_value("newscrawl/crawlstate/merged_items") == 1
    assert crawler.stats.get_value("newscrawl/crawlstate/merged_pages") == 1
    pages, _, articles = _stored(embedded.uri, database)
    (stored,) = articles  # the merged article is in the live collection, whole
    assert {k: stored[k] for k in ("fp", "url", "title", "text", "role")} == {
        k: article[k] for k in ("fp", "url", "title", "text", "role")}
    assert stored["weight"] == 0.9 and pages[fp(A1)]["visits"] == 1
    merged = caplog.text.index("merged into the live collections")
    assert caplog.text.index("Results: 1 articles") > merged


def test_pagerank_at_the_end_when_the_graph_changed(embedded, database, tmp_path):
    crawler = _crawler(embedded.uri, tmp_path, database)
    node = {"kind": "node", "fp": fp(HOME), "url": HOME, "links": [
        {"source_fp": fp(HOME), "target_fp": fp(A1), "target_url": A1}]}

    def during(ext, spider):
        ext.store.writer.add_page(node)
        ext.state.observe(fp(HOME), HOME, role="entry", status=200, how="first", seed=True)
        ext.state.observe(fp(A1), A1, role="content", status=200, how="first")
        ext.state.links_changed = True

    _run(crawler, during)
    pages, _, _ = _stored(embedded.uri, database)
    assert pages[fp(A1)]["pagerank"] > pages[fp(HOME)]["pagerank"] > 0
    assert crawler.stats.get_value("newscrawl/pagerank/pages") == 2


def test_without_a_store_nothing_is_recorded(tmp_path, caplog):
    crawler = component_crawler({"NEWSCRAWL_MONGO_ENABLED": False}, extensions=("store", "crawlstate"))
    with caplog.at_level(logging.WARNING):
        ext = _run(crawler)
    assert ext.store is None and ext.state.loaded and not ext.recording
    assert "records no crawl state" in caplog.text
    unreachable = _crawler(f"mongodb://127.0.0.1:{_free_port()}/", tmp_path)
    ext = _run(unreachable)
    assert ext.store is not None and not ext.recording and ext.state.loaded
    assert unreachable.stats.get_value("newscrawl/crawlstate/errors") == 1
    assert isinstance(ext.store, StoreExtension)
