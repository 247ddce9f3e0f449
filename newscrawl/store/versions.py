"""Previous versions of changed articles (collection ``article_versions``): written exactly once
per (article, content fingerprint), numbered without a race, never holding the current text.

A version document keeps the text an article had before a re-crawl replaced it: ``fp`` (the
article), ``content_fp`` (:func:`newscrawl.algorithms.changedetect.text_fingerprint` of the kept
title and text), ``version`` (1, 2, ... in the order the versions were kept), ``archived_at``,
``valid_from``, the kept fields and ``diff`` (the change to the text that replaced it).

Several crawls may re-crawl one article at once (two processes on one data folder, distributed
workers on one store). Each reads the stored article before it writes the new text, so two of
them may both keep the same old text, or one may read the text another has just written. Hence:

* the stored text is kept only when it differs from the new one (:func:`old_version` returns
  None otherwise): the current text is never archived as an old version;
* the write is an insert-if-absent (``update_one`` with ``$setOnInsert`` and ``upsert``) on the
  unique index ``(fp, content_fp)``: the second crawl's copy is not written;
* the number is ``1 +`` the highest stored number of the article, read just before the insert;
  two crawls that keep two *different* old texts at once may pick the same number, which the
  unique index ``(fp, version)`` refuses: :func:`insert_version` then reads the number again
  and retries. No count-then-insert window remains: both indexes are the arbiters, on SecantusDB
  and on MongoDB alike.

:func:`deduplicate` is the upgrade step of schema 3 (:mod:`newscrawl.store.upgrade`): stores
written before it may hold the same old text twice per article (the race above), which the
unique ``(fp, content_fp)`` index does not allow; it keeps the earliest of each, fills in
``content_fp`` and numbers each article's versions 1..n again in ``archived_at`` order.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from pymongo import DESCENDING, DeleteOne, UpdateOne
from pymongo.errors import DuplicateKeyError

from newscrawl.algorithms.changedetect import text_fingerprint, version_diff
from newscrawl.store.base import Coll, Doc, StoreError

logger = logging.getLogger(__name__)

#: Inserts tried before :func:`insert_version` gives up (each lost race costs one).
ATTEMPTS = 20
#: Writes per bulk request of :func:`deduplicate`.
CHUNK = 500
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def content_fp(doc: Mapping[str, Any]) -> str:
    """The content fingerprint of an article or version document (its title and text)."""
    return text_fingerprint(doc.get("title"), doc.get("text"))


def next_number(versions: Coll, fp: str) -> int:
    """1 + the highest version number stored for article ``fp`` (one ``(fp, version)`` index
    lookup)."""
    last = versions.find_one({"fp": fp}, {"version": 1}, sort=[("version", DESCENDING)])
    number = last.get("version") if last else 0
    return (number if isinstance(number, int) and number > 0 else 0) + 1


def old_version(articles: Coll, versions: Coll, fp: str, new: Mapping[str, Any], *,
                archived_at: dt.datetime) -> Doc | None:
    """The version document that keeps the stored article ``fp`` before ``new`` (its title,
    text, published, authors) replaces it, or None: no article ``fp`` is stored, or the stored
    text already is ``new``'s (another crawl wrote it first)."""
    old = articles.find_one({"fp": fp}, {"_id": 0})
    if old is None:
        return None
    kept = content_fp(old)
    if kept == content_fp(new):
        return None
    return {
        "fp": fp,
        "content_fp": kept,
        "url": old.get("url"),
        "version": next_number(versions, fp),
        "archived_at": archived_at,
        "valid_from": old.get("fetched_at"),
        **{k: old.get(k) for k in ("title", "text", "published", "authors", "description")},
        "diff": version_diff(old, new),
    }


def insert_version(versions: Coll, version: Mapping[str, Any]) -> Doc | None:
    """Insert ``version`` unless the article already has a version with its ``content_fp``
    (module docstring). Returns the document written (its ``version`` number may differ from
    the one given, when another crawl took that number first), or None when it was there.

    Raises:
        StoreError: still no free number after :data:`ATTEMPTS` inserts.
    """
    doc = {k: v for k, v in version.items() if k != "_id"}
    key = {"fp": doc["fp"], "content_fp": doc["content_fp"]}
    for _ in range(ATTEMPTS):
        try:
            result = versions.update_one(key, {"$setOnInsert": doc}, upsert=True)
        except DuplicateKeyError:
            if versions.find_one(key, {"_id": 1}) is not None:
                return None  # another crawl kept the same text first
            doc["version"] = next_number(versions, doc["fp"])  # the number was taken
            continue
        return doc if result.upserted_id is not None else None
    raise StoreError(f"no free version number for article {doc['fp']} after {ATTEMPTS} tries")


def _time(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    return _EPOCH


def deduplicate(versions: Coll) -> tuple[int, int]:
    """The schema-3 upgrade of ``article_versions`` (module docstring); idempotent. A version
    without title and text (nothing to compare) gets a ``content_fp`` of its own. Returns
    ``(removed, renumbered)``."""
    groups: dict[Any, list[Doc]] = {}
    for doc in versions.find({}, {"fp": 1, "content_fp": 1, "title": 1, "text": 1,
                                  "version": 1, "archived_at": 1}):
        groups.setdefault(doc.get("fp"), []).append(doc)
    deletes: list[DeleteOne] = []
    first: list[UpdateOne] = []
    second: list[UpdateOne] = []
    renumbered = 0
    for docs in groups.values():
        docs.sort(key=lambda d: (_time(d.get("archived_at")), abs(int(d.get("version") or 0))))
        seen: set[str] = set()
        kept: list[tuple[Doc, str]] = []
        for doc in docs:
            if doc.get("title") or doc.get("text"):
                fingerprint = content_fp(doc)
            else:
                fingerprint = str(doc.get("content_fp") or f"none-{doc['_id']}")
            if fingerprint in seen:
                deletes.append(DeleteOne({"_id": doc["_id"]}))
                continue
            seen.add(fingerprint)
            kept.append((doc, fingerprint))
        base = 1 + max(abs(int(d.get("version") or 0)) for d in docs)  # below any stored number
        for number, (doc, fingerprint) in enumerate(kept, 1):
            if doc.get("version") == number and doc.get("content_fp") == fingerprint:
                continue
            renumbered += doc.get("version") != number
            first.append(UpdateOne({"_id": doc["_id"]}, {"$set": {
                "content_fp": fingerprint, "version": -(base + number)}}))
            second.append(UpdateOne({"_id": doc["_id"]}, {"$set": {"version": number}}))
    for ops in (deletes, first, second):  # deletes first: their numbers are free then
        for start in range(0, len(ops), CHUNK):
            versions.bulk_write(ops[start : start + CHUNK], ordered=False)
    if deletes:
        logger.info("article_versions: %d duplicate versions removed (the same old text kept "
                    "twice by crawls running at once)", len(deletes))
    return len(deletes), renumbered
