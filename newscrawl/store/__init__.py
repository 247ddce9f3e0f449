"""The one module that talks to MongoDB: pages, links, weights, search.

Collections (names in :mod:`newscrawl.defaults`), one document per URL fingerprint ``fp``:

* ``articles`` — content pages (items with ``kind == "article"``);
* ``nodes`` — entry and channel pages (``kind == "node"``), without their ``links`` list;
* ``links`` — one document per (``source_fp``, ``target_fp``) edge of the link graph, taken from
  the ``links`` list of node items.

Plus ``schedule`` — one document per site (``_id`` = registered domain): the run state of
``newscrawl schedule`` (:meth:`NewsStore.load_schedule`, :meth:`NewsStore.save_schedule`).

Write semantics (:meth:`NewsStore.write_pages`, an upsert per document): ``first_seen`` is set
once (``$setOnInsert``); ``last_seen``, ``fetched_at`` and every other item field are overwritten
(``$set``); ``weight`` keeps the maximum ever written (``$max``: over runs and over in-links, seed
004 §3 "multiple in-links: keep the maximum"). :meth:`update_weights` overwrites weights (a
recomputation). All writes are idempotent, so a batch can be retried or replayed from a spill
file without double counting. An upsert that creates a document costs ~3x an insert on
SecantusDB, and most documents of a first crawl are new, so each collection's batch is first sent
as unordered inserts of the very documents those upserts would create (same fields, same field
order); the documents that exist already (duplicate key, code 11000) or fail otherwise are then
sent as the upserts. Documents the insert could store differently (top-level field names with
``.``, ``$`` or only digits) and repeats of one key within a batch go to the upserts directly.
When a collection's previous batch was mostly known documents (re-crawled channel pages and their
links), the next batch is sent as upserts only (:data:`INSERT_FIRST_MIN_NEW`).

Server compatibility. The embedded server is SecantusDB (see :mod:`newscrawl.embedded`).
Checked against SecantusDB 0.7.0b3 (``buildInfo`` reports 8.2.11) with pymongo 4.20:

* supported: unordered ``bulk_write`` of ``UpdateOne(..., upsert=True)``; the update operators
  ``$set``, ``$setOnInsert``, ``$max`` (also on a missing field and on datetimes), ``$inc`` and
  ``$addToSet`` in upserts, with MongoDB's semantics (the same path in ``$set`` and
  ``$setOnInsert`` is refused with code 40, as by mongod); unique and compound indexes
  (``DuplicateKeyError``, code 11000); ``aggregate`` with ``$match``/``$group``; ``$regex`` with
  ``$options: "i"`` (also for non-ASCII letters: ``BÖRSE`` finds ``Börse``); ``tz_aware``
  datetimes; write concern ``j: true`` (it flushes the server's log: without it a server killed
  within ~50 ms of an acknowledged write loses that write, see ``journal`` below).
* not supported: text indexes — ``create_index`` with ``"text"`` fails with code 67
  ``CannotCreateIndex`` ("text indexes are not supported by SecantusDB") and a ``$text`` query
  fails with code 2 ``BadValue``. :meth:`NewsStore.ensure_indexes` then records
  ``text_index = False`` and :meth:`NewsStore.search` uses a case-insensitive regex instead.
* it advertises itself as the primary of a one-node replica set named ``secantus``, so pymongo
  reports a ``ReplicaSetWithPrimary`` topology; plain ``mongodb://127.0.0.1:PORT/`` URIs work.
  ``buildInfo`` carries a ``secantusVersion`` field, which tells it from a mongod.

The text index on a real MongoDB uses ``default_language="none"`` (no stemming, no stop words:
the corpus mixes languages) and ``language_override="text_language"``, because our items carry a
``language`` field with ISO codes such as ``zh`` that MongoDB's text index would otherwise read
as a per-document language and refuse. MongoDB tokenises on spaces and punctuation, so queries
containing CJK characters use the regex search even when a text index exists.

Failures. pymongo reports an unreachable server as ``AutoReconnect`` /
``ServerSelectionTimeoutError`` (both ``ConnectionFailure``). :meth:`NewsStore.write_pages`
retries a bounded number of times with exponential backoff and then raises
:class:`StoreUnavailable` carrying the unwritten documents; the caller writes them to a spill
file with :func:`spill` and later calls :meth:`NewsStore.replay_spill`. Spill files are JSON
lines in MongoDB relaxed Extended JSON (datetimes as ``{"$date": "2024-10-01T08:00:00Z"}``).

Blocking: every method here blocks on the network; Scrapy components call them off the reactor
thread (``deferToThread``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import hashlib
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bson import json_util
from bson.errors import InvalidDocument
from bson.json_util import JSONMode, JSONOptions
from pymongo import (
    ASCENDING,
    DESCENDING,
    TEXT,
    InsertOne,
    MongoClient,
    ReplaceOne,
    UpdateOne,
    WriteConcern,
)
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import AutoReconnect, BulkWriteError, ConnectionFailure, OperationFailure

from newscrawl import defaults
from newscrawl.algorithms.changedetect import version_diff

logger = logging.getLogger(__name__)

ARTICLES = defaults.ARTICLES_COLLECTION
NODES = defaults.NODES_COLLECTION
LINKS = defaults.LINKS_COLLECTION
SCHEDULE = defaults.SCHEDULE_COLLECTION
PAGES = defaults.PAGES_COLLECTION
HOSTS = defaults.HOSTS_COLLECTION
VERSIONS = defaults.VERSIONS_COLLECTION
STAGING = defaults.STAGING_COLLECTION

#: MongoDB error code of ``CannotCreateIndex`` (SecantusDB's answer to a text index).
CANNOT_CREATE_INDEX = 67
#: Server error codes meaning "shutting down / not primary right now": retried like
#: connection failures.
_TRANSIENT_CODES = frozenset({91, 189, 10107, 11600, 11602, 13435, 13436})
#: Page fields never copied into ``$set`` (they are the key, go elsewhere, or have own rules).
_PAGE_RESERVED = frozenset({"_id", "fp", "links", "weight", "first_seen", "last_seen"})
_LINK_RESERVED = frozenset({"_id", "source_fp", "target_fp", "first_seen", "last_seen"})
#: MongoDB error code of a duplicate key (unique index).
DUPLICATE_KEY = 11000
#: write_pages inserts first (then upserts the documents that exist) while at least this share
#: of a collection's previous batch was new, else it upserts: on SecantusDB 0.7 an insert costs
#: ~0.21 ms, a failed insert and its upsert ~0.46 ms, an upsert ~0.68 ms creating a document and
#: ~0.37 ms updating one (server CPU per document), so inserting first pays from ~16 % new.
INSERT_FIRST_MIN_NEW = 0.2
#: Characters MongoDB's text index does not split into words (Han, kana, Hangul).
_CJK_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: Search terms: a "quoted phrase" or a run of non-space characters.
_SEARCH_TERM = re.compile(r'"([^"]+)"|(\S+)')
#: Filter and update document of one upsert.
_Spec = tuple[dict[str, Any], dict[str, Any]]
_T = TypeVar("_T")
_SPILL_JSON = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=True, tzinfo=dt.timezone.utc)

#: Keys of the counts returned by :meth:`NewsStore.write_pages`.
COUNT_KEYS = ("articles", "nodes", "links", "new_articles", "new_nodes", "new_links", "errors")

_text_fallback_logged = False


class StoreUnavailable(Exception):
    """The database stayed unreachable through every retry.

    Attributes:
        docs: the page documents (as given to :meth:`NewsStore.write_pages`) that were not
            written; spill them with :func:`spill`. Empty for :meth:`NewsStore.update_weights`.
    """

    def __init__(self, message: str, docs: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.docs: list[Mapping[str, Any]] = list(docs)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, ConnectionFailure):
        return True
    if isinstance(exc, OperationFailure) and not isinstance(exc, BulkWriteError):
        return exc.code in _TRANSIENT_CODES or exc.has_error_label("RetryableWriteError")
    return False


def _search_terms(query: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _SEARCH_TERM.finditer(query) if m.group(0) != '""']


def _raise_if_interrupted(name: str, write_errors: list[dict[str, Any]], exc: Exception) -> None:
    """Raise ``AutoReconnect`` when the server refused writes because it is shutting down or
    stepping down: the batch is then retried."""
    if any(err.get("code") in _TRANSIENT_CODES for err in write_errors):
        raise AutoReconnect(
            f"{name}: the server interrupted the bulk write ({write_errors[0].get('errmsg')})"
        ) from exc


def _stored_as_is(name: str) -> bool:
    """True when a top-level field ``name`` means the same in an insert as in ``$set``: not a
    dotted path, no operator, not numeric (numeric names are ordered numerically by mongod)."""
    return bool(name) and "." not in name and name[0] != "$" and not name.isdigit()


def _upserted_doc(
    filt: Mapping[str, Any], update: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The document (without ``_id``) that the upsert ``(filt, update)`` creates when nothing
    matches ``filt``, or None when an insert might store something else.

    ``update`` uses ``$set``, ``$setOnInsert`` and ``$max`` only (``$max`` on a missing field
    sets it). The equality fields of the filter come first, then the update's fields in
    lexicographic order, as MongoDB 5+ and SecantusDB order the fields of an upserted document.
    """
    fields: dict[str, Any] = {}
    for op, values in update.items():
        if op not in ("$set", "$setOnInsert", "$max"):
            return None
        fields.update(values)
    if len(fields) != sum(len(values) for values in update.values()):
        return None  # a path in two operators: the server refuses the upsert (code 40)
    if not all(isinstance(v, str) for v in filt.values()) or any(k in fields for k in filt):
        return None
    if not all(_stored_as_is(k) for k in fields):
        return None
    doc = dict(filt)
    for k in sorted(fields):
        doc[k] = fields[k]
    return doc


