"""BudgetMiddleware: the run's one request counter (RunState's), robots.txt and HEAD probes free."""

from __future__ import annotations

import pytest
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request

from extensions.crawlstate import CrawlStateExtension
from middlewares.budget import BudgetMiddleware
from newscrawl import meta
from newscrawl.crawlstate import parse_budget
from tests.conftest import component_crawler


def test_budget_counts_requests_but_not_robots_txt_nor_head_probes():
    crawler = component_crawler({"NEWSCRAWL_BUDGET": 2})
    mw = BudgetMiddleware.from_crawler(crawler)
    assert mw.process_request(Request("https://a.example/robots.txt", meta={"dont_obey_robotstxt": True})) is None
    assert mw.process_request(Request("https://a.example/1", method="HEAD", meta={meta.PROBE: True})) is None
    assert mw.process_request(Request("https://a.example/1")) is None
    # the verification GET after a 304: the page's visit was counted already
    assert mw.process_request(Request("https://a.example/1", meta={meta.VERIFY: "etag"})) is None
    assert mw.process_request(Request("https://a.example/2")) is None
    with pytest.raises(IgnoreRequest):
        mw.process_request(Request("https://a.example/3"))
    assert crawler.stats.get_value("newscrawl/budget/spent") == 2
    assert crawler.stats.get_value("newscrawl/budget/refused") == 1
    # the one counter is the run's
    assert crawler.get_extension(CrawlStateExtension).state.spent == 2
    unlimited = component_crawler()
    assert BudgetMiddleware.from_crawler(unlimited).process_request(Request("https://a.example/")) is None


def test_the_budget_is_honoured_with_incremental_crawling_off():
    crawler = component_crawler({"NEWSCRAWL_BUDGET": 1, "NEWSCRAWL_REVISIT_ENABLED": False})
    mw = BudgetMiddleware.from_crawler(crawler)
    assert mw.process_request(Request("https://a.example/1")) is None
    with pytest.raises(IgnoreRequest):
        mw.process_request(Request("https://a.example/2"))


def test_budget_values_and_the_extension():
    assert parse_budget("0") is None and parse_budget("7") == 7 and parse_budget(None) is None
    with pytest.raises(ValueError):
        parse_budget("-1")
    with pytest.raises(NotConfigured, match="CrawlStateExtension"):
        BudgetMiddleware.from_crawler(component_crawler(extensions=()))
