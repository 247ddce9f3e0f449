"""Crawl-state records of known pages: what a visit changes, when a page is due, which due page
to fetch first (pure; DESIGN §5, seeds 000 and 002 §3).

A *record* is a plain dict per known URL (the ``pages`` collection of the store holds it with
datetimes; here every time is float seconds since the epoch, UTC). Fields:

=================== ==========================================================================
``fp``              URL fingerprint of the requested URL (:func:`newscrawl.algorithms.urls.url_fingerprint`)
``url``             the requested URL
``host``/``site``   host name / registered domain
``role``            ``entry`` (seed), ``node`` (channel page) or ``content`` (article page)
``seed``            True for the analysts' entry URLs (the seed set)
``request``         what the spider needs to fetch it again (entry_url, start_url, depth,
                    link_class, features, parent_weight, weight, referer)
``first_seen``      when the URL was first known
``last_visit``      time of the last visit; None while it is only *to visit*
``visits``          number of visits
``status``          HTTP status of the last visit (0: no answer)
``misses``          consecutive visits that failed (status >= 400 or no answer)
``validators``      ``{etag, last_modified, content_length}`` of the last full answer
``fingerprint``     content fingerprint of the last full answer (article text or link set)
``listed``          content links the channel page listed at the last full visit
``history``         the last ``history`` visits: ``{t, changed, how, status, new_links}``
``interval``        current revisit interval (seconds)
``estimator``       the estimator chosen for the page, and ``estimator_reason`` why
``sched``           channel pages: the channel scheduler's estimate of the page
                    (:meth:`~newscrawl.algorithms.channelsched.ChannelScheduler.export`; times
                    in it are epoch seconds in the store too)
``rate``            channel pages: estimated new links per hour at the last visit
``due``             when the page is due next (the *to-visit* set is ``due <= now``)
``pagerank``        PageRank (:mod:`newscrawl.algorithms.pagerank`), None until computed
``weight``          NewsPageRank weight of the page (seed 004)
``published``       publication time of an article, when extracted
``last_changed``    time of the last visit that saw a change
``evicted``         True once the page body was evicted (the record stays, so the URL is not
                    taken for a new one)
=================== ==========================================================================

Channel pages (entry and node) are scheduled by the run's
:class:`~newscrawl.algorithms.channelsched.ChannelScheduler` (``scheduler=`` of
:func:`record_visit`: visits ∝ √ rate of new links within the channel budget, hour-of-day
profile per host; entry pages count new *channel* links, node pages new article links);
:func:`replan_channels` moves the due times of every visited channel to the scheduler's plan
at the start of a re-run. Without a scheduler they get the per-page choice of
:func:`~newscrawl.algorithms.revisit.choose_estimator` over visits where "changed" means *new
article links appeared* (seed 000's predictors). Article pages get
:class:`~newscrawl.algorithms.revisit.CorrectionDecay` (re-checks soon after publication, then
rarely). Failed visits back off exponentially from ``miss_interval``.

Priorities for a request budget (Scrapy pops the highest first): seeds first, then the value of
a request in expected *new articles*: a due channel page is worth the new links it is expected
to show (its learned rate × time since the last visit), a newly found article link is worth one
article, a re-check of a known article is worth none (it runs after discovery, see the
pipeline).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from newscrawl.algorithms.channelsched import ChannelScheduler
from newscrawl.algorithms.revisit import (
    ESTIMATORS,
    HOW_FIRST,
    CorrectionDecay,
    Observation,
    choose_estimator,
    clamp_interval,
)

__all__ = [
    "CHANNEL_ROLES",
    "NEW_ARTICLE_PRIORITY",
    "SEED_PRIORITY",
    "RevisitConfig",
    "channel_yield",
    "due_order",
    "is_due",
    "new_article_priority",
    "new_record",
    "observations",
    "record_visit",
    "replan_channels",
    "restore_channel",
    "schedule",
    "yield_priority",
]

#: Roles of channel pages (scheduled by new-article yield); feeds and sitemaps are sources
#: scheduled like them (their yield: new entries, middlewares/feeds.py).
CHANNEL_ROLES: Final = frozenset({"entry", "node", "frame", "feed", "sitemap"})
#: Priority of the seed requests (the spider's value).
SEED_PRIORITY: Final = 10_000_000
#: Priority units per expected new article (a newly found article link is worth one).
PRIORITY_PER_ARTICLE: Final = 1000
#: Priority of a newly found article link of NewsPageRank weight 0 (up to +999 for weight 1).
NEW_ARTICLE_PRIORITY: Final = PRIORITY_PER_ARTICLE
_MAX_YIELD_PRIORITY: Final = SEED_PRIORITY // 2


@dataclass(frozen=True, slots=True)
class RevisitConfig:
    """Bounds and constants of the revisit schedule.

    Attributes:
        min_interval, max_interval: every interval is clamped to this range (seconds, > 0).
        miss_interval: interval after the first failed visit, doubled per further miss (s).
        history: visits kept per record (the estimators read at most this many).
        channel_prior: new articles expected from a channel page with no yield history.
        channel_rate: channel-page visits per hour the channel scheduler splits (0: no budget,
            visits ∝ √rate at one visit per hour for one new link per hour).
        source_min_interval, source_max_interval: the bounds of channel (source) intervals
            when they differ from the pages' (monitoring mode: seconds to a minute, not the
            10-minute floor of batch re-runs; None: ``min_interval`` / ``max_interval``).
        reference_interval: without a channel budget, a channel publishing one link per this
            many seconds is visited once per it (seconds).
        explore_interval: a channel whose first listing told nothing of its rate is visited
            again this soon (seconds; None: planned from the prior).
        budget_is_cap: ``channel_rate`` is a ceiling the no-budget rule stays under, not a
            target (monitoring without ``-a rate``).
    """

    min_interval: float = 600.0
    max_interval: float = 7 * 86400.0
    miss_interval: float = 86400.0
    history: int = 50
    channel_prior: float = 1.0
    channel_rate: float = 0.0
    source_min_interval: float | None = None
    source_max_interval: float | None = None
    reference_interval: float = 3600.0
    explore_interval: float | None = None
    budget_is_cap: bool = False

    def __post_init__(self) -> None:
        if not (0 < self.min_interval <= self.max_interval) or not math.isfinite(self.max_interval):
            raise ValueError(
                f"need 0 < min_interval <= max_interval < inf, got "
                f"[{self.min_interval}, {self.max_interval}]"
            )
        if self.miss_interval <= 0 or self.history < 2:
            raise ValueError("miss_interval must be > 0 and history >= 2")
        if not (self.channel_rate >= 0 and math.isfinite(self.channel_rate)):
            raise ValueError(f"channel_rate must be a finite number >= 0, got {self.channel_rate}")
        lo, hi = self.source_bounds
        if not (0 < lo <= hi) or not math.isfinite(hi):
            raise ValueError(f"need 0 < source_min_interval <= source_max_interval < inf "
                             f"(NEWSCRAWL_WATCH_MIN_INTERVAL / NEWSCRAWL_WATCH_MAX_INTERVAL in "
                             f"monitoring mode, seconds), got [{lo}, {hi}]")
        if not (self.reference_interval > 0 and math.isfinite(self.reference_interval)):
            raise ValueError(f"reference_interval (NEWSCRAWL_WATCH_REFERENCE_INTERVAL) must be "
                             f"> 0 seconds, got {self.reference_interval}")
        if self.explore_interval is not None and not self.explore_interval > 0:
            raise ValueError(f"explore_interval (NEWSCRAWL_WATCH_EXPLORE_INTERVAL) must be > 0 "
                             f"seconds, got {self.explore_interval}")

    @property
    def source_bounds(self) -> tuple[float, float]:
        """``(shortest, longest)`` interval of a channel page (seconds)."""
        lo = self.min_interval if self.source_min_interval is None else self.source_min_interval
        hi = self.max_interval if self.source_max_interval is None else self.source_max_interval
        return float(lo), float(hi)

    def channel_scheduler(self) -> ChannelScheduler:
        """A channel scheduler with these bounds, channel budget and cold-start rules."""
        lo, hi = self.source_bounds
        return ChannelScheduler(budget_per_hour=self.channel_rate, min_interval=lo,
                                max_interval=hi, reference_interval=self.reference_interval,
                                explore_interval=self.explore_interval,
                                budget_is_cap=self.budget_is_cap)


def new_record(
    fp: str,
    url: str,
    *,
    now: float,
    role: str,
    host: str = "",
    site: str = "",
    seed: bool = False,
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A record for a URL known but not visited yet: due at once (the *to-visit* set)."""
    return {
        "fp": fp,
        "url": url,
        "host": host,
        "site": site,
        "role": role,
        "seed": seed,
        "request": dict(request or {}),
        "first_seen": now,
        "last_visit": None,
        "visits": 0,
        "status": None,
        "misses": 0,
        "validators": None,
        "fingerprint": None,
        "listed": None,
        "history": [],
        "interval": None,
        "estimator": None,
        "estimator_reason": "not visited yet",
        "due": now,
        "pagerank": None,
        "weight": None,
        "published": None,
        "last_changed": None,
        "evicted": False,
    }


