"""Downloader middleware: answer an import crawl's requests from WARC files, never the network.

Every request (pages, robots.txt, HEAD probes, redirects) is answered from the archive of
:class:`extensions.warcimport.WarcImportExtension`: a full capture of its URL — the oldest, or
the one request meta :data:`newscrawl.meta.WARC_CAPTURE` names or the URL's current round names
(the import spider walks repeated captures in time order; a HEAD probe sent for such a request
sees the same capture) — with the
status and headers recorded and the body with its transfer and content codings removed (so
Scrapy's decompression has nothing left to do); a URL the archive does not hold is answered
``404`` (flag ``warc-missing``), as a dead link would be. A HEAD request gets the headers with the
``Content-Length`` of the body; a conditional GET whose ``If-None-Match`` holds the capture's
``ETag`` gets ``304``, as the server would have answered. The capture's ``WARC-Date`` goes into
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


def _etags(value: bytes | None) -> list[bytes]:
    """The entity tags of an ``If-None-Match`` header (RFC 9110 §13.1.2), weak prefix dropped.

    >>> _etags(b'"a", W/"b"')
    [b'"a"', b'"b"']
    """
    return [tag.strip().removeprefix(b"W/") for tag in (value or b"").split(b",") if tag.strip()]


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
            index = request.meta.get(meta.WARC_CAPTURE, self.source.current.get(request.url, 0))
            answer = self.source.archive.answer(request.url, index)
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
        body = answer.body
        etag = (headers.get("ETag") or b"").removeprefix(b"W/")
        status = answer.status
        if etag and etag in _etags(request.headers.get("If-None-Match")):
            status, body = 304, b""  # the archived answer still has that ETag (RFC 9110 §13.1.2)
        elif request.method == "HEAD":  # the length of the body a GET would get, no body
            headers["Content-Length"] = str(len(body))
            body = b""
        cls = responsetypes.from_args(headers=headers, url=request.url, body=body)
        request.meta[meta.WARC_DATE] = answer.date
        return cls(url=request.url, status=status, headers=headers, body=body,
                   request=request, flags=["warc"], protocol="HTTP/1.1")
