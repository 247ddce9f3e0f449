"""Compact exact request fingerprints, host aliases and fingerprint buckets (seeds 001 and 003).

Pure functions over strings and bytes; no Scrapy, Twisted or Redis import. They are the single
definition used by Scrapy's request fingerprinter (:mod:`newscrawl.fingerprint`) and by the Redis
duplicate URL eliminator (:mod:`newscrawl.distributed.frontier`), so both agree on what "the same
URL" means.

Mercator's duplicate URL eliminator (Heydon & Najork 1999; seed 001, §4.1) reduces each URL to
an 8-byte checksum and uses the first bytes of the checksum to index a hash table, which costs
about 5.2 bytes per URL. Here the 8-byte fingerprint is the first 8 bytes of SHA-1 over the
canonical URL; a bucket is chosen by its first ``prefix_bytes`` bytes (implicit in the bucket's
name) and only the remaining ``8 - prefix_bytes`` bytes are stored, so the set stays exact at 64
bits: ``prefix_bytes=1`` (256 buckets, 7 bytes per URL) suits crawls up to a few million URLs,
``3`` (Mercator's 3-byte index, 5 bytes per URL) suits billions.

Domain aliases (seed 003, "several domain names on one IP must not cause duplicate collection"):
the host of a URL is replaced by its canonical name before fingerprinting, through an explicit
alias table (``{"203.0.113.7": "www.example.com"}``) and, optionally, by folding a leading
``www.`` (``www.example.com`` and ``example.com`` are one site on nearly every news portal).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from newscrawl.algorithms.urls import canonicalize_url

#: Bytes in one fingerprint (Mercator's 8-byte checksum).
FINGERPRINT_BYTES = 8

_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_host(host: str, *, aliases: Mapping[str, str] | None = None,
                   fold_www: bool = True) -> str:
    """Return the canonical name of ``host`` (lower-case, no trailing dot).

    Args:
        host: a host name or IP literal without port (``"WWW.Example.com."``).
        aliases: alias host → canonical host; applied before and after ``www`` folding, so an
            entry may name either form. Keys and values are compared lower-cased.
        fold_www: drop one leading ``www.`` label when the rest still contains a dot
            (``www.example.com`` → ``example.com``; ``www.com`` stays as it is).

    Returns:
        The canonical host, e.g. ``"example.com"``. Never raises.

    >>> canonical_host("WWW.Example.COM.")
    'example.com'
    >>> canonical_host("127.0.0.21", aliases={"127.0.0.21": "news.example"})
    'news.example'
    """
    host = (host or "").strip().lower().rstrip(".")
    if aliases:
        host = _lookup(aliases, host)
    if fold_www and host.startswith("www.") and "." in host[4:]:
        host = host[4:]
        if aliases:
            host = _lookup(aliases, host)
    return host


def _lookup(aliases: Mapping[str, str], host: str) -> str:
    target = aliases.get(host)
    if target is None:
        return host
    return str(target).strip().lower().rstrip(".")


def alias_url(url: str, *, aliases: Mapping[str, str] | None = None, fold_www: bool = True) -> str:
    """Return the canonical URL (:func:`~newscrawl.algorithms.urls.canonicalize_url`) with its host
    replaced by :func:`canonical_host` and a default port dropped. Never raises on a string."""
    canonical = canonicalize_url(url)
    try:
        parts = urlsplit(canonical)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return canonical
    if not host:
        return canonical
    new_host = canonical_host(host, aliases=aliases, fold_www=fold_www)
    if ":" in new_host:  # IPv6 literal
        new_host = f"[{new_host}]"
    netloc = new_host if port is None or port == _DEFAULT_PORTS.get(parts.scheme) else \
        f"{new_host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def url_fingerprint_bytes(url: str, *, method: str = "GET", body: bytes = b"",
                          aliases: Mapping[str, str] | None = None, fold_www: bool = True) -> bytes:
    """Return the 8-byte fingerprint of a request for ``url``.

    A ``GET`` without body is fingerprinted by its URL alone: the first 8 bytes of SHA-1 over
    :func:`alias_url` — with no aliases and ``fold_www=False`` exactly
    ``bytes.fromhex(newscrawl.algorithms.urls.url_fingerprint(url))``. Any other method or a body
    gives a different fingerprint (SHA-1 over ``METHOD URL\\n`` + body), so a ``HEAD`` probe never
    collides with the page's ``GET``.

    Returns:
        8 bytes. Never raises on a string URL.
    """
    canonical = alias_url(url, aliases=aliases, fold_www=fold_www).encode("utf-8")
    method = (method or "GET").upper()
    if method == "GET" and not body:
        return hashlib.sha1(canonical).digest()[:FINGERPRINT_BYTES]
    digest = hashlib.sha1(method.encode("ascii", "replace") + b" " + canonical + b"\n")
    digest.update(body or b"")
    return digest.digest()[:FINGERPRINT_BYTES]


def split_fingerprint(fingerprint: bytes, prefix_bytes: int) -> tuple[str, bytes]:
    """Split a fingerprint into its bucket name and the suffix stored in that bucket.

    Args:
        fingerprint: at least 8 bytes; only the first 8 are used.
        prefix_bytes: bytes that pick the bucket (1..4); ``256 ** prefix_bytes`` buckets.

    Returns:
        ``(bucket, suffix)``: the prefix as lower-case hex (``"a3"``) and the remaining
        ``8 - prefix_bytes`` bytes.

    Raises:
        ValueError: a fingerprint shorter than 8 bytes or ``prefix_bytes`` outside 1..4.
    """
    if not 1 <= prefix_bytes <= 4:
        raise ValueError(f"prefix_bytes must be 1..4, got {prefix_bytes}")
    if len(fingerprint) < FINGERPRINT_BYTES:
        raise ValueError(f"a fingerprint has {FINGERPRINT_BYTES} bytes, got {len(fingerprint)}")
    fingerprint = fingerprint[:FINGERPRINT_BYTES]
    return fingerprint[:prefix_bytes].hex(), fingerprint[prefix_bytes:]


def bucket_contains(bucket: bytes, suffix: bytes) -> bool:
    """True when ``suffix`` is one of the fixed-width records packed in ``bucket``.

    The bucket is the concatenation of ``len(suffix)``-byte records; a match must start on a
    record boundary (a byte string can also occur across two records). This is the Python twin
    of the Lua scan in :mod:`newscrawl.distributed.frontier`, kept here for tests and tools.

    Raises:
        ValueError: an empty suffix.
    """
    width = len(suffix)
    if not width:
        raise ValueError("empty suffix")
    start = bucket.find(suffix)
    while start != -1:
        if start % width == 0:
            return True
        start = bucket.find(suffix, start + 1)
    return False
