"""Server signals: the pure per-host rule (newscrawl/algorithms/politeness.py: Retry-After,
Crawl-delay cap, holds), the robots.txt status middleware (middlewares/robots.py) and the
single-process politeness extension (extensions/politeness.py) on the downloader's slots; the
distributed middleware's cap and Retry-After against the real Redis server."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from unittest.mock import AsyncMock

import pytest
import scrapy
from scrapy.core.downloader import Slot
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response, TextResponse

from extensions.politeness import HostPolitenessExtension
from middlewares.robots import RobotsStatusMiddleware
from newscrawl.algorithms.politeness import HostPoliteness, crawl_delay_of, retry_after_seconds
from tests.conftest import component_crawler

# --- the pure rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("value, seconds", [
    ("120", 120.0), (" 0 ", 0.0), ("Thu, 01 Jan 1970 00:02:00 GMT", 60.0),
    ("Thu, 01 Jan 1970 00:00:30 GMT", 0.0),  # in the past
    ("Thursday, 01-Jan-70 00:02:00 GMT", 60.0),  # RFC 850 form, which recipients accept
    ("-5", None), ("1.5", None), ("soon", None),
    ("", None),
])
def test_retry_after_values(value, seconds):
    assert retry_after_seconds(value, now=60.0) == seconds


def test_crawl_delay_is_capped_and_says_so():
    policy = HostPoliteness(crawl_delay_max=60.0, factor=0)
    assert policy.set_crawl_delay("a.example", 3600) == (60.0, True)
    assert policy.set_crawl_delay("b.example", 5) == (5.0, False)
    assert policy.set_crawl_delay("c.example", float("inf")) == (0.0, False)
    assert policy.pause("a.example") == 60.0 and policy.pause("b.example") == 5.0
    assert policy.pause("c.example") == 0.0
    assert HostPoliteness(crawl_delay_max=0).set_crawl_delay("a", 3600) == (3600.0, False)


def test_pause_is_the_larger_of_crawl_delay_and_k_times_response_time():
    policy = HostPoliteness(factor=10, rt_window=2)
    assert policy.record_response("h", 0.5) == 5.0
    policy.set_crawl_delay("h", 2)
    assert policy.record_response("h", 0.1) == 2.0  # min(0.5, 0.1) × 10 = 1 < 2
    assert policy.record_response("h", 0.9) == 2.0  # window (0.1, 0.9): 1 s < Crawl-delay
    assert policy.record_response("h", 0.9) == 9.0  # window (0.9, 0.9)


def test_holds_take_the_later_end_and_the_cap():
    policy = HostPoliteness(retry_after_max=100)
    assert policy.hold("h", 30, now=1000.0) == 30
    assert policy.hold("h", 10, now=1005.0) == 10  # ends earlier: the first hold stays
    assert policy.wait("h", 1010.0) == 20.0 and policy.wait("h", 2000.0) == 0.0
    assert policy.hold("h", 3600, now=0.0) == 100
    assert policy.wait("other", 0.0) == 0.0
    with pytest.raises(ValueError):
        HostPoliteness(rt_window=0)


def test_crawl_delay_of_robots_txt():
    assert crawl_delay_of(b"User-agent: *\nCrawl-delay: 3\n", "newscrawl") == 3.0
    assert crawl_delay_of(b"User-agent: other\nCrawl-delay: 3\n", "newscrawl") is None
    assert crawl_delay_of(b"\xff\xfe garbage", "newscrawl") is None


# --- robots.txt status codes --------------------------------------------------------------------


def _robots_middleware(status: int, body: bytes = b"", **settings):
    crawler = component_crawler({"ROBOTSTXT_OBEY": True, "NEWSCRAWL_ROBOTS_RETRY_DELAY": 600,
                                 **settings}, extensions=())
    crawler.spider = scrapy.Spider("t")
    answers = []

    async def download(request):
        answers.append(request.url)
        return Response(request.url, status=status, body=body)
    crawler.engine = SimpleNamespace(download_async=AsyncMock(side_effect=download))
    middleware = RobotsStatusMiddleware.from_crawler(crawler)
    now = [1000.0]
    middleware.clock = lambda: now[0]
    return middleware, crawler, answers, now


def _allowed(middleware, url: str) -> bool:
    try:
        asyncio.run(middleware.process_request(scrapy.Request(url)))
    except IgnoreRequest:
        return False
    return True


def test_robots_5xx_disallows_until_fetched_again(caplog):
    middleware, crawler, answers, now = _robots_middleware(503, b"User-agent: *\nAllow: /\n")
    assert not _allowed(middleware, "http://a.example/page")
    assert not _allowed(middleware, "http://a.example/other")
    assert answers == ["http://a.example/robots.txt"]
    assert crawler.stats.get_value("newscrawl/robots/unreachable") == 1
    assert "robots.txt of a.example answered 503: nothing is fetched from a.example for 600 s" \
        in caplog.text
    # later the server answers: robots.txt is fetched again, and read
    now[0] += 601
    middleware.crawler.engine.download_async.side_effect = None
    middleware.crawler.engine.download_async.return_value = Response(
        "http://a.example/robots.txt", status=200, body=b"User-agent: *\nDisallow: /private\n")
    assert _allowed(middleware, "http://a.example/page")
    assert not _allowed(middleware, "http://a.example/private")
    assert middleware.crawler.engine.download_async.await_count == 2


def test_robots_429_counts_as_unreachable():
    middleware, crawler, _, _ = _robots_middleware(429)
    assert not _allowed(middleware, "http://a.example/page")
    assert crawler.stats.get_value("newscrawl/robots/unreachable") == 1


def test_robots_4xx_allows_everything_whatever_the_body(caplog):
    caplog.set_level(logging.INFO)
    middleware, crawler, _, _ = _robots_middleware(403, b"User-agent: *\nDisallow: /\n")
    assert _allowed(middleware, "http://a.example/page")
    assert crawler.stats.get_value("newscrawl/robots/unavailable") == 1
    assert "answered 403: everything allowed" in caplog.text


def test_robots_200_is_read_as_scrapy_reads_it():
    middleware, crawler, _, _ = _robots_middleware(200, b"User-agent: *\nDisallow: /\n")
    assert not _allowed(middleware, "http://a.example/page")
    assert crawler.stats.get_value("newscrawl/robots/unreachable") is None


# --- the single-process extension on the downloader's slots -----------------------------------


def _extension(**settings):
    crawler = component_crawler(settings, extensions=())
    downloader = SimpleNamespace(slots={}, per_slot_settings={}, domain_concurrency=8)
    crawler.engine = SimpleNamespace(downloader=downloader)
    extension = HostPolitenessExtension.from_crawler(crawler)
    now = [100.0]
    extension.clock = lambda: now[0]
    extension.wall_clock = lambda: 1_000_000.0 + now[0]
    return extension, crawler, downloader, now


def _robots(host: str, body: bytes):
    request = scrapy.Request(f"http://{host}/robots.txt", meta={"dont_obey_robotstxt": True,
                                                                 "download_slot": host})
    return request, TextResponse(request.url, body=body, encoding="utf-8")


def test_crawl_delay_sets_the_slot_without_jitter_and_warns_at_the_cap(caplog):
    extension, crawler, downloader, now = _extension(NEWSCRAWL_CRAWL_DELAY_MAX=30)
    slot = downloader.slots["a.example"] = Slot(8, 0.0, 0.5)
    request, response = _robots("a.example", b"User-agent: *\nCrawl-delay: 3600\n")
    extension.response_downloaded(response, request)
    assert slot.delay == 30 and slot.jitter == 0 and slot.lastseen == now[0]
    assert downloader.per_slot_settings["a.example"] == {"delay": 30, "jitter": 0.0}
    assert "robots.txt of a.example asks for Crawl-delay 3600 s; waiting 30 s" in caplog.text
    assert crawler.stats.get_value("newscrawl/politeness/crawl_delay_capped") == 1
    assert extension.delay_of("a.example") == 30
    # a page of another host is untouched (Scrapy's own concurrency and delay)
    other = scrapy.Request("http://b.example/x", meta={"download_slot": "b.example"})
    extension.response_downloaded(Response(other.url), other)
    assert "b.example" not in downloader.per_slot_settings


def test_retry_after_holds_the_host_slot(caplog):
    caplog.set_level(logging.INFO)
    extension, crawler, downloader, now = _extension(NEWSCRAWL_RETRY_AFTER_MAX=60)
    slot = downloader.slots["a.example"] = Slot(8, 0.0, 0.5)
    request = scrapy.Request("http://a.example/x", meta={"download_slot": "a.example"})
    extension.response_downloaded(Response(request.url, status=503,
                                           headers={"Retry-After": "20"}), request)
    assert extension.wait_of("a.example") == 20
    # Scrapy's downloader waits `delay - now + lastseen` before the slot's next request
    assert slot.delay > 0 and slot.delay - now[0] + slot.lastseen == pytest.approx(20)
    assert "answered 503 with Retry-After 20: no request to a.example for 20.0 s" in caplog.text
    assert crawler.stats.get_value("newscrawl/politeness/retry_after") == 1
    # capped, and said so
    extension.response_downloaded(Response(request.url, status=429,
                                           headers={"Retry-After": "7200"}), request)
    assert extension.wait_of("a.example") == 60
    assert "(NEWSCRAWL_RETRY_AFTER_MAX)" in caplog.text
    # a 200 with Retry-After is no hold
    now[0] += 61
    extension.response_downloaded(Response(request.url, status=200,
                                           headers={"Retry-After": "50"}), request)
    assert extension.wait_of("a.example") == 0


def test_one_per_host_applies_mercators_rule():
    extension, _, downloader, now = _extension(NEWSCRAWL_POLITENESS_ONE_PER_HOST=True,
                                               NEWSCRAWL_POLITENESS_FACTOR=10)
    extension.engine_started()
    assert downloader.domain_concurrency == 1
    slot = downloader.slots["a.example"] = Slot(8, 0.0, 0.5)
    request = scrapy.Request("http://a.example/x", meta={"download_slot": "a.example",
                                                          "download_latency": 0.2})
    extension.response_downloaded(Response(request.url), request)
    assert slot.concurrency == 1 and slot.delay == pytest.approx(2.0) and slot.lastseen == now[0]


def test_switched_off_or_distributed_is_not_configured():
    with pytest.raises(NotConfigured):
        _extension(NEWSCRAWL_POLITENESS_ENABLED=False)
    with pytest.raises(NotConfigured):
        _extension(NEWSCRAWL_DISTRIBUTED=True)


def test_robots_txt_over_500_kib_is_read_up_to_there(caplog):
    body = b"User-agent: *\nDisallow: /early\n" + b"Disallow: /x\n" * 50_000 + b"Disallow: /late\n"
    middleware, crawler, _, _ = _robots_middleware(200, body)
    assert not _allowed(middleware, "http://a.example/early")
    assert _allowed(middleware, "http://a.example/late")  # beyond 500 KiB: not read
    assert crawler.stats.get_value("newscrawl/robots/truncated") == 1
    assert f"has {len(body)} bytes: reading the first 512000" in caplog.text
