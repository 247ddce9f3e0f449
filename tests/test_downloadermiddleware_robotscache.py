"""middlewares.robotscache: Scrapy's robots.txt middleware with robots.txt kept in the crawl
state for its freshness lifetime — fetched once, reused by the next runs, fetched again once
expired (engine.download_async mocked, as in Scrapy's own robots.txt tests)."""

from __future__ import annotations

import asyncio
from unittest.mock import AsyncMock, Mock

import pytest
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request, Response

from extensions.crawlstate import CrawlStateExtension
from middlewares.robotscache import FIELD, CachedRobotsTxtMiddleware
from tests.conftest import component_crawler

T0 = 1_730_000_000.0
ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def _middleware(now, hosts=(), robots=ROBOTS, status=200, headers=None, **settings):
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": now, "ROBOTSTXT_OBEY": True, **settings})
    state = crawler.get_extension(CrawlStateExtension).state
    state.load([], hosts)
    crawler.engine = Mock()
    crawler.engine.download_async = AsyncMock(return_value=Response(
        "https://s.example/robots.txt", status=status, body=robots,
        headers=headers or {"Cache-Control": "max-age=3600"}))
    return CachedRobotsTxtMiddleware.from_crawler(crawler), crawler, state


def _check(mw, url):
    """True when ``url`` is allowed, False when robots.txt forbids it."""
    try:
        asyncio.run(mw.process_request(Request(url)))
    except IgnoreRequest:
        return False
    return True


def test_robots_txt_is_fetched_once_and_reused_until_it_expires():
    mw, crawler, state = _middleware(T0)
    assert _check(mw, "https://s.example/politik/") and not _check(mw, "https://s.example/private/x")
    assert crawler.engine.download_async.await_count == 1
    assert crawler.stats.get_value("newscrawl/robotscache/stored") == 1
    hosts = state.drain_hosts()
    (cached,) = hosts[0][FIELD]
    assert hosts[0]["_id"] == "s.example" and cached["origin"] == "https://s.example"
    assert cached["expires"] - cached["fetched"] == 3600  # its own max-age
    # the next run, half an hour later: no robots.txt request, the same rules
    mw2, crawler2, _ = _middleware(T0 + 1800, hosts)
    assert _check(mw2, "https://s.example/") and not _check(mw2, "https://s.example/private/y")
    assert crawler2.engine.download_async.await_count == 0
    assert crawler2.stats.get_value("newscrawl/robotscache/hit") == 1
    assert crawler2.stats.get_value("robotstxt/request_count") is None
    # another origin of the same host is asked for its own robots.txt
    assert _check(mw2, "http://s.example:8080/")
    assert crawler2.engine.download_async.await_count == 1
    # two hours later the answer has expired: fetched again
    mw3, crawler3, _ = _middleware(T0 + 7200, hosts)
    assert _check(mw3, "https://s.example/")
    assert crawler3.engine.download_async.await_count == 1


def test_what_is_not_cached():
    # a 5xx (robots.txt unreachable) is asked again next time; no-store is honoured
    for kwargs in ({"status": 503, "robots": b""}, {"headers": {"Cache-Control": "no-store"}}):
        mw, crawler, state = _middleware(T0, **kwargs)
        _check(mw, "https://s.example/")
        assert crawler.stats.get_value("newscrawl/robotscache/not_cacheable") == 1
        assert not state.drain_hosts()
    # a 404 (no robots.txt: crawl freely) is kept like a body
    mw, crawler, state = _middleware(T0, status=404, robots=b"")
    assert _check(mw, "https://s.example/private/x")
    mw2, crawler2, _ = _middleware(T0 + 60, state.drain_hosts(), status=404, robots=b"")
    assert _check(mw2, "https://s.example/private/x")
    assert crawler2.engine.download_async.await_count == 0


def test_without_the_cache_it_is_scrapys_middleware():
    mw, crawler, _ = _middleware(T0, NEWSCRAWL_ROBOTSCACHE_MAX_AGE=0)
    assert mw.state is None and not _check(mw, "https://s.example/private/x")
    assert crawler.stats.get_value("newscrawl/robotscache/stored") is None
    with pytest.raises(NotConfigured):
        _middleware(T0, ROBOTSTXT_OBEY=False)
