"""Item pipeline: NewsPageRank weights (seed 004 §3; :mod:`newscrawl.algorithms.newsrank`).

Online, each item gets ``r0`` (its in-link's score) and ``weight = r0 × r(parent)`` (entry = 1),
the best known so far for its page. Every node item's links and every item's own in-link are
kept as edges of the run's link graph; when the spider closes, :meth:`final_weights` takes the
maximum over all in-links by propagating over that graph, and the storage pipeline writes the
weights that improved. Stats: ``newscrawl/newsrank/scored``, ``newscrawl/newsrank/edges``.
"""

from __future__ import annotations

import logging

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from newscrawl import defaults
from newscrawl.algorithms.newsrank import link_score, propagate, validate_weights
from newscrawl.algorithms.urls import url_fingerprint

logger = logging.getLogger(__name__)


class NewsRankPipeline:
    """Score items and collect the link graph for the end-of-run propagation."""

    def __init__(self, stats, *, weights: dict, floor: float):
        self.stats = stats
        self.weights = validate_weights(weights)
        if not 0.0 <= floor <= 1.0:
            raise ValueError(f"NEWSCRAWL_NEWSRANK_FLOOR must lie in [0, 1], got {floor}")
        self.floor = floor
        self.edges: dict[tuple[str, str], float] = {}
        self.entries: set[str] = set()
        self.best: dict[str, float] = {}

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        if not s.getbool("NEWSCRAWL_NEWSRANK_ENABLED", defaults.NEWSCRAWL_NEWSRANK_ENABLED):
            raise NotConfigured("NEWSCRAWL_NEWSRANK_ENABLED is off")
        pipeline = cls(crawler.stats,
                       weights=s.getdict("NEWSCRAWL_NEWSRANK_WEIGHTS", defaults.NEWSCRAWL_NEWSRANK_WEIGHTS),
                       floor=s.getfloat("NEWSCRAWL_NEWSRANK_FLOOR", defaults.NEWSCRAWL_NEWSRANK_FLOOR))
        # The storage pipeline asks for the final weights when the spider closes.
        crawler.newscrawl_newsrank = pipeline
        return pipeline

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
        else:
            r0 = link_score(adapter.get("features") or {}, self.weights, floor=self.floor)
            weight = r0 * float(adapter.get("parent_weight") or 0.0)
            referer = adapter.get("referer")
            if referer:
                self._edge(url_fingerprint(referer), fp, r0)
        weight = max(weight, self.best.get(fp, 0.0))
        self.best[fp] = weight
        adapter["r0"] = r0
        adapter["weight"] = weight
        for link in adapter.get("links") or ():
            link_r0 = link_score(link.get("features") or {}, self.weights, floor=self.floor)
            link["r0"] = link_r0
            if link.get("role") != "dropped":  # dropped links are never fetched: no weight to carry
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
