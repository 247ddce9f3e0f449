"""The run's one writer: a thread that writes in order, and the durable watermark.

A crawl writes three kinds of things to its store: page documents (the items), crawl-state
records (with host policies), and previous versions of changed articles; at its end it merges a
shadow run, writes the final NewsPageRank weights, PageRank and evictions. :class:`BufferedWriter`
runs all of it on one thread (``newscrawl-writer``), first in, first out, so nothing blocks the
reactor and the order is the order of the calls: the version of an article is read before the
new text overwrites it, the final weights are written after the last page, the merge after the
last staged write.

Pages are buffered and written in batches (:meth:`NewsStore.write_pages`, an unordered bulk
upsert) once the buffer holds ``batch_size`` writes (a page and each of its links count one) or
is ``flush_interval`` seconds old; at most ``max_queued`` batches wait, after that the caller is
handed a future to wait for (back-pressure). When the database goes away
(:class:`~newscrawl.store.StoreUnavailable`), the batch is appended to the spill file (JSON
lines, :func:`~newscrawl.store.spill`) and batches go straight to the spill file for
``retry_after`` seconds; the next start on the same database replays it. Crawl-state writes
are not tried either meanwhile (the records stay with the run and are written later).

At the end of the run (:meth:`closing`) the writer gives up quickly: a store that failed during
the run gets one more attempt (no retries); once that fails, nothing more is sent to it — the
last pages go to the spill file, the last crawl-state records and host policies to the state
spill file (``state_spill_path``, replayed at the next start:
:func:`~newscrawl.store.spillfiles.replay_state_spill`), and the end-of-run work that needs the
store (PageRank, eviction, final weights, counts) is skipped (:attr:`gave_up`). In the shadow update
mode (:meth:`bind_run` with ``stage_run``) pages, records and versions are staged for the run and
merged by :meth:`merge`.

The durable watermark (:meth:`durable_time`) is the ``time.monotonic()`` before which every page
handed to :meth:`add_page` is stored or spilled and every crawl-state change the run reported is
written: the distributed scheduler acknowledges a finished request only after it (see
:class:`newscrawl.durability.Durable`).

Thread use: every public method is called from one thread (the reactor's); jobs run on the
writer thread and return :class:`concurrent.futures.Future` objects. Plain Python: no Scrapy or
Twisted import.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from newscrawl import defaults
from newscrawl.store import NewsStore, StoreError, StoreUnavailable, spill

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Page batches allowed to wait for the writer thread before :meth:`BufferedWriter.add_page`
#: asks its caller to wait too.
MAX_QUEUED_BATCHES = 2
#: After the database failed, page batches go straight to the spill file for this long (s).
RETRY_AFTER = 30.0


def _wall_clock() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class BufferedWriter:
    """Write a run's pages, crawl state and versions on one thread (see the module docstring).

    Args:
        batch_size: page writes per batch (a page and each of its links count one).
        flush_interval: seconds after which a non-empty page buffer is written (see
            :meth:`tick`).
        max_queued: page batches that may wait before :meth:`add_page` asks to wait.
        retry_after: seconds batches go straight to the spill file after a failure.
        stats: a Scrapy stats collector (``inc_value``/``set_value``), or None.
    """

    def __init__(self, *, batch_size: int = defaults.NEWSCRAWL_MONGO_BATCH_SIZE,
                 flush_interval: float = defaults.NEWSCRAWL_MONGO_FLUSH_INTERVAL,
                 max_queued: int = MAX_QUEUED_BATCHES, retry_after: float = RETRY_AFTER,
                 stats: Any = None) -> None:
        self.batch_size = max(1, batch_size)
        self.flush_interval = max(0.1, flush_interval)
        self.max_queued = max_queued
        self.retry_after = retry_after
        self.stats = stats
        self.store: NewsStore | None = None
        self.spill_path: Path | None = None
        self.state_spill_path: Path | None = None
        #: The run clock (UTC datetimes) for ``first_seen``/``last_seen`` and merges.
        self.clock: Callable[[], dt.datetime] = _wall_clock
        #: Run id whose writes are staged (shadow update mode), or None (in place).
        self.stage_run: str | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="newscrawl-writer")
        self._lock = threading.Lock()
        self._buffer: list[dict[str, Any]] = []
        self._buffered_ops = 0
        self._last_flush = time.monotonic()
        self._queued = 0  # page batches submitted and not done
        self._pages_before = 0.0
        self._down_until = 0.0
        self._failed = False  # the store failed at least once in this run
        self._closing = False
        #: True once the store failed again while the run closes: nothing more is sent to it.
        self.gave_up = False
        self._weights: dict[str, float] = {}  # final weights waiting for the merge (shadow)
        self._state_used = False
        self._state_pending = 0
        self._state_failed = False
        self._state_before = 0.0
        self._closed = False
        #: Called on the writer thread with each batch of page documents once it is stored in
        #: place (not staged, not spilled): the search index and alerts (extensions/search.py).
        self.listeners: list[Callable[[list[dict[str, Any]]], None]] = []

    # -- set-up ---------------------------------------------------------------------------------

    def bind_run(self, *, clock: Callable[[], dt.datetime],
                 stage_run: str | None = None) -> None:
        """Use the run's clock, and stage every write for run ``stage_run`` (shadow mode)."""
        self.clock = clock
        self.stage_run = stage_run

    def start(self, store: NewsStore | None, *, spill_path: Path | None,
              available: bool = True, state_spill_path: Path | None = None) -> None:
        """Write to ``store`` from now on; spill pages to ``spill_path`` and, at the end,
        unwritten crawl state to ``state_spill_path``. ``available=False`` (the server did not
        answer at open) sends the first batches straight to the spill file."""
        self.store = store
        self.spill_path = spill_path
        self.state_spill_path = state_spill_path
        if not available:
            self._down_until = time.monotonic() + self.retry_after
            self._failed = True

    def closing(self) -> None:
        """The run is closing: give up quickly on a store that fails (module docstring)."""
        self._closing = True

    def _went_down(self) -> None:
        """Note a failure of the store (writer thread)."""
        self._down_until = time.monotonic() + self.retry_after
        self._failed = True
        if self._closing:
            self.gave_up = True

    @property
    def available(self) -> bool:
        """False while batches go straight to the spill file (the store failed recently)."""
        return (self.store is not None and not self.gave_up
                and time.monotonic() >= self._down_until)

    def submit(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> Future[_T]:
        """Run ``fn(*args, **kwargs)`` on the writer thread after every job submitted before.

        Raises:
            RuntimeError: the writer is closed.
        """
        return self._executor.submit(fn, *args, **kwargs)

    # -- pages ----------------------------------------------------------------------------------

    @property
    def buffered_pages(self) -> tuple[dict[str, Any], ...]:
        """The page documents buffered and not handed to the writer thread yet."""
        return tuple(self._buffer)

    def add_page(self, doc: dict[str, Any]) -> Future[None] | None:
        """Buffer one page document (item fields, see :mod:`newscrawl.items`).

        Returns:
            None, or — when more than ``max_queued`` batches wait for the thread — the future
            of the batch just queued: the caller should wait for it (back-pressure).
        """
        self._buffer.append(doc)
        self._buffered_ops += 1 + len(doc.get("links") or ())
        if (self._buffered_ops < self.batch_size
                and time.monotonic() - self._last_flush < self.flush_interval):
            return None
        waiting = self._flush_pages()
        return waiting if self._queued > self.max_queued else None

    def tick(self) -> None:
        """Write the page buffer when it is ``flush_interval`` seconds old (call it regularly:
        pages reach the store even when no new page arrives)."""
        if self._buffer and time.monotonic() - self._last_flush >= self.flush_interval:
            self._flush_pages()

    def flush(self) -> Future[None]:
        """Write the page buffer; the future is done once every job submitted so far is."""
        self._flush_pages()
        return self.submit(lambda: None)

    def _flush_pages(self) -> Future[None]:
        batch, self._buffer = self._buffer, []
        self._buffered_ops = 0
        self._last_flush = cut = time.monotonic()
        if not batch:
            return self.submit(lambda: None)
        with self._lock:
            self._queued += 1
        return self.submit(self._pages_job, batch, cut)

    def _pages_job(self, batch: list[dict[str, Any]], cut: float) -> None:
        try:
            self._write_pages(batch)
        except Exception:  # noqa: BLE001 - one failed batch must not stop every later write
            logger.exception("Store writer failed on %d page(s)", len(batch))
            self._inc("newscrawl/store/errors")
        finally:
            with self._lock:
                self._queued -= 1
                # Stored, spilled, or (a bug, logged above) lost: no later write carries them.
                self._pages_before = max(self._pages_before, cut)

    def _skip_store(self) -> bool:
        """True when no call should reach the store now: it failed recently (during the run)
        or it failed again while the run closes."""
        if self.store is None or self.gave_up:
            return True
        return not self._closing and time.monotonic() < self._down_until

    def _write_pages(self, batch: list[dict[str, Any]]) -> None:
        if self._skip_store():
            self._spill(batch, "still unavailable")
            return
        assert self.store is not None
        try:
            if self.stage_run:
                staged = self.store.stage(self.stage_run, "items", batch)
                self._inc("newscrawl/store/staged", staged)
                return
            retries = {"retries": 0} if self._closing and self._failed else {}
            counts = self.store.write_pages(batch, now=self.clock(), **retries)
        except StoreUnavailable as exc:
            self._went_down()
            self._spill(list(exc.docs) or batch, str(exc))
            return
        for key, value in counts.items():
            if value:
                self._inc(f"newscrawl/store/{key}", value)
        for listener in self.listeners:
            try:
                listener(batch)
            except Exception:  # noqa: BLE001 - a listener's failure never loses a stored page
                logger.exception("A listener of stored pages failed on %d page(s)", len(batch))
                self._inc("newscrawl/store/listener_errors")

    def _spill(self, docs: Sequence[Mapping[str, Any]], why: str) -> None:
        if self.spill_path is None:
            logger.error("No spill file: %d page(s) lost (%s)", len(docs), why)
            self._inc("newscrawl/store/lost", len(docs))
            return
        try:
            spill(docs, self.spill_path)
        except OSError:
            logger.exception("Could not write %d item(s) to the spill file %s: they are lost",
                             len(docs), self.spill_path)
            self._inc("newscrawl/store/lost", len(docs))
            return
        self._inc("newscrawl/store/spilled", len(docs))
        logger.error("MongoDB unavailable (%s): %d item(s) spilled to %s, replayed at the next "
                     "start", why, len(docs), self.spill_path)

    # -- crawl state ----------------------------------------------------------------------------

    def track_state(self) -> None:
        """Count crawl-state changes in :meth:`durable_time` from now on (the crawl-state
        extension calls it when it starts recording)."""
        with self._lock:
            self._state_used = True

    def state_settled(self, now: float) -> None:
        """The crawl state holds no unwritten visit as of ``now`` (``time.monotonic()``): once
        the state writes queued are done, everything observed before ``now`` is written."""
        with self._lock:
            if not self._state_pending:
                self._state_before = max(self._state_before, now)

    def write_state(self, new: list[dict[str, Any]], old: list[dict[str, Any]],
                    hosts: list[dict[str, Any]], *, cut: float,
                    final: bool = False) -> Future[int | None]:
        """Write crawl-state records (``new`` inserted, ``old`` replaced; documents with ``_id``,
        :func:`newscrawl.crawlstate.to_doc`) and host policies, or stage them (shadow mode).

        Args:
            cut: ``time.monotonic()`` when the records were taken: every observation before
                it is durable once this write is done.

            final: the last write of the run: records the store refuses are spilled to
                ``state_spill_path`` (stat ``newscrawl/crawlstate/spilled``; without one, or
                when the spill fails, ``newscrawl/crawlstate/not_written``).

        Returns:
            A future of the number of records written, or None when the store refused them
            (logged and counted; the caller keeps them for a later write, and until a write
            succeeds :meth:`durable_time` does not wait for crawl state).
        """
        with self._lock:
            self._state_used = True
            self._state_pending += 1
        return self.submit(self._state_job, new, old, hosts, cut, final)

    def _state_job(self, new: list[dict[str, Any]], old: list[dict[str, Any]],
                   hosts: list[dict[str, Any]], cut: float, final: bool = False) -> int | None:
        written: int | None = None
        skipped = self._skip_store()
        try:
            if skipped:
                raise StoreUnavailable("the store failed recently" if self.store else "no store")
            assert self.store is not None
            if self.stage_run:
                written = self.store.stage(self.stage_run, "pages", [*new, *old])
                self.store.stage(self.stage_run, "hosts", hosts)
                self._inc("newscrawl/crawlstate/staged", written)
            else:
                retries = {"retries": 0} if self._closing and self._failed else {}
                written = self.store.write_state(new, old, **retries)
                self.store.write_hosts(hosts)
                self._inc("newscrawl/crawlstate/written", written)
        except StoreError as exc:  # unavailable, or a refused write: retried
            if isinstance(exc, StoreUnavailable) and not skipped:
                self._went_down()
            if final:
                self._spill_state([*new, *old], hosts, str(exc))
            else:
                logger.error("Crawl state not written (%d records; retried later): %s",
                             len(new) + len(old), exc)
            self._inc("newscrawl/crawlstate/errors")
            written = None
        with self._lock:
            self._state_pending -= 1
            self._state_failed = written is None
            if written is not None:
                self._state_before = max(self._state_before, cut)
        return written

    def _spill_state(self, records: list[dict[str, Any]], hosts: list[dict[str, Any]],
                     why: str) -> None:
        """Keep the last crawl-state records and host policies in the state spill file."""
        docs = [*({"collection": "pages", "doc": d} for d in records),
                *({"collection": "hosts", "doc": h} for h in hosts)]
        if self.state_spill_path is not None:
            try:
                spill(docs, self.state_spill_path)
            except OSError:
                logger.exception("Could not write the state spill file %s", self.state_spill_path)
            else:
                self._inc("newscrawl/crawlstate/spilled", len(records))
                logger.error("Crawl state not written (%s): %d record(s) and %d host policy(ies) "
                             "spilled to %s, written at the next start", why, len(records),
                             len(hosts), self.state_spill_path)
                return
        logger.error("Crawl state not written (%s): %d record(s) LOST", why, len(records))
        self._inc("newscrawl/crawlstate/not_written", len(records))

    # -- versions, weights, merge ---------------------------------------------------------------

    def archive(self, fp: str, doc: Mapping[str, Any], *,
                at: dt.datetime) -> Future[dict[str, Any] | None]:
        """Keep the stored version of article ``fp`` before ``doc`` (its new title, text,
        published, authors) is written (:meth:`NewsStore.archive_version`; staged in shadow
        mode). The future gives the version document, or None (no stored article, or a store
        error: logged and counted as ``newscrawl/crawlstate/errors``)."""
        return self.submit(self._archive_job, fp, dict(doc), at)

    def _archive_job(self, fp: str, doc: dict[str, Any],
                     at: dt.datetime) -> dict[str, Any] | None:
        try:
            if self._skip_store():
                raise StoreUnavailable("the store failed recently" if self.store else "no store")
            assert self.store is not None
            version = self.store.archive_version(fp, doc, archived_at=at, stage_run=self.stage_run)
        except StoreError as exc:  # a lost version must not lose the article
            logger.error("Could not keep the previous version of %s: %s", fp, exc)
            self._inc("newscrawl/crawlstate/errors")
            return None
        if version is not None:
            self._inc("newscrawl/crawlstate/versions")
            diff = version["diff"]
            logger.info("Article %s changed: version %d kept (title changed: %s, body changed "
                        "%.1f%%)", version.get("url"), version["version"], diff["title_changed"],
                        diff["body_changed_pct"])
        return version

    def update_weights(self, weights: Mapping[str, float]) -> Future[int] | None:
        """Write the final NewsPageRank weights (``{fp: weight}``, overwriting the online ones)
        after every page buffered so far. In shadow mode they wait for :meth:`merge` (the pages
        are staged until then). Returns the future of the write (documents changed), or None
        when nothing is written now."""
        if not weights:
            return None
        if self.stage_run:
            self._weights.update(weights)
            return None
        self._flush_pages()
        return self.submit(self._weights_job, dict(weights))

    def _weights_job(self, weights: dict[str, float]) -> int:
        if self.store is None or self.gave_up or time.monotonic() < self._down_until:
            logger.error("MongoDB unavailable at close: final NewsPageRank weights not stored; "
                         "spilled items keep their online weights")
            return 0
        try:
            changed = self.store.update_weights(weights)
        except StoreUnavailable as exc:
            logger.error("Final NewsPageRank weights not stored: %s", exc)
            return 0
        if self.stats is not None:
            self.stats.set_value("newscrawl/store/weights_updated", changed)
        return changed

    def merge(self) -> Future[dict[str, Any]]:
        """Merge the staged writes of the shadow run into the live collections
        (:meth:`NewsStore.merge_staged`), then write the final weights held for it. The future
        gives the merge counts, or raises what the store raised."""
        if not self.stage_run:
            raise RuntimeError("merge() without a shadow run (bind_run(stage_run=...))")
        weights, self._weights = self._weights, {}
        return self.submit(self._merge_job, self.stage_run, weights)

    def _merge_job(self, run: str, weights: dict[str, float]) -> dict[str, Any]:
        if self.store is None:
            raise StoreUnavailable("no store")
        counts = self.store.merge_staged(run, now=self.clock())
        if weights:
            self._weights_job(weights)
        return counts

    # -- durability and close -------------------------------------------------------------------

    def durable_time(self) -> float:
        """``time.monotonic()`` (seconds) before which every page handed to :meth:`add_page` is
        stored or spilled and every crawl-state change reported is written; crawl state counts
        only once tracked (:meth:`track_state`) and not while its writes fail (``inf`` when
        nothing else waits)."""
        now = time.monotonic()
        with self._lock:
            pages = now if not self._buffer and not self._queued else self._pages_before
            state = math.inf if not self._state_used or self._state_failed else self._state_before
        return min(pages, state)

    def close(self) -> Future[None]:
        """Close the store after every job submitted so far; no job is accepted after it."""
        if self._closed:
            done: Future[None] = Future()
            done.set_result(None)
            return done
        self._closed = True
        future = self.submit(self._close_job)
        self._executor.shutdown(wait=False)
        return future

    def _close_job(self) -> None:
        if self.store is not None:
            self.store.close()

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(key, count)
