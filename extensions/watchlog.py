"""The once-a-minute status line of monitoring mode, and its figures as stats.

Every ``NEWSCRAWL_WATCH_LOG_INTERVAL`` seconds (default 60) a watched crawl
(:class:`extensions.watch.WatchExtension`) logs, for the interval: new articles (article pages
fetched for the first time), requests sent (Scrapy's ``downloader/request_count``, HEAD probes
and robots.txt included), the use of the request rate (``-a rate=N``: requests counted against it
/ requests it allowed), and the median and p90 publication → capture delay of the articles
captured in the last hour whose publication time the page gives (others are left out) — and
what comes next (:mod:`newscrawl.algorithms.watchstatus`): ``next visit 11:33:10 UTC; 33 sources
not due``; a minute without a request says instead why the watch is idle and when it looks
again (nothing due before a time, pages waiting for the request rate's next token, answers in
flight, nothing to watch). Once, when every source known has been visited (the first sweep):
``First sweep done: watching N sources, first revisits in a–b s, budget N/h`` (the budget is
the request rate, ``-a rate``, when there is one).

Stats: ``newscrawl/watch/new_articles`` (total), ``newscrawl/watch/requests_last_interval``,
``newscrawl/watch/budget_use`` (0..1 of the last interval), ``newscrawl/watch/delay_median`` and
``newscrawl/watch/delay_p90`` (seconds, last hour), ``newscrawl/watch/delay_samples``,
``newscrawl/watch/sources_not_due``, ``newscrawl/watch/idle_intervals`` (lines with no request),
``newscrawl/watch/first_sweep_seconds`` (start to the end of the first sweep).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from scrapy.utils.asyncio import create_looping_call

from newscrawl.algorithms.watch import BACKLOG, DelayWindow, quantile
from newscrawl.algorithms.watchstatus import (first_sweep, first_sweep_line, idle_reason, outlook,
                                              outlook_text)
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
        self._started = 0.0
        self.watch_end: float | None = None
        self.sweep_line: str | None = None
        self._sweep_loop: Any = None

    def start(self, state: RunState, *, watch_end: float | None = None) -> None:
        """Begin logging every ``interval`` seconds (``watch_end``: epoch seconds the watch
        stops at, None until stopped), and watch for the end of the first sweep (every second
        until it is done)."""
        self.state = state
        self.watch_end = watch_end
        self._started = state.now()
        self._requests = int(self.stats.get_value("downloader/request_count") or 0)
        self._spent = state.spent
        self._loop = create_looping_call(self.emit)
        self._loop.start(self.interval, now=False)
        self._sweep_loop = create_looping_call(self.check_sweep)
        self._sweep_loop.start(1.0, now=False)

    def stop(self) -> None:
        """Stop logging (the crawl closes)."""
        for loop in (self._loop, self._sweep_loop):
            if loop is not None and loop.running:
                loop.stop()

    def check_sweep(self) -> str | None:
        """Log the first-sweep line once every known source was visited (and return it)."""
        state = self.state
        if state is None or self.sweep_line is not None or not getattr(state, "loaded", True):
            return None
        now = state.now()
        sweep = first_sweep(state.records.values(), now, expanding=len(state.expanding))
        if not sweep.done:
            return None
        rate = state.rate
        self.sweep_line = first_sweep_line(
            sweep, budget_per_hour=rate.rate * 3600.0 if rate is not None else None,
            why=getattr(state, "rate_note", ""))
        self.stats.set_value(f"{_PREFIX}/first_sweep_seconds", round(now - self._started, 1))
        if self._sweep_loop is not None and self._sweep_loop.running:
            self._sweep_loop.stop()
        logger.info("%s", self.sweep_line)
        return self.sweep_line

    def next_text(self, sent: int) -> str:
        """What comes next (a watch that sent ``sent`` requests in the interval), or why it is
        idle when ``sent`` is 0."""
        state = self.state
        if state is None:
            return "nothing to watch yet"
        now = state.now()
        ahead = outlook(state.records.values(), now, requested=state.scheduled,
                        in_flight=len(state.scheduled))
        self.stats.set_value(f"{_PREFIX}/sources_not_due", ahead.sources_not_due)
        if sent:
            return outlook_text(ahead)
        self.stats.inc_value(f"{_PREFIX}/idle_intervals")
        # what waits once news and sources had their tokens: backlog and re-checks (the reserve)
        wait = state.rate.wait(now, BACKLOG) if state.rate is not None else None
        return idle_reason(ahead, now, token_wait=wait, watch_end=self.watch_end)

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
                f"{self.interval:.0f} s{budget}; {delay}; {self.next_text(sent)}")
        self._new = 0
        logger.info("%s", line)
        return line
