"""Schema version of a store and the upgrade of stores written by older code.

The schema document (collection ``meta``, ``_id: "schema"``) holds ``version``
(:data:`SCHEMA_VERSION`), ``fingerprints`` (the fingerprints of :data:`PROBE_URLS` under the
fingerprint function the stored keys were computed with), ``upgraded_at`` and the counts of the
last upgrade. A store without one was written by code before schema 2 (or is new).

Schema 2 (issue 8): every URL fingerprint in the store is THE page fingerprint of the crawl,
the one its duplicate filter uses (:func:`newscrawl.fingerprint.page_fp`: host aliases and
``www.`` folded). Code before it stored ``url_fingerprint(url)`` without the folding, so
``http://www.example.com/a`` and ``http://example.com/a`` were two pages in the store and one in
the duplicate filter. :func:`upgrade` recomputes each key from the URL stored beside it:

=================== ============================ =================================================
collection          key                          URL field(s)
=================== ============================ =================================================
``pages``           ``_id`` (= ``fp``)           ``url`` (the requested URL)
``articles/nodes``  ``fp`` (unique)              ``url`` (the fetched URL, after redirects)
``links``           ``(source_fp, target_fp)``   ``source_url``, ``target_url``
``article_versions`` ``fp`` (``(fp, version)``)  ``url``
``staging``         in ``doc``: as above         as above (items with their ``links`` too)
=================== ============================ =================================================

``hosts`` (keyed by host name) and ``schedule`` (by registered domain) hold no fingerprint. A
document without its URL keeps its key. Records that now share a key are merged: the most
recently visited (``last_visit``, then ``visits``) or fetched (``fetched_at``/``last_seen``)
survives, with the earliest ``first_seen``, the highest ``weight`` and, for crawl-state
records, ``seed`` if any was a seed (a merged record's ``pagerank`` is reset, so the next run
recomputes PageRank); the versions of merged articles are renumbered in ``archived_at`` order.

Schema 3 (issue 14): ``article_versions`` holds one version per (article, content fingerprint),
under a unique index ``(fp, content_fp)`` (:mod:`newscrawl.store.versions`). Code before it could
keep the same old text twice when two crawls re-crawled an article at once;
:func:`newscrawl.store.versions.deduplicate` keeps the earliest of each, fills in ``content_fp``
and numbers each article's versions 1..n again (counts ``versions_removed``,
``versions_renumbered``).

The writes are ordered so that an upgrade cut short loses nothing and the next one completes
it (:mod:`newscrawl.store.rekey`). Running it again changes nothing (idempotent). A changed
fingerprint function (``NEWSCRAWL_ALIAS_FOLD_WWW`` switched) changes the probe fingerprints, and
the next :func:`upgrade` re-keys the store again; ``force=True`` re-keys it regardless (after a
change of ``NEWSCRAWL_HOST_ALIASES``).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable

from newscrawl.store.base import (
    ARTICLES,
    LINKS,
    NODES,
    PAGES,
    VERSIONS,
    Collections,
    Doc,
    StoreError,
    utcnow,
)
from newscrawl.store.rekey import Keyed, rekey, rekey_staging, renumber_versions
from newscrawl.store.versions import deduplicate

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
SCHEMA_ID = "schema"
#: URLs whose fingerprints identify the fingerprint function the stored keys were made with.
PROBE_URLS = ("http://www.example.com/", "https://Example.COM:443/a/?b=2&a=1#top",
              "http://news.example.org:8080/x")


def schema(collections: Collections) -> Doc | None:
    """The schema document, or None for a store written before schema 2 (or a new one)."""
    return collections.meta.find_one({"_id": SCHEMA_ID})


def upgrade(collections: Collections, page_fp: Callable[[str], str], *, force: bool = False,
            now: dt.datetime | None = None) -> dict[str, int]:
    """Bring the store to :data:`SCHEMA_VERSION` with keys from ``page_fp`` (module docstring).

    Returns:
        ``version``, ``from_version`` (1: no schema document), and per collection the documents
        re-keyed (``pages``, ``articles``, ``nodes``, ``links``, ``versions``, ``staging``) and
        merged away (``pages_merged``, ``articles_merged``, ``nodes_merged``, ``links_merged``,
        ``versions_renumbered``, ``versions_removed``); all zero when the store was up to date.

    Raises:
        StoreError: the store was written by newer code (a higher schema version).
    """
    current = schema(collections) or {}
    version = int(current.get("version") or 1)
    if version > SCHEMA_VERSION:
        raise StoreError(f"The store {collections.db.name!r} has schema version {version}; this "
                         f"code knows versions up to {SCHEMA_VERSION}: use newer newscrawl code")
    page_fp = functools.lru_cache(maxsize=1 << 18)(page_fp)  # links repeat their URLs
    probe = [page_fp(url) for url in PROBE_URLS]
    counts = {"version": SCHEMA_VERSION, "from_version": version}
    names = (PAGES, ARTICLES, NODES, LINKS)
    for name in names:
        counts[name] = counts[f"{name}_merged"] = 0
    counts.update(versions=0, versions_renumbered=0, versions_removed=0, staging=0)
    rekeyed = version < 2 or current.get("fingerprints") != probe or force
    if version == SCHEMA_VERSION and not rekeyed:
        return counts
    stored = (*names, VERSIONS, collections.staging.name)
    if rekeyed and any(collections[name].find_one({}, {"_id": 1}) for name in stored):
        logger.info("Store %r %s: recomputing the stored URL fingerprints (once; a few ms per "
                    "document that changes)", collections.db.name,
                    f"written by older code (schema {version})" if version < SCHEMA_VERSION
                    else "keyed by another page fingerprint")
        for name in names:
            counts[name], counts[f"{name}_merged"] = rekey(collections[name],
                                                           Keyed(name, page_fp))
        counts["versions"], counts["versions_renumbered"] = renumber_versions(
            collections[VERSIONS], page_fp)
        counts["staging"] = rekey_staging(collections.staging, page_fp)
    if version < 3 or rekeyed:  # merged articles may now hold one old text twice
        removed, renumbered = deduplicate(collections[VERSIONS])
        counts["versions_removed"] = removed
        counts["versions_renumbered"] += renumbered
    collections.meta.replace_one(
        {"_id": SCHEMA_ID},
        {"version": SCHEMA_VERSION, "fingerprints": probe, "upgraded_at": now or utcnow(),
         "from_version": version, "counts": counts},
        upsert=True,
    )
    changed = {k: v for k, v in counts.items() if v and k not in ("version", "from_version")}
    logger.info("Store %r at schema version %d (was %d): %s", collections.db.name,
                SCHEMA_VERSION, version,
                f"documents re-keyed, merged or removed: {changed}" if changed
                else "no document changed")
    return counts
