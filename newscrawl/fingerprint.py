"""Scrapy request fingerprinter over newscrawl's 8-byte URL fingerprint (``REQUEST_FINGERPRINTER_CLASS``).

One fingerprint function for every duplicate check: Scrapy's in-memory ``RFPDupeFilter``, the
Redis duplicate URL eliminator of :mod:`newscrawl.distributed` and the HTTP cache all call
:meth:`NewsRequestFingerprinter.fingerprint`, which is
:func:`newscrawl.algorithms.fingerprint.url_fingerprint_bytes` (first 8 bytes of SHA-1 over the
canonical URL with its host replaced by the canonical alias — Mercator's compact exact
fingerprint, seed 001; domain aliases, seed 003). scrapy-redis's own dupefilter ignores
``REQUEST_FINGERPRINTER_CLASS`` and hashes its own JSON; ours does not.

Settings: ``NEWSCRAWL_HOST_ALIASES`` (dict alias host → canonical host) and
``NEWSCRAWL_ALIAS_FOLD_WWW`` (``www.example.com`` ≡ ``example.com``).

A redirect between two aliases of one page (``example.com/a`` → 301 → ``www.example.com/a``)
would be dropped as a duplicate of its own source; such a request (``redirect_urls`` in meta, same
aliased fingerprint as the URL it was redirected from) gets the fingerprint of its exact URL
instead, so it is fetched once and a redirect loop between aliases still ends (it also hits
``REDIRECT_MAX_TIMES``).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from newscrawl import defaults
from newscrawl.algorithms.fingerprint import url_fingerprint_bytes


class NewsRequestFingerprinter:
    """Scrapy request fingerprinter returning 8-byte fingerprints.

    Args:
        aliases: alias host → canonical host.
        fold_www: treat ``www.<host>`` as ``<host>``.
    """

    def __init__(self, *, aliases: dict | None = None,
                 fold_www: bool = defaults.NEWSCRAWL_ALIAS_FOLD_WWW):
        self.aliases = {str(k).lower().rstrip("."): str(v) for k, v in (aliases or {}).items()}
        self.fold_www = fold_www
        self._cache: WeakKeyDictionary = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        return cls(aliases=settings.getdict("NEWSCRAWL_HOST_ALIASES",
                                            defaults.NEWSCRAWL_HOST_ALIASES),
                   fold_www=settings.getbool("NEWSCRAWL_ALIAS_FOLD_WWW",
                                             defaults.NEWSCRAWL_ALIAS_FOLD_WWW))

    def url_fingerprint(self, url: str, *, method: str = "GET", body: bytes = b"") -> bytes:
        """The 8-byte fingerprint of a request for ``url`` under this fingerprinter's aliases."""
        return url_fingerprint_bytes(url, method=method, body=body, aliases=self.aliases,
                                     fold_www=self.fold_www)

    def fingerprint(self, request) -> bytes:
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
