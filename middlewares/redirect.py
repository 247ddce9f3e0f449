"""Scrapy's redirect and meta-refresh middlewares, with the two ways a redirect ends counted.

* A chain longer than ``REDIRECT_MAX_TIMES`` hops: Scrapy drops the request silently (a debug
  line); here it is counted (``newscrawl/redirect/max_hops``) and logged as a warning with the
  URL the chain started from and the URL it had reached.
* A loop (the target is a URL of the chain already, canonical forms compared): Scrapy's
  duplicate filter would drop it with a debug line; here it is counted
  (``newscrawl/redirect/loop``), logged as a warning, and not followed.
* A redirect or meta refresh to another registered domain (Public Suffix List) than the one
  first requested is not followed unless the target's domain is one of the crawl's entry
  domains (:func:`newscrawl.algorithms.destination.redirect_allowed`): counted
  (``newscrawl/destination/cross_domain``), logged (info), refused with ``IgnoreRequest``.
  ``NEWSCRAWL_DESTINATION_ENABLED`` off turns this check off.

Where the redirected request may connect to is decided again by
:mod:`middlewares.destination` when it comes back through the downloader.

Replaces ``RedirectMiddleware`` (600) and ``MetaRefreshMiddleware`` (580) in
``DOWNLOADER_MIDDLEWARES`` (newscrawl/settings.py).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

from newscrawl.algorithms.destination import redirect_allowed
from newscrawl.algorithms.urls import canonicalize_url, host_of, registered_domain

logger = logging.getLogger(__name__)


class _CountedRedirects:
    """What both redirect middlewares add to Scrapy's ``_redirect`` (the one place a
    redirect is followed or dropped)."""

    crawler: Any
    _entry_domains: frozenset[str] | None = None

    def _redirect(self, redirected: Request, request: Request, reason: Any) -> Request:
        stats = self.crawler.stats
        kind = "meta refresh" if reason == "meta refresh" else "redirect"
        if self.crawler.settings.getbool("NEWSCRAWL_DESTINATION_ENABLED"):
            first = (request.meta.get("redirect_urls") or [request.url])[0]
            target = urlparse_cached(redirected).hostname or ""
            if not redirect_allowed(host_of(first), target, self._entries()):
                stats.inc_value("newscrawl/destination/cross_domain")
                logger.info("Not following %s from %s to %s: another site than %s and no entry's",
                            kind, request.url, redirected.url, first)
                raise IgnoreRequest(f"{kind} to another site")
        chain = [*(request.meta.get("redirect_urls") or []), request.url]
        if canonicalize_url(redirected.url) in {canonicalize_url(url) for url in chain}:
            stats.inc_value("newscrawl/redirect/loop")
            logger.warning("Dropped %s: its %s loops back to %s after %d hops", chain[0], kind,
                           redirected.url, len(chain))
            raise IgnoreRequest(f"{kind} loop")
        try:
            return super()._redirect(redirected, request, reason)  # type: ignore[misc]
        except IgnoreRequest:
            stats.inc_value("newscrawl/redirect/max_hops")
            first = (request.meta.get("redirect_urls") or [request.url])[0]
            logger.warning("Dropped %s after %d hops (REDIRECT_MAX_TIMES): %s → %s", first,
                           request.meta.get("redirect_times", 0), request.url, redirected.url)
            raise

    def _entries(self) -> frozenset[str]:
        """Registered domains of the crawl's entry URLs (the spider's ``entry_urls``)."""
        if self._entry_domains is None:
            urls = getattr(self.crawler.spider, "entry_urls", None) or []
            self._entry_domains = frozenset(registered_domain(host_of(u)) for u in urls)
        return self._entry_domains


class CountedRedirectMiddleware(_CountedRedirects, RedirectMiddleware):
    """Scrapy's ``RedirectMiddleware`` (3xx ``Location``) with counted drops; a ``Location``
    that is no usable URL (``http://a.example:80x/``) is a counted, logged drop
    (``newscrawl/redirect/bad_location``), not a traceback."""

    def process_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().process_response(request, response, *args, **kwargs)
        except ValueError as exc:
            self.crawler.stats.inc_value("newscrawl/redirect/bad_location")
            logger.warning("Not following the redirect of %s: unusable Location %r (%s)",
                           request.url, response.headers.get("Location"), exc)
            raise IgnoreRequest(f"unusable redirect Location: {exc}") from None


class CountedMetaRefreshMiddleware(_CountedRedirects, MetaRefreshMiddleware):
    """Scrapy's ``MetaRefreshMiddleware`` (``<meta http-equiv=refresh>``) with counted drops."""
