"""A bare Scrapy spider that sends one HEAD request per URL of a file: the floor of a re-crawl.

``scrapy runspider benchmarks/_head_spider.py -a urls=FILE`` (run outside the project, so none of
newscrawl's components, extensions or pipelines load): Scrapy's own downloader and engine, the
same concurrency as the project, one HEAD per line of ``FILE``, and nothing done with the
answers. :mod:`benchmarks.recrawl` (``--floor``) times it over the pages the re-crawl checked: what
one Scrapy request per page costs on this machine, with no change detection at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import scrapy


class HeadFloorSpider(scrapy.Spider):
    name = "head_floor"

    def __init__(self, urls: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url_file = Path(urls)

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for line in self.url_file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield scrapy.Request(line.strip(), method="HEAD", callback=self.parse,
                                     dont_filter=True)

    def parse(self, response: scrapy.http.Response) -> None:
        return None
