"""Item pipeline: NewsPageRank weights (seed 004 §3; :mod:`newscrawl.algorithms.newsrank`).

Online, each item gets ``r0`` (its in-link's score) and ``weight = r0 × r(parent)`` (entry = 1),
the best known so far for its page. Every node item's links and every item's own in-link are
kept as edges of the run's link graph. When the spider closes,
:meth:`NewsRankPipeline.final_weights` takes the maximum over all in-links by propagating over
that graph, and this pipeline — the one owner of final weights — puts the weights that improved
into the pages' crawl-state records (so a record's weight stays its page's weight) and hands
them to the store's writer, which writes them after the last page (in the ``shadow`` update
mode: right after the run's merge). Stats:
``newscrawl/newsrank/scored``, ``newscrawl/newsrank/edges``,
``newscrawl/newsrank/improved_at_close``.
"""

from __future__ import annotations

import logging
from typing import Any

from itemadapter import ItemAdapter

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension
from newscrawl import defaults
from newscrawl.algorithms.feedlinks import SOURCE_ROLES
from newscrawl.algorithms.newsrank import link_score, propagate, validate_weights
from newscrawl.components import require_enabled, settings_kwargs
from newscrawl.crawlstate import RunState
from newscrawl.fingerprint import PageFingerprint, page_fingerprint
from newscrawl.store.writer import BufferedWriter

logger = logging.getLogger(__name__)


class NewsRankPipeline:
    """Score items and collect the link graph for the end-of-run propagation.

    Args:
        stats: the crawler's stats collector.
        weights: the scoring matrix W_i of the four link features.
        floor: the lowest r0 (0..1).
        page_fp: the page fingerprint (for referers).
        writer: the store's writer (final weights), or None without a store.
        state: the run's crawl state (final weights into records), or None.
        source_weight: the weight of an article reached from a feed or sitemap entry
            (``NEWSCRAWL_FEEDS_WEIGHT``): no link features to score; a channel page's link
            gives it its NewsPageRank weight at close when that is higher.

    Raises:
        ValueError: a bad matrix or floor.
    """

    def __init__(self, stats: Any, *, weights: dict, floor: float, page_fp: PageFingerprint,
                 writer: BufferedWriter | None = None, state: RunState | None = None,
                 source_weight: float = defaults.NEWSCRAWL_FEEDS_WEIGHT) -> None:
        self.stats = stats
        self.weights = validate_weights(weights)
        if not 0.0 <= floor <= 1.0:
            raise ValueError(f"NEWSCRAWL_NEWSRANK_FLOOR must lie in [0, 1], got {floor}")
        self.floor = floor
        self.page_fp = page_fp
        self.writer = writer
        self.state = state
        self.source_weight = source_weight
        self.edges: dict[tuple[str, str], float] = {}
        self.entries: set[str] = set()
        self.best: dict[str, float] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> NewsRankPipeline:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_NEWSRANK_ENABLED")
        store = crawler.get_extension(StoreExtension)
        run = crawler.get_extension(CrawlStateExtension)
        return cls(crawler.stats, page_fp=page_fingerprint(crawler),
                   writer=store.writer if store is not None else None,
                   state=run.state if run is not None and run.revisit else None,
                   source_weight=s.getfloat("NEWSCRAWL_FEEDS_WEIGHT"),
                   **settings_kwargs(s, weights="NEWSCRAWL_NEWSRANK_WEIGHTS",
                                     floor="NEWSCRAWL_NEWSRANK_FLOOR"))

    def _edge(self, source: str, target: str, r0: float) -> None:
        key = (source, target)
        if r0 > self.edges.get(key, -1.0):
            self.edges[key] = r0

    def process_item(self, item, spider=None):
        adapter = ItemAdapter(item)
        fp = adapter.get("fp")
        if not fp:
            return item
        if adapter.get("role") == "entry":
            r0, weight = 1.0, 1.0
            self.entries.add(fp)
        elif adapter.get("link_class") in SOURCE_ROLES:  # a feed or sitemap entry
            r0 = weight = self.source_weight
        else:
            r0 = link_score(adapter.get("features") or {}, self.weights, floor=self.floor)
            weight = r0 * float(adapter.get("parent_weight") or 0.0)
            referer = adapter.get("referer")
            if referer:
                self._edge(self.page_fp(referer), fp, r0)
        weight = max(weight, self.best.get(fp, 0.0))
        self.best[fp] = weight
        adapter["r0"] = r0
        adapter["weight"] = weight
        for link in adapter.get("links") or ():
            link_r0 = link_score(link.get("features") or {}, self.weights, floor=self.floor)
            link["r0"] = link_r0
            if link.get("role") != "dropped" and link.get("link_class") not in SOURCE_ROLES:
                # dropped links are never fetched; feed entries carry no NewsPageRank
                self._edge(link["source_fp"], link["target_fp"], link_r0)
        self.stats.inc_value("newscrawl/newsrank/scored")
        return item

    def final_weights(self) -> dict[str, float]:
        """Return fingerprint → weight for the pages this run fetched whose maximum over every
        in-link seen this run is higher than the online weight they were stored with.

        Only improvements are returned, so the store writes only what changed.
        """
        weights = propagate(((s, t, r0) for (s, t), r0 in self.edges.items()), self.entries)
        self.stats.set_value("newscrawl/newsrank/edges", len(self.edges))
        improved = {fp: w for fp, w in weights.items() if fp in self.best and w > self.best[fp] + 1e-12}
        self.stats.set_value("newscrawl/newsrank/improved_at_close", len(improved))
        return improved

    def close_spider(self, spider: Any = None) -> None:
        """Final weights into the crawl-state records and to the store's writer (written after
        the last page)."""
        weights = self.final_weights()
        if self.state is not None:
            for fp, weight in weights.items():
                self.state.set_fields(self.state.aliases.get(fp, fp), weight=weight)
        if self.writer is not None:
            self.writer.update_weights(weights)
