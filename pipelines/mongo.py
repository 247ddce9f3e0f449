"""Item pipeline: hand every page item to the store's writer (:mod:`newscrawl.store.writer`).

The writer (owned by :class:`extensions.store.StoreExtension`) buffers the items and writes them
in batches on its own thread: unordered bulk upserts of pages and their links
(:meth:`newscrawl.store.NewsStore.write_pages`), staged instead in the ``shadow`` update mode,
spilled to the data folder when the database is away and replayed at the next start. This
pipeline only converts the item and waits when the writer asks for back-pressure (more than two
batches queued). It is the last pipeline: what it hands over is what is stored.

Settings: ``NEWSCRAWL_MONGO_ENABLED`` (off raises ``NotConfigured``); the rest belongs to the
store extension. Stats: see :mod:`extensions.store`.
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy import Item

from extensions.store import StoreExtension, wait_for
from newscrawl.components import require_enabled, require_extension
from newscrawl.store.writer import BufferedWriter


class MongoPipeline:
    """Thin adapter: items → :meth:`BufferedWriter.add_page`.

    Args:
        writer: the run's writer.
    """

    def __init__(self, writer: BufferedWriter) -> None:
        self.writer = writer

    @classmethod
    def from_crawler(cls, crawler: Any) -> MongoPipeline:
        require_enabled(crawler.settings, "NEWSCRAWL_MONGO_ENABLED")
        return cls(require_extension(crawler, StoreExtension).writer)

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        # A shallow copy: the item's values are plain data (newscrawl/items.py: str, numbers,
        # datetimes, lists and dicts of those), which ItemAdapter.asdict() would copy deeply
        # for nothing; nothing changes them once this last pipeline has seen the item.
        doc = dict(item) if isinstance(item, (dict, Item)) else ItemAdapter(item).asdict()
        waiting = self.writer.add_page(doc)
        if waiting is not None:
            await wait_for(waiting)
        return item
