"""What a running crawl says about itself: what comes next in a watch, why an idle watch waits,
when the first sweep is done, and a batch crawl's progress (pure: plain records and numbers in,
text out; no clock is read — every function takes ``now``, epoch seconds).

Read by :mod:`extensions.watchlog` (the status line of monitoring mode) and
:mod:`extensions.progress` (the progress line of a batch crawl). A *source* is a page whose
visits bring new article links: a record whose ``role`` is one of
:data:`newscrawl.algorithms.revisitplan.CHANNEL_ROLES` (entry, channel, frame, feed, sitemap).

The first sweep of a watch is done when every source known so far has been visited once
(its record has a ``last_visit``) and no visited page is still being expanded (its links
not all recorded yet, so a source it lists may still appear): from then on the watch only
revisits, and :func:`first_sweep_line` says how many sources it watches, when their first
revisits are due and under what budget.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from newscrawl.algorithms.revisitplan import CHANNEL_ROLES

__all__ = ["Outlook", "Sweep", "clock", "first_sweep", "first_sweep_line", "idle_reason",
           "outlook", "outlook_text", "progress_line"]


def clock(t: float) -> str:
    """``HH:MM:SS UTC`` of epoch seconds ``t``.

    >>> clock(1733311990.0)
    '11:33:10 UTC'
    """
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%H:%M:%S UTC")


def _due(record: Mapping[str, Any]) -> float | None:
    due = record.get("due")
    return float(due) if isinstance(due, (int, float)) and math.isfinite(due) else None


@dataclass(frozen=True, slots=True)
class Outlook:
    """What a watch has ahead at one moment.

    Attributes:
        sources: sources known (evicted ones left out).
        sources_not_due: sources whose due time is after ``now``.
        due_now: pages due at ``now`` and not yet requested (waiting for a slot or a token).
        next_due: the earliest due time after ``now`` of a page not requested (epoch seconds),
            or None.
        next_url: the URL of that page; next_role: its role.
        in_flight: pages requested and not answered yet.
    """

    sources: int
    sources_not_due: int
    due_now: int
    next_due: float | None
    next_url: str | None
    next_role: str | None
    in_flight: int


def outlook(records: Iterable[Mapping[str, Any]], now: float, *,
            requested: set[str] | frozenset[str] = frozenset(), in_flight: int = 0) -> Outlook:
    """The :class:`Outlook` of the known pages ``records`` (crawl-state records with ``fp``,
    ``url``, ``role``, ``due``) at ``now``; pages whose ``fp`` is in ``requested`` (asked for in
    this run, not answered yet) are neither due nor next. O(records).

    >>> recs = [{"fp": "a", "role": "node", "due": 130.0, "url": "http://s/a/"},
    ...         {"fp": "b", "role": "content", "due": 90.0, "url": "http://s/b.html"},
    ...         {"fp": "c", "role": "node", "due": 110.0, "url": "http://s/c/"}]
    >>> o = outlook(recs, 100.0, requested={"c"})
    >>> (o.sources, o.sources_not_due, o.due_now, o.next_due, o.next_url)
    (2, 2, 1, 130.0, 'http://s/a/')
    """
    sources = not_due = due_now = 0
    next_due: float | None = None
    next_url = next_role = None
    for record in records:
        if record.get("evicted"):
            continue
        role = record.get("role")
        due = _due(record)
        source = role in CHANNEL_ROLES
        sources += source
        if source and due is not None and due > now:
            not_due += 1
        if record.get("fp") in requested:
            continue
        if due is None or due <= now:
            due_now += 1
        elif next_due is None or due < next_due:
            next_due, next_url, next_role = due, record.get("url"), role
    return Outlook(sources, not_due, due_now, next_due, next_url, next_role, in_flight)


def outlook_text(o: Outlook) -> str:
    """``next visit 11:33:10 UTC; 33 sources not due`` (and what is due now or in flight).

    >>> outlook_text(Outlook(40, 33, 0, 1733311990.0, "http://s/a/", "node", 0))
    'next visit 11:33:10 UTC; 33 sources not due'
    >>> outlook_text(Outlook(40, 30, 5, None, None, None, 2))
    'no visit planned after those due; 30 sources not due; 5 page(s) due now, 2 in flight'
    """
    head = (f"next visit {clock(o.next_due)}" if o.next_due is not None
            else "no visit planned after those due")
    parts = [head, f"{o.sources_not_due} sources not due"]
    now_parts = []
    if o.due_now:
        now_parts.append(f"{o.due_now} page(s) due now")
    if o.in_flight:
        now_parts.append(f"{o.in_flight} in flight")
    if now_parts:
        parts.append(", ".join(now_parts))
    return "; ".join(parts)


def idle_reason(o: Outlook, now: float, *, token_wait: float | None = None,
                watch_end: float | None = None) -> str:
    """Why a watch sent nothing and when it will look again, in one sentence.

    Args:
        o: the watch's :class:`Outlook` at ``now``.
        now: epoch seconds.
        token_wait: seconds until the request rate has a token again (None: no rate).
        watch_end: epoch seconds the watch stops at (None: until stopped).

    >>> idle_reason(Outlook(3, 3, 0, 1733311990.0, "http://s/politik/", "node", 0), 1733311570.0)
    'idle: nothing is due before 11:33:10 UTC (in 420 s: http://s/politik/, a source); looking again then'
    >>> idle_reason(Outlook(3, 0, 4, None, None, None, 0), 0.0, token_wait=12.0)
    'idle: 4 page(s) due wait for the request rate (next token in 12 s)'
    """
    if o.in_flight and not o.due_now:
        return f"idle: {o.in_flight} request(s) in flight, waiting for their answers"
    if o.due_now and token_wait is not None and token_wait > 0:
        return (f"idle: {o.due_now} page(s) due wait for the request rate "
                f"(next token in {token_wait:.0f} s)")
    if o.due_now:
        return f"idle: {o.due_now} page(s) due wait for a download slot"
    if o.next_due is None:
        if not o.sources:
            return "idle: no source to watch (no channel, feed or sitemap known in scope)"
        return "idle: no page has a planned visit"
    if watch_end is not None and o.next_due >= watch_end:
        return (f"idle: nothing is due before the watch ends at {clock(watch_end)} "
                f"(next visit would be {clock(o.next_due)})")
    what = "a source" if o.next_role in CHANNEL_ROLES else "an article re-check"
    return (f"idle: nothing is due before {clock(o.next_due)} (in {o.next_due - now:.0f} s: "
            f"{o.next_url}, {what}); looking again then")


@dataclass(frozen=True, slots=True)
class Sweep:
    """The state of a watch's first sweep.

    Attributes:
        done: every known source was visited once.
        sources: sources known; unvisited: those not visited yet.
        first_revisit: earliest and latest due time of the visited sources, seconds after
            ``now`` (None when no source has a due time).
    """

    done: bool
    sources: int
    unvisited: int
    first_revisit: tuple[float, float] | None


def first_sweep(records: Iterable[Mapping[str, Any]], now: float, *, expanding: int = 0) -> Sweep:
    """Is the first sweep done at ``now``? ``expanding``: visited pages whose links are still
    being recorded (a source they list may not have its record yet): not done while > 0.

    >>> recs = [{"role": "entry", "last_visit": 1.0, "due": 40.0},
    ...         {"role": "node", "last_visit": 2.0, "due": 70.0},
    ...         {"role": "content", "last_visit": None}]
    >>> first_sweep(recs, 10.0)
    Sweep(done=True, sources=2, unvisited=0, first_revisit=(30.0, 60.0))
    >>> first_sweep(recs + [{"role": "node"}], 10.0).done
    False
    """
    sources = unvisited = 0
    low = high = None
    for record in records:
        if record.get("role") not in CHANNEL_ROLES or record.get("evicted"):
            continue
        sources += 1
        if record.get("last_visit") is None:
            unvisited += 1
            continue
        due = _due(record)
        if due is not None:
            wait = max(0.0, due - now)
            low = wait if low is None else min(low, wait)
            high = wait if high is None else max(high, wait)
    done = sources > 0 and unvisited == 0 and expanding <= 0
    return Sweep(done, sources, unvisited, (low, high) if low is not None and high is not None else None)


def first_sweep_line(sweep: Sweep, *, budget_per_hour: float | None, why: str = "") -> str:
    """``First sweep done: watching N sources, first revisits in a–b s, budget N/h (why)``.

    >>> first_sweep_line(Sweep(True, 33, 0, (4.2, 610.0)), budget_per_hour=7200)
    'First sweep done: watching 33 sources, first revisits in 4–610 s, budget 7200/h'
    >>> first_sweep_line(Sweep(True, 3, 0, (60, 60)), budget_per_hour=10800, why="3 sites x 3600/h")
    'First sweep done: watching 3 sources, first revisits in 60–60 s, budget 10800/h (3 sites x 3600/h)'
    >>> first_sweep_line(Sweep(True, 2, 0, None), budget_per_hour=None)
    'First sweep done: watching 2 sources, no revisit planned, budget none (no request rate)'
    """
    if sweep.first_revisit is None:
        when = "no revisit planned"
    else:
        low, high = sweep.first_revisit
        when = f"first revisits in {low:.0f}–{high:.0f} s"
    budget = (f"budget {budget_per_hour:.0f}/h" + (f" ({why})" if why else "")
              if budget_per_hour is not None else "budget none (no request rate)")
    return f"First sweep done: watching {sweep.sources} sources, {when}, {budget}"


def progress_line(*, pages: int, pages_before: int, items: int, queued: int | None,
                  in_flight: int, interval: float) -> str:
    """The progress line of a batch crawl (every ``interval`` seconds).

    Args:
        pages: pages fetched so far (answers below 400); pages_before: at the last line.
        items: items stored so far.
        queued: requests waiting in the scheduler (the frontier; None: unknown).
        in_flight: requests being downloaded.
        interval: seconds since the last line.

    >>> progress_line(pages=120, pages_before=85, items=40, queued=310, in_flight=8, interval=10)
    'Progress: 120 page(s) fetched (3.5/s), 40 item(s) stored, frontier 310 request(s) queued, 8 in flight'
    """
    rate = (pages - pages_before) / interval if interval > 0 else 0.0
    frontier = f"frontier {queued} request(s) queued" if queued is not None else "frontier unknown"
    return (f"Progress: {pages} page(s) fetched ({rate:.1f}/s), {items} item(s) stored, "
            f"{frontier}, {in_flight} in flight")
