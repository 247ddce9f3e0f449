"""Spider middleware of incremental re-crawls: what changed, what is new, what is due.

It sits between the spider (and :class:`middlewares.linkclass.LinkClassificationMiddleware`,
whose output it sees) and the engine, and works on the in-memory crawl state
(:class:`newscrawl.crawlstate.RunState`, ``crawler.newscrawl_revisit``) that
:class:`pipelines.crawlstate.CrawlStatePipeline` loads at spider open and writes back — never a
database call here.

For every page item (``NodeItem``/``ArticleItem``) it computes the content fingerprint
(:func:`~newscrawl.algorithms.changedetect.text_fingerprint` of an article's extracted title and
text; :func:`~newscrawl.algorithms.changedetect.links_fingerprint` of the set of article and
channel links of a channel page, so ads, clocks and tokens are not changes), compares it with
the fingerprint stored for the page (request meta ``newscrawl_revisit``), records the visit —
changed or not, how that was decided (``first``, ``head``, ``conditional``, ``fingerprint``), the
validators of the answer, the new article links of a channel page — and tells the host's policy
when a HEAD or a conditional GET claimed a change the text does not show. An item whose page did
not change is not passed on (nothing to store); an article whose text changed is marked so the
pipeline keeps the previous version.

For every request the link classification yields it decides: a URL never seen is *new* and goes
on (with a to-visit record); a known page that is not due is dropped
(``newscrawl/revisit/not_due``); a due one goes on with its state in meta. With a request budget
(``-a budget=N``) requests are re-prioritised by the new articles they are expected to bring
(:mod:`newscrawl.algorithms.revisitplan`).

The module also builds the requests of re-runs: :func:`seed_request` (the entry URLs, with their
state) and :func:`due_channel_requests` / :func:`due_article_requests` (known pages that are due,
in priority order: due time, then PageRank, then NewsPageRank weight).

Stats: ``newscrawl/revisit/<first|failed>``, ``newscrawl/revisit/changed/<how>`` (the GET came
after a HEAD / conditional GET that said changed, or was a plain fingerprint GET, and the text
changed), ``newscrawl/revisit/unchanged/<how>`` (``head`` / ``conditional`` are counted by the
downloader middleware: no body fetched; ``fingerprint``: fetched, same text),
``newscrawl/revisit/false_change/<head|conditional>`` (a HEAD / conditional GET claimed a change
the text does not show), ``newscrawl/revisit/<new|not_due|due_channels|
due_articles>``, ``newscrawl/revisit/dropped_unchanged_items``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import scrapy
from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from newscrawl import defaults
from newscrawl.algorithms.changedetect import (
    Validators,
    links_fingerprint,
    text_fingerprint,
    validators_agree,
)
from newscrawl.algorithms.revisit import HOW_FINGERPRINT, HOW_FIRST
from newscrawl.algorithms.revisitplan import (
    CHANNEL_ROLES,
    SEED_PRIORITY,
    new_article_priority,
    yield_priority,
)
from newscrawl.algorithms.urls import host_of, registered_domain, url_fingerprint
from newscrawl.crawlstate import META_HEAD, META_HOW, META_KEY, RunState

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/revisit"
#: Request meta copied into a page's record, so a later run can fetch it again as it was found.
_CONTEXT_KEYS = {
    "newscrawl_entry_url": "entry_url",
    "newscrawl_start_url": "start_url",
    "newscrawl_depth": "depth",
    "newscrawl_link_class": "link_class",
    "newscrawl_features": "features",
    "newscrawl_parent_weight": "parent_weight",
    "newscrawl_weight": "weight",
    "newscrawl_referer": "referer",
}


def state_of(crawler: Any) -> RunState | None:
    """The run's crawl state, or None when incremental crawling is off."""
    return getattr(crawler, "newscrawl_revisit", None) if crawler is not None else None


