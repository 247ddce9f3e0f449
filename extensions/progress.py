"""Extension: the progress line of a batch crawl, every ``NEWSCRAWL_PROGRESS_INTERVAL`` seconds.

``Progress: 120 page(s) fetched (3.5/s), 40 item(s) stored, frontier 310 request(s) queued,
8 in flight`` (:func:`newscrawl.algorithms.watchstatus.progress_line`): pages fetched are the
answers below 400 (:func:`newscrawl.outcome.pages_fetched`, as the run summary counts them),
items stored are the items that passed every pipeline (Scrapy's ``item_scraped_count``), the
frontier is what Scrapy's scheduler holds (``len(engine.scheduler)``; with scrapy-redis the
shared queue) and in flight what the downloader is fetching. A watched crawl
(:class:`extensions.watch.WatchExtension`) has its own status line instead: nothing is
logged there.

Settings: ``NEWSCRAWL_PROGRESS_INTERVAL`` (seconds; 0 switches it off: ``NotConfigured``).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from newscrawl.algorithms.watchstatus import progress_line
from newscrawl.outcome import pages_fetched

logger = logging.getLogger(__name__)


class ProgressExtension:
    """Log the progress line of a batch crawl (module docstring).

    Args:
        crawler: the crawler (its stats and engine are read).
        interval: seconds between lines (> 0).
    """

    def __init__(self, crawler: Any, *, interval: float) -> None:
        if interval <= 0:
            raise NotConfigured("NEWSCRAWL_PROGRESS_INTERVAL is 0")
        self.crawler = crawler
        self.stats = crawler.stats
        self.interval = float(interval)
        self._loop: Any = None
        self._pages = 0

    @classmethod
    def from_crawler(cls, crawler: Any) -> ProgressExtension:
        ext = cls(crawler, interval=crawler.settings.getfloat("NEWSCRAWL_PROGRESS_INTERVAL"))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Any) -> None:
        from extensions.watch import WatchExtension  # the watch logs its own status line

        if self.crawler.get_extension(WatchExtension) is not None:
            return
        self._loop = create_looping_call(self.emit)
        self._loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any, reason: str = "") -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def frontier(self) -> tuple[int | None, int]:
        """(requests queued in the scheduler or None when it cannot tell, requests in flight)."""
        engine: Any = getattr(self.crawler, "engine", None)
        queued: int | None
        try:
            queued = len(engine.scheduler)
        except (AttributeError, TypeError):
            queued = None
        try:
            in_flight = len(engine.downloader.active)
        except (AttributeError, TypeError):
            in_flight = 0
        return queued, in_flight

    def emit(self) -> str:
        """Log the progress line (and return it)."""
        stats = self.stats.get_stats()
        pages = pages_fetched(stats)
        queued, in_flight = self.frontier()
        line = progress_line(pages=pages, pages_before=self._pages,
                             items=int(stats.get("item_scraped_count") or 0), queued=queued,
                             in_flight=in_flight, interval=self.interval)
        self._pages = pages
        if queued is not None:
            self.stats.set_value("newscrawl/progress/frontier", queued)
        logger.info("%s", line)
        return line
