"""One HTTP exchange as plain data, and the WARC/1.1 records it becomes (ISO 28500:2017 §6).

* ``request`` + ``response`` (§6.4, §6.5, linked by ``WARC-Concurrent-To``) for a fetch; the
  response block is the HTTP header section and the body *as received*: still content-encoded
  (``Content-Encoding: gzip`` bodies stay the gzip stream, so ``WARC-Payload-Digest`` is the
  digest of those bytes, §5.9). What the HTTP client takes away before anyone else sees the
  answer is said in the record: Twisted keeps the connection-control headers (``Connection``,
  ``Keep-Alive``, ``Transfer-Encoding``, ...) to itself and de-chunks a chunked body, so
  newscrawl's records carry ``NewsCrawl-Headers-Removed: <names>`` and, for a body that came
  without ``Content-Length``, ``NewsCrawl-Transfer-Decoded: chunked-or-close``; a record whose
  headers still say ``Transfer-Encoding: chunked`` over a de-chunked body drops that header (so
  readers do not de-chunk it again) and carries ``NewsCrawl-Transfer-Decoded: chunked``.
* ``revisit`` (§6.7, profile ``server-not-modified`` of WARC/1.1, §6.7.3) for ``304 Not Modified``
  answers and HEAD probes: the HTTP headers only, ``WARC-Refers-To`` (+ ``-Target-URI``, ``-Date``)
  the last full capture of the URL when one is known.
* ``metadata`` (§6.6, ``application/warc-fields`` with a ``newscrawl:`` line of JSON) with what
  newscrawl learned of a page, referring to its response record.
* ``warcinfo`` (§6.2, ``application/warc-fields``) at the start of each file.

Every function returns the record serialised as one gzip member (bytes), ready to append to a
``.warc.gz`` file in one write: a file cut anywhere between two writes is whole up to its last
record. The digests (``sha1:`` base32, as Heritrix and warcio write them) are computed by warcio.
"""

from __future__ import annotations

import json
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.client import responses as _REASONS
from io import BytesIO
from typing import Any
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

#: The WARC/1.1 revisit profile of a ``304`` answer (ISO 28500:2017 §6.7.3).
PROFILE_SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
#: Extension field saying the HTTP client removed a transfer coding before the body was seen.
TRANSFER_DECODED = "NewsCrawl-Transfer-Decoded"
#: Extension field naming the headers the HTTP client removed before anyone saw the answer
#: (Twisted keeps connection-control headers to itself: RFC 9110 §7.6.1); a chunked body among
#: them was de-chunked.
HEADERS_REMOVED = "NewsCrawl-Headers-Removed"
#: Extension field of a metadata record: the kind of page (``article``, ``node``, ``feed``).
PAGE_KIND = "NewsCrawl-Page-Kind"
#: Hop-by-hop headers of a body the client already de-chunked (RFC 9112 §6.1).
_TRANSFER_HEADERS = ("transfer-encoding",)


def new_record_id() -> str:
    """A fresh ``WARC-Record-ID`` (``<urn:uuid:…>``, RFC 4122 version 4; ISO 28500 §5.2)."""
    return f"<urn:uuid:{uuid.uuid4()}>"


def warc_date(when: datetime) -> str:
    """``WARC-Date`` of a UTC datetime (W3C-ISO8601, microseconds as WARC/1.1 allows, §5.4).

    >>> warc_date(datetime(2026, 12, 4, 18, 0, 1, 250000, tzinfo=timezone.utc))
    '2026-12-04T18:00:01.250000Z'
    """
    when = when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Exchange:
    """One HTTP request and its answer as they went over the wire (plain data).

    ``body`` is the response body as received (content-encoded, bytes); ``transfer_decoded``
    names a transfer coding the client removed (``"chunked"``) or is None; ``headers_removed``
    names the headers the client removed (comma-separated) or is None. ``date`` is the UTC
    time of the fetch. Header names keep the case the HTTP library gave them.
    """

    url: str
    method: str
    request_headers: list[tuple[str, str]]
    status: int
    response_headers: list[tuple[str, str]]
    body: bytes
    date: datetime
    protocol: str = "HTTP/1.1"
    reason: str = ""
    request_body: bytes = b""
    ip_address: str | None = None
    transfer_decoded: str | None = None
    headers_removed: str | None = None
    request_id: str = field(default_factory=new_record_id)
    response_id: str = field(default_factory=new_record_id)

    @property
    def is_revisit(self) -> bool:
        """True for answers archived as ``revisit`` records: ``304`` and HEAD answers."""
        return self.status == 304 or self.method.upper() == "HEAD"


#: Default gzip level of the records (zlib's default, as Heritrix's Java Deflater; warcio's own
#: gzip writer uses 9, which took 43 % more CPU on real pages for files 1 % smaller:
#: benchmarks/warc_cost.py).
DEFAULT_LEVEL = 6


def _writer(out: BytesIO) -> WARCWriter:
    return WARCWriter(out, gzip=False, warc_version="1.1")


def _serialise(records: list[Any], level: int) -> bytes:
    """Each record as one gzip member (RFC 1952) of compression ``level`` (0-9)."""
    members = []
    for record in records:
        out = BytesIO()
        _writer(out).write_record(record)
        gz = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS + 16)
        members.append(gz.compress(out.getvalue()) + gz.flush())
    return b"".join(members)