def request_context(meta: dict[str, Any]) -> dict[str, Any]:
    """The part of a request's meta stored with its page record."""
    return {name: meta.get(key) for key, name in _CONTEXT_KEYS.items() if key in meta}


# --- requests of re-runs ----------------------------------------------------------------------


def seed_request(state: RunState, request: scrapy.Request) -> scrapy.Request:
    """An entry request with its page state (HEAD first when the entry page is known)."""
    fp = url_fingerprint(request.url)
    host = host_of(request.url)
    state.ensure(fp, request.url, role="entry", host=host, site=registered_domain(host),
                 seed=True, request=request_context(request.meta))
    state.scheduled.add(fp)
    request.meta[META_KEY] = state.revisit_meta(fp, request.url)
    return request


def _request_for(state: RunState, record: dict[str, Any], spider: Any, priority: int) -> scrapy.Request:
    ctx = record.get("request") or {}
    url = record["url"]
    role = record.get("role") or "content"
    meta: dict[str, Any] = {
        "newscrawl_entry_url": ctx.get("entry_url") or url,
        "newscrawl_start_url": ctx.get("start_url") or url,
        "newscrawl_depth": int(ctx.get("depth") or 0),
        "newscrawl_link_class": ctx.get("link_class") or "known",
        "newscrawl_role": role,
        "newscrawl_features": ctx.get("features") or {},
        "newscrawl_parent_weight": float(ctx.get("parent_weight") or 1.0),
        META_KEY: state.revisit_meta(record["fp"], url),
    }
    if ctx.get("weight") is not None:
        meta["newscrawl_weight"] = float(ctx["weight"])
    if ctx.get("referer"):
        meta["newscrawl_referer"] = ctx["referer"]
    callback = spider.parse_article if role == "content" else spider.parse_node
    state.scheduled.add(record["fp"])
    # Not dont_filter: the duplicate filter is per run here and per round in distributed crawls
    # (newscrawl/distributed/scheduler.py), so it lets a revisit through once and keeps several
    # workers from scheduling the same due page.
    return scrapy.Request(url, callback=callback, priority=priority, meta=meta)


def _in_scope(record: dict[str, Any], spider: Any) -> bool:
    """Is a known page part of this run: reached from one of its entries, within its depth?"""
    ctx = record.get("request") or {}
    entries = getattr(spider, "entry_urls", None)
    if entries and ctx.get("entry_url") and ctx["entry_url"] not in entries:
        return False
    max_depth = getattr(spider, "max_depth", None)
    if record.get("role") in CHANNEL_ROLES and max_depth is not None:
        return int(ctx.get("depth") or 0) <= max_depth
    return True


def due_channel_requests(state: RunState, spider: Any, stats: Any = None) -> Iterator[scrapy.Request]:
    """Requests for the due channel pages of this run's entries.

    They are yielded in due order (due time, then PageRank, then weight). Without a budget
    they share one priority below the seeds, so the scheduler's first-in-first-out order is the
    due order; with one, the priority is the new articles each is expected to show
    (:func:`~newscrawl.algorithms.revisitplan.yield_priority`), due order breaking ties.
    Never-visited article links left over from a budget-limited run count as new articles.
    """
    records = [r for r in state.due_records(channels=True) if _in_scope(r, spider)]
    pending = [r for r in state.due_records(channels=False)
               if not r.get("last_visit") and _in_scope(r, spider)]
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
        weight = float((record.get("request") or {}).get("weight") or 0.0)
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/new")
        yield _request_for(state, record, spider, new_article_priority(weight))


def due_article_requests(state: RunState, spider: Any, stats: Any = None,
                         limit: int | None = None) -> list[scrapy.Request]:
    """Requests for due, already visited article pages (re-checks for corrections), in due
    order, at most ``limit``; one priority below every discovery request (the scheduler's
    first-in-first-out order keeps the due order)."""
    out = []
    for record in (r for r in state.due_records(channels=False)
                   if r.get("last_visit") and _in_scope(r, spider)):
        if limit is not None and len(out) >= limit:
            break
        out.append(_request_for(state, record, spider, -1000))
        if stats is not None:
            stats.inc_value(f"{_PREFIX}/due_articles")
    return out


