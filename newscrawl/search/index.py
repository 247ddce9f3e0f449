"""The full-text index beside the store: SQLite FTS5 (standard library ``sqlite3``) in one file.

Layout (file ``<data folder>/search/<target>.sqlite``, :func:`index_path`):

* ``docs`` — one row per article: ``fp`` (unique), ``url``, ``site``, ``title``, ``time``
  (published, else first stored; epoch seconds), ``first_seen``, ``weight``, ``story_id``,
  ``digest`` (SHA-1 of the indexed title and text: an unchanged article is not re-indexed);
* ``fts`` — FTS5 table (rowid = ``docs.id``) of the title and text as tokens of
  :func:`newscrawl.search.query.tokenize`, joined by spaces; FTS5's ``unicode61`` tokenizer then
  only splits on those spaces, so the index and the alert matcher see the same tokens;
* ``meta`` — ``schema`` and ``synced_until`` (epoch seconds of the store's clock: the latest
  ``last_seen`` a catch-up read; the next catch-up starts :data:`SYNC_MARGIN` before it).

Ranking: BM25 (Robertson & Zaragoza 2009; SQLite's ``bm25()``, https://sqlite.org/fts5.html
§5.1.1) with the title weighted 3 and the text 1, ties by NewsPageRank weight then newest.

The file is opened in WAL mode, so a ``newscrawl search`` reads while a crawl writes. A file that
SQLite finds damaged (``DatabaseError``) is moved aside (``*.damaged``) and a new one is started,
:attr:`SearchIndex.created` says it must be filled (:func:`sync` from the store). Writes happen
on one thread at a time (the crawl's writer thread, or the command); a lock guards the
connection against any other use.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newscrawl.search.query import parse, to_fts5, tokenize

logger = logging.getLogger(__name__)

SCHEMA = 1
#: Article fields the index reads from a stored document (``fetched_at`` stands in for
#: ``first_seen`` in a crawl's item, which the store has not stamped yet).
INDEX_FIELDS = ("fp", "url", "site", "title", "text", "published", "first_seen", "last_seen",
                "weight", "story_id", "fetched_at")
#: Seconds subtracted from ``synced_until`` when catching up (clocks of several writers).
SYNC_MARGIN = 300.0

_DDL = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS docs(id INTEGER PRIMARY KEY, fp TEXT NOT NULL UNIQUE, url TEXT,"
    " site TEXT, title TEXT, time REAL, first_seen REAL, weight REAL, story_id TEXT,"
    " digest TEXT)",
    "CREATE INDEX IF NOT EXISTS docs_time ON docs(time)",
    "CREATE INDEX IF NOT EXISTS docs_site_time ON docs(site, time)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, body,"
    " tokenize = 'unicode61 remove_diacritics 0')",
)


#: Refresh an indexed article's metadata: ``first_seen`` keeps the earliest value ever given,
#: ``time`` is the publication time, else that ``first_seen``; the weight is the newest.
_UPDATE_META = ("UPDATE docs SET url=?1, site=?2, title=?3,"
                " first_seen=CASE WHEN first_seen IS NULL THEN ?5"
                " ELSE min(first_seen, coalesce(?5, first_seen)) END,"
                " time=coalesce(?4, CASE WHEN first_seen IS NULL THEN ?5"
                " ELSE min(first_seen, coalesce(?5, first_seen)) END),"
                " weight=coalesce(?6, weight), story_id=coalesce(?7, story_id) WHERE id=?8")


def index_path(data_dir: str | Path, target: str) -> Path:
    """The index file of the database ``target`` (:func:`newscrawl.store.spill_target`'s name,
    ``embedded-newscrawl`` for the embedded store) in ``data_dir``."""
    return Path(data_dir) / "search" / f"{target}.sqlite"


def epoch(value: Any) -> float | None:
    """Epoch seconds of a datetime (naive = UTC), an ISO 8601 string or a number; None when
    there is none or it cannot be read."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.timestamp()
    return None


