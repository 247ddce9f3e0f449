"""ProgressExtension: a batch crawl's progress line (pages, items, frontier) every
NEWSCRAWL_PROGRESS_INTERVAL seconds; none in a watch; off at 0."""

from __future__ import annotations

import logging
from unittest.mock import Mock

import pytest
from scrapy.exceptions import NotConfigured

from extensions.progress import ProgressExtension
from tests.conftest import component_crawler


def _crawler(settings=None, queued=7, active=3):
    crawler = component_crawler(settings or {})
    crawler.engine = Mock()
    crawler.engine.scheduler.__len__ = Mock(return_value=queued)
    crawler.engine.downloader.active = set(range(active))
    return crawler


def test_the_progress_line_counts_pages_items_and_the_frontier(caplog):
    crawler = _crawler()
    ext = ProgressExtension.from_crawler(crawler)
    assert ext.interval == 10.0  # the default, seconds
    stats = crawler.stats
    stats.set_value("downloader/response_status_count/200", 30)
    stats.set_value("downloader/response_status_count/404", 2)  # not fetched
    stats.set_value("robotstxt/response_status_count/200", 1)
    stats.set_value("downloader/response_status_count/200", 31)
    stats.set_value("item_scraped_count", 12)
    caplog.set_level(logging.INFO, logger="extensions.progress")
    line = ext.emit()
    assert line == ("Progress: 30 page(s) fetched (3.0/s), 12 item(s) stored, "
                    "frontier 7 request(s) queued, 3 in flight")
    assert line in caplog.text and stats.get_value("newscrawl/progress/frontier") == 7
    stats.set_value("downloader/response_status_count/200", 51)
    assert ext.emit().startswith("Progress: 50 page(s) fetched (2.0/s)")  # per interval


def test_a_scheduler_without_a_length_is_an_unknown_frontier():
    crawler = _crawler()
    crawler.engine.scheduler = object()
    assert "frontier unknown" in ProgressExtension.from_crawler(crawler).emit()


def test_off_at_zero_and_silent_in_a_watch():
    with pytest.raises(NotConfigured):
        ProgressExtension.from_crawler(_crawler({"NEWSCRAWL_PROGRESS_INTERVAL": 0}))
    crawler = _crawler()
    ext = ProgressExtension.from_crawler(crawler)
    crawler.get_extension = Mock(return_value=object())  # a WatchExtension is there
    ext.spider_opened(None)
    assert ext._loop is None