# --- the middleware ---------------------------------------------------------------------------


class RevisitSpiderMiddleware:
    """Thin adapter from Scrapy to :class:`newscrawl.crawlstate.RunState` (module docstring)."""

    def __init__(self, stats: Any, crawler: Any = None) -> None:
        self.stats = stats
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> RevisitSpiderMiddleware:
        if not crawler.settings.getbool("NEWSCRAWL_REVISIT_ENABLED", defaults.NEWSCRAWL_REVISIT_ENABLED):
            raise NotConfigured("NEWSCRAWL_REVISIT_ENABLED is off")
        return cls(crawler.stats, crawler)

    def _inc(self, key: str, count: int = 1) -> None:
        self.stats.inc_value(f"{_PREFIX}/{key}", count)

    # Scrapy calls the async variant for async callbacks and the sync one otherwise.
    def process_spider_output(self, response, result, spider=None):
        state = state_of(self.crawler)
        if state is None:
            yield from result
            return
        seen = [False]
        for obj in result:
            out = self._one(response, obj, state, seen)
            if out is not None:
                yield out
        self._no_page(response, state, seen[0])

    async def process_spider_output_async(self, response, result, spider=None):
        state = state_of(self.crawler)
        if state is None:
            async for obj in result:
                yield obj
            return
        seen = [False]
        async for obj in result:
            out = self._one(response, obj, state, seen)
            if out is not None:
                yield out
        self._no_page(response, state, seen[0])

    def _one(self, response, obj, state: RunState, seen: list[bool]):
        if isinstance(obj, scrapy.Request):
            return self._request(obj, state)
        adapter = ItemAdapter(obj) if ItemAdapter.is_item(obj) else None
        if adapter is None or adapter.get("kind") not in ("node", "article") or META_KEY not in response.meta:
            return obj
        if seen[0]:  # one page, one visit
            return obj
        seen[0] = True
        return self._page(response, obj, adapter, state)

    # -- pages -----------------------------------------------------------------------------------

    def _page(self, response, item, adapter: ItemAdapter, state: RunState):
        meta = response.meta
        rv = meta.get(META_KEY) or {}
        url = rv.get("url") or response.url
        fp = rv.get("fp") or url_fingerprint(url)
        host = host_of(url)
        role = adapter.get("role") or meta.get("newscrawl_role") or "content"
        kind = adapter.get("kind")
        new_links = listed = None
        published = None
        if kind == "article":
            fingerprint = text_fingerprint(adapter.get("title"), adapter.get("text"))
            when = adapter.get("published")
            published = when.timestamp() if hasattr(when, "timestamp") else None
        else:
            links = adapter.get("links") or []
            targets = [link["target_url"] for link in links if link.get("role") in ("content", "node")]
            fingerprint = links_fingerprint(targets)
            content = {link.get("target_fp") or url_fingerprint(link["target_url"])
                       for link in links if link.get("role") == "content"}
            listed = len(content)
            new_links = sum(1 for target in content if not state.is_known(target))
        known = bool(rv.get("known"))
        how = meta.get(META_HOW) or (HOW_FINGERPRINT if known else HOW_FIRST)
        validators = Validators.from_headers(response.headers.get)
        changed: bool | None = None
        if known:
            previous = rv.get("fingerprint")
            changed = previous != fingerprint if previous else True
            self._teach_host(host, how, changed, meta, validators, state)
            if not changed:
                if how != HOW_FINGERPRINT:  # a HEAD / conditional GET claimed a change
                    self._inc(f"false_change/{how}")
                how = HOW_FINGERPRINT  # the fingerprint decided: unchanged
            self._inc(f"{'changed' if changed else 'unchanged'}/{how}")
        else:
            how = HOW_FIRST
            self._inc("first")
        state.observe(
            fp, url, role=role, status=response.status, how=how, changed=changed, host=host,
            site=registered_domain(host), seed=role == "entry", request=request_context(meta),
            validators=validators.to_dict(), fingerprint=fingerprint, new_links=new_links,
            listed=listed, published=published,
        )
        item_fp = adapter.get("fp")
        if item_fp and item_fp != fp:
            state.aliases[item_fp] = fp
        if known and not changed:
            self._inc("dropped_unchanged_items")
            return None
        if known and kind == "article" and rv.get("fingerprint"):
            state.changed_articles[item_fp or fp] = rv.get("fingerprint")
        return item

    def _teach_host(self, host: str, how: str, changed: bool, meta, validators: Validators,
                    state: RunState) -> None:
        events = []
        head = meta.get(META_HEAD)
        if head is not None and not validators_agree(Validators.from_dict(head), validators):
            events.append("disagree")
        if how == "head":
            events.append("true_change" if changed else "false_change_head")
        elif how == "conditional":
            events.append("true_change" if changed else "false_change_conditional")
        for event in events:
            before, after = state.learn(host, event)
            if after.mode != before.mode:
                self.stats.inc_value(f"newscrawl/headprobe/host/{after.mode}")
                logger.info("Host %s: change detection switched from %s to %s (%s)", host,
                            before.mode, after.mode, after.reason)

    def _no_page(self, response, state: RunState, seen: bool) -> None:
        """A tracked answer that produced no page item (not HTML): still a visit."""
        rv = response.meta.get(META_KEY)
        if seen or not rv:
            return
        url = rv.get("url") or response.url
        host = host_of(url)
        role = response.meta.get("newscrawl_role") or "content"
        state.observe(rv.get("fp") or url_fingerprint(url), url, role=role, status=response.status,
                      how=HOW_FIRST if not rv.get("known") else HOW_FINGERPRINT, changed=None,
                      host=host, site=registered_domain(host), request=request_context(response.meta),
                      validators=Validators.from_headers(response.headers.get).to_dict())

    # -- requests --------------------------------------------------------------------------------

    def _request(self, request: scrapy.Request, state: RunState):
        if META_KEY in request.meta or request.meta.get("newscrawl_role") is None:
            return request  # already prepared (seeds, due pages) or not a page request
        fp = url_fingerprint(request.url)
        record = state.get(fp)
        role = request.meta.get("newscrawl_role")
        if record is not None and record.get("last_visit") is not None:
            if fp in state.scheduled or not state.is_due(fp):
                self._inc("not_due" if fp not in state.scheduled else "already_scheduled")
                return None
            request.meta[META_KEY] = state.revisit_meta(fp, request.url)
            state.scheduled.add(fp)
            self._inc("due_linked")
            return self._prioritised(request, state, record)
        if fp in state.scheduled:
            self._inc("already_scheduled")
            return None
        host = host_of(request.url)
        state.ensure(fp, request.url, role=role, host=host, site=registered_domain(host),
                     request=request_context(request.meta))
        state.scheduled.add(fp)
        request.meta[META_KEY] = state.revisit_meta(fp, request.url)
        self._inc("new")
        return self._prioritised(request, state, None)

    @staticmethod
    def _prioritised(request: scrapy.Request, state: RunState, record) -> scrapy.Request:
        """Under a budget: priority = expected new articles (module docstring)."""
        if state.budget is None:
            return request
        if request.meta.get("newscrawl_role") == "content":
            priority = new_article_priority(request.meta.get("newscrawl_weight"))
            if record is not None:  # a known article due for a re-check: no new article
                priority = -1000
        else:
            priority = yield_priority(state.expected_yield(record) if record is not None
                                      else state.cfg.channel_prior)
        return request.replace(priority=priority)
