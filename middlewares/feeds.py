"""Spider middleware: feeds and sitemaps as sources of article links (issue 12; DESIGN §7).

It sits between the link classification (:mod:`middlewares.linkclass`, whose output it sees)
and the revisit middleware (:mod:`middlewares.revisit`), and does three things:

* **Discovery.** For an entry or channel page (``NodeItem``) it reads the feeds the page
  announces (``<link rel="alternate" type="application/rss+xml|atom+xml">``,
  :func:`newscrawl.algorithms.feeds.discover_feeds`) and, for an entry page, the ``Sitemap:``
  lines of its host's robots.txt as the robots.txt cache keeps it in the crawl state
  (:mod:`middlewares.robotscache`, :func:`~newscrawl.algorithms.feeds.sitemaps_from_robots`).
  On-site sources become requests of role ``feed`` / ``sitemap`` (channel roles: scheduled by
  their yield, checked by conditional GET, within the budget) and are listed per site in the
  ``hosts`` document of the registered domain (``sources: [{url, kind, via, first_seen}]``).
* **Entries → articles.** For a :class:`~newscrawl.items.FeedItem` (a feed or sitemap the
  spider fetched) it parses the body (:func:`~newscrawl.algorithms.feeds.parse_feed`,
  :func:`~newscrawl.algorithms.feeds.parse_sitemap`); each entry's link is judged against the
  entry URL (:func:`newscrawl.algorithms.feedlinks.entry_verdict`: off-site and service links
  dropped and counted); on-site entries become the item's ``links`` and ``parse_article``
  requests at the default weight ``NEWSCRAWL_FEEDS_WEIGHT`` carrying the entry's title and date
  (:data:`newscrawl.meta.FEED_ENTRY`, for the date resolver). A sitemap index's children become
  ``sitemap`` requests. Its yield for the channel scheduler is that of a channel page: its
  on-site entries the crawl did not know (so of two sources listing the same articles, the one
  visited first gets the credit and the other is visited less); ``new_entries`` counts the
  entries it did not list at its last visit (record field ``feed_entries``).
* **Sources.** Every article request records its source (feed, sitemap, channel page) in the
  article's record (``sources: [{kind, url, seen_at}]``, :meth:`~newscrawl.crawlstate.RunState.add_source`).

Settings: ``NEWSCRAWL_FEEDS_*`` (``docs/configuration.md``; off: feeds are skipped as non-HTML).
Stats (``newscrawl/feeds/<event>``): ``discovered/<kind>``, ``discovered_offsite``,
``fetched/<feed|sitemap>``, ``unparsable``, ``entries``, ``new_entries`` (entries the source did
not list at its last visit, off-site ones included), ``offsite``, ``service``, ``invalid``,
``skipped_entries`` (over the limit, too old, parser's), ``requests``, ``children``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import scrapy
from scrapy.http import TextResponse

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.algorithms import feedlinks
from newscrawl.algorithms.feeds import discover_feeds, sitemaps_from_robots
from newscrawl.algorithms.frontier import request_priority
from newscrawl.algorithms.linkclass import StartURL
from newscrawl.algorithms.listing import entry_time
from newscrawl.algorithms.linkrules import load_rules
from newscrawl.algorithms.revisitplan import SEED_PRIORITY
from newscrawl.algorithms.urls import host_of, registered_domain
from newscrawl.components import require_enabled, settings_kwargs
from newscrawl.crawlstate import RunState
from newscrawl.fingerprint import PageFingerprint, page_fingerprint
from newscrawl.items import FeedItem, NodeItem
from newscrawl.meta import PageContext

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/feeds"
#: Host-document field (of the registered domain) listing a site's discovered sources.
SOURCES_FIELD = "sources"


class FeedSourcesMiddleware:
    """Discovery, entries → article requests, sources (see the module docstring).

    Args:
        stats: the crawler's stats collector; page_fp: the page fingerprint.
        state: the run's crawl state (None: no yield history, no sources kept).
        rules: the service-link rules (``NEWSCRAWL_LINKCLASS_RULES``).
        weight: NewsPageRank weight of a feed-only article (0..1).
        max_entries: entries of one source requested at most; max_per_site: sources per site;
        sitemap_max_age: seconds (see :func:`newscrawl.algorithms.feedlinks.sitemap_pick`).
        crawler: gives the spider when Scrapy calls without one.
    """

    def __init__(self, stats: Any, *, page_fp: PageFingerprint, state: RunState | None = None,
                 rules: Any = None, weight: float = 0.2, max_entries: int = 1000,
                 max_per_site: int = 20, sitemap_max_age: float = 2 * 86400.0,
                 crawler: Any = None) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"NEWSCRAWL_FEEDS_WEIGHT must lie in [0, 1], got {weight}")
        self.stats = stats
        self.page_fp = page_fp
        self.state = state
        self.rules = rules if rules is not None else load_rules(None)
        self.weight = weight
        self.max_entries = max_entries
        self.max_per_site = max_per_site
        self.sitemap_max_age = sitemap_max_age
        self.crawler = crawler
        self._sources: dict[str, set[str]] = {}  # site -> source URLs requested in this run
        self._entries: dict[str, list[str]] = {}  # source fp -> entry fps (without a state)

    @classmethod
    def from_crawler(cls, crawler: Any) -> FeedSourcesMiddleware:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_FEEDS_ENABLED")
        run = crawler.get_extension(CrawlStateExtension)
        return cls(crawler.stats, page_fp=page_fingerprint(crawler), crawler=crawler,
                   state=run.state if run is not None and run.revisit else None,
                   rules=load_rules(s.get("NEWSCRAWL_LINKCLASS_RULES")),
                   **settings_kwargs(s, weight="NEWSCRAWL_FEEDS_WEIGHT",
                                     max_entries="NEWSCRAWL_FEEDS_MAX_ENTRIES",
                                     max_per_site="NEWSCRAWL_FEEDS_MAX_PER_SITE",
                                     sitemap_max_age="NEWSCRAWL_FEEDS_SITEMAP_MAX_AGE"))

    def _inc(self, key: str, count: int = 1) -> None:
        if count:
            self.stats.inc_value(f"{_PREFIX}/{key}", count)

    # Scrapy calls the async variant for async callbacks and the sync one otherwise.
    def process_spider_output(self, response, result, spider=None):
        for obj in result:
            yield from self._one(response, obj, spider)

    async def process_spider_output_async(self, response, result, spider=None):
        async for obj in result:
            for out in self._one(response, obj, spider):
                yield out

    def _one(self, response, obj, spider):
        if spider is None and self.crawler is not None:
            spider = self.crawler.spider
        if isinstance(obj, FeedItem):
            yield from self._expand(response, obj, spider)
            return
        if isinstance(obj, scrapy.Request) and obj.meta.get(meta.ROLE) == "content":
            self._channel_source(obj)
        yield obj
        if isinstance(obj, NodeItem) and obj.get("role") in ("entry", "node"):
            yield from self._discover(response, obj, spider)

    # -- sources of articles ---------------------------------------------------------------------

    def _track(self, request: scrapy.Request, kind: str, source_url: str,
               entry: dict[str, Any] | None = None) -> None:
        """The article's record (created as to-visit when new) lists ``source_url``."""
        state = self.state
        if state is None:
            return
        fp = self.page_fp(request.url)
        if not state.is_known(fp):
            host = host_of(request.url)
            ctx = PageContext.from_meta(request.meta)
            state.ensure(fp, request.url, role="content", host=host, site=registered_domain(host),
                         request=ctx.to_record(), weight=ctx.weight)
        state.add_source(fp, kind, source_url, entry=entry)

    def _channel_source(self, request: scrapy.Request) -> None:
        referer = request.meta.get(meta.REFERER)
        if referer and meta.FEED_ENTRY not in request.meta:
            self._track(request, feedlinks.CHANNEL, referer)

    # -- discovery -------------------------------------------------------------------------------

    def _robots_sitemaps(self, url: str) -> list[str]:
        """``Sitemap:`` URLs of the robots.txt the cache keeps for ``url``'s host."""
        if self.state is None:
            return []
        out: list[str] = []
        for cached in self.state.host_field(host_of(url), "robots") or ():
            if isinstance(cached, dict) and cached.get("status") == 200 and cached.get("body"):
                out += sitemaps_from_robots(cached["body"], f"{cached.get('origin')}/robots.txt")
        return out

    def _discover(self, response, item, spider):
        if not isinstance(response, TextResponse):
            return
        found = [(ref.url, feedlinks.FEED, "alternate")
                 for ref in discover_feeds(response.body, response.url)
                 if ref.kind in ("rss", "atom")]
        if item.get("role") == "entry":
            found += [(url, feedlinks.SITEMAP, "robots") for url in self._robots_sitemaps(response.url)]
        page = StartURL.parse(response.url)
        for url, kind, via in found:
            if feedlinks.is_offsite(page, url):
                self._inc("discovered_offsite")
                continue
            request = self._source_request(response, item, spider, url, kind, via)
            if request is not None:
                yield request

    def _source_request(self, response, item, spider, url: str, kind: str, via: str):
        site = registered_domain(host_of(response.url))
        seen = self._sources.setdefault(site, set())
        if url in seen:
            return None
        if len(seen) >= self.max_per_site:
            self._inc("discovered_over_limit")
            return None
        seen.add(url)
        self._inc(f"discovered/{kind}")
        if self.state is not None:
            listed = feedlinks.site_sources(self.state.host_field(site, SOURCES_FIELD), url, kind,
                                            via, self.state.now())
            if listed is not None:
                self.state.set_host_field(site, SOURCES_FIELD, listed)
                logger.info("Discovered the %s %s of %s (%s)", kind, url, site, via)
        ctx = PageContext.from_meta(response.meta)
        page_weight = 1.0 if item.get("role") == "entry" or ctx.weight is None else ctx.weight
        child = PageContext(entry_url=ctx.entry_url or response.url, start_url=response.url,
                            depth=ctx.depth, link_class=via, features={},
                            parent_weight=page_weight, referer=response.url)
        return scrapy.Request(url, callback=spider.parse_node, priority=SEED_PRIORITY // 2,
                              meta={**child.to_meta(), meta.ROLE: kind})

    # -- entries -> articles ---------------------------------------------------------------------

    def _parse(self, response, kind: str) -> tuple[list[Any], dict[str, int], str]:
        headers = {k.decode("latin-1"): v[-1].decode("latin-1")
                   for k, v in response.headers.items() if v}
        read = feedlinks.read_source(kind, response.body, response.url, headers,
                                     now=self.state.now() if self.state is not None else time.time(),
                                     max_entries=self.max_entries, max_age=self.sitemap_max_age)
        if read.error:
            logger.info("%s %s read in part or not at all: %s", kind, response.url, read.error)
        return read.entries, read.skipped, read.format

    def _expand(self, response, item, spider):
        kind = feedlinks.SITEMAP if item.get("role") == feedlinks.SITEMAP else feedlinks.FEED
        self._inc(f"fetched/{kind}")
        entries, skipped, fmt = self._parse(response, kind)
        item["feed_format"] = fmt or None
        item["skipped_entries"] = {k: v for k, v in skipped.items() if v}
        self._inc("skipped_entries", sum(skipped.values()))
        if not fmt:
            self._inc("unparsable")
            logger.warning("Cannot read %s as a %s (%s); skipped", response.url, kind,
                           ", ".join(item["skipped_entries"]) or "no entries")
        ctx = PageContext.from_meta(response.meta)
        start = StartURL.parse(ctx.entry_url or response.url)
        source_fp = (response.meta.get(meta.REVISIT) or {}).get("fp") or self.page_fp(response.url)
        site = registered_domain(host_of(response.url))
        links, requests, all_fps = [], [], set()
        for entry in entries:
            fp = self.page_fp(entry.url)
            if getattr(entry, "is_sitemap", False):  # a child sitemap: on this site (and port) only
                offsite = feedlinks.is_offsite(start, entry.url)
                self._inc(feedlinks.OFFSITE if offsite else "children")
                request = None if offsite else self._source_request(
                    response, item, spider, entry.url, feedlinks.SITEMAP, "index")
                requests += [request] if request is not None else []
                continue
            all_fps.add(fp)
            verdict = feedlinks.entry_verdict(start, entry.url, rules=self.rules)
            if verdict != feedlinks.CONTENT:
                self._inc(verdict)
                continue
            request = self._entry_request(response, ctx, spider, entry, kind)
            links.append({"source_url": response.url, "source_fp": item.get("fp") or source_fp,
                          "target_url": entry.url, "target_fp": fp, "link_class": kind,
                          "role": "content", "tag": kind, "features": {}, "site": site,
                          "anchor_text": request.meta[meta.FEED_ENTRY]["title"] or "",
                          "published": entry_time(entry)})
            requests.append(request)
        before = self._previous_entries(source_fp)
        new = all_fps - before
        self._inc("entries", len(all_fps))
        self._inc("new_entries", len(new))
        item["entries"] = len(all_fps)
        item["new_entries"] = len(new)
        item["links"] = links
        item["link_counts"] = {kind: len(links)} if links else {}
        item["role_counts"] = {"content": len(links)} if links else {}
        self._remember_entries(source_fp, all_fps)
        yield item
        for request in requests:
            if request.meta.get(meta.ROLE) == "content":
                entry_meta = request.meta[meta.FEED_ENTRY]
                self._track(request, kind, response.url,
                            entry={k: v for k, v in entry_meta.items() if k != "url"})
                self._inc("requests")
            yield request

    def _entry_request(self, response, ctx: PageContext, spider, entry, kind: str) -> scrapy.Request:
        child = PageContext(entry_url=ctx.entry_url or response.url, start_url=response.url,
                            depth=ctx.depth + 1, link_class=kind, features={},
                            parent_weight=1.0, weight=self.weight, referer=response.url)
        priority = request_priority(spider.strategy, depth=ctx.depth + 1, weight=self.weight,
                                    url=entry.url)
        return scrapy.Request(entry.url, callback=spider.parse_article, priority=priority,
                              meta={**child.to_meta(), meta.ROLE: "content",
                                    meta.FEED_ENTRY: feedlinks.entry_facts(kind, entry, response.url)})

    def _previous_entries(self, source_fp: str) -> set[str]:
        if self.state is not None:
            listed = (self.state.get(source_fp) or {}).get("feed_entries")
            return set(listed) if isinstance(listed, list) else set()
        return set(self._entries.get(source_fp, ()))

    def _remember_entries(self, source_fp: str, fps: set[str]) -> None:
        if self.state is not None:
            self.state.set_fields(source_fp, feed_entries=sorted(fps))
        else:
            self._entries[source_fp] = sorted(fps)

