"""The politeness downloader middleware (:mod:`newscrawl.distributed.politeness`) against the real
Redis server: lease release with Mercator's pause, robots.txt Crawl-delay, errors, lost leases,
the response-time window, the exchange log, and how it finds the crawl's frontier."""

from __future__ import annotations

import json
import time

import pytest
import scrapy
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import Popped, RedisFrontier, Wait
from newscrawl import meta
from newscrawl.distributed.politeness import PolitenessMiddleware
from tests.redis_helpers import distributed_settings, namespace, redis_server  # noqa: F401


class _Spider(scrapy.Spider):
    name = "nctest"


def _middleware(frontier, stats, **kwargs) -> PolitenessMiddleware:
    options = {"factor": 10.0, "min_delay": 0.0, "max_delay": 60.0, "obey_crawl_delay": True,
               "rt_window": 5, "user_agent": "newscrawl", **kwargs}
    return PolitenessMiddleware(frontier, stats, **options)


def _leased_page(frontier: RedisFrontier, host: str = "example.com", latency: float = 0.01):
    """Pop the host's next request and return a page request holding its lease."""
    popped = frontier.pop()
    deadline = time.monotonic() + 5
    while isinstance(popped, Wait) and time.monotonic() < deadline:
        time.sleep(max(popped.wait_ms, 5) / 1000.0)
        popped = frontier.pop()
    assert isinstance(popped, Popped) and popped.host == host
    return scrapy.Request(f"http://{host}/a.html",
                          meta={meta.LEASE: [popped.host, popped.token],
                                "download_latency": latency})


def test_learns_crawl_delay_and_releases_with_the_pause(redis_server, namespace):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace)
    middleware = _middleware(frontier, crawler.stats)
    robots = scrapy.Request("http://www.example.com/robots.txt", meta={"dont_obey_robotstxt": True})
    middleware.process_request(robots)
    middleware.process_response(robots, TextResponse(
        robots.url, body=b"User-agent: *\nCrawl-delay: 1.5\n", encoding="utf-8"))
    assert frontier.host_state("example.com")["crawl_delay_ms"] == "1500"
    for i in range(2):
        frontier.push("example.com", b"p%d" % i, score=0)
    page = _leased_page(frontier)
    middleware.process_request(page)
    middleware.process_response(page, HtmlResponse(page.url, body=b"<html></html>"))
    wait = frontier.pop()
    assert isinstance(wait, Wait) and 1300 <= wait.wait_ms <= 1500
    state = frontier.host_state("example.com")
    assert state["delay_ms"] == "1500" and state["rt_ms"] == "10" and "lease" not in state
    assert crawler.stats.get_value("newscrawl/politeness/released") == 1
    assert meta.LEASE not in page.meta and meta.SENT_AT not in page.meta
    middleware.close()


def test_crawl_delay_is_ignored_when_switched_off(redis_server, namespace):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace)
    middleware = _middleware(frontier, crawler.stats, obey_crawl_delay=False)
    robots = scrapy.Request("http://example.com/robots.txt", meta={"dont_obey_robotstxt": True})
    middleware.process_request(robots)
    middleware.process_response(robots, TextResponse(
        robots.url, body=b"User-agent: *\nCrawl-delay: 9\n", encoding="utf-8"))
    assert "crawl_delay_ms" not in frontier.host_state("example.com")
    assert crawler.stats.get_value("newscrawl/politeness/crawl_delay") is None
    middleware.close()


def test_a_download_error_releases_the_lease_and_counts_it(redis_server, namespace, tmp_path):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace)
    log = tmp_path / "exchanges.jsonl"
    middleware = _middleware(frontier, crawler.stats, factor=0.0, log_path=str(log))
    for i in range(3):
        frontier.push("example.com", b"p%d" % i, score=0)
    failed = _leased_page(frontier)
    middleware.process_request(failed)
    middleware.process_exception(failed, TimeoutError("timed out"))
    frontier.flush()
    # IgnoreRequest (robots.txt, unchanged after HEAD, budget) ends the lease but is no error.
    ignored = _leased_page(frontier)
    middleware.process_request(ignored)
    middleware.process_exception(ignored, IgnoreRequest())
    middleware.close()
    state = frontier.host_state("example.com")
    assert state["errors"] == "1" and state["fetched"] == "1" and "lease" not in state
    assert crawler.stats.get_value("newscrawl/politeness/errors") == 1
    assert crawler.stats.get_value("newscrawl/politeness/released") == 2
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["error"], e["lease"], e["host"]) for e in lines] == [
        (True, True, "example.com"), (False, True, "example.com")]
    assert all(e["end"] >= e["start"] and e["pause"] == 0.0 for e in lines)


