"""What a source's listing says about its publishing rate: cold-start evidence for the channel
scheduler.

A channel page, feed or sitemap seen for the first time lists its newest articles, often with
their publication times (feed ``pubDate`` / Atom ``published``, sitemap
``news:publication_date`` / ``lastmod``, a teaser's ``<time datetime>``) or at least their days
(``/2026/12/04/`` in the URL). The spacing of the newest items is a direct measurement of the
source's rate, so its first revisit can be planned from the page instead of from the 1 link/hour
prior (:class:`~newscrawl.algorithms.channelsched.ChannelScheduler`).

The estimator. Listed items are the newest ``m`` of a Poisson process of rate ``λ``: with
``t_k`` the ``k``-th newest publication time, ``now − t_k`` is Gamma(``k``, ``λ``) distributed
and ``(k − 1) / (now − t_k)`` is the unbiased estimate of ``λ`` (the waiting-time estimator of a
Poisson process; Cox & Lewis, "The Statistical Analysis of Series of Events", 1966, §2.2; Cho &
Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003, §4, estimate the same
rate from a page's last-modified times). ``k`` is 90 % of the dated items, so a pinned old
story or two at the bottom of a list does not stretch the window. The evidence weighs as
``min(now − t_k, max_weight)`` seconds of watching: a list spanning ten days says little about
the next hour, one spanning ten minutes as much as ten minutes of visits would.

Day-only dates (a URL date) say less: the ``k``-th item was published somewhere in its day, so
the window is taken from the middle of that day (at least half the time since its start). When
every dated item is from today the listing only bounds the rate from below (the list may hold
a fraction of today's output): :attr:`ListingEvidence.lower_bound` is set and the scheduler
explores (revisits soon) instead of trusting it. Pure: no clock read, times in epoch seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from newscrawl.algorithms.pubdate import date_from_url

__all__ = ["DAY", "ListingEvidence", "entry_time", "links_evidence", "listing_evidence"]

DAY = 86400.0
#: Dated items used: the newest share of them (the rest may be pinned or featured old stories).
NEWEST_SHARE = 0.9
#: A date this far after ``now`` is a clock or time-zone error and is ignored (seconds).
FUTURE_SLACK = 600.0


@dataclass(frozen=True, slots=True)
class ListingEvidence:
    """A rate measured on one listing.

    Attributes:
        rate: new items per second (≥ 0).
        seconds: how much watching the evidence is worth (seconds, ≥ 0).
        items: dated items the estimate used.
        exact: True when the times were exact instants, False for day-only dates.
        lower_bound: True when every dated item lies in the current day (day-only dates): the
            rate is at least ``rate``, perhaps much more.
    """

    rate: float
    seconds: float
    items: int
    exact: bool
    lower_bound: bool = False

    @property
    def links(self) -> float:
        """Pseudo-count of new links the evidence stands for (``rate × seconds``)."""
        return self.rate * self.seconds


def listing_evidence(exact_times: Iterable[float | None], day_times: Iterable[float | None],
                     now: float, *, max_weight: float = 3600.0) -> ListingEvidence | None:
    """The publishing rate a listing shows, or None when it shows none.

    Args:
        exact_times: publication instants of listed items (epoch seconds; None: unknown).
        day_times: for items with only a day, the start of that day (epoch seconds, UTC).
        now: when the listing was fetched (epoch seconds).
        max_weight: most seconds of watching the evidence may be worth.

    Returns:
        :class:`ListingEvidence` from the exact times when at least two are usable, else from
        the day-only dates when at least two are usable, else None. Times after
        ``now + FUTURE_SLACK`` and non-finite ones are ignored.

    >>> e = listing_evidence([1000.0 - 60 * i for i in range(11)], [], 1000.0)
    >>> round(e.rate * 60, 3), e.items, e.exact
    (1.0, 10, True)
    >>> listing_evidence([5.0], [], 10.0) is None
    True
    """
    exact = _usable(exact_times, now)
    if len(exact) >= 2:
        return _estimate(exact, now, max_weight, exact=True)
    days = _usable(day_times, now)
    if len(days) >= 2:
        return _estimate(days, now, max_weight, exact=False)
    return None


def _usable(times: Iterable[float | None], now: float) -> list[float]:
    out = []
    for t in times:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            continue
        if t > now + FUTURE_SLACK:
            continue
        out.append(min(float(t), now))
    out.sort(reverse=True)
    return out


def _estimate(times: list[float], now: float, max_weight: float, *, exact: bool) -> ListingEvidence:
    k = max(2, math.ceil(NEWEST_SHARE * len(times)))
    k = min(k, len(times))
    t_k = times[k - 1]
    lower = False
    if exact:
        span = now - t_k
    else:
        span = max(now - (t_k + DAY / 2), (now - t_k) / 2)
        today = math.floor(now / DAY) * DAY
        lower = t_k >= today  # every dated item is from today: censored
    span = max(span, 1.0)
    rate = (k - 1) / span
    return ListingEvidence(rate=rate, seconds=min(span, max(max_weight, 0.0)), items=k,
                           exact=exact, lower_bound=lower)


def links_evidence(links: list[Mapping[str, Any]], now: float) -> tuple[float, float] | None:
    """``(rate links/s, seconds)`` of the article links a source lists, for its first revisit
    (:func:`newscrawl.algorithms.listing.listing_evidence`): exact times from the links'
    ``published`` (feed and sitemap entries, teasers' ``<time datetime>``), else the days in
    their URLs. None when the listing tells nothing, or only a lower bound (all dated today)."""
    exact: list[float | None] = []
    days: list[float | None] = []
    for link in links:
        if link.get("role") != "content":
            continue
        when = link.get("published")
        if isinstance(when, (int, float)) and not isinstance(when, bool):
            exact.append(float(when))
            continue
        day = date_from_url(link.get("target_url"))
        if day is not None:
            days.append(datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp())
    found = listing_evidence(exact, days, now)
    if found is None or found.lower_bound:
        return None
    return found.rate, found.seconds


def entry_time(entry: Any) -> float | None:
    """When a feed or sitemap entry says its article was published (epoch seconds), for the
    listing evidence of the channel scheduler (:mod:`newscrawl.algorithms.listing`)."""
    for name in ("published", "news_publication_date", "updated", "lastmod"):
        when = getattr(entry, name, None)
        if when is not None and hasattr(when, "timestamp"):
            return float(when.timestamp())
    return None
