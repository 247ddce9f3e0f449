"""The outcome of a crawl: its summary block and its exit status, read from the run's stats.

Pure: a mapping of Scrapy stats in, text and a number out (no Scrapy import), so the
extension that prints the summary (:mod:`extensions.outcome`) and the ``scrapy crawl`` command
that turns it into the process exit status (:mod:`newscrawl.commands.crawl`) agree.

A run **failed** (exit status :data:`EXIT_FAILED`) when

* it ended for another reason than :data:`GOOD_FINISH_REASONS` (``store_unavailable``,
  ``bad_settings``, ``closespider_errorcount``, …);
* it fetched nothing because of errors: no page answered (status below 400; robots.txt does not
  count) and requests failed (exceptions such as DNS failures, or error statuses) — or no entry
  could be requested at all;
* it could not write to the store: items spilled or lost, crawl-state records not written, or
  the store unreachable when the run opened it.

A crawl that cannot start (a bad argument, setting or seeds file) exits with
:data:`EXIT_USAGE` before any of this. An interrupted run (``shutdown``: Ctrl-C, SIGTERM) is not
a failure by itself: a monitor is stopped that way. Its summary ends
``result: INTERRUPTED (SIGINT); saved: …`` (the signal as :mod:`extensions.outcome` saw it in
:data:`INTERRUPTED_KEY`) with what was written before the end (articles, crawl-state records).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Exit status of a run that ran and failed (see the module docstring).
EXIT_FAILED = 1
#: Exit status of a crawl that could not start (bad argument, setting or seeds).
EXIT_USAGE = 2
#: Finish reasons of a run that ended as planned.
GOOD_FINISH_REASONS = frozenset({
    "finished", "shutdown", "closespider_timeout", "closespider_itemcount",
    "closespider_pagecount", "closespider_timeout_no_item",
})
#: Stats key holding the exit status (set by :mod:`extensions.outcome` at the end of the run).
EXIT_STATUS_KEY = "newscrawl/run/exit_status"
#: Stats key holding the one line saying why the run failed.
FAILURE_KEY = "newscrawl/run/failure"
#: Stats key holding the name of the signal that stopped the run (``SIGINT``, ``SIGTERM``).
INTERRUPTED_KEY = "newscrawl/run/interrupted"

#: Plain words for the exceptions of failed downloads.
_ERROR_HINTS = {
    "CannotResolveHostError": "host name does not resolve (no network or DNS?)",
    "DNSLookupError": "host name does not resolve (no network or DNS?)",
    "DownloadConnectionRefusedError": "connection refused",
    "ConnectionRefusedError": "connection refused",
    "DownloadTimeoutError": "timed out",
    "TimeoutError": "timed out",
    "TCPTimedOutError": "timed out",
}


#: Exceptions that end a request on purpose (robots.txt, a HEAD that proved "unchanged").
_NOT_ERRORS = frozenset({"IgnoreRequest"})


@dataclass(frozen=True, slots=True)
class Outcome:
    """Exit status (0 = success) and, for a failure, one line saying why."""

    status: int
    why: str | None = None


def _int(stats: Mapping[str, Any], key: str) -> int:
    value = stats.get(key) or 0
    return int(value) if isinstance(value, (int, float)) else 0


def _sum(stats: Mapping[str, Any], prefix: str) -> int:
    return sum(int(v) for k, v in stats.items()
               if k.startswith(prefix) and isinstance(v, (int, float)))


def _status_counts(stats: Mapping[str, Any], prefix: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for key, value in stats.items():
        if key.startswith(prefix) and key[len(prefix):].isdigit() and isinstance(value, int):
            out[int(key[len(prefix):])] = value
    return out


def pages_fetched(stats: Mapping[str, Any]) -> int:
    """Answers with a status below 400 (HEAD probes and 304 included), robots.txt left out."""
    pages = _status_counts(stats, "downloader/response_status_count/")
    robots = _status_counts(stats, "robotstxt/response_status_count/")
    return sum(n - robots.get(code, 0) for code, n in pages.items() if code < 400)


def errors_by_kind(stats: Mapping[str, Any]) -> dict[str, int]:
    """Failed downloads by exception class (short name), error statuses (``HTTP 503``) and
    exceptions in spider callbacks (``spider KeyError``); robots.txt included; each attempt of a
    retried request counts."""
    kinds: dict[str, int] = {}
    prefix = "downloader/exception_type_count/"
    for key, value in stats.items():
        if key.startswith(prefix) and isinstance(value, int):
            name = key[len(prefix):].rsplit(".", 1)[-1]
            if name in _NOT_ERRORS:
                continue
            kinds[name] = kinds.get(name, 0) + value
    for code, n in sorted(_status_counts(stats, "downloader/response_status_count/").items()):
        if code >= 400:
            kinds[f"HTTP {code}"] = n
    for key, value in stats.items():  # bugs in a callback (counted by Scrapy's scraper)
        if (key.startswith("spider_exceptions/") and isinstance(value, int)
                and key != "spider_exceptions/count"):
            kinds[f"spider {key.split('/', 1)[1]}"] = value
    return kinds


def _describe_errors(kinds: Mapping[str, int]) -> str:
    parts = []
    for name, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        hint = _ERROR_HINTS.get(name)
        parts.append(f"{name} {n}" + (f": {hint}" if hint else ""))
    return ", ".join(parts)


def store_problem(stats: Mapping[str, Any]) -> str | None:
    """What the run could not write to its store, in one sentence; None when all was written."""
    spilled = _int(stats, "newscrawl/store/spilled")
    lost = _int(stats, "newscrawl/store/lost")
    state_spilled = _int(stats, "newscrawl/crawlstate/spilled")
    state_lost = _int(stats, "newscrawl/crawlstate/not_written")
    unrecorded = bool(stats.get("newscrawl/crawlstate/unrecorded"))
    unreachable = bool(stats.get("newscrawl/store/unreachable"))
    if not (spilled or lost or state_spilled or state_lost or unrecorded or unreachable):
        return None
    parts = []
    if unreachable:
        parts.append("it was unreachable when the run opened it")
    if spilled:
        parts.append(f"{spilled} item(s) spilled to disk (written at the next start)")
    if lost:
        parts.append(f"{lost} item(s) LOST")
    if state_spilled:
        parts.append(f"{state_spilled} crawl-state record(s) spilled to disk (written at the "
                     f"next start)")
    if state_lost:
        parts.append(f"{state_lost} crawl-state record(s) not written")
    if unrecorded:
        parts.append("this run's visit history was not recorded")
    return "could not write to the store: " + "; ".join(parts)


def run_outcome(stats: Mapping[str, Any]) -> Outcome:
    """The exit status of a finished run and why it failed (see the module docstring)."""
    reason = str(stats.get("finish_reason") or "finished")
    if reason not in GOOD_FINISH_REASONS:
        return Outcome(EXIT_FAILED, f"the crawl ended with {reason!r}")
    if pages_fetched(stats) == 0:
        kinds = errors_by_kind(stats)
        if kinds:
            failed = sum(kinds.values())
            return Outcome(EXIT_FAILED, f"fetched nothing: {failed} request(s) failed "
                                        f"({_describe_errors(kinds)})")
        refused = sum(int(v or 0) for k, v in stats.items()
                      if k.startswith("newscrawl/destination/") and k.count("/") == 2
                      and k != "newscrawl/destination/cross_domain")
        if refused:
            return Outcome(EXIT_FAILED, f"fetched nothing: {refused} request(s) refused by the "
                                        "destination policy (private or reserved addresses; "
                                        "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS)")
        # entries known and not due yet (a re-run soon after the last) are not a failure
        if ("newscrawl/seeds/requested" in stats and not _int(stats, "newscrawl/seeds/requested")
                and not _int(stats, "newscrawl/revisit/entry_not_due")):
            return Outcome(EXIT_FAILED, "fetched nothing: no entry URL could be requested")
    problem = store_problem(stats)
    if problem:
        return Outcome(EXIT_FAILED, problem)
    return Outcome(0)


def summary_lines(stats: Mapping[str, Any]) -> list[str]:
    """The run summary block: this run's articles, pages, errors, spills, time and result (the
    store's totals are the store's ``Results:`` line, :class:`extensions.store.StoreExtension`).
    """
    seconds = float(stats.get("elapsed_time_seconds") or 0.0)
    unchanged = _sum(stats, "newscrawl/revisit/unchanged/")
    lines = [
        f"articles: {_int(stats, 'newscrawl/store/new_articles')} new, "
        f"{_int(stats, 'newscrawl/crawlstate/versions')} changed (previous version kept), "
        f"{_int(stats, 'newscrawl/store/articles')} written; pages unchanged: {unchanged}",
        f"pages fetched: {pages_fetched(stats)} in {seconds:.0f} s "
        f"({_int(stats, 'downloader/request_count')} requests, "
        f"{_int(stats, 'newscrawl/seeds/requested')} entries, "
        f"{_int(stats, 'newscrawl/revisit/entry_not_due')} entries known and not due yet, "
        f"{_int(stats, 'newscrawl/seeds/skipped')} entries skipped)",
    ]
    kinds = errors_by_kind(stats)
    lines.append(f"errors: {_describe_errors(kinds)}" if kinds else "errors: none")
    spilled = _int(stats, "newscrawl/store/spilled")
    state_spilled = _int(stats, "newscrawl/crawlstate/spilled")
    if spilled or state_spilled:
        lines.append(f"spilled: {spilled} item(s), {state_spilled} crawl-state record(s) "
                     f"(written at the next start on this store)")
    outcome = run_outcome(stats)
    why = interrupted(stats)
    if outcome.status != 0:
        lines.append(f"result: FAILED - {outcome.why}" + (f" (interrupted: {why})" if why else ""))
    elif why:
        lines.append(f"result: INTERRUPTED ({why}); saved: {saved(stats)}")
    else:
        lines.append("result: OK")
    return lines


def interrupted(stats: Mapping[str, Any]) -> str | None:
    """What stopped an interrupted run (the signal's name, ``shutdown`` when the engine was
    closed that way without one), or None for a run that ended by itself.

    >>> interrupted({"finish_reason": "shutdown", INTERRUPTED_KEY: "SIGINT"})
    'SIGINT'
    >>> interrupted({"finish_reason": "finished"}) is None
    True
    """
    if str(stats.get("finish_reason") or "") != "shutdown":
        return None
    return str(stats.get(INTERRUPTED_KEY) or "shutdown")


def saved(stats: Mapping[str, Any]) -> str:
    """What a run wrote before it ended, in one phrase (articles and crawl-state records; what
    could not be written makes the run FAILED, :func:`store_problem`).

    >>> saved({"newscrawl/store/articles": 12, "newscrawl/crawlstate/written": 40})
    '12 article(s) and 40 crawl-state record(s) written to the store'
    """
    return (f"{_int(stats, 'newscrawl/store/articles')} article(s) and "
            f"{_int(stats, 'newscrawl/crawlstate/written')} crawl-state record(s) written to "
            "the store")
