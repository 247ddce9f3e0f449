"""Item pipeline: store pages and the link graph in MongoDB (:mod:`newscrawl.store`).

Items are buffered and written by unordered bulk upserts in a worker thread (never on the reactor
thread) once the buffer holds ``NEWSCRAWL_MONGO_BATCH_SIZE`` writes (an item and each of its
links count one) or ``NEWSCRAWL_MONGO_FLUSH_INTERVAL`` seconds have passed; at most two batches
wait, after that the item pipeline waits for the database (back-pressure). When the database goes away,
the batch is written to a spill file in the data folder (``spill-<spider>-<database>.jsonl``,
:func:`newscrawl.store.spill_target`), counted, and replayed at the next start that uses the same
database — no item is lost, and none lands in another store.

Server: ``NEWSCRAWL_MONGO_URI`` / env ``NEWSCRAWL_MONGO_URI`` / env ``MONGO_URI``, else the
embedded SecantusDB server on ``NEWSCRAWL_DATA_DIR`` (started, or reused when already running,
and stopped at the end if this crawl started it). Stats: ``newscrawl/store/<articles|nodes|
links|errors>``, ``newscrawl/store/spilled``, ``newscrawl/store/replayed``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from itemadapter import ItemAdapter
from scrapy import Item
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, task, threads
from twisted.python.failure import Failure

from newscrawl import defaults
from newscrawl.embedded import resolve_data_dir, resolve_mongo_uri
from newscrawl.store import NewsStore, StoreUnavailable, spill, spill_target

logger = logging.getLogger(__name__)

#: Batches allowed to wait for the writer thread before process_item waits too.
MAX_QUEUED_BATCHES = 2
#: After the database failed, batches go straight to the spill file for this long (seconds).
RETRY_AFTER = 30.0


class MongoPipeline:
    """Thin adapter: buffer items, hand batches to :class:`newscrawl.store.NewsStore`."""

    def __init__(self, stats, *, uri: str = "", database: str = defaults.NEWSCRAWL_MONGO_DATABASE,
                 data_dir: str = defaults.NEWSCRAWL_DATA_DIR,
                 batch_size: int = defaults.NEWSCRAWL_MONGO_BATCH_SIZE,
                 timeout: float = defaults.NEWSCRAWL_MONGO_TIMEOUT,
                 embedded_port: int = defaults.NEWSCRAWL_EMBEDDED_PORT,
                 start_timeout: float = defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT,
                 flush_interval: float = defaults.NEWSCRAWL_MONGO_FLUSH_INTERVAL,
                 crawler=None):
        self.stats = stats
        self.setting_uri = uri
        self.database = database
        self.data_dir = data_dir
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.embedded_port = embedded_port
        self.start_timeout = start_timeout
        self.crawler = crawler
        self.store: NewsStore | None = None
        self.embedded = None
        self.uri = ""
        self.spill_path: Path | None = None
        self._buffer: list[dict] = []
        self._buffered_ops = 0
        self.flush_interval = flush_interval
        self._last_flush = time.monotonic()
        self._queued = 0
        self._writer: defer.Deferred = defer.succeed(None)
        self._down_until = 0.0
        #: ``time.monotonic()`` before which every item this pipeline received is stored (or
        #: spilled to disk): the distributed scheduler acknowledges a finished request to Redis
        #: only once this passes the time it finished, so a ``kill -9`` never loses an article
        #: that Redis already counts as done (the other workers fetch it again instead).
        self.durable_before = 0.0
        self._flush_loop = None

    def durable_time(self) -> float:
        """``time.monotonic()`` before which every item received is stored or spilled (s)."""
        return self.durable_before

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        if not s.getbool("NEWSCRAWL_MONGO_ENABLED", defaults.NEWSCRAWL_MONGO_ENABLED):
            raise NotConfigured("NEWSCRAWL_MONGO_ENABLED is off")
        pipeline = cls._build(crawler, s)
        crawler.newscrawl_store = pipeline  # the store barrier the distributed scheduler reads
        return pipeline

    @classmethod
    def _build(cls, crawler, s):
        return cls(
            crawler.stats,
            uri=s.get("NEWSCRAWL_MONGO_URI", defaults.NEWSCRAWL_MONGO_URI) or "",
            database=s.get("NEWSCRAWL_MONGO_DATABASE", defaults.NEWSCRAWL_MONGO_DATABASE),
            data_dir=s.get("NEWSCRAWL_DATA_DIR", defaults.NEWSCRAWL_DATA_DIR),
            batch_size=s.getint("NEWSCRAWL_MONGO_BATCH_SIZE", defaults.NEWSCRAWL_MONGO_BATCH_SIZE),
            timeout=s.getfloat("NEWSCRAWL_MONGO_TIMEOUT", defaults.NEWSCRAWL_MONGO_TIMEOUT),
            embedded_port=s.getint("NEWSCRAWL_EMBEDDED_PORT", defaults.NEWSCRAWL_EMBEDDED_PORT),
            start_timeout=s.getfloat("NEWSCRAWL_EMBEDDED_START_TIMEOUT",
                                     defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT),
            flush_interval=s.getfloat("NEWSCRAWL_MONGO_FLUSH_INTERVAL",
                                      defaults.NEWSCRAWL_MONGO_FLUSH_INTERVAL),
            crawler=crawler,
        )

    # -- open ---------------------------------------------------------------------------------

    async def open_spider(self, spider=None):
        spider = spider or getattr(self.crawler, "spider", None)
        name = getattr(spider, "name", "crawl")
        await maybe_deferred_to_future(threads.deferToThread(self._open, name))
        # Items also reach the store when no new item arrives (an idle or ending crawl).
        self._flush_loop = task.LoopingCall(self._flush_if_due)
        self._flush_loop.start(max(0.1, self.flush_interval / 2), now=False)

    def _flush_if_due(self) -> None:
        if not self._buffer:
            if not self._queued:  # nothing buffered, nothing being written: all is stored
                self.durable_before = max(self.durable_before, time.monotonic())
        elif time.monotonic() - self._last_flush >= self.flush_interval:
            self._flush()

    def _open(self, spider_name: str) -> None:
        self.uri, self.embedded = resolve_mongo_uri(
            self.setting_uri, self.data_dir, port=self.embedded_port, start_timeout=self.start_timeout)
        folder = Path(resolve_data_dir(self.data_dir))
        target = spill_target(self.uri, self.database, embedded=self.embedded is not None)
        self.spill_path = folder / f"spill-{spider_name}-{target}.jsonl"
        others = sorted(p.name for p in [*folder.glob(f"spill-{spider_name}-*.jsonl"),
                                         folder / f"spill-{spider_name}.jsonl"]
                        if p != self.spill_path and p.exists())
        if others:
            logger.warning("Spill file(s) of another database left in place (replayed when a "
                           "crawl uses that database again): %s", ", ".join(others))
            self.stats.set_value("newscrawl/store/spills_elsewhere", len(others))
        self.store = NewsStore.connect(self.uri, self.database, timeout=self.timeout)
        try:
            self.store.ensure_indexes()
        except StoreUnavailable as exc:
            # Crawl anyway: every batch goes to the spill file and is replayed at the next start.
            logger.error("MongoDB at %s is unreachable (%s): items will be spilled to %s and "
                         "written at the next start", self.uri, exc, self.spill_path)
            self._down_until = time.monotonic() + RETRY_AFTER
            return
        try:
            replayed = self.store.replay_spill(self.spill_path)
        except StoreUnavailable as exc:
            logger.error("Could not replay %s: %s", self.spill_path, exc)
            return
        if any(replayed.values()):
            logger.info("Replayed spilled items from %s: %s", self.spill_path, replayed)
            self.stats.inc_value("newscrawl/store/replayed",
                                 replayed.get("articles", 0) + replayed.get("nodes", 0))

    # -- items --------------------------------------------------------------------------------

    async def process_item(self, item, spider=None):
        # A shallow copy: the item's values are plain data (newscrawl/items.py: str, numbers,
        # datetimes, lists and dicts of those), which ItemAdapter.asdict() would copy deeply
        # for nothing; nothing changes them once this last pipeline has seen the item.
        doc = dict(item) if isinstance(item, (dict, Item)) else ItemAdapter(item).asdict()
        self._buffer.append(doc)
        self._buffered_ops += 1 + len(doc.get("links") or ())
        if (self._buffered_ops < self.batch_size
                and time.monotonic() - self._last_flush < self.flush_interval):
            return item
        waiting = self._flush()
        if self._queued > MAX_QUEUED_BATCHES:
            await maybe_deferred_to_future(waiting)
        return item

    def _flush(self) -> defer.Deferred:
        batch, self._buffer = self._buffer, []
        self._buffered_ops = 0
        self._last_flush = cut = time.monotonic()
        if not batch:
            self.durable_before = max(self.durable_before, cut) if not self._queued else \
                self.durable_before
            return self._writer
        self._queued += 1

        def write(_):
            return threads.deferToThread(self._write, batch)

        def done(result):
            self._queued -= 1
            # Stored, spilled, or (a writer bug, logged and counted below) lost: either way no
            # later write will carry these items.
            self.durable_before = max(self.durable_before, cut)
            if isinstance(result, Failure):  # never let one failure stop every later write
                logger.error("Store writer failed: %s", result.getTraceback())
                self.stats.inc_value("newscrawl/store/errors")
                return None
            return result

        self._writer = self._writer.addCallback(write).addBoth(done)
        return self._writer

    def _write(self, batch: list[dict]) -> None:
        if time.monotonic() < self._down_until:
            self._spill(batch, "still unavailable")
            return
        # Shadow update mode (pipelines/crawlstate.py): the run's batches are staged and merged
        # into the live collections when the run ends.
        revisit = getattr(self.crawler, "newscrawl_revisit", None) if self.crawler else None
        try:
            if revisit is not None and revisit.mode == "shadow":
                staged = self.store.stage(revisit.run_id, "items", batch)
                self.stats.inc_value("newscrawl/store/staged", staged)
                return
            counts = self.store.write_pages(batch)
        except StoreUnavailable as exc:
            self._down_until = time.monotonic() + RETRY_AFTER
            self._spill(list(exc.docs) or batch, str(exc))
            return
        for key, value in counts.items():
            if value:
                self.stats.inc_value(f"newscrawl/store/{key}", value)

    def _spill(self, docs: list[dict], why: str) -> None:
        try:
            spill(docs, self.spill_path)
        except OSError:
            logger.exception("Could not write %d item(s) to the spill file %s: they are lost",
                             len(docs), self.spill_path)
            self.stats.inc_value("newscrawl/store/lost", len(docs))
            return
        self.stats.inc_value("newscrawl/store/spilled", len(docs))
        logger.error("MongoDB unavailable (%s): %d item(s) spilled to %s, replayed at the next "
                     "start", why, len(docs), self.spill_path)

    # -- close --------------------------------------------------------------------------------

    async def close_spider(self, spider=None):
        if self._flush_loop is not None and self._flush_loop.running:
            self._flush_loop.stop()
        await maybe_deferred_to_future(self._flush())
        newsrank = getattr(self.crawler, "newscrawl_newsrank", None) if self.crawler else None
        weights = newsrank.final_weights() if newsrank is not None else {}
        await maybe_deferred_to_future(threads.deferToThread(self._close, weights))

    def _close(self, weights: dict[str, float]) -> None:
        try:
            if self.store is not None and time.monotonic() < self._down_until:
                logger.error("MongoDB unavailable at close: final NewsPageRank weights not stored; "
                             "spilled items keep their online weights")
                self.store.close()
                return
            if weights and self.store is not None:
                try:
                    changed = self.store.update_weights(weights)
                    self.stats.set_value("newscrawl/store/weights_updated", changed)
                except StoreUnavailable as exc:
                    logger.error("Final NewsPageRank weights not stored: %s", exc)
            if self.store is not None:
                try:
                    articles = self.store.articles.estimated_document_count()
                    nodes = self.store.nodes.estimated_document_count()
                    links = self.store.links.estimated_document_count()
                    logger.info("Results: %d articles, %d nodes, %d links in %s database %r%s",
                                articles, nodes, links, self.uri, self.database,
                                f" (embedded store, data folder {self.embedded.data_dir})"
                                if self.embedded else "")
                except Exception as exc:  # the summary is informative only
                    logger.warning("Could not count stored documents: %s", exc)
                self.store.close()
        finally:
            if self.embedded is not None:
                self.embedded.stop()
