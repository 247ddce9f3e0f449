"""Scrapy extension owning a crawl's one :class:`~newscrawl.distributed.frontier.RedisFrontier`.

The scheduler and the politeness middleware share one frontier, so that the middleware's lease
releases and the scheduler's pushes and acknowledgements go out together in one pipelined round
trip, in the order they were queued. Scrapy builds extensions before the engine (the engine then
builds the downloader middlewares, and the scheduler when the spider opens), so both find this
one with ``crawler.get_extension(FrontierExtension)`` in their ``from_crawler``.

Enabled by :class:`newscrawl.distributed.addon.DistributedAddon` (``EXTENSIONS``); raises
``NotConfigured`` when the crawl is not distributed. The Redis client is scrapy-redis's
(``REDIS_URL``, ``REDIS_PARAMS``); building it does not connect (the scheduler pings at start).
At ``engine_stopped`` the extension sends what is still queued and closes the client.

Settings: ``NEWSCRAWL_REDIS_NAMESPACE`` (``%(spider)s`` = the spider name),
``NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES``, ``NEWSCRAWL_REDIS_LEASE_TTL`` (seconds),
``NEWSCRAWL_REDIS_WORKER_TIMEOUT`` (seconds).
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy_redis.connection import get_redis_from_settings

from newscrawl.distributed import keys
from newscrawl.distributed.frontier import RedisFrontier
from newscrawl.distributed.mode import is_distributed

logger = logging.getLogger(__name__)


class FrontierExtension:
    """Holds the crawl's :attr:`frontier`.

    Args:
        frontier: the frontier of this crawl (one Redis client, one worker id).
    """

    def __init__(self, frontier: RedisFrontier) -> None:
        self.frontier = frontier

    @classmethod
    def from_crawler(cls, crawler: Any) -> FrontierExtension:
        """Build the frontier from the crawler's settings.

        Raises:
            NotConfigured: the crawl is not distributed (no ``REDIS_URL``,
                ``NEWSCRAWL_DISTRIBUTED`` off).
            ValueError: an invalid prefix size, lease TTL or worker timeout, or a client that
                decodes responses (``REDIS_DECODE_RESPONSES``).
        """
        s = crawler.settings
        if not is_distributed(s):
            raise NotConfigured("not a distributed crawl (no REDIS_URL / NEWSCRAWL_DISTRIBUTED)")
        frontier = RedisFrontier(
            get_redis_from_settings(s),
            keys.crawl_namespace(s.get("NEWSCRAWL_REDIS_NAMESPACE"), crawler.spidercls.name),
            prefix_bytes=s.getint("NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES"),
            lease_ttl=s.getfloat("NEWSCRAWL_REDIS_LEASE_TTL"),
            worker_timeout=s.getfloat("NEWSCRAWL_REDIS_WORKER_TIMEOUT"))
        extension = cls(frontier)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_stopped(self) -> None:
        """Send the calls still queued (normally none) and close the Redis connections."""
        try:
            self.frontier.flush()
        except RedisError as exc:
            logger.warning("Could not send the last frontier calls to Redis: %s", exc)
        self.frontier.server.close()
