"""Crawl state of incremental re-crawls (:mod:`newscrawl.crawlstate`): ``pages``, ``hosts``,
``article_versions``; PageRank and eviction.

``pages``: one record per known URL (``_id`` = URL fingerprint; fields in
:mod:`newscrawl.algorithms.revisitplan`): validators, content fingerprint, visit history, revisit
interval, estimator and why, due time, role, PageRank. Page bodies stay in ``articles`` /
``nodes`` (seed 002 §3: 网页本身与这些网页信息分开存储). The page sets of seed 002 are queries:
all URLs ``{}``, visited ``{last_visit: {$ne: null}}``, to visit ``{due: {$lte: now}}``, seeds
``{seed: true}``. The crawl loads every record at its start and orders due pages in memory
(:meth:`newscrawl.crawlstate.RunState.due_records`), so no query of a run sorts by due time; the
``due`` index serves analysts. ``hosts``: the learned change-detection policy per host name.
``article_versions``: previous versions of changed articles with a diff summary.

"Newer visit wins" without a collection scan. Several workers may share one store, each with the
state it loaded at its start, so a record is only replaced by one at least as recent. The
replace is conditional on ``{_id: fp, last_visit: {$not: {$gt: t}}}`` (stored ``last_visit``
missing, null or not later than ``t``) or, for an unvisited record, ``{_id: fp, last_visit:
null}``. SecantusDB 0.7 answers an update whose filter is an ``_id`` equality plus conditions on
plain fields through the ``_id`` index (measured: constant ~0.7 ms per record from 1,000 to
8,000 records), while a top-level ``$or`` or ``$expr`` makes it scan the collection for every
record (12 ms at 500 records, 51 ms at 2,000, 124 ms at 8,000): the re-crawl regression of
issue 8. MongoDB uses the ``_id`` index for either shape.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pymongo import ASCENDING, InsertOne, ReplaceOne, UpdateOne
from pymongo.errors import BulkWriteError

from newscrawl.algorithms.changedetect import version_diff
from newscrawl.store.base import ARTICLES, DUPLICATE_KEY, NODES, PAGES, Collections, Doc
from newscrawl.store.bulk import BulkWriter, WriteOp

logger = logging.getLogger(__name__)

#: Records evicted (or otherwise updated by fingerprint) per bulk write.
CHUNK = 500


def state_filter(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Filter matching the stored record of ``doc`` when ``doc`` is at least as recent:
    ``last_visit`` missing or null, or (``doc`` visited) not later than ``doc``'s. An ``_id``
    equality plus one plain field condition: answered through the ``_id`` index (module
    docstring)."""
    last_visit = doc.get("last_visit")
    if last_visit is None:
        return {"_id": doc["_id"], "last_visit": None}  # null matches a missing field too
    return {"_id": doc["_id"], "last_visit": {"$not": {"$gt": last_visit}}}