def test_a_lost_lease_is_counted_not_released(redis_server, namespace):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace, lease_ttl=0.05)
    frontier.heartbeat()
    middleware = _middleware(frontier, crawler.stats)
    frontier.push("example.com", b"p", score=0)
    frontier.push("example.com", b"q", score=0)
    page = _leased_page(frontier)
    time.sleep(0.1)
    frontier.heartbeat()  # the lease outlived its TTL: freed, the host is ready again
    taken = frontier.pop()
    assert isinstance(taken, Popped)
    middleware.process_request(page)
    middleware.process_response(page, HtmlResponse(page.url, body=b""))
    middleware.close()
    assert crawler.stats.get_value("newscrawl/politeness/lease_lost") == 1
    assert crawler.stats.get_value("newscrawl/politeness/released") is None
    assert frontier.host_state("example.com")["lease"] == taken.token  # the new holder keeps it


def test_the_pause_follows_the_smallest_recent_response_time(redis_server, namespace):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace)
    middleware = _middleware(frontier, crawler.stats, factor=2.0, rt_window=2)
    for i in range(4):
        frontier.push("example.com", b"p%d" % i, score=0)
    delays = []
    for latency in (0.04, 0.02, 0.05, 0.06):
        page = _leased_page(frontier, latency=latency)
        middleware.process_request(page)
        middleware.process_response(page, HtmlResponse(page.url, body=b""))
        frontier.flush()
        delays.append(int(frontier.host_state("example.com")["delay_ms"]))
    # window of 2: min(0.04), min(0.04, 0.02), min(0.02, 0.05), min(0.05, 0.06); k = 2
    assert delays == [80, 40, 40, 100]
    middleware.close()


def test_without_a_distributed_crawl_it_is_not_configured():
    crawler = get_crawler(_Spider, {"ADDONS": {"newscrawl.addon.DefaultsAddon": 0,
                                               "newscrawl.distributed.addon.DistributedAddon": 0},
                                    "NEWSCRAWL_DISTRIBUTED": False})
    assert crawler.get_extension(FrontierExtension) is None
    with pytest.raises(NotConfigured):
        build_from_crawler(PolitenessMiddleware, crawler)


def test_from_crawler_uses_the_crawls_frontier_and_settings(redis_server, namespace):
    crawler = get_crawler(_Spider, distributed_settings(
        namespace, NEWSCRAWL_POLITENESS_FACTOR=3, NEWSCRAWL_POLITENESS_RT_WINDOW=7,
        NEWSCRAWL_HOST_ALIASES={"127.0.0.9": "example.com"}, ROBOTSTXT_USER_AGENT="robot"))
    middleware = build_from_crawler(PolitenessMiddleware, crawler)
    extension = crawler.get_extension(FrontierExtension)
    assert middleware.frontier is extension.frontier
    assert middleware.frontier.namespace == namespace
    assert (middleware.factor, middleware.rt_window, middleware.user_agent) == (3.0, 7, "robot")
    assert middleware._host(scrapy.Request("http://127.0.0.9/x")) == "example.com"
    assert crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")[
        "newscrawl.distributed.politeness.PolitenessMiddleware"] == 950
    middleware.close()


def test_crawl_delay_over_the_cap_is_cut_with_a_warning(redis_server, namespace, caplog):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace)
    middleware = _middleware(frontier, crawler.stats, crawl_delay_max=30.0)
    robots = scrapy.Request("http://www.example.com/robots.txt", meta={"dont_obey_robotstxt": True})
    middleware.process_request(robots)
    middleware.process_response(robots, TextResponse(
        robots.url, body=b"User-agent: *\nCrawl-delay: 3600\n", encoding="utf-8"))
    assert frontier.host_state("example.com")["crawl_delay_ms"] == "30000"
    assert crawler.stats.get_value("newscrawl/politeness/crawl_delay_capped") == 1
    assert "robots.txt of example.com asks for Crawl-delay 3600 s; waiting 30 s" in caplog.text
    middleware.close()


def test_retry_after_releases_the_lease_with_that_pause(redis_server, namespace):
    crawler = get_crawler(_Spider)
    frontier = RedisFrontier(redis_server, namespace)
    middleware = _middleware(frontier, crawler.stats, factor=0.0)
    for i in range(2):
        frontier.push("example.com", b"p%d" % i, score=0)
    page = _leased_page(frontier)
    middleware.process_request(page)
    middleware.process_response(page, HtmlResponse(page.url, status=503, body=b"busy",
                                                   headers={"Retry-After": "3"}))
    wait = frontier.pop()
    assert isinstance(wait, Wait) and 2500 <= wait.wait_ms <= 3000
    assert crawler.stats.get_value("newscrawl/politeness/retry_after") == 1
    middleware.close()
