"""Downloader middleware: answer an import crawl's requests from WARC files, never the network.

Every request (pages, robots.txt, HEAD probes, redirects) is answered from the archive of
:class:`extensions.warcimport.WarcImportExtension`: a full capture of its URL — the oldest, or
the one request meta :data:`newscrawl.meta.WARC_CAPTURE` names (the import spider walks repeated
captures in time order) — with the
status and headers recorded and the body with its transfer and content codings removed (so
Scrapy's decompression has nothing left to do); a URL the archive does not hold is answered
``404`` (flag ``warc-missing``), as a dead link would be. The capture's ``WARC-Date`` goes into
request meta (:data:`newscrawl.meta.WARC_DATE`): the import spider dates the page with it.

Priority 755 (``DOWNLOADER_MIDDLEWARES``): after the budget, robots.txt, HEAD-probe, credentials
and proxy middlewares have had their say, before the destination check (760) would resolve the
host: an import sends nothing and resolves nothing.

Off unless ``NEWSCRAWL_WARC_IMPORT`` names files (the extension raises ``NotConfigured``).
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.http import Headers, Response
from scrapy.responsetypes import responsetypes

from extensions.warcimport import WarcImportExtension
from newscrawl import meta
from newscrawl.components import require_extension


class WarcReplayMiddleware:
    """Answer requests from the import archive (module docstring)."""

    def __init__(self, archive: WarcImportExtension) -> None:
        self.source = archive

    @classmethod
    def from_crawler(cls, crawler: Any) -> WarcReplayMiddleware:
        return cls(require_extension(crawler, WarcImportExtension))

    def process_request(self, request: Request, spider: Any = None) -> Response:
        self.source.served.add(request.url)
        if request.callback is not None and meta.WARC_CAPTURE not in request.meta:
            self.source.first_requests.setdefault(request.url, request)
        try:
            answer = self.source.archive.answer(request.url, request.meta.get(meta.WARC_CAPTURE, 0))
        except OSError:
            answer = None
        if answer is None:
            self.source.inc("missing")
            return Response(request.url, status=404, request=request, flags=["warc-missing"])
        self.source.inc("answered")
        if not answer.decoded:
            self.source.inc("undecoded")
        headers = Headers()
        for name, value in answer.headers:
            headers.appendlist(name, value)
        body = b"" if request.method == "HEAD" else answer.body
        cls = responsetypes.from_args(headers=headers, url=request.url, body=body)
        request.meta[meta.WARC_DATE] = answer.date
        return cls(url=request.url, status=answer.status, headers=headers, body=body,
                   request=request, flags=["warc"], protocol="HTTP/1.1")
