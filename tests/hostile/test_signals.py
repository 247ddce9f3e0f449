"""Hostile cases of server signals (tests/hostile/cases_signals.py): robots.txt 5xx / 4xx,
Crawl-delay over the cap, Retry-After, a 5 MB robots.txt."""

from __future__ import annotations

from tests.hostile.cases_signals import RETRY_AFTER, ROBOTS_4XX_TITLE


def test_robots_txt_5xx_disallows_the_host(hostile):
    assert [r for r in hostile.site.requests_to("/", "robots5xx") if r[2] != "/robots.txt"] == []
    assert hostile.stat("newscrawl/robots/unreachable") == 1
    assert hostile.stat("robotstxt/forbidden") >= 1
    assert hostile.log_lines(r"WARNING: robots.txt of 127.0.0.21:\d+ answered 503: nothing is "
                             r"fetched")


def test_robots_txt_4xx_allows_everything(hostile):
    doc = hostile.article("robots-4xx")
    assert doc is not None and doc["title"] == ROBOTS_4XX_TITLE
    assert hostile.stat("newscrawl/robots/unavailable") >= 1
    assert hostile.log_lines(r"robots.txt of 127.0.0.22:\d+ answered 403: everything allowed")


def test_crawl_delay_is_capped_with_a_warning_and_honoured(hostile):
    assert hostile.log_lines(r"WARNING: robots.txt of 127.0.0.23 asks for Crawl-delay 3600 s; "
                             r"waiting 1 s \(NEWSCRAWL_CRAWL_DELAY_MAX\)")
    assert hostile.stat("newscrawl/politeness/crawl_delay_capped") == 1
    first: dict[str, float] = {}  # a request the HTTP client re-sent on a new connection
    for _, _, path, t in hostile.site.requests_to("/", "crawldelay"):  # counts once
        first.setdefault(path, t)
    times = sorted(first.values())
    assert len(times) == 3  # robots.txt, the entry, the article
    assert all(b - a >= 0.95 for a, b in zip(times, times[1:])), times
    assert hostile.article("crawl-delay") is not None


def test_retry_after_delays_the_host(hostile):
    entry = [t for _, _, path, t in hostile.site.requests_to("/retry-after/", "retryafter")
             if path == "/retry-after/"]
    assert len(entry) == 2 and entry[1] - entry[0] >= RETRY_AFTER - 0.05, entry
    assert hostile.stat("newscrawl/politeness/retry_after") == 1
    assert hostile.log_lines(r"answered 503 with Retry-After 2: no request to 127.0.0.24 for 2.0 s")
    assert hostile.article("retry-after") is not None


def test_5_mb_robots_txt_is_read_up_to_500_kib(hostile):
    assert hostile.article("big-robots") is not None
    assert hostile.stat("newscrawl/robots/truncated") == 1
    assert hostile.log_lines(r"WARNING: robots.txt of 127.0.0.25:\d+ has \d+ bytes: reading the "
                             r"first 512000")
