"""newscrawl.outcome (the verdict over a run's stats) and extensions.outcome (log hygiene)."""

import logging

import pytest
from scrapy.exceptions import CannotResolveHostError

from extensions.outcome import LogHygieneFilter
from newscrawl.outcome import (
    EXIT_FAILED,
    errors_by_kind,
    pages_fetched,
    run_outcome,
    summary_lines,
)

GOOD = {"finish_reason": "finished", "downloader/response_status_count/200": 12,
        "robotstxt/response_status_count/200": 1, "downloader/response_status_count/404": 1,
        "newscrawl/store/new_articles": 9, "newscrawl/store/articles": 9,
        "newscrawl/seeds/requested": 1, "elapsed_time_seconds": 3.2}
NO_NETWORK = {"finish_reason": "finished", "newscrawl/seeds/requested": 2,
              "downloader/exception_type_count/scrapy.exceptions.CannotResolveHostError": 12,
              "downloader/exception_type_count/scrapy.exceptions.IgnoreRequest": 2}


def test_a_good_run_is_ok():
    assert run_outcome(GOOD).status == 0
    assert pages_fetched(GOOD) == 11  # robots.txt is not a page; the 404 is not fetched
    lines = summary_lines(GOOD)
    assert lines[0].startswith("articles: 9 new, 0 changed")
    assert "errors: HTTP 404 1" in lines and lines[-1] == "result: OK"


def test_fetching_nothing_because_of_errors_fails_with_one_line():
    outcome = run_outcome(NO_NETWORK)
    assert outcome.status == EXIT_FAILED
    assert outcome.why == ("fetched nothing: 12 request(s) failed (CannotResolveHostError 12: "
                           "host name does not resolve (no network or DNS?))")
    assert errors_by_kind(NO_NETWORK) == {"CannotResolveHostError": 12}  # IgnoreRequest is no error
    assert summary_lines(NO_NETWORK)[-1] == f"result: FAILED - {outcome.why}"


def test_error_statuses_only_also_fail():
    stats = {"finish_reason": "finished", "downloader/response_status_count/503": 3,
             "robotstxt/response_status_count/404": 1, "downloader/response_status_count/404": 1}
    assert run_outcome(stats).why.startswith("fetched nothing: 4 request(s) failed (HTTP 503 3")


def test_callback_errors_are_a_kind_of_error():
    assert errors_by_kind({**GOOD, "spider_exceptions/KeyError": 2,
                           "spider_exceptions/count": 2}) == {"HTTP 404": 1, "spider KeyError": 2}


def test_no_entry_requested_fails():
    assert run_outcome({"newscrawl/seeds/requested": 0}).why == (
        "fetched nothing: no entry URL could be requested")


def test_entries_not_due_yet_are_not_a_failure():
    # a re-run soon after the last: the known entry pages are not due, nothing is fetched
    assert run_outcome({"newscrawl/seeds/requested": 0,
                        "newscrawl/revisit/entry_not_due": 2}).status == 0


@pytest.mark.parametrize("extra, why", [
    ({"newscrawl/store/spilled": 4}, "could not write to the store: 4 item(s) spilled to disk"),
    ({"newscrawl/store/lost": 1}, "could not write to the store: 1 item(s) LOST"),
    ({"newscrawl/crawlstate/spilled": 7}, "could not write to the store: 7 crawl-state record(s) spilled"),
    ({"newscrawl/crawlstate/not_written": 2}, "could not write to the store: 2 crawl-state record(s) not written"),
    ({"newscrawl/store/unreachable": 1, "newscrawl/crawlstate/unrecorded": 1},
     "could not write to the store: it was unreachable when the run opened it; this run's visit history"),
    ({"finish_reason": "store_unavailable"}, "the crawl ended with 'store_unavailable'"),
    ({"finish_reason": "closespider_errorcount"}, "the crawl ended with 'closespider_errorcount'"),
])
def test_store_problems_and_bad_finish_reasons_fail(extra, why):
    outcome = run_outcome({**GOOD, **extra})
    assert outcome.status == EXIT_FAILED and outcome.why.startswith(why)


def test_an_interrupted_run_is_not_a_failure_by_itself():
    assert run_outcome({**GOOD, "finish_reason": "shutdown"}).status == 0


def _record(msg, args=(), exc=None):
    exc_info = (type(exc), exc, None) if exc else None
    return logging.LogRecord("scrapy.core.scraper", logging.ERROR, __file__, 1, msg, args, exc_info)


