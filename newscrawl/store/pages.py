"""Page bodies and the link graph: ``articles``, ``nodes``, ``links``; weights, search, counts.

One document per URL fingerprint ``fp`` in ``articles`` (items with ``kind == "article"``) and
``nodes`` (``kind == "node"``, without their ``links`` list); one document per
(``source_fp``, ``target_fp``) edge in ``links``, taken from the ``links`` list of node items.

Write semantics (:meth:`PageStore.write_pages`, an upsert per document): ``first_seen`` is set
once (``$setOnInsert``); ``last_seen``, ``fetched_at`` and every other item field are overwritten
(``$set``); ``weight`` keeps the maximum ever written (``$max``: over runs and over in-links, seed
004 §3 "multiple in-links: keep the maximum"). :meth:`PageStore.update_weights` overwrites
weights (a recomputation). All writes are idempotent, so a batch can be retried or replayed from
a spill file without double counting. New documents go in as inserts where that is cheaper
(:mod:`newscrawl.store.bulk`).

Time stamps: ``first_seen`` / ``last_seen`` are the time the page was fetched (the item's
``fetched_at``, stamped by the run clock); a document without one gets the caller's run clock
``now``, else the wall clock. A document's own ``first_seen`` / ``last_seen`` are kept as they are.

Search: with a text index (real MongoDB) a ``$text`` search; SecantusDB has none, so every term
must occur in the title or text (case-insensitive regex). The text index uses
``default_language="none"`` (no stemming, no stop words: the corpus mixes languages) and
``language_override="text_language"``, because our items carry a ``language`` field with ISO
codes such as ``zh`` that MongoDB's text index would otherwise read as a per-document language
and refuse. MongoDB tokenises on spaces and punctuation, so queries containing CJK characters use
the regex search even when a text index exists.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pymongo import ASCENDING, DESCENDING, TEXT, UpdateOne
from pymongo.errors import ConnectionFailure, OperationFailure

from newscrawl.store.base import (
    ARTICLES,
    CANNOT_CREATE_INDEX,
    LINKS,
    NODES,
    Collections,
    Doc,
    StoreUnavailable,
    is_transient,
    utcnow,
)
from newscrawl.store.bulk import BulkWriter, Spec, WriteOp, retrying

logger = logging.getLogger(__name__)

#: Keys of the counts returned by :meth:`PageStore.write_pages`.
COUNT_KEYS = ("articles", "nodes", "links", "new_articles", "new_nodes", "new_links", "errors")
#: Page fields never copied into ``$set`` (they are the key, go elsewhere, or have own rules).
_PAGE_RESERVED = frozenset({"_id", "fp", "links", "weight", "first_seen", "last_seen"})
_LINK_RESERVED = frozenset({"_id", "source_fp", "target_fp", "first_seen", "last_seen"})
#: Characters MongoDB's text index does not split into words (Han, kana, Hangul).
_CJK_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: Search terms: a "quoted phrase" or a run of non-space characters.
_SEARCH_TERM = re.compile(r'"([^"]+)"|(\S+)')

def search_terms(query: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _SEARCH_TERM.finditer(query) if m.group(0) != '""']


def _seen(doc: Mapping[str, Any], now: dt.datetime | None) -> dt.datetime:
    """The time a page or link was seen: its fetch time (the run clock's, stamped on the item),
    else the run clock ``now``, else the wall clock."""
    fetched = doc.get("fetched_at")
    if isinstance(fetched, dt.datetime):
        return fetched
    return now if now is not None else utcnow()


def page_spec(doc: Mapping[str, Any], now: dt.datetime | None) -> Spec:
    """Filter and update of the upsert that stores page ``doc`` (seen at ``now``)."""
    seen = _seen(doc, now)
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


def page_update(doc: Mapping[str, Any], now: dt.datetime | None) -> UpdateOne:
    return UpdateOne(*page_spec(doc, now), upsert=True)


def link_spec(
    link: Mapping[str, Any], node: Mapping[str, Any], now: dt.datetime | None
) -> Spec | None:
    """Filter and update of the upsert that stores ``link`` of page ``node`` (None, logged,
    for a link without ``target_fp``)."""
    source_fp = link.get("source_fp") or node["fp"]
    target_fp = link.get("target_fp")
    if not target_fp:
        logger.warning("Not storing a link without target_fp from %s", node.get("url"))
        return None
    seen = _seen(node, now)
    fields = {k: v for k, v in link.items() if k not in _LINK_RESERVED}
    fields.setdefault("source_url", node.get("url"))
    fields.setdefault("site", node.get("site"))
    fields["last_seen"] = link.get("last_seen") or seen
    return (
        {"source_fp": source_fp, "target_fp": target_fp},
        {"$set": fields, "$setOnInsert": {"first_seen": link.get("first_seen") or seen}},
    )


def link_update(
    link: Mapping[str, Any], node: Mapping[str, Any], now: dt.datetime | None
) -> UpdateOne | None:
    spec = link_spec(link, node, now)
    return None if spec is None else UpdateOne(*spec, upsert=True)


class PageStore:
    """Writes and reads of ``articles``, ``nodes`` and ``links`` (see the module docstring).

    Attributes:
        text_index: True when ``articles`` has a text index, False when the server refused one,
            None before :meth:`ensure_indexes` (then :meth:`search` looks it up).
    """

    def __init__(self, collections: Collections, bulk: BulkWriter, *,
                 text_language: str = "none") -> None:
        self.c = collections
        self.bulk = bulk
        self.text_language = text_language
        self.text_index: bool | None = None

    # -- indexes --------------------------------------------------------------------------------

    def ensure_indexes(self) -> None:
        """articles: unique ``fp``; ``(site, published desc)``; ``weight desc``; text on
        ``(title ×3, text)`` when the server supports it (sets :attr:`text_index`).
        nodes: unique ``fp``; ``site``. links: unique ``(source_fp, target_fp)``; ``target_fp``;
        ``(site, link_class)``."""
        articles, nodes, links = self.c.articles, self.c.nodes, self.c.links
        articles.create_index([("fp", ASCENDING)], unique=True)
        articles.create_index([("site", ASCENDING), ("published", DESCENDING)])
        articles.create_index([("weight", DESCENDING)])
        self._ensure_text_index()
        nodes.create_index([("fp", ASCENDING)], unique=True)
        nodes.create_index([("site", ASCENDING)])
        links.create_index([("source_fp", ASCENDING), ("target_fp", ASCENDING)], unique=True)
        links.create_index([("target_fp", ASCENDING)])
        links.create_index([("site", ASCENDING), ("link_class", ASCENDING)])

    def has_text_index(self) -> bool:
        for spec in self.c.articles.index_information().values():
            if any(kind == TEXT for _field, kind in spec.get("key", ())):
                return True
        return False

    def _ensure_text_index(self) -> None:
        if self.has_text_index():
            self.text_index = True
            return
        try:
            self.c.articles.create_index(
                [("title", TEXT), ("text", TEXT)],
                name="title_text",
                weights={"title": 3, "text": 1},
                default_language=self.text_language,
                language_override="text_language",
            )
        except OperationFailure as exc:
            if exc.code != CANNOT_CREATE_INDEX and "text" not in str(exc).lower():
                raise
            if self.text_index is not False:  # said once per store, not at every ensure_indexes
                logger.info("The server refuses text indexes (%s); search() uses a regex scan",
                            exc.code)
            self.text_index = False
            return
        self.text_index = True

    # -- writes ---------------------------------------------------------------------------------

    def write_pages(
        self,
        docs: Sequence[Mapping[str, Any]],
        *,
        now: dt.datetime | None = None,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> dict[str, int]:
        """Upsert page documents by ``fp``; store node links in ``links``.

        See :meth:`newscrawl.store.NewsStore.write_pages` for the arguments and results.
        """
        counts = dict.fromkeys(COUNT_KEYS, 0)
        specs: dict[str, list[Spec]] = {ARTICLES: [], NODES: [], LINKS: []}
        valid: list[Mapping[str, Any]] = []
        for doc in docs:
            kind, fp = doc.get("kind"), doc.get("fp")
            if kind not in ("article", "node") or not fp:
                counts["errors"] += 1
                logger.warning("Not storing a page with kind=%r fp=%r (%s)", kind, fp,
                               doc.get("url"))
                continue
            valid.append(doc)
            if kind == "article":
                specs[ARTICLES].append(page_spec(doc, now))
                continue
            specs[NODES].append(page_spec(doc, now))
            for link in doc.get("links") or ():
                spec = link_spec(link, doc, now)
                if spec is None:
                    counts["errors"] += 1
                else:
                    specs[LINKS].append(spec)

        done: set[str] = set()
        for name, key in ((ARTICLES, "articles"), (NODES, "nodes"), (LINKS, "links")):
            if specs[name]:
                try:
                    matched, created, errors = self.bulk.insert_or_upsert(
                        name, specs[name], retries, backoff)
                except (ConnectionFailure, OperationFailure) as exc:
                    if not is_transient(exc):
                        raise
                    unwritten = [
                        d for d in valid
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

    def update_weights(
        self, weights: Mapping[str, float], *, retries: int = 3, backoff: float = 0.5
    ) -> int:
        """Overwrite ``weight`` by ``fp`` in ``articles`` and ``nodes``; returns the number of
        documents whose weight changed (retried like :meth:`write_pages`)."""
        if not weights:
            return 0
        ops: list[WriteOp] = [UpdateOne({"fp": fp}, {"$set": {"weight": float(w)}})
                              for fp, w in weights.items()]
        modified = 0
        for name in (ARTICLES, NODES):
            write = functools.partial(self.c[name].bulk_write, ops, ordered=False)
            modified += retrying(name, write, retries, backoff).modified_count
        return modified

    # -- reads ----------------------------------------------------------------------------------

    def search(self, query: str, *, site: str | None = None, limit: int = 20,
               with_text: bool = False) -> list[Doc]:
        """Find articles by words of their title and text (see
        :meth:`newscrawl.store.NewsStore.search`)."""
        terms = search_terms(query)
        if not terms:
            return []
        if self.text_index is None:
            self.text_index = self.has_text_index()
        filt: dict[str, Any] = {"site": site} if site else {}
        projection: dict[str, Any] = {"_id": 0}
        if not with_text:
            projection["text"] = 0
        order: list[tuple[str, Any]]
        if self.text_index and not _CJK_CHARS.search(query):
            filt["$text"] = {"$search": query}
            projection["score"] = {"$meta": "textScore"}
            order = [("score", {"$meta": "textScore"}), ("weight", DESCENDING)]
        else:
            filt["$and"] = [
                {"$or": [{field: {"$regex": re.escape(term), "$options": "i"}}
                         for field in ("title", "text")]}
                for term in terms
            ]
            order = [("weight", DESCENDING), ("published", DESCENDING)]
        return list(self.c.articles.find(filt, projection).sort(order).limit(max(int(limit), 0)))

    def counts_by_class(self, site: str | None = None) -> dict[str, int]:
        """Number of stored links per ``link_class`` (``"unknown"`` when missing)."""
        pipeline: list[dict[str, Any]] = [{"$match": {"site": site}}] if site else []
        pipeline.append({"$group": {"_id": "$link_class", "n": {"$sum": 1}}})
        return {
            str(row["_id"]) if row["_id"] is not None else "unknown": int(row["n"])
            for row in self.c.links.aggregate(pipeline)
        }

    def document_counts(self) -> dict[str, int]:
        """Documents in ``articles``, ``nodes`` and ``links`` (the server's estimate: cheap)."""
        return {name: int(self.c[name].estimated_document_count())
                for name in (ARTICLES, NODES, LINKS)}

    def site_summary(self) -> list[dict[str, Any]]:
        """One row per site: ``{site, articles, nodes, newest, links: {class: n}}``."""
        rows: dict[Any, dict[str, Any]] = {}

        def row(site: Any) -> dict[str, Any]:
            return rows.setdefault(site, {"site": site, "links": {}})

        for doc in self.c.articles.aggregate([{"$group": {
                "_id": "$site", "n": {"$sum": 1}, "newest": {"$max": "$published"}}}]):
            row(doc["_id"]).update(articles=doc["n"], newest=doc.get("newest"))
        for doc in self.c.nodes.aggregate([{"$group": {"_id": "$site", "n": {"$sum": 1}}}]):
            row(doc["_id"])["nodes"] = doc["n"]
        for doc in self.c.links.aggregate([{"$group": {
                "_id": {"site": "$site", "cls": "$link_class"}, "n": {"$sum": 1}}}]):
            row(doc["_id"]["site"])["links"][doc["_id"]["cls"]] = doc["n"]
        return sorted(rows.values(), key=lambda r: str(r["site"]))

    def top_articles(self, limit: int = 10) -> list[Doc]:
        """The ``limit`` articles of highest weight: ``weight``, ``site``, ``title``, ``url``."""
        projection = {"_id": 0, "weight": 1, "site": 1, "title": 1, "url": 1}
        cursor = self.c.articles.find({}, projection).sort("weight", DESCENDING)
        return list(cursor.limit(max(int(limit), 0)))

    def story_signatures(self, since: dt.datetime | None = None) -> list[tuple[str, str, Any]]:
        """``(fp, story_id, minhash)`` of every article with a story, seen at or after ``since``
        (``last_seen``; None: all)."""
        filt: dict[str, Any] = {"story_id": {"$exists": True}, "minhash": {"$exists": True}}
        if since is not None:
            filt["last_seen"] = {"$gte": since}
        cursor = self.c.articles.find(filt, {"_id": 0, "fp": 1, "story_id": 1, "minhash": 1})
        return [(d["fp"], d["story_id"], d["minhash"]) for d in cursor
                if d.get("fp") and d.get("story_id") and d.get("minhash")]


def top_stories(store_or_collection: Any, since: dt.datetime | None = None,
                limit: int = 10) -> list[Doc]:
    """The stories carried by the most sites: articles first stored at or after ``since``
    (tz-aware; None: all) grouped by ``story_id``, sorted by number of sites, then articles,
    then the best NewsPageRank weight; at most ``limit``.

    Args:
        store_or_collection: a :class:`~newscrawl.store.NewsStore` (its ``articles``) or the
            ``articles`` collection itself.

    Returns:
        One dict per story: ``story_id``, ``sites`` (sorted list), ``site_count``, ``articles``,
        ``weight`` (the highest), ``first_seen`` (the earliest), and ``title`` / ``url`` of its
        highest-weight article.
    """
    articles = getattr(store_or_collection, "articles", store_or_collection)
    filt: dict[str, Any] = {"story_id": {"$exists": True}}
    if since is not None:
        filt["first_seen"] = {"$gte": since}
    projection = {"_id": 0, "story_id": 1, "site": 1, "title": 1, "url": 1, "weight": 1,
                  "first_seen": 1}
    stories: dict[str, dict[str, Any]] = {}
    for doc in articles.find(filt, projection):
        weight = float(doc.get("weight") or 0.0)
        row = stories.setdefault(doc["story_id"], {
            "story_id": doc["story_id"], "sites": set(), "articles": 0, "weight": -1.0,
            "first_seen": doc.get("first_seen"), "title": None, "url": None})
        row["sites"].add(doc.get("site"))
        row["articles"] += 1
        if doc.get("first_seen") and (row["first_seen"] is None
                                      or doc["first_seen"] < row["first_seen"]):
            row["first_seen"] = doc["first_seen"]
        if weight > row["weight"]:
            row.update(weight=weight, title=doc.get("title"), url=doc.get("url"))
    for row in stories.values():
        row["sites"] = sorted(str(s) for s in row["sites"] if s)
        row["site_count"] = len(row["sites"])
    ranked = sorted(stories.values(),
                    key=lambda r: (-r["site_count"], -r["articles"], -r["weight"], r["story_id"]))
    return ranked[:max(int(limit), 0)]
