"""Shadow update mode (seed 002 §2: 备份式更新): a run's writes staged, merged when it ends.

``staging`` holds ``{run, target, seq, doc}`` entries: ``target`` is ``"items"`` (page documents
as for :meth:`~newscrawl.store.pages.PageStore.write_pages`), ``"pages"`` (crawl-state records),
``"hosts"`` or ``"versions"``; a ``"commit"`` entry marks a run whose merge has started.

On a server with transactions (SecantusDB, a MongoDB replica set) the whole merge is one
transaction: readers see the run's pages, links, crawl state and versions all at once or not at
all. A standalone mongod has no transactions: the merge is then applied without one (every write
is an idempotent upsert and the staged writes are deleted last, so a merge cut short is completed
by the next :meth:`ShadowStore.merge_staged`).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from pymongo import ASCENDING, ReplaceOne, UpdateOne
from pymongo.client_session import ClientSession
from pymongo.errors import OperationFailure

from newscrawl.store.base import (
    ARTICLES,
    HOSTS,
    LINKS,
    NODES,
    PAGES,
    VERSIONS,
    Collections,
    utcnow,
)
from newscrawl.store.pages import link_update, page_update

logger = logging.getLogger(__name__)

#: Error codes of "no transactions here": 20 IllegalOperation ("Transaction numbers are only
#: allowed on a replica set member or mongos"), 263 OperationNotSupportedInTransaction.
_NO_TRANSACTIONS = (20, 263)


class ShadowStore:
    """Staging and merging of shadow runs (see the module docstring)."""

    def __init__(self, collections: Collections) -> None:
        self.c = collections

    def stage(self, run: str, target: str, docs: Sequence[Mapping[str, Any]]) -> int:
        """Append ``docs`` to ``staging`` for run ``run``; returns the number staged."""
        if not docs:
            return 0
        seq = time.time_ns()  # an order of writes, not a time stamp of the run
        self.c.staging.insert_many(
            [{"run": run, "target": target, "seq": seq + i, "doc": dict(d)}
             for i, d in enumerate(docs)],
            ordered=True,
        )
        return len(docs)

    def committed_runs(self) -> list[str]:
        """Ids of runs whose merge started but did not finish (oldest first)."""
        return sorted(str(r) for r in self.c.staging.distinct("run", {"target": "commit"}))

    def staged_runs(self) -> list[str]:
        """Ids of runs with staged writes not merged yet (oldest first)."""
        return sorted(str(r) for r in self.c.staging.distinct("run"))

    def merge_staged(self, run: str, *, now: dt.datetime | None = None) -> dict[str, Any]:
        """Merge run ``run``'s staged writes into the live collections and drop them (see
        :meth:`newscrawl.store.NewsStore.merge_staged`)."""
        staging = self.c.staging
        # The commit marker: from here on the run is merged, by this call or, when it is cut
        # short, by the next start (see committed_runs).
        if not staging.find_one({"target": "commit", "run": run}):
            staging.insert_one({"run": run, "target": "commit", "seq": -1,
                                "at": now or utcnow()})
        ops: dict[str, list[Any]] = {name: [] for name in (ARTICLES, NODES, LINKS, PAGES, HOSTS,
                                                          VERSIONS)}
        counts: dict[str, Any] = {"items": 0, "pages": 0, "hosts": 0, "versions": 0}
        for entry in staging.find({"run": run}).sort("seq", ASCENDING):
            target, doc = entry.get("target"), entry.get("doc") or {}
            if target == "items":
                if doc.get("kind") not in ("article", "node") or not doc.get("fp"):
                    continue
                counts["items"] += 1
                if doc["kind"] == "article":
                    ops[ARTICLES].append(page_update(doc, now))
                    continue
                ops[NODES].append(page_update(doc, now))
                for link in doc.get("links") or ():
                    update = link_update(link, doc, now)
                    if update is not None:
                        ops[LINKS].append(update)
            elif target in ("pages", "hosts") and doc.get("_id") is not None:
                counts[target] += 1
                ops[PAGES if target == "pages" else HOSTS].append(
                    ReplaceOne({"_id": doc["_id"]}, doc, upsert=True))
            elif target == "versions":
                counts["versions"] += 1
                doc = {k: v for k, v in doc.items() if k != "_id"}
                key = ({"fp": doc.get("fp"), "content_fp": doc["content_fp"]}
                       if doc.get("content_fp") else
                       {"fp": doc.get("fp"), "version": doc.get("version")})
                ops[VERSIONS].append(UpdateOne(key, {"$setOnInsert": doc}, upsert=True))

        def apply(session: ClientSession | None) -> None:
            for name, batch in ops.items():
                if batch:
                    self.c[name].bulk_write(batch, ordered=False, session=session)
            staging.delete_many({"run": run}, session=session)

        atomic = True
        try:
            with self.c.client.start_session() as session:
                session.with_transaction(apply)
        except OperationFailure as exc:
            if exc.code not in _NO_TRANSACTIONS and "transaction" not in str(exc).lower():
                raise
            logger.warning("The server has no transactions (%s): merging run %s without one",
                           exc, run)
            atomic = False
            apply(None)
        counts["atomic"] = atomic
        return counts
