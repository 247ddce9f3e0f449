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
from collections.abc import Iterable, Mapping
from typing import Any

from newscrawl.algorithms.channelsched import ChannelScheduler
from newscrawl.algorithms.revisitplan import restore_channel

__all__ = ["adopt_estimate", "claim_until", "handover", "may_take", "owned", "owner_of",
           "page_of", "published_estimate", "rate_share", "weight"]

#: Record fields a published channel estimate carries, so a worker that never saw the channel
#: can feed it (:func:`page_of`).
PAGE_FIELDS = ("url", "role", "host", "site", "request")


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


def published_estimate(record: Mapping[str, Any], sched: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a visit of channel ``record`` publishes: the scheduler's estimate ``sched``
    (``ChannelScheduler.export``), the visit time, the next due time and the page itself."""
    return {"sched": dict(sched) if sched else None, "last_visit": record.get("last_visit"),
            "due": record.get("due"), "page": {k: record.get(k) for k in PAGE_FIELDS}}


def page_of(estimate: Mapping[str, Any]) -> dict[str, Any] | None:
    """The keyword arguments of ``RunState.ensure`` (``url``, ``role``, ``host``, ``site``,
    ``request``) for a channel known only from a published ``estimate``; None when it does not
    name a URL."""
    page = estimate.get("page")
    if not isinstance(page, Mapping) or not isinstance(page.get("url"), str) or not page["url"]:
        return None
    ctx = page.get("request")
    return {"url": page["url"], "role": str(page.get("role") or "node"),
            "host": str(page.get("host") or ""), "site": str(page.get("site") or ""),
            "request": dict(ctx) if isinstance(ctx, Mapping) else None}


def adopt_estimate(scheduler: ChannelScheduler, record: dict[str, Any],
                   estimate: Mapping[str, Any] | None) -> bool:
    """Go on from a channel ``estimate`` another worker published when its visit is newer
    than the one ``record`` knows: the scheduler takes the estimate, the record the visit
    time and due time (in place). True when taken; junk is ignored (False).

    >>> from newscrawl.algorithms.revisitplan import RevisitConfig
    >>> s = RevisitConfig().channel_scheduler(); rec = {"fp": "c", "role": "node", "last_visit": 5.0}
    >>> adopt_estimate(s, rec, {"last_visit": 4.0, "sched": {}}), adopt_estimate(s, rec, None)
    (False, False)
    """
    if not isinstance(estimate, Mapping):
        return False
    last = estimate.get("last_visit")
    known = record.get("last_visit")
    if not isinstance(last, (int, float)) or (isinstance(known, (int, float)) and last <= known):
        return False
    if not restore_channel(scheduler, {**record, "sched": estimate.get("sched")}):
        return False
    record["last_visit"] = float(last)
    if isinstance(estimate.get("due"), (int, float)):
        record["due"] = float(estimate["due"])
    return True
