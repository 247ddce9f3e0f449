"""Extension: the run's WARC writer (``NEWSCRAWL_WARC_DIR``; ISO 28500, docs/warc.md).

Owns one :class:`newscrawl.warc.writer.RotatingWarcWriter` per crawl process (one writer per
worker in a distributed crawl: each worker's files carry its own serials and are created
exclusively). The downloader middleware (``middlewares/warc.py``) and the metadata pipeline
(``pipelines/warc.py``) reach it with ``crawler.get_extension(WarcExtension)``. Records are
serialised and written by the writer's own thread, off the reactor thread; the files are
closed (renamed from ``.open``) when the spider closes.

At ``spider_opened`` the writer thread reads the last full capture of each URL in the folder's
earlier files (WARC headers only), before it writes this run's records, so a ``304`` or HEAD
answer of a later run refers to it.

Settings: ``NEWSCRAWL_WARC_DIR`` ("" raises :class:`~scrapy.exceptions.NotConfigured`),
``NEWSCRAWL_WARC_MAX_BYTES``, ``NEWSCRAWL_WARC_MAX_AGE``, ``NEWSCRAWL_WARC_GZIP_LEVEL``,
``NEWSCRAWL_WARC_HOST``. Stats
(``newscrawl/warc/<event>``): ``records``, ``files``, ``bytes`` (written, at close), ``errors``
(records lost to a disk error, each logged), ``exchanges`` and ``metadata`` (handed to the
writer), ``skipped_cached`` (answers of Scrapy's HTTP cache, not fetched).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from newscrawl.components import setting
from newscrawl.settingscheck import SettingsError
from newscrawl.warc.reader import last_captures
from newscrawl.warc.writer import RotatingWarcWriter

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/warc"


class WarcExtension:
    """The run's :class:`RotatingWarcWriter` (module docstring).

    Args:
        writer: the writer (its thread running).
        stats: Scrapy stats collector.
    """

    def __init__(self, writer: RotatingWarcWriter, stats: Any) -> None:
        self.writer = writer
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> WarcExtension:
        settings = crawler.settings
        folder = setting(settings, "NEWSCRAWL_WARC_DIR")
        if not folder:
            raise NotConfigured("NEWSCRAWL_WARC_DIR is not set")
        info = {"robots": "obey" if settings.getbool("ROBOTSTXT_OBEY") else "ignore",
                "http-header-user-agent": str(settings.get("USER_AGENT") or ""),
                "description": "newscrawl crawl; HTTP header names as the HTTP client gave them; "
                               "bodies as received (content-encoded); a body the client "
                               "de-chunked has no Transfer-Encoding header and a "
                               "NewsCrawl-Transfer-Decoded field"}
        level = setting(settings, "NEWSCRAWL_WARC_GZIP_LEVEL")
        if not 0 <= level <= 9:
            raise SettingsError(f"NEWSCRAWL_WARC_GZIP_LEVEL must be 0-9, got {level!r}")
        writer = RotatingWarcWriter(folder, max_bytes=setting(settings, "NEWSCRAWL_WARC_MAX_BYTES"),
                                    max_age=setting(settings, "NEWSCRAWL_WARC_MAX_AGE"),
                                    host=setting(settings, "NEWSCRAWL_WARC_HOST") or None, info=info,
                                    level=level)
        ext = cls(writer, crawler.stats)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def inc(self, event: str) -> None:
        """Count ``newscrawl/warc/<event>``."""
        self.stats.inc_value(f"{_PREFIX}/{event}")

    def spider_opened(self, spider: Any = None) -> None:
        folder = self.writer.directory
        logger.info("Writing WARC files to %s", folder)

        def earlier() -> dict[str, tuple[str, str, str]]:
            captures = last_captures(sorted(folder.glob("*.warc.gz")))
            logger.info("WARC: %d URLs captured in the earlier files of %s", len(captures), folder)
            return captures

        self.writer.recall(earlier)

    def spider_closed(self, spider: Any = None) -> None:
        closed = self.writer.close()
        for name in ("records", "files", "bytes", "errors"):
            self.stats.set_value(f"{_PREFIX}/{name}", getattr(self.writer, name))
        logger.info("WARC: %d records in %d files (%d bytes) in %s; writer thread CPU %.2f s",
                    self.writer.records, len(closed), self.writer.bytes, self.writer.directory,
                    self.writer.thread_cpu)
