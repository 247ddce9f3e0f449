"""Monitoring mode, the pure half: durations, the due-time queue, the request-rate budget and the
publication → capture delay window (DESIGN §7).

A watched crawl (``scrapy crawl news -a watch=1``) never ends by itself: after the first sweep,
channel pages are fetched again when they are due, new article links at once, known articles
on their correction-decay schedule. This module holds what that needs and nothing of Scrapy or
Twisted; every time is seconds (epoch seconds, UTC, for instants) and is passed in.

* :func:`parse_duration` — ``-a for=90s`` / ``10m`` / ``1h`` / ``1h30m`` / ``2d`` / plain seconds.
* :class:`DueQueue` — a heap of ``(due, rank, key)``; the caller wakes at :meth:`DueQueue.next_due`
  and pops what is due. Entries are never updated in place: a page whose due time moved is
  pushed again and the stale entry is recognised by the caller (lazy deletion, as in the
  priority-queue recipe of the Python ``heapq`` documentation).
* :class:`RateBudget` — ``-a rate=N`` requests per hour for the whole crawl: a token bucket
  (Turner, "New directions in communications", 1986; RFC 2697's single-rate bucket) with one
  bucket per site below it, so a site beyond its fair share only takes spare tokens and one
  busy portal cannot starve the others (hierarchical token bucket, as Linux HTB lends spare
  rate to classes over their share).
* :class:`DelayWindow` — publication → capture delays of the last hour, for the once-a-minute
  log line (median and p90).

>>> parse_duration("1h30m"), parse_duration("90s"), parse_duration("10"), parse_duration("")
(5400.0, 90.0, 10.0, None)
>>> q = DueQueue(); q.push("b", 20.0); q.push("a", 10.0, rank=1); q.next_due()
10.0
>>> q.pop_due(15.0), len(q)
(['a'], 1)
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

__all__ = ["DelayWindow", "DueQueue", "RateBudget", "ReadyPages", "due_rank", "is_on", "watching",
           "parse_duration", "quantile", "sleep_seconds"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)", re.IGNORECASE)
_UNIT_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: Any) -> float | None:
    """Seconds of a duration argument (``-a for=``): ``90s``, ``10m``, ``1h``, ``1h30m``, ``2d``,
    or a plain number of seconds. None, empty or ``0`` give None (no limit).

    Raises:
        ValueError: anything else (negative, unknown unit, trailing text).
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        text = str(value).strip().lower().replace(" ", "")
        if not text:
            return None
        pos, seconds = 0, 0.0
        for match in _DURATION_PART.finditer(text):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
            pos = match.end()
        if pos != len(text):
            raise ValueError(f"a duration is like 90s, 10m, 1h30m or 2d (or seconds), got {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be >= 0 seconds, got {value!r}")
    return seconds or None


def is_on(value: Any, name: str = "watch") -> bool:
    """A switch argument (``-a watch=1``): ``1``, ``true``, ``yes``, ``on`` (any case) are on;
    ``0``, ``false``, ``no``, ``off``, empty and None are off.

    Raises:
        ValueError: any other value (``-a watch=maybe``), naming ``name``.

    >>> is_on("Yes"), is_on(None), is_on(False)
    (True, False, False)
    """
    word = str(value if value is not None else "").strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"{name} must be 1 or 0 (true/false, yes/no, on/off), got {value!r}")


def watching(watch: Any, default: Any, *, revisit: bool, batch_args: Iterable[str] = ()) -> bool:
    """Is this crawl watched: ``-a watch=`` (``watch``), else ``NEWSCRAWL_WATCH_ENABLED``
    (``default``)?

    Args:
        revisit: the crawl state is kept (``NEWSCRAWL_REVISIT_ENABLED``): watching needs it.
        batch_args: monitoring-mode arguments given (``for``, ``rate``).

    Raises:
        ValueError: a switch that is not one (:func:`is_on`); ``for`` / ``rate`` given to a batch
            crawl (it would ignore them); watching without the crawl state.
    """
    on = is_on(watch if watch not in (None, "") else default)
    given = [f"-a {name}=" for name in batch_args]
    if not on and given:
        raise ValueError(f"{' and '.join(given)} only work in monitoring mode: add -a watch=1 "
                         "(a batch crawl caps its requests with -a budget=N)")
    if on and not revisit:
        raise ValueError("monitoring mode (-a watch=1) needs the crawl state: "
                         "NEWSCRAWL_REVISIT_ENABLED=False cannot watch")
    return on


