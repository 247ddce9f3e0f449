"""Monitoring mode on several workers: the watch extension's part of one shared schedule.

With ``REDIS_URL`` (the shared frontier) every ``scrapy crawl news -a watch=1`` worker feeds
only the pages it owns (:func:`newscrawl.algorithms.watchshare.owner_of` over the live watch
workers, rendezvous hashing); a channel page is sent only after an atomic claim in Redis
(:meth:`newscrawl.distributed.watchshare.SharedSchedule.take`), so two workers never fetch it
twice within its interval, and each visit publishes the channel's next due time and estimate.
Every ``NEWSCRAWL_REDIS_WORKER_TIMEOUT / 3`` seconds the worker renews its heartbeat and reads
the live workers; when they changed:

* pages it lost are no longer fed, and lost channels leave its channel scheduler
  (``ChannelScheduler.forget``: the visit budget is planned over owned channels only);
* pages it gained (a worker died: ``kill -9`` stops its heartbeat, and its pages move after
  the worker timeout) enter the due-time queue, channels with the estimate their last visit
  published;
* its request-rate bucket is rescaled to its share of ``-a rate=``
  (:func:`~newscrawl.algorithms.watchshare.rate_share`), so the rate holds over all workers.

A page the worker feeds is sent and answered by it (its channel scheduler sees every visit of
its channels), on a host lease it takes itself (``RedisFrontier.lease_host``: one request per
host and the pause over all workers); new article links go to the shared frontier. Stats:
``newscrawl/watch/<workers|claimed|claim_refused|host_busy|gained|lost>``.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.utils.asyncio import create_looping_call

from newscrawl import meta
from newscrawl.algorithms.revisitplan import CHANNEL_ROLES
from newscrawl.algorithms.watch import due_rank
from newscrawl.algorithms.watchshare import (adopt_estimate, claim_until, handover, owner_of,
                                             page_of, published_estimate, rate_share)
from newscrawl.crawlstate import RunState
from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import RedisFrontier, Wait
from newscrawl.distributed.queue import url_host
from newscrawl.distributed.watchshare import ScheduleError, SharedSchedule

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/watch"


class WatchShare:
    """One watch worker's side of the shared schedule (module docstring).

    Args:
        crawler: the crawler (stats, signals; its frontier extension is found at :meth:`start`).
        claim_ttl: seconds a claimed channel is held when its visit never comes back.
        worker_timeout: heartbeat lifetime (seconds); heartbeats every third of it.
        aliases, fold_www: canonical host mapping (``NEWSCRAWL_HOST_ALIASES``,
            ``NEWSCRAWL_ALIAS_FOLD_WWW``), as the frontier's queues.
    """

    def __init__(self, crawler: Any, *, claim_ttl: float, worker_timeout: float,
                 aliases: dict[str, str] | None = None, fold_www: bool = True) -> None:
        claim_until(0.0, claim_ttl)  # a bad TTL fails at start
        self.crawler = crawler
        self.stats = crawler.stats
        self.claim_ttl = claim_ttl
        self.worker_timeout = worker_timeout
        self.schedule: SharedSchedule | None = None
        self.frontier: RedisFrontier | None = None
        self.aliases = dict(aliases or {})
        self.fold_www = fold_www
        self.held: set[str] = set()  # pages whose request was refused here for now
        self._dropped: set[str] = set()
        self.state: RunState | None = None
        self.me = ""
        self.live: list[str] = []
        self.rate_per_hour: float | None = None
        self.queue: Any = None
        self.wake_in: Any = None
        self._owned: set[str] | None = None
        self._loop: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> WatchShare | None:
        """This worker's side of the shared schedule; None when the crawl runs in one process
        (no shared frontier)."""
        s = crawler.settings
        if "Distributed" not in str(s.get("SCHEDULER")):
            return None
        return cls(crawler, claim_ttl=s.getfloat("NEWSCRAWL_WATCH_CLAIM_TTL"),
                   worker_timeout=s.getfloat("NEWSCRAWL_REDIS_WORKER_TIMEOUT"),
                   aliases=s.getdict("NEWSCRAWL_HOST_ALIASES"),
                   fold_www=s.getbool("NEWSCRAWL_ALIAS_FOLD_WWW"))

    def start(self, state: RunState, queue: Any, wake_in: Any) -> bool:
        """Join the shared schedule; pages gained later go into ``queue`` (a
        :class:`~newscrawl.algorithms.watch.DueQueue`) and ``wake_in(0)`` wakes the feeder.
        False (and a logged error) without the crawl's frontier."""
        ext = self.crawler.get_extension(FrontierExtension)
        if ext is None:
            logger.error("Distributed monitoring mode needs the shared frontier's extension")
            return False
        self.frontier = frontier = ext.frontier
        self.me = frontier.worker_id
        self.schedule = SharedSchedule(frontier.server, frontier.namespace, self.me,
                                       worker_timeout=self.worker_timeout)
        self.state = state
        self.queue, self.wake_in = queue, wake_in
        self.rate_per_hour = state.rate.rate * 3600.0 if state.rate is not None else None
        self.crawler.signals.connect(self.stop, signal=signals.spider_closed)
        self.tick()
        self._loop = create_looping_call(self.tick)
        self._loop.start(self.worker_timeout / 3.0, now=False)
        return True

    def stop(self, spider: Any = None) -> None:
        """Leave the shared schedule (the others take this worker's pages at once)."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self.schedule is not None:
            try:
                self.schedule.heartbeat(leaving=True)
            except ScheduleError as exc:
                logger.warning("Could not leave the shared watch schedule: %s", exc)

    # -- ownership ------------------------------------------------------------------------------

    def owns(self, fp: str) -> bool:
        """Does this worker feed page ``fp``: it owns it, or it held its request (a request
        refused for now by this worker's rate is fed again by this worker)?"""
        return not self.live or fp in self.held or owner_of(fp, self.live) == self.me

    def tick(self) -> None:
        """Heartbeat; on a change of the live workers, hand pages over and rescale the rate."""
        state = self.state
        if self.schedule is None or state is None:
            return
        try:
            live = self.schedule.heartbeat()
        except ScheduleError as exc:
            logger.warning("Redis error in the watch heartbeat: %s", exc)
            return
        if self.me not in live:
            live = sorted({*live, self.me})
        if state.rate is not None and self.rate_per_hour:
            share = rate_share(self.rate_per_hour, len(live))
            state.rate.set_rate(share)
        if not state.loaded:  # the crawl state is still loading: hand over nothing yet
            self.live = live
            return
        self._sync(state.now())
        if live == self.live and self._owned is not None:
            return
        before = set(state.records) if self._owned is None else self._owned
        self.live = live
        self._owned = {fp for fp in state.records if owner_of(fp, live) == self.me}
        gained, lost = handover(before, self._owned)
        self.stats.set_value(f"{_PREFIX}/workers", len(live))
        channels = {fp for fp in lost if (state.get(fp) or {}).get("role") in CHANNEL_ROLES}
        for fp in channels:
            state.scheduler.forget(fp)
        logger.info("Watch workers: %d live (%s); this one owns %d page(s): %d gained, %d lost; "
                    "rate share %s", len(live), ", ".join(live), len(self._owned), len(gained),
                    len(lost), f"{state.rate.rate * 3600:.0f}/h" if state.rate else "none")
        if gained:
            self.stats.inc_value(f"{_PREFIX}/gained", len(gained))
            self._adopt(gained)
        if lost:
            self.stats.inc_value(f"{_PREFIX}/lost", len(lost))

    def _adopt(self, gained: set[str]) -> None:
        """Take the published estimates of gained channels; queue every gained page."""
        state = self.state
        assert state is not None and self.schedule is not None
        channels = [fp for fp in gained if (state.get(fp) or {}).get("role") in CHANNEL_ROLES]
        try:
            published = self.schedule.estimates(channels)
        except ScheduleError as exc:
            logger.warning("Could not read the channel estimates of Redis: %s", exc)
            published = {}
        for fp, est in published.items():
            if self._take_estimate(fp, est):
                state.scheduled.discard(fp)  # requested here, answered by the worker now gone
        for fp in sorted(gained):
            record = state.get(fp)
            if record is not None and fp not in state.scheduled and self.queue is not None:
                self.queue.push(fp, record.get("due") or state.now(), rank=due_rank(record))
        if self.wake_in is not None:
            self.wake_in(0.0)

    def _sync(self, now: float) -> None:
        """Channels this worker owns that are due within a heartbeat period and whose last visit
        another worker answered (the shared frontier hands a request to any worker): recorded
        from what that visit published — a channel found by another worker gets its record, a
        known one its newer visit and estimate — and queued at their due time."""
        state = self.state
        assert state is not None and self.schedule is not None
        try:
            soon = [fp for fp in self.schedule.due_before(now + self.worker_timeout)
                    if self.owns(fp)]
            published = self.schedule.estimates(soon)
        except ScheduleError as exc:
            logger.warning("Redis error reading the shared schedule: %s", exc)
            return
        queued = 0
        for fp, est in published.items():
            page = page_of(est)
            if fp not in state.records and page is not None:
                state.ensure(fp, page.pop("url"), **page)
                if self._owned is not None:
                    self._owned.add(fp)
            if not self._take_estimate(fp, est):
                continue
            state.scheduled.discard(fp)  # requested here, answered elsewhere
            queued += 1
            if self.queue is not None:
                self.queue.push(fp, state.records[fp].get("due") or now, rank=1)
        if queued and self.wake_in is not None:
            self.wake_in(0.0)

    def _take_estimate(self, fp: str, est: dict[str, Any] | None) -> bool:
        """Go on from a channel estimate another worker published, when newer than ours."""
        state = self.state
        rec = state.get(fp) if state is not None else None
        return state is not None and rec is not None and adopt_estimate(state.scheduler, rec, est)

    # -- claims ---------------------------------------------------------------------------------

    def admit(self, fp: str, record: dict[str, Any], request: Any, now: float) -> float | None:
        """May page ``fp`` be sent now as ``request``? None: yes — a channel is claimed, the
        host leased, and the request is sent and answered by this worker; else the time
        (epoch seconds) to try again (the channel's shared due time, the host's pause)."""
        state = self.state
        if self.schedule is None or self.frontier is None or state is None:
            return None
        channel = record.get("role") in CHANNEL_ROLES
        try:
            if channel:
                claimed, refused = self.schedule.take([fp], now=now,
                                                      until=claim_until(now, self.claim_ttl))
                if fp in refused:
                    state.scheduled.discard(fp)  # not sent: it may be requested again
                    self.stats.inc_value(f"{_PREFIX}/claim_refused")
                    return max(refused[fp], now + 0.5)
                self._take_estimate(fp, claimed.get(fp))
            host = url_host(request.url, aliases=self.aliases, fold_www=self.fold_www)
            lease = self.frontier.lease_host(host)
            if isinstance(lease, Wait):  # the host is busy or pausing: later
                if channel:
                    self.schedule.unclaim(fp, due=now)
                state.scheduled.discard(fp)
                self.stats.inc_value(f"{_PREFIX}/host_busy")
                return now + (lease.wait_ms / 1000.0 if lease.wait_ms > 0 else 0.25)
        except ScheduleError as exc:
            logger.warning("Redis error claiming a page: %s (sent through the shared queues)", exc)
            return None
        if channel:
            self.stats.inc_value(f"{_PREFIX}/claimed")
        member, token = lease
        request.meta[meta.LEASE] = [host, token]
        request.meta[meta.OWN] = member.decode("ascii")
        return None

    def changed(self, fp: str, record: dict[str, Any], visited: bool, now: float) -> None:
        """A page was visited (a channel's visit is published: next due time, estimate; a
        channel this worker does not own leaves its scheduler again) or released (a request
        that did not go out: this worker feeds it again, a channel's claim is handed back)."""
        state = self.state
        if self.schedule is None or state is None:
            return
        if visited:
            self.held.discard(fp)
        elif fp in self._dropped:  # a duplicate of the shared frontier: not this worker's
            self._dropped.discard(fp)
        else:
            self.held.add(fp)
        if record.get("role") not in CHANNEL_ROLES:
            return
        if not visited:
            try:
                self.schedule.unclaim(fp, due=now)
            except ScheduleError as exc:
                logger.warning("Redis error handing back a channel claim: %s", exc)
            return
        due = record.get("due")
        if not isinstance(due, (int, float)):
            return
        try:
            self.schedule.visited(fp, due=float(due), estimate=published_estimate(
                record, record.get("sched") or state.scheduler.export(fp)))
        except ScheduleError as exc:
            logger.warning("Redis error publishing a channel visit: %s", exc)
        if not self.owns(fp):
            state.scheduler.forget(fp)

    def dropped(self, fp: str) -> None:
        """The shared frontier refused ``fp`` as seen: its release next is not this worker's."""
        self._dropped.add(fp)

