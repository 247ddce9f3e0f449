"""The one package that talks to MongoDB: pages, links, weights, search, crawl state.

Callers hold a :class:`NewsStore` (:mod:`newscrawl.store.facade`) and see only its methods and
the exceptions :class:`StoreError` / :class:`StoreUnavailable`; nothing outside this package
imports pymongo or bson. The parts:

* :mod:`~newscrawl.store.base` — collection names, errors, the shared collection handles;
* :mod:`~newscrawl.store.bulk` — bulk writes with retries, inserts first where cheaper;
* :mod:`~newscrawl.store.pages` — ``articles``, ``nodes``, ``links``: write semantics, weights,
  search, counts;
* :mod:`~newscrawl.store.crawlstate` — ``pages`` (crawl-state records), ``hosts``,
  ``article_versions``, PageRank, eviction; "newer visit wins" without a collection scan;
* :mod:`~newscrawl.store.shadow` — ``staging`` and the merge of shadow runs;
* :mod:`~newscrawl.store.schedule` — ``schedule`` (``newscrawl schedule``);
* :mod:`~newscrawl.store.spillfiles` — spill files and their replay;
* :mod:`~newscrawl.store.upgrade` — the schema document and the fingerprint upgrade;
* :mod:`~newscrawl.store.rekey` — keys recomputed from stored URLs, colliding documents merged.

Server compatibility. The embedded server is SecantusDB (see :mod:`newscrawl.embedded`).
Checked against SecantusDB 0.7.0b3 (``buildInfo`` reports 8.2.11) with pymongo 4.20:

* supported: unordered ``bulk_write`` of ``UpdateOne(..., upsert=True)``; the update operators
  ``$set``, ``$setOnInsert``, ``$max`` (also on a missing field and on datetimes), ``$inc`` and
  ``$addToSet`` in upserts, with MongoDB's semantics (the same path in ``$set`` and
  ``$setOnInsert`` is refused with code 40, as by mongod); unique and compound indexes
  (``DuplicateKeyError``, code 11000); ``aggregate`` with ``$match``/``$group``; ``$regex`` with
  ``$options: "i"`` (also for non-ASCII letters: ``BÖRSE`` finds ``Börse``); ``tz_aware``
  datetimes; write concern ``j: true`` (it flushes the server's log: without it a server killed
  within ~50 ms of an acknowledged write loses that write); transactions; ``explain`` of
  ``find``, ``count`` and ``distinct``.
* query plans: a ``find`` uses an index only when every field of its filter is in that index
  (``{run, target}`` scans with an index on ``(run, seq)`` alone); a top-level ``$or`` or
  ``$expr`` always scans. An update whose filter is an ``_id`` equality plus plain field
  conditions finds its document through the ``_id`` index, although ``explain`` of an update
  reports a scan for every filter (even a bare ``_id``): write paths are checked by timing
  (``tests/test_store_queryshape.py``).
* not supported: text indexes — ``create_index`` with ``"text"`` fails with code 67
  ``CannotCreateIndex`` ("text indexes are not supported by SecantusDB") and a ``$text`` query
  fails with code 2 ``BadValue``. :meth:`NewsStore.ensure_indexes` then records
  ``text_index = False`` and :meth:`NewsStore.search` uses a case-insensitive regex instead.
* it advertises itself as the primary of a one-node replica set named ``secantus``, so pymongo
  reports a ``ReplicaSetWithPrimary`` topology; plain ``mongodb://127.0.0.1:PORT/`` URIs work.
  ``buildInfo`` carries a ``secantusVersion`` field, which tells it from a mongod.

Failures. pymongo reports an unreachable server as ``AutoReconnect`` /
``ServerSelectionTimeoutError`` (both ``ConnectionFailure``); the store's methods raise
:class:`StoreUnavailable` for those (after bounded retries with exponential backoff for the bulk
writes) and :class:`StoreError` for any other refusal. :meth:`NewsStore.write_pages`' exception
carries the unwritten documents; the caller writes them to a spill file with :func:`spill` and
later calls :meth:`NewsStore.replay_spill`.
"""

from newscrawl.store.base import (
    ARTICLES,
    HOSTS,
    LINKS,
    META,
    NODES,
    PAGES,
    SCHEDULE,
    STAGING,
    VERSIONS,
    StoreError,
    StoreUnavailable,
)
from newscrawl.store.bulk import INSERT_FIRST_MIN_NEW
from newscrawl.store.facade import NewsStore
from newscrawl.store.pages import COUNT_KEYS, top_stories
from newscrawl.store.spillfiles import load_spill, replay_state_spill, spill, spill_target
from newscrawl.store.upgrade import SCHEMA_VERSION

__all__ = [
    "ARTICLES",
    "COUNT_KEYS",
    "HOSTS",
    "INSERT_FIRST_MIN_NEW",
    "LINKS",
    "META",
    "NODES",
    "PAGES",
    "SCHEDULE",
    "SCHEMA_VERSION",
    "STAGING",
    "VERSIONS",
    "NewsStore",
    "StoreError",
    "StoreUnavailable",
    "load_spill",
    "spill",
    "spill_target",
    "replay_state_spill",
    "top_stories",
]
