"""``scrapy crawl`` for newscrawl: Scrapy's command, with an exit status that tells the truth.

Scrapy's ``crawl`` exits 1 only when the crawler cannot be built (``bootstrap_failed``), after
a traceback, and 0 for every run that started, whatever happened in it. This command (the
project's ``COMMANDS_MODULE`` overrides Scrapy's of the same name, so ``scrapy crawl news``,
``bin/crawl``, ``make crawl`` and scrapyd jobs all use it):

* a crawl that cannot start because of its input — a bad spider argument, setting value or
  seeds file (a :class:`ValueError` from the spider or the add-ons) — prints one line,
  ``newscrawl: cannot start: <why>``, and exits :data:`~newscrawl.outcome.EXIT_USAGE` (2); any
  other start failure keeps Scrapy's traceback and exit status 1;
* a run that failed (:func:`newscrawl.outcome.run_outcome`: fetched nothing because of errors,
  could not write to the store, ended for a bad reason) prints ``newscrawl: crawl FAILED:
  <why>`` last and exits :data:`~newscrawl.outcome.EXIT_FAILED` (1); the status is decided by
  :class:`extensions.outcome.OutcomeExtension` and read from the run's stats.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from newscrawl.outcome import EXIT_FAILED, EXIT_STATUS_KEY, EXIT_USAGE, FAILURE_KEY


def _start_error(exc: BaseException | None) -> str | None:
    """The one line for an input error that stops a crawl before it starts, else None."""
    if isinstance(exc, (ValueError, UsageError)):
        return f"newscrawl: cannot start: {exc}"
    return None


class Command(ScrapyCrawlCommand):
    """Scrapy's ``crawl`` with the exit statuses of the module docstring."""

    def run(self, args: list[str], opts: Any) -> None:
        if len(args) < 1:
            raise UsageError
        if len(args) > 1:
            raise UsageError("running 'scrapy crawl' with more than one spider is not supported")
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        start_errors: list[str] = []

        def input_error(exc: BaseException | None) -> bool:
            """Print the one line of an input error; False for any other error."""
            line = _start_error(exc)
            if line is None:
                return False
            start_errors.append(line)
            print(line, file=sys.stderr, flush=True)
            return True

        result: Any = self.crawler_process.crawl(crawler, **opts.spargs)
        if hasattr(result, "addErrback"):  # a Deferred (CrawlerProcess): consume input errors
            result.addErrback(lambda failure: None if input_error(failure.value) else failure)
        else:  # an asyncio task (AsyncCrawlerProcess)
            def done(task: Any) -> None:
                exc = None if task.cancelled() else task.exception()
                if exc is not None and not input_error(exc):
                    traceback.print_exception(exc)

            result.add_done_callback(done)
        self.crawler_process.start()
        if start_errors:
            self.exitcode = EXIT_USAGE
        elif self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        else:
            status = crawler.stats.get_value(EXIT_STATUS_KEY) or 0
            if status:
                why = crawler.stats.get_value(FAILURE_KEY) or "see the log"
                print(f"newscrawl: crawl FAILED: {why}", file=sys.stderr, flush=True)
                self.exitcode = int(status) if isinstance(status, int) else EXIT_FAILED
