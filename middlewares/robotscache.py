"""Downloader middleware: the robots.txt middleware, with robots.txt kept across runs.

Scrapy's :class:`~scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware` fetches each
host's robots.txt once per run. A re-run every few minutes (or a monitor restarted) would fetch
it again every time; RFC 9309 §2.4 lets a crawler reuse it for its HTTP freshness lifetime, at
most 24 hours. This subclass keeps the answer (status, body, expiry;
:mod:`newscrawl.algorithms.robotscache`) in the host's document of the crawl state
(``hosts.robots``, through :meth:`newscrawl.crawlstate.RunState.set_host_field`, written with
the other crawl-state records) and, while it is fresh, builds the parser from it instead of
downloading robots.txt. A cached answer goes through the same parsing step as a downloaded one
(``_parse_robots`` of :class:`middlewares.robots.RobotsStatusMiddleware`: 4xx allow all, 5xx
and 429 disallow all until fetched again, at most 500 KiB read), so how statuses are read stays
in one place; 5xx and 429 answers are not cached.

The cache is the two methods :meth:`CachedRobotsTxtMiddleware._cached_answer` (look-up) and
:meth:`CachedRobotsTxtMiddleware._remember` (store); everything else is Scrapy's.

Settings: ``ROBOTSTXT_OBEY`` (off: not configured, as Scrapy's), ``NEWSCRAWL_ROBOTSCACHE_MAX_AGE``
(the longest reuse, seconds; 0 turns the cache off). Without the crawl state
(``NEWSCRAWL_REVISIT_ENABLED`` off) it behaves as Scrapy's. Stats:
``newscrawl/robotscache/<hit|stored|not_cacheable>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from extensions.crawlstate import CrawlStateExtension
from middlewares.robots import RobotsStatusMiddleware
from newscrawl.algorithms.politeness import truncate_robots_txt
from newscrawl.algorithms.robotscache import CACHEABLE, entry, freshness_lifetime, is_fresh
from newscrawl.crawlstate import RunState

_PREFIX = "newscrawl/robotscache"
#: Field of the host document holding the cached answers (one per origin).
FIELD = "robots"


class CachedRobotsTxtMiddleware(RobotsStatusMiddleware):
    """The robots.txt middleware (RFC 9309's reading of statuses,
    :class:`middlewares.robots.RobotsStatusMiddleware`) reusing robots.txt for its freshness
    lifetime (module docstring).

    Args:
        crawler: the crawler (Scrapy's middleware needs it).
        state: the run's crawl state (None: no cache).
        max_age: the longest reuse of a robots.txt answer (seconds; 0: no cache).
    """

    def __init__(self, crawler: Any, state: RunState | None = None, max_age: float = 0.0) -> None:
        super().__init__(crawler)
        self.state = state if max_age > 0 else None
        self.max_age = max_age
        self._replayed: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> CachedRobotsTxtMiddleware:
        run = crawler.get_extension(CrawlStateExtension)
        state = run.state if run is not None and run.revisit else None
        return cls(crawler, state, crawler.settings.getfloat("NEWSCRAWL_ROBOTSCACHE_MAX_AGE"))

    async def robot_parser(self, request: Any) -> Any:
        netloc = urlparse_cached(request).netloc
        if netloc not in self._parsers:
            cached = self._cached_answer(request)
            if cached is not None:
                self._parsers[netloc] = Deferred()
                self._replayed.add(netloc)
                self._stats.inc_value(f"{_PREFIX}/hit")
                response = Response(cached["origin"] + "/robots.txt", status=cached["status"],
                                    body=cached["body"].encode("utf-8"))
                await self._parse_robots(response, netloc, request)
        return await super().robot_parser(request)

    async def _parse_robots(self, response: Response, netloc: str, request: Any) -> None:
        if netloc not in self._replayed:
            self._remember(response, request)
        await super()._parse_robots(response, netloc, request)

    # -- the cache -------------------------------------------------------------------------------

    @staticmethod
    def _origin(request: Any) -> tuple[str, str]:
        url = urlparse_cached(request)
        return url.hostname or "", f"{url.scheme}://{url.netloc}"

    def _cached_answer(self, request: Any) -> Mapping[str, Any] | None:
        """The fresh cached answer for ``request``'s origin, or None."""
        if self.state is None:
            return None
        host, origin = self._origin(request)
        for cached in self.state.host_field(host, FIELD) or ():
            if is_fresh(cached, origin, self.state.now()):
                return dict(cached)
        return None

    def _remember(self, response: Response, request: Any) -> None:
        """Keep a downloaded robots.txt answer for its freshness lifetime."""
        if self.state is None:
            return
        headers = response.headers
        lifetime = freshness_lifetime(*(
            (headers.get(name) or b"").decode("latin-1") or None
            for name in ("Cache-Control", "Expires", "Date")), cap=self.max_age)
        if response.status not in CACHEABLE or lifetime <= 0:
            self._stats.inc_value(f"{_PREFIX}/not_cacheable")
            return
        host, origin = self._origin(request)
        kept = [c for c in self.state.host_field(host, FIELD) or ()
                if isinstance(c, Mapping) and c.get("origin") != origin]
        kept.append(entry(origin, response.status, truncate_robots_txt(response.body),
                          now=self.state.now(),
                          lifetime=lifetime))
        self.state.set_host_field(host, FIELD, kept)
        self._stats.inc_value(f"{_PREFIX}/stored")
