"""Recompute the URL fingerprints stored as keys from the URLs stored beside them, merging the
documents that then share a key (:func:`newscrawl.store.upgrade.upgrade` says when).

Order of writes, so that a run cut short loses nothing and the next run completes it: the
surviving document of a key is written under it first, the others are deleted after; a key still
held by a document that moves elsewhere is written once that one has moved (keys that swap
places are written together). Versions of merged articles are renumbered through negative
numbers, so the unique ``(fp, version)`` index never sees two documents on one number.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pymongo import DeleteOne, ReplaceOne, UpdateOne

from newscrawl.store.base import LINKS, PAGES, Coll, Doc

logger = logging.getLogger(__name__)

#: Documents per ``$in`` query and per bulk write.
CHUNK = 500
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

PageFp = Callable[[str], str]


@dataclass
class _Entry:
    ref: Any  # the document's _id
    key: Hashable  # its key now
    new: Hashable  # its key from its URL(s)


@dataclass
class _Group:
    target: Hashable
    members: list[_Entry] = field(default_factory=list)
    stationary: _Entry | None = None  # the member that holds the target already


def _time(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    return _EPOCH


def _chunks(items: list[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


class Keyed:
    """How one collection is keyed: the key of a stored document, and its key by its URLs."""

    def __init__(self, name: str, page_fp: PageFp) -> None:
        self.name = name
        self.fp = page_fp
        self.fields = {PAGES: ("_id", "url", "fp"), LINKS: ("source_fp", "target_fp",
                                                            "source_url", "target_url")
                       }.get(name, ("fp", "url"))

    def key(self, doc: Doc) -> Hashable:
        key: Hashable = doc["_id"] if self.name == PAGES else doc.get("fp")
        if self.name == LINKS:
            key = doc.get("source_fp"), doc.get("target_fp")
        return key

    def new(self, doc: Doc) -> Hashable:
        if self.name == LINKS:
            source, target = doc.get("source_url"), doc.get("target_url")
            return (self.fp(source) if source else doc.get("source_fp"),
                    self.fp(target) if target else doc.get("target_fp"))
        url = doc.get("url")
        return self.fp(url) if url else self.key(doc)

    def holders(self, collection: Coll, targets: list[Hashable]) -> Iterable[Doc]:
        """Documents whose key is one of ``targets`` (an index lookup per chunk)."""
        projection = dict.fromkeys(self.fields, 1)
        for chunk in _chunks(targets):
            if self.name == PAGES:
                yield from collection.find({"_id": {"$in": chunk}}, projection)
            elif self.name == LINKS:
                wanted = set(chunk)
                query = {"target_fp": {"$in": sorted({t for _s, t in chunk})}}
                yield from (d for d in collection.find(query, projection)
                            if self.key(d) in wanted)
            else:
                yield from collection.find({"fp": {"$in": chunk}}, projection)

    def recency(self, doc: Doc) -> tuple[Any, ...]:
        if self.name == PAGES:
            return (_time(doc.get("last_visit")), int(doc.get("visits") or 0))
        return (_time(doc.get("fetched_at") or doc.get("last_seen")), _time(doc.get("last_seen")))

    def merged(self, docs: list[Doc], winner: Doc, target: Hashable) -> Doc:
        out = dict(winner)
        firsts = [d["first_seen"] for d in docs if isinstance(d.get("first_seen"), dt.datetime)]
        if firsts:
            out["first_seen"] = min(firsts, key=_time)
        weights = [float(d["weight"]) for d in docs if isinstance(d.get("weight"), (int, float))]
        if weights and self.name != LINKS:
            out["weight"] = max(weights)
        if self.name == PAGES:
            out["_id"] = out["fp"] = target
            if len(docs) > 1:
                out["pagerank"] = None
                if any(d.get("seed") for d in docs):
                    out["seed"], out["role"] = True, "entry"
        elif self.name == LINKS:
            out["source_fp"], out["target_fp"] = target  # type: ignore[misc]
        else:
            out["fp"] = target
        return out


def rekey(collection: Coll, keyed: Keyed) -> tuple[int, int]:
    """Recompute the keys of one collection from its URLs; returns (re-keyed, merged away)."""
    moved: list[_Entry] = []
    for doc in collection.find({}, dict.fromkeys(keyed.fields, 1)):
        key, new = keyed.key(doc), keyed.new(doc)
        if new != key or (keyed.name == PAGES and doc.get("fp") != key):
            moved.append(_Entry(doc["_id"], key, new))
    if not moved:
        return 0, 0
    groups: dict[Hashable, _Group] = {}
    for entry in moved:
        groups.setdefault(entry.new, _Group(entry.new)).members.append(entry)
    holder: dict[Hashable, _Entry] = {e.key: e for e in moved}
    for doc in keyed.holders(collection, list(groups)):
        key = keyed.key(doc)
        if key not in holder:  # holds a target and keeps its key: the group's stationary doc
            entry = _Entry(doc["_id"], key, key)
            holder[key] = entry
            groups[key].members.append(entry)
            groups[key].stationary = entry
    for group in groups.values():  # a page whose fp field alone was wrong holds its target
        for entry in group.members:
            if entry.key == group.target:
                group.stationary = entry
    pending: list[_Group] = list(groups.values())
    released: set[Hashable] = set()
    rekeyed = merged = 0
    while pending:
        ready = [g for g in pending
                 if g.target not in holder or holder[g.target] in g.members
                 or g.target in released]
        if not ready:  # keys that swap places: write them all (every doc is in memory)
            logger.warning("Upgrade of %s: %d key(s) form a cycle", keyed.name, len(pending))
            ready = pending
        chosen = {id(g) for g in ready}
        pending = [g for g in pending if id(g) not in chosen]
        rekeyed_now, merged_now = _write_groups(collection, keyed, ready, set(groups))
        rekeyed += rekeyed_now
        merged += merged_now
        released.update(m.key for g in ready for m in g.members if m.key != g.target)
    return rekeyed, merged


def _write_groups(collection: Coll, keyed: Keyed, ready: list[_Group],
                  targets: set[Hashable]) -> tuple[int, int]:
    """Write the surviving document of each group under its target key, then delete the rest."""
    refs = [m.ref for g in ready for m in g.members]
    full: dict[Any, Doc] = {}
    for chunk in _chunks(refs):
        full.update((d["_id"], d) for d in collection.find({"_id": {"$in": chunk}}))
    writes: list[ReplaceOne[Doc]] = []
    deletes: list[DeleteOne] = []
    rekeyed = merged = 0
    for group in ready:
        members = [m for m in group.members if m.ref in full]
        if not members:
            continue
        docs = [full[m.ref] for m in members]
        best = max(range(len(members)),
                   key=lambda i: (*keyed.recency(docs[i]), members[i] is group.stationary))
        doc = keyed.merged(docs, docs[best], group.target)
        if keyed.name == PAGES:
            writes.append(ReplaceOne({"_id": group.target}, doc, upsert=True))
            kept = group.target
        else:
            keeper = group.stationary if group.stationary in members else members[best]
            kept = keeper.ref
            doc.pop("_id", None)
            writes.append(ReplaceOne({"_id": keeper.ref}, doc))
        rekeyed += sum(1 for m in members if m.key != group.target)
        merged += len(members) - 1
        for member in members:
            if member.ref != kept and not (keyed.name == PAGES and member.ref in targets):
                deletes.append(DeleteOne({"_id": member.ref}))
    for batch in _chunks(writes):  # distinct keys, each free (see rekey): any order
        collection.bulk_write(batch, ordered=False)
    for batch in _chunks(deletes):
        collection.bulk_write(batch, ordered=False)
    return rekeyed, merged


def renumber_versions(collection: Coll, page_fp: PageFp) -> tuple[int, int]:
    """Re-key ``article_versions`` by URL; the versions of merged articles are numbered again
    in ``archived_at`` order (through negative numbers, so the unique ``(fp, version)`` index
    never sees two documents on one number). Returns (re-keyed, renumbered)."""
    moved: dict[Any, Hashable] = {}
    targets: set[Hashable] = set()
    for doc in collection.find({}, {"fp": 1, "url": 1, "version": 1}):
        if not doc.get("fp") and not doc.get("url"):
            continue
        new = page_fp(doc["url"]) if doc.get("url") else doc.get("fp")
        if new != doc.get("fp") or not isinstance(doc.get("version"), int) or doc["version"] < 1:
            moved[doc["_id"]] = new
            targets.add(new)
    if not moved:
        return 0, 0
    members: dict[Hashable, list[Doc]] = {}
    for chunk in _chunks(sorted(targets, key=str)):
        for doc in collection.find({"fp": {"$in": chunk}}):
            if moved.get(doc["_id"], doc["fp"]) == doc["fp"]:  # not one moving elsewhere
                members.setdefault(doc["fp"], []).append(doc)
    for chunk in _chunks(list(moved)):
        for doc in collection.find({"_id": {"$in": chunk}}):
            group = members.setdefault(moved[doc["_id"]], [])
            if all(d["_id"] != doc["_id"] for d in group):
                group.append(doc)
    first: list[UpdateOne] = []
    second: list[UpdateOne] = []
    renumbered = 0
    for fp, docs in members.items():
        docs.sort(key=lambda d: (_time(d.get("archived_at")), abs(int(d.get("version") or 0))))
        base = 1 + max(abs(int(d.get("version") or 0)) for d in docs)  # below any stored number
        for number, doc in enumerate(docs, 1):
            if doc.get("fp") == fp and doc.get("version") == number:
                continue
            renumbered += doc.get("version") != number
            first.append(UpdateOne({"_id": doc["_id"]},
                                   {"$set": {"fp": fp, "version": -(base + number)}}))
            second.append(UpdateOne({"_id": doc["_id"]}, {"$set": {"version": number}}))
    for ops in (first, second):
        for batch in _chunks(ops):
            collection.bulk_write(batch, ordered=False)
    return len(moved), renumbered


def rekey_staging(collection: Coll, page_fp: PageFp) -> int:
    """Recompute the keys inside staged documents of unmerged shadow runs; returns entries
    changed."""
    ops: list[ReplaceOne[Doc]] = []
    for entry in collection.find({"target": {"$in": ["items", "pages", "versions"]}}):
        doc = dict(entry.get("doc") or {})
        before = repr(doc)
        if doc.get("url"):
            doc["fp"] = page_fp(doc["url"])
            if entry["target"] == "pages":
                doc["_id"] = doc["fp"]
        if entry["target"] == "items" and doc.get("links"):
            links = []
            for link in doc["links"]:
                link = dict(link)
                source = link.get("source_url") or doc.get("url")
                if source:
                    link["source_fp"] = page_fp(source)
                if link.get("target_url"):
                    link["target_fp"] = page_fp(link["target_url"])
                links.append(link)
            doc["links"] = links
        if repr(doc) != before:
            ops.append(ReplaceOne({"_id": entry["_id"]}, {**entry, "doc": doc}))
    for batch in _chunks(ops):
        collection.bulk_write(batch, ordered=False)
    return len(ops)