#: Dispatch classes of :func:`due_rank` (lower first among pages due at once).
NEWS, SOURCE, BACKLOG, RECHECK = 0, 1, 2, 3


def due_rank(record: Mapping[str, Any]) -> int:
    """Order among a site's pages due at once: :data:`NEWS` an article never fetched that a
    source listed on a revisit (published since the watch began), :data:`SOURCE` a channel page,
    feed, sitemap or home page, :data:`BACKLOG` an article never fetched that a source listed
    at its first visit (published before), :data:`RECHECK` a re-check of a known article. So
    discovery keeps the visits the channel scheduler planned and backlog drains with what is
    left (issue 20: backlog never starves discovery).

    >>> due_rank({"role": "feed"}), due_rank({"found": "backlog"}), due_rank({"last_visit": 5})
    (1, 2, 3)
    """
    if record.get("role") in ("entry", "node", "frame", "feed", "sitemap"):
        return SOURCE
    if record.get("last_visit"):
        return RECHECK
    return BACKLOG if record.get("found") == "backlog" else NEWS


def sleep_seconds(now: float, longest: float, next_due: float | None, wait: float | None,
                  backlog_sleep: float, loading: bool, stale_at: float | None,
                  deadline: float | None) -> float:
    """Seconds a monitor loop sleeps at ``now``: until the earliest of the next due page
    (``next_due``), the end of a wait for a slot or a token (``wait``, at least
    ``backlog_sleep``; None: nothing waits), a second while the crawl state is ``loading``, the
    moment the oldest page in flight turns stale (``stale_at``) and the ``deadline``; at most
    ``longest``, at least 0.01 (all seconds; instants in epoch seconds).

    >>> sleep_seconds(100.0, 60.0, 130.0, None, 0.25, False, None, 110.0)
    10.0
    """
    candidates = [longest]
    if next_due is not None:
        candidates.append(next_due - now)
    if wait is not None:
        candidates.append(max(wait, backlog_sleep))
    if loading:
        candidates.append(1.0)
    for instant in (stale_at, deadline):
        if instant is not None:
            candidates.append(instant - now)
    return max(min(candidates), 0.01)


def channel_budget(per_hour: float, article_fetches: int, watched: float, window: float,
                   shortest: float) -> float:
    """Requests per hour the channel scheduler may spend: 90 % of the user's rate ``per_hour``
    (requests/hour) less the article fetches of the last ``window`` seconds counted per hour,
    never below 10 % of the rate. The fetches are counted over the time ``watched`` (seconds)
    when that is shorter than the window (at least ``shortest`` seconds): counted over the whole
    window, the first minutes of a run would leave the channels the articles' share of the rate
    and the two would queue for its tokens (the run went over ``-a rate``)."""
    articles = article_fetches * 3600.0 / min(window, max(watched, shortest))
    return max(0.9 * per_hour - articles, 0.1 * per_hour)


