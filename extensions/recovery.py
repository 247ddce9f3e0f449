"""Scrapy extension of distributed crawls: a shared frontier that Redis lost is rebuilt from the
crawl state.

Redis holds the shared frontier (:mod:`newscrawl.distributed.frontier`); a Redis restarted
without its data, or flushed, loses every queued request, and the workers would see an empty
frontier and end ``finished`` with the work lost. The frontier carries a run marker
(``keys.RUN_KEY``, set by the first worker); the store keeps the marker it last saw
(collection ``meta``). The links found and not fetched are in the store as to-visit records
(the durable frontier: :meth:`newscrawl.crawlstate.RunState.drain`). So:

* at ``spider_opened`` the worker compares the marker of Redis with the store's: another one
  means Redis lost the frontier since the store last saw it (one warning, stat
  ``newscrawl/redis/frontier_lost``); the spider's ``start()`` queues the pending records
  again, as every run does. The marker is saved in the store;
* during the run the scheduler checks the marker at every heartbeat and before it closes
  (:meth:`newscrawl.distributed.scheduler.DistributedScheduler.check_run_marker`: one warning,
  the stat) and sends ``FRONTIER_LOST``; this extension then queues again every pending page of
  the run's entries it knows (:func:`spiders.requests.pending_requests`), at once, and those
  other workers recorded in the store since this one started, once read (writer thread). The
  duplicate filter of the new frontier keeps workers doing the same from queueing a page twice.

Requests queued in Redis for known pages due again (revisits) are not rebuilt: they stay due
in the crawl state and are requested by the next run. Enabled in distributed crawls with a
store and the crawl state (``NotConfigured`` otherwise). Stats: ``newscrawl/redis/
frontier_lost``, ``newscrawl/redis/frontier_not_rebuilt`` (no crawl state to rebuild from: an
error line says so), ``newscrawl/revisit/requeued`` (pages queued again).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension, wait_for
from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import RedisFrontier
from newscrawl.distributed.mode import is_distributed
from newscrawl.distributed.scheduler import FRONTIER_LOST
from spiders.requests import pending_requests

logger = logging.getLogger(__name__)


class FrontierRecoveryExtension:
    """Rebuild a lost shared frontier from the crawl state (see the module docstring).

    Args:
        crawler: the crawler (engine, stats, spider; the frontier, crawl-state and store
            extensions are found at ``spider_opened``).
    """

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        # Extensions cannot reach each other while Scrapy builds them: found at spider_opened.
        self.frontier: RedisFrontier | None = None
        self.run: CrawlStateExtension | None = None
        self.store: StoreExtension | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> FrontierRecoveryExtension:
        s = crawler.settings
        if not (is_distributed(s) and s.getbool("NEWSCRAWL_REVISIT_ENABLED")
                and s.getbool("NEWSCRAWL_MONGO_ENABLED")):
            raise NotConfigured("needs a distributed crawl with a store and the crawl state")
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.frontier_lost, signal=FRONTIER_LOST)
        return ext

    async def spider_opened(self, spider: Any) -> None:
        """Compare the frontier's run marker with the store's; save it (module docstring)."""
        frontier = self.crawler.get_extension(FrontierExtension)
        self.run = self.crawler.get_extension(CrawlStateExtension)
        self.store = self.crawler.get_extension(StoreExtension)
        if frontier is None or self.run is None or self.store is None:
            return
        self.frontier = frontier.frontier
        marker = self.frontier.run_marker
        if marker is None:
            return
        try:
            await self.store.open(spider.name)
            writer = self.store.writer
            if writer.store is None:
                return
            namespace = self.frontier.namespace
            saved = await wait_for(writer.submit(writer.store.frontier_marker, namespace))
            if saved is not None and saved != marker:
                self.crawler.stats.inc_value("newscrawl/redis/frontier_lost")
                logger.warning("Redis lost the shared frontier %s since the store last saw it "
                               "(run marker %s, now %s): the crawl state's pending pages are "
                               "queued again", namespace, saved, marker)
            await self._save(marker)
        except Exception as exc:  # noqa: BLE001 - the crawl goes on; the next check retries
            logger.error("Could not compare the frontier's run marker with the store's: %s", exc)

    async def _save(self, marker: str) -> None:
        if self.store is None or self.frontier is None or self.run is None:
            return
        writer = self.store.writer
        if writer.store is not None:
            await wait_for(writer.submit(writer.store.save_frontier_marker, self.frontier.namespace,
                                         marker, at=self.run.state.clock.utcnow()))

    def frontier_lost(self, marker: str, inflight: list[str]) -> None:
        """Queue the pending pages again: those the run knows now, then the store's."""
        if self.run is None or not self.run.recording:
            self.crawler.stats.inc_value("newscrawl/redis/frontier_not_rebuilt")
            logger.error("The crawl state is not recorded (the store did not answer): the "
                         "shared frontier Redis lost cannot be rebuilt and the requests it held "
                         "are lost for this run; run the crawl again")
            return
        spider = self.crawler.spider
        skip = {spider.page_fp(url) for url in inflight}
        queued = self._queue(spider, skip)
        logger.warning("Queued the crawl state's %d pending page(s) again", queued)
        deferred_from_coro(self._from_store(marker, spider, skip)).addErrback(
            lambda failure: logger.error("Pending pages not read from the store: %s",
                                         failure.value))

    def _queue(self, spider: Any, skip: set[str]) -> int:
        assert self.run is not None
        state = self.run.state
        state.scheduled -= {r["fp"] for r in state.pending_records()} - skip
        requests = pending_requests(state, spider, skip=skip, stats=self.crawler.stats)
        for request in requests:
            self.crawler.engine.crawl(request)
        return len(requests)

    async def _from_store(self, marker: str, spider: Any, skip: set[str]) -> None:
        store = self.store.writer.store if self.store is not None else None
        if store is None or self.store is None or self.run is None:
            return
        docs = await wait_for(self.store.writer.submit(store.pending_pages))
        known = set(self.run.state.records)
        added = self.run.state.add_pending(docs)
        queued = 0
        if added:
            queued = self._queue(spider, skip | known)
        logger.info("Shared frontier rebuilt from the crawl state: %d more pending page(s) "
                    "the store holds, %d queued", added, queued)
        await self._save(marker)
