"""Downloader middleware: at most N requests per run (``-a budget=N`` / ``NEWSCRAWL_BUDGET``).

Every request the scheduler hands to the downloader counts one: a page visit, however
:mod:`middlewares.headprobe` carries it out (a HEAD alone when the page did not change, a
conditional GET, a HEAD and then a GET), a redirect or a retry. robots.txt requests and the HEAD
side requests (parts of a visit already counted) are free; a verification GET (marked
``VERIFY``) passes here because :mod:`middlewares.headprobe` paid for it when it drew it.
Once the budget is spent, requests are refused with :class:`~scrapy.exceptions.IgnoreRequest`; the pages they were for keep their
to-visit records and are due in the next run.

Which requests get the budget: Scrapy hands out the highest priority first, and under a budget
:mod:`middlewares.revisit` sets priorities by the new articles a request is expected to bring
(seeds first, then due channel pages by expected yield and newly found article links;
re-checks of known articles only once discovery is done). For that order to hold, this
middleware must come first in the chain (e.g. priority 10, before OffsiteMiddleware and
RobotsTxtMiddleware, whose waits for robots.txt would reorder requests): the engine calls it in
the order it takes requests from the scheduler. (A request robots.txt then forbids has used its
unit.) The budget and its one counter live in the run's :class:`newscrawl.crawlstate.RunState`
(:class:`extensions.crawlstate.CrawlStateExtension`; ``-a budget=`` over ``NEWSCRAWL_BUDGET``).

With a request rate (monitoring mode, ``-a rate=N`` requests per hour: the run state's
:class:`~newscrawl.algorithms.watch.RateBudget`, a share per site) a request that finds no token
is not lost: its page is released (:meth:`~newscrawl.crawlstate.RunState.release`) and
:class:`extensions.watch.WatchExtension` requests it again when its site has a token.

Stats: ``newscrawl/budget/spent`` (requests let through while a budget or rate is set),
``newscrawl/budget/refused`` (requests refused: budget spent), ``newscrawl/budget/deferred``
(requests put back for later: no token of the request rate).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.algorithms.urls import host_of, registered_domain
from newscrawl.components import require_extension
from newscrawl.crawlstate import RunState

logger = logging.getLogger(__name__)


class BudgetMiddleware:
    """Refuse requests beyond the run's request budget (see the module docstring)."""

    def __init__(self, state: RunState, stats: Any) -> None:
        self.state = state
        self.stats = stats
        self._warned = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> BudgetMiddleware:
        return cls(require_extension(crawler, CrawlStateExtension).state, crawler.stats)

    def process_request(self, request: Request, spider: Any = None) -> None:
        state = self.state
        if state.budget is None and state.rate is None:
            return None
        if (request.meta.get("dont_obey_robotstxt") or request.meta.get(meta.PROBE)
                or request.meta.get(meta.VERIFY)):
            return None
        if state.spend(registered_domain(host_of(request.url)), request.meta.get(meta.DISPATCH)):
            self.stats.inc_value("newscrawl/budget/spent")
            return None
        revisit = request.meta.get(meta.REVISIT)
        if state.rate is not None and (state.budget is None or state.spent < state.budget) \
                and revisit and revisit.get("fp"):
            state.release(revisit["fp"])  # asked again by the watch extension when due
            self.stats.inc_value("newscrawl/budget/deferred")
            raise IgnoreRequest("request rate: no token now, deferred")
        self.stats.inc_value("newscrawl/budget/refused")
        if not self._warned:
            self._warned = True
            logger.info("Request budget spent; further requests are refused (first: %s)", request)
        raise IgnoreRequest("request budget spent")
