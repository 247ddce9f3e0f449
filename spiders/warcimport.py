"""The ``warcimport`` spider: fill the store from WARC files as a crawl would (``newscrawl import``).

The news spider, answered by the archive (``middlewares/warcreplay.py``) instead of the network,
so pages go through the same link classification, extraction, dates, NewsPageRank, stories and
storage as a crawl's:

1. it crawls from the archive's entries — the pages newscrawl's own metadata records say were
   entries (depth 0) — and from any ``-a start_urls=``;
2. when that crawl is done, every archived HTML page (status 200) no request asked for is
   requested too (stat ``newscrawl/warcimport/unrequested``): with the context of its newscrawl
   metadata record when it has one; otherwise as an article when its URL is article-shaped
   (:func:`newscrawl.algorithms.linkclass.is_article_shaped`), else as an entry page (a home or
   channel page, whose links are classified and followed inside the archive). Foreign WARCs
   (CC-NEWS, Webrecorder captures) carry no metadata and are imported this way.

3. then the later captures of pages captured more than once, round by round in time order (the
   first round answered every page with its oldest capture): a changed article is stored with
   its earlier version, as a re-crawl would (stat ``newscrawl/warcimport/later_captures``).

Pages are dated by their capture's ``WARC-Date`` (``fetched_at``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider

from extensions.store import StoreExtension
from extensions.warcimport import WarcImportExtension
from newscrawl import meta
from newscrawl.algorithms.linkclass import is_article_shaped
from newscrawl.meta import PageContext
from spiders.news import NewsSpider
from spiders.requests import watch_request

logger = logging.getLogger(__name__)

#: The context fields a metadata record gives back to its page's request.
_CONTEXT_FIELDS = ("entry_url", "start_url", "depth", "link_class", "features", "parent_weight",
                   "weight", "referer")


class WarcImportSpider(NewsSpider):
    """The news spider over an archive (module docstring)."""

    name = "warcimport"
    #: Entries come from the archive (the news spider refuses to start without any).
    requires_entries = False
    #: Nothing is sent: archived Set-Cookie headers have no one to go back to (and Scrapy's
    #: cookie middleware would try to download the Public Suffix List for them).
    custom_settings = {"COOKIES_ENABLED": False}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._given_entries = list(self.entry_urls)
        self._unrequested_done = False
        self._capture_round = 0
        self.source: WarcImportExtension | None = None

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> WarcImportSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, WarcImportSpider)
        crawler.signals.connect(spider.idle, signal=signals.spider_idle)
        return spider

    def open_run(self, spider: Any = None) -> None:
        super().open_run(spider)
        self.source = self.crawler.get_extension(WarcImportExtension)
        if self.source is None:
            logger.error("The warcimport spider needs NEWSCRAWL_WARC_IMPORT (WARC files)")
            raise CloseSpider("no_archive")
        found = self.source.archive.entries()
        self.entry_urls = list(dict.fromkeys([*self._given_entries, *found]))

    def _page_fields(self, response: Any) -> dict:
        fields = super()._page_fields(response)
        date = response.meta.get(meta.WARC_DATE)
        if date:
            try:
                fields["fetched_at"] = datetime.fromisoformat(date.replace("Z", "+00:00"))
            except ValueError:
                pass
        return fields

    def idle(self, spider: Any = None) -> None:
        """When the crawl from the entries ends: request the archived pages nobody linked (once);
        then, round by round, the later captures of the pages requested (each round the next
        capture in time order, so a changed article becomes a new version)."""
        if self.source is None:
            return
        if not self._unrequested_done:
            self._unrequested_done = True
            urls = self.source.unrequested()
            if urls:
                self.source.inc("unrequested", len(urls))
                logger.info("Importing %d archived pages no entry led to", len(urls))
                for url in urls:
                    self.crawler.engine.crawl(self.unrequested_request(url))
                raise DontCloseSpider
        self._capture_round += 1
        later = self.source.later_captures(self._capture_round)
        if not later:
            return
        # The pages of the rounds before are written first (the store writer buffers pages), so a
        # changed article's stored version is there to be kept.
        store = self.crawler.get_extension(StoreExtension)
        if store is not None:
            store.writer.flush()
        self.source.inc("later_captures", len(later))
        logger.info("Importing capture %d of %d pages captured more than once",
                    self._capture_round + 1, len(later))
        for first, index in later:
            self.crawler.engine.crawl(self.later_request(first, index))
        raise DontCloseSpider

    def later_request(self, first: scrapy.Request, index: int) -> scrapy.Request:
        """The request of capture ``index`` of the page ``first`` asked for: a revisit of a
        known page (its crawl-state record: HEAD or conditional GET, change detection, versions),
        as a watched crawl's later visit is; without a record, the first request's callback and
        page context."""
        assert self.source is not None
        self.source.current[first.url] = index
        state = self.crawl_state
        record = state.get(self.page_fp(first.url)) if state is not None else None
        if state is not None and record and record.get("url") == first.url:
            request = watch_request(state, record, self)
            request.meta[meta.WARC_CAPTURE] = index
            return request
        ctx = PageContext.from_meta(first.meta)
        keep = {key: first.meta[key] for key in (meta.ROLE, meta.FEED_ENTRY) if key in first.meta}
        return scrapy.Request(first.url, callback=first.callback, dont_filter=True,
                              priority=first.priority,
                              meta={**ctx.to_meta(), **keep, meta.WARC_CAPTURE: index})

    def unrequested_request(self, url: str) -> scrapy.Request:
        """The request of an archived page no crawl request asked for (module docstring)."""
        assert self.source is not None
        known = self.source.archive.metadata.get(url)
        if known and known.get("link_class"):
            ctx = PageContext(**{k: known[k] for k in _CONTEXT_FIELDS if known.get(k) is not None})
            role = known.get("role") or "content"
            callback = self.parse_article if known.get("kind") == "article" else self.parse_node
        elif is_article_shaped(url):
            ctx = PageContext.entry(url)
            role, callback = "content", self.parse_article
        else:
            ctx, role, callback = PageContext.entry(url), "entry", self.parse_node
        return scrapy.Request(url, callback=callback, dont_filter=True,
                              meta={**ctx.to_meta(), meta.ROLE: role})
