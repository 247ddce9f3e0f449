"""Redis duplicate URL eliminator with 8-byte fingerprints in packed buckets (``DUPEFILTER_CLASS``).

scrapy-redis's ``RFPDupeFilter`` keeps one 40-character hex SHA-1 per request in a Redis set
(about 85 bytes of Redis memory per URL), hashes its own JSON of the request instead of asking
``REQUEST_FINGERPRINTER_CLASS``, and deletes the whole set when it is closed. This filter:

* fingerprints with Scrapy's request fingerprinter (``crawler.request_fingerprinter``; in this
  project :class:`newscrawl.fingerprint.NewsRequestFingerprinter`, 8 bytes), so Scrapy and Redis
  agree on what a duplicate is;
* stores Mercator's compact exact fingerprints (seed 001): bucket = the first
  ``NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES`` bytes (in the key name), the other bytes appended
  to one Redis string per bucket (``<namespace>:seen:<hex>``) — 7 bytes of payload per URL with
  one prefix byte, no probabilistic filter (a missed article costs more than memory);
* answers repeats from an in-process LRU cache of fingerprints (``NEWSCRAWL_REDIS_URL_CACHE``)
  before asking Redis (Mercator's URL cache);
* keeps its data on close when ``SCHEDULER_PERSIST`` is on.

It works with Scrapy's default scheduler too (``DUPEFILTER_CLASS`` alone). Under
:class:`newscrawl.distributed.scheduler.DistributedScheduler` the scheduler checks and adds the
fingerprint in the same Lua script that queues the request.

Stats: ``newscrawl/dupefilter/cache_hit``, ``…/redis_seen`` (duplicates answered by Redis),
``…/new``.
"""

from __future__ import annotations

import logging

from typing import Any

from scrapy_redis.connection import get_redis_from_settings
from scrapy_redis.dupefilter import RFPDupeFilter

from newscrawl.algorithms.fingerprint import FINGERPRINT_BYTES
from newscrawl.algorithms.urlcache import LRUSet
from newscrawl.distributed import keys
from newscrawl.distributed.frontier import RedisFrontier

logger = logging.getLogger(__name__)


class BucketDupeFilter(RFPDupeFilter):
    """Redis-backed request duplicate filter over 8-byte fingerprints.

    Args:
        server: Redis client (``decode_responses=False``).
        key: key namespace.
        debug: log every filtered request (``DUPEFILTER_DEBUG``).
        fingerprinter: object with ``fingerprint(request) -> bytes``.
        prefix_bytes: fingerprint bytes naming the bucket (1..4).
        cache_size: entries of the in-process fingerprint cache (0: off).
        persist: keep the seen set on close (``SCHEDULER_PERSIST``).
        stats: Scrapy stats collector or ``None``.
        frontier: share this frontier's connection and keys (the scheduler passes its own).
    """

    def __init__(self, server: Any, key: str, debug: bool = False, *, fingerprinter: Any,
                 cache_size: int, prefix_bytes: int = 1, persist: bool = True, stats: Any = None,
                 frontier: RedisFrontier | None = None) -> None:
        super().__init__(server, key, debug)
        self.fingerprinter = fingerprinter
        if frontier is None:
            frontier = RedisFrontier(server, key, prefix_bytes=prefix_bytes)
            frontier.current_round()
        self.frontier = frontier
        self.cache = LRUSet(cache_size)
        self.persist = persist
        self.stats = stats

    @classmethod
    def _build(cls, crawler: Any, spider_name: str,
               frontier: RedisFrontier | None = None) -> BucketDupeFilter:
        s = crawler.settings
        if frontier is not None:
            server, namespace = frontier.server, frontier.namespace
        else:
            server = get_redis_from_settings(s)
            namespace = keys.crawl_namespace(s.get("NEWSCRAWL_REDIS_NAMESPACE"), spider_name)
        return cls(server, key=namespace, debug=s.getbool("DUPEFILTER_DEBUG"),
                   fingerprinter=crawler.request_fingerprinter,
                   prefix_bytes=s.getint("NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES"),
                   cache_size=s.getint("NEWSCRAWL_REDIS_URL_CACHE"),
                   persist=s.getbool("SCHEDULER_PERSIST", True),
                   stats=crawler.stats, frontier=frontier)

    @classmethod
    def from_crawler(cls, crawler: Any) -> BucketDupeFilter:
        """Standalone use under Scrapy's scheduler (namespace from the spider class name)."""
        return cls._build(crawler, crawler.spidercls.name)

    @classmethod
    def from_settings(cls, settings: Any) -> BucketDupeFilter:  # pragma: no cover - legacy
        raise TypeError("BucketDupeFilter needs the crawler's request fingerprinter: build it "
                        "with from_crawler() or from_spider()")

    @classmethod
    def from_spider(cls, spider: Any) -> BucketDupeFilter:
        """Entry point of scrapy-redis's scheduler."""
        return cls._build(spider.crawler, spider.name)

    def request_fingerprint(self, request: Any) -> bytes:
        """The request's 8-byte fingerprint (longer fingerprints are cut to 8 bytes)."""
        return bytes(self.fingerprinter.fingerprint(request)[:FINGERPRINT_BYTES])

    def cached(self, fingerprint: bytes) -> bool:
        """True when the in-process cache knows ``fingerprint`` as seen (counted)."""
        if fingerprint in self.cache:
            self._inc("cache_hit")
            return True
        return False

    def remember(self, fingerprint: bytes, *, new: bool) -> None:
        """Cache a fingerprint the shared set now holds; count it as new or as a Redis hit."""
        self.cache.add(fingerprint)
        self.count(new=new)

    def count(self, *, new: bool) -> None:
        """Count a Redis answer: a new fingerprint, or one another worker (or run) had seen."""
        self._inc("new" if new else "redis_seen")

    def request_seen(self, request: Any) -> bool:
        fp = self.request_fingerprint(request)
        if self.cached(fp):
            return True
        new = self.frontier.add_seen(fp)
        self.remember(fp, new=new)
        return not new

    def _inc(self, event: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"newscrawl/dupefilter/{event}")

    def close(self, reason: str = "") -> None:
        """Keep the seen set when persisting (scrapy-redis's filter always deletes it)."""
        if not self.persist:
            self.clear()

    def clear(self) -> None:
        """Delete every bucket and the count of this namespace's seen set."""
        keys = self.frontier.seen_keys() + [self.frontier.k_seen_count.encode()]
        for start in range(0, len(keys), 500):
            self.server.delete(*keys[start:start + 500])
        self.cache.clear()
