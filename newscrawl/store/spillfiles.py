"""Spill files: page documents the database could not take, kept on disk and replayed later.

When :meth:`~newscrawl.store.NewsStore.write_pages` raises
:class:`~newscrawl.store.StoreUnavailable`, the caller writes ``exc.docs`` with :func:`spill`
and, once the server answers again, calls :meth:`~newscrawl.store.NewsStore.replay_spill`.
Spill files are JSON lines in MongoDB relaxed Extended JSON (datetimes as
``{"$date": "2024-10-01T08:00:00Z"}``); :func:`spill_target` names the database a file belongs to,
so a spill is replayed only into the store it was meant for.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bson import json_util
from bson.json_util import JSONMode, JSONOptions

from newscrawl.store.base import Doc, StoreUnavailable
from newscrawl.store.pages import COUNT_KEYS

logger = logging.getLogger(__name__)

_SPILL_JSON = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=True, tzinfo=dt.timezone.utc)

#: ``write_pages(batch, retries=..., backoff=...)`` as the replay calls it.
PageWriter = Callable[..., dict[str, int]]


def spill_target(uri: str, database: str, *, embedded: bool) -> str:
    """Name the database a spill file belongs to, for its file name (``spill-<spider>-<target>``).

    A spill is replayed only into the database it was meant for: items spilled while a real
    server was away must not land in the embedded store of the next run (or the reverse).

    Args:
        uri: the MongoDB URI the crawl used (credentials are not part of the name).
        database: the database name.
        embedded: True for the embedded server of the data folder (its port changes per start).

    Returns:
        ``embedded-<database>``, or ``mongo-<10 hex digits>`` (SHA-1 of the servers and database).
    """
    if embedded:
        return f"embedded-{re.sub(r'[^A-Za-z0-9_.-]', '_', database)}"
    try:
        from pymongo.uri_parser import parse_uri

        nodes = ",".join(f"{h}:{p}" for h, p in sorted(parse_uri(uri)["nodelist"]))
    except Exception:  # noqa: BLE001 - an unparsable URI is its own name
        nodes = uri
    digest = hashlib.sha1(f"{nodes}/{database}".encode()).hexdigest()[:10]
    return f"mongo-{digest}"


def spill(docs: Iterable[Mapping[str, Any]], path: str | Path) -> int:
    """Append ``docs`` to the JSON-lines file ``path`` (created with its folders) and fsync it.

    Datetimes are written as relaxed Extended JSON ``{"$date": "<ISO 8601, UTC>"}`` (millisecond
    precision, as in BSON) and read back tz-aware by :func:`load_spill`.

    Returns:
        The number of documents written.

    Raises:
        OSError: the file cannot be written.
    """
    path = Path(path)
    lines = [
        json_util.dumps(dict(doc), json_options=_SPILL_JSON, ensure_ascii=False) for doc in docs
    ]
    if not lines:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    logger.info("Spilled %d document(s) to %s", len(lines), path)
    return len(lines)


def load_spill(path: str | Path) -> list[Doc]:
    """Read a spill file written by :func:`spill`; unreadable lines are logged and skipped.

    Raises:
        OSError: the file cannot be read (``FileNotFoundError`` when missing).
    """
    docs: list[Doc] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                doc = json_util.loads(line, json_options=_SPILL_JSON)
            except ValueError as exc:  # a torn last line after a crash, typically
                logger.warning("Skipping unreadable line %d of %s: %s", number, path, exc)
                continue
            if isinstance(doc, dict):
                docs.append(doc)
    return docs


def replay_spill(
    write_pages: PageWriter,
    path: str | Path,
    *,
    batch_size: int = 500,
    retries: int = 3,
    backoff: float = 0.5,
) -> dict[str, int]:
    """Write a spill file back through ``write_pages`` and remove it (see
    :meth:`newscrawl.store.NewsStore.replay_spill`)."""
    path = Path(path)
    totals = dict.fromkeys(COUNT_KEYS, 0)
    sources = sorted(path.parent.glob(glob.escape(path.name) + ".replay-*"))
    if path.exists():
        work = path.with_name(f"{path.name}.replay-{os.getpid()}")
        if work.exists():  # our own leftover: append instead of clobbering it
            spill(load_spill(path), work)
            path.unlink()
        else:
            os.replace(path, work)
        if work not in sources:
            sources.append(work)
    size = max(batch_size, 1)
    for source in sources:
        try:
            docs: Sequence[Doc] = load_spill(source)
        except FileNotFoundError:  # replayed meanwhile by another process
            continue
        for start in range(0, len(docs), size):
            batch = docs[start : start + size]
            try:
                counts = write_pages(batch, retries=retries, backoff=backoff)
            except StoreUnavailable as exc:
                spill([*exc.docs, *docs[start + len(batch) :]], path)
                with contextlib.suppress(FileNotFoundError):
                    source.unlink()
                raise
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
        with contextlib.suppress(FileNotFoundError):
            source.unlink()
        logger.info("Replayed %d document(s) from %s", len(docs), source)
    return totals


def replay_state_spill(store: Any, path: str | Path) -> dict[str, int]:
    """Write a state spill file back and remove it: crawl-state records and host policies a run
    could not write at its end (:meth:`newscrawl.store.writer.BufferedWriter.write_state` with
    ``final=True``; lines ``{"collection": "pages"|"hosts", "doc": {...}}``).

    Records are replaced where the stored one is not newer
    (:meth:`~newscrawl.store.NewsStore.write_state`, idempotent), host policies replaced.

    Returns:
        ``{"pages": records written, "hosts": policies}``; zeros when there is no file.

    Raises:
        StoreUnavailable: the server went away (the file stays for the next start).
        OSError: the file cannot be read or removed.
    """
    path = Path(path)
    if not path.exists():
        return {"pages": 0, "hosts": 0}
    lines = load_spill(path)
    pages = {d["doc"]["_id"]: d["doc"] for d in lines
             if d.get("collection") == "pages" and isinstance(d.get("doc"), dict)}
    hosts = {d["doc"]["_id"]: d["doc"] for d in lines
             if d.get("collection") == "hosts" and isinstance(d.get("doc"), dict)}
    written = store.write_state([], list(pages.values())) if pages else 0
    if hosts:
        store.write_hosts(list(hosts.values()))
    path.unlink()
    logger.info("Replayed %d crawl-state record(s) and %d host policy(ies) from %s", written,
                len(hosts), path)
    return {"pages": written, "hosts": len(hosts)}
