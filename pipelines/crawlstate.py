"""Item pipeline of incremental re-crawls: the crawl state's trip to the store and back.

At spider open it creates the run's :class:`newscrawl.crawlstate.RunState`
(``crawler.newscrawl_revisit``, shared with :mod:`middlewares.revisit`,
:mod:`middlewares.headprobe`, :mod:`middlewares.budget` and the spider's ``start()``) and fills it
from the store in a worker thread: every known page's record and every host's learned policy.
During the run it writes the records the run changed (visits, discoveries, weights) in bulk, in a
worker thread, every ``NEWSCRAWL_REVISIT_FLUSH_INTERVAL`` seconds or ``NEWSCRAWL_REVISIT_FLUSH_SIZE``
records. For an article whose text changed it keeps the stored version first (collection
``article_versions``, with a diff summary: headline changed, body changed by N %), before the
storage pipeline overwrites it.

When discovery is done (the spider is idle for the first time) it schedules the due re-checks of
known articles, within what is left of the budget. When the spider has closed (every pipeline
flushed) it writes the last records and the host policies, merges the run's staged writes in the
``shadow`` update mode (one transaction), recomputes PageRank over the stored link graph
(seed 002 §1.2, d = ``NEWSCRAWL_PAGERANK_DAMPING``) when the run stored a channel page (the
graph's only source of links) or a page has no rank yet, writes the ranks that changed, and, when
``NEWSCRAWL_MAX_PAGES`` bounds the store, evicts the pages that rank lowest (seed 000).

Update modes (``NEWSCRAWL_UPDATE_MODE``; seed 002 §2):

* ``inplace`` (即时更新) — page documents, links, crawl state and versions go straight into the
  live collections while the run goes on: analysts see new articles within seconds;
* ``shadow`` (备份式更新) — everything the run writes goes to the ``staging`` collection (the
  storage pipeline stages its batches too) and is merged into the live collections when the run
  ends, in one transaction where the server has transactions (SecantusDB, a MongoDB replica
  set): readers see the previous run's picture or the new one, never half a run. A run that
  crashed before its merge leaves its staged writes unmerged (its pages stay due); a merge that
  was cut short on a server without transactions is completed at the next start.

Settings: ``NEWSCRAWL_REVISIT_*``, ``NEWSCRAWL_BUDGET``, ``NEWSCRAWL_UPDATE_MODE``,
``NEWSCRAWL_PAGERANK_*``, ``NEWSCRAWL_MAX_PAGES``, ``NEWSCRAWL_EVICT_MISSES``,
``NEWSCRAWL_VERSIONS_ENABLED`` and the ``NEWSCRAWL_MONGO_*`` connection settings (the same
server as :class:`pipelines.mongo.MongoPipeline`; its own client and its own lease on the
embedded server). Spider arguments ``-a now=`` and ``-a budget=`` override
``NEWSCRAWL_REVISIT_NOW`` and ``NEWSCRAWL_BUDGET``.

Stats: ``newscrawl/crawlstate/<loaded|hosts_loaded|written|staged|versions|evicted|errors>``,
``newscrawl/crawlstate/merged_<items|pages|hosts|versions>``, ``newscrawl/pagerank/<pages|
updated>``.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, task, threads

from middlewares.budget import budget_of
from middlewares.revisit import due_article_requests
from newscrawl import defaults
from newscrawl.algorithms.pagerank import PageInfo, eviction_order, pagerank
from newscrawl.algorithms.revisitplan import RevisitConfig
from newscrawl.crawlstate import RunState, parse_now
from newscrawl.embedded import resolve_mongo_uri
from newscrawl.store import NewsStore

logger = logging.getLogger(__name__)

UPDATE_MODES = ("inplace", "shadow")
UTC = dt.timezone.utc


class CrawlStatePipeline:
    """Load, update and store the crawl state of a run (see the module docstring)."""

    def __init__(self, stats: Any, state: RunState, *, uri: str = "",
                 database: str = defaults.NEWSCRAWL_MONGO_DATABASE,
                 data_dir: str = defaults.NEWSCRAWL_DATA_DIR,
                 timeout: float = defaults.NEWSCRAWL_MONGO_TIMEOUT,
                 embedded_port: int = defaults.NEWSCRAWL_EMBEDDED_PORT,
                 start_timeout: float = defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT,
                 flush_size: int = defaults.NEWSCRAWL_REVISIT_FLUSH_SIZE,
                 flush_interval: float = defaults.NEWSCRAWL_REVISIT_FLUSH_INTERVAL,
                 pagerank: bool = defaults.NEWSCRAWL_PAGERANK_ENABLED,
                 damping: float = defaults.NEWSCRAWL_PAGERANK_DAMPING,
                 max_pages: int = defaults.NEWSCRAWL_MAX_PAGES,
                 evict_misses: int = defaults.NEWSCRAWL_EVICT_MISSES,
                 versions: bool = defaults.NEWSCRAWL_VERSIONS_ENABLED,
                 crawler: Any = None) -> None:
        if state.mode not in UPDATE_MODES:
            raise ValueError(f"NEWSCRAWL_UPDATE_MODE must be one of {UPDATE_MODES}, got {state.mode!r}")
        if not 0.0 < damping < 1.0:
            raise ValueError(f"NEWSCRAWL_PAGERANK_DAMPING must lie in (0, 1), got {damping}")
        self.stats = stats
        self.state = state
        self.setting_uri = uri
        self.database = database
        self.data_dir = data_dir
        self.timeout = timeout
        self.embedded_port = embedded_port
        self.start_timeout = start_timeout
        self.flush_size = max(1, flush_size)
        self.flush_interval = max(0.1, flush_interval)
        self.pagerank = pagerank
        self.damping = damping
        self.max_pages = max(0, max_pages)
        self.evict_misses = evict_misses
        self.versions = versions
        self.crawler = crawler
        self.store: NewsStore | None = None
        self.embedded = None
        self.uri = ""
        self._writer: defer.Deferred = defer.succeed(None)
        self._loop: task.LoopingCall | None = None
        self._released = False
        self._closed = False
        self._last_flush = time.monotonic()
        self._writes_pending = 0
        self._write_failed = False
        #: ``time.monotonic()`` before which every observation of this worker's responses is
        #: written (see :meth:`durable_time`).
        self.durable_before = 0.0
        #: PageRank is recomputed when the stored link graph may have changed: a channel page
        #: was stored in this run (links come only from channel pages), or never computed yet.
        self.graph_changed = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlStatePipeline:
        s = crawler.settings
        if not s.getbool("NEWSCRAWL_REVISIT_ENABLED", defaults.NEWSCRAWL_REVISIT_ENABLED):
            raise NotConfigured("NEWSCRAWL_REVISIT_ENABLED is off")
        cfg = RevisitConfig(
            min_interval=s.getfloat("NEWSCRAWL_REVISIT_MIN_INTERVAL", defaults.NEWSCRAWL_REVISIT_MIN_INTERVAL),
            max_interval=s.getfloat("NEWSCRAWL_REVISIT_MAX_INTERVAL", defaults.NEWSCRAWL_REVISIT_MAX_INTERVAL),
            miss_interval=s.getfloat("NEWSCRAWL_REVISIT_MISS_INTERVAL", defaults.NEWSCRAWL_REVISIT_MISS_INTERVAL),
            history=s.getint("NEWSCRAWL_REVISIT_HISTORY", defaults.NEWSCRAWL_REVISIT_HISTORY),
            channel_prior=s.getfloat("NEWSCRAWL_REVISIT_CHANNEL_PRIOR", defaults.NEWSCRAWL_REVISIT_CHANNEL_PRIOR),
        )
        spider = getattr(crawler, "spider", None)
        now = getattr(spider, "now", None) or s.get("NEWSCRAWL_REVISIT_NOW", defaults.NEWSCRAWL_REVISIT_NOW)
        budget = getattr(spider, "budget", None)
        if budget in (None, ""):
            budget = s.get("NEWSCRAWL_BUDGET", defaults.NEWSCRAWL_BUDGET)
        state = RunState(
            cfg,
            now=parse_now(now),
            budget=budget_of(budget),
            strikes=s.getint("NEWSCRAWL_HEADPROBE_STRIKES", defaults.NEWSCRAWL_HEADPROBE_STRIKES),
            mode=str(s.get("NEWSCRAWL_UPDATE_MODE", defaults.NEWSCRAWL_UPDATE_MODE)).lower(),
        )
        pipeline = cls(
            crawler.stats, state,
            uri=s.get("NEWSCRAWL_MONGO_URI", defaults.NEWSCRAWL_MONGO_URI) or "",
            database=s.get("NEWSCRAWL_MONGO_DATABASE", defaults.NEWSCRAWL_MONGO_DATABASE),
            data_dir=s.get("NEWSCRAWL_DATA_DIR", defaults.NEWSCRAWL_DATA_DIR),
            timeout=s.getfloat("NEWSCRAWL_MONGO_TIMEOUT", defaults.NEWSCRAWL_MONGO_TIMEOUT),
            embedded_port=s.getint("NEWSCRAWL_EMBEDDED_PORT", defaults.NEWSCRAWL_EMBEDDED_PORT),
            start_timeout=s.getfloat("NEWSCRAWL_EMBEDDED_START_TIMEOUT", defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT),
            flush_size=s.getint("NEWSCRAWL_REVISIT_FLUSH_SIZE", defaults.NEWSCRAWL_REVISIT_FLUSH_SIZE),
            flush_interval=s.getfloat("NEWSCRAWL_REVISIT_FLUSH_INTERVAL", defaults.NEWSCRAWL_REVISIT_FLUSH_INTERVAL),
            pagerank=s.getbool("NEWSCRAWL_PAGERANK_ENABLED", defaults.NEWSCRAWL_PAGERANK_ENABLED),
            damping=s.getfloat("NEWSCRAWL_PAGERANK_DAMPING", defaults.NEWSCRAWL_PAGERANK_DAMPING),
            max_pages=s.getint("NEWSCRAWL_MAX_PAGES", defaults.NEWSCRAWL_MAX_PAGES),
            evict_misses=s.getint("NEWSCRAWL_EVICT_MISSES", defaults.NEWSCRAWL_EVICT_MISSES),
            versions=s.getbool("NEWSCRAWL_VERSIONS_ENABLED", defaults.NEWSCRAWL_VERSIONS_ENABLED),
            crawler=crawler,
        )
        crawler.newscrawl_revisit = state
        crawler.newscrawl_state_store = pipeline  # a barrier the distributed scheduler reads
        crawler.signals.connect(pipeline.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    # -- open -----------------------------------------------------------------------------------

    async def open_spider(self, spider: Any = None) -> None:
        try:
            await maybe_deferred_to_future(threads.deferToThread(self._open))
        except Exception as exc:  # noqa: BLE001 - crawl on as a first run, like the storage pipeline
            logger.error("Crawl state unavailable (%s): this run crawls as a first run and "
                         "records nothing", exc)
            self.stats.inc_value("newscrawl/crawlstate/errors")
            if self.store is not None:
                self.store.close()
            self.store = None
            self.state.loaded = True
        self.stats.set_value("newscrawl/crawlstate/loaded", len(self.state.records))
        self.stats.set_value("newscrawl/crawlstate/hosts_loaded", len(self.state.hosts))
        logger.info("Crawl state: %d known page(s), %d host(s); run %s (%s%s)",
                    len(self.state.records), len(self.state.hosts), self.state.run_id,
                    self.state.mode, f", budget {self.state.budget}" if self.state.budget else "")
        self._loop = task.LoopingCall(self._tick)
        self._loop.start(1.0, now=False)

    def _open(self) -> None:
        self.uri, self.embedded = resolve_mongo_uri(
            self.setting_uri, self.data_dir, port=self.embedded_port, start_timeout=self.start_timeout)
        self.store = NewsStore.connect(self.uri, self.database, timeout=self.timeout)
        self.store.ensure_state_indexes()
        for run in self.store.committed_runs():
            logger.warning("Completing the merge of shadow run %s, cut short earlier", run)
            self.store.merge_staged(run)
        pages, hosts = self.store.load_state()
        self.state.load(pages, hosts)

    # -- items ----------------------------------------------------------------------------------

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        fp = adapter.get("fp")
        if not fp:
            return item
        state = self.state
        if adapter.get("kind") == "node":
            self.graph_changed = True  # a channel page was stored: its links may have changed
        record_fp = state.aliases.get(fp, fp)
        weight = adapter.get("weight")
        if isinstance(weight, (int, float)):
            state.set_fields(record_fp, weight=float(weight))
        if fp in state.changed_articles:
            state.changed_articles.pop(fp)
            if self.versions and self.store is not None:
                doc = {k: adapter.get(k) for k in ("title", "text", "published", "authors")}
                await maybe_deferred_to_future(threads.deferToThread(self._archive, fp, doc))
        return item

    def _archive(self, fp: str, doc: dict[str, Any]) -> None:
        try:
            at = dt.datetime.fromtimestamp(self.state.now(), UTC)
            stage = self.state.run_id if self.state.mode == "shadow" else None
            version = self.store.archive_version(fp, doc, archived_at=at, stage_run=stage)
        except Exception as exc:  # noqa: BLE001 - a lost version must not lose the article
            logger.error("Could not keep the previous version of %s: %s", fp, exc)
            self.stats.inc_value("newscrawl/crawlstate/errors")
            return
        if version is not None:
            self.stats.inc_value("newscrawl/crawlstate/versions")
            diff = version["diff"]
            logger.info("Article %s changed: version %d kept (title changed: %s, body changed %.1f%%)",
                        version.get("url"), version["version"], diff["title_changed"],
                        diff["body_changed_pct"])

    # -- writes ---------------------------------------------------------------------------------

    def durable_time(self) -> float:
        """``time.monotonic()`` before which every page observation is stored (seconds; ``inf``
        when this run records nothing). The distributed scheduler acknowledges a finished
        request to Redis only after it, so a ``kill -9`` cannot leave a fetched page recorded
        as never visited."""
        if self.store is None or self._write_failed:
            # Nothing recorded, or the store refuses writes (records kept for a retry): then
            # acknowledgements do not wait, else a worker could never finish during an outage.
            return float("inf")
        return self.durable_before

    def _tick(self) -> None:
        """Every second: write when enough settled records wait or the interval is over."""
        state = self.state
        settled = len(state.dirty - (state.scheduled - state.observed))
        if not settled and not self._writes_pending:
            self.durable_before = max(self.durable_before, time.monotonic())
        if not (state.dirty or state.hosts_dirty):
            return
        if settled >= self.flush_size or time.monotonic() - self._last_flush >= self.flush_interval:
            self._flush(final=False)

    def _flush(self, *, final: bool = True) -> defer.Deferred:
        state = self.state
        new, old = state.drain(final=final)
        hosts = state.drain_hosts()
        self._last_flush = cut = time.monotonic()
        if not (new or old or hosts) or self.store is None:
            return self._writer
        self._writes_pending += 1

        def write(_: Any) -> defer.Deferred:
            return threads.deferToThread(self._write, new, old, hosts)

        def done(result: Any) -> None:
            self._writes_pending -= 1
            self._write_failed = result is None
            if result is None:  # not written: keep the records dirty for the next flush
                state.dirty.update(d["_id"] for d in (*new, *old))
                state.hosts_dirty.update(h["_id"] for h in hosts)
            else:
                state.mark_stored(d["_id"] for d in new)
                self.durable_before = max(self.durable_before, cut)

        self._writer = self._writer.addCallback(write).addCallback(done)
        self._writer.addErrback(lambda f: logger.error("Crawl state write failed: %s", f.value))
        return self._writer

    def _write(self, new: list[dict], old: list[dict], hosts: list[dict]) -> int | None:
        try:
            if self.state.mode == "shadow":
                n = self.store.stage(self.state.run_id, "pages", [*new, *old])
                self.store.stage(self.state.run_id, "hosts", hosts)
                self.stats.inc_value("newscrawl/crawlstate/staged", n)
                return n
            n = self.store.write_state(new, old)
            self.store.write_hosts(hosts)
        except Exception as exc:  # noqa: BLE001 - StoreUnavailable or other: retried later
            logger.error("Crawl state not written (%d records; retried later): %s",
                         len(new) + len(old), exc)
            self.stats.inc_value("newscrawl/crawlstate/errors")
            return None
        self.stats.inc_value("newscrawl/crawlstate/written", n)
        return n

    # -- idle: re-checks of known articles ------------------------------------------------------

    def spider_idle(self, spider: Any) -> None:
        """Once discovery is done, schedule the due re-checks of known articles."""
        if self._released or self.store is None:
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

    async def spider_closed(self, spider: Any, reason: str = "") -> None:
        if self._closed:
            return
        self._closed = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self.store is None:
            if self.embedded is not None:
                await maybe_deferred_to_future(threads.deferToThread(self.embedded.stop))
            return
        await maybe_deferred_to_future(self._flush())
        newsrank = getattr(self.crawler, "newscrawl_newsrank", None)
        weights = newsrank.final_weights() if newsrank is not None and self.state.mode == "shadow" else {}
        await maybe_deferred_to_future(threads.deferToThread(self._close, weights))

    def _close(self, weights: dict[str, float]) -> None:
        try:
            if self.state.mode == "shadow":
                self._merge(weights)
            if self.pagerank and (self.graph_changed or any(
                    r.get("pagerank") is None for r in self.state.records.values())):
                self._pagerank()
            if self.max_pages:
                self._evict()
        except Exception as exc:  # noqa: BLE001 - the crawl is over; report, don't crash
            logger.error("Crawl state: end-of-run work failed: %s", exc, exc_info=True)
            self.stats.inc_value("newscrawl/crawlstate/errors")
        finally:
            self.store.close()
            if self.embedded is not None:
                self.embedded.stop()

    def _merge(self, weights: dict[str, float]) -> None:
        t0 = time.monotonic()
        counts = self.store.merge_staged(self.state.run_id)
        for key in ("items", "pages", "hosts", "versions"):
            self.stats.set_value(f"newscrawl/crawlstate/merged_{key}", counts[key])
        if weights:
            self.store.update_weights(weights)
        logger.info("Shadow run %s merged into the live collections (%s) in %.1f s: %s",
                    self.state.run_id, "one transaction" if counts["atomic"] else "no transaction",
                    time.monotonic() - t0, {k: v for k, v in counts.items() if k != "atomic"})

    def _pagerank(self) -> None:
        records = self.state.records
        ranks = pagerank(self.store.link_edges(), nodes=records.keys(), damping=self.damping)
        changed = {}
        for fp, value in ranks.items():
            rec = records.get(fp)
            if rec is None:
                continue
            old = rec.get("pagerank")
            if not isinstance(old, (int, float)) or abs(value - old) > 1e-6 * max(1.0, abs(old)):
                changed[fp] = value
                rec["pagerank"] = value
        updated = self.store.update_pagerank(changed)
        self.stats.set_value("newscrawl/pagerank/pages", len(ranks))
        self.stats.set_value("newscrawl/pagerank/updated", updated)

    def _evict(self) -> None:
        pages = {fp: PageInfo(pagerank=rec.get("pagerank"), misses=int(rec.get("misses") or 0),
                              protected=bool(rec.get("seed")))
                 for fp, rec in self.state.records.items()
                 if rec.get("last_visit") and not rec.get("evicted")}
        victims = eviction_order(pages, self.max_pages, miss_limit=self.evict_misses)
        if not victims:
            return
        deleted = self.store.evict(victims, at=dt.datetime.fromtimestamp(self.state.now(), UTC))
        for fp in victims:
            self.state.records[fp]["evicted"] = True
        self.stats.set_value("newscrawl/crawlstate/evicted", len(victims))
        logger.info("Evicted %d page(s) (%d bodies) to keep NEWSCRAWL_MAX_PAGES=%d",
                    len(victims), deleted, self.max_pages)
