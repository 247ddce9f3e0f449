"""The distributed scheduler (:class:`newscrawl.distributed.scheduler.DistributedScheduler`) in
the test process against the real Redis server: it finds the crawl's frontier and durability
barrier as extensions, and acknowledges a finished request only once the barrier passes it."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
import scrapy
from scrapy import signals
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import Popped
from newscrawl.distributed.politeness import PolitenessMiddleware
from newscrawl.distributed.scheduler import FRONTIER_LOST, DistributedScheduler
from newscrawl.durability import Durable
from tests.redis_helpers import (  # noqa: F401
    delete_namespace,
    distributed_settings,
    namespace,
    redis_server,
)


class _Spider(scrapy.Spider):
    name = "nctest"

    def parse(self, response):
        pass


class ControlledDurable(Durable):
    """A durability barrier whose watermark the test sets (``until``, monotonic seconds); when
    ``durable_at_close``, its own spider_closed handler makes everything durable (a store writing
    its last buffer as the spider closes)."""

    def __init__(self) -> None:
        self.until = 0.0
        self.durable_at_close = True

    @classmethod
    def from_crawler(cls, crawler):
        barrier = cls()
        crawler.signals.connect(barrier.spider_closed, signal=signals.spider_closed)
        return barrier

    def spider_closed(self, spider=None, reason=None):
        if self.durable_at_close:
            self.until = float("inf")

    def durable_time(self) -> float:
        return self.until


def _crawler(namespace: str, *, barrier: bool = True, **settings):
    # CoreStats off: the tests send spider_closed without spider_opened.
    extensions = {"scrapy.extensions.corestats.CoreStats": None,
                  **({ControlledDurable: 100} if barrier else {})}
    crawler = get_crawler(_Spider, distributed_settings(
        namespace, EXTENSIONS=extensions, NEWSCRAWL_REDIS_POLL_INTERVAL=60,
        NEWSCRAWL_REDIS_WORKER_TIMEOUT=0.6, **settings))
    # What the scheduler reads of the engine: requests in progress, the downloader's slots.
    crawler.engine = SimpleNamespace(
        _slot=SimpleNamespace(inprogress=set(), nextcall=None, closing=None),
        downloader=SimpleNamespace(total_concurrency=8, active=set()))
    return crawler


def _opened(crawler) -> DistributedScheduler:
    scheduler = build_from_crawler(DistributedScheduler, crawler)
    spider = _Spider.from_crawler(crawler)
    crawler.spider = spider
    scheduler.open(spider)
    return scheduler


def _fetch(scheduler, crawler, url: str):
    """Enqueue ``url``, take it, and let the engine finish it."""
    assert scheduler.enqueue_request(scrapy.Request(url))
    request = scheduler.next_request()
    assert request is not None and request.url == url
    crawler.engine._slot.inprogress.add(request)
    scheduler._ack_finished()  # in progress: nothing to acknowledge
    crawler.engine._slot.inprogress.discard(request)
    return request


def _acked(scheduler) -> int:
    scheduler.frontier.flush()
    return scheduler.stats.get_value("newscrawl/redis/acked") or 0


def test_the_scheduler_and_the_middleware_share_the_extensions_frontier(redis_server, namespace):
    crawler = _crawler(namespace, NEWSCRAWL_REDIS_POP_BATCH=1)
    scheduler = build_from_crawler(DistributedScheduler, crawler)
    middleware = build_from_crawler(PolitenessMiddleware, crawler)
    extension = crawler.get_extension(FrontierExtension)
    assert scheduler.frontier is extension.frontier is middleware.frontier
    assert scheduler.durable is crawler.get_extension(ControlledDurable)

    async def scenario():
        scheduler.open(_Spider.from_crawler(crawler))
        try:
            for url in ("http://a.example/1", "http://b.example/1"):
                assert scheduler.enqueue_request(scrapy.Request(url))
            first = scheduler.next_request()
            middleware.process_request(first)
            middleware.process_response(first, scrapy.http.HtmlResponse(first.url, body=b""))
            trips = extension.frontier.round_trips
            assert extension.frontier.queued_calls == 1  # the release waits for the next pop
            second = scheduler.next_request()
            assert second is not None and extension.frontier.round_trips == trips + 1
            assert extension.frontier.queued_calls == 0
        finally:
            middleware.close()
            scheduler.close("finished")

    asyncio.run(scenario())
    assert crawler.stats.get_value("newscrawl/politeness/released") == 1


def test_without_the_frontier_extension_the_scheduler_says_what_is_missing():
    crawler = get_crawler(_Spider, {"ADDONS": {"newscrawl.addon.DefaultsAddon": 0},
                                    "NEWSCRAWL_DISTRIBUTED": False})
    with pytest.raises(ValueError, match="FrontierExtension"):
        DistributedScheduler.from_crawler(crawler)


def test_a_finished_request_waits_for_the_durability_barrier(redis_server, namespace):
    crawler = _crawler(namespace)
    barrier = crawler.get_extension(ControlledDurable)

    async def scenario():
        scheduler = _opened(crawler)
        try:
            _fetch(scheduler, crawler, "http://a.example/1")
            assert scheduler.frontier.pending_count() == 1
            barrier.until = time.monotonic() - 5  # the store is behind
            scheduler._ack_finished()
            assert _acked(scheduler) == 0 and scheduler.frontier.pending_count() == 1
            barrier.until = time.monotonic() + 1  # it has written everything received so far
            scheduler._ack_finished()
            assert _acked(scheduler) == 1 and scheduler.frontier.pending_count() == 0
        finally:
            scheduler.close("finished")

    asyncio.run(scenario())


def test_without_a_barrier_a_finished_request_is_acknowledged_at_once(redis_server, namespace):
    crawler = _crawler(namespace, barrier=False)

    async def scenario():
        scheduler = _opened(crawler)
        assert scheduler.durable is None
        try:
            _fetch(scheduler, crawler, "http://a.example/1")
            scheduler._ack_finished()
            assert _acked(scheduler) == 1 and scheduler.frontier.pending_count() == 0
        finally:
            scheduler.close("finished")
        assert scheduler.frontier.worker_id not in scheduler.frontier.live_workers()

    asyncio.run(scenario())


def test_at_close_the_worker_stays_until_the_store_has_written(redis_server, namespace):
    crawler = _crawler(namespace)
    barrier = crawler.get_extension(ControlledDurable)

    async def scenario():
        scheduler = _opened(crawler)
        frontier = scheduler.frontier
        _fetch(scheduler, crawler, "http://a.example/1")
        scheduler.close("finished")
        # Not durable yet: not acknowledged, and the worker has not left (which would requeue).
        assert frontier.worker_id in frontier.live_workers()
        assert _acked(scheduler) == 0 and frontier.pending_count() == 1
        # The barrier's own spider_closed handler runs first (connected earlier): its last write.
        await crawler.signals.send_catch_log_async(signal=signals.spider_closed,
                                                   spider=crawler.spider, reason="finished")
        assert barrier.until == float("inf")
        assert _acked(scheduler) == 1 and frontier.pending_count() == 0
        assert frontier.worker_id not in frontier.live_workers() and len(frontier) == 0

    asyncio.run(scenario())


def test_what_never_becomes_durable_goes_back_to_the_frontier(redis_server, namespace, caplog):
    crawler = _crawler(namespace)
    barrier = crawler.get_extension(ControlledDurable)
    barrier.durable_at_close = False  # the store refuses the last write (and says so late)

    async def scenario():
        scheduler = _opened(crawler)
        frontier = scheduler.frontier
        _fetch(scheduler, crawler, "http://a.example/1")
        scheduler.close("finished")
        started = time.monotonic()
        await crawler.signals.send_catch_log_async(signal=signals.spider_closed,
                                                   spider=crawler.spider, reason="finished")
        waited = time.monotonic() - started
        assert 0.15 <= waited < 2  # at most a heartbeat period (worker timeout / 3)
        assert _acked(scheduler) == 0
        assert frontier.worker_id not in frontier.live_workers()
        assert len(frontier) == 1  # requeued: another worker fetches (and stores) it again
        again = frontier.pop()
        assert isinstance(again, Popped) and b"http://a.example/1" in again.payload

    asyncio.run(scenario())
    assert "not stored in time" in caplog.text


def test_duplicates_are_answered_by_the_cache_then_by_redis(redis_server, namespace):
    first, second = _crawler(namespace), _crawler(namespace)

    async def scenario():
        one, other = _opened(first), _opened(second)
        try:
            assert one.enqueue_request(scrapy.Request("http://a.example/1"))
            assert not one.enqueue_request(scrapy.Request("http://a.example/1#x"))  # cache
            one.frontier.flush()
            assert other.enqueue_request(scrapy.Request("http://a.example/1"))  # sent...
            other.frontier.flush()  # ...and Redis knows it: not queued twice
            assert len(one.frontier) == 1
        finally:
            one.close("finished")
            other.close("finished")

    asyncio.run(scenario())
    assert first.stats.get_value("newscrawl/dupefilter/cache_hit") == 1
    assert first.stats.get_value("scheduler/enqueued/redis") == 1
    assert second.stats.get_value("newscrawl/dupefilter/redis_seen") == 1
    assert second.stats.get_value("scheduler/enqueued/redis") is None


def test_a_frontier_redis_lost_is_noticed_once_and_announced(redis_server, namespace, caplog):
    crawler = _crawler(namespace)
    lost = []
    crawler.signals.connect(lambda marker, inflight: lost.append((marker, inflight)),
                            signal=FRONTIER_LOST, weak=False)

    async def scenario():
        scheduler = _opened(crawler)
        try:
            marker = scheduler.frontier.run_marker
            assert marker and scheduler.frontier.read_run_marker() == marker
            assert not scheduler.check_run_marker()  # the same frontier
            assert scheduler.enqueue_request(scrapy.Request("http://a.example/1"))
            scheduler.frontier.flush()
            in_flight = scheduler.next_request()
            delete_namespace(redis_server, namespace)  # Redis restarted empty
            assert scheduler.check_run_marker()
            assert not scheduler.check_run_marker()  # the new marker is the worker's now
            assert scheduler.frontier.run_marker not in (None, marker)
            # The new frontier's seen set and the worker's cache are empty: queued again.
            assert scheduler.enqueue_request(scrapy.Request("http://a.example/1"))
            return in_flight
        finally:
            scheduler.close("finished")

    with caplog.at_level("WARNING"):
        in_flight = asyncio.run(scenario())
    assert len(lost) == 1 and lost[0][1] == [in_flight.url]
    assert crawler.stats.get_value("newscrawl/redis/frontier_lost") == 1
    assert sum("Redis lost the shared frontier" in r.getMessage() for r in caplog.records) == 1


def test_a_lost_frontier_nobody_can_rebuild_is_an_error(redis_server, namespace, caplog):
    crawler = _crawler(namespace)

    async def scenario():
        scheduler = _opened(crawler)
        try:
            delete_namespace(redis_server, namespace)
            assert scheduler.check_run_marker()
        finally:
            scheduler.close("finished")

    asyncio.run(scenario())
    assert crawler.stats.get_value("newscrawl/redis/frontier_not_rebuilt") == 1
    assert any(r.levelname == "ERROR" and "requests it held are lost" in r.getMessage()
               for r in caplog.records)


def test_a_duplicate_only_redis_knows_is_announced_as_dropped(redis_server, namespace):
    """A request another worker already queued is refused by Redis only at the next round trip:
    the scheduler then sends ``request_dropped`` for it (as the engine does for a duplicate the
    cache refuses), so the crawl state forgets it requested the page and a watch worker feeds
    it again when it owns it (before, it stayed 'requested' forever)."""
    first, second = _crawler(namespace), _crawler(namespace)
    dropped: list[str] = []
    second.signals.connect(lambda request, spider=None: dropped.append(request.url),
                           signal=signals.request_dropped, weak=False)

    async def scenario():
        one, other = _opened(first), _opened(second)
        try:
            assert one.enqueue_request(scrapy.Request("http://a.example/2"))
            one.frontier.flush()
            assert other.enqueue_request(scrapy.Request("http://a.example/new"))
            assert other.enqueue_request(scrapy.Request("http://a.example/2"))
            other.frontier.flush()
        finally:
            one.close("finished")
            other.close("finished")

    asyncio.run(scenario())
    assert dropped == ["http://a.example/2"]
