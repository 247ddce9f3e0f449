"""Baselines for ``benchmarks/crawl_throughput.py``: a plain Scrapy CrawlSpider, and a stats dump.

Not run on its own: ``crawl_throughput.py`` starts it as
``scrapy runspider benchmarks/_plain_spider.py -a start_url=URL -a extract=0|1 -s ...`` from a
folder outside the project (so no project settings, middlewares or pipelines apply) with the
same ``-s`` settings it gives the ``news`` spider.

* ``extract=0`` — variant (a): follow every in-site link, no extraction.
* ``extract=1`` — variant (b): the same, plus :func:`newscrawl.algorithms.extraction.extract_article`
  on every page, yielding its result as an item (what a user would write instead of ``news``).

:class:`BenchStats` is an extension every variant (also ``news``) gets through
``-s EXTENSIONS=...``: it records the URL of every response and, when the spider closes, writes
the crawl's stats and those URLs to the JSON file named by the setting ``BENCH_STATS_FILE``, so
the benchmark can check that all variants fetched the same pages.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class PlainSpider(CrawlSpider):
    """Follow every link of the start URL's host; optionally extract an article from each page."""

    name = "plain"

    def __init__(self, start_url: str = "", extract: str = "0", *args, **kwargs):
        if not start_url:
            raise ValueError("plain: give -a start_url=URL")
        self.start_urls = [start_url]
        self.allowed_domains = [urlsplit(start_url).hostname]
        self.extract = str(extract).lower() in ("1", "true", "yes")
        if self.extract:
            from newscrawl.algorithms.extraction import extract_article

            self._extract_article = extract_article
        self.rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)
        super().__init__(*args, **kwargs)

    async def start(self):
        # Like ``news``: the start request goes through the duplicate filter, so the home page
        # linked back from every page is not fetched a second time (Scrapy's default start
        # requests are ``dont_filter=True``).
        for url in self.start_urls:
            yield Request(url)

    def parse_start_url(self, response, **kwargs):
        return self.parse_page(response)

    def parse_page(self, response):
        if not self.extract:
            return
        article = self._extract_article(response.text, response.url)
        yield {"url": response.url, "status": response.status, **article}


class BenchStats:
    """Write the crawl's stats and fetched URLs to ``BENCH_STATS_FILE`` when the spider closes."""

    def __init__(self, crawler, path: str):
        self.crawler = crawler
        self.path = path
        self.urls: list[str] = []

    @classmethod
    def from_crawler(cls, crawler):
        path = crawler.settings.get("BENCH_STATS_FILE")
        if not path:
            raise NotConfigured("BENCH_STATS_FILE is not set")
        ext = cls(crawler, path)
        crawler.signals.connect(ext.response_received, signal=signals.response_received)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def response_received(self, response, request, spider):
        self.urls.append(response.url)

    def spider_closed(self, spider, reason):
        stats = {k: (v if isinstance(v, (int, float, str, bool)) or v is None else str(v))
                 for k, v in self.crawler.stats.get_stats().items()}
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump({"reason": reason, "stats": stats, "urls": self.urls}, handle)
