"""How long a fetched robots.txt may be reused, and the cached entry as plain data (pure).

RFC 9309 §2.4 (Robots Exclusion Protocol): "Crawlers SHOULD NOT use the cached version for more
than 24 hours, unless the robots.txt file is unreachable", and crawlers MAY use standard HTTP
cache control (RFC 9111). So the freshness lifetime of a robots.txt answer is its own:
``Cache-Control: max-age`` (RFC 9111 §5.2.2.1; ``s-maxage`` is for shared caches and not read),
else ``Expires`` − ``Date`` (§5.3, §4.2.1), ``no-store`` / ``no-cache`` meaning 0 — and in every
case at most ``cap`` (default 24 h, ``NEWSCRAWL_ROBOTSCACHE_MAX_AGE``); an answer with none of
these headers is fresh for ``cap``. A crawl (or a long-running monitor) then fetches robots.txt
once per host per lifetime instead of once per run.

An entry (:func:`entry`) holds the origin (``scheme://netloc``), the HTTP status, the body as
text (robots.txt is UTF-8, RFC 9309 §2.3; at most :data:`MAX_BODY` bytes are kept, the limit a
parser must read, §2.5), and when it was fetched and expires (epoch seconds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

from newscrawl.algorithms.changedetect import parse_http_date

__all__ = ["DAY", "MAX_BODY", "entry", "freshness_lifetime", "is_fresh"]

DAY: Final = 86400.0
#: Bytes of a robots.txt kept (RFC 9309 §2.5: parsers must read at least 500 KiB).
MAX_BODY: Final = 500 * 1024
#: Statuses whose answer is cached: a body (2xx) or "unavailable, crawl freely" (4xx, RFC 9309
#: §2.3.1.3). 5xx / 429 mean "unreachable" and are asked again.
CACHEABLE: Final = frozenset(range(200, 300)) | (frozenset(range(400, 500)) - {429})

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(?:no-store|no-cache)\s*(?:[,=]|$)", re.IGNORECASE)


def freshness_lifetime(cache_control: str | None, expires: str | None, date: str | None, *,
                       cap: float = DAY) -> float:
    """Seconds a robots.txt answer may be reused (module docstring), in ``[0, cap]``.

    Args:
        cache_control, expires, date: the answer's header values (None when absent).
        cap: the longest reuse (seconds, RFC 9309 §2.4: 24 h).

    >>> freshness_lifetime("public, max-age=3600", None, None)
    3600.0
    >>> freshness_lifetime(None, None, None)
    86400.0
    >>> freshness_lifetime("max-age=31536000", None, None)
    86400.0
    >>> freshness_lifetime("no-cache", None, None)
    0.0
    >>> freshness_lifetime(None, "Thu, 01 Jan 2026 02:00:00 GMT", "Thu, 01 Jan 2026 00:00:00 GMT")
    7200.0
    """
    cap = cap if math.isfinite(cap) and cap > 0 else 0.0
    if cache_control:
        if _NO_CACHE.search(cache_control):
            return 0.0
        m = _MAX_AGE.search(cache_control)
        if m:
            return float(min(int(m.group(1)), cap))
    if expires is not None:
        until = parse_http_date(expires)
        base = parse_http_date(date)
        if until is None or base is None:  # an invalid Expires means "already expired" (§5.3)
            return 0.0
        return float(min(max(until - base, 0.0), cap))
    return float(cap)


def entry(origin: str, status: int, body: bytes, *, now: float, lifetime: float) -> dict[str, Any]:
    """A cache entry for the answer ``status`` / ``body`` of ``origin``'s robots.txt at ``now``
    (epoch seconds), fresh for ``lifetime`` seconds."""
    return {"origin": origin, "status": int(status),
            "body": body[:MAX_BODY].decode("utf-8", errors="replace"),
            "fetched": float(now), "expires": float(now) + max(float(lifetime), 0.0)}


def is_fresh(cached: Any, origin: str, now: float) -> bool:
    """True when ``cached`` is a well-formed entry of ``origin`` that has not expired at ``now``
    and was not fetched in the future (a clock set back)."""
    if not isinstance(cached, Mapping) or cached.get("origin") != origin:
        return False
    status, body = cached.get("status"), cached.get("body")
    fetched, expires = cached.get("fetched"), cached.get("expires")
    if not (isinstance(status, int) and status in CACHEABLE and isinstance(body, str)):
        return False
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (fetched, expires)):
        return False
    return bool(fetched <= now < expires)  # type: ignore[operator]