# --- spill files --------------------------------------------------------------------------------


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


def load_spill(path: str | Path) -> list[dict[str, Any]]:
    """Read a spill file written by :func:`spill`; unreadable lines are logged and skipped.

    Raises:
        OSError: the file cannot be read (``FileNotFoundError`` when missing).
    """
    docs: list[dict[str, Any]] = []
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


# --- the store ----------------------------------------------------------------------------------


class NewsStore:
    """Pages, links and weights of the crawl in one MongoDB database.

    Args:
        db: the database (its client must use ``tz_aware=True``).
        client: the client to close in :meth:`close` (given by :meth:`connect`).
        text_language: ``default_language`` of the text index on a real MongoDB.
        journal: write with ``j: true`` (added to the database's write concern): a write is
            acknowledged once it is in the server's journal, so a server killed right after an
            acknowledged batch keeps it (SecantusDB otherwise flushes its log every ~50 ms,
            mongod every 100 ms). One journal flush per bulk write.

    Attributes:
        text_index: True when ``articles`` has a text index, False when the server refused one,
            None before :meth:`ensure_indexes` (then :meth:`search` looks it up).
    """

    def __init__(
        self,
        db: Database[dict[str, Any]],
        *,
        client: MongoClient[dict[str, Any]] | None = None,
        text_language: str = "none",
        journal: bool = True,
    ) -> None:
        self.db = db
        self.client = client
        self.text_language = text_language
        concern = db.write_concern
        if journal:
            concern = WriteConcern(**{**concern.document, "j": True})
        self._collections: dict[str, Collection[dict[str, Any]]] = {
            name: db.get_collection(name, write_concern=concern)
            for name in (ARTICLES, NODES, LINKS, VERSIONS, STAGING)
        }
        # Crawl state is written with the database's own write concern, not journaled: a record
        # lost with the last ~50 ms before a server crash costs one extra visit, while ``j: true``
        # makes SecantusDB flush its log per replaced record (5 ms instead of 1-2 ms).
        for name in (PAGES, HOSTS):
            self._collections[name] = db.get_collection(name)
        self.articles = self._collections[ARTICLES]
        self.nodes = self._collections[NODES]
        self.links = self._collections[LINKS]
        self.text_index: bool | None = None
        #: Share of new documents in the previous write_pages batch, per collection.
        self._new_share: dict[str, float] = {}

    @classmethod
    def connect(
        cls,
        uri: str,
        database: str = defaults.NEWSCRAWL_MONGO_DATABASE,
        *,
        timeout: float = defaults.NEWSCRAWL_MONGO_TIMEOUT,
        journal: bool = True,
    ) -> NewsStore:
        """Create a client for ``uri`` (``tz_aware=True``) and a store on ``database``.

        Args:
            timeout: server selection and connect timeout (seconds).
            journal: see the class.

        No network traffic happens here; an unreachable server shows up at the first operation
        as ``ServerSelectionTimeoutError`` after ``timeout`` seconds.

        Raises:
            pymongo.errors.ConfigurationError / ValueError: a malformed URI.
        """
        ms = max(int(timeout * 1000), 1)
        client: MongoClient[dict[str, Any]] = MongoClient(
            uri,
            tz_aware=True,
            serverSelectionTimeoutMS=ms,
            connectTimeoutMS=ms,
            appname="newscrawl",
        )
        return cls(client[database], client=client, journal=journal)

    def close(self) -> None:
        """Close the client created by :meth:`connect` (no-op for a borrowed database)."""
        if self.client is not None:
            self.client.close()

    def __enter__(self) -> NewsStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- indexes --------------------------------------------------------------------------------

    def ensure_indexes(self) -> None:
        """Create the indexes (idempotent).

        articles: unique ``fp``; ``(site, published desc)``; ``weight desc``; text on
        ``(title ×3, text)`` when the server supports it (sets :attr:`text_index`).
        nodes: unique ``fp``; ``site``. links: unique ``(source_fp, target_fp)``; ``target_fp``;
        ``(site, link_class)``.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable or refuses an index (other
                than the text index).
        """
        self.articles.create_index([("fp", ASCENDING)], unique=True)
        self.articles.create_index([("site", ASCENDING), ("published", DESCENDING)])
        self.articles.create_index([("weight", DESCENDING)])
        self._ensure_text_index()
        self.nodes.create_index([("fp", ASCENDING)], unique=True)
        self.nodes.create_index([("site", ASCENDING)])
        self.links.create_index([("source_fp", ASCENDING), ("target_fp", ASCENDING)], unique=True)
        self.links.create_index([("target_fp", ASCENDING)])
        self.links.create_index([("site", ASCENDING), ("link_class", ASCENDING)])

    def _has_text_index(self) -> bool:
        for spec in self.articles.index_information().values():
            if any(kind == TEXT for _field, kind in spec.get("key", ())):
                return True
        return False

    def _ensure_text_index(self) -> None:
        global _text_fallback_logged
        if self._has_text_index():
            self.text_index = True
            return
        try:
            self.articles.create_index(
                [("title", TEXT), ("text", TEXT)],
                name="title_text",
                weights={"title": 3, "text": 1},
                default_language=self.text_language,
                language_override="text_language",
            )
        except OperationFailure as exc:
            if exc.code != CANNOT_CREATE_INDEX and "text" not in str(exc).lower():
                raise
            self.text_index = False
            if not _text_fallback_logged:
                _text_fallback_logged = True
                logger.info(
                    "The server refuses text indexes (%s); search() uses a regex scan", exc.code
                )
            return
        self.text_index = True

    # -- writes ---------------------------------------------------------------------------------

    def write_pages(
        self,
        docs: Sequence[Mapping[str, Any]],
        *,
        retries: int = 3,
        backoff: float = 0.5,
        now: dt.datetime | None = None,
    ) -> dict[str, int]:
        """Upsert page documents by ``fp``; store node links in ``links``.

        Args:
            docs: page dicts (item fields, see :mod:`newscrawl.items`); ``kind`` is
                ``"article"`` (→ ``articles``) or ``"node"`` (→ ``nodes``, its ``links`` list of
                dicts → ``links``, keyed by ``(source_fp, target_fp)``). A doc without ``fp`` or
                with another kind is counted in ``errors`` and skipped.
            retries: further attempts after a connection failure.
            backoff: seconds before the first retry; doubled for each next one.
            now: the time used for ``first_seen``/``last_seen`` when a doc has no ``fetched_at``
                (default: the current UTC time).

        Returns:
            ``{"articles", "nodes", "links"}``: documents matched or inserted per collection;
            ``{"new_articles", "new_nodes", "new_links"}``: of which inserted; ``"errors"``:
            documents skipped or refused by the server (logged).

        Raises:
            StoreUnavailable: the server stayed unreachable; ``.docs`` holds the docs not
                (completely) written. Writes are idempotent, so replaying them is safe.
            pymongo.errors.OperationFailure: the server refused the whole batch for another
                reason than availability (authorisation, for example).
        """
        now = now or _utcnow()
        counts = dict.fromkeys(COUNT_KEYS, 0)
        specs: dict[str, list[_Spec]] = {ARTICLES: [], NODES: [], LINKS: []}
        valid: list[Mapping[str, Any]] = []
        for doc in docs:
            kind, fp = doc.get("kind"), doc.get("fp")
            if kind not in ("article", "node") or not fp:
                counts["errors"] += 1
                logger.warning(
                    "Not storing a page with kind=%r fp=%r (%s)", kind, fp, doc.get("url")
                )
                continue
            valid.append(doc)
            if kind == "article":
                specs[ARTICLES].append(self._page_spec(doc, now))
                continue
            specs[NODES].append(self._page_spec(doc, now))
            for link in doc.get("links") or ():
                spec = self._link_spec(link, doc, now)
                if spec is None:
                    counts["errors"] += 1
                else:
                    specs[LINKS].append(spec)

        done: set[str] = set()
        for name, key in ((ARTICLES, "articles"), (NODES, "nodes"), (LINKS, "links")):
            if specs[name]:
                try:
                    matched, created, errors = self._insert_or_upsert(
                        name, specs[name], retries, backoff
                    )
                except (ConnectionFailure, OperationFailure) as exc:
                    if not _is_transient(exc):
                        raise
                    unwritten = [
                        d
                        for d in valid
                        if (d["kind"] == "article" and ARTICLES not in done)
                        or (d["kind"] == "node" and not {NODES, LINKS} <= done)
                    ]
                    raise StoreUnavailable(
                        f"MongoDB unavailable after {retries + 1} attempt(s) writing {name}: "
                        f"{exc}; {len(unwritten)} page(s) not written",
                        unwritten,
                    ) from exc
                counts[key] += matched + created
                counts["new_" + key] += created
                counts["errors"] += errors
            done.add(name)
        return counts

    @staticmethod
    def _page_spec(doc: Mapping[str, Any], now: dt.datetime) -> _Spec:
        """Filter and update of the upsert that stores page ``doc``."""
        seen = doc.get("fetched_at") or now
        fields = {k: v for k, v in doc.items() if k not in _PAGE_RESERVED}
        fields["last_seen"] = doc.get("last_seen") or seen
        update: dict[str, Any] = {
            "$set": fields,
            "$setOnInsert": {"first_seen": doc.get("first_seen") or seen},
        }
        weight = doc.get("weight")
        if weight is not None and not (isinstance(weight, float) and math.isnan(weight)):
            update["$max"] = {"weight": float(weight)}
        return {"fp": doc["fp"]}, update

    @classmethod
    def _page_update(cls, doc: Mapping[str, Any], now: dt.datetime) -> UpdateOne:
        return UpdateOne(*cls._page_spec(doc, now), upsert=True)

    @staticmethod
    def _link_spec(
        link: Mapping[str, Any], node: Mapping[str, Any], now: dt.datetime
    ) -> _Spec | None:
        """Filter and update of the upsert that stores ``link`` of page ``node`` (None, logged,
        for a link without ``target_fp``)."""
        source_fp = link.get("source_fp") or node["fp"]
        target_fp = link.get("target_fp")
        if not target_fp:
            logger.warning("Not storing a link without target_fp from %s", node.get("url"))
            return None
        seen = node.get("fetched_at") or now
        fields = {k: v for k, v in link.items() if k not in _LINK_RESERVED}
        fields.setdefault("source_url", node.get("url"))
        fields.setdefault("site", node.get("site"))
        fields["last_seen"] = link.get("last_seen") or seen
        return (
            {"source_fp": source_fp, "target_fp": target_fp},
            {"$set": fields, "$setOnInsert": {"first_seen": link.get("first_seen") or seen}},
        )

    @classmethod
    def _link_update(
        cls, link: Mapping[str, Any], node: Mapping[str, Any], now: dt.datetime
    ) -> UpdateOne | None:
        spec = cls._link_spec(link, node, now)
        return None if spec is None else UpdateOne(*spec, upsert=True)

    def _insert_or_upsert(
        self, name: str, specs: list[_Spec], retries: int, backoff: float
    ) -> tuple[int, int, int]:
        """Write upserts ``specs`` in batch order, new documents as inserts (see the module
        docstring); returns (matched, created, errors) as the upserts alone would."""
        inserts: list[dict[str, Any]] = []
        positions: list[int] = []  # the spec of each insert
        upserts: list[int] = []
        keys: set[tuple[str, ...]] = set()
        if self._new_share.get(name, 1.0) < INSERT_FIRST_MIN_NEW:
            # the previous batch was mostly known documents: upsert this one directly
            upserts = list(range(len(specs)))
        else:
            for i, (filt, update) in enumerate(specs):
                key = tuple(filt.values())
                doc = None
                # Only a key's first write in the batch can create its document; the later ones
                # (and every write after one that has to be an upsert) follow as upserts, in
                # batch order.
                if all(isinstance(v, str) for v in key) and key not in keys:
                    keys.add(key)
                    doc = _upserted_doc(filt, update)
                if doc is None:
                    upserts.append(i)
                else:
                    inserts.append(doc)
                    positions.append(i)
        created = 0
        if inserts:
            created, failed = self._bulk_insert(name, inserts, retries, backoff)
            if failed:
                upserts = sorted([*upserts, *(positions[j] for j in failed)])
        matched = upserted = errors = 0
        if upserts:
            ops = [UpdateOne(*specs[i], upsert=True) for i in upserts]
            matched, upserted, errors = self._bulk(name, ops, retries, backoff)
        self._new_share[name] = (created + upserted) / len(specs)
        return matched, created + upserted, errors

    def _bulk_insert(
        self, name: str, docs: list[dict[str, Any]], retries: int, backoff: float
    ) -> tuple[int, list[int]]:
        """One unordered bulk insert with retries; returns (inserted, indexes of the docs not
        inserted: duplicate keys, refused or not encodable)."""
        collection = self._collections[name]

        def attempt() -> tuple[int, list[int]]:
            try:
                result = collection.bulk_write([InsertOne(d) for d in docs], ordered=False)
                return result.inserted_count, []
            except BulkWriteError as exc:
                details = exc.details
                write_errors = details.get("writeErrors") or []
                _raise_if_interrupted(name, write_errors, exc)
                failed = sorted({int(err["index"]) for err in write_errors})
                others = [err for err in write_errors if err.get("code") != DUPLICATE_KEY]
                if others:  # the upserts meet the same problem and report it
                    logger.debug("%d insert error(s) in %s; first: %s", len(others), name,
                                 others[0].get("errmsg"))
                return int(details.get("nInserted", 0)), failed
            except InvalidDocument:
                # BSON cannot encode a document: the upserts isolate it (_one_by_one)
                return 0, list(range(len(docs)))

        return self._retrying(name, attempt, retries, backoff)

    def _bulk(
        self, name: str, ops: list[UpdateOne], retries: int, backoff: float
    ) -> tuple[int, int, int]:
        """One unordered bulk write with retries; returns (matched, upserted, errors)."""
        collection = self._collections[name]

        def attempt() -> tuple[int, int, int]:
            try:
                result = collection.bulk_write(ops, ordered=False)
                return result.matched_count, result.upserted_count, 0
            except BulkWriteError as exc:
                details = exc.details
                write_errors = details.get("writeErrors") or []
                _raise_if_interrupted(name, write_errors, exc)
                if write_errors:
                    logger.warning(
                        "%d write error(s) in %s; first: %s",
                        len(write_errors),
                        name,
                        write_errors[0].get("errmsg"),
                    )
                return (
                    int(details.get("nMatched", 0)),
                    int(details.get("nUpserted", 0)),
                    len(write_errors),
                )
            except InvalidDocument:
                return self._one_by_one(collection, ops)

        return self._retrying(name, attempt, retries, backoff)

    @staticmethod
    def _retrying(name: str, attempt: Callable[[], _T], retries: int, backoff: float) -> _T:
        """``attempt()``, retried ``retries`` times with exponential backoff while the server is
        unavailable; the last failure is raised."""
        tries = 0
        while True:
            try:
                return attempt()
            except (ConnectionFailure, OperationFailure) as exc:
                if not _is_transient(exc) or tries >= retries:
                    raise
                delay = backoff * (2**tries)
                tries += 1
                logger.warning(
                    "MongoDB unavailable writing %s (%s); retry %d/%d in %.2f s",
                    name,
                    exc,
                    tries,
                    retries,
                    delay,
                )
                time.sleep(delay)

    @staticmethod
    def _one_by_one(
        collection: Collection[dict[str, Any]], ops: list[UpdateOne]
    ) -> tuple[int, int, int]:
        """Write ops singly to isolate the ones BSON cannot encode (counted as errors)."""
        matched = upserted = errors = 0
        for op in ops:
            try:
                result = collection.bulk_write([op], ordered=False)
            except (InvalidDocument, BulkWriteError) as exc:
                errors += 1
                logger.warning("Not storing a document in %s: %s", collection.name, exc)
                continue
            matched += result.matched_count
            upserted += result.upserted_count
        return matched, upserted, errors

    def update_weights(
        self, weights: Mapping[str, float], *, retries: int = 3, backoff: float = 0.5
    ) -> int:
        """Overwrite ``weight`` by ``fp`` in ``articles`` and ``nodes``.

        Args:
            weights: ``{fp: weight}``; fps not in the store are ignored.
            retries, backoff: as for :meth:`write_pages` (seconds).

        Returns:
            The number of documents whose weight changed.

        Raises:
            StoreUnavailable: the server stayed unreachable (``.docs`` is empty).
        """
        if not weights:
            return 0
        ops = [UpdateOne({"fp": fp}, {"$set": {"weight": float(w)}}) for fp, w in weights.items()]
        modified = 0
        for name in (ARTICLES, NODES):
            attempt = 0
            while True:
                try:
                    result = self._collections[name].bulk_write(ops, ordered=False)
                    modified += result.modified_count
                    break
                except (ConnectionFailure, OperationFailure) as exc:
                    if not _is_transient(exc):
                        raise
                    if attempt >= retries:
                        raise StoreUnavailable(
                            f"MongoDB unavailable updating weights in {name}: {exc}"
                        ) from exc
                    time.sleep(backoff * (2**attempt))
                    attempt += 1
        return modified

    # -- spill files ----------------------------------------------------------------------------

    def replay_spill(
        self,
        path: str | Path,
        *,
        batch_size: int = 500,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> dict[str, int]:
        """Write a spill file (see :func:`spill`) back into the store and remove it.

        The file is first renamed to ``<path>.replay-<pid>`` so that new spills go to a fresh
        ``path``; leftovers of an interrupted replay are replayed too. When the server goes
        away again, the docs not yet written are appended to ``path`` again and
        :class:`StoreUnavailable` is raised (nothing is lost, nothing is written twice in
        effect: writes are idempotent).

        Args:
            batch_size: documents per :meth:`write_pages` call.
            retries, backoff: as for :meth:`write_pages` (seconds).

        Returns:
            The summed counts of :meth:`write_pages` (all zero when there is nothing to replay).

        Raises:
            StoreUnavailable: as above.
            OSError: the file cannot be read, renamed or removed.
        """
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
        for source in sources:
            try:
                docs = load_spill(source)
            except FileNotFoundError:  # replayed meanwhile by another process
                continue
            for start in range(0, len(docs), max(batch_size, 1)):
                batch = docs[start : start + max(batch_size, 1)]
                try:
                    counts = self.write_pages(batch, retries=retries, backoff=backoff)
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

    # -- reads ----------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        site: str | None = None,
        limit: int = 20,
        with_text: bool = False,
    ) -> list[dict[str, Any]]:
        """Find articles by words of their title and text.

        With a text index (real MongoDB) this is a ``$text`` search (any of the words; results
        by relevance, then weight; each result has a ``score``). Without one (SecantusDB), or
        when the query has CJK characters, every term (a word or a "quoted phrase") must occur,
        case-insensitively, in the title or the text; results by weight, then publication time.

        Args:
            query: the words to find.
            site: only articles of this registered domain.
            limit: at most this many results.
            with_text: include the ``text`` body in the results.

        Returns:
            Article documents without ``_id``.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        terms = _search_terms(query)
        if not terms:
            return []
        if self.text_index is None:
            self.text_index = self._has_text_index()
        filt: dict[str, Any] = {"site": site} if site else {}
        projection: dict[str, Any] = {"_id": 0}
        if not with_text:
            projection["text"] = 0
        if self.text_index and not _CJK_CHARS.search(query):
            filt["$text"] = {"$search": query}
            projection["score"] = {"$meta": "textScore"}
            order: list[tuple[str, Any]] = [
                ("score", {"$meta": "textScore"}),
                ("weight", DESCENDING),
            ]
        else:
            filt["$and"] = [
                {
                    "$or": [
                        {field: {"$regex": re.escape(term), "$options": "i"}}
                        for field in ("title", "text")
                    ]
                }
                for term in terms
            ]
            order = [("weight", DESCENDING), ("published", DESCENDING)]
        return list(self.articles.find(filt, projection).sort(order).limit(max(int(limit), 0)))

    def counts_by_class(self, site: str | None = None) -> dict[str, int]:
        """Number of stored links per ``link_class`` (``"unknown"`` when missing).

        Args:
            site: only links of this registered domain.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        pipeline: list[dict[str, Any]] = [{"$match": {"site": site}}] if site else []
        pipeline.append({"$group": {"_id": "$link_class", "n": {"$sum": 1}}})
        return {
            str(row["_id"]) if row["_id"] is not None else "unknown": int(row["n"])
            for row in self.links.aggregate(pipeline)
        }

    # -- recurring crawls (newscrawl.schedule) ----------------------------------------------------

    @property
    def schedule(self) -> Collection[dict[str, Any]]:
        """The ``schedule`` collection (same write concern as the page collections)."""
        return self.db.get_collection(SCHEDULE, write_concern=self.articles.write_concern)

    def load_schedule(self) -> dict[str, dict[str, Any]]:
        """Run state of every site: ``{site: document}`` (``_id`` removed).

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        return {str(doc.pop("_id")): doc for doc in self.schedule.find()}

    def save_schedule(self, site: str, state: Mapping[str, Any]) -> None:
        """Replace the run state of ``site`` (created when missing).

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        doc = {k: v for k, v in state.items() if k != "_id"}
        doc["site"] = site
        self.schedule.replace_one({"_id": site}, doc, upsert=True)

    def count_new_articles(self, site: str, since: dt.datetime) -> int:
        """Articles of ``site`` (registered domain) first stored at or after ``since`` (tz-aware).

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        return int(self.articles.count_documents({"site": site, "first_seen": {"$gte": since}}))

    # -- crawl state of incremental re-crawls (newscrawl.crawlstate) ------------------------------
    #
    # ``pages``: one record per known URL (``_id`` = URL fingerprint; fields in
    # newscrawl.algorithms.revisitplan): validators, content fingerprint, visit history, revisit
    # interval, estimator and why, due time, role, PageRank. Page bodies stay in ``articles`` /
    # ``nodes`` (seed 002 §3: 网页本身与这些网页信息分开存储). The page sets of seed 002 are queries:
    # all URLs ``{}``, visited ``{last_visit: {$ne: null}}``, to visit ``{due: {$lte: now}}``,
    # seeds ``{seed: true}``. ``hosts``: the learned change-detection policy per host.
    # ``article_versions``: previous versions of changed articles with a diff summary.
    # ``staging``: shadow-mode writes of runs not merged yet.

    @property
    def pages(self) -> Collection[dict[str, Any]]:
        return self._collections[PAGES]

    @property
    def hosts(self) -> Collection[dict[str, Any]]:
        return self._collections[HOSTS]

    @property
    def versions(self) -> Collection[dict[str, Any]]:
        return self._collections[VERSIONS]

    @property
    def staging(self) -> Collection[dict[str, Any]]:
        return self._collections[STAGING]

    def ensure_state_indexes(self) -> None:
        """Indexes of the crawl-state collections (idempotent): ``pages``: ``due``, ``host``,
        ``seed``; ``article_versions``: unique ``(fp, version)``; ``staging``: ``(run, seq)``.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        self.pages.create_index([("due", ASCENDING)])
        self.pages.create_index([("host", ASCENDING)])
        self.pages.create_index([("seed", ASCENDING)])
        self.versions.create_index([("fp", ASCENDING), ("version", ASCENDING)], unique=True)
        self.staging.create_index([("run", ASCENDING), ("seq", ASCENDING)])

    def load_state(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Every crawl-state record and every host policy: ``(pages, hosts)``.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        return list(self.pages.find()), list(self.hosts.find())

    def write_state(
        self,
        new_docs: Sequence[Mapping[str, Any]],
        old_docs: Sequence[Mapping[str, Any]],
        *,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> int:
        """Write crawl-state records (documents with ``_id``): ``new_docs`` are inserted (a bulk
        insert is ~10x cheaper than an upsert on SecantusDB), ``old_docs`` replace the stored
        record; a "new" record that exists after all (another crawl wrote it) is replaced too.

        Several workers may share one store, each with the state it loaded at its start, so a
        record is only replaced by one that is at least as recent: the replace is conditional
        on the stored ``last_visit`` being missing, null or not later than the record's (an
        unvisited record replaces only an unvisited one). A record that lost (the filter did not
        match, and its upsert then met the existing ``_id``) is skipped, not counted: the stored
        record, visited more recently by another worker, survives.

        Returns:
            The number of records written.

        Raises:
            StoreUnavailable: the server stayed unreachable (``.docs`` is empty: the caller
                keeps its records dirty and writes them again later).
        """
        replace = list(old_docs)
        written = 0
        try:
            if new_docs:
                try:
                    result = self.pages.bulk_write([InsertOne(dict(d)) for d in new_docs],
                                                   ordered=False)
                    written += result.inserted_count
                except BulkWriteError as exc:
                    written += int(exc.details.get("nInserted", 0))
                    failed = {err.get("index") for err in exc.details.get("writeErrors") or ()
                              if err.get("code") == DUPLICATE_KEY}
                    replace += [d for i, d in enumerate(new_docs) if i in failed]
            if replace:
                written += self._replace_state(replace, retries, backoff)
        except (ConnectionFailure, OperationFailure) as exc:
            if not _is_transient(exc):
                raise
            raise StoreUnavailable(f"MongoDB unavailable writing crawl state: {exc}") from exc
        return written

    @staticmethod
    def _state_filter(doc: Mapping[str, Any]) -> dict[str, Any]:
        """Filter matching the stored record of ``doc`` when ``doc`` is at least as recent:
        ``last_visit`` missing or null, or (``doc`` visited) not later than ``doc``'s."""
        last_visit = doc.get("last_visit")
        if last_visit is None:
            return {"_id": doc["_id"], "last_visit": None}  # null matches a missing field too
        return {"_id": doc["_id"],
                "$or": [{"last_visit": None}, {"last_visit": {"$lte": last_visit}}]}

    def _replace_state(
        self, docs: list[Mapping[str, Any]], retries: int, backoff: float
    ) -> int:
        """Conditional upserts of crawl-state records (see :meth:`write_state`); returns the
        number written. A duplicate key is a record that lost to a more recent one: skipped."""
        collection = self.pages
        ops = [ReplaceOne(self._state_filter(d), dict(d), upsert=True) for d in docs]

        def attempt() -> int:
            try:
                result = collection.bulk_write(ops, ordered=False)
                return result.matched_count + result.upserted_count
            except BulkWriteError as exc:
                details = exc.details
                write_errors = details.get("writeErrors") or []
                _raise_if_interrupted(PAGES, write_errors, exc)
                stale = [err for err in write_errors if err.get("code") == DUPLICATE_KEY]
                others = [err for err in write_errors if err.get("code") != DUPLICATE_KEY]
                if stale:
                    logger.debug("%d crawl-state record(s) not written: the store holds a more "
                                 "recent visit", len(stale))
                if others:
                    logger.warning("%d write error(s) in %s; first: %s", len(others), PAGES,
                                   others[0].get("errmsg"))
                return int(details.get("nMatched", 0)) + int(details.get("nUpserted", 0))
            except InvalidDocument:
                matched, upserted, _ = self._one_by_one(collection, ops)
                return matched + upserted

        return self._retrying(PAGES, attempt, retries, backoff)

    def write_hosts(self, docs: Sequence[Mapping[str, Any]]) -> None:
        """Replace host policies (documents with ``_id`` = host name), created when missing.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        if docs:
            self.hosts.bulk_write(
                [ReplaceOne({"_id": d["_id"]}, dict(d), upsert=True) for d in docs], ordered=False
            )

    def archive_version(
        self, fp: str, new: Mapping[str, Any], *, archived_at: dt.datetime,
        stage_run: str | None = None,
    ) -> dict[str, Any] | None:
        """Keep the stored version of article ``fp`` before ``new`` overwrites it.

        The stored article's title, text, dates and authors go to ``article_versions`` as
        version ``n`` (1 = the first version stored), with ``diff``, the summary of the change to
        ``new`` (:func:`newscrawl.algorithms.changedetect.version_diff`: headline changed, body
        changed by N %). Nothing happens when no article ``fp`` is stored. With ``stage_run``
        the version is staged for that shadow run instead of written.

        Returns:
            The version document written, or None.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        old = self.articles.find_one({"fp": fp}, {"_id": 0})
        if old is None:
            return None
        number = self.versions.count_documents({"fp": fp}) + 1
        version = {
            "fp": fp,
            "url": old.get("url"),
            "version": number,
            "archived_at": archived_at,
            "valid_from": old.get("fetched_at"),
            **{k: old.get(k) for k in ("title", "text", "published", "authors", "description")},
            "diff": version_diff(old, new),
        }
        if stage_run:
            self.stage(stage_run, "versions", [version])
        else:
            self.versions.insert_one(dict(version))
        return version

    def link_edges(self) -> Iterator[tuple[str, str]]:
        """``(source_fp, target_fp)`` of every stored link (the graph PageRank runs on).

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        for doc in self.links.find({}, {"_id": 0, "source_fp": 1, "target_fp": 1}):
            if doc.get("source_fp") and doc.get("target_fp"):
                yield doc["source_fp"], doc["target_fp"]

    def update_pagerank(self, values: Mapping[str, float], *, retries: int = 3,
                        backoff: float = 0.5) -> int:
        """Set ``pagerank`` of crawl-state records by fingerprint; returns records matched.

        Raises:
            StoreUnavailable: the server stayed unreachable.
        """
        if not values:
            return 0
        ops = [UpdateOne({"_id": fp}, {"$set": {"pagerank": float(v)}}) for fp, v in values.items()]
        try:
            matched, _, _ = self._bulk(PAGES, ops, retries, backoff)
        except (ConnectionFailure, OperationFailure) as exc:
            if not _is_transient(exc):
                raise
            raise StoreUnavailable(f"MongoDB unavailable writing PageRank: {exc}") from exc
        return matched

    def evict(self, fps: Sequence[str], *, at: dt.datetime) -> int:
        """Evict pages: delete their bodies (``articles``/``nodes`` documents) and mark their
        records ``evicted`` (kept, so the URL is not fetched again as new; never due).

        Returns:
            The number of page bodies deleted.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        deleted = 0
        fps = list(fps)
        for start in range(0, len(fps), 500):
            chunk = fps[start : start + 500]
            for name in (ARTICLES, NODES):
                deleted += self._collections[name].delete_many({"fp": {"$in": chunk}}).deleted_count
            self.pages.bulk_write(
                [UpdateOne({"_id": fp}, {"$set": {"evicted": True, "evicted_at": at, "due": None}})
                 for fp in chunk],
                ordered=False,
            )
        return deleted

    # -- shadow update mode (seed 002 §2: 备份式更新) ----------------------------------------------

    def stage(self, run: str, target: str, docs: Sequence[Mapping[str, Any]]) -> int:
        """Append ``docs`` to the ``staging`` collection for run ``run``.

        Args:
            target: ``"items"`` (page documents as for :meth:`write_pages`), ``"pages"``
                (crawl-state records), ``"hosts"`` or ``"versions"``.

        Returns:
            The number of documents staged.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        if not docs:
            return 0
        seq = time.time_ns()
        self.staging.insert_many(
            [{"run": run, "target": target, "seq": seq + i, "doc": dict(d)}
             for i, d in enumerate(docs)],
            ordered=True,
        )
        return len(docs)

    def committed_runs(self) -> list[str]:
        """Ids of runs whose merge started but did not finish (to be completed; oldest first).

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        return sorted(str(r) for r in self.staging.distinct("run", {"target": "commit"}))

    def staged_runs(self) -> list[str]:
        """Ids of runs with staged writes not merged yet (oldest first).

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        return sorted(str(r) for r in self.staging.distinct("run"))

    def merge_staged(self, run: str, *, now: dt.datetime | None = None) -> dict[str, Any]:
        """Merge run ``run``'s staged writes into the live collections and drop them.

        On a server with transactions (SecantusDB, a MongoDB replica set) the whole merge is one
        transaction: readers see the run's pages, links, crawl state and versions all at once or
        not at all. A standalone mongod has no transactions: the merge is then applied without
        one (every write is an idempotent upsert and the staged writes are deleted last, so a
        merge cut short is completed by the next :meth:`merge_staged`); ``atomic`` is False then.
        Item documents keep :meth:`write_pages`' semantics (``first_seen`` once, ``weight`` the
        maximum, links upserted by ``(source_fp, target_fp)``).

        Returns:
            ``{"items", "pages", "hosts", "versions"}`` documents merged, and ``"atomic"``.

        Raises:
            pymongo.errors.PyMongoError: the server is unreachable.
        """
        now = now or _utcnow()
        # The commit marker: from here on the run is merged, by this call or, when it is cut
        # short, by the next start (see committed_runs).
        if not self.staging.find_one({"run": run, "target": "commit"}):
            self.staging.insert_one({"run": run, "target": "commit", "seq": -1, "at": now})
        ops: dict[str, list[Any]] = {ARTICLES: [], NODES: [], LINKS: [], PAGES: [], HOSTS: [],
                                     VERSIONS: []}
        counts: dict[str, Any] = {"items": 0, "pages": 0, "hosts": 0, "versions": 0}
        for entry in self.staging.find({"run": run}).sort("seq", ASCENDING):
            target, doc = entry.get("target"), entry.get("doc") or {}
            if target == "items":
                if doc.get("kind") not in ("article", "node") or not doc.get("fp"):
                    continue
                counts["items"] += 1
                if doc["kind"] == "article":
                    ops[ARTICLES].append(self._page_update(doc, now))
                    continue
                ops[NODES].append(self._page_update(doc, now))
                for link in doc.get("links") or ():
                    update = self._link_update(link, doc, now)
                    if update is not None:
                        ops[LINKS].append(update)
            elif target in ("pages", "hosts") and doc.get("_id") is not None:
                counts[target] += 1
                ops[PAGES if target == "pages" else HOSTS].append(
                    ReplaceOne({"_id": doc["_id"]}, doc, upsert=True))
            elif target == "versions":
                counts["versions"] += 1
                doc = {k: v for k, v in doc.items() if k != "_id"}
                ops[VERSIONS].append(UpdateOne({"fp": doc.get("fp"), "version": doc.get("version")},
                                               {"$setOnInsert": doc}, upsert=True))

        def apply(session: Any) -> None:
            for name, batch in ops.items():
                if batch:
                    self._collections[name].bulk_write(batch, ordered=False, session=session)
            self.staging.delete_many({"run": run}, session=session)

        atomic = True
        try:
            with self.client_or_db_client().start_session() as session:
                session.with_transaction(apply)
        except OperationFailure as exc:
            # 20 IllegalOperation: "Transaction numbers are only allowed on a replica set member"
            if exc.code not in (20, 263) and "transaction" not in str(exc).lower():
                raise
            logger.warning("The server has no transactions (%s): merging run %s without one",
                           exc, run)
            atomic = False
            apply(None)
        counts["atomic"] = atomic
        return counts

    def client_or_db_client(self) -> MongoClient[dict[str, Any]]:
        """The client of this store's database (the one :meth:`connect` made, or the borrowed
        database's own)."""
        return self.client if self.client is not None else self.db.client
