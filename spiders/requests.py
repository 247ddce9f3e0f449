"""Requests of the ``news`` spider that come from the crawl state: entries and due known pages.

* :func:`entry_request` — an entry URL (seed 004's StartURL), with its page context;
* :func:`seed_request` — the same with its stored state (HEAD first when the entry is known);
* :func:`due_channel_requests` — known channel pages that are due, at the start of a re-run;
* :func:`pending_requests` — pages found and never fetched, when a shared frontier was lost;
* :func:`due_article_requests` — due re-checks of known articles, once discovery is done
  (released by :class:`extensions.crawlstate.CrawlStateExtension` at the first idle);
* :func:`watch_request` — one known page due again in monitoring mode
  (:class:`extensions.watch.WatchExtension`);
* :func:`budget_priority` — under a request budget, a link's priority: the new articles it is
  expected to bring (:mod:`newscrawl.algorithms.revisitplan`).

Known pages are requested in due order (due time, then PageRank, then NewsPageRank weight;
:func:`newscrawl.algorithms.revisitplan.due_order`) and as they were found
(:meth:`newscrawl.meta.PageContext.from_record`). Stats: ``newscrawl/revisit/<due_channels|new|
due_articles|requeued>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any

import scrapy

from newscrawl import meta
from newscrawl.algorithms.revisitplan import (
    CHANNEL_ROLES,
    PRIORITY_PER_ARTICLE,
    SEED_PRIORITY,
    new_article_priority,
    yield_priority,
)
from newscrawl.algorithms.urls import canonicalize_url, host_of, registered_domain
from newscrawl.algorithms.watch import due_rank
from newscrawl.crawlstate import RunState
from newscrawl.meta import PageContext

_PREFIX = "newscrawl/revisit"
#: Priority of re-checks of known articles (worth no new article): below every discovery
#: request, also under a budget (where priorities count expected new articles).
RECHECK_PRIORITY = -PRIORITY_PER_ARTICLE


def entry_request(url: str, callback: Callable[..., Any]) -> scrapy.Request:
    """The request of entry URL ``url`` (role ``entry``, depth 0, weight 1)."""
    return scrapy.Request(url, callback=callback, priority=SEED_PRIORITY,
                          meta={**PageContext.entry(url).to_meta(), meta.ROLE: "entry"})


def seed_request(state: RunState, request: scrapy.Request, *,
                 page_fp: Callable[[str], str], stats: Any = None) -> scrapy.Request | None:
    """An entry request with its page state (HEAD first when the entry page is known); the
    entry is recorded as a seed and as requested in this run. None (stat
    ``newscrawl/revisit/entry_not_due``) for a known entry page that is not due: the channel
    scheduler revisits home pages as often as new channel links appear on them."""
    fp = page_fp(request.url)
    host = host_of(request.url)
    ctx = PageContext.from_meta(request.meta)
    rec = state.ensure(fp, request.url, role="entry", host=host, site=registered_domain(host),
                       seed=True, request=ctx.to_record(), weight=ctx.weight)
    if rec.get("last_visit") is not None and not state.is_due(fp):
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/entry_not_due")
        return None
    state.scheduled.add(fp)
    request.meta[meta.REVISIT] = state.revisit_meta(fp, request.url)
    return request


def _request_for(state: RunState, record: dict[str, Any], spider: Any,
                 priority: int, dont_filter: bool = False) -> scrapy.Request:
    url = record["url"]
    role = record.get("role") or "content"
    request_meta: dict[str, Any] = {
        **PageContext.from_record(record).to_meta(),
        meta.ROLE: role,
        meta.REVISIT: state.revisit_meta(record["fp"], url),
    }
    callback = spider.parse_article if role == "content" else spider.parse_node
    state.scheduled.add(record["fp"])
    # Not dont_filter: the duplicate filter is per run here and per round in distributed crawls
    # (newscrawl/distributed/scheduler.py), so it lets a revisit through once and keeps several
    # workers from scheduling the same due page.
    return scrapy.Request(url, callback=callback, priority=priority, meta=request_meta,
                          dont_filter=dont_filter)


def watch_request(state: RunState, record: dict[str, Any], spider: Any) -> scrapy.Request:
    """The request of a known page due again in a watched crawl: an article never fetched
    (a new link put back for later) before channel pages, re-checks of known articles last;
    ``dont_filter`` (the page was requested before in this long run)."""
    if record.get("role") in CHANNEL_ROLES:
        priority = SEED_PRIORITY // 2
    elif not record.get("last_visit"):
        priority = new_article_priority(record.get("weight"))
    else:
        priority = RECHECK_PRIORITY
    request = _request_for(state, record, spider, priority, dont_filter=True)
    request.meta[meta.VISIT] = state.now()
    request.meta[meta.DISPATCH] = due_rank(record)
    return request


#: Entry URLs repeat over every record of a site: canonicalised once each.
_canonical_entry = lru_cache(maxsize=4096)(canonicalize_url)


def in_scope(record: dict[str, Any], spider: Any) -> bool:
    """Is a known page part of this run: reached from one of its entries, within its depth?"""
    ctx = record.get("request") or {}
    entries = getattr(spider, "entry_urls", None)
    # Entries are canonical (newscrawl/seeds.py); records of older runs may hold the URL as given.
    if entries and ctx.get("entry_url") and _canonical_entry(ctx["entry_url"]) not in entries:
        return False
    max_depth = getattr(spider, "max_depth", None)
    if record.get("role") in CHANNEL_ROLES and max_depth is not None:
        return int(ctx.get("depth") or 0) <= max_depth
    return True


def due_channel_requests(state: RunState, spider: Any,
                         stats: Any = None) -> Iterator[scrapy.Request]:
    """Requests for the due channel pages of this run's entries.

    They are yielded in due order (due time, then PageRank, then weight). Without a budget
    they share one priority below the seeds, so the scheduler's first-in-first-out order is the
    due order; with one, the priority is the new articles each is expected to show
    (:func:`~newscrawl.algorithms.revisitplan.yield_priority`), due order breaking ties.
    Never-visited article links left over from a budget-limited run count as new articles.
    """
    records = [r for r in state.due_records(channels=True) if in_scope(r, spider)]
    pending = [r for r in state.due_records(channels=False)
               if not r.get("last_visit") and in_scope(r, spider)]
    band = SEED_PRIORITY // 2
    for record in records:
        if state.budget is not None:
            priority = yield_priority(state.expected_yield(record))
        else:
            priority = band
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/due_channels")
        yield _request_for(state, record, spider, priority)
    for record in pending:
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/new")
        yield _request_for(state, record, spider, new_article_priority(record.get("weight")))


def pending_requests(state: RunState, spider: Any, *, skip: AbstractSet[str] = frozenset(),
                     stats: Any = None) -> list[scrapy.Request]:
    """Requests for every page of this run's entries known and never visited (the durable
    frontier, :meth:`~newscrawl.crawlstate.RunState.pending_records`), except the fps in
    ``skip``: what a shared frontier that Redis lost held, queued again. Articles at their
    new-article priority, channel pages below the seeds (stat ``newscrawl/revisit/requeued``)."""
    out = []
    for record in state.pending_records():
        if record["fp"] in skip or not in_scope(record, spider):
            continue
        content = (record.get("role") or "content") == "content"
        priority = new_article_priority(record.get("weight")) if content else SEED_PRIORITY // 2
        out.append(_request_for(state, record, spider, priority))
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/requeued")
    return out


def due_article_requests(state: RunState, spider: Any, stats: Any = None,
                         limit: int | None = None) -> list[scrapy.Request]:
    """Requests for due, already visited article pages (re-checks for corrections), in due
    order, at most ``limit``; one priority below every discovery request (the scheduler's
    first-in-first-out order keeps the due order)."""
    out: list[scrapy.Request] = []
    for record in (r for r in state.due_records(channels=False)
                   if r.get("last_visit") and in_scope(r, spider)):
        if limit is not None and len(out) >= limit:
            break
        out.append(_request_for(state, record, spider, RECHECK_PRIORITY))
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/due_articles")
    return out


def budget_priority(request: scrapy.Request, state: RunState,
                    record: dict[str, Any] | None) -> scrapy.Request:
    """``request`` re-prioritised under a budget (``-a budget=N``) by the new articles it is
    expected to bring: a new article by its NewsPageRank weight, a known article due for a
    re-check :data:`RECHECK_PRIORITY`, a channel page by its expected yield (its record, else
    the channel prior); unchanged without a budget."""
    if state.budget is None:
        return request
    if request.meta.get(meta.ROLE) == "content":
        priority = new_article_priority(request.meta.get(meta.WEIGHT))
        if record is not None:  # a known article due for a re-check: no new article
            priority = RECHECK_PRIORITY
    else:
        priority = yield_priority(state.expected_yield(record) if record is not None
                                  else state.cfg.channel_prior)
    return request.replace(priority=priority)
