"""Extension telling how a run went: the start line, the summary block, the exit status.

* At ``spider_opened``: nothing is printed yet; the spider logs the effective depth, strategy,
  budget and store in one line when it starts (:meth:`spiders.news.NewsSpider.start`).
* At the end (the last close step of :class:`extensions.store.StoreExtension`, after the last
  page and crawl-state record are written or spilled; at ``spider_closed`` without a store): the
  run summary block (:func:`newscrawl.outcome.summary_lines`: the store's ``Results:`` line,
  this run's new / changed / unchanged articles, pages fetched, errors by kind, spilled items,
  time, and ``result: OK``, ``result: FAILED - why`` or, for a run stopped by a signal,
  ``result: INTERRUPTED (SIGINT); saved: …``), and the exit status in the stats
  (``newscrawl/run/exit_status``, ``newscrawl/run/failure``), which the project's ``crawl``
  command (:mod:`newscrawl.commands.crawl`) makes the process exit status.
* While it runs, a filter on the log handlers keeps expected network failures (what Scrapy
  retries: ``RETRY_EXCEPTIONS``, e.g. a name that does not resolve) to one line each instead of a
  traceback (one ERROR line per failed request: Scrapy's "Gave up retrying" is at DEBUG,
  ``RETRY_GIVE_UP_LOG_LEVEL`` in :mod:`newscrawl.settings`; a failed robots.txt says so), logs only the first 20 "Ignoring response <404 …>" lines (the summary counts every
  error status), and removes credentials from every URL in a log line
  (:func:`newscrawl.algorithms.urls.redact_credentials`).

* Which signal stopped the run: Scrapy's crawler process logs ``Received SIGINT, shutting down
  gracefully`` (logger ``scrapy.crawler``, the signal name in the record's arguments) before
  it closes the spider; :class:`SignalNameFilter` on that logger keeps the name in the stats
  (:data:`newscrawl.outcome.INTERRUPTED_KEY`) for the summary. (With ``LOG_LEVEL`` above
  ``INFO`` that line is never made: the summary says ``INTERRUPTED (shutdown)``.)

Settings: ``NEWSCRAWL_OUTCOME_ENABLED`` (off raises ``NotConfigured``).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.utils.misc import load_object

from extensions.store import StoreExtension
from newscrawl.algorithms.urls import redact_credentials
from newscrawl.components import require_enabled
from newscrawl.outcome import (EXIT_STATUS_KEY, FAILURE_KEY, INTERRUPTED_KEY, run_outcome,
                               summary_lines)

logger = logging.getLogger(__name__)


class LogHygieneFilter(logging.Filter):
    """A log-handler filter: credentials out of every message; one line, no traceback, for an
    expected network failure (an exception of one of ``network_errors``); at most
    ``ignored_lines`` of Scrapy's "Ignoring response <404 …>" lines (``HttpErrorMiddleware``,
    one per answer with an error status: thousands on a site of dead links), the last of them
    saying that the summary's ``errors:`` line counts them all.

    Args:
        network_errors: exception classes whose tracebacks say nothing useful.
        ignored_lines: "Ignoring response" lines kept per run (lines; 0 keeps none).
    """

    #: Logger of Scrapy's ``HttpErrorMiddleware`` (its INFO line per ignored answer).
    HTTPERROR_LOGGER = "scrapy.spidermiddlewares.httperror"
    #: Logger and message of Scrapy's ``RobotsTxtMiddleware`` when robots.txt cannot be fetched.
    ROBOTSTXT_LOGGER = "scrapy.downloadermiddlewares.robotstxt"
    ROBOTSTXT_ERROR = "Error downloading %(request)s: %(f_exception)s"

    def __init__(self, network_errors: tuple[type[BaseException], ...], ignored_lines: int = 20) -> None:
        super().__init__()
        self.network_errors = network_errors
        self.ignored_lines = ignored_lines
        self.ignored = 0  # "Ignoring response" records seen this run

    def _ignored_response(self, record: logging.LogRecord) -> bool:
        """False for an "Ignoring response" record past the cap (the same record passes every
        handler's filter: it is counted once)."""
        n = getattr(record, "ignored_response_seq", None)
        if n is None:
            self.ignored += 1
            n = self.ignored
            setattr(record, "ignored_response_seq", n)
        if n > self.ignored_lines:
            return False
        if n == self.ignored_lines:
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a broken record is the logging module's to report
                return True
            record.msg = (f"{message} (further answers with an error status are not logged one "
                          "by one: the summary's errors line counts them all)")
            record.args = None
        return True

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == self.HTTPERROR_LOGGER and record.levelno == logging.INFO \
                and not self._ignored_response(record):
            return False
        if record.name == self.ROBOTSTXT_LOGGER and record.msg == self.ROBOTSTXT_ERROR:
            # Scrapy names the page request that asked for robots.txt: say what failed.
            record.msg = "Error downloading robots.txt for %(request)s: %(f_exception)s"
        exc = record.exc_info[1] if record.exc_info else None
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken record is the logging module's to report
            return True
        clean = message
        if exc is not None and isinstance(exc, self.network_errors):
            text = str(exc)
            if text and text not in message:
                clean = f"{message}: {text}"
            record.exc_info, record.exc_text = None, None
        clean = redact_credentials(clean)
        if clean != message:
            record.msg, record.args = clean, None
        return True


class SignalNameFilter(logging.Filter):
    """A filter on Scrapy's ``scrapy.crawler`` logger that passes every record and keeps the
    name of the shutdown signal of ``Received SIGINT, shutting down gracefully`` in the stats
    (the first one: a second signal forces an unclean stop, no summary follows).

    Args:
        stats: the crawler's stats collector.
    """

    LOGGER = "scrapy.crawler"

    def __init__(self, stats: Any) -> None:
        super().__init__()
        self.stats = stats

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if (isinstance(args, dict) and isinstance(args.get("signame"), str)
                and str(record.msg).startswith("Received ")
                and self.stats.get_value(INTERRUPTED_KEY) is None):
            self.stats.set_value(INTERRUPTED_KEY, args["signame"])
        return True


def _network_errors(names: list[Any]) -> tuple[type[BaseException], ...]:
    found = []
    for name in names:
        try:
            cls = load_object(name) if isinstance(name, str) else name
        except (ImportError, AttributeError, ValueError):
            continue
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls is not OSError:
            found.append(cls)
    return tuple(found)


class OutcomeExtension:
    """The run's summary and exit status (see the module docstring).

    Args:
        crawler: the crawler (its stats; its store extension is found at ``spider_opened``).
        network_errors: exception classes logged in one line (``RETRY_EXCEPTIONS``).
    """

    def __init__(self, crawler: Any, network_errors: tuple[type[BaseException], ...] = ()) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.filter = LogHygieneFilter(network_errors)
        self.signal_filter = SignalNameFilter(crawler.stats)
        self.store: StoreExtension | None = None
        self._handlers: list[logging.Handler] = []
        self._done = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> OutcomeExtension:
        require_enabled(crawler.settings, "NEWSCRAWL_OUTCOME_ENABLED")
        ext = cls(crawler, _network_errors(crawler.settings.getlist("RETRY_EXCEPTIONS")))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.remove_filter, signal=signals.engine_stopped)
        return ext

    def install_filter(self) -> None:
        """Put the log filter on every handler of the root logger (Scrapy's among them; Scrapy
        replaces its handler after building the extensions, so this runs at ``spider_opened``)."""
        for handler in logging.getLogger().handlers:
            if self.filter not in handler.filters:
                handler.addFilter(self.filter)
                self._handlers.append(handler)

    def remove_filter(self) -> None:
        for handler in self._handlers:
            handler.removeFilter(self.filter)
        self._handlers = []
        logging.getLogger(SignalNameFilter.LOGGER).removeFilter(self.signal_filter)

    def spider_opened(self, spider: Any) -> None:
        """Install the log filter; become the store's last close step (after the crawl
        state's)."""
        self.install_filter()
        logging.getLogger(SignalNameFilter.LOGGER).addFilter(self.signal_filter)
        self.store = self.crawler.get_extension(StoreExtension)
        if self.store is not None:
            self.store.at_close(self.finish)

    async def spider_closed(self, spider: Any, reason: str = "") -> None:
        """Without a store, the summary is written here."""
        if self.store is None:
            await self.finish()

    async def finish(self) -> None:
        """Log the summary block and put the exit status in the stats."""
        if self._done:
            return
        self._done = True
        results = await self.store.results() if self.store is not None else None
        stats = self.stats.get_stats()
        outcome = run_outcome(stats)
        self.stats.set_value(EXIT_STATUS_KEY, outcome.status)
        lines = summary_lines(stats)
        head = f"Results: {results}" if results else "Results: the store cannot be counted"
        logger.log(logging.INFO if outcome.status == 0 else logging.ERROR, "%s\n  %s", head,
                   "\n  ".join(lines))
        if outcome.why:
            self.stats.set_value(FAILURE_KEY, outcome.why)
