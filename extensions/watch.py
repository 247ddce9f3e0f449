"""Extension of monitoring mode: ``scrapy crawl news -a watch=1`` keeps running after the first
sweep (DESIGN §7; docs/monitoring.md).

Spider arguments (over the settings): ``watch`` (``NEWSCRAWL_WATCH_ENABLED``), ``for`` — stop
after ``90s``, ``10m``, ``1h`` (``NEWSCRAWL_WATCH_FOR``; none: until SIGINT / SIGTERM) — and
``rate`` — requests per hour for the whole crawl (``NEWSCRAWL_WATCH_RATE``; without it
``NEWSCRAWL_WATCH_SITE_RATE`` per site: :meth:`newscrawl.crawlstate.RunState.start_watch`).

Without busy-waiting: every known page sits in a due-time heap (:class:`newscrawl.algorithms.
watch.DueQueue`), entered again after each visit (``RunState.listeners``). One timer wakes at
the earliest due time and hands what is due to the engine while the downloader has room and the
page's site a token of the rate, by class (:func:`~newscrawl.algorithms.watch.due_rank`: news,
sources, backlog, re-checks), least-served sites first (:class:`~newscrawl.algorithms.watch.
ReadyPages`). Sources come back when the channel scheduler says (its budget: the rate minus the
news and re-check fetches of the last minutes; backlog takes only what is left); new article
links come here from the revisit middleware (:meth:`~newscrawl.crawlstate.RunState.found`).
``spider_idle`` raises ``DontCloseSpider`` while watching. ``REDIS_URL``: workers share one
schedule (:mod:`extensions.watchshare`). Status line: :mod:`extensions.watchlog`. Stats:
``newscrawl/watch/<fed|dropped_again|released_stale|channel_budget>`` and the status line's.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_from_coro

from extensions.crawlstate import CrawlStateExtension
from extensions.watchlog import WatchLog
from extensions.watchshare import WatchShare
from newscrawl import defaults, meta
from newscrawl.algorithms.revisitplan import CHANNEL_ROLES, replan_channels
from newscrawl.algorithms.urls import host_of, registered_domain
from newscrawl.algorithms.watch import (BACKLOG, SOURCE, DueQueue, ReadyPages, channel_budget, due_rank,
                                        parse_duration, sleep_seconds, watching)
from newscrawl.crawlstate import RunState
from spiders.requests import in_scope, watch_request

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/watch"
#: Longest sleep between wakes; sleep while due pages wait for a slot or a token (seconds).
_MAX_SLEEP, _BACKLOG_SLEEP = 60.0, 0.25
#: Seconds between re-plans of the channel budget; article fetches counted over the last
#: _ARTICLE_WINDOW seconds are what the rate leaves the channel pages.
_REPLAN_EVERY = 60.0
_ARTICLE_WINDOW = 600.0


class WatchExtension:
    """Keep a crawl running and feed it what is due (module docstring).

    Args: ``crawler`` (its engine takes the requests); ``duration``: stop after this many seconds
    (None: until stopped); ``log_interval``: seconds between status lines; ``stale_after``: seconds
    after which a page requested, never visited, may be requested again; ``backlog``: most
    requests waiting in Scrapy's scheduler before feeding pauses; ``share``: this worker's side of
    the schedule shared over Redis (None: one process); ``site_rate``: requests/hour per site
    without a rate; ``burst``: seconds of the rate saved up at most.

    Raises:
        ValueError: a negative (or NaN) ``site_rate`` or ``burst``.
    """

    def __init__(self, crawler: Any, *, duration: float | None = None,
                 log_interval: float = defaults.NEWSCRAWL_WATCH_LOG_INTERVAL,
                 stale_after: float = defaults.NEWSCRAWL_WATCH_STALE_AFTER,
                 backlog: int = 16, share: WatchShare | None = None,
                 site_rate: float = defaults.NEWSCRAWL_WATCH_SITE_RATE,
                 burst: float = defaults.NEWSCRAWL_WATCH_BURST) -> None:
        self.crawler, self.stats, self.duration, self.share = crawler, crawler.stats, duration, share
        self.stale_after, self.backlog = max(1.0, stale_after), max(1, backlog)
        if not (site_rate >= 0 and burst >= 0):  # (NaN too)
            raise ValueError("NEWSCRAWL_WATCH_SITE_RATE and NEWSCRAWL_WATCH_BURST must be >= 0, got "
                             f"{site_rate!r} and {burst!r}")
        self.site_rate, self.burst = float(site_rate), float(burst)
        self.default_rate = False  # the request rate is the politeness default (no -a rate)
        self.log = WatchLog(crawler.stats, interval=log_interval)
        self.queue, self.ready = DueQueue(), ReadyPages()
        self.inflight: dict[str, float] = {}
        self.state: RunState | None = None
        self.spider: Any = None
        self.deadline: float | None = None
        self.closing = self._filled = False
        self._call: Any = None  # the timer, and when it fires (run clock)
        self._wake_time: float | None = None
        self._replanned, self._started = -float("inf"), None  # type: float, float | None
        self._article_visits: deque[float] = deque()  # news and re-check fetches (not backlog)

    @classmethod
    def from_crawler(cls, crawler: Any) -> WatchExtension:
        s = crawler.settings
        spider = getattr(crawler, "spider", None)
        given = [a for a in ("for", "rate") if getattr(spider, a, None) not in (None, "")]
        if not watching(getattr(spider, "watch", None), s.get("NEWSCRAWL_WATCH_ENABLED"),
                        revisit=s.getbool("NEWSCRAWL_REVISIT_ENABLED"), batch_args=given):
            raise NotConfigured("not watching (-a watch=1 / NEWSCRAWL_WATCH_ENABLED)")
        share = WatchShare.from_crawler(crawler)  # None in one process
        until = getattr(spider, "for", None)
        duration = parse_duration(until if until not in (None, "") else s.get("NEWSCRAWL_WATCH_FOR"))
        ext = cls(crawler, duration=duration, backlog=s.getint("CONCURRENT_REQUESTS"), share=share,
                  log_interval=s.getfloat("NEWSCRAWL_WATCH_LOG_INTERVAL"),
                  stale_after=s.getfloat("NEWSCRAWL_WATCH_STALE_AFTER"),
                  site_rate=s.getfloat("NEWSCRAWL_WATCH_SITE_RATE"),
                  burst=s.getfloat("NEWSCRAWL_WATCH_BURST"))
        for name in ("spider_opened", "spider_idle", "spider_closed", "request_dropped"):
            crawler.signals.connect(getattr(ext, name), signal=getattr(signals, name))
        return ext

    # -- run, and the timer ----------------------------------------------------------------------

    def spider_opened(self, spider: Any) -> None:
        run = self.crawler.get_extension(CrawlStateExtension)
        if run is None:  # NEWSCRAWL_REVISIT_ENABLED: checked in from_crawler
            logger.error("Monitoring mode needs extensions.crawlstate.CrawlStateExtension")
            return
        self.spider, self.state = spider, run.state
        state = run.state
        state.listeners.append(self._changed)
        self._started = state.now()
        if self.share is not None and not self.share.start(state, self.queue, self._wake_in):
            self.share = None
        entries = getattr(spider, "entry_urls", None) or getattr(spider, "start_urls", None) or ()
        self.default_rate = state.start_watch({registered_domain(host_of(str(u))) for u in entries},
                                              self.site_rate, self.burst, dispatch=self.share is None)
        if self.duration:
            self.deadline = state.now() + self.duration
        self.log.start(state, watch_end=self.deadline)  # (issue 20: what comes next)
        logger.info("Watching: %s%s%s", f"for {self.duration:.0f} s" if self.duration else "until "
                    "stopped (Ctrl-C / SIGTERM)", f", at most {state.rate.rate * 3600:.0f} requests/"
                    "hour" if state.rate else "", f" ({state.rate_note})" if state.rate_note else "")

    def spider_idle(self, spider: Any) -> None:
        """Keep the spider open while watching (the heap's timer feeds it)."""
        if self.state is None or self.closing:
            return
        if self._call is None:
            self._wake_in(0.0)
        raise DontCloseSpider

    def spider_closed(self, spider: Any, reason: str = "") -> None:
        self.closing = True
        if self._call is not None:
            self._call.cancel()
        self.log.stop()

    def request_dropped(self, request: Any, spider: Any = None) -> None:
        """A page request the scheduler refused (a duplicate in this long run): asked again."""
        revisit = request.meta.get(meta.REVISIT)
        if self.state is not None and revisit and revisit.get("fp") and not request.dont_filter:
            self.stats.inc_value(f"{_PREFIX}/dropped_again")
            if self.share:  # seen by the shared frontier: fed again only by its owner
                self.share.dropped(revisit["fp"])
            self.state.release(revisit["fp"])

    def _changed(self, fp: str, record: dict[str, Any] | None, visited: bool = True) -> None:
        """A visit was recorded (or a request released): back into the heap at its due time."""
        state = self.state
        if record is None or state is None:
            return
        self.inflight.pop(fp, None)
        if visited:
            state.scheduled.discard(fp)  # visited: it may be requested again when due
            self.log.visited(record, state.now())
            if record.get("role") not in CHANNEL_ROLES and record.get("found") != "backlog":
                self._article_visits.append(state.now())  # news and re-checks: not backlog
        if self.share:  # a visit published, or a claim handed back
            self.share.changed(fp, record, visited, state.now())
        due = record.get("due")
        self.queue.push(fp, due if isinstance(due, (int, float)) else state.now(),
                        rank=due_rank(record))
        if isinstance(due, (int, float)) and (
                self._wake_time is None or due < self._wake_time - 0.05):
            self._wake_in(max(due - state.now(), 0.0))

    def _wake_in(self, delay: float) -> None:
        if self.closing or self.state is None:
            return
        if self._call is not None:
            self._call.cancel()
        delay = min(max(delay, 0.0), _MAX_SLEEP)
        self._wake_time = self.state.now() + delay
        self._call = call_later(delay, self._wake)

    def _wake(self) -> None:
        self._call = self._wake_time = None
        state = self.state
        if self.closing or state is None:
            return
        now = state.now()
        if self.deadline is not None and now >= self.deadline:
            logger.info("Watched for %.0f s: closing", self.duration or 0)
            self.closing = True
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="finished"))
            return
        if not self._filled and state.loaded:  # every known page, at its due time (not a visit)
            for fp, record in state.records.items():
                if fp not in state.scheduled:
                    self.queue.push(fp, record.get("due") or now, rank=due_rank(record))
            self._filled = True
        if now - self._replanned >= _REPLAN_EVERY:
            self._replan(now)
        self._release_stale(now)
        self._wake_in(sleep := self._sleep(now, self._take_due(now) and self._feed(now)))
        logger.debug("Watch: %d queued, %d ready, %d in flight; sleeping %.2f s",
                      len(self.queue), len(self.ready), len(self.inflight), sleep)

    def _replan(self, now: float) -> None:
        """Give the channel scheduler what the request rate leaves after the news and re-check
        fetches of the last minutes; move the channels' due times to its new plan."""
        state, self._replanned = self.state, now
        assert state is not None
        visits = self._article_visits
        while visits and visits[0] < now - _ARTICLE_WINDOW:
            visits.popleft()
        if state.rate is not None:
            state.scheduler.budget_per_hour = channel_budget(state.rate.rate * 3600.0, len(visits),
                now - (self._started or 0.0), _ARTICLE_WINDOW, _REPLAN_EVERY)
            self.stats.set_value(f"{_PREFIX}/channel_budget", round(state.scheduler.budget_per_hour))
        if replan_channels(state.records.values(), state.scheduler, now):
            for fp, record in state.records.items():
                if record.get("role") in CHANNEL_ROLES and fp not in state.scheduled:
                    self.queue.push(fp, record["due"], rank=SOURCE)

    def _sleep(self, now: float, backlog: bool) -> float:
        rate = self.state.rate if self.state is not None else None
        wait = (rate.wait(now) if rate is not None else 0.0) if backlog else None
        oldest = min(self.inflight.values()) + self.stale_after if self.inflight else None
        return sleep_seconds(now, _MAX_SLEEP, self.queue.next_due(), wait, _BACKLOG_SLEEP,
                             not self._filled, oldest, self.deadline)

    def _release_stale(self, now: float) -> None:
        state = self.state
        for fp, sent in list(self.inflight.items()):
            if now - sent >= self.stale_after:
                del self.inflight[fp]
                if state is not None and fp in state.scheduled:
                    self.stats.inc_value(f"{_PREFIX}/released_stale")
                    state.release(fp)

    def _take_due(self, now: float) -> bool:
        """Move the due pages of the heap to the per-site ready lists; True when any waits."""
        state = self.state
        assert state is not None
        for fp in self.queue.pop_due(now):
            record = state.get(str(fp))
            if record is None or record.get("evicted") or fp in state.scheduled or fp in self.ready:
                continue
            due = record.get("due")
            if isinstance(due, (int, float)) and due > now:
                continue  # a stale entry: the record was pushed again with its new due time
            if not in_scope(record, self.spider) or (self.share and not self.share.owns(str(fp))):
                continue
            self.ready.add(str(record.get("site") or record.get("host") or ""), str(fp),
                           rank=due_rank(record), due=float(due or now))
        return bool(self.ready)

    def _room(self, most: int | None = None) -> bool:
        """May one more request go (fewer than ``most``, default ``backlog``, in Scrapy's queue)?"""
        engine = self.crawler.engine
        try:
            queued = len(engine.scheduler) if getattr(engine, "scheduler", None) is not None else 0
        except TypeError:
            queued = 0
        return not engine.needs_backout() and queued < (self.backlog if most is None else most)

    def _feed(self, now: float) -> bool:
        """Hand ready pages to the engine, sites least served first; True when some wait."""
        state = self.state
        assert state is not None
        rate = state.rate
        # Under a rate, no more than the tokens there are now (the budget middleware spends them).
        allowance = int(rate.tokens_at(now)) if rate is not None else len(self.ready)
        while allowance > 0 and self.ready and self._room():
            fp = self.ready.pop(served=rate.spent if rate is not None else None,
                                allowed=(lambda site: rate.available(site, now, SOURCE)) if rate else None)
            if fp is None:
                break
            record = state.get(fp)
            if record is None or fp in state.scheduled:
                continue
            rank = due_rank(record)  # the lowest waiting: backlog only when no news or source is
            site = str(record.get("site") or record.get("host") or "")
            if rank >= BACKLOG and not (self._room(4) and (rate is None or rate.available(site, now, rank))):
                self.ready.add(site, fp, rank=rank, due=float(record.get("due") or now))
                break
            request = watch_request(state, record, self.spider)
            later = self.share.admit(fp, record, request, now) if self.share else None
            if later is not None:  # another worker has it: back into the heap
                self.queue.push(fp, later, rank=due_rank(record))
                continue
            self.crawler.engine.crawl(request)
            self.inflight[fp] = now
            allowance -= 1
            self.stats.inc_value(f"{_PREFIX}/fed")
        return bool(self.ready)
