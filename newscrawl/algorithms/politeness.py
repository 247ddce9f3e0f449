"""Mercator's politeness rule: the delay before the next request to a server.

Mercator (seed 001, §4.1) "guarantees that no server ever receives multiple requests from
Mercator in parallel; in addition, it guarantees that the next request to a server will only be
issued after a multiple (typically 10×) of the time it took to answer the previous request has
passed". The one-request-at-a-time part is enforced by the Redis frontier's per-host lease
(:mod:`newscrawl.distributed.frontier`) and, in one process, by the downloader slot of the host
(:mod:`extensions.politeness`); this module is the delay formula and the per-host state both
modes share (:class:`HostPoliteness`: Crawl-delay with its cap, response times, ``Retry-After``
holds). Pure; every time is an argument.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from protego import Protego

from newscrawl.algorithms.changedetect import parse_http_date


def next_delay(response_time: float, *, factor: float = 10.0, crawl_delay: float | None = None,
               min_delay: float = 0.0, max_delay: float = 60.0) -> float:
    """Return the seconds to wait after a response before the next request to the same server.

    ``max(min_delay, factor × response_time)`` capped at ``max_delay``, then raised to the
    server's robots.txt ``Crawl-delay`` when it gives one (Crawl-delay is the site's own wish and
    is not capped here; :class:`HostPoliteness` caps it before).

    Args:
        response_time: seconds the previous request took (request sent → response read); a
            negative or non-finite value counts as 0.
        factor: Mercator's multiple k (10 in the paper); 0 turns the rule off.
        crawl_delay: robots.txt Crawl-delay of the server in seconds, or ``None``.
        min_delay: lower bound in seconds.
        max_delay: upper bound of the ``factor × response_time`` part in seconds (a 30 s timeout
            would otherwise stall the host for 5 minutes).

    Returns:
        The delay in seconds, ``>= 0``.

    Raises:
        ValueError: a negative factor or bound, or ``min_delay > max_delay``.

    >>> next_delay(0.2)
    2.0
    >>> next_delay(0.2, crawl_delay=5)
    5.0
    """
    if factor < 0 or min_delay < 0 or max_delay < 0:
        raise ValueError("factor, min_delay and max_delay must be >= 0")
    if min_delay > max_delay:
        raise ValueError(f"min_delay {min_delay} > max_delay {max_delay}")
    if not math.isfinite(response_time) or response_time < 0:
        response_time = 0.0
    delay = min(max(min_delay, factor * response_time), max_delay)
    if crawl_delay is not None and math.isfinite(crawl_delay) and crawl_delay > delay:
        delay = float(crawl_delay)
    return delay


def response_time_estimate(samples: Iterable[float]) -> float:
    """Return a server's response time from its last few measured response times (seconds).

    A crawler measures a response time as "request handed to the network → response read", and
    a busy event loop (a worker parsing pages) only notices a finished response late: the delay
    adds to every sample and is never negative, so the smallest recent sample is the best
    estimate of the server's own time, while a server that really slows down raises all samples
    and thus the minimum within a few requests. With a single sample this is Mercator's literal
    "time it took to answer the previous request".

    Args:
        samples: recent response times in seconds (non-finite and negative values ignored).

    Returns:
        The smallest valid sample, or 0.0 when there is none.

    >>> response_time_estimate([0.031, 0.004, 0.012])
    0.004
    """
    valid = [s for s in samples if math.isfinite(s) and s >= 0]
    return min(valid) if valid else 0.0


def retry_after_seconds(value: str, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header value (RFC 9110 §10.2.3).

    Args:
        value: ``delay-seconds`` (``"120"``) or an HTTP-date (``"Fri, 31 Dec 1999 23:59:59 GMT"``).
        now: the current time in epoch seconds (an HTTP-date is relative to it).

    Returns:
        Seconds ``>= 0`` (a date in the past gives 0), or ``None`` when the value is neither.

    >>> retry_after_seconds("120", 0.0), retry_after_seconds("Thu, 01 Jan 1970 00:01:00 GMT", 30.0)
    (120.0, 30.0)
    >>> retry_after_seconds("soon", 0.0) is None
    True
    """
    text = value.strip()
    if text.isdigit():
        return float(text)
    when = parse_http_date(text)
    return None if when is None else max(0.0, when - now)


