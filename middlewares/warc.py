"""Downloader middleware: hand every HTTP exchange to the run's WARC writer, as received.

Its priority (``DOWNLOADER_MIDDLEWARES``: 990, above the distributed politeness middleware's 950)
puts its ``process_response`` first after the download handler, before Scrapy's
``HttpCompressionMiddleware`` (590) decompresses the body and before redirects, retries, the
charset middleware or the HEAD probe see it: the record holds the status, headers and body the
server sent, ``Content-Encoding`` and all. The request record holds the headers every other
middleware set (``process_request`` runs low to high, so they are all in by then). HEAD probes and
robots.txt requests pass through the downloader too, so they are archived; HEAD and ``304``
answers become ``revisit`` records.

What Scrapy cannot give: the header names' original case (Scrapy title-cases them), the
connection-control headers (Twisted's HTTP client keeps ``Connection``, ``Transfer-Encoding``,
... to itself; Scrapy puts a declared ``Content-Length`` back) and a chunked body before
de-chunking. Every response record names the removed headers in ``NewsCrawl-Headers-Removed``;
a body sent without ``Content-Length`` (chunked, or until the connection closed) is stored
without its framing and marked ``NewsCrawl-Transfer-Decoded: chunked-or-close``
(:mod:`newscrawl.warc.records`). Answers of Scrapy's HTTP cache (flag ``cached``) were not
fetched and are not archived (``newscrawl/warc/skipped_cached``).

Off unless ``NEWSCRAWL_WARC_DIR`` is set (the extension raises ``NotConfigured``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from scrapy import Request
from scrapy.http import Response

from extensions.warc import WarcExtension
from newscrawl.components import require_extension
from newscrawl.warc.records import Exchange

#: Twisted's HTTP client keeps these response headers to itself (its ``connHeaders``:
#: ``HTTPParser.CONNECTION_CONTROL_HEADERS``; Scrapy puts a declared ``Content-Length`` back, as
#: the first header). Named in every response record (``NewsCrawl-Headers-Removed``).
TWISTED_REMOVED = "Connection, Keep-Alive, TE, Trailers, Transfer-Encoding, Upgrade, Proxy-Connection"
#: ``NewsCrawl-Transfer-Decoded`` of a body sent without Content-Length: chunked (de-chunked by
#: the client) or delimited by the connection's close (RFC 9112 §6.3); stored without framing.
UNFRAMED = "chunked-or-close"
#: Answers that have no body whatever their headers say (RFC 9110 §6.4.1).
_NO_BODY = (204, 304)


def _pairs(headers: Any) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1"))
            for name, values in headers.items() for value in values]


def exchange_of(request: Request, response: Response, when: datetime) -> Exchange:
    """The :class:`Exchange` of a Scrapy request and its undecoded response."""
    te = (response.headers.get("Transfer-Encoding") or b"").lower()
    unframed = (request.method != "HEAD" and response.status not in _NO_BODY
                and response.status >= 200 and b"Content-Length" not in response.headers)
    return Exchange(url=response.url, method=request.method,
                    request_headers=_pairs(request.headers), request_body=request.body or b"",
                    status=response.status, response_headers=_pairs(response.headers),
                    body=response.body, date=when,
                    protocol=getattr(response, "protocol", None) or "HTTP/1.1",
                    ip_address=str(response.ip_address) if response.ip_address else None,
                    transfer_decoded="chunked" if b"chunked" in te else UNFRAMED if unframed else None,
                    headers_removed=TWISTED_REMOVED)


class WarcCaptureMiddleware:
    """Write each response (and its request) to the WARC writer (module docstring)."""

    def __init__(self, warc: WarcExtension) -> None:
        self.warc = warc

    @classmethod
    def from_crawler(cls, crawler: Any) -> WarcCaptureMiddleware:
        return cls(require_extension(crawler, WarcExtension))

    def process_response(self, request: Request, response: Response, spider: Any = None) -> Response:
        if "cached" in response.flags:
            self.warc.inc("skipped_cached")
            return response
        self.warc.writer.write_exchange(exchange_of(request, response, datetime.now(timezone.utc)))
        self.warc.inc("exchanges")
        return response
