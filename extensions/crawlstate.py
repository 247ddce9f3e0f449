"""Extension owning the run's state: clock, budget, known pages; loaded, flushed, finished.

It builds the run's :class:`newscrawl.crawlstate.RunState` from the settings and the spider
arguments ``now``, ``budget``, ``rate`` (``NEWSCRAWL_REVISIT_NOW``, ``_BUDGET``, ``_WATCH_RATE``):
its :class:`~newscrawl.crawlstate.RunClock` is the one clock of the run and its budget the one
request counter, so the extension is on whenever the project lists it. The spider, the
middlewares and the pipelines take :attr:`CrawlStateExtension.state` in ``from_crawler``.

With ``NEWSCRAWL_REVISIT_ENABLED`` and a store (:class:`extensions.store.StoreExtension`) it
keeps the crawl state of incremental re-crawls, every database call on the store's writer:

* ``spider_opened`` (before the spider's ``start()``): the run's clock — and in the ``shadow``
  update mode (seed 002 §2, 备份式更新: every write staged, merged at the end) its id — go to
  the writer; a shadow merge cut short earlier is completed; every known page's record and
  every host's learned policy is loaded (a store that does not answer: the run crawls as a
  first run and records nothing);
* during the run: the changed records and host policies are written in bulk every
  ``NEWSCRAWL_REVISIT_FLUSH_INTERVAL`` seconds or ``NEWSCRAWL_REVISIT_FLUSH_SIZE`` records,
  after the items buffered before them; links found and not fetched are in the store about
  two flush intervals after (the durable frontier: :meth:`newscrawl.crawlstate.RunState.drain`,
  drained first by the next run, :func:`spiders.requests.due_channel_requests`);
* the first ``spider_idle`` (discovery done): the due re-checks of known articles are
  scheduled, within what is left of the budget;
* the end (:meth:`CrawlStateExtension.finish`, a close step of the store extension, after the
  last page and before the summary): the last records, then the shadow merge (one transaction
  where the server has them; the final NewsPageRank weights follow it), then PageRank over the
  stored link graph (seed 002 §1.2) when the run stored a channel page or a page has no rank,
  then eviction of the lowest-ranked pages beyond ``NEWSCRAWL_MAX_PAGES`` (seed 000).

Stats: ``newscrawl/crawlstate/<loaded|hosts_loaded|written|staged|versions|evicted|errors|
spilled|not_written|unrecorded>`` (the last three: not written at the end, see
:class:`newscrawl.store.writer.BufferedWriter`; the store did not answer at open),
``newscrawl/crawlstate/merged_<items|pages|hosts|versions>``, ``newscrawl/pagerank/<pages|
updated>``, ``newscrawl/revisit/due_articles``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import deferred_from_coro

from extensions.store import StoreExtension, wait_for
from newscrawl import defaults
from newscrawl.algorithms.pagerank import pagerank
from newscrawl.algorithms.revisitplan import RevisitConfig
from newscrawl.components import settings_kwargs, watch_bounds
from newscrawl.crawlstate import RunState, parse_budget, parse_now, parse_rate
from newscrawl.store import NewsStore, StoreError
from spiders.requests import due_article_requests

logger = logging.getLogger(__name__)


class CrawlStateExtension:
    """The run's :class:`~newscrawl.crawlstate.RunState` and its trip to the store (see the
    module docstring).

    Args:
        crawler: the crawler (its engine schedules the re-checks; its store extension is found
            at ``spider_opened``).
        state: the run's state.
        revisit: keep the crawl state in the store (``NEWSCRAWL_REVISIT_ENABLED``).
        flush_size: records that make a write (records); flush_interval: seconds between writes.
        pagerank: recompute PageRank at the end; damping: its damping factor d, in (0, 1).
        max_pages: bound of the page store (0: unbounded); evict_misses: failed visits in a row
            that make a page evictable first.

    Raises:
        ValueError: ``damping`` outside (0, 1).
    """

    def __init__(self, crawler: Any, state: RunState, *,
                 revisit: bool = defaults.NEWSCRAWL_REVISIT_ENABLED,
                 flush_size: int = defaults.NEWSCRAWL_REVISIT_FLUSH_SIZE,
                 flush_interval: float = defaults.NEWSCRAWL_REVISIT_FLUSH_INTERVAL,
                 pagerank: bool = defaults.NEWSCRAWL_PAGERANK_ENABLED,
                 damping: float = defaults.NEWSCRAWL_PAGERANK_DAMPING,
                 max_pages: int = defaults.NEWSCRAWL_MAX_PAGES,
                 evict_misses: int = defaults.NEWSCRAWL_EVICT_MISSES) -> None:
        if not 0.0 < damping < 1.0:
            raise ValueError(f"NEWSCRAWL_PAGERANK_DAMPING must lie in (0, 1), got {damping}")
        self.crawler = crawler
        self.stats = crawler.stats
        self.state = state
        self.revisit = revisit
        self.flush_size = max(1, flush_size)
        self.flush_interval = max(0.1, flush_interval)
        self.pagerank = pagerank
        self.damping = damping
        self.max_pages = max(0, max_pages)
        self.evict_misses = evict_misses
        self.store: StoreExtension | None = None
        #: True once the crawl state was loaded from the store: changes are written back.
        self.recording = False
        self._loop: Any = None
        self._last_flush = time.monotonic()
        self._released = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlStateExtension:
        s = crawler.settings
        spider = getattr(crawler, "spider", None)
        now = getattr(spider, "now", None) or s.get("NEWSCRAWL_REVISIT_NOW")
        budget = getattr(spider, "budget", None)
        if budget in (None, ""):
            budget = s.get("NEWSCRAWL_BUDGET")
        rate = getattr(spider, "rate", None) or s.get("NEWSCRAWL_WATCH_RATE")  # requests/hour
        cfg = RevisitConfig(**settings_kwargs(
            s, min_interval="NEWSCRAWL_REVISIT_MIN_INTERVAL",
            max_interval="NEWSCRAWL_REVISIT_MAX_INTERVAL",
            miss_interval="NEWSCRAWL_REVISIT_MISS_INTERVAL", history="NEWSCRAWL_REVISIT_HISTORY",
            channel_prior="NEWSCRAWL_REVISIT_CHANNEL_PRIOR",
            channel_rate="NEWSCRAWL_REVISIT_CHANNEL_RATE"), **watch_bounds(s, spider))
        state = RunState(cfg, now=parse_now(now), budget=parse_budget(budget),
                         strikes=s.getint("NEWSCRAWL_HEADPROBE_STRIKES"),
                         mode=str(s.get("NEWSCRAWL_UPDATE_MODE")).lower(), rate=parse_rate(rate))
        ext = cls(crawler, state, **settings_kwargs(
            s, max_pages="NEWSCRAWL_MAX_PAGES", evict_misses="NEWSCRAWL_EVICT_MISSES",
            revisit="NEWSCRAWL_REVISIT_ENABLED", flush_size="NEWSCRAWL_REVISIT_FLUSH_SIZE",
            flush_interval="NEWSCRAWL_REVISIT_FLUSH_INTERVAL",
            pagerank="NEWSCRAWL_PAGERANK_ENABLED", damping="NEWSCRAWL_PAGERANK_DAMPING"))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    # -- open -----------------------------------------------------------------------------------

    async def spider_opened(self, spider: Any) -> None:
        """Bind the run to the store's writer and load the crawl state (module docstring)."""
        state = self.state
        # Extensions cannot reach each other while Scrapy builds them: found here, once.
        self.store = self.crawler.get_extension(StoreExtension)
        if self.store is not None:
            shadow = self.revisit and state.mode == "shadow"
            self.store.writer.bind_run(clock=state.clock.utcnow,
                                       stage_run=state.run_id if shadow else None)
            self.store.at_close(self.finish)
        if self.revisit and self.store is not None:
            await self._load(self.store, spider)
        elif self.revisit:
            logger.warning("No store (NEWSCRAWL_MONGO_ENABLED is off): this run crawls as a "
                           "first run and records no crawl state")
        state.loaded = True
        if self.revisit:
            self.stats.set_value("newscrawl/crawlstate/loaded", len(state.records))
            self.stats.set_value("newscrawl/crawlstate/hosts_loaded", len(state.hosts))
            logger.info("Crawl state: %d known page(s), %d host(s); run %s (%s%s)",
                        len(state.records), len(state.hosts), state.run_id, state.mode,
                        f", budget {state.budget}" if state.budget else "")

    async def _load(self, store: StoreExtension, spider: Any) -> None:
        try:
            await store.open(spider.name)
            if not store.connected:
                raise ConnectionError(f"the store at {store.uri} does not answer")
            pages, hosts = await wait_for(store.writer.submit(self._load_blocking,
                                                              store.writer.store))
        except (StoreError, ConnectionError) as exc:  # crawl on as a first run
            logger.error("Crawl state unavailable (%s): this run crawls as a first run and "
                         "records nothing", exc)
            self.stats.inc_value("newscrawl/crawlstate/errors")
            self.stats.set_value("newscrawl/crawlstate/unrecorded", 1)
            return
        self.state.load(pages, hosts)
        self.recording = True
        store.writer.track_state()
        self._loop = create_looping_call(self._tick)
        self._loop.start(1.0, now=False)

    def _load_blocking(self, store: NewsStore) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Indexes, unfinished merges, then every record and host policy (writer thread)."""
        store.ensure_state_indexes()
        for run in store.committed_runs():
            logger.warning("Completing the merge of shadow run %s, cut short earlier", run)
            store.merge_staged(run, now=self.state.clock.utcnow())
        return store.load_state()

    # -- writes ---------------------------------------------------------------------------------

    def _tick(self) -> None:
        """Every second: write when enough settled records wait or the interval is over."""
        state = self.state
        settled = len(state.dirty - (state.scheduled - state.observed))
        if not settled and self.store is not None:
            self.store.writer.state_settled(time.monotonic())
        if not (state.dirty or state.hosts_dirty):
            return
        if settled >= self.flush_size or time.monotonic() - self._last_flush >= self.flush_interval:
            deferred_from_coro(self._flush(final=False)).addErrback(
                lambda failure: logger.error("Crawl state write failed: %s", failure.value))

    async def _flush(self, *, final: bool) -> None:
        """Hand the changed records to the writer; put them back when the store refused them."""
        state = self.state
        new, old = state.drain(final=final, pending_after=self.flush_interval)
        hosts = state.drain_hosts()
        self._last_flush = time.monotonic()
        cut = state.durable_cut(self._last_flush)
        if not (new or old or hosts) or self.store is None:
            return
        if any(d.get("last_visit") for d in (*new, *old)):  # a visit after its page's item
            self.store.writer.flush()
        written = await wait_for(self.store.writer.write_state(new, old, hosts, cut=cut,
                                                               final=final))
        if written is None:  # not written: keep the records dirty for the next flush
            state.dirty.update(d["_id"] for d in (*new, *old))
            state.hosts_dirty.update(h["_id"] for h in hosts)
        else:
            state.mark_stored(d["_id"] for d in new)

    # -- idle: re-checks of known articles ------------------------------------------------------

    def spider_idle(self, spider: Any) -> None:
        """Once discovery is done, schedule the due re-checks of known articles."""
        if self._released or not self.recording:
            return
        self._released = True
        state = self.state
        limit = None if state.budget is None else max(state.budget - state.spent, 0)
        requests = due_article_requests(state, spider, self.stats, limit)
        if not requests:
            return
        logger.info("Discovery done; re-checking %d due article(s)", len(requests))
        for request in requests:
            self.crawler.engine.crawl(request)
        raise DontCloseSpider

    # -- close ----------------------------------------------------------------------------------

    def spider_closed(self, spider: Any, reason: str = "") -> None:
        """No write is started after this (the store extension then runs :meth:`finish`)."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    async def finish(self) -> None:
        """The end of the run (a step of the store extension's close, after the last page):
        last records, shadow merge, PageRank, eviction. Failures are logged and counted."""
        self.spider_closed(None)
        if self.store is None:
            return
        writer = self.store.writer
        try:
            if self.recording:
                await self._flush(final=True)
            if writer.stage_run:  # staged pages are merged even when the records were not
                await self._merge()
            if not self.recording or writer.gave_up:  # no store: no PageRank, no eviction
                return
            if self.pagerank and (self.state.links_changed or any(
                    r.get("pagerank") is None for r in self.state.records.values())):
                await wait_for(writer.submit(self._pagerank, writer.store))
            if self.max_pages:
                await wait_for(writer.submit(self._evict, writer.store))
        except Exception as exc:  # noqa: BLE001 - the crawl is over; report, don't crash
            logger.error("Crawl state: end-of-run work failed: %s", exc, exc_info=True)
            self.stats.inc_value("newscrawl/crawlstate/errors")

    async def _merge(self) -> None:
        assert self.store is not None
        t0 = time.monotonic()
        counts = await wait_for(self.store.writer.merge())
        for key in ("items", "pages", "hosts", "versions"):
            self.stats.set_value(f"newscrawl/crawlstate/merged_{key}", counts[key])
        logger.info("Shadow run %s merged into the live collections (%s) in %.1f s: %s",
                    self.state.run_id, "one transaction" if counts["atomic"] else "no transaction",
                    time.monotonic() - t0, {k: v for k, v in counts.items() if k != "atomic"})

    def _pagerank(self, store: NewsStore) -> None:
        """PageRank over the stored link graph; the ranks that changed are written (writer
        thread, after the crawl: nothing else touches the records now)."""
        ranks = pagerank(store.link_edges(), nodes=self.state.records.keys(), damping=self.damping)
        updated = store.update_pagerank(self.state.apply_pagerank(ranks))
        self.stats.set_value("newscrawl/pagerank/pages", len(ranks))
        self.stats.set_value("newscrawl/pagerank/updated", updated)

    def _evict(self, store: NewsStore) -> None:
        """Evict the lowest-ranked pages beyond ``max_pages`` (writer thread)."""
        victims = self.state.eviction_victims(self.max_pages, self.evict_misses)
        if not victims:
            return
        deleted = store.evict(victims, at=self.state.clock.utcnow())
        self.stats.set_value("newscrawl/crawlstate/evicted", len(victims))
        logger.info("Evicted %d page(s) (%d bodies) to keep NEWSCRAWL_MAX_PAGES=%d",
                    len(victims), deleted, self.max_pages)
