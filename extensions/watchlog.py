"""The once-a-minute status line of monitoring mode, and its figures as stats.

Every ``NEWSCRAWL_WATCH_LOG_INTERVAL`` seconds (default 60) a watched crawl
(:class:`extensions.watch.WatchExtension`) logs, for the interval: new articles (article pages
fetched for the first time), requests sent (Scrapy's ``downloader/request_count``, HEAD probes
and robots.txt included), the use of the request rate (``-a rate=N``: requests counted against it
/ requests it allowed), and the median and p90 publication → capture delay of the articles
captured in the last hour whose publication time the page gives (others are left out).

Stats: ``newscrawl/watch/new_articles`` (total), ``newscrawl/watch/requests_last_interval``,
``newscrawl/watch/budget_use`` (0..1 of the last interval), ``newscrawl/watch/delay_median`` and
``newscrawl/watch/delay_p90`` (seconds, last hour), ``newscrawl/watch/delay_samples``.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from scrapy.utils.asyncio import create_looping_call

from newscrawl.algorithms.watch import DelayWindow, quantile
from newscrawl.crawlstate import RunState

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/watch"


class WatchLog:
    """Count captures and log the status line (module docstring).

    Args:
        stats: the crawler's stats collector.
        interval: seconds between lines (> 0).
    """

    def __init__(self, stats: Any, *, interval: float = 60.0) -> None:
        self.stats = stats
        self.interval = max(1.0, interval)
        self.delays = DelayWindow(3600.0)
        self.state: RunState | None = None
        self._loop: Any = None
        self._new = 0
        self._requests = 0
        self._spent = 0

    def start(self, state: RunState) -> None:
        """Begin logging every ``interval`` seconds."""
        self.state = state
        self._requests = int(self.stats.get_value("downloader/request_count") or 0)
        self._spent = state.spent
        self._loop = create_looping_call(self.emit)
        self._loop.start(self.interval, now=False)

    def stop(self) -> None:
        """Stop logging (the crawl closes)."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def visited(self, record: dict[str, Any], now: float) -> None:
        """One visit recorded: an article fetched for the first time is a new article, and its
        publication → capture delay counts when ``published`` is known."""
        status = int(record.get("status") or 0)
        if record.get("role") != "content" or record.get("visits") != 1 or not 200 <= status < 300:
            return
        self._new += 1
        self.stats.inc_value(f"{_PREFIX}/new_articles")
        published = record.get("published")
        captured = record.get("last_visit")
        if isinstance(published, (int, float)) and isinstance(captured, (int, float)):
            self.delays.add(float(captured), float(captured) - float(published))

    def emit(self) -> str:
        """Log the line for the interval just over (and return it)."""
        state = self.state
        now = state.now() if state is not None else 0.0
        requests = int(self.stats.get_value("downloader/request_count") or 0)
        sent, self._requests = requests - self._requests, requests
        spent = state.spent if state is not None else 0
        counted, self._spent = spent - self._spent, spent
        delays = self.delays.delays(now)
        median, p90 = quantile(delays, 0.5), quantile(delays, 0.9)
        budget = ""
        if state is not None and state.rate is not None:
            allowed = state.rate.rate * self.interval
            use = counted / allowed if allowed > 0 else math.nan
            self.stats.set_value(f"{_PREFIX}/budget_use", round(use, 3))
            budget = f", rate use {counted}/{allowed:.0f} ({use:.0%})"
        self.stats.set_value(f"{_PREFIX}/requests_last_interval", sent)
        self.stats.set_value(f"{_PREFIX}/delay_samples", len(delays))
        if delays:
            self.stats.set_value(f"{_PREFIX}/delay_median", round(median, 1))
            self.stats.set_value(f"{_PREFIX}/delay_p90", round(p90, 1))
            delay = (f"publication->capture delay median {median:.0f} s, p90 {p90:.0f} s "
                     f"(last hour, {len(delays)} article(s) with a date)")
        else:
            delay = "publication->capture delay: no dated article in the last hour"
        line = (f"Watch: {self._new} new article(s), {sent} request(s) in the last "
                f"{self.interval:.0f} s{budget}; {delay}")
        self._new = 0
        logger.info("%s", line)
        return line
