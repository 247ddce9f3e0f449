"""Downloader middleware: Mercator's politeness across workers on the shared Redis frontier.

Mercator (seed 001, §4.1) never sends a server two requests in parallel and waits a multiple k
(typically 10) of the previous response time before the next one. With
:class:`newscrawl.distributed.scheduler.DistributedScheduler` a request leaves the frontier
holding its host's lease (meta :data:`newscrawl.meta.LEASE`), so over all
workers at most one request per host is in flight. This middleware ends the lease when the
exchange is over and sets the host's next-allowed time in Redis: end of the exchange +
``next_delay(response time)``
(:func:`newscrawl.algorithms.politeness.next_delay`: k = ``NEWSCRAWL_POLITENESS_FACTOR``, within
``NEWSCRAWL_POLITENESS_MIN_DELAY``/``…_MAX_DELAY``), and at least the host's robots.txt
``Crawl-delay``, which it reads (with Protego, Scrapy's robots.txt parser) from the robots.txt
responses passing through and stores in the host's Redis state for every worker, capped at
``NEWSCRAWL_CRAWL_DELAY_MAX`` (a warning names the host when the cap applies). A 429 / 503 with
``Retry-After`` releases the lease with that pause (at most ``NEWSCRAWL_RETRY_AFTER_MAX``).
The per-host rule and state are :class:`newscrawl.algorithms.politeness.HostPoliteness`, shared
with single-process mode (:mod:`extensions.politeness`).

Side requests that do not come from the frontier (robots.txt, HEAD probes) are sent while the
page request that triggered them waits in an earlier middleware, inside that request's lease.

It sits at 950, after the HTTP cache (900) and before the download handler, so its
``process_request`` runs last (the response time is the exchange alone) and its
``process_response`` / ``process_exception`` run first (before redirects or retries turn the
request into a new one). Enabled by the distributed add-on only (the middleware is Redis-only:
it needs the crawl's frontier, from
:class:`~newscrawl.distributed.extension.FrontierExtension`).

Response time = Scrapy's ``download_latency`` (request sent → response headers received, the
time the server took to answer), or, when a download fails, the seconds from this middleware's
``process_request`` to its ``process_exception``. Both include the time the worker's event loop
took to notice the answer, which only ever adds; the pause therefore uses the smallest of the
host's last ``NEWSCRAWL_POLITENESS_RT_WINDOW`` response times seen by this worker
(:func:`newscrawl.algorithms.politeness.response_time_estimate`; a window of 1 is Mercator's
literal last response time). ``NEWSCRAWL_POLITENESS_LOG`` names a file receiving one JSON line
per exchange (``host``, ``url``, ``start``, ``end`` in epoch seconds, ``rt`` and ``pause`` in
seconds, ``worker``, ``lease``) for overlap proofs.

Stats: ``newscrawl/politeness/released``, ``…/lease_lost`` (the lease had expired or was taken
back from a dead worker), ``…/errors`` (exchanges ending in an exception), ``…/crawl_delay``
(robots.txt files with a Crawl-delay), ``…/crawl_delay_capped``, ``…/retry_after``,
``…/pause_ms_max``, ``…/response_ms_max``.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Mapping
from typing import Any

from redis.exceptions import RedisError
from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.httpobj import urlparse_cached

from newscrawl.algorithms.fingerprint import canonical_host
from newscrawl.algorithms.politeness import HostPoliteness, crawl_delay_of, retry_after_seconds
from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import RedisFrontier
from newscrawl import meta

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/politeness"


class PolitenessMiddleware:
    """Release host leases with Mercator's pause; learn robots.txt Crawl-delay.

    Args:
        frontier: the crawler's shared frontier (``release_later``, ``flush``,
            ``set_crawl_delay``).
        stats: Scrapy stats collector.
        factor, min_delay, max_delay: the pause rule (see :func:`next_delay`).
        obey_crawl_delay: store and apply robots.txt Crawl-delay.
        user_agent: robots.txt user agent whose Crawl-delay counts.
        rt_window: response times per host whose minimum counts (>= 1).
        aliases, fold_www: canonical host mapping (must match the scheduler's).
        log_path: file for one JSON line per exchange, or ``""``.

    Raises:
        ValueError: a negative factor or bound, or ``rt_window < 1``.
    """

    #: Seconds a lease release may wait for the scheduler's next round trip before it is sent
    #: alone (the pause still runs from the end of the exchange; see ``release_later``).
    FLUSH_DELAY = 0.005

    def __init__(self, frontier: RedisFrontier, stats: Any, *, factor: float, min_delay: float,
                 max_delay: float, obey_crawl_delay: bool, rt_window: int, user_agent: str = "*",
                 aliases: Mapping[str, str] | None = None, fold_www: bool = True,
                 log_path: str = "", crawl_delay_max: float = 60.0,
                 retry_after_max: float = 300.0) -> None:
        if rt_window < 1:
            raise ValueError(f"NEWSCRAWL_POLITENESS_RT_WINDOW must be >= 1, got {rt_window}")
        #: The per-host rule and state shared with single-process mode (validates the bounds).
        self.policy = HostPoliteness(factor=factor, min_delay=min_delay, max_delay=max_delay,
                                     crawl_delay_max=crawl_delay_max, rt_window=rt_window,
                                     retry_after_max=retry_after_max)
        self.rt_window = rt_window
        self.frontier = frontier
        self.stats = stats
        self.factor = factor
        self.min_delay = min_delay
        self.max_delay = max_delay
        self.obey_crawl_delay = obey_crawl_delay
        self.user_agent = user_agent
        self.aliases = dict(aliases or {})
        self.fold_www = fold_www
        self.worker = f"{socket.gethostname()}-{os.getpid()}"
        self._flush_call: CallLaterResult | None = None
        self._log = open(log_path, "a", encoding="utf-8", buffering=1) if log_path else None

    @classmethod
    def from_crawler(cls, crawler: Any) -> PolitenessMiddleware:
        """Build on the crawl's frontier.

        Raises:
            NotConfigured: no :class:`FrontierExtension` (the crawl is not distributed).
        """
        extension = crawler.get_extension(FrontierExtension)
        if extension is None:
            raise NotConfigured("not a distributed crawl (no REDIS_URL / NEWSCRAWL_DISTRIBUTED)")
        s = crawler.settings
        middleware = cls(
            extension.frontier, crawler.stats,
            factor=s.getfloat("NEWSCRAWL_POLITENESS_FACTOR"),
            min_delay=s.getfloat("NEWSCRAWL_POLITENESS_MIN_DELAY"),
            max_delay=s.getfloat("NEWSCRAWL_POLITENESS_MAX_DELAY"),
            obey_crawl_delay=s.getbool("NEWSCRAWL_POLITENESS_CRAWL_DELAY"),
            rt_window=s.getint("NEWSCRAWL_POLITENESS_RT_WINDOW"),
            user_agent=s.get("ROBOTSTXT_USER_AGENT") or s.get("USER_AGENT") or "*",
            aliases=s.getdict("NEWSCRAWL_HOST_ALIASES"),
            fold_www=s.getbool("NEWSCRAWL_ALIAS_FOLD_WWW"),
            log_path=s.get("NEWSCRAWL_POLITENESS_LOG") or "",
            crawl_delay_max=s.getfloat("NEWSCRAWL_CRAWL_DELAY_MAX"),
            retry_after_max=s.getfloat("NEWSCRAWL_RETRY_AFTER_MAX"),
        )
        crawler.signals.connect(middleware.close, signal=signals.spider_closed)
        return middleware

    def close(self, spider: Any = None) -> None:
        if self._flush_call is not None:
            self._flush_call.cancel()
            self._flush_call = None
        self._flush()
        if self._log is not None:
            self._log.close()
            self._log = None

    def _host(self, request: Request) -> str:
        return canonical_host(urlparse_cached(request).hostname or "", aliases=self.aliases,
                              fold_www=self.fold_www)

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.meta[meta.SENT_AT] = (time.monotonic(), time.time())
        return None

    def process_response(self, request: Request, response: Response,
                         spider: Any = None) -> Response:
        if response.status in (429, 503) and response.headers.get(b"Retry-After"):
            self._hold(request, response)
        self._finish(request, error=False)
        if (self.obey_crawl_delay and request.meta.get("dont_obey_robotstxt")
                and urlparse_cached(request).path == "/robots.txt" and response.status == 200):
            self._learn_crawl_delay(request, response)
        return response

    def process_exception(self, request: Request, exception: Exception,
                          spider: Any = None) -> None:
        # IgnoreRequest (robots.txt, an unchanged page after HEAD, the budget) is no download error.
        self._finish(request, error=not isinstance(exception, IgnoreRequest))
        return None

    def _finish(self, request: Request, *, error: bool) -> None:
        sent = request.meta.pop(meta.SENT_AT, None)
        lease = request.meta.pop(meta.LEASE, None)
        end_wall = time.time()
        ended = time.monotonic()
        exchange_time = ended - sent[0] if sent else 0.0
        latency = request.meta.get("download_latency")
        response_time = latency if isinstance(latency, (int, float)) and not error else exchange_time
        if error:
            self.stats.inc_value(f"{_PREFIX}/errors")
        if not lease:
            if sent:
                self._log_exchange(request, self._host(request), sent[1], end_wall, response_time,
                                   pause=None, leased=False, error=error)
            return
        host = lease[0]
        pause = self._pause(host, response_time if sent else None)
        if sent:
            self._log_exchange(request, host, sent[1], end_wall, response_time, pause=pause,
                               leased=True, error=error)
        self.stats.max_value(f"{_PREFIX}/response_ms_max", int(response_time * 1000))

        def released(result: tuple[bool, int, int], host: str = host,
                     url: str = request.url) -> None:
            ok, _now, pause_ms = result
            if ok:
                self.stats.inc_value(f"{_PREFIX}/released")
                self.stats.max_value(f"{_PREFIX}/pause_ms_max", pause_ms)
            else:
                self.stats.inc_value(f"{_PREFIX}/lease_lost")
                logger.warning("Lease on %s had ended before %s finished (expired or recovered)",
                               host, url)

        # Sent with the scheduler's next pop (one round trip), or in a few milliseconds.
        self.frontier.release_later(host, lease[1], pause=pause, response_time=response_time,
                                    error=error, ended=ended, callback=released)
        if self._flush_call is None:
            try:
                self._flush_call = call_later(self.FLUSH_DELAY, self._flush)
            except RuntimeError:  # no event loop (a tool or a test): send it now
                self._flush()

    def _pause(self, host: str, response_time: float | None) -> float:
        """The host's pause (seconds) after an exchange; ``response_time`` joins its window
        (``None``: the exchange was not measured). At least what a ``Retry-After`` still asks."""
        pause = self.policy.record_response(host, response_time)
        return max(pause, self.policy.wait(host, time.monotonic()))

    def _hold(self, request: Request, response: Response) -> None:
        """A 429 / 503 with ``Retry-After``: the host's lease is released with that pause."""
        value = (response.headers.get(b"Retry-After") or b"").decode("latin-1")
        seconds = retry_after_seconds(value, time.time())
        if seconds is None:
            return
        host = self._host(request)
        applied = self.policy.hold(host, seconds, time.monotonic())
        self.stats.inc_value(f"{_PREFIX}/retry_after")
        logger.info("%s answered %d with Retry-After %s: no request to %s for %.1f s%s",
                    request.url, response.status, value, host, applied,
                    " (NEWSCRAWL_RETRY_AFTER_MAX)" if applied < seconds else "")

    def _log_exchange(self, request: Request, host: str, start: float, end: float,
                      response_time: float, *, pause: float | None, leased: bool,
                      error: bool) -> None:
        if self._log is not None:
            self._log.write(json.dumps({
                "host": host, "url": request.url, "start": start, "end": end,
                "rt": round(response_time, 6), "pause": pause, "worker": self.worker,
                "lease": leased, "error": error}) + "\n")

    def _flush(self) -> None:
        self._flush_call = None
        try:
            self.frontier.flush()
        except RedisError as exc:
            self.stats.inc_value("newscrawl/redis/errors")
            logger.warning("Redis error while releasing host leases: %s", exc)

    def _learn_crawl_delay(self, request: Request, response: Response) -> None:
        delay = crawl_delay_of(response.body, self.user_agent)
        if delay is None:
            return
        host = self._host(request)
        applied, capped = self.policy.set_crawl_delay(host, delay)
        self.frontier.set_crawl_delay(host, applied)
        self.stats.inc_value(f"{_PREFIX}/crawl_delay")
        if capped:
            self.stats.inc_value(f"{_PREFIX}/crawl_delay_capped")
            logger.warning("robots.txt of %s asks for Crawl-delay %.0f s; waiting %.0f s "
                           "(NEWSCRAWL_CRAWL_DELAY_MAX)", host, delay, applied)
        else:
            logger.info("robots.txt of %s asks for Crawl-delay %.1f s", host, delay)
