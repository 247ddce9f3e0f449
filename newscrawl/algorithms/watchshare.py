"""Monitoring mode on several workers, the pure half: who owns a page, which share of the
request rate a worker spends, and when a channel taken for a visit may be taken again.

N watch workers on one Redis (``scrapy crawl news -a watch=1`` with ``REDIS_URL``) share one
schedule; the Redis half is :mod:`newscrawl.distributed.watchshare`. Every time here is seconds
(epoch seconds for instants) and is passed in; nothing reads a clock.

* **Ownership** — :func:`owner_of` is rendezvous (highest random weight) hashing (Thaler &
  Ravishankar, "Using name-based mappings to increase hit rates", IEEE/ACM ToN 6(1), 1998):
  every worker that sees the same set of live workers computes the same owner for a page, with
  no coordination, and when a worker leaves only its pages move, spread evenly over the others
  (a new worker takes about 1/N of every other worker's pages). :func:`handover` tells a worker
  which pages it gained and lost when the live set changed.
* **Claims** — ownership alone is not enough while two workers see different live sets (a
  heartbeat about to expire): a channel is fetched only after an atomic claim in Redis that
  succeeds when the channel's shared due time has passed (:func:`may_take`) and moves it to
  ``now + claim_ttl``; the visit then sets the scheduler's next due time. A worker killed with a
  claim in hand holds the channel for at most ``claim_ttl`` seconds.
* **Rate share** — ``-a rate=N`` is for the whole crawl: each live worker spends
  :func:`rate_share` of it (its token bucket is rescaled when the live set changes), so the sum
  over the workers is the global rate.

>>> owner_of("page-1", ["w1", "w2"]) in ("w1", "w2"), owner_of("page-1", [])
(True, None)
>>> rate_share(3600.0, 3), may_take(None, 5.0), may_take(10.0, 5.0)
(1200.0, True, False)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

__all__ = ["claim_until", "handover", "may_take", "owned", "owner_of", "rate_share", "weight"]


def weight(worker: str, key: str) -> int:
    """The rendezvous weight of ``key`` on ``worker``: the first 8 bytes of
    BLAKE2b(``worker`` NUL ``key``) as an integer (stable over processes and Python versions)."""
    digest = hashlib.blake2b(f"{worker}\0{key}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def owner_of(key: str, workers: Iterable[str]) -> str | None:
    """The worker owning ``key``: the one with the highest :func:`weight` (ties: the larger
    worker id); None when there is no worker."""
    best: tuple[int, str] | None = None
    for worker in workers:
        cand = (weight(worker, key), worker)
        if best is None or cand > best:
            best = cand
    return None if best is None else best[1]


def owned(keys: Iterable[str], workers: Iterable[str], me: str) -> set[str]:
    """The keys ``me`` owns among ``keys`` when ``workers`` are live (``me`` counts as live)."""
    live = sorted(set(workers) | {me})
    return {k for k in keys if owner_of(k, live) == me}


def handover(before: Iterable[str], after: Iterable[str]) -> tuple[set[str], set[str]]:
    """``(gained, lost)``: the keys owned ``after`` a change of the live set and not before,
    and those owned before and not after."""
    old, new = set(before), set(after)
    return new - old, old - new


def rate_share(rate_per_hour: float, workers: int) -> float:
    """Requests per hour one of ``workers`` live workers may spend of a global
    ``rate_per_hour`` (an even split; at least one worker is assumed).

    Raises:
        ValueError: a rate that is not finite and > 0.
    """
    if not (math.isfinite(rate_per_hour) and rate_per_hour > 0):
        raise ValueError(f"a request rate must be > 0 per hour, got {rate_per_hour!r}")
    return rate_per_hour / max(int(workers), 1)


def may_take(due: float | None, now: float) -> bool:
    """May a channel whose shared due time is ``due`` (None: never scheduled) be claimed at
    ``now``? Yes once the due time has passed; the Lua twin is in
    :mod:`newscrawl.distributed.watchshare`."""
    return due is None or not math.isfinite(due) or due <= now


def claim_until(now: float, claim_ttl: float) -> float:
    """The shared due time a claim sets: ``now + claim_ttl`` (seconds, > 0).

    Raises:
        ValueError: a ``claim_ttl`` that is not finite and > 0.
    """
    if not (math.isfinite(claim_ttl) and claim_ttl > 0):
        raise ValueError(f"NEWSCRAWL_WATCH_CLAIM_TTL must be > 0 seconds, got {claim_ttl!r}")
    return now + claim_ttl