def quantile(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values`` by linear interpolation (NaN when empty)."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * min(max(q, 0.0), 1.0)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


class DueQueue:
    """Keys by due time (epoch seconds), then ``rank`` (lower first), then insertion order.

    A key may be in the queue several times (pushed again when its due time changed); the
    caller checks each popped key against its record and skips stale ones.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Hashable]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, key: Hashable, due: float, *, rank: int = 0) -> None:
        """Add ``key`` due at ``due`` (a non-finite due counts as now: ``-inf``)."""
        when = float(due) if isinstance(due, (int, float)) and math.isfinite(due) else -math.inf
        heapq.heappush(self._heap, (when, rank, next(self._seq), key))

    def next_due(self) -> float | None:
        """The earliest due time in the queue, or None when it is empty."""
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float, limit: int | None = None) -> list[Hashable]:
        """Remove and return the keys due at ``now`` (due order), at most ``limit``."""
        out: list[Hashable] = []
        while self._heap and self._heap[0][0] <= now and (limit is None or len(out) < limit):
            out.append(heapq.heappop(self._heap)[3])
        return out


class ReadyPages:
    """Pages due now and not yet handed out, per site. :meth:`pop` serves the most urgent kind
    first (lowest ``rank``: new articles, then channel pages, then re-checks, so re-checks only
    take what discovery leaves), and among sites with a page of that kind the least-served one
    that may send (round-robin by requests spent: one busy portal cannot starve the others);
    within a site, the earliest due.

    >>> r = ReadyPages(); r.add("a.de", "a1", rank=1, due=5.0); r.add("b.de", "b1", rank=1, due=9.0)
    >>> r.add("a.de", "a2", rank=2, due=1.0)
    >>> r.pop(served={"a.de": 3}), r.pop(), "a2" in r, len(r)
    ('b1', 'a1', True, 1)
    """

    def __init__(self) -> None:
        self._sites: dict[str, list[tuple[int, float, int, str]]] = {}
        self._keys: set[str] = set()
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def add(self, site: str, key: str, *, rank: int, due: float) -> None:
        """Add page ``key`` of ``site`` (nothing when it is already waiting)."""
        if key in self._keys:
            return
        self._keys.add(key)
        heapq.heappush(self._sites.setdefault(site, []), (rank, due, next(self._seq), key))

    def pop(self, *, served: Mapping[str, int] | None = None,
            allowed: Callable[[str], bool] | None = None) -> str | None:
        """The next page to send: of the site with the fewest requests ``served`` among those
        ``allowed`` to send now; None when no such site has a page waiting."""
        counts = served or {}
        for site in sorted(self._sites, key=lambda s: (self._sites[s][0][0], counts.get(s, 0))):
            if allowed is not None and not allowed(site):
                continue
            pages = self._sites[site]
            key = heapq.heappop(pages)[3]
            if not pages:
                del self._sites[site]
            self._keys.discard(key)
            return key
        return None


class RateBudget:
    """Requests per hour for the whole crawl, with a fair share per site (module docstring).

    A global bucket holds at most ``burst`` tokens and gains ``rate_per_hour / 3600`` a second;
    each site's bucket gains that rate divided by the number of sites seen so far. A request
    of a site spends one token of both when its own bucket has one; a site beyond its share may
    still spend a global token while the global bucket is more than half full (spare capacity),
    so the lower half stays for the sites within their share.

    Args:
        rate_per_hour: requests per hour (> 0).
        burst: most tokens saved up (requests; default ``burst_seconds`` of the rate, at least 1).
        now: the time the buckets start full (seconds).
        burst_seconds: the default burst as seconds of the rate (5: the rate holds from the
            first minute, no more than five seconds' worth of requests at once).

    Raises:
        ValueError: a rate that is not > 0, or a burst < 1.

    >>> b = RateBudget(3600.0, burst=2, now=0.0)
    >>> [b.try_spend("a.de", 0.0) for _ in range(3)], b.try_spend("b.de", 1.0)
    ([True, True, False], True)
    """

    def __init__(self, rate_per_hour: float, *, burst: float | None = None, now: float = 0.0,
                 burst_seconds: float = 5.0) -> None:
        if not (math.isfinite(rate_per_hour) and rate_per_hour > 0):
            raise ValueError(f"a request rate must be > 0 per hour, got {rate_per_hour!r}")
        self.rate = rate_per_hour / 3600.0
        self.burst = (float(burst) if burst is not None
                      else max(1.0, self.rate * max(float(burst_seconds), 0.0)))
        if self.burst < 1:
            raise ValueError(f"a burst must be >= 1 request, got {burst!r}")
        self.burst_seconds = None if burst is not None else max(float(burst_seconds), 0.0)
        self.tokens = self.burst
        #: tokens backlog and re-checks leave for news and sources (requests)
        self.reserve = 1.0
        self.sites: dict[str, float] = {}
        self.spent: dict[str, int] = {}
        self._at = now

    def set_rate(self, rate_per_hour: float) -> None:
        """Change the rate (requests/hour, > 0; a watch worker's share when workers come and
        go); a default burst follows it and the saved tokens are cut to the new burst.

        Raises:
            ValueError: a rate that is not > 0.
        """
        if not (math.isfinite(rate_per_hour) and rate_per_hour > 0):
            raise ValueError(f"a request rate must be > 0 per hour, got {rate_per_hour!r}")
        self.rate = rate_per_hour / 3600.0
        if self.burst_seconds is not None:
            self.burst = max(1.0, self.rate * self.burst_seconds)
        self.tokens = min(self.tokens, self.burst)
        for site, tokens in self.sites.items():
            self.sites[site] = min(tokens, self.burst)

    def _refill(self, now: float) -> None:
        elapsed = now - self._at
        if elapsed <= 0:
            return
        self._at = now
        gain = elapsed * self.rate
        self.tokens = min(self.burst, self.tokens + gain)
        if self.sites:
            share = gain / len(self.sites)
            for site, tokens in self.sites.items():
                self.sites[site] = min(self.burst, tokens + share)

    def _site(self, site: str) -> float:
        if site not in self.sites:
            self.sites[site] = min(self.burst, max(1.0, self.burst / (len(self.sites) + 1)))
        return self.sites[site]

    def available(self, site: str, now: float, dispatch: int | None = None) -> bool:
        """Could ``site`` spend a request at ``now``? ``dispatch``: the request's class
        (:func:`due_rank`): news and sources (≤ :data:`SOURCE`) may take any global token — the
        channel scheduler planned them inside the rate, a site's share is for the rest —;
        backlog and re-checks (≥ :data:`BACKLOG`) keep :attr:`reserve` tokens back for them and
        keep to the site's share; None (a request from outside the watch loop): the share."""
        self._refill(now)
        own = self._site(site)  # a site shares the refills from the first time it asks
        if self.tokens < 1:
            return False
        if dispatch is not None and dispatch <= SOURCE:
            return True
        if dispatch is not None and self.tokens < 1 + self.reserve:
            return False
        return own >= 1 or self.tokens >= max(1.0, self.burst / 2)

    def try_spend(self, site: str, now: float, dispatch: int | None = None) -> bool:
        """Spend one request of ``site`` at ``now`` (``dispatch``: as :meth:`available`); False
        (nothing spent) when none is left."""
        if not self.available(site, now, dispatch):
            return False
        if self.sites[site] >= 1:
            self.sites[site] -= 1
        self.tokens -= 1
        self.spent[site] = self.spent.get(site, 0) + 1
        return True

    def charge(self, site: str, now: float) -> None:
        """Spend one request of ``site`` at ``now`` whatever is left: the bucket may go below
        zero, and the next requests wait until the refills paid it back (a verification GET
        that belongs to a visit already under way: inside the rate on average, never refused)."""
        self._refill(now)
        self._site(site)
        self.tokens -= 1
        self.sites[site] -= 1
        self.spent[site] = self.spent.get(site, 0) + 1

    def tokens_at(self, now: float) -> float:
        """Tokens of the global bucket at ``now`` (requests that may go out at once)."""
        self._refill(now)
        return self.tokens

    def wait(self, now: float, dispatch: int | None = None) -> float:
        """Seconds from ``now`` until the global bucket holds a token again (0: it does); for
        backlog and re-checks (``dispatch`` ≥ :data:`BACKLOG`) one beyond the :attr:`reserve`."""
        self._refill(now)
        need = 1.0 + (self.reserve if dispatch is not None and dispatch >= BACKLOG else 0.0)
        return 0.0 if self.tokens >= need else (need - self.tokens) / self.rate


class DelayWindow:
    """Publication → capture delays (seconds) of the last ``window`` seconds.

    Args:
        window: how far back delays count (seconds).
    """

    def __init__(self, window: float = 3600.0) -> None:
        self.window = window
        self._items: deque[tuple[float, float]] = deque()

    def add(self, at: float, delay: float) -> None:
        """One article captured at ``at`` whose publication was ``delay`` seconds earlier
        (negative delays — clocks apart — count as 0; non-finite ones are skipped)."""
        if math.isfinite(at) and math.isfinite(delay):
            self._items.append((at, max(delay, 0.0)))

    def delays(self, now: float) -> list[float]:
        """The delays of captures within the window before ``now``."""
        while self._items and self._items[0][0] < now - self.window:
            self._items.popleft()
        return [d for _, d in self._items]

    def median(self, now: float) -> float:
        """Median delay of the window (NaN when empty)."""
        return quantile(self.delays(now), 0.5)