@dataclass
class HostPoliteness:
    """Per-host politeness state shared by the single-process and the distributed middlewares.

    Holds, per host, robots.txt ``Crawl-delay`` (capped at ``crawl_delay_max``), the last few
    response times, and a "not before" time set by ``Retry-After``; answers the pause after a
    response (:func:`next_delay`) and when the host may be asked again. Pure: every time is an
    argument (seconds, any monotonic clock).

    Attributes:
        factor, min_delay, max_delay: the Mercator pause rule (:func:`next_delay`).
        crawl_delay_max: largest Crawl-delay honoured (seconds); 0 = no cap.
        rt_window: response times kept per host (the smallest counts; >= 1).
        retry_after_max: largest Retry-After honoured (seconds).
    """

    factor: float = 10.0
    min_delay: float = 0.0
    max_delay: float = 60.0
    crawl_delay_max: float = 60.0
    rt_window: int = 5
    retry_after_max: float = 600.0
    crawl_delays: dict[str, float] = field(default_factory=dict)
    response_times: dict[str, deque[float]] = field(default_factory=dict)
    not_before: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        next_delay(0.0, factor=self.factor, min_delay=self.min_delay, max_delay=self.max_delay)
        if self.rt_window < 1:
            raise ValueError(f"rt_window must be >= 1, got {self.rt_window}")
        if self.crawl_delay_max < 0 or self.retry_after_max < 0:
            raise ValueError("crawl_delay_max and retry_after_max must be >= 0")

    def set_crawl_delay(self, host: str, delay: float) -> tuple[float, bool]:
        """Record the host's robots.txt Crawl-delay (seconds).

        Returns:
            ``(delay applied, True when the cap cut it)``; a non-positive or non-finite delay
            is ignored (``(0.0, False)``).
        """
        if not math.isfinite(delay) or delay <= 0:
            return 0.0, False
        capped = bool(self.crawl_delay_max) and delay > self.crawl_delay_max
        applied = self.crawl_delay_max if capped else float(delay)
        self.crawl_delays[host] = applied
        return applied, capped

    def record_response(self, host: str, response_time: float | None) -> float:
        """Add a measured response time (``None``: not measured); return the host's pause
        after this response (seconds): :func:`next_delay` of the smallest recent response
        time, at least the Crawl-delay."""
        window = self.response_times.get(host)
        if window is None:
            window = self.response_times[host] = deque(maxlen=self.rt_window)
        if response_time is not None:
            window.append(response_time)
        return self.pause(host)

    def pause(self, host: str) -> float:
        """The host's current pause between requests (seconds)."""
        return next_delay(response_time_estimate(self.response_times.get(host, ())),
                          factor=self.factor, min_delay=self.min_delay, max_delay=self.max_delay,
                          crawl_delay=self.crawl_delays.get(host))

    def hold(self, host: str, seconds: float, now: float) -> float:
        """The server asked to wait (``Retry-After``): no request to ``host`` before
        ``now + min(seconds, retry_after_max)``. Returns the seconds applied."""
        seconds = min(max(0.0, seconds), self.retry_after_max)
        self.not_before[host] = max(self.not_before.get(host, 0.0), now + seconds)
        return seconds

    def wait(self, host: str, now: float) -> float:
        """Seconds until ``host`` may be asked again because of a :meth:`hold` (0: now)."""
        return max(0.0, self.not_before.get(host, 0.0) - now)


#: Bytes of a robots.txt that are read (RFC 9309 §2.5: at least 500 KiB must be parsed; the
#: rest may be ignored). A 5 MB robots.txt took Protego 11 s to parse on the reactor thread.
ROBOTS_TXT_MAX_BYTES = 500 * 1024


def truncate_robots_txt(body: bytes, max_bytes: int = ROBOTS_TXT_MAX_BYTES) -> bytes:
    """The first ``max_bytes`` of a robots.txt, cut after its last complete line.

    >>> truncate_robots_txt(b"User-agent: *\\nDisallow: /a\\nDisallow: /b\\n", 30)
    b'User-agent: *\\nDisallow: /a\\n'
    """
    if len(body) <= max_bytes:
        return body
    head = body[:max_bytes]
    end = head.rfind(b"\n")
    return head[:end + 1] if end >= 0 else head


def crawl_delay_of(robots_txt: bytes, user_agent: str) -> float | None:
    """The ``Crawl-delay`` (seconds) a robots.txt body gives ``user_agent``, read with Protego
    (Scrapy's robots.txt parser) from its first :data:`ROBOTS_TXT_MAX_BYTES`; ``None`` when it
    gives none, or the body does not parse.

    >>> crawl_delay_of(b"User-agent: *\\nCrawl-delay: 3600\\n", "newscrawl")
    3600.0
    """
    try:
        delay = Protego.parse(truncate_robots_txt(robots_txt).decode("utf-8", "replace")
                              ).crawl_delay(user_agent)
    except Exception:  # noqa: BLE001 - a broken robots.txt has no Crawl-delay for us
        return None
    if delay is None or not math.isfinite(delay) or delay <= 0:
        return None
    return float(delay)
