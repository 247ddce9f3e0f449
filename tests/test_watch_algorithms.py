"""Monitoring mode's pure parts (newscrawl/algorithms/watch.py), the run state's request rate
and the budget middleware putting a page back when the rate has no token."""

from __future__ import annotations

import math

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from middlewares.budget import BudgetMiddleware
from newscrawl import meta
from newscrawl.algorithms.revisitplan import RevisitConfig
from newscrawl.algorithms.watch import (
    DelayWindow,
    DueQueue,
    RateBudget,
    ReadyPages,
    due_rank,
    is_on,
    parse_duration,
)
from newscrawl.crawlstate import RunState, parse_rate


@pytest.mark.parametrize("text, seconds", [
    ("90s", 90.0), ("10m", 600.0), ("1h", 3600.0), ("1h30m", 5400.0), ("2d", 172800.0),
    ("45", 45.0), (" 1.5h ", 5400.0), ("", None), (None, None), ("0", None), (30, 30.0),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["10x", "m", "-5m", "1h foo", "nan"])
def test_parse_duration_rejects(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_parse_rate():
    assert parse_rate("3600") == 3600.0 and parse_rate("0") is None and parse_rate(None) is None
    with pytest.raises(ValueError):
        parse_rate("fast")
    with pytest.raises(ValueError):
        parse_rate("-1")


def test_switches_and_ranks():
    assert is_on("1") and is_on("True") and is_on("yes") and not is_on("0") and not is_on(None)
    assert due_rank({"role": "content", "last_visit": None}) == 0
    assert due_rank({"role": "node", "last_visit": 5.0}) == 1
    assert due_rank({"role": "content", "last_visit": 5.0}) == 3
    assert due_rank({"role": "content", "found": "backlog"}) == 2
    assert due_rank({"role": "content", "found": "news"}) == 0
    assert due_rank({"role": "sitemap", "found": "backlog"}) == 1


def test_due_queue_orders_by_due_then_rank_and_keeps_stale_entries():
    q = DueQueue()
    q.push("late", 30.0)
    q.push("chan", 10.0, rank=1)
    q.push("new", 10.0, rank=0)
    q.push("now", math.nan)  # no due time: due at once
    assert q.next_due() == -math.inf
    assert q.pop_due(10.0) == ["now", "new", "chan"]
    assert q.pop_due(29.0) == [] and q.next_due() == 30.0
    q.push("late", 40.0)  # pushed again: both entries stay, the caller skips the stale one
    assert q.pop_due(100.0, limit=1) == ["late"] and len(q) == 1


def test_rate_budget_caps_the_rate_over_time():
    b = RateBudget(3600.0, burst=5, now=0.0)  # one request a second
    sent = 0
    t = 0.0
    while t < 100.0:
        sent += b.try_spend("a.de", t) + b.try_spend("b.de", t)
        t += 0.1
    assert 100 <= sent <= 106  # 100 s at 1/s plus the burst
    assert b.wait(t) > 0 or b.tokens_at(t) >= 1


def test_rate_budget_one_busy_site_cannot_starve_the_others():
    b = RateBudget(3600.0, burst=10, now=0.0)
    quiet = 0
    t = 0.0
    while t < 300.0:
        for _ in range(20):  # the busy portal asks 20 times at every step
            b.try_spend("busy.de", t)
        quiet += b.try_spend("quiet.de", t)  # the other asks once a second
        t += 1.0
    # quiet.de asked 300 times; its share is half the rate (150 in 300 s) and it gets it
    assert quiet >= 140, quiet
    assert b.spent["busy.de"] + b.spent["quiet.de"] <= 300 + 10


def test_rate_budget_rejects_bad_values():
    with pytest.raises(ValueError):
        RateBudget(0)
    with pytest.raises(ValueError):
        RateBudget(100.0, burst=0.5)


def test_ready_pages_serve_least_served_site_and_respect_allowed():
    r = ReadyPages()
    r.add("a.de", "a-chan", rank=1, due=1.0)
    r.add("a.de", "a-new", rank=0, due=5.0)
    r.add("a.de", "a-new", rank=0, due=5.0)  # already waiting: ignored
    r.add("b.de", "b-check", rank=2, due=0.0)
    assert len(r) == 3
    assert r.pop(served={"a.de": 0, "b.de": 5}) == "a-new"
    assert r.pop(served={"a.de": 0, "b.de": 5}, allowed=lambda s: s == "b.de") == "b-check"
    assert r.pop(allowed=lambda s: False) is None
    assert r.pop() == "a-chan" and r.pop() is None and len(r) == 0


def test_delay_window_keeps_the_last_hour():
    w = DelayWindow(3600.0)
    w.add(0.0, 100.0)
    w.add(1000.0, 20.0)
    w.add(2000.0, -5.0)  # clocks apart: 0
    w.add(2000.0, math.inf)  # skipped
    assert w.median(2000.0) == 20.0
    assert w.delays(4000.0) == [20.0, 0.0]


def _state(rate: float | None = 3600.0) -> RunState:
    return RunState(RevisitConfig(min_interval=5.0, max_interval=600.0), now=1_000_000.0, rate=rate)


class _Stats:
    def __init__(self):
        self.values: dict[str, int] = {}

    def inc_value(self, key, count=1):
        self.values[key] = self.values.get(key, 0) + count


def test_budget_middleware_puts_a_page_back_when_the_rate_has_no_token():
    state = _state()
    state.rate = RateBudget(3600.0, burst=1, now=state.now())
    heard: list[str] = []
    state.listeners.append(lambda fp, rec, visited: heard.append((fp, visited)))
    stats = _Stats()
    mw = BudgetMiddleware(state, stats)
    first = Request("http://a.example/x.html", meta={meta.REVISIT: {"fp": "f1"}})
    second = Request("http://a.example/y.html", meta={meta.REVISIT: {"fp": "f2"}})
    state.ensure("f2", second.url, role="content")
    state.scheduled.update({"f1", "f2"})
    assert mw.process_request(first) is None
    with pytest.raises(IgnoreRequest, match="deferred"):
        mw.process_request(second)
    assert "f2" not in state.scheduled and heard == [("f2", False)]
    assert stats.values == {"newscrawl/budget/spent": 1, "newscrawl/budget/deferred": 1}
    # robots.txt and HEAD probes are free
    assert mw.process_request(Request("http://a.example/robots.txt",
                                      meta={"dont_obey_robotstxt": True})) is None


def test_budget_still_refuses_for_good_when_spent():
    state = _state(rate=None)
    state.budget = 1
    mw = BudgetMiddleware(state, _Stats())
    assert mw.process_request(Request("http://a.example/1", meta={meta.REVISIT: {"fp": "a"}})) is None
    with pytest.raises(IgnoreRequest, match="budget spent"):
        mw.process_request(Request("http://a.example/2", meta={meta.REVISIT: {"fp": "b"}}))


def test_observe_tells_listeners_with_the_new_record():
    state = _state(rate=None)
    got = []
    state.listeners.append(lambda fp, rec, visited: got.append((fp, rec["visits"], visited)))
    state.observe("p1", "http://a.example/p1.html", role="content", status=200, how="first")
    state.release("p1")
    assert got == [("p1", 1, True), ("p1", 1, False)]


# -- the watch extension's feeding, without a reactor ---------------------------------------------

class _Engine:
    def __init__(self):
        self.crawled: list[Request] = []
        self.scheduler: list = []

    def crawl(self, request):
        self.crawled.append(request)

    def needs_backout(self):
        return False


class _Crawler:
    def __init__(self):
        self.engine = _Engine()
        self.stats = _StatsAll()


class _StatsAll(_Stats):
    def set_value(self, key, value):
        self.values[key] = value

    def get_value(self, key, default=None):
        return self.values.get(key, default)


class _Spider:
    entry_urls = ["http://a.example/", "http://b.example/"]
    max_depth = 1

    def parse_node(self, response):  # pragma: no cover - never called here
        pass

    def parse_article(self, response):  # pragma: no cover
        pass


def _watch(rate: float | None):
    from extensions.watch import WatchExtension

    crawler = _Crawler()
    ext = WatchExtension(crawler, duration=None)
    state = _state(rate=rate)
    ext.state, ext.spider = state, _Spider()
    ext._wake_in = lambda delay: None  # no reactor here: the timer is not under test
    state.listeners.append(ext._changed)
    now = state.now()
    ctx = {"entry_url": "http://a.example/", "depth": 1}
    for fp, url, role in (("chanA", "http://a.example/s1/", "node"),
                          ("newA", "http://a.example/s1/2024/x.html", "content"),
                          ("chanB", "http://b.example/s1/", "node")):
        site = url.split("/")[2]
        entry = {**ctx, "entry_url": f"http://{site}/"}
        rec = state.ensure(fp, url, role=role, host=site, site=site, request=entry)
        rec["due"] = now - 1
        ext._changed(fp, rec, False)
    old = state.observe("oldA", "http://a.example/s1/2024/y.html", role="content", status=200,
                        how="first", host="a.example", site="a.example",
                        request={**ctx, "depth": 1})
    assert old["due"] > now  # re-check on the correction schedule, not now
    return ext, state, crawler.engine


def test_watch_feeds_what_is_due_new_articles_first_and_never_the_same_page_twice():
    ext, state, engine = _watch(rate=None)
    now = state.now()
    assert ext._take_due(now) is True
    assert ext._feed(now) is False
    urls = [r.url for r in engine.crawled]
    assert sorted(urls) == ["http://a.example/s1/", "http://a.example/s1/2024/x.html",
                            "http://b.example/s1/"]
    assert urls.index("http://a.example/s1/2024/x.html") < urls.index("http://a.example/s1/")
    assert all(r.dont_filter and meta.VISIT in r.meta for r in engine.crawled)
    assert {"chanA", "newA", "chanB"} <= state.scheduled
    # in flight: not fed again, however often the timer wakes
    for fp in ("chanA", "newA", "chanB"):
        ext.queue.push(fp, now - 1)
    ext._take_due(now)
    ext._feed(now)
    assert len(engine.crawled) == 3
    # a visit puts the page back at its new due time and frees it for a later request
    state.observe("chanA", "http://a.example/s1/", role="node", status=200, how="first",
                  host="a.example", site="a.example")
    assert "chanA" not in state.scheduled and "chanA" not in ext.inflight
    # a page put back (the rate had no token) is not a visit: no second "new article"
    assert ext.log._new == 1
    state.release("oldA")
    assert ext.log._new == 1 and crawler_stats(ext)["newscrawl/watch/new_articles"] == 1


def crawler_stats(ext):
    return ext.crawler.stats.values


def test_watch_under_a_rate_feeds_no_more_than_the_tokens_least_served_site_first():
    ext, state, engine = _watch(rate=3600.0)
    state.rate = RateBudget(3600.0, burst=2, now=state.now())
    state.rate.spent["a.example"] = 5  # a.example had more than b.example already
    now = state.now()
    ext._take_due(now)
    assert ext._feed(now) is True  # one page waits for a token
    # the new article first (any site), then of two channel pages the least-served site's
    assert [r.url for r in engine.crawled] == ["http://a.example/s1/2024/x.html",
                                               "http://b.example/s1/"]


def test_watch_is_off_unless_asked_and_shares_the_schedule_of_a_shared_frontier():
    from scrapy.exceptions import NotConfigured
    from scrapy.settings import Settings

    from extensions.watch import WatchExtension
    from newscrawl import defaults

    class _C(_Crawler):
        def __init__(self, watch, **settings):
            super().__init__()
            self.settings = Settings({k: getattr(defaults, k) for k in dir(defaults)
                                      if k.startswith("NEWSCRAWL_WATCH_")})
            self.settings.setdict({"NEWSCRAWL_REVISIT_ENABLED": True, **settings})
            self.spider = type("S", (), {"watch": watch, "for": "90s" if watch else None})()
            self.signals = type("G", (), {"connect": lambda *a, **k: None})()

    with pytest.raises(NotConfigured, match="not watching"):
        WatchExtension.from_crawler(_C(None))
    shared = WatchExtension.from_crawler(_C(
        "1", SCHEDULER="newscrawl.distributed.scheduler.DistributedScheduler",
        NEWSCRAWL_REDIS_WORKER_TIMEOUT=30.0))
    assert shared.share is not None and shared.share.claim_ttl == defaults.NEWSCRAWL_WATCH_CLAIM_TTL
    alone = WatchExtension.from_crawler(_C("1"))
    assert alone.duration == 90.0 and alone.share is None


def test_watch_arguments_are_checked():
    import pytest

    from newscrawl.algorithms.watch import watching

    assert watching("1", False, revisit=True) and not watching(None, False, revisit=True)
    assert watching(None, "true", revisit=True)
    with pytest.raises(ValueError, match="watch must be 1 or 0"):
        watching("maybe", False, revisit=True)
    with pytest.raises(ValueError, match="-a for= and -a rate= only work in monitoring mode"):
        watching(None, False, revisit=True, batch_args=["for", "rate"])
    with pytest.raises(ValueError, match="needs the crawl state"):
        watching("1", False, revisit=False)


def test_channel_budget_counts_article_fetches_over_the_time_watched():
    from newscrawl.algorithms.watch import channel_budget
    # 60 article fetches in the first 2 minutes are 1800/h, not 360/h over the 10-minute window
    assert channel_budget(3600.0, 60, 120.0, 600.0, 30.0) == pytest.approx(3240.0 - 1800.0)
    assert channel_budget(3600.0, 60, 3000.0, 600.0, 30.0) == pytest.approx(3240.0 - 360.0)
    # never below a tenth of the rate
    assert channel_budget(3600.0, 600, 120.0, 600.0, 30.0) == pytest.approx(360.0)


def test_default_burst_is_seconds_of_the_rate_and_follows_set_rate() -> None:
    b = RateBudget(7200.0, now=0.0)  # 2/s: 5 s of burst = 10 tokens
    assert b.burst == pytest.approx(10.0)
    assert sum(b.try_spend("a.de", 0.0) for _ in range(50)) <= 10
    b.set_rate(720.0)
    assert b.burst == pytest.approx(1.0) and b.tokens <= 1.0
    fixed = RateBudget(3600.0, burst=30, now=0.0)
    fixed.set_rate(36000.0)
    assert fixed.burst == 30
    with pytest.raises(ValueError):
        b.set_rate(0.0)
