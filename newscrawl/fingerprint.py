"""Scrapy request fingerprinter over newscrawl's 8-byte URL fingerprint (``REQUEST_FINGERPRINTER_CLASS``).

One fingerprint for every check of "the same page": Scrapy's in-memory ``RFPDupeFilter``, the
Redis duplicate URL eliminator of :mod:`newscrawl.distributed` and the HTTP cache call
:meth:`NewsRequestFingerprinter.fingerprint`; the store, the crawl state, the link graph and the
items key pages by :meth:`NewsRequestFingerprinter.page_fp`, the same 8 bytes as 16 hex digits.
Both are :func:`newscrawl.algorithms.fingerprint.url_fingerprint_bytes` (first 8 bytes of SHA-1
over the canonical URL with its host replaced by the canonical alias — Mercator's compact exact
fingerprint, seed 001; domain aliases, seed 003), so ``http://www.example.com/a`` has one
fingerprint in the duplicate filter and in the store. Components reach it as
``crawler.request_fingerprinter.page_fp`` (built by Scrapy before every extension and
middleware). scrapy-redis's own dupefilter ignores ``REQUEST_FINGERPRINTER_CLASS`` and hashes its
own JSON; ours does not.

Settings: ``NEWSCRAWL_HOST_ALIASES`` (dict alias host → canonical host) and
``NEWSCRAWL_ALIAS_FOLD_WWW`` (``www.example.com`` ≡ ``example.com``).

A redirect between two aliases of one page (``example.com/a`` → 301 → ``www.example.com/a``)
would be dropped as a duplicate of its own source; such a request (``redirect_urls`` in meta, same
aliased fingerprint as the URL it was redirected from) gets the fingerprint of its exact URL
instead, so it is fetched once and a redirect loop between aliases still ends (it also hits
``REDIRECT_MAX_TIMES``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from weakref import WeakKeyDictionary

from newscrawl import defaults
from newscrawl.algorithms.fingerprint import url_fingerprint_bytes

#: A page fingerprint function: URL → 16 lower-case hex digits.
PageFingerprint = Callable[[str], str]


class NewsRequestFingerprinter:
    """Scrapy request fingerprinter returning 8-byte fingerprints.

    Args:
        aliases: alias host → canonical host.
        fold_www: treat ``www.<host>`` as ``<host>``.
    """

    def __init__(self, *, aliases: Mapping[str, str] | None = None,
                 fold_www: bool = defaults.NEWSCRAWL_ALIAS_FOLD_WWW) -> None:
        self.aliases = {str(k).lower().rstrip("."): str(v) for k, v in (aliases or {}).items()}
        self.fold_www = fold_www
        self._cache: WeakKeyDictionary[Any, bytes] = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Any) -> NewsRequestFingerprinter:
        settings = crawler.settings
        return cls(aliases=settings.getdict("NEWSCRAWL_HOST_ALIASES"),
                   fold_www=settings.getbool("NEWSCRAWL_ALIAS_FOLD_WWW"))

    def url_fingerprint(self, url: str, *, method: str = "GET", body: bytes = b"") -> bytes:
        """The 8-byte fingerprint of a request for ``url`` under this fingerprinter's aliases."""
        return url_fingerprint_bytes(url, method=method, body=body, aliases=self.aliases,
                                     fold_www=self.fold_www)

    def page_fp(self, url: str) -> str:
        """The fingerprint of the page at ``url``: the 8 bytes of a ``GET`` for it as 16
        lower-case hex digits — the ``fp`` / ``_id`` of its documents and crawl-state record.
        Never raises on a string.

        >>> page_fp = NewsRequestFingerprinter().page_fp
        >>> page_fp("http://www.example.com/a") == page_fp("http://example.com/a#top")
        True
        """
        return self.url_fingerprint(url).hex()

    def fingerprint(self, request: Any) -> bytes:
        """Return the request's 8-byte fingerprint (cached per request object)."""
        cached = self._cache.get(request)
        if cached is not None:
            return cached
        method = request.method
        body = request.body or b""
        fp = self.url_fingerprint(request.url, method=method, body=body)
        sources = request.meta.get("redirect_urls") if request.meta else None
        if sources and self.url_fingerprint(sources[-1], method=method, body=body) == fp \
                and sources[-1] != request.url:
            # A redirect to an alias of the same page: fingerprint the exact URL.
            fp = url_fingerprint_bytes(request.url, method="REDIRECT " + method, body=body,
                                       aliases=None, fold_www=False)
        self._cache[request] = fp
        return fp


def page_fingerprint(crawler: Any) -> PageFingerprint:
    """The page fingerprint function of a crawler (``crawler.request_fingerprinter.page_fp``).

    Raises:
        TypeError: ``REQUEST_FINGERPRINTER_CLASS`` is not a :class:`NewsRequestFingerprinter`
            (the store and the duplicate filter would then disagree on what one page is).
    """
    fingerprinter = crawler.request_fingerprinter
    if not isinstance(fingerprinter, NewsRequestFingerprinter):
        raise TypeError("REQUEST_FINGERPRINTER_CLASS must be newscrawl.fingerprint."
                        f"NewsRequestFingerprinter, got {type(fingerprinter).__name__}")
    return fingerprinter.page_fp