def observations(record: Mapping[str, Any]) -> list[Observation]:
    """The record's history as :class:`~newscrawl.algorithms.revisit.Observation` objects.

    Failed visits are left out (they say nothing about change). For channel pages "changed"
    means new article links appeared, when that was counted.
    """
    channel = record.get("role") in CHANNEL_ROLES
    out: list[Observation] = []
    for h in record.get("history") or ():
        t = h.get("t")
        status = h.get("status") or 0
        if not isinstance(t, (int, float)) or not 200 <= status < 400:
            continue
        changed = bool(h.get("changed"))
        new_links = h.get("new_links")
        if channel and isinstance(new_links, int):
            changed = new_links > 0
        out.append(Observation(time=float(t), changed=changed, how=h.get("how") or HOW_FIRST,
                               new_links=new_links if isinstance(new_links, int) else None))
    return out


def schedule(record: Mapping[str, Any], now: float, cfg: RevisitConfig,
             scheduler: ChannelScheduler | None = None) -> tuple[float, float, str, str]:
    """``(interval, due, estimator, reason)`` for a record just visited at ``now``.

    Failed visits: ``miss_interval · 2^(misses − 1)``. Articles: correction decay after
    ``published`` (or the first visit). Channels: the interval of ``scheduler`` (which must
    have observed the visit already), else the estimator chosen from the page's history.
    Intervals are clamped to ``[min_interval, max_interval]``; ``due = now + interval``.
    """
    lo, hi = cfg.min_interval, cfg.max_interval
    misses = int(record.get("misses") or 0)
    if misses > 0:
        interval = clamp_interval(cfg.miss_interval * 2.0 ** min(misses - 1, 60),
                                  min_interval=lo, max_interval=hi)
        reason = f"{misses} consecutive failed visit(s) (last status {record.get('status')}): back-off"
        return interval, now + interval, "miss_backoff", reason
    if scheduler is not None and record.get("role") in CHANNEL_ROLES:
        interval = clamp_interval(scheduler.interval(record["fp"], now),
                                  min_interval=scheduler.min_interval,
                                  max_interval=scheduler.max_interval)
        return interval, now + interval, SCHEDULER_ESTIMATOR, _scheduler_reason(record, scheduler, now)
    obs = observations(record)
    if record.get("role") in CHANNEL_ROLES:
        name, reason = choose_estimator(obs)
        interval = ESTIMATORS[name].next_interval(obs, now, min_interval=lo, max_interval=hi)
        return interval, now + interval, name, "channel page, new-article yield: " + reason
    decay = CorrectionDecay()
    published = record.get("published")
    published = float(published) if isinstance(published, (int, float)) else None
    interval = decay.next_interval(obs, now, min_interval=lo, max_interval=hi, published=published)
    if decay.exhausted(obs, now, published=published):
        reason = "article: correction window over (6 re-checks after publication), max interval"
    else:
        reason = "article: re-checks 20 min x 2^k after publication or the last correction"
    return interval, now + interval, decay.name, reason


