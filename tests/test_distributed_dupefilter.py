"""The Redis duplicate filter (:class:`newscrawl.distributed.dupefilter.BucketDupeFilter`) against
the real Redis server, and the request fingerprints it shares with Scrapy."""

from __future__ import annotations

import scrapy
from scrapy.utils.test import get_crawler

from newscrawl.algorithms.fingerprint import url_fingerprint_bytes
from newscrawl.distributed.dupefilter import BucketDupeFilter
from newscrawl.fingerprint import NewsRequestFingerprinter
from tests.redis_helpers import TestSpider as _Spider
from tests.redis_helpers import namespace, redis_server  # noqa: F401  (fixtures)


def test_dupefilter_uses_scrapys_fingerprinter_and_a_local_cache(redis_server, namespace):
    crawler = get_crawler(_Spider, {"REQUEST_FINGERPRINTER_CLASS": NewsRequestFingerprinter,
                                   "ADDONS": {"newscrawl.addon.DefaultsAddon": 0}})
    df = BucketDupeFilter(redis_server, namespace, fingerprinter=crawler.request_fingerprinter,
                          cache_size=1024, stats=crawler.stats, persist=True)
    first = scrapy.Request("http://www.example.com/a.html?utm_source=x")
    same_page = scrapy.Request("http://example.com/a.html")
    assert df.request_fingerprint(first) == url_fingerprint_bytes("http://example.com/a.html")
    assert not df.request_seen(first)
    assert df.request_seen(same_page)  # www alias, tracking parameter: one page
    assert crawler.stats.get_value("newscrawl/dupefilter/cache_hit") == 1
    # another worker (empty cache) asks Redis
    other = BucketDupeFilter(redis_server, namespace, fingerprinter=crawler.request_fingerprinter,
                             cache_size=1024, stats=crawler.stats)
    assert other.request_seen(scrapy.Request("http://example.com/a.html"))
    assert crawler.stats.get_value("newscrawl/dupefilter/redis_seen") == 1
    df.close("finished")  # persists
    assert other.frontier.seen_count() == 1
    df.persist = False
    df.close("finished")
    assert other.frontier.seen_count() == 0


def test_alias_redirect_gets_its_own_fingerprint():
    fingerprinter = NewsRequestFingerprinter(aliases={"127.0.0.9": "example.com"})
    original = scrapy.Request("http://example.com/a.html")
    redirected = scrapy.Request("http://www.example.com/a.html",
                                meta={"redirect_urls": ["http://example.com/a.html"]})
    via_ip = scrapy.Request("http://127.0.0.9/a.html")
    assert fingerprinter.fingerprint(via_ip) == fingerprinter.fingerprint(original)
    assert fingerprinter.fingerprint(redirected) != fingerprinter.fingerprint(original)
    head = scrapy.Request("http://example.com/a.html", method="HEAD")
    assert fingerprinter.fingerprint(head) != fingerprinter.fingerprint(original)
    assert len(fingerprinter.fingerprint(head)) == 8
