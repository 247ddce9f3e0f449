"""Which sites are due for a recurring crawl: the pure half of ``newscrawl schedule``.

A *site* is a registered domain (``zeit.de``); its entry URLs are the seed lines of that domain,
crawled together by one scrapyd job. Each finished job is one visit of the site, recorded as a
:class:`~newscrawl.algorithms.revisit.Observation`: ``time`` is when the job was scheduled,
``changed`` means the crawl stored at least one article not seen before, ``new_links`` is how
many. The revisit estimators of :mod:`newscrawl.algorithms.revisit` (default ``auto``) turn a
site's visit history into its next due time; a site never crawled is due at once.

Pure: nothing here reads the clock, the store or scrapyd. Times are seconds since the epoch
(UTC) and every function that needs the present takes ``now``.

>>> from newscrawl.algorithms.revisit import HalveDouble
>>> history = [run_observation(0.0, 12)]
>>> next_due(history, estimator=HalveDouble(), min_interval=900.0, max_interval=86400.0)
3600.0
>>> due_sites(["a.de", "b.de", "c.de"], {"a.de": 3600.0, "b.de": None, "c.de": 60.0}, 100.0)
['b.de', 'c.de']
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from newscrawl.algorithms.revisit import Estimator, Observation
from newscrawl.algorithms.urls import host_of, registered_domain

__all__ = ["HOW_NEW_ARTICLES", "due_sites", "group_sites", "next_due", "run_observation", "trim_history"]

#: ``Observation.how`` of a site visit: changed means "new article URLs were stored".
HOW_NEW_ARTICLES = "new_articles"


def group_sites(entry_urls: Iterable[str]) -> dict[str, list[str]]:
    """Group entry URLs by site (registered domain), in order of first appearance.

    Args:
        entry_urls: absolute http(s) URLs (as returned by ``spiders.news.read_entry_urls``).

    Returns:
        ``{site: [url, ...]}``; duplicate URLs are dropped. URLs without a host are skipped.

    >>> group_sites(["https://www.zeit.de/index", "https://news.sina.com.cn/", "https://zeit.de/"])
    {'zeit.de': ['https://www.zeit.de/index', 'https://zeit.de/'], 'sina.com.cn': ['https://news.sina.com.cn/']}
    """
    sites: dict[str, list[str]] = {}
    for url in entry_urls:
        site = registered_domain(host_of(url))
        if not site:
            continue
        urls = sites.setdefault(site, [])
        if url not in urls:
            urls.append(url)
    return sites


def run_observation(scheduled_at: float, new_articles: int) -> Observation:
    """One finished crawl of a site as a visit.

    Args:
        scheduled_at: when the job was scheduled (seconds since the epoch, UTC); the visit time.
        new_articles: articles of the site first stored since ``scheduled_at`` (negative is 0).
    """
    new = max(int(new_articles), 0)
    return Observation(time=float(scheduled_at), changed=new > 0, how=HOW_NEW_ARTICLES, new_links=new)


def trim_history(history: Sequence[Observation], keep: int) -> list[Observation]:
    """The last ``keep`` observations (by time; at least one is kept when there are any)."""
    ordered = sorted(history, key=lambda o: o.time)
    return ordered[-max(int(keep), 1):] if ordered else []


def next_due(
    history: Sequence[Observation],
    *,
    estimator: Estimator,
    min_interval: float,
    max_interval: float,
) -> float | None:
    """When a site with this visit history is due again (seconds since the epoch).

    The estimator is asked at the time of the last visit, so the answer does not depend on when
    the question is asked: ``last visit + estimator.next_interval(history, last visit)``, an
    interval within ``[min_interval, max_interval]`` seconds.

    Returns:
        The due time, or ``None`` (due now) when the history holds no usable visit.

    Raises:
        ValueError: ``0 < min_interval <= max_interval`` does not hold.
    """
    visits = sorted((o for o in history if isinstance(o.time, (int, float)) and math.isfinite(o.time)),
                    key=lambda o: o.time)
    if not (0 < min_interval <= max_interval) or not math.isfinite(max_interval):
        raise ValueError(f"need 0 < min_interval <= max_interval, got [{min_interval}, {max_interval}]")
    if not visits:
        return None
    last = visits[-1].time
    return last + estimator.next_interval(visits, last, min_interval=min_interval,
                                          max_interval=max_interval)


def due_sites(
    sites: Iterable[str],
    due_at: Mapping[str, float | None],
    now: float,
    *,
    busy: Collection[str] = (),
) -> list[str]:
    """The sites to crawl now, most urgent first.

    Args:
        sites: the sites of the seeds file.
        due_at: next due time per site (seconds since the epoch); a missing site, ``None`` or a
            non-finite value (junk from storage) means due now.
        now: the present (seconds since the epoch).
        busy: sites whose last job is still pending or running: never due.

    Returns:
        Due sites: those never crawled first (in input order), then the others by due time
        (most overdue first; ties in input order). Each site once.
    """
    never: list[str] = []
    overdue: list[tuple[float, int, str]] = []
    seen: set[str] = set()
    for index, site in enumerate(sites):
        if site in seen or site in busy:
            continue
        seen.add(site)
        due = due_at.get(site)
        if due is None or not isinstance(due, (int, float)) or not math.isfinite(due):
            never.append(site)
        elif due <= now:
            overdue.append((float(due), index, site))
    return never + [site for _, _, site in sorted(overdue)]