def digest(title: str, text: str) -> str:
    """SHA-1 hex of the indexed title and text (a change detector, not a security device)."""
    return hashlib.sha1(f"{title}\x00{text}".encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class Hit:
    """One search result. ``time``, ``first_seen``: epoch seconds or None; ``score``: BM25
    (lower is better, as SQLite's ``bm25()`` returns it)."""
    fp: str
    url: str
    site: str
    title: str
    time: float | None
    first_seen: float | None
    weight: float | None
    story_id: str | None
    score: float


class SearchIndex:
    """The FTS5 index of one store (see the module docstring).

    Args:
        path: the index file (its folder is created).

    Attributes:
        created: True when the file was new or replaced because it was damaged — fill it with
            :func:`sync` over every article.

    Raises:
        OSError: the folder cannot be created; sqlite3.Error: the file cannot be opened even
            after a damaged one was moved aside.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        existed = self.path.exists() and self.path.stat().st_size > 0
        try:
            self.db = self._connect()
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(self.path.name + f".damaged-{int(time.time())}")
            logger.warning("Search index %s is damaged (%s): moved to %s, rebuilding",
                           self.path, exc, aside)
            for suffix in ("-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            self.path.rename(aside)
            existed = False
            self.db = self._connect()
        self.created = not existed or self.count() == 0 and self.synced_until() is None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0,
                             isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            for statement in _DDL:
                db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES('schema', ?)", (str(SCHEMA),))
                # the persistent rank function: BM25 with the title weighted 3, the text 1
                db.execute("INSERT INTO fts(fts, rank) VALUES('rank', 'bm25(3.0, 1.0)')")
            db.execute("SELECT count(*) FROM fts WHERE fts MATCH 'x'").fetchone()
            db.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------------

    def upsert(self, docs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        """Index article documents (store fields, :data:`INDEX_FIELDS`); one transaction.

        A document without ``fp`` is skipped (counted ``skipped``); one whose title and text
        are unchanged only gets its metadata (weight, story) refreshed.

        Returns:
            ``{"added": n, "changed": n, "unchanged": n, "skipped": n}``; ``changed_fps`` is
            not returned (see :meth:`upsert_changes` for the fingerprints).
        """
        counts, _ = self.upsert_changes(docs)
        return counts

    def upsert_changes(self, docs: Iterable[Mapping[str, Any]]
                       ) -> tuple[dict[str, int], list[str]]:
        """:meth:`upsert`, also returning the fingerprints whose text was added or changed."""
        counts = {"added": 0, "changed": 0, "unchanged": 0, "skipped": 0}
        changed: list[str] = []
        with self._lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                for doc in docs:
                    fp = doc.get("fp")
                    if not fp or not isinstance(fp, str):
                        counts["skipped"] += 1
                        continue
                    title = str(doc.get("title") or "")
                    text = str(doc.get("text") or "")
                    new_digest = digest(title, text)
                    # a crawl's item has no first_seen yet (the store sets it from fetched_at)
                    first = epoch(doc.get("first_seen")) or epoch(doc.get("fetched_at"))
                    meta = (str(doc.get("url") or ""), str(doc.get("site") or ""), title,
                            epoch(doc.get("published")), first, _float(doc.get("weight")),
                            doc.get("story_id"))
                    row = db.execute("SELECT id, digest FROM docs WHERE fp=?", (fp,)).fetchone()
                    if row is not None and row[1] == new_digest:
                        db.execute(_UPDATE_META, (*meta, row[0]))
                        counts["unchanged"] += 1
                        continue
                    body = (" ".join(tokenize(title)), " ".join(tokenize(text)))
                    if row is None:
                        cur = db.execute("INSERT INTO docs(url, site, title, time, first_seen,"
                                         " weight, story_id, fp, digest)"
                                         " VALUES(?1, ?2, ?3, coalesce(?4, ?5), ?5, ?6, ?7, ?8, ?9)",
                                         (*meta, fp, new_digest))
                        rowid = cur.lastrowid
                        counts["added"] += 1
                    else:
                        rowid = row[0]
                        db.execute("DELETE FROM fts WHERE rowid=?", (rowid,))
                        db.execute(_UPDATE_META, (*meta, rowid))
                        db.execute("UPDATE docs SET digest=? WHERE id=?", (new_digest, rowid))
                        counts["changed"] += 1
                    db.execute("INSERT INTO fts(rowid, title, body) VALUES(?,?,?)",
                               (rowid, *body))
                    changed.append(fp)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return counts, changed

    def set_synced_until(self, when: float) -> None:
        """Record that every article stored with ``last_seen`` before ``when`` (epoch s) is in."""
        with self._lock:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES('synced_until', ?)",
                            (repr(float(when)),))

    def synced_until(self) -> float | None:
        with self._lock:
            row = self.db.execute("SELECT value FROM meta WHERE key='synced_until'").fetchone()
        return float(row[0]) if row else None

    def clear(self) -> None:
        """Remove every document (before a rebuild)."""
        with self._lock:
            self.db.execute("DELETE FROM docs")
            self.db.execute("DELETE FROM fts")
            self.db.execute("DELETE FROM meta WHERE key='synced_until'")

    # -- reads ----------------------------------------------------------------------------------

    def count(self) -> int:
        with self._lock:
            return int(self.db.execute("SELECT count(*) FROM docs").fetchone()[0])

    def count_matches(self, query: str, *, site: str | None = None,
                      since: float | None = None, until: float | None = None) -> int:
        """How many articles match ``query`` (filters as :meth:`search`; a spike alert's
        counts). Raises QueryError."""
        where: list[str] = ["fts MATCH ?"]
        args: list[Any] = [to_fts5(parse(query))]
        for clause, value in (("d.site = ?", site), ("d.time >= ?", since), ("d.time < ?", until)):
            if value is not None and value != "":
                where.append(clause)
                args.append(value)
        sql = (f"SELECT count(*) FROM fts JOIN docs d ON d.id = fts.rowid"
               f" WHERE {' AND '.join(where)}")
        with self._lock:
            return int(self.db.execute(sql, args).fetchone()[0])

    def search(self, query: str, *, site: str | None = None, since: float | None = None,
               until: float | None = None, limit: int = 20,
               fps: Sequence[str] | None = None) -> list[Hit]:
        """Articles matching ``query`` (:mod:`newscrawl.search.query`), best first.

        Args:
            site: only this registered domain; since, until: only articles whose time
                (published, else first stored; epoch s) is in ``[since, until)``;
            limit: at most this many; fps: only these articles (an alert's new batch).

        Raises:
            QueryError: the query cannot be searched (a ValueError).
        """
        match = to_fts5(parse(query))
        where = ["fts MATCH ?"]
        args: list[Any] = [match]
        if site:
            where.append("d.site = ?")
            args.append(site)
        if since is not None:
            where.append("d.time >= ?")
            args.append(float(since))
        if until is not None:
            where.append("d.time < ?")
            args.append(float(until))
        if fps is not None:
            if not fps:
                return []
            where.append(f"d.fp IN ({','.join('?' * len(fps))})")
            args.extend(fps)
        if len(where) == 1:
            # No filter: FTS5 ranks and cuts by itself (ORDER BY rank LIMIT: no join, no sort of
            # every match in the SQL layer), then the few rows are joined.
            sql = ("SELECT d.fp, d.url, d.site, d.title, d.time, d.first_seen, d.weight,"
                   " d.story_id, m.rank FROM (SELECT rowid, rank FROM fts WHERE fts MATCH ?"
                   " ORDER BY rank LIMIT ?) AS m JOIN docs d ON d.id = m.rowid"
                   " ORDER BY m.rank, d.weight DESC, d.time DESC")
        else:
            sql = ("SELECT d.fp, d.url, d.site, d.title, d.time, d.first_seen, d.weight,"
                   " d.story_id, fts.rank FROM fts JOIN docs d ON d.id = fts.rowid"
                   f" WHERE {' AND '.join(where)}"
                   " ORDER BY fts.rank, d.weight DESC, d.time DESC LIMIT ?")
        args.append(max(int(limit), 0))
        with self._lock:
            rows = self.db.execute(sql, args).fetchall()
        return [Hit(*row) for row in rows]


def _float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def sync(index: SearchIndex, docs: Iterable[Mapping[str, Any]], *, batch: int = 500,
         on_changed: Callable[[list[str]], None] | None = None) -> dict[str, int]:
    """Catch the index up with stored articles ``docs`` (the store's articles with
    ``last_seen`` at or after :func:`sync_since`), in chunks of ``batch``; ``on_changed`` gets
    the fingerprints of each chunk whose title or text was added or changed (the alerts).

    At the end ``synced_until`` becomes the latest ``last_seen`` read (epoch s; kept when no
    document had one). It is the store's own time, the crawl's run clock that wrote
    ``last_seen``, not this machine's: a crawl with a simulated clock (``-a now=``) is caught
    up alike. An interrupted sync records nothing, so the next one starts where the last one
    finished.

    Returns the summed :meth:`SearchIndex.upsert` counts."""
    totals = {"added": 0, "changed": 0, "unchanged": 0, "skipped": 0}
    chunk: list[Mapping[str, Any]] = []
    latest: float | None = None

    def flush() -> None:
        counts, changed = index.upsert_changes(chunk)
        for k, v in counts.items():
            totals[k] += v
        if on_changed is not None and changed:
            on_changed(changed)

    for doc in docs:
        seen = epoch(doc.get("last_seen"))
        if seen is not None and (latest is None or seen > latest):
            latest = seen
        chunk.append(doc)
        if len(chunk) >= batch:
            flush()
            chunk = []
    if chunk:
        flush()
    before = index.synced_until()
    if latest is not None and (before is None or latest > before):
        index.set_synced_until(latest)
    elif before is None:
        index.set_synced_until(0.0)
    return totals


def sync_since(index: SearchIndex) -> float | None:
    """Epoch seconds of ``last_seen`` from which a catch-up sync must read (None: everything,
    for a new or rebuilt index)."""
    if index.created:
        return None
    until = index.synced_until()
    return None if until is None else until - SYNC_MARGIN
