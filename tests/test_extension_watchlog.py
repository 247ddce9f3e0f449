"""The watch's status line says what comes next, why it is idle, and when the first sweep is
done (extensions/watchlog.py over newscrawl/algorithms/watchstatus.py), on a run state built
the way a crawl builds it."""

from __future__ import annotations

import logging

from extensions.crawlstate import CrawlStateExtension
from extensions.watchlog import WatchLog
from newscrawl.algorithms.revisitplan import RevisitConfig, new_record, record_visit
from newscrawl.algorithms.watch import RateBudget
from newscrawl.algorithms.watchstatus import clock
from newscrawl.crawlstate import to_doc
from newscrawl.fingerprint import NewsRequestFingerprinter
from tests.conftest import component_crawler

NOW = 1_733_311_900.0  # 2024-12-04 11:31:40 UTC
HOME = "https://s.example/"
CFG = RevisitConfig()
fp = NewsRequestFingerprinter().page_fp


def _record(url, role, *, visited_at=None, due=None):
    rec = new_record(fp(url), url, now=NOW - 100, role=role, request={"entry_url": HOME, "depth": 1})
    if visited_at is not None:
        rec = record_visit(rec, now=visited_at, cfg=CFG, status=200, how="first")
    if due is not None:
        rec["due"] = due
    return rec


def _log(records, **settings):
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": NOW, **settings})
    state = crawler.get_extension(CrawlStateExtension).state
    state.load([to_doc(r) for r in records])
    for r in records:  # the load re-plans due times: put the test's back
        if "due" in r:
            state.get(r["fp"])["due"] = r["due"]
    log = WatchLog(crawler.stats, interval=60)
    log.state = state  # as start() sets it, without the looping calls
    log._started = NOW - 30
    return log, state, crawler.stats


def _channels(n, *, first_due):
    return [_record(f"https://s.example/ressort{i}/", "node", visited_at=NOW - 20,
                    due=first_due + 10 * i) for i in range(n)]


def test_each_status_line_says_when_the_next_visit_is_and_how_many_sources_are_not_due(caplog):
    records = [_record(HOME, "entry", visited_at=NOW - 30, due=NOW + 600), *_channels(3, first_due=NOW + 90)]
    log, state, stats = _log(records)
    state.spent = 0
    stats.set_value("downloader/request_count", 12)  # requests were sent this interval
    caplog.set_level(logging.INFO, logger="extensions.watchlog")
    line = log.emit()
    assert line.endswith(f"next visit {clock(NOW + 90)}; 4 sources not due"), line
    assert clock(NOW + 90) == "11:33:10 UTC"
    assert stats.get_value("newscrawl/watch/sources_not_due") == 4
    assert line in caplog.text


def test_an_idle_watch_says_when_it_will_look_again_and_why():
    records = [_record(HOME, "entry", visited_at=NOW - 30, due=NOW + 900),
               *_channels(2, first_due=NOW + 420)]
    log, state, stats = _log(records)
    line = log.emit()  # no request in the interval
    assert (f"idle: nothing is due before {clock(NOW + 420)} (in 420 s: "
            "https://s.example/ressort0/, a source); looking again then") in line, line
    assert stats.get_value("newscrawl/watch/idle_intervals") == 1
    # pages due but the request rate has no token: that is the reason, with the wait
    records[1]["due"] = NOW - 5
    log, state, stats = _log(records)
    state.rate = RateBudget(60.0, now=NOW)  # one request a minute
    state.rate.try_spend("s.example", NOW)  # the bucket is empty now
    line = log.emit()
    assert "idle: 1 page(s) due wait for the request rate (next token in" in line, line
    # a watch that ends before anything is due says so
    log, state, stats = _log(records[:1] + records[2:])
    log.watch_end = NOW + 60
    assert f"nothing is due before the watch ends at {clock(NOW + 60)}" in log.emit()


def test_the_first_sweep_line_comes_once_when_every_source_was_visited(caplog):
    records = [_record(HOME, "entry", visited_at=NOW - 30, due=NOW + 600),
               *_channels(3, first_due=NOW + 4),
               _record("https://s.example/ressort9/", "node")]  # listed, not visited yet
    log, state, stats = _log(records)
    caplog.set_level(logging.INFO, logger="extensions.watchlog")
    assert log.check_sweep() is None  # one source still waits for its first visit
    late = state.get(fp("https://s.example/ressort9/"))
    late.update(record_visit(late, now=NOW - 1, cfg=CFG, status=200, how="first"))
    late["due"] = NOW + 700
    state.expanding.add(late["fp"])  # its links are still being recorded
    assert log.check_sweep() is None
    state.expanding.clear()
    state.rate = RateBudget(3600.0, now=NOW)
    line = log.check_sweep()
    assert line == "First sweep done: watching 5 sources, first revisits in 4–700 s, budget 3600/h"
    assert log.check_sweep() is None and caplog.text.count("First sweep done") == 1
    assert stats.get_value("newscrawl/watch/first_sweep_seconds") == 30.0
