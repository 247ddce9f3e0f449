"""Bulk writes with retries: inserts first where that is cheaper, upserts for the rest.

An upsert that creates a document costs ~3x an insert on SecantusDB, and most documents of a
first crawl are new, so :meth:`BulkWriter.insert_or_upsert` first sends a collection's batch as
unordered inserts of the very documents those upserts would create (same fields, same field
order); the documents that exist already (duplicate key, code 11000) or fail otherwise are then
sent as the upserts. Documents the insert could store differently (top-level field names with
``.``, ``$`` or only digits) and repeats of one key within a batch go to the upserts directly.
When a collection's previous batch was mostly known documents (re-crawled channel pages and their
links), the next batch is sent as upserts only (:data:`INSERT_FIRST_MIN_NEW`).

Every bulk write is retried a bounded number of times with exponential backoff while the server
is unavailable (:meth:`BulkWriter.retrying`); the last failure is raised as pymongo raised it,
and the store's public methods turn it into :class:`~newscrawl.store.StoreUnavailable`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from bson.errors import InvalidDocument
from pymongo import InsertOne, ReplaceOne, UpdateOne
from pymongo.errors import BulkWriteError, ConnectionFailure, OperationFailure

from newscrawl.store.base import (
    DUPLICATE_KEY,
    Coll,
    Collections,
    Doc,
    is_transient,
    raise_if_interrupted,
)

logger = logging.getLogger(__name__)

#: write_pages inserts first (then upserts the documents that exist) while at least this share
#: of a collection's previous batch was new, else it upserts: on SecantusDB 0.7 an insert costs
#: ~0.21 ms, a failed insert and its upsert ~0.46 ms, an upsert ~0.68 ms creating a document and
#: ~0.37 ms updating one (server CPU per document), so inserting first pays from ~16 % new.
INSERT_FIRST_MIN_NEW = 0.2

#: Filter and update document of one upsert.
Spec = tuple[dict[str, Any], dict[str, Any]]
_T = TypeVar("_T")
WriteOp = UpdateOne | ReplaceOne[Doc]


def stored_as_is(name: str) -> bool:
    """True when a top-level field ``name`` means the same in an insert as in ``$set``: not a
    dotted path, no operator, not numeric (numeric names are ordered numerically by mongod)."""
    return bool(name) and "." not in name and name[0] != "$" and not name.isdigit()


def upserted_doc(filt: Mapping[str, Any], update: Mapping[str, Mapping[str, Any]]) -> Doc | None:
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
    if not all(stored_as_is(k) for k in fields):
        return None
    doc = dict(filt)
    for k in sorted(fields):
        doc[k] = fields[k]
    return doc


def retrying(name: str, attempt: Callable[[], _T], retries: int, backoff: float) -> _T:
    """``attempt()``, retried ``retries`` times with exponential backoff (``backoff`` seconds
    first, doubled each time) while the server is unavailable; the last failure is raised."""
    tries = 0
    while True:
        try:
            return attempt()
        except (ConnectionFailure, OperationFailure) as exc:
            if not is_transient(exc) or tries >= retries:
                raise
            delay = backoff * (2**tries)
            tries += 1
            logger.warning("MongoDB unavailable writing %s (%s); retry %d/%d in %.2f s",
                           name, exc, tries, retries, delay)
            time.sleep(delay)


class BulkWriter:
    """Unordered bulk writes of one store, with retries (see the module docstring)."""

    def __init__(self, collections: Collections) -> None:
        self.collections = collections
        #: Share of new documents in the previous insert_or_upsert batch, per collection.
        self.new_share: dict[str, float] = {}

    def insert_or_upsert(
        self, name: str, specs: list[Spec], retries: int, backoff: float
    ) -> tuple[int, int, int]:
        """Write upserts ``specs`` in batch order, new documents as inserts (see the module
        docstring); returns (matched, created, errors) as the upserts alone would."""
        inserts: list[Doc] = []
        positions: list[int] = []  # the spec of each insert
        upserts: list[int] = []
        keys: set[tuple[Any, ...]] = set()
        if self.new_share.get(name, 1.0) < INSERT_FIRST_MIN_NEW:
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
                    doc = upserted_doc(filt, update)
                if doc is None:
                    upserts.append(i)
                else:
                    inserts.append(doc)
                    positions.append(i)
        created = 0
        if inserts:
            created, failed = self.insert(name, inserts, retries, backoff)
            if failed:
                upserts = sorted([*upserts, *(positions[j] for j in failed)])
        matched = upserted = errors = 0
        if upserts:
            ops: list[WriteOp] = [UpdateOne(*specs[i], upsert=True) for i in upserts]
            matched, upserted, errors = self.write(name, ops, retries, backoff)
        self.new_share[name] = (created + upserted) / len(specs)
        return matched, created + upserted, errors

    def insert(
        self, name: str, docs: list[Doc], retries: int, backoff: float
    ) -> tuple[int, list[int]]:
        """One unordered bulk insert with retries; returns (inserted, indexes of the docs not
        inserted: duplicate keys, refused or not encodable)."""
        collection = self.collections[name]

        def attempt() -> tuple[int, list[int]]:
            try:
                result = collection.bulk_write([InsertOne(d) for d in docs], ordered=False)
                return result.inserted_count, []
            except BulkWriteError as exc:
                details = exc.details
                write_errors = details.get("writeErrors") or []
                raise_if_interrupted(name, write_errors, exc)
                failed = sorted({int(err["index"]) for err in write_errors})
                others = [err for err in write_errors if err.get("code") != DUPLICATE_KEY]
                if others:  # the upserts meet the same problem and report it
                    logger.debug("%d insert error(s) in %s; first: %s", len(others), name,
                                 others[0].get("errmsg"))
                return int(details.get("nInserted", 0)), failed
            except InvalidDocument:
                # BSON cannot encode a document: the upserts isolate it (one_by_one)
                return 0, list(range(len(docs)))

        return retrying(name, attempt, retries, backoff)

    def write(
        self, name: str, ops: list[WriteOp], retries: int, backoff: float, *,
        quiet_duplicates: bool = False,
    ) -> tuple[int, int, int]:
        """One unordered bulk write with retries; returns (matched, upserted, errors).

        Args:
            quiet_duplicates: duplicate keys (an upsert whose filter did not match an existing
                ``_id``: a conditional replace that lost) are logged at debug level only.
        """
        collection = self.collections[name]

        def attempt() -> tuple[int, int, int]:
            try:
                result = collection.bulk_write(ops, ordered=False)
                return result.matched_count, result.upserted_count, 0
            except BulkWriteError as exc:
                details = exc.details
                write_errors = details.get("writeErrors") or []
                raise_if_interrupted(name, write_errors, exc)
                stale = [e for e in write_errors if e.get("code") == DUPLICATE_KEY]
                others = write_errors if not quiet_duplicates else \
                    [e for e in write_errors if e.get("code") != DUPLICATE_KEY]
                if quiet_duplicates and stale:
                    logger.debug("%d write(s) to %s not applied: the stored document is more "
                                 "recent", len(stale), name)
                if others:
                    logger.warning("%d write error(s) in %s; first: %s", len(others), name,
                                   others[0].get("errmsg"))
                return (int(details.get("nMatched", 0)), int(details.get("nUpserted", 0)),
                        len(write_errors))
            except InvalidDocument:
                return self.one_by_one(collection, ops)

        return retrying(name, attempt, retries, backoff)

    @staticmethod
    def one_by_one(collection: Coll, ops: list[WriteOp]) -> tuple[int, int, int]:
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
