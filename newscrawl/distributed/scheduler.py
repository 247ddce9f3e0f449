"""scrapy-redis scheduler over the host-aware frontier (``SCHEDULER``), for N workers on one Redis.

Subclass of ``scrapy_redis.scheduler.Scheduler`` with scrapy-redis's sharp edges on current
Scrapy handled:

* the duplicate filter is this project's :class:`~newscrawl.distributed.dupefilter.BucketDupeFilter`
  (``DUPEFILTER_CLASS`` set explicitly — scrapy-redis silently falls back to Scrapy's in-memory
  filter otherwise) and fingerprints with ``REQUEST_FINGERPRINTER_CLASS``;
* the fingerprint check and the queueing are one atomic Lua script, so a crash never leaves a URL
  seen but not queued;
* the queue is per host (:class:`~newscrawl.distributed.queue.HostQueue`): identical requests do
  not collapse, FIFO within a priority, one request in flight per host over all workers;
* the frontier persists by default (``SCHEDULER_PERSIST`` is set on by the add-on; with it off
  the namespace is flushed only by the last live worker, never under a running one); likewise
  ``SCHEDULER_FLUSH_ON_START`` is ignored, with a warning, while other workers are alive;
* scrapy-redis keeps the seen set forever, so a persistent crawl can never fetch a page again
  (revisits need ``dont_filter``); here the seen set belongs to a *round*: a worker that starts
  on a drained frontier (nothing queued, leased or pending, no worker registered) starts a new
  round with an empty seen set, and the revisit middleware decides which known pages are due.
  Restarts after a crash or a Ctrl-C continue the round (``NEWSCRAWL_REDIS_SEEN_PER_ROUND``);
* requests are serialized by a pinned serializer (JSON, or pickle protocol 4), undecodable
  entries go to the dead-letter list;
* a popped request stays in the worker's pending set until the engine has finished it (downloaded
  and its callback's output scheduled); a worker killed with ``kill -9`` stops its heartbeat and
  the other workers (or its successor) requeue its pending requests and free its host leases;
* a worker closes when the shared frontier has been empty, with no request in flight anywhere,
  for ``NEWSCRAWL_REDIS_IDLE_CLOSE`` seconds (``SCHEDULER_IDLE_BEFORE_CLOSE`` only works with
  scrapy-redis's blocking list queues).

The frontier loop (every ``NEWSCRAWL_REDIS_POLL_INTERVAL`` seconds) acknowledges finished
requests, sends heartbeats, recovers dead workers' work and wakes the engine when a host's
politeness pause ends. Two Scrapy internals are read (``engine._slot.inprogress`` and
``engine._slot.nextcall``); without them requests are acknowledged only at close and the engine
wakes on its own 5-second heartbeat.

The scheduler finds its two collaborators as extensions in ``from_crawler``: the crawl's frontier
(:class:`~newscrawl.distributed.extension.FrontierExtension`, shared with the politeness
middleware) and the run's durability barrier (``crawler.get_extension(Durable)``, see
:mod:`newscrawl.durability`). A finished request is acknowledged only once the barrier's
``durable_time()`` has passed the moment it finished; without a barrier (nothing stored) at once.
At close the worker stays registered until its spider_closed handler, which runs after the
barrier's own (extensions connect theirs first), has acknowledged what the store wrote last; what
is still not durable after a heartbeat period goes back to the frontier.

Stats: ``scheduler/enqueued/redis``, ``scheduler/dequeued/redis`` (as scrapy-redis), and
``newscrawl/redis/<event>``: ``serialize_error``, ``dead_letter``, ``acked``, ``requeued``
(requests recovered from dead workers), ``freed_leases``, ``expired_leases``, ``errors``,
``frontier_lost`` (Redis lost the frontier: its run marker, ``keys.RUN_KEY``, went missing),
``frontier_not_rebuilt`` (and no crawl state could rebuild it), ``own`` (watched pages a
worker sent on a host lease it took itself, :meth:`RedisFrontier.lease_host`);
``newscrawl/politeness/lease_conflict`` (a pop found the host already in flight: must stay 0).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from redis.exceptions import RedisError
from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.asyncio import (
    AsyncioLoopingCall,
    CallLaterResult,
    call_later,
    create_looping_call,
    sleep,
)
from scrapy.utils.misc import load_object
from scrapy_redis.scheduler import Scheduler
from twisted.internet.task import LoopingCall

from newscrawl.algorithms.politeness import next_delay
from newscrawl.components import settings_kwargs
from newscrawl.distributed.dupefilter import BucketDupeFilter
from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import RedisFrontier
from newscrawl import meta
from newscrawl.distributed.queue import HostQueue
from newscrawl.distributed.serializer import SerializationError, get_serializer
from newscrawl.durability import Durable

logger = logging.getLogger(__name__)

#: Signal sent when Redis lost the shared frontier (see
#: :meth:`DistributedScheduler.check_run_marker`); arguments ``marker`` (the new run marker) and
#: ``inflight`` (URLs of this worker's requests in progress, not to be queued again).
FRONTIER_LOST = object()


class DistributedScheduler(Scheduler):
    """The shared-frontier scheduler; built by Scrapy through :meth:`from_crawler`.

    Args:
        frontier: the crawl's :class:`RedisFrontier` (keys, prefix bytes, lease TTL), owned by
            :class:`~newscrawl.distributed.extension.FrontierExtension` and shared with the
            politeness middleware.
        crawler: the crawler (settings, stats, signals, engine).
        durable: the run's durability barrier (``durable_time()``, monotonic seconds): a
            finished request is acknowledged only once it is durable; ``None`` (nothing stored)
            acknowledges at once.
        persist: ``SCHEDULER_PERSIST``; flush_on_start: ``SCHEDULER_FLUSH_ON_START``.
        dupefilter_cls: a :class:`BucketDupeFilter` (sub)class path.
        serializer: request serializer (default JSON).
        idle_close: seconds of global quiet before closing.
        worker_timeout: heartbeat lifetime (s); heartbeats every third of it.
        poll_interval: seconds between frontier-loop runs.
        aliases, fold_www: canonical host mapping of queues.
        min_delay: pause (s) used when a lease must be released without a response time.
        seen_per_round: start a new seen-set round on a drained frontier.
        pop_batch: most requests (of different ready hosts) one Redis round trip takes, never
            more than the downloader's free slots.

    Raises:
        ValueError: a negative ``idle_close``, a non-positive interval or ``pop_batch < 1``.
    """

    def __init__(self, frontier: RedisFrontier, *, crawler: Any, durable: Durable | None,
                 idle_close: float, worker_timeout: float, poll_interval: float,
                 aliases: Mapping[str, str] | None, fold_www: bool, min_delay: float,
                 seen_per_round: bool, pop_batch: int, persist: bool = True,
                 flush_on_start: bool = False,
                 dupefilter_cls: str = "newscrawl.distributed.dupefilter.BucketDupeFilter",
                 serializer: Any = None) -> None:
        super().__init__(frontier.server, persist=persist, flush_on_start=flush_on_start,
                         queue_cls="newscrawl.distributed.queue.HostQueue",
                         dupefilter_cls=dupefilter_cls, idle_before_close=0,
                         serializer=serializer or get_serializer("json"))
        if idle_close < 0 or worker_timeout <= 0 or poll_interval <= 0 or pop_batch < 1:
            raise ValueError("idle_close must be >= 0; worker_timeout and poll_interval > 0; "
                             "pop_batch >= 1")
        self.frontier = frontier
        self.durable = durable
        self.pop_batch = pop_batch
        self.crawler = crawler
        self.stats = crawler.stats
        self.idle_close = idle_close
        self.worker_timeout = worker_timeout
        self.poll_interval = poll_interval
        self.aliases = dict(aliases or {})
        self.fold_www = fold_www
        self.min_delay = min_delay
        self.seen_per_round = seen_per_round
        self._joined = False  # registered as a worker of the frontier (open), until it leaves
        self._leave_when_durable = False  # close found finished requests not durable yet
        self._popped: dict[bytes, Request] = {}
        #: Requests this worker leased the host for itself (meta ``OWN``), not sent yet.
        self._own: deque[Request] = deque()
        #: Finished requests not acknowledged yet: ``(member, time.monotonic() finished)``.
        self._finished: deque[tuple[bytes, float]] = deque()
        self._unsent = 0  # requests handed to push_later whose outcome is not back yet
        self._idle_until = 0.0  # monotonic time before which next_request need not ask Redis
        self._loop: AsyncioLoopingCall | LoopingCall | None = None
        self._wake_call: CallLaterResult | None = None
        self._wake_at = 0.0
        self._next_heartbeat = 0.0
        self._quiet_since: float | None = None
        self._errors_logged = 0

    @classmethod
    def from_settings(cls, settings: Any) -> DistributedScheduler:  # pragma: no cover
        raise TypeError("DistributedScheduler is built with from_crawler()")

    @classmethod
    def from_crawler(cls, crawler: Any) -> DistributedScheduler:
        """Build on the crawl's frontier and durability barrier; ping Redis.

        Raises:
            ValueError: no :class:`FrontierExtension` in ``EXTENSIONS`` (the distributed add-on
                adds it), or an invalid setting.
            redis.exceptions.RedisError: Redis does not answer.
        """
        extension = crawler.get_extension(FrontierExtension)
        if extension is None:
            raise ValueError("DistributedScheduler needs newscrawl.distributed.extension."
                             "FrontierExtension in EXTENSIONS (the distributed add-on adds it)")
        s = crawler.settings
        extension.frontier.server.ping()  # fail at start, not at the first request
        return cls(
            extension.frontier, crawler=crawler, durable=crawler.get_extension(Durable),
            persist=s.getbool("SCHEDULER_PERSIST", True),
            flush_on_start=s.getbool("SCHEDULER_FLUSH_ON_START"),
            dupefilter_cls=s.get("DUPEFILTER_CLASS") or
            "newscrawl.distributed.dupefilter.BucketDupeFilter",
            serializer=get_serializer(s.get("NEWSCRAWL_REDIS_SERIALIZER")),
            **settings_kwargs(s, idle_close="NEWSCRAWL_REDIS_IDLE_CLOSE",
                              worker_timeout="NEWSCRAWL_REDIS_WORKER_TIMEOUT",
                              poll_interval="NEWSCRAWL_REDIS_POLL_INTERVAL",
                              seen_per_round="NEWSCRAWL_REDIS_SEEN_PER_ROUND",
                              pop_batch="NEWSCRAWL_REDIS_POP_BATCH", aliases="NEWSCRAWL_HOST_ALIASES",
                              fold_www="NEWSCRAWL_ALIAS_FOLD_WWW",
                              min_delay="NEWSCRAWL_POLITENESS_MIN_DELAY"),
        )

    # --- life cycle -----------------------------------------------------------------------------

    def open(self, spider: Any) -> None:
        self.spider = spider
        namespace = self.frontier.namespace
        self.queue_key = namespace
        self.server = self.frontier.server
        self.queue = HostQueue(self.server, spider, namespace, self.serializer,
                               frontier=self.frontier, aliases=self.aliases,
                               fold_www=self.fold_www, stats=self.stats)
        dupefilter_cls = load_object(self.dupefilter_cls)
        if issubclass(dupefilter_cls, BucketDupeFilter):
            self.df = dupefilter_cls._build(self.crawler, spider.name, frontier=self.frontier)
        else:
            raise ValueError(f"DUPEFILTER_CLASS {self.dupefilter_cls!r} is not a BucketDupeFilter: "
                             "the distributed scheduler checks fingerprints in its queue script")
        others = [w for w in self.frontier.live_workers() if w != self.frontier.worker_id]
        if self.flush_on_start:
            if others:
                logger.warning("SCHEDULER_FLUSH_ON_START ignored: %d other worker(s) use %s",
                               len(others), namespace)
            else:
                self.flush()
        if self.frontier.join(new_round=self.seen_per_round):
            logger.info("Frontier %s was drained: round %d starts with an empty seen set",
                        namespace, self.frontier.round)
        self.frontier.claim_run_marker()
        self._joined = True
        self._heartbeat()
        queued = len(self.queue)
        logger.info("Shared frontier %s on %s: worker %s, round %d, %d request(s) queued, %d "
                    "fingerprint(s) seen, %d other worker(s)", namespace, _redis_name(self.server),
                    self.frontier.worker_id, self.frontier.round, queued,
                    self.frontier.seen_count(), len(others))
        if queued:
            logger.info("Resuming crawl (%d requests scheduled)", queued)
        logger.info("Acknowledgements wait for the durability barrier: %s",
                    type(self.durable).__name__ if self.durable is not None else "none (nothing stored)")
        self.crawler.signals.connect(self._on_spider_idle, signal=signals.spider_idle)
        # Connected after the extensions' handlers (built before the engine), so it runs after
        # the durability barrier's own spider_closed handler (its last writes).
        self.crawler.signals.connect(self._on_spider_closed, signal=signals.spider_closed)
        self._loop = create_looping_call(self._tick)
        self._loop.start(self.poll_interval, now=False)

    def close(self, reason: str) -> None:
        """Stop the frontier loop, acknowledge what is finished and durable, and leave the
        frontier (this worker's other taken requests go back to the queues).

        Finished requests that are not durable yet (the store writes its last buffer when the
        spider closes) keep the worker registered until :meth:`_on_spider_closed`.
        """
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._wake_call is not None:
            self._wake_call.cancel()
            self._wake_call = None
        if not self._joined:
            return
        try:
            self._ack_finished(at_close=True)
        except RedisError as exc:
            self._redis_error("acknowledging finished requests", exc)
        if self._finished:
            self._leave_when_durable = True
            logger.info("%d finished request(s) wait for the store before they are acknowledged",
                        len(self._finished))
            return
        self._leave()

    async def _on_spider_closed(self, spider: Any = None, reason: str = "") -> None:
        """Acknowledge the requests :meth:`close` left waiting once the barrier passes them
        (polling for at most a heartbeat period), then leave: what is still not durable goes
        back to the frontier and is fetched again."""
        if not self._leave_when_durable:
            return
        self._leave_when_durable = False
        deadline = time.monotonic() + self.worker_timeout / 3.0
        while True:
            self._ack_finished(at_close=True)
            left = deadline - time.monotonic()
            if not self._finished or left <= 0:
                break
            await sleep(min(self.poll_interval, left))
        if self._finished:
            logger.warning("%d finished request(s) were not stored in time: returned to the "
                           "shared frontier", len(self._finished))
            self._finished.clear()
        self._leave()

    def _leave(self) -> None:
        """Send queued calls, hand back this worker's unacknowledged requests, deregister."""
        self._joined = False
        try:
            requeued = self.frontier.heartbeat(leaving=True)[0]
            if requeued:
                logger.info("Returned %d unfinished request(s) to the shared frontier", requeued)
            if not self.persist:
                others = self.frontier.live_workers()
                if others:
                    logger.warning("SCHEDULER_PERSIST is off but %d worker(s) still use %s: not "
                                   "flushing", len(others), self.frontier.namespace)
                else:
                    self.flush()
        except RedisError as exc:
            logger.error("Could not hand back this worker's requests to Redis: %s (the other "
                         "workers recover them after %.0f s)", exc, self.worker_timeout)

    def flush(self):
        self.queue.clear()
        self.df.cache.clear()

    # --- scheduler interface --------------------------------------------------------------------

    def enqueue_request(self, request):
        """Queue ``request`` unless the in-process cache knows it as a duplicate; a request
        holding a host lease this worker took itself (meta ``OWN``, a watched page) is sent by
        this worker, before the shared queues.

        The push (fingerprint check and add, and queueing, in one Lua script) goes out with the
        next frontier round trip; a duplicate only Redis knows is counted then
        (``newscrawl/dupefilter/redis_seen``) and Scrapy's ``request_dropped`` signal is sent
        for it then, as the engine sends it for a duplicate refused at once: the crawl state
        forgets it was requested (a watch worker would otherwise never feed that page again,
        also not after it gained the page from a dead worker).
        """
        if request.meta.get(meta.OWN) and request.meta.get(meta.LEASE):
            self._own.append(request)
            return True
        fingerprint = None
        if not request.dont_filter:
            fingerprint = self.df.request_fingerprint(request)
            if self.df.cached(fingerprint):
                self.df.log(request, self.spider)
                return False
        try:
            self.queue.push_later(request, fingerprint=fingerprint,
                                  callback=lambda added: self._pushed(added, fingerprint, request))
        except SerializationError as exc:
            self.stats.inc_value("newscrawl/redis/serialize_error")
            logger.error("Cannot queue %s: %s (set NEWSCRAWL_REDIS_SERIALIZER=pickle for meta "
                         "values JSON cannot carry)", request, exc)
            return False
        self._unsent += 1
        if fingerprint is not None:
            # In flight to Redis: a second copy before the answer is a duplicate either way.
            self.df.cache.add(fingerprint)
        return True

    def _pushed(self, added: bool, fingerprint: bytes | None, request: Request | None = None) -> None:
        self._unsent -= 1
        if fingerprint is not None:
            self.df.count(new=added)
        if added:
            self.stats.inc_value("scheduler/enqueued/redis")
        elif request is not None:
            self.crawler.signals.send_catch_log(signals.request_dropped, request=request,
                                                spider=self.spider)

    def next_request(self):
        if self._own:
            request = self._own.popleft()
            self._popped[str(request.meta.pop(meta.OWN)).encode("ascii")] = request
            self.stats.inc_value("newscrawl/redis/own")
            return request
        now = time.monotonic()
        if now < self._idle_until and not self.frontier.queued_calls and not self.queue.taken:
            # No host was ready a moment ago and this worker changed nothing since: do not ask
            # Redis again before the first host's pause ends or the next poll.
            return None
        try:
            entry = self.queue.pop_entry(limit=self._pop_limit())
        except RedisError as exc:
            # Redis is away: the queued calls wait in the frontier; ask again after a poll.
            self._redis_error("taking a request", exc)
            self._idle_until = now + self.poll_interval
            return None
        if entry is None:
            wait = self.queue.last_wait
            if wait is not None and wait.wait_ms >= 0:
                self._wake_in(wait.wait_ms / 1000.0)
                self._idle_until = now + min(wait.wait_ms / 1000.0, self.poll_interval)
            else:
                self._idle_until = now + self.poll_interval
            return None
        self._idle_until = 0.0
        request, popped = entry
        self._popped[popped.member] = request
        if popped.inflight > 1:
            self.stats.inc_value("newscrawl/politeness/lease_conflict")
            logger.error("Host %s has %d requests in flight (a lease was broken)", popped.host,
                         popped.inflight)
        self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def _pop_limit(self) -> int:
        """How many requests one round trip may take: the downloader's free slots, at most
        ``pop_batch`` (taken requests hold their hosts' leases until sent and released)."""
        if self.pop_batch <= 1:
            return 1
        downloader: Any = getattr(self._engine(), "downloader", None)
        try:
            free = downloader.total_concurrency - len(downloader.active)
        except (AttributeError, TypeError):
            return 1
        return max(1, min(self.pop_batch, free))

    def has_pending_requests(self):
        if self._unsent > 0 or self.queue.taken or self._own:
            return True
        try:
            return len(self.queue) > 0
        except RedisError as exc:
            self._redis_error("counting the frontier", exc)
            return True  # unknown: stay open; the idle check closes the worker when Redis is back

    def __len__(self):
        try:
            return len(self.queue) + len(self._own)
        except RedisError as exc:
            self._redis_error("counting the frontier", exc)
            return len(self.queue.taken)

    def _redis_error(self, doing: str, exc: Exception) -> None:
        """Count a Redis error; log the first few of them (not one per engine call)."""
        self.stats.inc_value("newscrawl/redis/errors")
        if self._errors_logged < 5:
            self._errors_logged += 1
            logger.warning("Redis error while %s: %s (queued calls are kept and sent again)",
                           doing, exc)

    # --- frontier loop --------------------------------------------------------------------------

    def _engine(self) -> Any:
        """The crawler's engine, or ``None`` before the crawl starts."""
        try:
            return self.crawler.engine
        except (AttributeError, RuntimeError):  # Scrapy raises RuntimeError until it is set
            return None

    def _engine_slot(self) -> Any:
        engine = self._engine()
        return getattr(engine, "_slot", None) or getattr(engine, "slot", None)

    def _tick(self) -> None:
        try:
            self._ack_finished()
            self.frontier.flush()
            if time.monotonic() >= self._next_heartbeat:
                self._heartbeat()  # always a round trip: Redis answered
                if self._errors_logged:
                    logger.info("Redis answers again")
                    self._errors_logged = 0
        except RedisError as exc:
            self._redis_error("running the frontier loop", exc)
        except Exception:  # a looping call stops at its first exception: log and keep going
            logger.exception("Error in the frontier loop")
        self._idle_until = 0.0  # other workers may have queued or released hosts meanwhile
        self._wake()

    def check_run_marker(self) -> bool:
        """Did Redis lose the shared frontier (restarted empty, flushed)? Its run marker is
        missing or another one: warn, count (``newscrawl/redis/frontier_lost``), join the new
        frontier and send :data:`FRONTIER_LOST` so the crawl state's pending pages are queued
        again (:class:`extensions.recovery.FrontierRecoveryExtension`). True when lost.

        Raises:
            redis.exceptions.RedisError: Redis does not answer.
        """
        held, current = self.frontier.run_marker, self.frontier.read_run_marker()
        if held is None or current == held:
            return False
        self.frontier.claim_run_marker()
        self.frontier.join(new_round=False)
        self.df.cache.clear()
        self.stats.inc_value("newscrawl/redis/frontier_lost")
        logger.warning("Redis lost the shared frontier %s (run marker %s %s): its queued "
                       "requests are gone", self.frontier.namespace, held,
                       "missing" if current is None else f"replaced by {current}")
        rebuilt = self.crawler.signals.send_catch_log(
            signal=FRONTIER_LOST, marker=self.frontier.run_marker,
            inflight=[r.url for r in self._popped.values()])
        if not rebuilt:  # nobody keeps the crawl state: say what was lost
            self.stats.inc_value("newscrawl/redis/frontier_not_rebuilt")
            logger.error("No crawl state to rebuild the shared frontier %s from (store or "
                         "NEWSCRAWL_REVISIT_ENABLED off): the requests it held are lost for this "
                         "run; run the crawl again", self.frontier.namespace)
        return True

    def _heartbeat(self) -> None:
        self.check_run_marker()
        requeued, freed, expired, dead = self.frontier.heartbeat()
        self._next_heartbeat = time.monotonic() + self.worker_timeout / 3.0
        for name, value in (("requeued", requeued), ("freed_leases", freed),
                            ("expired_leases", expired)):
            if value:
                self.stats.inc_value(f"newscrawl/redis/{name}", value)
        if dead or expired:
            logger.warning("Recovered %d request(s) and %d lease(s) of %d dead worker(s); freed "
                           "%d expired lease(s)", requeued, freed, dead, expired)

    def _ack_finished(self, *, at_close: bool = False) -> None:
        """Acknowledge popped requests the engine has finished with."""
        inprogress = getattr(self._engine_slot(), "inprogress", None)
        if at_close:
            done = list(self._popped)
        elif inprogress is None:
            return
        else:
            done = [member for member, request in self._popped.items()
                    if request not in inprogress]
        now = time.monotonic()
        for member in done:
            request = self._popped.pop(member)
            lease = request.meta.pop(meta.LEASE, None)
            if lease:  # never released by the politeness middleware: release now
                self.stats.inc_value("newscrawl/politeness/released_late")
                self.frontier.release_later(lease[0], lease[1],
                                            pause=next_delay(0.0, min_delay=self.min_delay),
                                            response_time=0.0)
            self._finished.append((member, now))
        # With a store, a finished request is acknowledged only once the store holds its item
        # and its crawl-state record (the run's Durable extension): a worker killed with either
        # still in a write buffer leaves those requests pending, and they are fetched again.
        durable = float("inf") if self.durable is None else self.durable.durable_time()
        ready: list[bytes] = []
        while self._finished and self._finished[0][1] < durable:
            ready.append(self._finished.popleft()[0])
        if not ready:
            return
        # Queued after this worker's pushes, so a page's links reach Redis before its ack.
        self.frontier.ack_later(ready, callback=lambda n: self.stats.inc_value(
            "newscrawl/redis/acked", n))

    def _wake(self) -> None:
        """Make the engine ask for requests now (a host may have become ready)."""
        slot = self._engine_slot()
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None and getattr(slot, "closing", None) is None:
            nextcall.schedule()

    def _wake_in(self, seconds: float) -> None:
        seconds = max(0.0, seconds) + 0.001
        at = time.monotonic() + seconds
        if self._wake_call is not None and self._wake_at <= at:
            return
        if self._wake_call is not None:
            self._wake_call.cancel()
        self._wake_at = at
        self._wake_call = call_later(seconds, self._woken)

    def _woken(self) -> None:
        self._wake_call = None
        self._idle_until = 0.0
        self._wake()

    def _on_spider_idle(self, spider=None):
        """Keep an idle worker open while the shared crawl is alive, close it after
        ``idle_close`` seconds of global quiet."""
        try:
            self._ack_finished()
            lost = self.check_run_marker()
            queued, leased, pending = self.frontier.activity()
        except RedisError as exc:
            logger.warning("Redis error while idle: %s", exc)
            raise DontCloseSpider from exc
        if lost or queued or leased or pending or self._popped:
            self._quiet_since = None
            raise DontCloseSpider
        now = time.monotonic()
        if self._quiet_since is None:
            self._quiet_since = now
        if now - self._quiet_since < self.idle_close:
            raise DontCloseSpider
        logger.info("Shared frontier %s empty and no worker busy for %.1f s: closing",
                    self.frontier.namespace, now - self._quiet_since)


def _redis_name(server) -> str:
    kwargs = getattr(getattr(server, "connection_pool", None), "connection_kwargs", {})
    return f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