def test_network_failures_are_one_line_and_credentials_never_reach_the_log():
    hygiene = LogHygieneFilter((CannotResolveHostError,))
    record = _record("Error downloading %(request)s",
                     ({"request": "<GET http://ann:secret@a.invalid/>"},),
                     CannotResolveHostError("DNS lookup failed: a.invalid"))
    assert hygiene.filter(record)
    assert record.exc_info is None
    assert record.getMessage() == "Error downloading <GET http://a.invalid/>: DNS lookup failed: a.invalid"
    other = _record("boom %s", ("x",), KeyError("k"))
    hygiene.filter(other)
    assert other.exc_info is not None and other.getMessage() == "boom x"  # bugs keep their traceback


def test_a_failed_robots_txt_is_named_in_its_one_line():
    hygiene = LogHygieneFilter((CannotResolveHostError,))
    record = logging.LogRecord(LogHygieneFilter.ROBOTSTXT_LOGGER, logging.ERROR, __file__, 1,
                               "Error downloading %(request)s: %(f_exception)s",
                               ({"request": "<GET http://a.invalid/x>", "f_exception": "DNS"},), None)
    assert hygiene.filter(record) and hygiene.filter(record)  # two handlers
    assert record.getMessage() == "Error downloading robots.txt for <GET http://a.invalid/x>: DNS"


def test_a_run_whose_every_request_was_refused_by_the_destination_policy_fails():
    outcome = run_outcome({"newscrawl/seeds/requested": 1, "newscrawl/destination/loopback": 2})
    assert outcome.status == 1 and "2 request(s) refused by the destination policy" in outcome.why


def test_ignored_error_answers_are_logged_up_to_the_cap_and_counted_once_per_record():
    hygiene = LogHygieneFilter((), ignored_lines=3)

    class Response:  # what the message's %r shows of a Scrapy response
        def __init__(self, n: int) -> None:
            self.n = n

        def __repr__(self) -> str:
            return f"<404 https://a.example/{self.n}>"

    def ignored(n: int) -> logging.LogRecord:
        return logging.LogRecord(LogHygieneFilter.HTTPERROR_LOGGER, logging.INFO, __file__, 1,
                                 "Ignoring response %(response)r: HTTP status code is not handled or not allowed",
                                 ({"response": Response(n)},), None)

    records = [ignored(n) for n in range(10)]
    # two handlers: every record passes both filters, and is counted once
    kept = [r for r in records if hygiene.filter(r) and hygiene.filter(r)]
    assert [r.getMessage().split(">")[0] for r in kept] == [f"Ignoring response <404 https://a.example/{n}"
                                                           for n in range(3)]
    assert "the summary's errors line counts them all" in kept[-1].getMessage()
    assert "counts them all" not in kept[0].getMessage()
    assert hygiene.ignored == 10
    # other lines of the same logger level and other loggers are never dropped
    other = logging.LogRecord("scrapy.core.engine", logging.INFO, __file__, 1, "Closing spider", (), None)
    assert hygiene.filter(other)


def test_an_interrupted_run_says_so_with_the_signal_and_what_was_saved():
    stats = {**GOOD, "finish_reason": "shutdown", "newscrawl/run/interrupted": "SIGINT",
             "newscrawl/crawlstate/written": 30}
    assert run_outcome(stats).status == 0  # a monitor is stopped that way: not a failure
    assert summary_lines(stats)[-1] == (
        "result: INTERRUPTED (SIGINT); saved: 9 article(s) and 30 crawl-state record(s) written "
        "to the store")
    # closed as "shutdown" without a signal seen; and a finished run is not interrupted
    assert summary_lines({**GOOD, "finish_reason": "shutdown"})[-1].startswith(
        "result: INTERRUPTED (shutdown); saved: 9 article(s)")
    assert summary_lines({**GOOD, "newscrawl/run/interrupted": "SIGINT"})[-1] == "result: OK"
    # a failed run stays FAILED, and says it was interrupted
    failed = {**NO_NETWORK, "finish_reason": "shutdown", "newscrawl/run/interrupted": "SIGTERM"}
    assert summary_lines(failed)[-1].startswith("result: FAILED - fetched nothing")
    assert summary_lines(failed)[-1].endswith("(interrupted: SIGTERM)")


def test_the_signal_name_is_taken_from_scrapys_shutdown_line():
    from scrapy.utils.test import get_crawler

    from extensions.outcome import SignalNameFilter

    crawler = get_crawler()
    log = logging.getLogger("scrapy.crawler")
    level = log.level
    log.setLevel(logging.INFO)  # as in a crawl (LOG_LEVEL INFO)
    filt = SignalNameFilter(crawler.stats)
    log.addFilter(filt)
    try:
        log.info("Received %(signame)s, shutting down gracefully. Send again to force ",
                 {"signame": "SIGINT"})
        log.info("Received %(signame)s twice, forcing unclean shutdown", {"signame": "SIGTERM"})
        log.info("Overridden settings: %(s)s", {"s": {}})
    finally:
        log.removeFilter(filt)
        log.setLevel(level)
    assert crawler.stats.get_value("newscrawl/run/interrupted") == "SIGINT"