def _request_line(exchange: Exchange) -> str:
    parts = urlsplit(exchange.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{exchange.method.upper()} {target} {exchange.protocol}"


def _request_headers(exchange: Exchange) -> list[tuple[str, str]]:
    headers = list(exchange.request_headers)
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", urlsplit(exchange.url).netloc))
    return headers


def exchange_records(exchange: Exchange, *, refers_to: tuple[str, str, str] | None = None,
                     level: int = DEFAULT_LEVEL) -> bytes:
    """The ``request`` record and the ``response`` (or ``revisit``) record of ``exchange``,
    serialised as two gzip members.

    ``refers_to`` is ``(record id, target URI, WARC-Date)`` of the URL's last full capture, for a
    revisit record (ignored for a response). Raises nothing for odd headers: names and values are
    written as text (latin-1 bytes kept as they are, RFC 9110 §5.5).
    """
    writer = _writer(BytesIO())
    date = warc_date(exchange.date)
    common = {"WARC-Date": date}
    if exchange.ip_address:
        common["WARC-IP-Address"] = exchange.ip_address
    reason = exchange.reason or _REASONS.get(exchange.status, "")
    headers = [(n, v) for n, v in exchange.response_headers
               if not (exchange.transfer_decoded and n.lower() in _TRANSFER_HEADERS)]
    http_headers = StatusAndHeaders(f"{exchange.status} {reason}".rstrip(), headers,
                                    protocol=exchange.protocol)
    response_fields = {"WARC-Record-ID": exchange.response_id,
                       "WARC-Concurrent-To": exchange.request_id, **common}
    if exchange.transfer_decoded:
        response_fields[TRANSFER_DECODED] = exchange.transfer_decoded
    if exchange.headers_removed:
        response_fields[HEADERS_REMOVED] = exchange.headers_removed
    if exchange.is_revisit:
        response_fields["WARC-Profile"] = PROFILE_SERVER_NOT_MODIFIED
        if refers_to is not None:
            response_fields["WARC-Refers-To"] = refers_to[0]
            response_fields["WARC-Refers-To-Target-URI"] = refers_to[1]
            response_fields["WARC-Refers-To-Date"] = refers_to[2]
        response = writer.create_warc_record(exchange.url, "revisit", http_headers=http_headers,
                                             warc_headers_dict=response_fields)
    else:
        response = writer.create_warc_record(
            exchange.url, "response", payload=BytesIO(exchange.body), length=len(exchange.body),
            http_headers=http_headers, warc_headers_dict=response_fields)
    request = writer.create_warc_record(
        exchange.url, "request", payload=BytesIO(exchange.request_body),
        length=len(exchange.request_body),
        http_headers=StatusAndHeaders(_request_line(exchange), _request_headers(exchange),
                                      is_http_request=True),
        warc_headers_dict={"WARC-Record-ID": exchange.request_id,
                           "WARC-Concurrent-To": exchange.response_id, **common})
    return _serialise([request, response], level)


def metadata_record(url: str, refers_to: str | None, data: dict[str, Any], *, date: datetime,
                    kind: str | None = None, level: int = DEFAULT_LEVEL) -> bytes:
    """A ``metadata`` record of page ``url``, referring to its response record ``refers_to``
    (None: no capture of it in this archive).

    The block is ``application/warc-fields`` (ISO 28500 §6.6, as Heritrix and Common Crawl write
    metadata; replay tools such as pywb do not index such records as captures of the URL): one
    ``name: value`` line per key of ``data``, text values as they are (line breaks replaced by
    spaces), other values as one line of JSON (UTF-8; datetimes ISO 8601, unknown types ``str``).
    """
    fields = {"WARC-Date": warc_date(date)}
    if refers_to:
        fields["WARC-Refers-To"] = refers_to
    if kind:
        fields[PAGE_KIND] = kind
    lines = []
    for name, value in data.items():
        text = value if isinstance(value, str) else json.dumps(
            value, ensure_ascii=False, sort_keys=True, default=_json_default)
        lines.append(f"{name}: {' '.join(text.splitlines())}\r\n")
    body = "".join(lines).encode("utf-8")
    writer = _writer(BytesIO())
    record = writer.create_warc_record(url, "metadata", payload=BytesIO(body), length=len(body),
                                       warc_content_type="application/warc-fields",
                                       warc_headers_dict=fields)
    return _serialise([record], level)


def metadata_fields(block: bytes) -> dict[str, str]:
    r"""The ``name: value`` lines of an ``application/warc-fields`` block (UTF-8; later lines
    with the same name win; lines without ``:`` are ignored).

    >>> metadata_fields(b'newscrawl: {"depth": 1}\r\nvia: http://a.test/\r\n')
    {'newscrawl': '{"depth": 1}', 'via': 'http://a.test/'}
    """
    out = {}
    for line in block.decode("utf-8", "replace").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip():
            out[name.strip()] = value.strip()
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def warcinfo_record(filename: str, info: dict[str, str], *, date: datetime,
                    level: int = DEFAULT_LEVEL) -> bytes:
    """The ``warcinfo`` record opening file ``filename`` (``application/warc-fields``; fields
    ``software``, ``format``, ``conformsTo``, ``hostname``, … as ISO 28500 annex C suggests)."""
    writer = _writer(BytesIO())
    record = writer.create_warcinfo_record(filename, dict(info))
    record.rec_headers.replace_header("WARC-Date", warc_date(date))
    return _serialise([record], level)
