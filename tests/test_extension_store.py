"""StoreExtension: one lease, one store, one writer; spill when the server does not answer; the
close order (pages, registered steps, summary, lease); the durable barrier."""

from __future__ import annotations

import asyncio
import logging
from unittest.mock import Mock

import pytest
from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured

from extensions.store import StoreExtension
from newscrawl.durability import Durable
from newscrawl.store import NewsStore, load_spill
from spiders.news import NewsSpider
from tests.conftest import _free_port, component_crawler

SITE = "https://s.example/"


def _crawler(uri, tmp_path, database="newscrawl", **settings):
    return component_crawler({"NEWSCRAWL_MONGO_URI": uri, "NEWSCRAWL_MONGO_DATABASE": database,
                              "NEWSCRAWL_DATA_DIR": str(tmp_path), "NEWSCRAWL_MONGO_TIMEOUT": 0.5,
                              **settings}, extensions=("store", "crawlstate"))


async def _send(crawler, signal, **kwargs):
    for _, result in await crawler.signals.send_catch_log_async(signal=signal, dont_log=CloseSpider,
                                                                **kwargs):
        if isinstance(result, BaseException):
            raise result


def _run(crawler, during=None):
    """Open the spider, run ``during(ext)`` (may return a coroutine), close the spider."""
    spider = NewsSpider.from_crawler(crawler, start_urls=SITE)
    crawler.spider = spider
    ext = crawler.get_extension(StoreExtension)

    async def scenario():
        try:
            await _send(crawler, signals.spider_opened, spider=spider)
            if during is not None:
                result = during(ext)
                if asyncio.iscoroutine(result):
                    await result
        finally:
            await _send(crawler, signals.spider_closed, spider=spider, reason="finished")

    asyncio.run(scenario())
    return ext


def _page(fp, **fields):
    return {"kind": "article", "fp": fp, "url": SITE + fp, "title": "T", **fields}


def test_pages_are_stored_then_the_steps_then_the_summary(embedded, database, tmp_path, caplog):
    crawler = _crawler(embedded.uri, tmp_path, database)
    order = []

    def during(ext):
        assert ext.connected and ext.uri == embedded.uri
        ext.at_close(step)
        ext.writer.add_page(_page("a" * 16))

    async def step():
        order.append("step")
        with NewsStore.connect(embedded.uri, database) as store:  # the last page is written
            order.append(store.articles.count_documents({}))

    with caplog.at_level(logging.INFO, logger="extensions.store"):
        _run(crawler, during)
    assert order == ["step", 1]
    assert "Results: 1 articles, 0 nodes, 0 links" in caplog.text
    assert crawler.stats.get_value("newscrawl/store/articles") == 1


def test_an_unreachable_server_spills_every_page(tmp_path):
    uri = f"mongodb://127.0.0.1:{_free_port()}/"
    crawler = _crawler(uri, tmp_path)
    ext = _run(crawler, lambda ext: [ext.writer.add_page(_page(fp)) for fp in ("a" * 16, "b" * 16)])
    assert not ext.connected
    (spill,) = tmp_path.glob("spill-news-mongo-*.jsonl")
    assert [d["fp"] for d in load_spill(spill)] == ["a" * 16, "b" * 16]
    assert crawler.stats.get_value("newscrawl/store/spilled") == 2


def test_a_bad_uri_closes_the_spider(tmp_path):
    crawler = _crawler("mongodb://bad host:x/", tmp_path)
    with pytest.raises(CloseSpider) as info:
        _run(crawler)
    assert info.value.reason == "store_unavailable"
    assert crawler.stats.get_value("newscrawl/store/errors") == 1


def test_prepare_upgrades_with_the_page_fingerprint_before_any_write(tmp_path):
    crawler = _crawler("mongodb://unused/", tmp_path)
    ext = crawler.get_extension(StoreExtension)
    store = Mock()
    store.replay_spill.return_value = {"articles": 2, "nodes": 1}
    store.upgrade.return_value = {"version": 2, "from_version": 1, "pages": 3}
    assert ext._prepare(store, tmp_path / "spill.jsonl") is True
    assert [call[0] for call in store.method_calls] == ["upgrade", "ensure_indexes", "replay_spill"]
    store.upgrade.assert_called_once_with(ext.page_fp)
    assert ext.page_fp("http://www.x.example/") == crawler.request_fingerprinter.page_fp(
        "http://x.example/")  # the crawler's page fingerprint
    assert crawler.stats.get_value("newscrawl/store/replayed") == 3


@pytest.mark.parametrize("counts, said", [
    ({"version": 2, "from_version": 1, "pages": 3, "links": 0}, True),  # an old folder re-keyed
    ({"version": 2, "from_version": 1, "pages": 0}, False),  # a new, empty store
    ({"version": 2, "from_version": 2, "pages": 0}, False),  # a current store
])
def test_the_upgrade_is_logged_only_when_it_rekeyed_something(tmp_path, caplog, counts, said):
    ext = _crawler("mongodb://unused/", tmp_path).get_extension(StoreExtension)
    store = Mock()
    store.replay_spill.return_value = {}
    store.upgrade.return_value = counts
    with caplog.at_level(logging.INFO, logger="extensions.store"):
        ext._prepare(store, tmp_path / "spill.jsonl")
    assert ("Upgraded the store" in caplog.text) is said


def test_it_is_the_runs_durable_barrier(tmp_path):
    crawler = _crawler("mongodb://unused/", tmp_path)
    ext = crawler.get_extension(Durable)
    assert isinstance(ext, StoreExtension)
    ext.writer.add_page(_page("a" * 16))
    assert ext.durable_time() == ext.writer.durable_time() == 0.0


def test_disabled():
    with pytest.raises(NotConfigured):
        StoreExtension.from_crawler(component_crawler({"NEWSCRAWL_MONGO_ENABLED": False}))


def test_the_data_folder_given_to_the_crawl_wins_over_the_environment(tmp_path, monkeypatch):
    """One precedence (newscrawl/embedded/uri.py): a folder given as a setting (-s, settings.py,
    a scrapyd job, ``newscrawl crawl --data-dir``) > env NEWSCRAWL_DATA_DIR > ./data."""
    monkeypatch.setenv("NEWSCRAWL_DATA_DIR", str(tmp_path / "env"))
    given = component_crawler({"NEWSCRAWL_DATA_DIR": str(tmp_path / "given")}, extensions=("store",))
    assert given.get_extension(StoreExtension).data_dir == str(tmp_path / "given")
    default = component_crawler(extensions=("store",))  # only the default of defaults.py
    assert default.get_extension(StoreExtension).data_dir == ""  # so the environment decides
    from newscrawl.embedded import resolve_data_dir

    assert resolve_data_dir(default.get_extension(StoreExtension).data_dir) == str(tmp_path / "env")
