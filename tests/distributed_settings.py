"""Settings of the multi-worker crawl tests: the project's, plus :class:`PipelineBarrier`.

The distributed scheduler acknowledges a finished request once the run's
:class:`newscrawl.durability.Durable` extension says it is stored. Until the store extension
implements that protocol, the storage pipelines publish their write watermarks on the crawler
(``newscrawl_store``, ``newscrawl_state_store``); :class:`PipelineBarrier` reads them, and any
other ``Durable`` extension, so the killed-worker test keeps checking that nothing acknowledged is
lost. Once the store extension is ``Durable`` this module (and ``SCRAPY_SETTINGS_MODULE`` in
``tests/test_distributed_crawl.py``) can go.
"""

from __future__ import annotations

from typing import Any

from newscrawl import settings as _project
from newscrawl.durability import Durable
from newscrawl.settings import *  # noqa: F401,F403  (the project settings)

EXTENSIONS = {**getattr(_project, "EXTENSIONS", {}),
              "tests.distributed_settings.PipelineBarrier": 0}


class PipelineBarrier(Durable):
    """The earliest write watermark of the storage pipelines and other ``Durable`` extensions
    (``inf`` when there is none)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> PipelineBarrier:
        return cls(crawler)

    def durable_time(self) -> float:
        barriers = [getattr(self.crawler, name, None)
                    for name in ("newscrawl_store", "newscrawl_state_store")]
        barriers += [extension for extension in self.crawler.extensions.middlewares
                     if isinstance(extension, Durable) and extension is not self]
        return min((b.durable_time() for b in barriers if b is not None), default=float("inf"))
