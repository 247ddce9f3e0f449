"""Downloader middleware that gives HTML responses the encoding they are really in.

Scrapy decodes a :class:`~scrapy.http.TextResponse` with the BOM, else the ``Content-Type``
charset, else the first ``<meta>`` of the first 4096 bytes, else a guess. Real pages defeat that:
GBK portals served as ``text/html`` with no charset, a ``<meta charset>`` past 4 kB of inline
script, a Content-Type that lies, cp1252 bytes under a UTF-8 ``<meta>``. This middleware runs
:func:`newscrawl.algorithms.charset.detect_encoding` on the body and, when the result differs from
what Scrapy would declare, returns ``response.replace(encoding=...)`` so that ``response.text``,
selectors and link extraction all see the right characters.

Settings: ``NEWSCRAWL_CHARSET_ENABLED`` (bool; off raises :class:`~scrapy.exceptions.NotConfigured`).

Order: its ``process_response`` must see the decompressed body, so give it a priority *below*
``HttpCompressionMiddleware`` (590), e.g. ``DOWNLOADER_MIDDLEWARES = {"middlewares.charset.
CharsetMiddleware": 585}`` (``process_response`` runs from high numbers to low).

Stats (``newscrawl/charset/<event>``):

* ``detected`` — responses whose encoding this middleware set;
* ``header_overridden`` — of those, the ``Content-Type`` charset was present and distrusted;
* ``undeclared`` — of those, nothing was declared (no BOM, header charset or ``<meta>`` Scrapy
  would read), so Scrapy would have guessed;
* ``invalid_utf8`` — UTF-8 pages with invalid byte sequences (kept UTF-8, each sequence read as
  U+FFFD), and ``replacement_chars`` — the number of those sequences.
"""

from __future__ import annotations

import codecs
import logging
from typing import TYPE_CHECKING

from scrapy.http import HtmlResponse, TextResponse
from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

from newscrawl.algorithms.charset import detect_encoding, invalid_utf8
from newscrawl.components import require_enabled

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

_HTML_TYPES = (b"text/html", b"application/xhtml+xml")


def _codec_name(name: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return name


class CharsetMiddleware:
    """Re-decode HTML responses with the detected encoding (see the module docstring)."""

    def __init__(self, *, stats: StatsCollector | None = None) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CharsetMiddleware:
        require_enabled(crawler.settings, "NEWSCRAWL_CHARSET_ENABLED")
        return cls(stats=crawler.stats)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if not self._is_html(response):
            return response
        body = response.body
        if not body or body.isascii():
            return response  # every ASCII-compatible decoder agrees
        content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
        encoding = detect_encoding(body, http_charset=content_type or None)
        if encoding == "utf-8":
            bad = invalid_utf8(body)
            if bad:
                self._inc("invalid_utf8")
                self._inc("replacement_chars", bad)
                logger.debug("%s: %d invalid UTF-8 sequences", response.url, bad)
        header_encoding = http_content_type_encoding(content_type)
        scrapy_encoding = (
            read_bom(body)[0] or header_encoding or html_body_declared_encoding(body)
        )
        if scrapy_encoding is not None and _codec_name(scrapy_encoding) == _codec_name(encoding):
            return response
        self._inc("detected")
        if header_encoding is not None:
            self._inc("header_overridden")
        if scrapy_encoding is None:
            self._inc("undeclared")
        logger.debug(
            "Decoding %s as %s (Scrapy would declare %s)", response.url, encoding, scrapy_encoding
        )
        return response.replace(encoding=encoding)

    @staticmethod
    def _is_html(response: Response) -> bool:
        if isinstance(response, HtmlResponse):
            return True
        if not isinstance(response, TextResponse):
            return False
        content_type = (response.headers.get(b"Content-Type") or b"").lower()
        return content_type.lstrip().startswith(_HTML_TYPES)

    def _inc(self, event: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"newscrawl/charset/{event}", count)
