"""Extension keeping the full-text index current and firing saved searches during a crawl.

At ``spider_opened``, once the store is open (:meth:`extensions.store.StoreExtension.open`), it
opens the index of the run's database in the data folder
(:func:`newscrawl.search.index.index_path`; a damaged file is replaced) and catches it up with
the articles the store holds (:func:`newscrawl.searching.catch_up`: everything for a new index,
else what was written since its last sync — spills replayed, crawls run without it), on the
store's writer thread. From then on every batch of pages the writer stores in place is indexed
right after (:attr:`newscrawl.store.writer.BufferedWriter.listeners`), and the articles whose
title or text is new go through the saved searches of ``<data>/alerts.sqlite``
(:meth:`newscrawl.search.alerts.AlertBook.match`; spike alerts are checked at most every
:data:`SPIKE_CHECK_INTERVAL` seconds); notifications are sent by a
:class:`~newscrawl.search.alerts.Sender` thread, so a slow webhook never holds up a write.

In the shadow update mode pages reach the live collection at the merge: the close step catches
the index up (and fires the alerts) after it. At the close the sender is given
``NEWSCRAWL_ALERTS_DRAIN`` seconds for what is due; the rest stays queued in the file.

Settings: ``NEWSCRAWL_SEARCH_ENABLED`` (off: ``NotConfigured``), ``NEWSCRAWL_ALERTS_ENABLED``,
``NEWSCRAWL_ALERTS_RETRIES``, ``NEWSCRAWL_ALERTS_BACKOFF``, ``NEWSCRAWL_ALERTS_TIMEOUT``,
``NEWSCRAWL_ALERTS_DRAIN``. Stats: ``newscrawl/search/<indexed|caught_up|errors>``,
``newscrawl/alerts/<fired|sent|retried|failed|errors>``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from scrapy import signals

from extensions.store import StoreExtension, wait_for
from newscrawl.components import require_enabled, settings_kwargs
from newscrawl.embedded import resolve_data_dir
from newscrawl.search.alerts import AlertBook, Sender, alerts_path
from newscrawl.search.index import SearchIndex, index_path
from newscrawl.searching import catch_up
from newscrawl.store import spill_target

logger = logging.getLogger(__name__)

#: Seconds between two checks of the spike alerts (each counts the matches of a day and 14).
SPIKE_CHECK_INTERVAL = 60.0


class SearchExtension:
    """The run's search index and alerts (see the module docstring).

    Args:
        stats: the crawler's stats collector.
        alerts: fire saved searches; retries, backoff, timeout, drain: of the sender (seconds).
        crawler: where the run's :class:`StoreExtension` is found at ``spider_opened`` (its
            writer thread does the index writes); tests may :meth:`attach` one instead.
    """

    def __init__(self, stats: Any, *, alerts: bool = True, retries: int = 5,
                 backoff: float = 1.0, timeout: float = 10.0, drain: float = 5.0,
                 crawler: Any = None) -> None:
        self.stats, self.crawler = stats, crawler
        self.alerts_enabled = alerts
        self.retries, self.backoff, self.timeout, self.drain = retries, backoff, timeout, drain
        self.store: StoreExtension | None = None
        self.index: SearchIndex | None = None
        self.book: AlertBook | None = None
        self.sender: Sender | None = None
        self._spikes_checked = 0.0  # time.monotonic() of the last spike check

    @classmethod
    def from_crawler(cls, crawler: Any) -> SearchExtension:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_SEARCH_ENABLED", "NEWSCRAWL_MONGO_ENABLED")
        ext = cls(crawler.stats, alerts=s.getbool("NEWSCRAWL_ALERTS_ENABLED"), crawler=crawler,
                  **settings_kwargs(s, retries="NEWSCRAWL_ALERTS_RETRIES",
                                    backoff="NEWSCRAWL_ALERTS_BACKOFF",
                                    timeout="NEWSCRAWL_ALERTS_TIMEOUT", drain="NEWSCRAWL_ALERTS_DRAIN"))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        return ext

    def attach(self, store: StoreExtension) -> None:
        """Listen to ``store``'s writer and close with it (done at ``spider_opened``: extensions
        cannot reach each other while Scrapy builds them)."""
        self.store = store
        store.writer.listeners.append(self.stored)
        store.at_close(self.close)

    async def spider_opened(self, spider: Any) -> None:
        """Open the index and the alerts once the store is open, and catch the index up."""
        if self.store is None:
            store = self.crawler.get_extension(StoreExtension) if self.crawler else None
            if store is None:
                logger.warning("No store extension: no search index and no alerts in this run")
                return
            self.attach(store)
        assert self.store is not None
        try:
            await self.store.open(spider.name)
        except Exception:  # noqa: BLE001 - the store extension closes the spider and says why
            return
        await wait_for(self.store.writer.submit(self._open))

    def paths(self) -> tuple[Path, Path]:
        """``(index file, alerts file)`` of the run's database in its data folder."""
        assert self.store is not None
        folder = Path(resolve_data_dir(self.store.data_dir))
        target = spill_target(self.store.uri, self.store.database,
                              embedded=self.store.embedded is not None)
        return index_path(folder, target), alerts_path(folder)

    def _open(self) -> None:
        """Writer thread: open the index and alerts, catch up (failures logged and counted: a
        crawl without search still stores every page)."""
        index_file, alerts_file = self.paths()
        try:
            self.index = SearchIndex(index_file)
            if self.alerts_enabled:
                self.book = AlertBook(alerts_file)
                self.sender = Sender(alerts_file, retries=self.retries, backoff=self.backoff,
                                     timeout=self.timeout, on_event=self._sender_event)
                self.sender.start()
        except Exception:  # noqa: BLE001
            logger.exception("Cannot open the search index %s / alerts %s: no search updates "
                             "in this run", index_file, alerts_file)
            self.stats.inc_value("newscrawl/search/errors")
            self.index = None
            return
        self._catch_up()

    def _catch_up(self) -> None:
        assert self.store is not None
        store = self.store.writer.store
        if self.index is None or store is None or not self.store.connected:
            return
        try:
            counts = catch_up(store, self.index, on_changed=self._alert)
        except Exception:  # noqa: BLE001 - the index stays as it was; the next start retries
            logger.exception("Could not catch the search index up with the store")
            self.stats.inc_value("newscrawl/search/errors")
            return
        done = counts["added"] + counts["changed"]
        if done:
            logger.info("Search index %s caught up: %s", self.index.path, counts)
            self.stats.inc_value("newscrawl/search/caught_up", done)

    def stored(self, batch: list[dict[str, Any]]) -> None:
        """Writer thread, after a batch was stored in place: index its articles, fire alerts."""
        if self.index is None:
            return
        articles = [doc for doc in batch if doc.get("kind") == "article"]
        if not articles:
            return
        try:
            counts, changed = self.index.upsert_changes(articles)
        except Exception:  # noqa: BLE001 - the catch-up at the next start indexes them
            logger.exception("Could not index %d stored article(s)", len(articles))
            self.stats.inc_value("newscrawl/search/errors")
            return
        if counts["added"] + counts["changed"]:
            self.stats.inc_value("newscrawl/search/indexed", counts["added"] + counts["changed"])
        self._alert(changed)

    def _alert(self, fps: list[str]) -> None:
        if self.book is None or self.index is None or not fps:
            return
        try:
            made = self.book.match(self.index, fps, stored_at=time.time())
        except Exception:  # noqa: BLE001 - alerts must not stop the crawl
            logger.exception("Alerts failed on %d article(s)", len(fps))
            self.stats.inc_value("newscrawl/alerts/errors")
            return
        if time.monotonic() - self._spikes_checked >= SPIKE_CHECK_INTERVAL:
            self._spikes_checked = time.monotonic()
            try:
                made += self.book.check_spikes(self.index)
            except Exception:  # noqa: BLE001 - alerts must not stop the crawl
                logger.exception("Spike alerts failed")
                self.stats.inc_value("newscrawl/alerts/errors")
        if made:
            self.stats.inc_value("newscrawl/alerts/fired", made)
            if self.sender is not None:
                self.sender.wake()

    def _sender_event(self, event: str) -> None:
        self.stats.inc_value(f"newscrawl/alerts/{event}")

    async def close(self) -> None:
        """Close step: catch up after a shadow merge, let the sender drain, close the files."""
        assert self.store is not None
        writer = self.store.writer
        if writer.stage_run and writer.store is not None and not writer.gave_up:
            await wait_for(writer.submit(self._catch_up))
        if self.sender is not None:
            sender, self.sender = self.sender, None
            await wait_for(writer.submit(sender.stop, drain=self.drain))
        if self.index is not None:
            index, self.index = self.index, None
            await wait_for(writer.submit(index.close))
        if self.book is not None:
            book, self.book = self.book, None
            await wait_for(writer.submit(book.close))