class CrawlStateStore:
    """Reads and writes of the crawl-state collections (see the module docstring)."""

    def __init__(self, collections: Collections, bulk: BulkWriter) -> None:
        self.c = collections
        self.bulk = bulk

    def ensure_state_indexes(self) -> None:
        """``pages``: ``due``, ``host``, ``seed``; ``article_versions``: unique
        ``(fp, version)``; ``staging``: ``(run, seq)`` and ``(target, run)``."""
        self.c.pages.create_index([("due", ASCENDING)])
        self.c.pages.create_index([("host", ASCENDING)])
        self.c.pages.create_index([("seed", ASCENDING)])
        self.c.versions.create_index([("fp", ASCENDING), ("version", ASCENDING)], unique=True)
        self.c.staging.create_index([("run", ASCENDING), ("seq", ASCENDING)])
        self.c.staging.create_index([("target", ASCENDING), ("run", ASCENDING)])

    def load_state(self) -> tuple[list[Doc], list[Doc]]:
        """Every crawl-state record and every host policy: ``(pages, hosts)``."""
        return list(self.c.pages.find()), list(self.c.hosts.find())

    def write_state(
        self,
        new_docs: Sequence[Mapping[str, Any]],
        old_docs: Sequence[Mapping[str, Any]],
        *,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> int:
        """Insert ``new_docs``, replace ``old_docs`` where not stale; returns records written
        (see :meth:`newscrawl.store.NewsStore.write_state`)."""
        replace = list(old_docs)
        written = 0
        if new_docs:
            try:
                result = self.c.pages.bulk_write([InsertOne(dict(d)) for d in new_docs],
                                                 ordered=False)
                written += result.inserted_count
            except BulkWriteError as exc:
                written += int(exc.details.get("nInserted", 0))
                failed = {err.get("index") for err in exc.details.get("writeErrors") or ()
                          if err.get("code") == DUPLICATE_KEY}
                replace += [d for i, d in enumerate(new_docs) if i in failed]
        if replace:
            ops: list[WriteOp] = [ReplaceOne(state_filter(d), dict(d), upsert=True)
                                  for d in replace]
            # A duplicate key is a record that lost to a more recent one: skipped, not counted.
            matched, upserted, _ = self.bulk.write(PAGES, ops, retries, backoff,
                                                   quiet_duplicates=True)
            written += matched + upserted
        return written

    def pending_pages(self) -> list[Doc]:
        """Records of pages known and never visited (the durable frontier), not evicted."""
        return list(self.c.pages.find({"last_visit": None, "evicted": {"$ne": True}}))

    def frontier_marker(self, namespace: str) -> str | None:
        """The run marker of the shared frontier ``namespace`` the store last saw, or None."""
        doc = self.c.meta.find_one({"_id": f"frontier:{namespace}"})
        return str(doc["marker"]) if doc and doc.get("marker") else None

    def save_frontier_marker(self, namespace: str, marker: str, *, at: dt.datetime) -> None:
        """Keep ``marker`` as the run marker of the shared frontier ``namespace``."""
        self.c.meta.replace_one({"_id": f"frontier:{namespace}"},
                                {"_id": f"frontier:{namespace}", "marker": marker, "at": at},
                                upsert=True)

    def write_hosts(self, docs: Sequence[Mapping[str, Any]]) -> None:
        """Replace host policies (documents with ``_id`` = host name), created when missing."""
        if docs:
            self.c.hosts.bulk_write(
                [ReplaceOne({"_id": d["_id"]}, dict(d), upsert=True) for d in docs],
                ordered=False)

    def previous_version(
        self, fp: str, new: Mapping[str, Any], *, archived_at: dt.datetime
    ) -> Doc | None:
        """The version document that keeps the stored article ``fp`` before ``new`` replaces
        it (``version`` = versions stored + 1), or None when no article ``fp`` is stored. Two
        index lookups: ``articles.fp`` and ``article_versions.(fp, version)``."""
        old = self.c.articles.find_one({"fp": fp}, {"_id": 0})
        if old is None:
            return None
        number = self.c.versions.count_documents({"fp": fp}) + 1
        return {
            "fp": fp,
            "url": old.get("url"),
            "version": number,
            "archived_at": archived_at,
            "valid_from": old.get("fetched_at"),
            **{k: old.get(k) for k in ("title", "text", "published", "authors", "description")},
            "diff": version_diff(old, new),
        }

    def insert_version(self, version: Mapping[str, Any]) -> None:
        self.c.versions.insert_one(dict(version))

    def link_edges(self) -> Iterator[tuple[str, str]]:
        """``(source_fp, target_fp)`` of every stored link (the graph PageRank runs on)."""
        for doc in self.c.links.find({}, {"_id": 0, "source_fp": 1, "target_fp": 1}):
            if doc.get("source_fp") and doc.get("target_fp"):
                yield doc["source_fp"], doc["target_fp"]

    def update_pagerank(self, values: Mapping[str, float], *, retries: int = 3,
                        backoff: float = 0.5) -> int:
        """Set ``pagerank`` of crawl-state records by ``_id``; returns records matched."""
        if not values:
            return 0
        ops: list[WriteOp] = [UpdateOne({"_id": fp}, {"$set": {"pagerank": float(v)}})
                              for fp, v in values.items()]
        matched, _, _ = self.bulk.write(PAGES, ops, retries, backoff)
        return matched

    def evict(self, fps: Sequence[str], *, at: dt.datetime) -> int:
        """Delete page bodies by ``fp`` and mark their records evicted; returns bodies deleted."""
        deleted = 0
        fps = list(fps)
        for start in range(0, len(fps), CHUNK):
            chunk = fps[start : start + CHUNK]
            for name in (ARTICLES, NODES):
                deleted += self.c[name].delete_many({"fp": {"$in": chunk}}).deleted_count
            self.c.pages.bulk_write(
                [UpdateOne({"_id": fp}, {"$set": {"evicted": True, "evicted_at": at, "due": None}})
                 for fp in chunk],
                ordered=False,
            )
        return deleted

