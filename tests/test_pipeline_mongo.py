"""MongoPipeline: what an item becomes in the store writer's buffer (no database needed)."""

import asyncio
import dataclasses
import datetime as dt

import pytest
from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from extensions.store import StoreExtension
from newscrawl.items import ArticleItem, NodeItem
from newscrawl.store.writer import BufferedWriter
from pipelines.mongo import MongoPipeline
from tests.conftest import component_crawler

T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=dt.timezone.utc)


def _buffered(item) -> dict:
    pipeline = MongoPipeline(BufferedWriter(batch_size=10_000, flush_interval=3600.0))
    assert asyncio.run(pipeline.process_item(item)) is item
    (doc,) = pipeline.writer.buffered_pages
    return doc


def test_items_are_buffered_as_the_dicts_asdict_gave() -> None:
    links = [{"source_fp": "n" * 16, "target_fp": f"t{i}", "features": {"image": 1, "bold": 0}}
             for i in range(3)]
    node = NodeItem(kind="node", fp="n" * 16, url="https://s.example/", features={},
                    link_counts={"downward": 3}, links=links, fetched_at=T0)
    article = ArticleItem(kind="article", fp="a" * 16, authors=["A. B."], published=T0,
                          features={"image": 1}, text="Body", title=None)
    for item in (node, article, {"kind": "article", "fp": "d" * 16, "authors": ["C"]}):
        doc = _buffered(item)
        assert type(doc) is dict and doc == ItemAdapter(item).asdict()
        assert doc is not item
    doc = _buffered(node)
    doc["weight"] = 0.5  # the buffered doc is a copy: the item keeps its own fields
    assert "weight" not in node
    assert _buffered(node)["links"] == links


def test_other_item_types_are_converted() -> None:
    @dataclasses.dataclass
    class Page:
        kind: str
        fp: str
        links: list

    doc = _buffered(Page("node", "p" * 16, [{"target_fp": "t"}]))
    assert doc == {"kind": "node", "fp": "p" * 16, "links": [{"target_fp": "t"}]}


def test_the_writer_is_the_store_extensions():
    crawler = component_crawler(extensions=("store", "crawlstate"))
    pipeline = MongoPipeline.from_crawler(crawler)
    assert pipeline.writer is crawler.get_extension(StoreExtension).writer
    with pytest.raises(NotConfigured):
        MongoPipeline.from_crawler(component_crawler({"NEWSCRAWL_MONGO_ENABLED": False},
                                                     extensions=("store", "crawlstate")))
    with pytest.raises(NotConfigured, match="StoreExtension"):
        MongoPipeline.from_crawler(component_crawler())
