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

Pages are dated by their capture's ``WARC-Date`` (``fetched_at``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider

from extensions.warcimport import WarcImportExtension
from newscrawl import meta
from newscrawl.algorithms.linkclass import is_article_shaped
from newscrawl.meta import PageContext
from spiders.news import NewsSpider

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
        """Request the archived pages nobody linked, once, when the crawl from the entries ends."""
        if self._unrequested_done or self.source is None:
            return
        self._unrequested_done = True
        urls = self.source.unrequested()
        if not urls:
            return
        self.source.inc("unrequested", len(urls))
        logger.info("Importing %d archived pages no entry led to", len(urls))
        for url in urls:
            self.crawler.engine.crawl(self.unrequested_request(url))
        raise DontCloseSpider

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
