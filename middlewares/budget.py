"""Downloader middleware: at most N requests per run (``-a budget=N`` / ``NEWSCRAWL_BUDGET``).

Every request the scheduler hands to the downloader counts one: a page visit, however
:mod:`middlewares.headprobe` carries it out (a HEAD alone when the page did not change, a
conditional GET, a HEAD and then a GET), a redirect or a retry. robots.txt requests and the HEAD
side requests (part of the visit already counted) are free. Once the budget is spent, requests
are refused with :class:`~scrapy.exceptions.IgnoreRequest`; the pages they were for keep their
to-visit records and are due in the next run.

Which requests get the budget: Scrapy hands out the highest priority first, and under a budget
:mod:`middlewares.revisit` sets priorities by the new articles a request is expected to bring
(seeds first, then due channel pages by expected yield and newly found article links;
re-checks of known articles only once discovery is done). For that order to hold, this
middleware must come first in the chain (e.g. priority 10, before OffsiteMiddleware and
RobotsTxtMiddleware, whose waits for robots.txt would reorder requests): the engine calls it in
the order it takes requests from the scheduler. (A request robots.txt then forbids has used its
unit.) The budget lives in the run's :class:`newscrawl.crawlstate.RunState`; without one
(incremental crawling off) the setting is still honoured through a local counter.

Stats: ``newscrawl/budget/spent`` (requests let through while a budget is set),
``newscrawl/budget/refused`` (requests refused).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from newscrawl import defaults

logger = logging.getLogger(__name__)


def budget_of(value: Any) -> int | None:
    """A budget argument as a request count: None for unlimited (0, empty, None).

    Raises:
        ValueError: not a whole number >= 0.
    """
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"budget must be a whole number of requests, got {value!r}") from None
    if number < 0:
        raise ValueError(f"budget must be >= 0, got {number}")
    return number or None


class BudgetMiddleware:
    """Refuse requests beyond the run's request budget (see the module docstring)."""

    def __init__(self, crawler: Any, stats: Any, *, budget: int | None) -> None:
        self.crawler = crawler
        self.stats = stats
        self.budget = budget
        self.spent = 0
        self._warned = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> BudgetMiddleware:
        budget = budget_of(crawler.settings.get("NEWSCRAWL_BUDGET", defaults.NEWSCRAWL_BUDGET))
        spider_budget = getattr(getattr(crawler, "spider", None), "budget", None)
        if spider_budget not in (None, ""):
            budget = budget_of(spider_budget)
        # The run's crawl state (which holds the budget of incremental runs) is created later,
        # by the pipeline; it is looked up per request.
        return cls(crawler, crawler.stats, budget=budget)

    def process_request(self, request: Request, spider: Any = None) -> None:
        if request.meta.get("dont_obey_robotstxt") or request.meta.get("newscrawl_probe"):
            return None
        state = getattr(self.crawler, "newscrawl_revisit", None)
        if state is not None:
            if state.budget is None:
                return None
            allowed = state.spend()
        else:
            if self.budget is None:
                return None
            allowed = self.spent < self.budget
            self.spent += allowed
        if allowed:
            self.stats.inc_value("newscrawl/budget/spent")
            return None
        self.stats.inc_value("newscrawl/budget/refused")
        if not self._warned:
            self._warned = True
            logger.info("Request budget spent; further requests are refused (first: %s)", request)
        raise IgnoreRequest("request budget spent")