#: ``estimator`` of channel records scheduled by the channel scheduler.
SCHEDULER_ESTIMATOR: Final = "channel_scheduler"


def _scheduler_reason(record: Mapping[str, Any], scheduler: ChannelScheduler, now: float) -> str:
    budget = (f"a share of {scheduler.budget_per_hour:g} channel visits/h"
              if scheduler.budget_per_hour > 0 else "no channel budget")
    what = "new channel links" if record.get("role") == "entry" else "new article links"
    return (f"channel scheduler: {scheduler.rate(record['fp'], now) * 3600:.3g} {what}/h "
            f"estimated (this hour of the host's daily profile), visits ∝ √rate, {budget}")


def record_visit(
    record: Mapping[str, Any],
    *,
    now: float,
    cfg: RevisitConfig,
    status: int,
    how: str,
    changed: bool | None = None,
    validators: Mapping[str, Any] | None = None,
    fingerprint: str | None = None,
    new_links: int | None = None,
    listed: int | None = None,
    published: float | None = None,
    validator: str | None = None,
    scheduler: ChannelScheduler | None = None,
    evidence: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The record after one visit at ``now`` (a new dict; ``record`` is not changed).

    With a ``scheduler``, a successful visit of a channel page is also observed by it (its
    estimate changes) and the page's interval, due time, ``sched`` and ``rate`` come from it.

    Args:
        status: HTTP status the visit ended with (304 for a conditional "not modified"; 0 for
            no answer). ``>= 400`` or 0 counts as a miss.
        how: how ``changed`` was decided (``first``, ``head``, ``conditional``,
            ``fingerprint``; :mod:`newscrawl.algorithms.revisit`).
        changed: did the page change since the last visit (None: first visit or a miss).
        validators, fingerprint: of the full answer, when there was one (kept otherwise).
        new_links, listed: channel pages: article links not known before / listed.
        published: article publication time, when extracted.
        validator: what decided ``changed`` (``etag``, ``last-modified``, ``fingerprint``,
            ``none``; :mod:`newscrawl.algorithms.changedetect`), kept in the history entry and
            as the record's ``validator``.
        scheduler: the run's channel scheduler (None: per-page estimators for channels).
        evidence: ``(rate links/s, seconds)`` a channel's listing showed
            (:mod:`newscrawl.algorithms.listing`), taken by the scheduler on its first visit.
    """
    rec = dict(record)
    failed = status == 0 or status >= 400
    entry: dict[str, Any] = {"t": now, "changed": bool(changed) if not failed else False,
                             "how": how, "status": int(status)}
    if new_links is not None:
        entry["new_links"] = int(new_links)
    if validator is not None:
        entry["validator"] = validator
        rec["validator"] = validator
    history = list(rec.get("history") or [])
    history.append(entry)
    rec["history"] = history[-cfg.history:]
    rec["visits"] = int(rec.get("visits") or 0) + 1
    rec["last_visit"] = now
    rec["status"] = int(status)
    rec["misses"] = int(rec.get("misses") or 0) + 1 if failed else 0
    if validators is not None:
        rec["validators"] = dict(validators)
    if fingerprint is not None:
        rec["fingerprint"] = fingerprint
    if listed is not None:
        rec["listed"] = int(listed)
    if published is not None:
        rec["published"] = float(published)
    if changed and not failed:
        rec["last_changed"] = now
    use = scheduler if scheduler is not None and rec.get("role") in CHANNEL_ROLES else None
    if use is not None and not failed:
        use.observe(rec["fp"], now, new_links, listed=listed, changed=changed,
                    group=rec.get("host") or None, evidence=evidence)
    interval, due, name, reason = schedule(rec, now, cfg, use)
    if use is not None:
        rec["sched"] = use.export(rec["fp"])
        rec["rate"] = use.rate(rec["fp"], now) * 3600.0
    rec.update(interval=interval, due=due, estimator=name, estimator_reason=reason)
    return rec


def is_due(record: Mapping[str, Any], now: float) -> bool:
    """True when the page should be fetched in a run at ``now`` (never for evicted pages)."""
    if record.get("evicted"):
        return False
    due = record.get("due")
    return not isinstance(due, (int, float)) or due <= now


def channel_yield(record: Mapping[str, Any], now: float, cfg: RevisitConfig) -> float:
    """New article links a visit of this channel page at ``now`` is expected to show.

    Rate = Σ new links / Σ seconds over the visits that counted them (the first visit, where
    every link is new, is left out), times the seconds since the last visit. No history:
    ``cfg.channel_prior``. Articles: 0.
    """
    if record.get("role") not in CHANNEL_ROLES:
        return 0.0
    last = record.get("last_visit")
    links = seconds = 0.0
    prev_t: float | None = None
    for h in record.get("history") or ():
        t = h.get("t")
        if not isinstance(t, (int, float)):
            continue
        n = h.get("new_links")
        if prev_t is not None and isinstance(n, int) and t > prev_t and 200 <= (h.get("status") or 0) < 400:
            links += n
            seconds += t - prev_t
        prev_t = float(t)
    if seconds <= 0 or not isinstance(last, (int, float)):
        return cfg.channel_prior
    return links / seconds * max(now - float(last), 0.0)


def yield_priority(expected_articles: float) -> int:
    """Scrapy priority of a request expected to bring ``expected_articles`` new articles.

    Rounded to a quarter power of two of :data:`PRIORITY_PER_ARTICLE` (1000, 1189, 1414, ...):
    Scrapy's scheduler keeps one queue per priority value and walks all of them for every
    request, so thousands of distinct priorities cost O(n²); a few dozen levels keep the order
    that matters (within a level, first in first out).

    >>> [yield_priority(x) for x in (0, 0.5, 1.0, 1.1, 3.0)]
    [0, 500, 1000, 1189, 2828]
    """
    if not math.isfinite(expected_articles) or expected_articles <= 0:
        return 0
    level = round(4 * math.log2(expected_articles)) / 4
    return min(int(round(PRIORITY_PER_ARTICLE * 2.0 ** level)), _MAX_YIELD_PRIORITY)


def new_article_priority(weight: float | None) -> int:
    """Scrapy priority of a newly found article link: one article, plus up to 900 for its
    NewsPageRank weight in ten steps (few distinct priorities, see :func:`yield_priority`)."""
    w = float(weight) if isinstance(weight, (int, float)) and math.isfinite(weight) else 0.0
    return NEW_ARTICLE_PRIORITY + 100 * int(round(9 * max(0.0, min(w, 1.0))))


def due_order(records: Iterable[Mapping[str, Any]], now: float) -> list[Mapping[str, Any]]:
    """The due records, earliest due first, then higher PageRank, then higher weight, then URL.

    This is the priority order of re-runs (seed 002 §3: the update module hands the crawler the
    to-visit pages by due time and importance).
    """

    def key(r: Mapping[str, Any]) -> tuple[float, float, float, str]:
        due = r.get("due")
        pr = r.get("pagerank")
        w = r.get("weight")
        return (
            float(due) if isinstance(due, (int, float)) else -math.inf,
            -(float(pr) if isinstance(pr, (int, float)) else 0.0),
            -(float(w) if isinstance(w, (int, float)) else 0.0),
            str(r.get("url") or ""),
        )

    return sorted((r for r in records if is_due(r, now)), key=key)


def restore_channel(scheduler: ChannelScheduler, record: Mapping[str, Any]) -> bool:
    """Give ``scheduler`` the estimate of channel record ``record`` (its ``sched`` field); a
    record stored before it had one is replayed from its visit history. False for records that
    are not channel pages or carry nothing to learn from."""
    if record.get("role") not in CHANNEL_ROLES or not record.get("fp"):
        return False
    fp, group = record["fp"], record.get("host") or None
    if scheduler.restore(fp, record.get("sched"), group=group):
        return True
    history = observations(record)
    if not history:
        return False
    for obs in history:
        scheduler.observe_visit(fp, obs, group=group)
    return True


def replan_channels(records: Iterable[dict[str, Any]], scheduler: ChannelScheduler,
                    now: float) -> int:
    """Move the due times of the visited channel records to ``scheduler``'s plan at ``now``
    (``due = last visit + interval``, the start of a re-run); records backing off after failed
    visits keep theirs. The records are updated in place (``interval``, ``due``,
    ``estimator``); returns how many due times moved."""
    channels = [r for r in records if r.get("role") in CHANNEL_ROLES and not r.get("evicted")
                and isinstance(r.get("last_visit"), (int, float)) and not r.get("misses")
                and r.get("fp") in scheduler.channels]
    if not channels:
        return 0
    plan = scheduler.plan(now, keys=[r["fp"] for r in channels])
    moved = 0
    for rec in channels:
        interval = plan[rec["fp"]]
        due = float(rec["last_visit"]) + interval
        if rec.get("due") != due:
            moved += 1
        rec.update(interval=interval, due=due, estimator=SCHEDULER_ESTIMATOR)
    return moved
