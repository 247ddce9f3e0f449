"""Extension: the archive an import crawl answers from (``NEWSCRAWL_WARC_IMPORT``; docs/warc.md).

Owns the :class:`newscrawl.warc.reader.WarcArchive` of the WARC files named in
``NEWSCRAWL_WARC_IMPORT`` (comma-separated paths), read once, streamed, when the crawler is
built (progress logged every 1,000 records). ``middlewares/warcreplay.py`` answers every request
from it and records what it served; the import spider (``spiders/warcimport.py``) takes its
entries from it and, when the crawl from those entries is done, the archived pages nobody
requested (:meth:`WarcImportExtension.unrequested`).

Stats (``newscrawl/warcimport/<event>``): ``files``, ``records/<type>`` (records per WARC type),
``skipped/<reason>`` (records not used: ``type_<type>``, ``not_http``, ``no_target_uri``,
``metadata_not_newscrawl``, ``metadata_bad_json``, ``unreadable_file``,
``unreadable_rest_of_file``, ``truncated_last_record``), ``answered``, ``missing`` (requests of URLs the archive does not
hold, answered 404), ``undecoded`` (bodies whose content coding could not be removed),
``unrequested`` (pages imported after the crawl from the entries), ``later_captures`` (requests
of a page's second, third ... capture).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from newscrawl.warc.reader import WarcArchive

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/warcimport"


def import_paths(value: Any) -> list[str]:
    """The WARC paths of a ``NEWSCRAWL_WARC_IMPORT`` value (comma-separated text or a list)."""
    items = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    return [str(p).strip() for p in items if str(p).strip()]


class WarcImportExtension:
    """The import crawl's archive (module docstring).

    Args:
        archive: the indexed WARC files.
        stats: Scrapy stats collector.
    """

    def __init__(self, archive: WarcArchive, stats: Any) -> None:
        self.archive = archive
        self.stats = stats
        #: URLs a request asked for (answered or missing)
        self.served: set[str] = set()
        #: URL → the first page request that asked for it (for its later captures)
        self.first_requests: dict[str, Any] = {}
        #: URL → the capture (0 = the oldest) its requests get in the current round: a HEAD
        #: probe or a redirect of a later capture's request sees that capture too
        self.current: dict[str, int] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> WarcImportExtension:
        paths = import_paths(crawler.settings.get("NEWSCRAWL_WARC_IMPORT"))
        if not paths:
            raise NotConfigured("NEWSCRAWL_WARC_IMPORT is not set")

        def progress(path: str, n: int) -> None:
            logger.info("Reading %s: %d records", path, n)

        archive = WarcArchive(paths, progress=progress)
        ext = cls(archive, crawler.stats)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def inc(self, event: str, n: int = 1) -> None:
        """Count ``newscrawl/warcimport/<event>``."""
        self.stats.inc_value(f"{_PREFIX}/{event}", n)

    def unrequested(self) -> list[str]:
        """Archived HTML pages (status 200) no request of this crawl asked for, in archive order."""
        return [url for url in self.archive.pages() if url not in self.served]

    def later_captures(self, index: int) -> list[tuple[Any, int]]:
        """``(first request, index)`` of the pages requested in this import that have a full
        capture number ``index`` (0 = the oldest): the next round of repeated captures."""
        archive = self.archive
        return [(request, index) for url, request in self.first_requests.items()
                if len(archive.full_captures(url)) > index]

    def spider_opened(self, spider: Any = None) -> None:
        a = self.archive
        self.stats.set_value(f"{_PREFIX}/files", a.files)
        for kind, n in sorted(a.kinds.items()):
            self.stats.set_value(f"{_PREFIX}/records/{kind}", n)
        for reason, n in sorted(a.skipped.items()):
            self.stats.set_value(f"{_PREFIX}/skipped/{reason}", n)
        logger.info("Importing %d WARC files: %d captured URLs, records %s, skipped %s", a.files,
                    len(a.captures), dict(sorted(a.kinds.items())), dict(sorted(a.skipped.items())))

    def spider_closed(self, spider: Any = None) -> None:
        get = self.stats.get_value
        logger.info("WARC import: %s answered, %s missing (404), %s undecoded, %s pages nobody "
                    "linked imported; skipped records %s", get(f"{_PREFIX}/answered", 0),
                    get(f"{_PREFIX}/missing", 0), get(f"{_PREFIX}/undecoded", 0),
                    get(f"{_PREFIX}/unrequested", 0), dict(sorted(self.archive.skipped.items())))
