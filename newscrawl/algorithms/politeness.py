"""Mercator's politeness rule: the delay before the next request to a server.

Mercator (seed 001, §4.1) "guarantees that no server ever receives multiple requests from
Mercator in parallel; in addition, it guarantees that the next request to a server will only be
issued after a multiple (typically 10×) of the time it took to answer the previous request has
passed". The one-request-at-a-time part is enforced by the Redis frontier's per-host lease
(:mod:`newscrawl.distributed.frontier`); this module is the delay formula. Pure; no clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def next_delay(response_time: float, *, factor: float = 10.0, crawl_delay: float | None = None,
               min_delay: float = 0.0, max_delay: float = 60.0) -> float:
    """Return the seconds to wait after a response before the next request to the same server.

    ``max(min_delay, factor × response_time)`` capped at ``max_delay``, then raised to the
    server's robots.txt ``Crawl-delay`` when it gives one (Crawl-delay is the site's own wish and
    is never capped).

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
