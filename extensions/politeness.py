"""Extension: per-host politeness in single-process mode (server signals obeyed).

The per-host rule is :class:`newscrawl.algorithms.politeness.HostPoliteness`, the one the
distributed middleware (:mod:`newscrawl.distributed.politeness`) uses too; this middleware
applies it to Scrapy's downloader slot of the host (one slot per host name, as Scrapy keys
them) on ``response_downloaded`` — sent when a download ends, before the downloader picks the
slot's next request and before any middleware (RetryMiddleware) sees the response — the way
Scrapy's AutoThrottle adjusts slots:

* robots.txt ``Crawl-delay`` (``NEWSCRAWL_POLITENESS_CRAWL_DELAY``): the slot's delay between
  requests, without jitter, capped at ``NEWSCRAWL_CRAWL_DELAY_MAX`` seconds (a warning names
  the host when the cap applies).
* ``Retry-After`` on a 429 or 503 answer (seconds or an HTTP-date): no request to that host
  before it has passed (at most ``NEWSCRAWL_RETRY_AFTER_MAX`` seconds); the retry of that
  request, and every other request to the host, waits. Logged and counted.
* ``NEWSCRAWL_POLITENESS_ONE_PER_HOST`` (off by default): Mercator's rule (seed 001, §4.1) in
  one process: one request in flight per host, and the next one only
  ``max(Crawl-delay, k × response time)`` after the previous response ended
  (``NEWSCRAWL_POLITENESS_FACTOR`` k, ``…_MIN_DELAY``/``…_MAX_DELAY``, ``…_RT_WINDOW``).
  Off, hosts without those signals keep Scrapy's ``CONCURRENT_REQUESTS_PER_DOMAIN`` and
  ``DOWNLOAD_DELAY``.

Interface for other components (a monitoring loop, say; reach it with
``crawler.get_extension(HostPolitenessExtension)``): :meth:`HostPolitenessExtension.delay_of`
(the host's current pause in seconds) and :meth:`HostPolitenessExtension.wait_of` (seconds
until a ``Retry-After`` ends), :attr:`HostPolitenessExtension.policy` (the per-host state).

Not in distributed mode (the add-on's Redis politeness middleware owns politeness there):
``NotConfigured``.

Stats: ``newscrawl/politeness/crawl_delay`` (robots.txt files with a Crawl-delay),
``…/crawl_delay_capped``, ``…/retry_after`` (answers that asked to wait).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached

from newscrawl.algorithms.politeness import HostPoliteness, crawl_delay_of, retry_after_seconds
from newscrawl.components import require_enabled
from newscrawl.distributed.mode import is_distributed

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/politeness"
#: Smallest slot delay while a Retry-After holds the host: Scrapy's downloader only looks at
#: a slot's last-request time when its delay is not 0 (seconds).
_HOLD_DELAY = 0.001


class HostPolitenessExtension:
    """Apply :class:`HostPoliteness` to the downloader's per-host slots (module docstring).

    Built before the engine (as every extension): the downloader is reached through
    ``downloader()`` when the first download ends.

    Args:
        policy: the per-host rule and state.
        stats: Scrapy stats collector.
        downloader: returns the engine's downloader (``slots``, ``per_slot_settings``).
        one_per_host: Mercator's one request in flight and k × response-time pause.
        obey_crawl_delay: honour robots.txt Crawl-delay.
        user_agent: robots.txt user agent whose Crawl-delay counts.
    """

    clock = staticmethod(time.monotonic)
    wall_clock = staticmethod(time.time)

    def __init__(self, policy: HostPoliteness, stats: Any, downloader: Any, *,
                 one_per_host: bool, obey_crawl_delay: bool, user_agent: str = "*") -> None:
        self.policy = policy
        self.stats = stats
        self._downloader = downloader
        self.one_per_host = one_per_host
        self.obey_crawl_delay = obey_crawl_delay
        self.user_agent = user_agent

    @classmethod
    def from_crawler(cls, crawler: Any) -> HostPolitenessExtension:
        """Raises:
            NotConfigured: ``NEWSCRAWL_POLITENESS_ENABLED`` is off, or the crawl is distributed.
        """
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_POLITENESS_ENABLED")
        if is_distributed(s):
            raise NotConfigured("distributed crawl: the Redis politeness middleware applies")
        policy = HostPoliteness(
            factor=s.getfloat("NEWSCRAWL_POLITENESS_FACTOR"),
            min_delay=s.getfloat("NEWSCRAWL_POLITENESS_MIN_DELAY"),
            max_delay=s.getfloat("NEWSCRAWL_POLITENESS_MAX_DELAY"),
            crawl_delay_max=s.getfloat("NEWSCRAWL_CRAWL_DELAY_MAX"),
            rt_window=s.getint("NEWSCRAWL_POLITENESS_RT_WINDOW"),
            retry_after_max=s.getfloat("NEWSCRAWL_RETRY_AFTER_MAX"))
        extension = cls(policy, crawler.stats, lambda: crawler.engine.downloader,
                         one_per_host=s.getbool("NEWSCRAWL_POLITENESS_ONE_PER_HOST"),
                         obey_crawl_delay=s.getbool("NEWSCRAWL_POLITENESS_CRAWL_DELAY"),
                         user_agent=s.get("ROBOTSTXT_USER_AGENT") or s.get("USER_AGENT") or "*")
        crawler.signals.connect(extension.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        return extension

    # --- the interface ----------------------------------------------------------------------

    def delay_of(self, host: str) -> float:
        """The pause between two requests to ``host`` (seconds) this extension applies."""
        if self.one_per_host:
            return self.policy.pause(host)
        return self.policy.crawl_delays.get(host, 0.0)

    def wait_of(self, host: str) -> float:
        """Seconds until a ``Retry-After`` of ``host`` ends (0: none pending)."""
        return self.policy.wait(host, self.clock())

    # --- Scrapy hooks -----------------------------------------------------------------------

    def engine_started(self) -> None:
        """Mercator's rule: one request in flight for hosts not seen yet, too."""
        if self.one_per_host:
            self._downloader().domain_concurrency = 1

    def response_downloaded(self, response: Response, request: Request, spider: Any = None) -> None:
        """A download ended, before the downloader picks the slot's next request: learn
        Crawl-delay and Retry-After, and start the host's pause from now."""
        host = urlparse_cached(request).hostname or ""
        if self.one_per_host:
            latency = request.meta.get("download_latency")
            self.policy.record_response(host, latency if isinstance(latency, (int, float))
                                        else None)
        if (self.obey_crawl_delay and request.meta.get("dont_obey_robotstxt")
                and urlparse_cached(request).path == "/robots.txt" and response.status == 200):
            self._learn_crawl_delay(request, host, response.body)
        value = (response.headers.get(b"Retry-After") or b"").decode("latin-1")
        if response.status in (429, 503) and value:
            seconds = retry_after_seconds(value, self.wall_clock())
            if seconds is not None:
                applied = self.policy.hold(host, seconds, self.clock())
                self.stats.inc_value(f"{_PREFIX}/retry_after")
                logger.info("%s answered %d with Retry-After %s: no request to %s for %.1f s%s",
                            request.url, response.status, value, host, applied,
                            " (NEWSCRAWL_RETRY_AFTER_MAX)" if applied < seconds else "")
        if self.one_per_host or host in self.policy.crawl_delays or self.policy.wait(
                host, self.clock()):
            self._apply(request, host)

    # --- internals --------------------------------------------------------------------------

    def _learn_crawl_delay(self, request: Request, host: str, body: bytes) -> None:
        delay = crawl_delay_of(body, self.user_agent)
        if delay is None:
            return
        applied, capped = self.policy.set_crawl_delay(host, delay)
        self.stats.inc_value(f"{_PREFIX}/crawl_delay")
        if capped:
            self.stats.inc_value(f"{_PREFIX}/crawl_delay_capped")
            logger.warning("robots.txt of %s asks for Crawl-delay %.0f s; waiting %.0f s "
                           "(NEWSCRAWL_CRAWL_DELAY_MAX)", host, delay, applied)
        else:
            logger.info("robots.txt of %s asks for Crawl-delay %.1f s", host, delay)

    def _apply(self, request: Request, host: str) -> None:
        """Set the host's slot after a download: its delay, no jitter, one request at a time
        (when Mercator's rule is on), and its last-request time, so the next request waits the
        pause from now, or until the Retry-After ends."""
        downloader = self._downloader()
        key = request.meta.get("download_slot") or host
        delay = self.delay_of(host)
        per_slot = {"delay": delay, "jitter": 0.0}
        if self.one_per_host:
            per_slot["concurrency"] = 1
        downloader.per_slot_settings.setdefault(key, {}).update(per_slot)
        slot = downloader.slots.get(key)
        if slot is None:
            return
        now = self.clock()
        wait = self.policy.wait(host, now)
        slot.delay = max(delay, _HOLD_DELAY) if wait else delay
        slot.jitter = 0.0
        if self.one_per_host:
            slot.concurrency = 1
        if wait:
            slot.lastseen = max(slot.lastseen, now + wait - slot.delay)
        elif delay:
            slot.lastseen = max(slot.lastseen, now)
