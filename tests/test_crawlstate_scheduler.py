"""The channel scheduler on the crawl path: channel records' due times come from it in batch
re-runs (record_visit, the re-plan at load, the due requests, home pages), and its estimates
survive a restart — through the crawl-state documents and through the embedded store."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from scrapy import signals
from scrapy.http import Request

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.algorithms.revisitplan import (
    SCHEDULER_ESTIMATOR,
    RevisitConfig,
    new_record,
    record_visit,
    replan_channels,
    restore_channel,
)
from newscrawl.crawlstate import RunState, to_doc
from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.store import NewsStore
from spiders.news import NewsSpider
from spiders.requests import due_channel_requests, seed_request
from tests.conftest import component_crawler, open_spider

UTC = dt.timezone.utc
H = 3600.0
HOME = "https://s.example/"
BUSY = "https://s.example/politik/"
QUIET = "https://s.example/kultur/"
T0 = 1_730_000_000.0
fp = NewsRequestFingerprinter().page_fp
CFG = RevisitConfig(min_interval=60.0, max_interval=7 * 86400.0, channel_rate=4.0)


def _history(state: RunState, hours: int = 24) -> float:
    """Visit the home page and two channels every 10 minutes for ``hours``: politik shows 2
    new article links per visit, kultur one every 6 visits, the home page no new channel."""
    t = T0
    for k in range(hours * 6 + 1):
        t = T0 + k * 600.0
        state.clock = _Fixed(t)
        first = k == 0
        how = "first" if first else "fingerprint"
        state.observe(fp(BUSY), BUSY, role="node", status=200, how=how, changed=not first,
                      host="s.example", new_links=20 if first else 2, listed=20)
        state.observe(fp(QUIET), QUIET, role="node", status=200, how=how, changed=k % 6 == 0,
                      host="s.example", new_links=20 if first else int(k % 6 == 0), listed=20)
        state.observe(fp(HOME), HOME, role="entry", status=200, how=how, changed=False,
                      host="s.example", seed=True, new_links=2 if first else 0, listed=2)
    return t


class _Fixed:
    """A run clock standing still at ``t`` (the state reads ``now()`` and ``started``)."""

    def __init__(self, t: float) -> None:
        self.t = self.started = t

    def now(self) -> float:
        return self.t

    def utcnow(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.t, UTC)


def test_channel_records_are_scheduled_by_the_scheduler():
    state = RunState(CFG, now=T0)
    t = _history(state)
    busy, quiet, home = (state.get(fp(u)) for u in (BUSY, QUIET, HOME))
    for rec in (busy, quiet, home):
        assert rec["estimator"] == SCHEDULER_ESTIMATOR and rec["sched"]["v"] == 1
        assert rec["due"] == rec["last_visit"] + rec["interval"]
        assert rec["due"] == state.scheduler.next_due(rec["fp"], t)
    assert busy["rate"] == state.scheduler.rate(fp(BUSY), t) * H
    # 12 links/h against 1 link/h, a budget of 4 visits/h: √ rule, about 3.5 : 1
    assert 2.5 < quiet["interval"] / busy["interval"] < 5
    # the home page shows no new channel: it is revisited least often
    assert home["interval"] > quiet["interval"]
    # an article is still on correction decay; a failed channel visit still backs off
    state.observe(fp(BUSY), BUSY, role="node", status=503, how="fingerprint", host="s.example")
    assert state.get(fp(BUSY))["estimator"] == "miss_backoff"


def test_a_re_run_plans_due_times_and_requests_what_is_due():
    first = RunState(CFG, now=T0)
    t = _history(first)
    docs, _ = first.drain()
    hosts = first.drain_hosts()
    assert hosts and hosts[0]["profile"]["v"] == 1  # the host's daily profile is written
    # the next run starts 25 minutes later: politik (about every 20 min) is due, kultur
    # (about hourly) and the home page are not
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": t + 1500,
                                 "NEWSCRAWL_REVISIT_MIN_INTERVAL": 60,
                                 "NEWSCRAWL_REVISIT_CHANNEL_RATE": 4})
    spider = NewsSpider.from_crawler(crawler, start_urls=HOME)
    open_spider(crawler, spider)
    state = crawler.get_extension(CrawlStateExtension).state
    # stored due times are stale on purpose: the re-plan at load replaces them
    for doc in docs:
        doc["due"] = dt.datetime.fromtimestamp(t + 86400, UTC)
    state.load(docs, hosts)
    assert state.scheduler.budget_per_hour == 4
    assert state.get(fp(BUSY))["due"] <= state.now() < state.get(fp(QUIET))["due"]
    # the run's start requests: the due channel only (the home page is not due)
    requests = asyncio.run(_collect(spider.start()))
    assert [r.url for r in requests] == [BUSY]
    assert requests[0].meta[meta.REVISIT]["head"] is False  # a conditional GET, no HEAD
    assert crawler.stats.get_value("newscrawl/revisit/entry_not_due") == 1
    assert seed_request(state, Request(HOME, meta={meta.ROLE: "entry"}), page_fp=fp) is None
    assert list(due_channel_requests(state, spider)) == []  # requested once per run


async def _collect(gen):
    return [x async for x in gen]


def test_estimates_survive_a_restart_through_the_documents():
    first = RunState(CFG, now=T0)
    t = _history(first, hours=30)
    docs, _ = first.drain()
    hosts = first.drain_hosts()
    again = RunState(CFG, now=t)
    again.load(docs, hosts)
    for url in (BUSY, QUIET, HOME):
        # (equal but for the site-mean prior, recomputed at each plan)
        assert again.scheduler.rate(fp(url), t + H) == pytest.approx(
            first.scheduler.rate(fp(url), t + H), rel=1e-3)
    assert again.scheduler.export_profile("s.example") == first.scheduler.export_profile("s.example")


def test_records_stored_before_the_scheduler_are_replayed_from_their_history():
    cfg = RevisitConfig(min_interval=60.0, channel_rate=20.0)
    rec = new_record(fp(BUSY), BUSY, now=T0, role="node", host="s.example")
    for k in range(12):  # the old per-page estimators: no ``sched`` field
        rec = record_visit(rec, now=T0 + k * 600, cfg=cfg, status=200,
                           how="first" if k == 0 else "fingerprint", changed=k > 0,
                           new_links=20 if k == 0 else 3, listed=20)
    assert "sched" not in rec
    sched = cfg.channel_scheduler()
    assert restore_channel(sched, rec)
    assert sched.rate(fp(BUSY), T0 + 7200) * H > 10  # 3 new links per 10 minutes
    assert replan_channels([rec], sched, T0 + 7200) == 1
    assert rec["estimator"] == SCHEDULER_ESTIMATOR and rec["due"] < T0 + 7200 + 3600


def test_estimates_survive_a_restart_through_the_store(embedded, database, tmp_path):
    """Two runs against the embedded store: the second loads the first's estimates."""
    settings = {"NEWSCRAWL_MONGO_URI": embedded.uri, "NEWSCRAWL_MONGO_DATABASE": database,
                "NEWSCRAWL_DATA_DIR": str(tmp_path), "NEWSCRAWL_MONGO_TIMEOUT": 2.0,
                "NEWSCRAWL_REVISIT_MIN_INTERVAL": 60, "NEWSCRAWL_REVISIT_CHANNEL_RATE": 4}
    seen = {}

    def first_run(ext):
        _history(ext.state, hours=12)
        seen["rate"] = ext.state.scheduler.rate(fp(BUSY), T0 + 13 * H)
        seen["due"] = ext.state.get(fp(BUSY))["due"]

    def second_run(ext):
        state = ext.state
        assert state.scheduler.rate(fp(BUSY), T0 + 13 * H) == pytest.approx(seen["rate"], rel=1e-3)
        assert state.scheduler.export_profile("s.example") is not None
        assert state.get(fp(BUSY))["estimator"] == SCHEDULER_ESTIMATOR

    _run(component_crawler({**settings, "NEWSCRAWL_REVISIT_NOW": T0},
                           extensions=("store", "crawlstate")), first_run)
    _run(component_crawler({**settings, "NEWSCRAWL_REVISIT_NOW": T0 + 13 * H},
                           extensions=("store", "crawlstate")), second_run)
    with NewsStore.connect(embedded.uri, database) as store:
        page = store.pages.find_one({"_id": fp(BUSY)})
        host = store.hosts.find_one({"_id": "s.example"})
    assert page["sched"]["v"] == 1 and page["rate"] > 0
    assert host["profile"]["v"] == 1 and len(host["profile"]["links"]) == 24


def _run(crawler, during):
    spider = NewsSpider.from_crawler(crawler, start_urls=HOME)
    crawler.spider = spider
    ext = crawler.get_extension(CrawlStateExtension)

    async def scenario():
        await crawler.signals.send_catch_log_async(signal=signals.spider_opened, spider=spider)
        try:
            assert ext.recording
            during(ext)
        finally:
            await crawler.signals.send_catch_log_async(signal=signals.spider_closed, spider=spider,
                                                       reason="finished")

    asyncio.run(scenario())
