"""Downloader middleware: no request to loopback, private, link-local, multicast or reserved
addresses (the destination policy of :mod:`newscrawl.algorithms.destination`).

Every request the downloader sends passes here just before it is handed to the download
handler, so nothing is connected before the check: entry URLs, links, robots.txt, HEAD probes,
and every redirect and meta refresh (Scrapy's redirect middlewares return a new request, which
goes through the whole chain again). The host is checked as written (IP literals in any numeric
form, ``localhost`` names) and, without a proxy, after resolving it through the reactor's
resolver: every address it resolves to must be allowed. Scrapy's default resolver
(``CachingThreadedResolver``) caches the answer, and the connection made right after reads the
same cache entry, so the address checked is the address connected to. With an HTTP(S) proxy
(``meta["proxy"]``, set from the environment by Scrapy's ``HttpProxyMiddleware`` at 750, before
this middleware) only the literal host is checked: the proxy resolves names, and the proxy
itself may be on loopback.

``NEWSCRAWL_ALLOWED_PRIVATE_HOSTS`` lists host names, addresses and CIDR networks that may be
reached anyway (comma-separated; tests allow their loopback sites that way). A name that does
not resolve raises Scrapy's ``CannotResolveHostError``, as Scrapy's download handler would
(retried, then logged by Scrapy in one line: :class:`extensions.outcome.LogHygieneFilter`).

Refused requests raise :class:`~scrapy.exceptions.IgnoreRequest`; each is counted under
``newscrawl/destination/<reason>`` (``loopback``, ``private``, ``link_local``, ``multicast``,
``reserved``, ``unspecified``, ``non_global``) and logged once, as a warning naming the URL and
the address (robots.txt side requests are refused silently: the page request that waits for
them is refused and logged next). Cross-domain redirects are handled by :mod:`middlewares.redirect`.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolutionReceiver
from zope.interface import implementer  # type: ignore[import-untyped]

from newscrawl.algorithms.destination import (Address, AllowList, host_refusal, literal_address,
                                              literal_refusal)
from newscrawl.components import require_enabled, setting

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/destination"


@implementer(IResolutionReceiver)
class _Addresses:
    """Collects the addresses of one host name resolution into a Deferred."""

    def __init__(self) -> None:
        self.addresses: list[str] = []
        self.done: defer.Deferred[list[str]] = defer.Deferred()

    def resolutionBegan(self, resolution: Any) -> None:  # noqa: N802 (Twisted's names)
        pass

    def addressResolved(self, address: Any) -> None:  # noqa: N802
        self.addresses.append(address.host)

    def resolutionComplete(self) -> None:  # noqa: N802
        self.done.callback(self.addresses)


async def resolve(host: str) -> list[str]:
    """The addresses ``host`` resolves to through the reactor's name resolver (empty: none)."""
    from twisted.internet import reactor

    receiver = _Addresses()
    reactor.nameResolver.resolveHostName(receiver, host, 0)
    return await maybe_deferred_to_future(receiver.done)


class DestinationMiddleware:
    """Refuse requests to addresses the crawl must not reach (see the module docstring).

    Args:
        allow: hosts and networks allowed although private.
        stats: Scrapy stats collector.
    """

    def __init__(self, allow: AllowList, stats: Any) -> None:
        self.allow = allow
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> DestinationMiddleware:
        """Raises:
            NotConfigured: ``NEWSCRAWL_DESTINATION_ENABLED`` is off.
            ValueError: a malformed network in ``NEWSCRAWL_ALLOWED_PRIVATE_HOSTS``.
        """
        require_enabled(crawler.settings, "NEWSCRAWL_DESTINATION_ENABLED")
        allowed = setting(crawler.settings, "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS")
        return cls(AllowList.parse(allowed or ""), crawler.stats)

    async def process_request(self, request: Request, spider: Any = None) -> None:
        host = urlparse_cached(request).hostname or ""
        if not host:
            return None
        reason = literal_refusal(host, self.allow)
        if reason is not None:
            literal = literal_address(host)
            self._refuse(request, reason, host if literal is None or str(literal) == host
                         else f"{host} ({literal})")
        if request.meta.get("proxy") or literal_address(host) is not None \
                or self.allow.allows_name(host):
            return None
        try:
            names = await resolve(host)
        except DNSLookupError as exc:
            raise CannotResolveHostError(f"DNS lookup failed: {host}: {exc}") from None
        if not names:
            raise CannotResolveHostError(f"DNS lookup failed: {host}: no address")
        addresses: list[Address] = [a for a in map(literal_address, names) if a is not None]
        reason = host_refusal(host, addresses, self.allow)
        if reason is not None:
            self._refuse(request, reason, ", ".join(names))
        return None

    def _refuse(self, request: Request, reason: str, address: str) -> None:
        if request.meta.get("dont_obey_robotstxt") and urlparse_cached(request).path == "/robots.txt":
            # The robots.txt side request of a refused host: the page request that needs it is
            # refused (and logged, counted) right after.
            raise IgnoreRequest(f"destination {address} is {reason}")
        self.stats.inc_value(f"{_PREFIX}/{reason}")
        logger.warning("Refused %s: %s is a %s address (not in NEWSCRAWL_ALLOWED_PRIVATE_HOSTS)",
                       request.url, address, reason.replace("_", "-"))
        raise IgnoreRequest(f"destination {address} is {reason}")
