"""Scrapy's robots.txt middleware, reading the status code of robots.txt as RFC 9309 says.

Scrapy parses whatever body a robots.txt request returns, so a server error page (500) reads as
"allow all". RFC 9309 §2.3.1.3 and §2.3.1.4:

* **4xx** ("unavailable"): the crawler may access any resource: allow all, whatever the body.
* **5xx** ("unreachable"), and 429 Too Many Requests (an overloaded server, as the major
  crawlers read it): disallow all for that host. The answer is kept for
  ``NEWSCRAWL_ROBOTS_RETRY_DELAY`` seconds; the next request to the host after that fetches
  robots.txt again, so the host is crawled once it answers.
* A robots.txt that could not be fetched at all (connection refused, timeout) is Scrapy's
  case: logged by Scrapy, allow all.
* A robots.txt larger than :data:`~newscrawl.algorithms.politeness.ROBOTS_TXT_MAX_BYTES`
  (500 KiB, RFC 9309 §2.5) is read up to that size (``newscrawl/robots/truncated``, logged):
  parsing 5 MB stalled the crawl for 11 s.

Each 4xx / 5xx answer is counted (``newscrawl/robots/unavailable``, ``…/unreachable``) and
logged once per fetch, naming the host and what follows. Replaces Scrapy's
``RobotsTxtMiddleware`` (100) in ``DOWNLOADER_MIDDLEWARES`` (newscrawl/settings.py);
``ROBOTSTXT_OBEY`` still switches it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from newscrawl.algorithms.politeness import ROBOTS_TXT_MAX_BYTES, truncate_robots_txt

logger = logging.getLogger(__name__)

_DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


class RobotsStatusMiddleware(RobotsTxtMiddleware):
    """``RobotsTxtMiddleware`` with RFC 9309's reading of 4xx and 5xx answers.

    The clock (``time.monotonic``) is an attribute so tests can replace it.
    """

    clock = staticmethod(time.monotonic)

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.retry_delay = crawler.settings.getfloat("NEWSCRAWL_ROBOTS_RETRY_DELAY")
        #: netloc → monotonic time after which robots.txt is fetched again (5xx answers).
        self._refetch_at: dict[str, float] = {}

    async def robot_parser(self, request: Request) -> Any:
        netloc = urlparse_cached(request).netloc
        due = self._refetch_at.get(netloc)
        if due is not None and self.clock() >= due and not isinstance(self._parsers.get(netloc),
                                                                       Deferred):
            del self._refetch_at[netloc]
            self._parsers.pop(netloc, None)
            logger.info("Fetching robots.txt of %s again (it answered a server error %.0f s ago)",
                        netloc, self.retry_delay)
        return await super().robot_parser(request)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        status = response.status
        if status >= 500 or status == 429:
            self._stats.inc_value("newscrawl/robots/unreachable")
            self._refetch_at[netloc] = self.clock() + self.retry_delay
            logger.warning("robots.txt of %s answered %d: nothing is fetched from %s for %.0f s "
                           "(RFC 9309: disallow all while unreachable)", netloc, status, netloc,
                           self.retry_delay)
            response = response.replace(body=_DISALLOW_ALL)
        elif 400 <= status < 500:
            self._stats.inc_value("newscrawl/robots/unavailable")
            logger.info("robots.txt of %s answered %d: everything allowed (RFC 9309)", netloc,
                        status)
            response = response.replace(body=b"")
        if len(response.body) > ROBOTS_TXT_MAX_BYTES:
            self._stats.inc_value("newscrawl/robots/truncated")
            logger.warning("robots.txt of %s has %d bytes: reading the first %d (RFC 9309 §2.5)",
                           netloc, len(response.body), ROBOTS_TXT_MAX_BYTES)
            response = response.replace(body=truncate_robots_txt(response.body))
        await super()._parse_robots(response, netloc, request)

