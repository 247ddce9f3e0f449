"""Extension owning the run's store: one server lease, one connection, one writer thread.

At ``spider_opened`` it resolves the server once (:func:`newscrawl.embedded.resolve_mongo_uri`:
``NEWSCRAWL_MONGO_URI``, env ``NEWSCRAWL_MONGO_URI`` / ``MONGO_URI``, else the embedded
SecantusDB server on ``NEWSCRAWL_DATA_DIR``, started or reused, and stopped at the end if this
crawl started it), connects the one :class:`~newscrawl.store.NewsStore`, creates its indexes,
replays the spill file of this database (``spill-<spider>-<target>.jsonl`` in the data folder,
:func:`newscrawl.store.spill_target`) and upgrades a data folder written by older code
(``NewsStore.upgrade``: fingerprints recomputed with the run's page fingerprint). Every database
call runs on the :class:`~newscrawl.store.writer.BufferedWriter` thread, which the item pipeline
and the crawl-state extension share (:attr:`StoreExtension.writer`). A server that does not
answer at open is not fatal: pages are spilled and replayed at the next start on it; a server
that cannot be started or a malformed URI closes the spider (``store_unavailable``).

When the spider closes (after every pipeline): the page buffer is written, then the steps other
components registered with :meth:`StoreExtension.at_close` run in order (the crawl-state
extension's shadow merge, PageRank, eviction; the run summary of :mod:`extensions.outcome`,
which prints the store's ``Results: N articles, ...`` line, :meth:`StoreExtension.results`, at
the head of its block), then — when no step took it — the ``Results:`` line, then the connection
is closed and the embedded server's lease released. URIs are logged without credentials.

It is the run's :class:`newscrawl.durability.Durable`: :meth:`StoreExtension.durable_time` is the
writer's watermark over pages and crawl-state records.

Settings: ``NEWSCRAWL_MONGO_ENABLED`` (off raises ``NotConfigured``: no store at all),
``NEWSCRAWL_MONGO_URI``, ``NEWSCRAWL_MONGO_DATABASE``, ``NEWSCRAWL_MONGO_BATCH_SIZE``,
``NEWSCRAWL_MONGO_FLUSH_INTERVAL``, ``NEWSCRAWL_MONGO_TIMEOUT``, ``NEWSCRAWL_DATA_DIR``,
``NEWSCRAWL_EMBEDDED_PORT``, ``NEWSCRAWL_EMBEDDED_START_TIMEOUT``. Stats:
``newscrawl/store/<articles|nodes|links|new_*|staged|spilled|replayed|spills_elsewhere|lost|
errors|weights_updated|unreachable>``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.asyncio import create_looping_call, is_asyncio_available, run_in_thread
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from newscrawl import defaults
from newscrawl.algorithms.urls import redact_credentials
from newscrawl.components import given_data_dir, require_enabled, settings_kwargs
from newscrawl.durability import Durable
from newscrawl.embedded import resolve_data_dir, resolve_mongo_uri
from newscrawl.fingerprint import PageFingerprint, page_fingerprint
from newscrawl.store import (
    NewsStore,
    StoreError,
    StoreUnavailable,
    replay_state_spill,
    spill_target,
)
from newscrawl.store.writer import BufferedWriter

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


async def wait_for(future: Future[_T]) -> _T:
    """Await a writer job (a :class:`concurrent.futures.Future`) from Scrapy code, on the asyncio
    loop or on a Twisted reactor. Raises what the job raised."""
    if is_asyncio_available():
        return await asyncio.wrap_future(future)
    from twisted.internet import reactor

    deferred: Deferred[_T] = Deferred()

    def fire(done: Future[_T]) -> None:
        error = done.exception()
        if error is not None:
            deferred.errback(error)
        else:
            deferred.callback(done.result())

    call_from_thread = reactor.callFromThread
    future.add_done_callback(lambda done: call_from_thread(fire, done))
    return await maybe_deferred_to_future(deferred)


class StoreExtension(Durable):
    """The run's store and writer (see the module docstring).

    Args:
        stats: the crawler's stats collector.
        writer: the run's writer (its store is set at open).
        page_fp: the page fingerprint, for the upgrade of old data folders.
        uri: ``NEWSCRAWL_MONGO_URI`` (empty: environment, else the embedded server).
        data_dir: the data folder given (empty: env ``NEWSCRAWL_DATA_DIR``, else ``./data``).
        database, timeout (seconds), embedded_port, start_timeout (seconds): see the
            settings of the same names.
    """

    def __init__(self, stats: Any, writer: BufferedWriter, *, page_fp: PageFingerprint,
                 uri: str = "", database: str = defaults.NEWSCRAWL_MONGO_DATABASE,
                 data_dir: str = "",
                 timeout: float = defaults.NEWSCRAWL_MONGO_TIMEOUT,
                 embedded_port: int = defaults.NEWSCRAWL_EMBEDDED_PORT,
                 start_timeout: float = defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT) -> None:
        self.stats, self.writer, self.page_fp = stats, writer, page_fp
        #: Where the store is, as configured (resolved once, at open).
        self.setting_uri, self.database, self.data_dir = uri, database, data_dir
        #: Seconds: the client's server-selection timeout, the embedded server's start-up wait.
        self.timeout, self.start_timeout = timeout, start_timeout
        self.embedded_port = embedded_port
        #: The resolved server URI and the embedded server (None for a real server).
        self.uri = ""
        self.embedded: Any = None
        #: True once the store answered at open (False: pages are spilled).
        self.connected = False
        self._opening: Future[None] | None = None
        self._close_steps: list[Callable[[], Awaitable[None]]] = []
        self._loop: Any = None
        self._closed = False
        self._results_taken = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> StoreExtension:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_MONGO_ENABLED")
        writer = BufferedWriter(stats=crawler.stats, **settings_kwargs(
            s, batch_size="NEWSCRAWL_MONGO_BATCH_SIZE",
            flush_interval="NEWSCRAWL_MONGO_FLUSH_INTERVAL"))
        ext = cls(crawler.stats, writer, page_fp=page_fingerprint(crawler),
                  uri=s.get("NEWSCRAWL_MONGO_URI") or "", data_dir=given_data_dir(s),
                  **settings_kwargs(
                      s, database="NEWSCRAWL_MONGO_DATABASE", timeout="NEWSCRAWL_MONGO_TIMEOUT",
                      embedded_port="NEWSCRAWL_EMBEDDED_PORT",
                      start_timeout="NEWSCRAWL_EMBEDDED_START_TIMEOUT"))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def at_close(self, step: Callable[[], Awaitable[None]]) -> None:
        """Run ``step()`` when the spider closes, after the last page is written and before the
        summary (steps run in the order registered; a failing step is logged, not fatal)."""
        self._close_steps.append(step)

    def durable_time(self) -> float:
        """See :meth:`BufferedWriter.durable_time` (``time.monotonic()`` seconds)."""
        return self.writer.durable_time()

    # -- open -----------------------------------------------------------------------------------

    async def open(self, spider_name: str) -> None:
        """Open the store (once; later calls wait for the first).

        Raises:
            Exception: the server cannot be started or the URI is malformed (what
                :func:`~newscrawl.embedded.resolve_mongo_uri` / ``NewsStore.connect`` raised);
                OSError: the spill file cannot be read.
        """
        if self._opening is None:
            self._opening = self.writer.submit(self._open, spider_name)
        await wait_for(self._opening)

    async def spider_opened(self, spider: Any) -> None:
        """Open the store (see :meth:`open`) and start the writer's flush timer.

        Raises:
            CloseSpider: ``store_unavailable`` — the store cannot be opened (logged).
        """
        try:
            await self.open(spider.name)
        except Exception as exc:  # noqa: BLE001 - any cause: no store, no crawl
            logger.error("Store unavailable: %s", exc, exc_info=True)
            self.stats.inc_value("newscrawl/store/errors")
            raise CloseSpider("store_unavailable") from exc
        self._loop = create_looping_call(self.writer.tick)
        self._loop.start(max(0.1, self.writer.flush_interval / 2), now=False)

    def _open(self, spider_name: str) -> None:
        """Blocking part of :meth:`open` (writer thread)."""
        folder = Path(resolve_data_dir(self.data_dir))  # once: the store and the spill files
        self.uri, self.embedded = resolve_mongo_uri(
            self.setting_uri, folder, port=self.embedded_port, start_timeout=self.start_timeout)
        target = spill_target(self.uri, self.database, embedded=self.embedded is not None)
        spill_path = folder / f"spill-{spider_name}-{target}.jsonl"
        others = sorted(p.name for p in [*folder.glob(f"spill-{spider_name}-*.jsonl"),
                                         folder / f"spill-{spider_name}.jsonl"]
                        if p != spill_path and p.exists())
        if others:
            logger.warning("Spill file(s) of another database left in place (replayed when a "
                           "crawl uses that database again): %s", ", ".join(others))
            self.stats.set_value("newscrawl/store/spills_elsewhere", len(others))
        state_spill_path = folder / f"state-spill-{spider_name}-{target}.jsonl"
        store = NewsStore.connect(self.uri, self.database, timeout=self.timeout)
        self.connected = self._prepare(store, spill_path, state_spill_path)
        self.writer.start(store, spill_path=spill_path, available=self.connected,
                          state_spill_path=state_spill_path)

    def _prepare(self, store: NewsStore, spill_path: Path,
                 state_spill_path: Path | None = None) -> bool:
        """Upgrade, indexes, spill replays (pages, then crawl state); False when the server
        does not answer.

        The upgrade comes first (before any write or crawl-state load): a data folder written by
        older code gets the current page fingerprints (:meth:`NewsStore.upgrade`, idempotent).
        """
        try:
            counts = store.upgrade(self.page_fp)
            rekeyed = {k: v for k, v in counts.items() if v and k not in ("version", "from_version")}
            if rekeyed:
                logger.info("Upgraded the store to the current fingerprints (schema %d -> %d): %s",
                            counts["from_version"], counts["version"], rekeyed)
            store.ensure_indexes()
        except StoreUnavailable as exc:  # crawl on: spill, replay at the next start
            logger.error("MongoDB at %s is unreachable (%s): items will be spilled to %s and "
                         "written at the next start", redact_credentials(self.uri), exc,
                         spill_path)
            self.stats.set_value("newscrawl/store/unreachable", 1)
            return False
        try:
            replayed = store.replay_spill(spill_path)
            if state_spill_path is not None:
                replay_state_spill(store, state_spill_path)
        except StoreUnavailable as exc:
            logger.error("Could not replay %s: %s", spill_path, exc)
            replayed = {}
        if any(replayed.values()):
            logger.info("Replayed spilled items from %s: %s", spill_path, replayed)
            self.stats.inc_value("newscrawl/store/replayed",
                                 replayed.get("articles", 0) + replayed.get("nodes", 0))
        return True

    # -- close ----------------------------------------------------------------------------------

    async def spider_closed(self, spider: Any, reason: str = "") -> None:
        """Write the last pages, run the close steps, log the summary, close the store and
        release the embedded server (see the module docstring)."""
        if self._closed:
            return
        self._closed = True
        self.writer.closing()
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        await wait_for(self.writer.flush())
        for step in self._close_steps:
            try:
                await step()
            except Exception:  # noqa: BLE001 - the crawl is over: report, close anyway
                logger.exception("End-of-run step %r failed", step)
                self.stats.inc_value("newscrawl/store/errors")
        if not self._results_taken:
            results = await wait_for(self.writer.submit(self._totals))
            if results:
                logger.info("Results: %s", results)
        await wait_for(self.writer.close())
        if self.embedded is not None:
            await run_in_thread(self.embedded.stop)

    def describe(self) -> str:
        """Where the store is, for a log line (no credentials)."""
        if self.embedded is not None:
            return f"embedded store in {self.embedded.data_dir}, database {self.database!r}"
        if self.uri:
            return (f"MongoDB {redact_credentials(self.uri)} database {self.database!r}"
                    + ("" if self.connected else " (unreachable: spilling)"))
        return "no store"

    async def results(self) -> str | None:
        """The store's totals in one phrase (``1 articles, 0 nodes, 0 links in … database
        'newscrawl'``), or None when the store does not answer; the caller prints it, the
        store then does not (the run summary, :mod:`extensions.outcome`)."""
        self._results_taken = True
        return await wait_for(self.writer.submit(self._totals))

    def _totals(self) -> str | None:
        """Count the stored documents (writer thread; informative only)."""
        store = self.writer.store
        if store is None or not self.writer.available:
            return None
        try:
            counts = store.document_counts()
            articles, nodes, links = counts["articles"], counts["nodes"], counts["links"]
        except StoreError as exc:  # the summary is informative only
            logger.warning("Could not count stored documents: %s", exc)
            return None
        return (f"{articles} articles, {nodes} nodes, {links} links in "
                f"{redact_credentials(self.uri)} database {self.database!r}"
                + (f" (embedded store, data folder {self.embedded.data_dir})"
                   if self.embedded else ""))
