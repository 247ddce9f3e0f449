"""Item pipeline of incremental re-crawls: what an item tells the run's crawl state.

For every page item (after :class:`pipelines.newsrank.NewsRankPipeline`, before
:class:`pipelines.mongo.MongoPipeline`):

* the page's NewsPageRank weight goes into its crawl-state record (the record's one ``weight``);
* a channel page marks the link graph as changed (PageRank is recomputed at the end);
* for an article whose text changed (:mod:`middlewares.revisit` marked it), the stored version
  is kept first (collection ``article_versions``, with a diff summary: headline changed, body
  changed by N %), on the store's writer thread, before the storage pipeline's write of the new
  text — the writer keeps that order.

The state and the writer are handed over by :class:`extensions.crawlstate.CrawlStateExtension`
and :class:`extensions.store.StoreExtension`; loading, writing back and the end-of-run work are
theirs. Settings: ``NEWSCRAWL_REVISIT_ENABLED`` (off raises ``NotConfigured``),
``NEWSCRAWL_VERSIONS_ENABLED``. Stats: ``newscrawl/crawlstate/versions`` (by the writer).
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension
from newscrawl import defaults
from newscrawl.components import require_enabled, require_extension
from newscrawl.crawlstate import RunState
from newscrawl.store.writer import BufferedWriter

#: Article fields a kept version is compared on.
VERSION_FIELDS = ("title", "text", "published", "authors")


class CrawlStatePipeline:
    """Weights into records, versions of changed articles (see the module docstring).

    Args:
        state: the run's crawl state.
        writer: the store's writer, or None without a store (no versions kept).
        versions: keep previous versions of changed articles.
    """

    def __init__(self, state: RunState, writer: BufferedWriter | None, *,
                 versions: bool = defaults.NEWSCRAWL_VERSIONS_ENABLED) -> None:
        self.state = state
        self.writer = writer
        self.versions = versions

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlStatePipeline:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_REVISIT_ENABLED")
        run = require_extension(crawler, CrawlStateExtension)
        store = crawler.get_extension(StoreExtension)
        return cls(run.state, store.writer if store is not None else None,
                   versions=s.getbool("NEWSCRAWL_VERSIONS_ENABLED"))

    def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        fp = adapter.get("fp")
        if not fp:
            return item
        state = self.state
        if adapter.get("kind") == "node":
            state.links_changed = True  # a channel page is stored: its links may have changed
        weight = adapter.get("weight")
        if isinstance(weight, (int, float)):
            state.set_fields(state.aliases.get(fp, fp), weight=float(weight))
        if fp in state.changed_articles:
            state.changed_articles.pop(fp)
            if self.versions and self.writer is not None:
                self.writer.archive(fp, {k: adapter.get(k) for k in VERSION_FIELDS},
                                    at=state.clock.utcnow())
        return item
