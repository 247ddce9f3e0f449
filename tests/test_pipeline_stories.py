"""StoryPipeline as a Scrapy component: story_id and minhash on article items, state rebuilt
from the store at open (embedded store), top stories read back."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured

from extensions.store import StoreExtension
from newscrawl.items import ArticleItem, NodeItem
from newscrawl.store import NewsStore, top_stories
from pipelines.stories import StoryPipeline
from spiders.news import NewsSpider
from tests.conftest import component_crawler
from tests.test_stories import OTHER, REWRITE, WIRE

T0 = dt.datetime(2026, 12, 1, 8, 0, tzinfo=dt.timezone.utc)


def _article(fp, title, text, site="a.example", **fields):
    return ArticleItem(kind="article", fp=fp, url=f"https://{site}/{fp}", site=site, title=title,
                       text=text, fetched_at=T0, **fields)


def test_articles_get_a_story_and_a_signature_nodes_do_not():
    crawler = component_crawler()
    p = StoryPipeline.from_crawler(crawler)
    a = p.process_item(_article("a" * 16, "Sanktionen", WIRE))
    b = p.process_item(_article("b" * 16, "Strafen", REWRITE, site="b.example"))
    c = p.process_item(_article("c" * 16, "Sturm", OTHER))
    assert a["story_id"] == b["story_id"] == "a" * 16 and c["story_id"] == "c" * 16
    assert isinstance(a["minhash"], str) and len(a["minhash"]) == 684
    node = p.process_item(NodeItem(kind="node", fp="n" * 16, title="Politik"))
    assert "story_id" not in node
    empty = p.process_item(_article("e" * 16, None, ""))
    assert "story_id" not in empty
    stats = crawler.stats.get_stats()
    assert (stats["newscrawl/stories/new"], stats["newscrawl/stories/joined"],
            stats["newscrawl/stories/no_text"]) == (2, 1, 1)


def test_settings_and_switch():
    p = StoryPipeline.from_crawler(component_crawler({"NEWSCRAWL_STORIES_THRESHOLD": "0.9"}))
    assert p.clusterer.threshold == 0.9
    a = p.process_item(_article("a" * 16, "Sanktionen", WIRE))
    b = p.process_item(_article("b" * 16, "Strafen", REWRITE))
    assert a["story_id"] != b["story_id"]  # not similar enough at 0.9
    with pytest.raises(NotConfigured):
        StoryPipeline.from_crawler(component_crawler({"NEWSCRAWL_STORIES_ENABLED": False}))
    with pytest.raises(ValueError):
        StoryPipeline.from_crawler(component_crawler({"NEWSCRAWL_STORIES_THRESHOLD": 1.5}))


def test_a_failing_clusterer_is_a_counted_skip(monkeypatch):
    crawler = component_crawler()
    p = StoryPipeline.from_crawler(crawler)
    monkeypatch.setattr(p.clusterer, "assign", lambda *a: 1 / 0)
    item = p.process_item(_article("a" * 16, "T", WIRE))
    assert "story_id" not in item and crawler.stats.get_value("newscrawl/stories/errors") == 1


async def _send(crawler, signal, **kwargs):
    for _, result in await crawler.signals.send_catch_log_async(signal=signal, dont_log=CloseSpider,
                                                                **kwargs):
        if isinstance(result, BaseException):
            raise result


def _run(crawler, pipeline, items):
    """Open the spider (pipeline first, as Scrapy does), process ``items``, close it."""
    spider = NewsSpider.from_crawler(crawler, start_urls="https://a.example/")
    crawler.spider = spider
    out = []
    writer = crawler.get_extension(StoreExtension).writer

    async def scenario():
        await pipeline.open_spider(spider)
        await _send(crawler, signals.spider_opened, spider=spider)
        try:
            for item in items:
                out.append(pipeline.process_item(item))
                writer.add_page(dict(item))  # what MongoPipeline does
        finally:
            await _send(crawler, signals.spider_closed, spider=spider, reason="finished")

    asyncio.run(scenario())
    return out


def test_stories_continue_across_runs_through_the_store(embedded, database, tmp_path):
    settings = {"NEWSCRAWL_MONGO_URI": embedded.uri, "NEWSCRAWL_MONGO_DATABASE": database,
                "NEWSCRAWL_DATA_DIR": str(tmp_path), "NEWSCRAWL_REVISIT_NOW": T0.isoformat()}

    def run(items):
        crawler = component_crawler(settings, extensions=("store", "crawlstate"))
        return crawler, _run(crawler, StoryPipeline.from_crawler(crawler), items)

    run([_article("a" * 16, "Sanktionen", WIRE), _article("c" * 16, "Sturm", OTHER)])
    crawler, (copy,) = run([_article("b" * 16, "Strafen", REWRITE, site="b.example")])
    assert crawler.stats.get_value("newscrawl/stories/loaded") == 2
    assert copy["story_id"] == "a" * 16  # joined the story stored by the first run
    with NewsStore.connect(embedded.uri, database, timeout=5.0) as store:
        assert {fp for fp, _, _ in store.story_signatures()} == {"a" * 16, "b" * 16, "c" * 16}
        assert store.story_signatures(T0 + dt.timedelta(days=1)) == []
        top = store.top_stories(limit=5)
        assert [(r["story_id"], r["sites"], r["articles"]) for r in top] == [
            ("a" * 16, ["a.example", "b.example"], 2), ("c" * 16, ["a.example"], 1)]
        assert top_stories(store.articles, since=T0 + dt.timedelta(days=1)) == []
        assert top_stories(store, limit=1)[0]["title"] in ("Sanktionen", "Strafen")


def test_an_unreachable_store_starts_without_earlier_stories(tmp_path, caplog):
    crawler = component_crawler({"NEWSCRAWL_MONGO_URI": "mongodb://127.0.0.1:9/",
                                 "NEWSCRAWL_DATA_DIR": str(tmp_path),
                                 "NEWSCRAWL_MONGO_TIMEOUT": 0.3}, extensions=("store", "crawlstate"))
    p = StoryPipeline.from_crawler(crawler)
    asyncio.run(p.open_spider(NewsSpider.from_crawler(crawler, start_urls="https://a.example/")))
    assert crawler.stats.get_value("newscrawl/stories/errors") == 1
    assert "earlier articles not loaded" in caplog.text
    assert p.process_item(_article("a" * 16, "T", WIRE))["story_id"] == "a" * 16


def test_articles_not_seen_for_a_window_are_forgotten():
    from newscrawl.algorithms.stories import StoryClusterer

    crawler = component_crawler()
    now = [T0]
    p = StoryPipeline(crawler.stats, StoryClusterer(), window=3600.0, clock=lambda: now[0])
    p.process_item(_article("a" * 16, "Sanktionen", WIRE))
    p.process_item(_article("c" * 16, "Sturm", OTHER))
    now[0] = T0 + dt.timedelta(minutes=50)
    p.process_item(_article("c" * 16, "Sturm", OTHER))  # seen again: kept
    now[0] = T0 + dt.timedelta(minutes=70)
    late = p.process_item(_article("b" * 16, "Strafen", REWRITE))
    assert "a" * 16 not in p.clusterer and "c" * 16 in p.clusterer
    assert late["story_id"] == "b" * 16  # its story's article is out of the window
    assert crawler.stats.get_value("newscrawl/stories/forgotten") == 1
