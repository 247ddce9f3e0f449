"""WARC files read back: an index of their captures and each capture's HTTP answer.

:class:`WarcArchive` streams through WARC files (gzip per record or not, WARC/1.0 or 1.1:
newscrawl's own, CC-NEWS, Heritrix, Webrecorder, any ISO 28500 file) once, keeping per URL the
offset of its captures, and the newscrawl ``metadata`` records (page context) when present. It
keeps no bodies in memory: :meth:`WarcArchive.answer` reads one record again from its offset.
Everything that is not used is counted by reason (:attr:`WarcArchive.skipped`): records of
other types, responses without HTTP headers (``dns:``, ``whois:``), records without a target
URI, the rest of a file after a record that cannot be read, and a last record cut short (the
``.open`` file of a killed crawl).

The answer of a capture (:class:`Answer`) is the HTTP status and headers as recorded and the
body with its transfer and content codings removed (the bytes a crawl's parser sees after
Scrapy's decompression); ``Content-Encoding``, ``Transfer-Encoding`` and ``Content-Length``
are dropped from its headers accordingly.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator

from newscrawl.warc.records import metadata_fields

logger = logging.getLogger(__name__)

#: Record types indexed as captures.
CAPTURE_TYPES = ("response", "revisit")
#: Headers that describe the codings removed from an answer's body.
_CODING_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})


@dataclass(frozen=True)
class Capture:
    """Where one capture of ``url`` is: ``path`` and ``offset`` (bytes) of its record."""

    url: str
    date: str
    rec_type: str
    status: int
    content_type: str
    path: str
    offset: int


@dataclass
class Answer:
    """An HTTP answer read from a WARC: ``status``, ``headers`` (name, value), ``body``
    (decoded bytes), ``date`` (``WARC-Date``), ``ip_address`` (or None), ``decoded`` (False when
    the content coding could not be removed: the body is as recorded, headers intact)."""

    url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    date: str
    ip_address: str | None
    decoded: bool = True


def iter_records(path: str | Path) -> Iterator[tuple[ArchiveIterator, Any]]:
    """``(iterator, record)`` of each record of WARC file ``path``, streamed (warcio). Read what
    is needed of the record's content before ``iterator.get_record_offset()`` (which reads the
    record to its end).

    Raises:
        OSError: the file cannot be opened.
        warcio.exceptions.ArchiveLoadFailed (or another warcio/zlib error): a record cannot be
            read; the records before it were yielded.
    """
    with open(path, "rb") as stream:
        it = ArchiveIterator(stream)
        for record in it:
            yield it, record


def _status(record: Any) -> int:
    try:
        return int((record.http_headers.get_statuscode() or "0")[:3])
    except (AttributeError, ValueError):
        return 0


class WarcArchive:
    """The captures of a set of WARC files (module docstring).

    ``progress`` is called with ``(path, records read so far)`` every 1,000 records and at the
    end of each file. Counters: :attr:`kinds` (records per WARC type), :attr:`skipped` (records
    not used, per reason), :attr:`files` (files read).
    """

    def __init__(self, paths: Iterable[str | Path], *,
                 progress: Callable[[str, int], None] | None = None) -> None:
        self.paths = [str(p) for p in paths]
        #: URL → its captures (response and revisit records) in file order
        self.captures: dict[str, list[Capture]] = {}
        #: URL → the ``newscrawl`` object of its last metadata record
        self.metadata: dict[str, dict[str, Any]] = {}
        self.kinds: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.files = 0
        self._progress = progress
        for path in self.paths:
            self._scan(path)

    def _scan(self, path: str) -> None:
        n = 0
        try:
            end = 0
            for it, record in iter_records(path):
                n += 1
                capture = self._index(path, record)
                offset = it.get_record_offset()
                end = offset + it.get_record_length()
                if capture is not None:
                    url, date, kind, status, ctype = capture
                    self.captures.setdefault(url, []).append(Capture(
                        url, date, kind, status, ctype, path, offset))
            if os.path.getsize(path) > end + 4:  # a last record cut short (a killed writer)
                self.skipped["truncated_last_record"] += 1
                logger.warning("WARC file %s ends in a record cut short (byte %d of %d)", path, end,
                               os.path.getsize(path))
                if self._progress is not None and n % 1000 == 0:
                    self._progress(path, n)
        except OSError as exc:
            self.skipped["unreadable_file"] += 1
            logger.warning("WARC file %s not read: %s", path, exc)
            return
        except Exception as exc:  # noqa: BLE001 - warcio/zlib errors: the rest of this file
            self.skipped["unreadable_rest_of_file"] += 1
            logger.warning("WARC file %s: record %d cannot be read (%s); rest of the file skipped",
                           path, n + 1, exc)
        self.files += 1
        if self._progress is not None:
            self._progress(path, n)

    def _index(self, path: str, record: Any) -> tuple[str, str, str, int, str] | None:
        kind = record.rec_type
        self.kinds[kind] += 1
        url = record.rec_headers.get_header("WARC-Target-URI")
        if kind not in CAPTURE_TYPES and kind != "metadata":
            if kind not in ("warcinfo", "request"):
                self.skipped[f"type_{kind}"] += 1
            return None
        if not url:
            self.skipped["no_target_uri"] += 1
            return None
        if kind == "metadata":
            self._read_metadata(url, record)
            return None
        if record.http_headers is None or urlsplit(url).scheme not in ("http", "https"):
            self.skipped["not_http"] += 1
            return None
        return (url, record.rec_headers.get_header("WARC-Date") or "", kind, _status(record),
                (record.http_headers.get_header("Content-Type") or "").lower())

    def _read_metadata(self, url: str, record: Any) -> None:
        if (record.rec_headers.get_header("Content-Type") or "") != "application/warc-fields":
            self.skipped["metadata_not_newscrawl"] += 1
            return
        value = metadata_fields(record.content_stream().read()).get("newscrawl")
        if value is None:
            self.skipped["metadata_not_newscrawl"] += 1
            return
        try:
            data = json.loads(value)
        except ValueError:
            self.skipped["metadata_bad_json"] += 1
            return
        if isinstance(data, dict):
            self.metadata[url] = data
        else:
            self.skipped["metadata_bad_json"] += 1

    # --- questions --------------------------------------------------------------------------
    def full_captures(self, url: str) -> list[Capture]:
        """The URL's ``response`` captures, oldest first (by ``WARC-Date``)."""
        return sorted((c for c in self.captures.get(url, ()) if c.rec_type == "response"),
                      key=lambda c: c.date)

    def last_full(self, url: str) -> Capture | None:
        """The URL's last ``response`` capture (by ``WARC-Date``), None without one."""
        full = self.full_captures(url)
        return full[-1] if full else None

    def entries(self) -> list[str]:
        """Entry URLs of newscrawl crawls in the archive: pages whose metadata says depth 0
        and link class ``entry``, in the order first captured."""
        return [url for url, m in self.metadata.items()
                if m.get("link_class") == "entry" and m.get("depth") == 0 and url in self.captures]

    def pages(self) -> list[str]:
        """URLs of full HTML captures with status 200 (``text/html`` or
        ``application/xhtml+xml``), in archive order."""
        out = []
        for url in self.captures:
            last = self.last_full(url)
            if last is not None and last.status == 200 and "html" in last.content_type:
                out.append(url)
        return out

    def answer(self, url: str, index: int | None = None) -> Answer | None:
        """The HTTP answer of the URL's full capture number ``index`` (0 = the oldest; past
        the last: the last), of its last one when ``index`` is None; None when it has none.

        Raises:
            OSError: its file cannot be read any more.
        """
        full = self.full_captures(url)
        if not full:
            return None
        return read_answer(full[-1] if index is None else full[min(index, len(full) - 1)])


