"""CrawlStatePipeline: an item's weight into its record (one weight), the link graph marked as
changed, the stored version of a changed article kept through the store's writer."""

from __future__ import annotations

import datetime as dt

import pytest
from scrapy.exceptions import NotConfigured

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension
from pipelines.crawlstate import CrawlStatePipeline
from tests.conftest import component_crawler

NOW = "2024-10-02T08:00:00Z"


def _setup(settings=None):
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": NOW, **(settings or {})},
                                extensions=("store", "crawlstate"))
    pipeline = CrawlStatePipeline.from_crawler(crawler)
    archived = []
    pipeline.writer.archive = lambda fp, doc, *, at: archived.append((fp, doc, at))
    return pipeline, crawler.get_extension(CrawlStateExtension).state, archived


def test_weight_goes_into_the_record_of_the_requested_url():
    pipeline, state, _ = _setup()
    state.ensure("req", "https://s.example/a", role="content", weight=0.2)
    state.aliases["final"] = "req"  # the page was redirected
    item = {"fp": "final", "kind": "article", "weight": 0.6}
    assert pipeline.process_item(item) is item
    assert state.get("req")["weight"] == 0.6 and not state.links_changed
    pipeline.process_item({"fp": "n", "kind": "node", "weight": 1.0})
    assert state.links_changed


def test_the_previous_version_of_a_changed_article_is_kept_first():
    pipeline, state, archived = _setup()
    state.changed_articles["a1"] = "old text fingerprint"
    item = {"fp": "a1", "kind": "article", "title": "T (aktualisiert)", "text": "neu",
            "published": None, "authors": ["X"], "url": "https://s.example/a1"}
    pipeline.process_item(item)
    ((fp, doc, at),) = archived
    assert fp == "a1" and doc == {"title": "T (aktualisiert)", "text": "neu", "published": None,
                                  "authors": ["X"]}
    start = dt.datetime.fromisoformat(NOW.replace("Z", "+00:00"))  # the run clock
    assert start <= at < start + dt.timedelta(minutes=5)
    assert "a1" not in state.changed_articles
    pipeline.process_item(item)
    assert len(archived) == 1  # once per change


def test_versions_off():
    pipeline, state, archived = _setup({"NEWSCRAWL_VERSIONS_ENABLED": False})
    state.changed_articles["a1"] = None
    pipeline.process_item({"fp": "a1", "kind": "article"})
    assert archived == []


def test_configuration():
    crawler = component_crawler(extensions=("store", "crawlstate"))
    pipeline = CrawlStatePipeline.from_crawler(crawler)
    assert pipeline.state is crawler.get_extension(CrawlStateExtension).state
    assert pipeline.writer is crawler.get_extension(StoreExtension).writer
    assert CrawlStatePipeline.from_crawler(component_crawler()).writer is None  # no store
    with pytest.raises(NotConfigured):
        CrawlStatePipeline.from_crawler(component_crawler({"NEWSCRAWL_REVISIT_ENABLED": False}))
    with pytest.raises(NotConfigured, match="CrawlStateExtension"):
        CrawlStatePipeline.from_crawler(component_crawler(extensions=()))
