"""Spider middleware: classify every link of a node page and schedule node and content links.

For each :class:`~newscrawl.items.NodeItem` the spider yields, this middleware extracts the
page's links with their NewsPageRank features (:mod:`newscrawl.algorithms.linkextract`),
classifies them against the page as StartURL (:mod:`newscrawl.algorithms.linkclass`, seed 004
§2), fills the item's ``link_counts``/``role_counts``/``links`` and yields, after the item:

- content links → ``spider.parse_article`` requests;
- node links and crosswise host entries → ``spider.parse_node`` requests, while the node depth
  stays within ``spider.max_depth``;
- frames (same registered domain) → ``spider.parse_node`` at the same depth, nested at most
  ``NEWSCRAWL_LINKCLASS_MAX_FRAME_DEPTH`` frames deep.

Request meta it sets: the child's :class:`newscrawl.meta.PageContext` (entry URL, start URL =
this page, depth, link class, features, parent weight = this page's weight, expected weight,
referer) and its role (:mod:`newscrawl.meta`). Links and items are keyed by the crawler's page
fingerprint (:mod:`newscrawl.fingerprint`). Stats: ``newscrawl/linkclass/<class>`` and
``newscrawl/linkclass/<class>/<site>`` (distinct linked pages per page — one page under two
names, ``www.`` or an alias, is one link — the numbers the store's links collection holds),
``newscrawl/linkclass/role/<role>``, ``newscrawl/linkclass/skipped/<why>``,
``newscrawl/linkclass/dropped/<why>`` (service links by rule kind — ``service:host``,
``service:path``, ``service:prefix``, ``service:pattern`` — and ``leaf`` pages) and
``newscrawl/linkclass/from_textarea`` (links read from ``<textarea>`` templates).

The service-link rules are :data:`newscrawl.algorithms.linkrules.DEFAULT_RULES`, extended by the
JSON file ``NEWSCRAWL_LINKCLASS_RULES`` names; a missing or malformed file stops the crawl at
start with a message naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import scrapy
from scrapy.http import TextResponse

from newscrawl import defaults, meta
from newscrawl.algorithms.frontier import request_priority
from newscrawl.algorithms.linkclass import CONTENT, NODE, LinkClass, classify_page
from newscrawl.algorithms.linkextract import ExtractionStats, extract_links
from newscrawl.algorithms.linkrules import load_rules
from newscrawl.algorithms.newsrank import link_score, validate_weights
from newscrawl.algorithms.urls import host_of, registered_domain
from newscrawl.components import require_enabled, settings_kwargs
from newscrawl.fingerprint import PageFingerprint, page_fingerprint
from newscrawl.items import NodeItem
from newscrawl.meta import PageContext

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/linkclass"
#: Keyword argument of classify_page → the setting it is read from.
_CLASSIFY_OPTIONS = {
    "min_group": "NEWSCRAWL_LINKCLASS_MIN_GROUP",
    "dominant_ratio": "NEWSCRAWL_LINKCLASS_DOMINANT_RATIO",
    "follow_crosswise": "NEWSCRAWL_LINKCLASS_FOLLOW_CROSSWISE",
    "crosswise_content": "NEWSCRAWL_LINKCLASS_CROSSWISE_CONTENT",
    "use_shape": "NEWSCRAWL_LINKCLASS_USE_SHAPE",
    "follow_channels": "NEWSCRAWL_LINKCLASS_FOLLOW_CHANNELS",
    "sister_evidence": "NEWSCRAWL_LINKCLASS_SISTER_EVIDENCE",
    "block_share": "NEWSCRAWL_LINKCLASS_BLOCK_SHARE",
}


def classify_options(settings: Any) -> dict[str, Any]:
    """Keyword arguments of ``classify_page`` from the settings, with the service-link rules
    loaded (``NEWSCRAWL_LINKCLASS_RULES``); raises ``ValueError`` naming a bad rules file."""
    options = settings_kwargs(settings, **_CLASSIFY_OPTIONS)
    options["rules"] = load_rules(settings.get("NEWSCRAWL_LINKCLASS_RULES"))
    return options


class LinkClassificationMiddleware:
    """Thin adapter from Scrapy to :func:`newscrawl.algorithms.linkclass.classify_page`.

    Args:
        stats: the crawler's stats collector; page_fp: the page fingerprint.
        classify: keyword arguments of :func:`~newscrawl.algorithms.linkclass.classify_page`
            (``min_group``, ``dominant_ratio``, ``use_shape``, ``crosswise_content``,
            ``follow_crosswise``, ``follow_channels``, ``sister_evidence``, ``block_share``,
            ``rules``; its defaults are the settings' defaults).
        max_links: links read per page; max_frame_depth: frames nested at most.
        weights, floor: the NewsPageRank scoring matrix and lowest score.
        crawler: gives the spider when Scrapy calls without one.
    """

    def __init__(self, stats: Any, *, page_fp: PageFingerprint,
                 classify: Mapping[str, Any] | None = None,
                 max_links: int = defaults.NEWSCRAWL_LINKCLASS_MAX_LINKS,
                 max_frame_depth: int = defaults.NEWSCRAWL_LINKCLASS_MAX_FRAME_DEPTH,
                 weights: dict | None = None, floor: float = defaults.NEWSCRAWL_NEWSRANK_FLOOR,
                 crawler: Any = None) -> None:
        self.stats = stats
        self.page_fp = page_fp
        self.classify = dict(classify or {})
        self.max_links = max_links
        self.max_frame_depth = max_frame_depth
        self.weights = validate_weights(
            defaults.NEWSCRAWL_NEWSRANK_WEIGHTS if weights is None else weights)
        self.floor = floor
        self._classified: dict[str, Any] = {}  # page fp -> the visit classified last
        #: gives the spider when Scrapy calls without one (its callbacks are the targets)
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> LinkClassificationMiddleware:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_LINKCLASS_ENABLED")
        return cls(crawler.stats, page_fp=page_fingerprint(crawler), crawler=crawler,
                   classify=classify_options(s),
                   **settings_kwargs(s, max_links="NEWSCRAWL_LINKCLASS_MAX_LINKS",
                                     max_frame_depth="NEWSCRAWL_LINKCLASS_MAX_FRAME_DEPTH",
                                     weights="NEWSCRAWL_NEWSRANK_WEIGHTS",
                                     floor="NEWSCRAWL_NEWSRANK_FLOOR"))

    # Scrapy calls the async variant for async callbacks and the sync one otherwise.
    def process_spider_output(self, response, result, spider=None):
        for obj in result:
            if isinstance(obj, NodeItem):
                yield from self._expand(response, obj, spider)
            else:
                yield obj

    async def process_spider_output_async(self, response, result, spider=None):
        async for obj in result:
            if isinstance(obj, NodeItem):
                for out in self._expand(response, obj, spider):
                    yield out
            else:
                yield obj

    def _inc(self, key: str, count: int = 1) -> None:
        self.stats.inc_value(f"{_PREFIX}/{key}", count)

    def _expand(self, response, item: NodeItem, spider):
        if not isinstance(response, TextResponse):
            self._inc("skipped/not_text")
            yield item
            return
        fp = item.get("fp") or self.page_fp(response.url)
        visit = response.meta.get(meta.VISIT)  # a watched crawl's later visit is a new one
        if fp in self._classified and self._classified[fp] == visit:
            # The same page reached twice (redirects): its links are counted once.
            self._inc("skipped/duplicate_page")
            yield item
            return
        self._classified[fp] = visit
        try:
            root = response.selector.root
        except Exception:  # lxml refused the document: count, keep the item
            logger.warning("Cannot parse %s for links", response.url, exc_info=True)
            self._inc("skipped/unparsable")
            yield item
            return
        extraction = ExtractionStats()
        raw = extract_links(root, response.url, max_links=self.max_links, stats=extraction)
        for name in ("not_http", "fragment_only", "malformed", "truncated"):
            if getattr(extraction, name):
                self._inc(f"skipped/{name}", getattr(extraction, name))
        if extraction.truncated:
            logger.info("Read the first %d links of %s; %d more not read "
                        "(NEWSCRAWL_LINKCLASS_MAX_LINKS)", self.max_links, response.url,
                        extraction.truncated)
        if extraction.from_textarea:
            self._inc("from_textarea", extraction.from_textarea)
        page = classify_page(response.url, raw, **self.classify)
        for link in page.links:
            if link.reason:
                self._inc(f"dropped/{link.reason}")
        site = item.get("site") or registered_domain(host_of(response.url))
        counts: dict[str, int] = {}
        role_counts: dict[str, int] = {}
        edges = []
        targets: set[str] = set()
        for link in page.links:
            target_fp = self.page_fp(link.url)
            if target_fp in targets:  # one page under two names (www., an alias): one link
                continue
            targets.add(target_fp)
            counts[link.link_class.value] = counts.get(link.link_class.value, 0) + 1
            role_counts[link.role] = role_counts.get(link.role, 0) + 1
            edges.append({
                "source_url": response.url,
                "source_fp": fp,
                "target_url": link.url,
                "target_fp": target_fp,
                "link_class": link.link_class.value,
                "role": link.role,
                "tag": link.tag,
                "features": link.features,
                "anchor_text": link.text,
                "site": site,
                "published": link.published,
            })
        for cls_name, count in counts.items():
            self._inc(cls_name, count)
            self._inc(f"{cls_name}/{site}", count)
        for role, count in role_counts.items():
            self._inc(f"role/{role}", count)
        item["link_counts"] = counts
        item["role_counts"] = role_counts
        item["links"] = edges
        yield item
        yield from self._requests(response, item, page, spider)

    def _requests(self, response, item, page, spider):
        if spider is None and self.crawler is not None:
            spider = self.crawler.spider
        ctx = PageContext.from_meta(response.meta)
        depth = ctx.depth
        max_depth = spider.max_depth
        strategy = spider.strategy
        entry_url = ctx.entry_url or response.url
        frame_depth = int(response.meta.get(meta.FRAME_DEPTH, 0))
        page_weight = 1.0 if item.get("role") == "entry" or ctx.weight is None else ctx.weight

        def request(url, callback, *, link_class, role, features, link_depth):
            weight = link_score(features, self.weights, floor=self.floor) * page_weight
            child = PageContext(entry_url=entry_url, start_url=response.url, depth=link_depth,
                                link_class=link_class, features=features,
                                parent_weight=page_weight, weight=weight, referer=response.url)
            return scrapy.Request(
                url, callback=callback,
                priority=request_priority(strategy, depth=link_depth, weight=weight, url=url),
                meta={**child.to_meta(), meta.ROLE: role})

        by_url = {link.url: link for link in page.links}
        for link in page.links:
            if link.role == CONTENT:
                yield request(link.url, spider.parse_article, link_class=link.link_class.value,
                              role=CONTENT, features=link.features, link_depth=depth + 1)
            elif link.role == NODE and link.link_class is LinkClass.FRAME:
                # Frames are part of their page: same node depth, but nested at most
                # max_frame_depth deep, so a chain of frames cannot walk around the depth limit.
                if frame_depth < self.max_frame_depth and depth <= max_depth:
                    frame = request(link.url, spider.parse_node, link_class="frame", role="frame",
                                    features=link.features, link_depth=depth)
                    frame.meta[meta.FRAME_DEPTH] = frame_depth + 1
                    yield frame
        if depth + 1 <= max_depth:
            # Node links (channels on this host, its other branches and editorial sister hosts)
            # and crosswise host entries: what benchmarks/linkclass_quality.py scores.
            no_features = {"image": 0, "font_size": 0, "bold": 0, "html_tag": 0}
            for url in page.node_requests():
                node = by_url.get(url)
                yield request(url, spider.parse_node,
                              link_class=node.link_class.value if node else LinkClass.CROSSWISE.value,
                              role=NODE, features=node.features if node else no_features,
                              link_depth=depth + 1)