def read_answer(capture: Capture) -> Answer | None:
    """The :class:`Answer` of ``capture``, read from its file; None when its record cannot be
    read (logged)."""
    with open(capture.path, "rb") as stream:
        stream.seek(capture.offset)
        try:
            record = next(iter(ArchiveIterator(stream)))
        except Exception as exc:  # noqa: BLE001 - a damaged record is one missing answer
            logger.warning("WARC record of %s at %s:%d cannot be read: %s", capture.url,
                           capture.path, capture.offset, exc)
            return None
        return _answer_of(capture, record, stream)


def _answer_of(capture: Capture, record: Any, stream: BinaryIO) -> Answer:
    headers = list(record.http_headers.headers)
    ip = record.rec_headers.get_header("WARC-IP-Address")
    try:
        body = record.content_stream().read()
    except Exception:  # noqa: BLE001 - a body whose coding cannot be removed is kept as recorded
        stream.seek(capture.offset)
        record = next(iter(ArchiveIterator(stream)))
        return Answer(capture.url, capture.status, headers, record.raw_stream.read(),
                      capture.date, ip, decoded=False)
    kept = [(n, v) for n, v in headers if n.lower() not in _CODING_HEADERS]
    return Answer(capture.url, capture.status, kept, body, capture.date, ip)


def last_captures(paths: Iterable[str | Path]) -> dict[str, tuple[str, str, str]]:
    """URL → (response record id, URI, WARC-Date) of its last full capture in ``paths``
    (WARC headers only; unreadable files and tails are skipped, logged)."""
    out: dict[str, tuple[str, str, str]] = {}
    for path in paths:
        try:
            for _, record in iter_records(path):  # headers only
                if record.rec_type == "response":
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    date = record.rec_headers.get_header("WARC-Date") or ""
                    rid = record.rec_headers.get_header("WARC-Record-ID")
                    if url and rid and (url not in out or out[url][2] <= date):
                        out[url] = (rid, url, date)
        except Exception as exc:  # noqa: BLE001 - earlier captures are a hint, never an error
            logger.warning("WARC file %s: earlier captures not all read (%s)", path, exc)
    return out
