"""Spider middleware of incremental re-crawls: what changed, what is new, what is due.

Between the spider (and :class:`middlewares.linkclass.LinkClassificationMiddleware`, whose
output it sees) and the engine, on the run's in-memory crawl state
(:class:`newscrawl.crawlstate.RunState` of :class:`extensions.crawlstate.CrawlStateExtension`) —
never a database call here.

For every page item (``NodeItem``/``ArticleItem``) it computes the content fingerprint
(:func:`~newscrawl.algorithms.changedetect.text_fingerprint` of an article's title and text;
:func:`~newscrawl.algorithms.changedetect.links_fingerprint` of a channel page's article and
channel links, so ads and clocks are not changes), compares it with the stored one (request
meta :data:`newscrawl.meta.REVISIT`) and records the visit: changed or not and how that was
decided (``first``, ``head``, ``conditional``, ``fingerprint``), the answer's validators, a
channel page's new article links (an entry page's: channel links not in its ``node_links``) and,
on a source's first visit, what its listing says of its rate
(:func:`newscrawl.algorithms.listing.links_evidence`). A HEAD or conditional GET that claimed a
change the text does not show is told to the host's policy. An unchanged page's item is not
passed on; a changed article is marked so the previous version is kept.

For every request: a URL never seen is *new* and goes on with a to-visit record (in monitoring
mode a new article link goes to the watch dispatcher instead, as news or backlog:
:meth:`~newscrawl.crawlstate.RunState.found`); a known page not due is dropped; a due one goes
on with its state in meta. Under a request budget requests are re-prioritised by the new
articles they are expected to bring (:func:`spiders.requests.budget_priority`).

Stats (``newscrawl/revisit/…``): ``first``, ``failed``, ``changed/<how>`` and
``unchanged/<how>`` (``head`` / ``conditional`` counted by the downloader middleware: no body;
``fingerprint``: fetched, same text), ``false_change/<head|conditional>`` (a claimed change the
text does not show), ``new``, ``not_due``, ``due_linked``, ``already_scheduled``,
``found_news`` / ``found_backlog`` (monitoring: a new article link handed to the watch
dispatcher), ``dropped_unchanged_items``, ``<changed|unchanged>/verified`` (verification GETs,
:data:`newscrawl.meta.VERIFY`, sent by the HEAD probe for a sample of "unchanged" answers);
``newscrawl/headprobe/verify_match`` / ``verify_mismatch`` (the text changed while the validators
said not: distrusted, ``caught_lying``, one WARNING per host). Every 200 answer of a host until it shows a
validator (``ETag`` or valid ``Last-Modified``) tells its policy; one that sends none is learned
as a ``fingerprint`` host.

Scrapy's HTTP cache is refused at start (:func:`newscrawl.settingscheck.check_combinations`).
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

import scrapy
from itemadapter import ItemAdapter
from scrapy import signals

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.algorithms.changedetect import (
    V_FINGERPRINT,
    V_NONE,
    Validators,
    answer_events,
    links_fingerprint,
    text_fingerprint,
    validator_event,
    verify_outcome,
)
from newscrawl.algorithms.listing import links_evidence
from newscrawl.algorithms.revisit import HOW_FINGERPRINT, HOW_FIRST
from newscrawl.algorithms.urls import host_of, registered_domain
from newscrawl.components import require_enabled, require_extension
from newscrawl.crawlstate import RunState
from newscrawl.fingerprint import PageFingerprint, page_fingerprint
from newscrawl.meta import PageContext
from spiders.requests import budget_priority

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/revisit"


class RevisitSpiderMiddleware:
    """Thin adapter from Scrapy to :class:`newscrawl.crawlstate.RunState` (module docstring).

    Args: ``state`` the run's crawl state, ``stats`` the crawler's stats collector, ``page_fp``
    the page fingerprint (:mod:`newscrawl.fingerprint`).
    """

    def __init__(self, state: RunState, stats: Any, *, page_fp: PageFingerprint) -> None:
        self.state, self.stats, self.page_fp = state, stats, page_fp

    @classmethod
    def from_crawler(cls, crawler: Any) -> RevisitSpiderMiddleware:
        require_enabled(crawler.settings, "NEWSCRAWL_REVISIT_ENABLED")
        run = require_extension(crawler, CrawlStateExtension)
        middleware = cls(run.state, crawler.stats, page_fp=page_fingerprint(crawler))
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(middleware.item_handed, signal=signal)
        return middleware

    def item_handed(self, item: Any, **kwargs: Any) -> None:
        """An item left the pipelines (stored, dropped or failed): its page's record may be
        written (never before its item: :meth:`newscrawl.crawlstate.RunState.drain`)."""
        if ItemAdapter.is_item(item) and ItemAdapter(item).get("fp"):
            self.state.item_handed(ItemAdapter(item)["fp"])

    def _inc(self, key: str, count: int = 1) -> None:
        self.stats.inc_value(f"{_PREFIX}/{key}", count)

    # Scrapy calls the async variant for async callbacks and the sync one otherwise.
    # The page's record is held back from the store while its output is read (its links are
    # recorded first: RunState.drain), released when the output ends, however it ends.
    def process_spider_output(self, response, result, spider=None):
        seen = [False]
        try:
            for obj in result:
                out = self._one(response, obj, self.state, seen)
                if out is not None:
                    yield out
            self._no_page(response, self.state, seen[0])
        finally:
            self._expanded(response)

    async def process_spider_output_async(self, response, result, spider=None):
        seen = [False]
        try:
            async for obj in result:
                out = self._one(response, obj, self.state, seen)
                if out is not None:
                    yield out
            self._no_page(response, self.state, seen[0])
        finally:
            self._expanded(response)

    def _expanded(self, response) -> None:
        if (rv := response.meta.get(meta.REVISIT)) and rv.get("fp"):
            self.state.expanding.discard(rv["fp"])

    def _one(self, response, obj, state: RunState, seen: list[bool]):
        if isinstance(obj, scrapy.Request):
            rv = response.meta.get(meta.REVISIT)
            return self._request(obj, state, parent=rv.get("fp") if rv else None,
                                 parent_known=bool(rv and rv.get("known")))
        adapter = ItemAdapter(obj) if ItemAdapter.is_item(obj) else None
        if (adapter is None or adapter.get("kind") not in ("node", "article")
                or meta.REVISIT not in response.meta):
            return obj
        if seen[0]:  # one page, one visit
            return obj
        seen[0] = True
        return self._page(response, obj, adapter, state)

    # -- pages -----------------------------------------------------------------------------------

    def _page(self, response, item, adapter: ItemAdapter, state: RunState):
        request_meta = response.meta
        rv = request_meta.get(meta.REVISIT) or {}
        url = rv.get("url") or response.url
        fp = rv.get("fp") or self.page_fp(url)
        host = host_of(url)
        role = adapter.get("role") or request_meta.get(meta.ROLE) or "content"
        kind = adapter.get("kind")
        new_links = listed = None
        published = None
        evidence: tuple[float, float] | None = None
        channels: list[str] | None = None
        if kind == "article":
            fingerprint = text_fingerprint(adapter.get("title"), adapter.get("text"))
            when = adapter.get("published")
            published = when.timestamp() if isinstance(when, datetime) else None
        else:
            links = adapter.get("links") or []
            targets = [link["target_url"] for link in links if link.get("role") in ("content", "node")]
            fingerprint = links_fingerprint(targets)
            content = {link.get("target_fp") or self.page_fp(link["target_url"])
                       for link in links if link.get("role") == "content"}
            listed = len(content)
            new_links = sum(1 for target in content if not state.is_known(target))
            if not rv.get("known"):  # a source's first visit: what its listing says of its rate
                evidence = links_evidence(links, state.now())
            if role == "entry":  # a home page's yield: channel links it did not list before
                channels = sorted({link.get("target_fp") or self.page_fp(link["target_url"])
                                   for link in links if link.get("role") == "node"})
                before = (state.get(fp) or {}).get("node_links")
                listed = len(channels)
                new_links = len(set(channels) - set(before if isinstance(before, list) else ()))
        known = bool(rv.get("known"))
        how = request_meta.get(meta.REVISIT_HOW) or (HOW_FINGERPRINT if known else HOW_FIRST)
        # the wall clock where an answer has no Date (a replay's run clock may lie before it)
        validators = Validators.from_headers(response.headers.get, now=time.time())
        event = validator_event(state.host_policy(host), validators)
        if event is not None and response.status == 200:
            self._learn(host, event, state)
        changed: bool | None = None
        if known:
            previous = rv.get("fingerprint")
            changed = previous != fingerprint if previous else True
            if request_meta.get(meta.VERIFY):
                self._verified(host, url, changed, rv, validators, state)
                self._inc(f"{'changed' if changed else 'unchanged'}/verified")
            else:
                head = request_meta.get(meta.REVISIT_HEAD)
                for event in answer_events(how, changed, head and Validators.from_dict(head),
                                           validators):
                    self._learn(host, event, state)
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
            site=registered_domain(host), seed=role == "entry",
            request=PageContext.from_meta(request_meta).to_record(),
            validators=validators.to_dict(), fingerprint=fingerprint, new_links=new_links,
            listed=listed, published=published, validator=V_FINGERPRINT if known else V_NONE,
            evidence=evidence,
        )
        state.expanding.add(fp)
        if channels is not None:
            state.set_fields(fp, node_links=channels)
        item_fp = adapter.get("fp")
        if item_fp and item_fp != fp:
            state.aliases[item_fp] = fp
        if known and not changed:
            self._inc("dropped_unchanged_items")
            return None
        state.awaiting_item.add(fp)
        if known and kind == "article" and rv.get("fingerprint"):
            state.changed_articles[item_fp or fp] = rv.get("fingerprint")
        return item

    def _learn(self, host: str, event: str, state: RunState) -> None:
        before, after = state.learn(host, event)
        if after.mode != before.mode:
            self.stats.inc_value(f"newscrawl/headprobe/host/{after.mode}")
            logger.info("Host %s: change detection switched from %s to %s (%s)", host,
                        before.mode, after.mode, after.reason or "a validator appeared")

    def _verified(self, host: str, url: str, changed: bool, rv, validators: Validators,
                  state: RunState) -> None:
        """A verification GET's outcome (changedetect.verify_outcome), taught to the host."""
        event = verify_outcome(Validators.from_dict(rv.get("validators")), validators, changed)
        if event is not None:
            self.stats.inc_value(f"newscrawl/headprobe/{event}")
            if event == "verify_mismatch" and not state.host_policy(host).counts.get(event):
                self.stats.inc_value("newscrawl/headprobe/caught_lying")  # once per host
                logger.warning("Host %s: validators say unchanged but the body changed (%s); "
                               "fetching its pages in full from now on", host, url)
            self._learn(host, event, state)

    def _no_page(self, response, state: RunState, seen: bool) -> None:
        """A tracked answer that produced no page item (not HTML): still a visit."""
        rv = response.meta.get(meta.REVISIT)
        if seen or not rv:
            return
        url = rv.get("url") or response.url
        host = host_of(url)
        role = response.meta.get(meta.ROLE) or "content"
        state.observe(rv.get("fp") or self.page_fp(url), url, role=role, status=response.status,
                      how=HOW_FIRST if not rv.get("known") else HOW_FINGERPRINT, changed=None,
                      host=host, site=registered_domain(host),
                      request=PageContext.from_meta(response.meta).to_record(),
                      validators=Validators.from_headers(response.headers.get,
                                                         now=time.time()).to_dict(),
                      validator=V_NONE)

    # -- requests --------------------------------------------------------------------------------

    def _request(self, request: scrapy.Request, state: RunState, parent: str | None = None,
                 parent_known: bool = False):
        if meta.REVISIT in request.meta or request.meta.get(meta.ROLE) is None:
            return request  # already prepared (seeds, due pages) or not a page request
        fp = self.page_fp(request.url)
        if parent is not None:
            state.discovered(parent, fp)
        record = state.get(fp)
        role = request.meta[meta.ROLE]
        if record is not None and record.get("last_visit") is not None:
            if fp in state.scheduled or not state.is_due(fp):
                return self._inc("not_due" if fp not in state.scheduled else "already_scheduled")
            request.meta[meta.REVISIT] = state.revisit_meta(fp, request.url)
            state.scheduled.add(fp)
            self._inc("due_linked")
            return budget_priority(request, state, record)
        if fp in state.scheduled:
            return self._inc("already_scheduled")
        host = host_of(request.url)
        ctx = PageContext.from_meta(request.meta)
        state.ensure(fp, request.url, role=role, host=host, site=registered_domain(host),
                     request=ctx.to_record(), weight=ctx.weight)
        if state.watching and role == "content" and parent is not None:
            # Monitoring: the watch dispatcher sends it, news before backlog, within the rate.
            if state.found(fp, news=parent_known, entry=request.meta.get(meta.FEED_ENTRY)):
                self._inc("found_news" if parent_known else "found_backlog")
            return None
        state.scheduled.add(fp)
        request.meta[meta.REVISIT] = state.revisit_meta(fp, request.url)
        self._inc("new")
        return budget_priority(request, state, None)

