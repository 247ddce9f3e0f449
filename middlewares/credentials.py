"""Downloader middleware: credentials of entry URLs as an ``Authorization`` header, never in a URL.

An entry such as ``http://user:secret@intranet.example/`` is parsed by :mod:`newscrawl.seeds`
into the URL without its user information and the pair ``(user, secret)`` for its origin
(``NewsSpider.entry_credentials``). This middleware sends them as ``Authorization: Basic …``
(RFC 7617) on every request to exactly that origin (scheme, host and port; RFC 7617 §2's
protection space) — no other host, port or scheme, no subdomain; Scrapy's redirect middleware drops the header when a redirect leaves the host. A
request whose URL still carries user information (a redirect's ``Location``, a link) is
replaced by the same request without it (RFC 3986 §3.2.1 deprecates ``user:password@``): no
URL with credentials reaches the downloader, a log line, a record or an item.

Settings: ``NEWSCRAWL_CREDENTIALS_ENABLED`` (off raises ``NotConfigured``; credentials of
entries are then dropped). Stats: ``newscrawl/credentials/<sent|stripped>``.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from w3lib.http import basic_auth_header

from newscrawl.algorithms.urls import origin_of, split_credentials
from newscrawl.components import require_enabled


class CredentialsMiddleware:
    """Send entry credentials to their origin only (see the module docstring).

    Args:
        stats: the crawler's stats collector.
        credentials: origin (``scheme://host:port``) → ``(user, password)``; more come from
            the spider at open.
    """

    def __init__(self, stats: Any, credentials: dict[str, tuple[str, str]] | None = None) -> None:
        self.stats = stats
        self.headers: dict[str, bytes] = {}
        self.add(credentials or {})

    @classmethod
    def from_crawler(cls, crawler: Any) -> CredentialsMiddleware:
        require_enabled(crawler.settings, "NEWSCRAWL_CREDENTIALS_ENABLED")
        mw = cls(crawler.stats)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        return mw

    def add(self, credentials: dict[str, tuple[str, str]]) -> None:
        """Send ``credentials`` (origin → ``(user, password)``) from now on."""
        for origin, (user, password) in credentials.items():
            self.headers[origin.lower()] = basic_auth_header(user, password)

    def spider_opened(self, spider: Any) -> None:
        self.add(getattr(spider, "entry_credentials", None) or {})

    def process_request(self, request: Any, spider: Any = None) -> Any:
        clean, user, password = split_credentials(request.url)
        if user is not None or password is not None:
            self.stats.inc_value("newscrawl/credentials/stripped")
            return request.replace(url=clean, dont_filter=True)
        header = self.headers.get(origin_of(request.url))
        if header is not None and b"Authorization" not in request.headers:
            request.headers[b"Authorization"] = header
            self.stats.inc_value("newscrawl/credentials/sent")
        return None
