"""MongoPipeline.process_item: what an item becomes in the write buffer (no database needed)."""

import asyncio
import dataclasses
import datetime as dt

from itemadapter import ItemAdapter

from newscrawl.items import ArticleItem, NodeItem
from pipelines.mongo import MongoPipeline

T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=dt.timezone.utc)


def _buffered(item) -> dict:
    pipeline = MongoPipeline(stats=None, batch_size=10_000, flush_interval=3600.0)
    assert asyncio.run(pipeline.process_item(item)) is item
    (doc,) = pipeline._buffer
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
