"""Rotating WARC files written by a thread of their own (ISO 28500:2017 annex C file naming).

:class:`RotatingWarcWriter` takes exchanges and metadata as plain data from any thread (the
crawl's reactor thread), and one writer thread serialises them (digests included) and appends
them to the current file:

* names ``newscrawl-<UTC time>-<serial>-<host>.warc.gz`` (time ``YYYYmmddHHMMSSffffff``, serial
  five digits counting this writer's files), created exclusively (``O_EXCL``), so several
  workers on one host writing to one folder never share a file (one writer per worker);
* while written a file is ``<name>.open``; it is renamed to ``<name>`` when closed (rotation,
  end of the crawl). A process killed with ``kill -9`` leaves every closed file whole and the
  ``.open`` one whole up to its last record: each record is one gzip member written with one
  ``write`` call;
* a new file begins with a ``warcinfo`` record; the writer rotates when the next record would
  take the file past ``max_bytes`` (bytes, default 1 GB), or when the file is ``max_age`` seconds
  old (checked at each record and once a second while idle).

Records of a URL's full captures are remembered (``record id``, URI, date), so a later
``304`` or HEAD answer of that URL becomes a ``revisit`` record that refers to it, and a metadata
record to the response it describes. :meth:`RotatingWarcWriter.recall` seeds that memory from
earlier files (:func:`newscrawl.warc.reader.last_captures`), in the writer thread. The queue holds
at most ``queue_size`` (2,000) records waiting: when the disk cannot keep up, the crawl waits
rather than records being lost.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from newscrawl.warc.records import (
    DEFAULT_LEVEL,
    Exchange,
    exchange_records,
    metadata_record,
    warc_date,
    warcinfo_record,
)

logger = logging.getLogger(__name__)

#: Default file size limit (bytes): 1 GB, as Heritrix and CC-NEWS files.
DEFAULT_MAX_BYTES = 1_000_000_000
#: Default file age limit (seconds).
DEFAULT_MAX_AGE = 3600.0
_STOP = object()


def warc_filename(now: datetime, serial: int, host: str) -> str:
    """``newscrawl-<UTC time>-<serial>-<host>.warc.gz`` (time to the microsecond).

    >>> warc_filename(datetime(2026, 12, 4, 18, 0, 1, 5, tzinfo=timezone.utc), 3, "w1")
    'newscrawl-20261204180001000005-00003-w1.warc.gz'
    """
    safe = "".join(c if c.isalnum() or c in ".-_" else "_" for c in host) or "host"
    return f"newscrawl-{now.astimezone(timezone.utc):%Y%m%d%H%M%S%f}-{serial:05d}-{safe}.warc.gz"


class RotatingWarcWriter:
    """WARC files in ``directory`` (see the module docstring).

    ``info`` is added to each file's ``warcinfo`` record (field → text); ``level`` is the
    gzip level of the records (0-9). ``clock`` returns the
    time in seconds (epoch); ``threaded=False`` writes in the caller's thread (tests, import
    tools). Counters: ``records``, ``files``, ``bytes`` (written), ``errors`` (records lost to an
    ``OSError``, each logged).

    Raises:
        OSError: ``directory`` cannot be created.
        ValueError: ``level`` is not 0-9.
    """

    def __init__(self, directory: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_age: float = DEFAULT_MAX_AGE, host: str | None = None,
                 info: dict[str, str] | None = None, clock: Callable[[], float] = time.time,
                 threaded: bool = True, queue_size: int = 2_000,
                 level: int = DEFAULT_LEVEL) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if not 0 <= int(level) <= 9:
            raise ValueError(f"gzip level must be 0-9, got {level!r}")
        self.max_bytes = int(max_bytes)
        self.max_age = float(max_age)
        self.host = host or socket.gethostname()
        self.info = dict(info or {})
        self.clock = clock
        self.level = int(level)
        self.records = self.files = self.bytes = self.errors = 0
        #: CPU seconds the writer thread used (set when it ends)
        self.thread_cpu = 0.0
        #: URL → (response record id, URI, WARC-Date) of its last full capture
        self.last_capture: dict[str, tuple[str, str, str]] = {}
        #: closed files, in the order they were closed
        self.closed: list[Path] = []
        self._serial = 0
        self._fd: int | None = None
        self._path: Path | None = None
        self._size = 0
        self._opened_at = 0.0
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name="newscrawl-warc", daemon=True)
            self._thread.start()

    # --- caller side ------------------------------------------------------------------------
    def recall(self, earlier: Callable[[], dict[str, tuple[str, str, str]]]) -> None:
        """Take the last full captures of earlier files (URL → (record id, URI, WARC-Date)),
        read by ``earlier()`` in the writer thread before any record that follows (a large
        folder delays the records, queued, not the caller)."""

        def job() -> bytes:
            captures = earlier()
            self.last_capture.update({url: c for url, c in captures.items()
                                      if url not in self.last_capture})
            return b""

        self._submit(job, 0)

    def write_exchange(self, exchange: Exchange) -> str:
        """Archive ``exchange`` (request + response or revisit); returns its response (or
        revisit) record id. A full capture (status other than 304, method other than HEAD)
        becomes the URL's last capture. The capture memory is read and updated in the writer
        thread, in the order records are handed over."""

        def job() -> bytes:
            refers_to = None
            if exchange.is_revisit:
                refers_to = self.last_capture.get(exchange.url)
            else:
                self.last_capture[exchange.url] = (exchange.response_id, exchange.url,
                                                   warc_date(exchange.date))
            return exchange_records(exchange, refers_to=refers_to, level=self.level)

        self._submit(job, 2)
        return exchange.response_id

    def write_metadata(self, url: str, data: dict[str, Any], *, kind: str | None = None,
                       when: datetime | None = None) -> None:
        """Archive a ``metadata`` record of page ``url`` referring to its last capture."""
        date = when or datetime.fromtimestamp(self.clock(), timezone.utc)

        def job() -> bytes:
            capture = self.last_capture.get(url)
            return metadata_record(url, capture[0] if capture else None, data, date=date,
                                   kind=kind, level=self.level)

        self._submit(job)

    def close(self, timeout: float | None = 60.0) -> list[Path]:
        """Write what is queued, close and rename the open file; returns the closed files."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.error("WARC writer did not finish in %s s; %s left open", timeout, self._path)
                return list(self.closed)
            self._thread = None
        with self._lock:
            self._close_file()
        return list(self.closed)

    @property
    def open_path(self) -> Path | None:
        """The file being written (``….warc.gz.open``), None between files."""
        return self._path

    def _submit(self, make: Callable[[], bytes], records: int = 1) -> None:
        if self._thread is None:
            self._write(make, records)
        else:
            self._queue.put((make, records))

    # --- writer thread ----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=1.0)
            except queue.Empty:
                with self._lock:
                    if self._fd is not None and self.clock() - self._opened_at >= self.max_age:
                        self._close_file()
                continue
            if job is _STOP:
                self.thread_cpu = time.thread_time()
                return
            self._write(*job)

    def _write(self, make: Callable[[], bytes], records: int) -> None:
        try:
            data = make()
        except Exception:  # noqa: BLE001 - one bad record is logged and counted, never the end
            self.errors += records
            logger.exception("WARC record could not be built; skipped")
            return
        if not data:
            return
        with self._lock:
            try:
                if self._fd is not None and (
                        self._size + len(data) > self.max_bytes
                        or self.clock() - self._opened_at >= self.max_age):
                    self._close_file()
                if self._fd is None:
                    self._open_file()
                self._append(data)
                self.records += records
            except OSError as exc:
                self.errors += records
                logger.error("WARC record not written to %s: %s; the file is left as .open "
                             "and the next record begins a new file", self._path, exc)
                self._abandon_file()

    def _append(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self._size += len(data)
        self.bytes += len(data)

    def _open_file(self) -> None:
        while True:
            self._serial += 1
            now = datetime.fromtimestamp(self.clock(), timezone.utc)
            name = warc_filename(now, self._serial, self.host)
            path = self.directory / (name + ".open")
            if (self.directory / name).exists():
                continue
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                             0o644)
            except FileExistsError:
                continue
            break
        self._fd, self._path, self._size, self._opened_at = fd, path, 0, self.clock()
        self.files += 1
        info = {"software": "newscrawl (warcio)", "format": "WARC File Format 1.1",
                "conformsTo": "https://iso.org/standard/68004.html", "hostname": self.host,
                **self.info}
        self._append(warcinfo_record(name, info, date=now, level=self.level))
        self.records += 1

    def _abandon_file(self) -> None:
        """Stop writing to a file a write failed on (it keeps its ``.open`` name: its last
        record may be cut short, which readers count and skip)."""
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd, self._path = None, None

    def _close_file(self) -> None:
        if self._fd is None or self._path is None:
            return
        os.close(self._fd)
        final = self._path.with_name(self._path.name.removesuffix(".open"))
        os.replace(self._path, final)
        self.closed.append(final)
        self._fd, self._path = None, None

