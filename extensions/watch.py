"""Extension of monitoring mode: ``scrapy crawl news -a watch=1`` keeps running after the first
sweep (DESIGN §7).

Spider arguments (over the settings): ``watch`` (``NEWSCRAWL_WATCH_ENABLED``), ``for`` — stop
after ``90s``, ``10m``, ``1h`` (``NEWSCRAWL_WATCH_FOR``; none: until SIGINT / SIGTERM, Scrapy's
graceful shutdown; the crawl state and the store are flushed as at the end of any run) — and
``rate`` — requests per hour for the whole crawl (``NEWSCRAWL_WATCH_RATE``; a share per site).

Without busy-waiting: every known page sits in a due-time heap (:class:`newscrawl.algorithms.
watch.DueQueue`), entered again after each visit (``RunState.listeners``). One timer wakes at
the earliest due time and hands what is due to the engine while the downloader has room and the
page's site a token of the rate, least-served sites first (:class:`~newscrawl.algorithms.watch.
ReadyPages`). Channel pages come back when the channel scheduler says (its visit budget: the
rate minus the article fetches of the last minutes), new article links are fetched at once by
the spider (put back here when the rate had no token), known articles on their correction-decay
schedule. ``spider_idle`` raises ``DontCloseSpider`` while watching. The crawl state is written
every ``NEWSCRAWL_REVISIT_FLUSH_INTERVAL`` seconds (:class:`extensions.crawlstate.
CrawlStateExtension`): a restart of the same command goes on. With ``REDIS_URL`` workers share
one schedule (:mod:`extensions.watchshare`). Status line: :mod:`extensions.watchlog`. Stats:
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
from newscrawl.algorithms.watch import (DueQueue, ReadyPages, channel_budget, due_rank,
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

    Args:
        crawler: the crawler (its engine takes the requests).
        duration: stop after this many seconds (None: until stopped); log_interval: seconds
            between the status lines; stale_after: seconds after which a page requested but
            never visited may be requested again; backlog: most requests waiting in Scrapy's
            scheduler before feeding pauses; share: this worker's side of the schedule shared
            over Redis (None: one process).
    """

    def __init__(self, crawler: Any, *, duration: float | None = None,
                 log_interval: float = defaults.NEWSCRAWL_WATCH_LOG_INTERVAL,
                 stale_after: float = defaults.NEWSCRAWL_WATCH_STALE_AFTER,
                 backlog: int = 16, share: WatchShare | None = None) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.duration = duration
        self.stale_after = max(1.0, stale_after)
        self.backlog = max(1, backlog)
        self.share = share
        self.log = WatchLog(crawler.stats, interval=log_interval)
        self.queue = DueQueue()
        self.ready = ReadyPages()
        self.inflight: dict[str, float] = {}
        self.state: RunState | None = None
        self.spider: Any = None
        self.deadline: float | None = None
        self.closing = False
        self._call: Any = None
        self._wake_time: float | None = None
        self._filled = False
        self._replanned = -float("inf")
        self._started: float | None = None
        self._article_visits: deque[float] = deque()

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
                  stale_after=s.getfloat("NEWSCRAWL_WATCH_STALE_AFTER"))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.request_dropped, signal=signals.request_dropped)
        return ext

    # -- run ------------------------------------------------------------------------------------

    def spider_opened(self, spider: Any) -> None:
        run = self.crawler.get_extension(CrawlStateExtension)
        if run is None:  # NEWSCRAWL_REVISIT_ENABLED: checked in from_crawler
            logger.error("Monitoring mode needs extensions.crawlstate.CrawlStateExtension")
            return
        self.spider = spider
        self.state = state = run.state
        state.listeners.append(self._changed)
        self._started = state.now()
        if self.share is not None and not self.share.start(state, self.queue, self._wake_in):
            self.share = None
        if self.duration:
            self.deadline = state.now() + self.duration
        self.log.start(state)
        logger.info("Watching: %s%s", f"for {self.duration:.0f} s" if self.duration
                    else "until stopped (Ctrl-C / SIGTERM)",
                    f", at most {state.rate.rate * 3600:.0f} requests/hour" if state.rate else "")
        self._wake_in(1.0)

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
            if record.get("role") not in CHANNEL_ROLES:
                self._article_visits.append(state.now())
        if self.share:  # a visit published, or a claim handed back
            self.share.changed(fp, record, visited, state.now())
        due = record.get("due")
        self.queue.push(fp, due if isinstance(due, (int, float)) else state.now(),
                        rank=due_rank(record))
        if isinstance(due, (int, float)) and (
                self._wake_time is None or due < self._wake_time - 0.05):
            self._wake_in(max(due - state.now(), 0.0))

    # -- the timer ------------------------------------------------------------------------------

    def _wake_in(self, delay: float) -> None:
        if self.closing or self.state is None:
            return
        if self._call is not None:
            self._call.cancel()
        delay = min(max(delay, 0.0), _MAX_SLEEP)
        self._wake_time = self.state.now() + delay
        self._call = call_later(delay, self._wake)

    def _wake(self) -> None:
        self._call = None
        self._wake_time = None
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
        backlog = self._take_due(now)
        if backlog:
            backlog = self._feed(now)
        sleep = self._sleep(now, backlog)
        logger.debug("Watch: %d queued, %d ready, %d in flight; sleeping %.2f s",
                      len(self.queue), len(self.ready), len(self.inflight), sleep)
        self._wake_in(sleep)

    def _replan(self, now: float) -> None:
        """Give the channel scheduler what the request rate leaves after the article fetches
        of the last minutes, and move the channels' due times to its new plan."""
        state = self.state
        assert state is not None
        self._replanned = now
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
                    self.queue.push(fp, record["due"], rank=1)

    def _sleep(self, now: float, backlog: bool) -> float:
        rate = self.state.rate if self.state is not None else None
        wait = (rate.wait(now) if rate is not None else 0.0) if backlog else None
        oldest = min(self.inflight.values()) + self.stale_after if self.inflight else None
        return sleep_seconds(now, _MAX_SLEEP, self.queue.next_due(), wait, _BACKLOG_SLEEP,
                             not self._filled, oldest, self.deadline)

    def _release_stale(self, now: float) -> None:
        state = self.state
        assert state is not None
        for fp, sent in list(self.inflight.items()):
            if now - sent >= self.stale_after:
                del self.inflight[fp]
                if fp in state.scheduled:
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

    def _room(self) -> bool:
        engine = self.crawler.engine
        scheduler = getattr(engine, "scheduler", None)
        try:
            queued = len(scheduler) if scheduler is not None else 0
        except TypeError:
            queued = 0
        return not engine.needs_backout() and queued < self.backlog

    def _feed(self, now: float) -> bool:
        """Hand ready pages to the engine, sites least served first; True when some wait."""
        state = self.state
        assert state is not None
        rate = state.rate
        # Under a rate, no more than the tokens there are now (the budget middleware spends them).
        allowance = int(rate.tokens_at(now)) if rate is not None else len(self.ready)
        while allowance > 0 and self.ready and self._room():
            fp = self.ready.pop(served=rate.spent if rate is not None else None,
                                allowed=(lambda site: rate.available(site, now)) if rate else None)
            if fp is None:
                break
            record = state.get(fp)
            if record is None or fp in state.scheduled:
                continue
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
