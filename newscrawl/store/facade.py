""":class:`NewsStore`: the one object callers hold; each verb is done by one part of the package
(:mod:`newscrawl.store`), all sharing one :class:`~newscrawl.store.base.Collections`. Every
method blocks on the network: Scrapy components call them off the reactor thread.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pymongo import MongoClient
from pymongo.database import Database
from pymongo.errors import PyMongoError

from newscrawl import defaults
from newscrawl.store import spillfiles
from newscrawl.store import upgrade as upgrade_mod
from newscrawl.store.base import Collections, Doc, guarded, guarded_iter
from newscrawl.store.bulk import BulkWriter
from newscrawl.store.crawlstate import CrawlStateStore
from newscrawl.store.pages import PageStore, top_stories
from newscrawl.store.reading import AnalystReader, article_filter
from newscrawl.store.schedule import ScheduleStore
from newscrawl.store.shadow import ShadowStore


class NewsStore:
    """Pages, links, weights and crawl state of the crawl in one MongoDB database.

    Args:
        db: the database (its client must use ``tz_aware=True``).
        client: the client to close in :meth:`close` (given by :meth:`connect`).
        text_language: ``default_language`` of the text index on a real MongoDB.
        journal: write page bodies, links, versions and staging with ``j: true`` (added to the
            database's write concern): a write is acknowledged once it is in the server's journal,
            so a server killed right after an acknowledged batch keeps it (SecantusDB otherwise
            flushes its log every ~50 ms, mongod every 100 ms). One journal flush per bulk write.

    Errors: every method raises :class:`StoreUnavailable` when the server is unreachable (after
    the retries of the methods that have them) and :class:`StoreError` when it refuses an
    operation; never a pymongo error.

    Attributes:
        db, client: the database and the client :meth:`close` closes (None: borrowed).
        articles, nodes, links, pages, hosts, versions, staging, schedule: the collections, for
            analysts and tests (components use the methods).
        text_index: True when ``articles`` has a text index, False when the server refused one,
            None before :meth:`ensure_indexes`.
    """

    def __init__(self, db: Database[Doc], *, client: MongoClient[Doc] | None = None,
                 text_language: str = "none", journal: bool = True) -> None:
        self.db = db
        self.client = client
        self.collections = Collections(db, client, journal=journal)
        #: collection name -> handle (tests swap a handle to simulate a failing server)
        self._collections = self.collections.by_name
        self.bulk = BulkWriter(self.collections)
        self._pages = PageStore(self.collections, self.bulk, text_language=text_language)
        self._state = CrawlStateStore(self.collections, self.bulk)
        self._shadow = ShadowStore(self.collections)
        self._schedule = ScheduleStore(self.collections)
        self._reader = AnalystReader(self.collections)
        c = self.collections
        self.articles, self.nodes, self.links = c.articles, c.nodes, c.links
        self.pages, self.hosts, self.versions = c.pages, c.hosts, c.versions
        self.staging, self.schedule = c.staging, c.schedule

    @classmethod
    def connect(cls, uri: str, database: str = defaults.NEWSCRAWL_MONGO_DATABASE, *,
                timeout: float = defaults.NEWSCRAWL_MONGO_TIMEOUT,
                journal: bool = True) -> NewsStore:
        """Create a client for ``uri`` (``tz_aware=True``) and a store on ``database``.

        No network traffic happens here; an unreachable server shows up at the first operation
        as :class:`StoreUnavailable` after ``timeout`` seconds.

        Args:
            timeout: server selection and connect timeout (seconds).
            journal: see the class.

        Raises:
            ValueError: a malformed URI.
        """
        ms = max(int(timeout * 1000), 1)
        try:
            client: MongoClient[Doc] = MongoClient(
                uri, tz_aware=True, serverSelectionTimeoutMS=ms, connectTimeoutMS=ms,
                appname="newscrawl")
        except PyMongoError as exc:  # ConfigurationError, InvalidURI
            raise ValueError(f"Malformed MongoDB URI: {exc}") from exc
        return cls(client[database], client=client, journal=journal)

    def close(self) -> None:
        """Close the client created by :meth:`connect` (no-op for a borrowed database)."""
        if self.client is not None:
            self.client.close()

    def __enter__(self) -> NewsStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def client_or_db_client(self) -> MongoClient[Doc]:
        """The client of this store's database (the one :meth:`connect` made, or the borrowed
        database's own)."""
        return self.collections.client

    @property
    def text_index(self) -> bool | None:
        return self._pages.text_index

    # -- schema, indexes ------------------------------------------------------------------------

    @guarded("upgrading the store")
    def upgrade(self, page_fp: Callable[[str], str], *, force: bool = False,
                now: dt.datetime | None = None) -> dict[str, int]:
        """Bring a store written by older code to the current schema (idempotent; cheap when
        it is current: one read). Recomputes every stored URL fingerprint with ``page_fp``
        (``url -> 16 hex digits``, the crawl's one fingerprint) and merges records that now
        collide (:mod:`newscrawl.store.upgrade`). Call it once at open, before any write.

        Args:
            page_fp: the page fingerprint of a URL.
            force: re-key even when the schema document says the keys are current (after a
                change of ``NEWSCRAWL_HOST_ALIASES``).
            now: time stamp of the upgrade (default: the wall clock).

        Returns:
            Counts (``version``, ``from_version``, documents re-keyed and merged per collection).

        Raises:
            StoreError: the store has a newer schema (written by newer code).
        """
        return upgrade_mod.upgrade(self.collections, page_fp, force=force, now=now)

    @guarded("reading the schema")
    def schema_version(self) -> int:
        """The schema version of the stored data (1: written before schema documents)."""
        return int((upgrade_mod.schema(self.collections) or {}).get("version") or 1)

    @guarded("creating indexes")
    def ensure_indexes(self) -> None:
        """Create the indexes of the page collections (idempotent): articles: unique ``fp``;
        ``(site, published desc)``; ``weight desc``; text on ``(title ×3, text)`` when the
        server supports it (sets :attr:`text_index`). nodes: unique ``fp``; ``site``. links:
        unique ``(source_fp, target_fp)``; ``target_fp``; ``(site, link_class)``.

        Raises:
            StoreError: the server refuses an index (other than the text index).
        """
        self._pages.ensure_indexes()

    @guarded("creating crawl-state indexes")
    def ensure_state_indexes(self) -> None:
        """Indexes of the crawl-state collections (idempotent): ``pages``: ``due``, ``host``,
        ``seed``; ``article_versions``: unique ``(fp, version)`` and ``(fp, content_fp)``;
        ``staging``: ``(run, seq)``,
        ``(target, run)``.
        """
        self._state.ensure_state_indexes()

    # -- pages ----------------------------------------------------------------------------------

    @guarded("writing pages")
    def write_pages(self, docs: Sequence[Mapping[str, Any]], *, now: dt.datetime | None = None,
                    retries: int = 3, backoff: float = 0.5) -> dict[str, int]:
        """Upsert page documents by ``fp``; store node links in ``links``
        (:mod:`newscrawl.store.pages`: ``first_seen`` once, ``weight`` the maximum).

        Args:
            docs: page dicts (item fields, see :mod:`newscrawl.items`); ``kind`` is
                ``"article"`` (→ ``articles``) or ``"node"`` (→ ``nodes``, its ``links`` list of
                dicts → ``links``, keyed by ``(source_fp, target_fp)``). A doc without ``fp`` or
                with another kind is counted in ``errors`` and skipped.
            now: the run clock, for documents without a ``fetched_at``: ``first_seen`` (of new
                documents) and ``last_seen`` are the doc's ``fetched_at``, else ``now``, else the
                wall clock (replays from the command line).
            retries: further attempts after a connection failure.
            backoff: seconds before the first retry; doubled for each next one.

        Returns:
            ``{"articles", "nodes", "links"}``: documents matched or inserted per collection;
            ``{"new_articles", "new_nodes", "new_links"}``: of which inserted; ``"errors"``:
            documents skipped or refused by the server (logged). Keys: :data:`COUNT_KEYS`.

        Raises:
            StoreUnavailable: the server stayed unreachable; ``.docs`` holds the docs not
                (completely) written. Writes are idempotent, so replaying them is safe.
            StoreError: the server refused the whole batch for another reason than availability
                (authorisation, for example).
        """
        return self._pages.write_pages(docs, now=now, retries=retries, backoff=backoff)

    @guarded("updating weights")
    def update_weights(self, weights: Mapping[str, float], *, retries: int = 3,
                       backoff: float = 0.5) -> int:
        """Overwrite ``weight`` by ``fp`` in ``articles`` and ``nodes`` (fps not stored are
        ignored); retried as :meth:`write_pages` (seconds). Returns the documents changed.
        """
        return self._pages.update_weights(weights, retries=retries, backoff=backoff)

    def replay_spill(self, path: str | Path, *, batch_size: int = 500, retries: int = 3,
                     backoff: float = 0.5) -> dict[str, int]:
        """Write a spill file (:func:`newscrawl.store.spill`) back into the store, in batches
        of ``batch_size`` (``retries``, ``backoff`` as for :meth:`write_pages`), and remove it.

        The file is first renamed to ``<path>.replay-<pid>`` so that new spills go to a fresh
        ``path``; leftovers of an interrupted replay are replayed too. When the server goes
        away again, the docs not yet written are appended to ``path`` again and
        :class:`StoreUnavailable` is raised (nothing is lost; writes are idempotent). Documents
        keep their own ``fetched_at`` as seen time. Returns the summed counts of
        :meth:`write_pages` (all zero when there is nothing to replay).

        Raises:
            OSError: the file cannot be read, renamed or removed.
        """
        return spillfiles.replay_spill(self.write_pages, path, batch_size=batch_size,
                                      retries=retries, backoff=backoff)

    @guarded("searching articles")
    def search(self, query: str, *, site: str | None = None, limit: int = 20,
               with_text: bool = False) -> list[Doc]:
        """Find articles of ``site`` (or all) by words of their title and text; at most
        ``limit``, without ``_id``, with their ``text`` only if ``with_text``. A ``$text`` search
        where a text index exists, else every term must occur (:mod:`newscrawl.store.pages`)."""
        return self._pages.search(query, site=site, limit=limit, with_text=with_text)

    @guarded("counting links")
    def counts_by_class(self, site: str | None = None) -> dict[str, int]:
        """Number of stored links per ``link_class`` (``"unknown"`` when missing), of one
        registered domain ``site`` or of all."""
        return self._pages.counts_by_class(site)

    @guarded("counting documents")
    def document_counts(self) -> dict[str, int]:
        """``{"articles", "nodes", "links"}``: documents stored (the server's cheap estimate,
        for end-of-run summaries)."""
        return self._pages.document_counts()

    @guarded("summarising sites")
    def site_summary(self) -> list[dict[str, Any]]:
        """One row per site: ``{site, articles, nodes, newest, links: {class: n}}`` (``newest``:
        latest publication time)."""
        return self._pages.site_summary()

    @guarded("reading top articles")
    def top_articles(self, limit: int = 10) -> list[Doc]:
        """The ``limit`` articles of highest weight (``weight``, ``site``, ``title``, ``url``)."""
        return self._pages.top_articles(limit)

    @guarded("reading story signatures")
    def story_signatures(self, since: dt.datetime | None = None) -> list[tuple[str, str, Any]]:
        """``(fp, story_id, minhash)`` of every stored article with a story whose ``last_seen``
        is at or after ``since`` (tz-aware; None: all): the state of
        :class:`newscrawl.algorithms.stories.StoryClusterer` (``restore``)."""
        return self._pages.story_signatures(since)

    @guarded("reading top stories")
    def top_stories(self, since: dt.datetime | None = None, limit: int = 10) -> list[Doc]:
        """The stories carried by the most sites (:func:`newscrawl.store.pages.top_stories`)."""
        return top_stories(self, since, limit)

    # -- analysts' reads (newscrawl export / report) ---------------------------------------------

    def iter_articles(self, *, since: dt.datetime | None = None, site: str | None = None,
                      host: str | None = None, fields: Sequence[str] | None = None,
                      batch_size: int = 500,
                      seen_since: dt.datetime | None = None) -> Iterator[Doc]:
        """Stored articles first stored at or after ``since`` (tz-aware), of registered domain
        ``site`` and / or ``host`` (None: all), last written at or after ``seen_since``,
        streamed ``batch_size`` per round trip, without ``_id`` (only ``fields`` when given).
        Raises :class:`StoreError` while iterating."""
        query = article_filter(since=since, site=site, host=host, seen_since=seen_since)
        return guarded_iter(self._reader.iter_articles(query, fields=fields, batch_size=batch_size),
                            "reading articles")

    @guarded("reading an article")
    def find_article(self, key: str) -> Doc | None:
        """The stored article whose fingerprint, URL or canonical URL is ``key`` (None: none)."""
        return self._reader.find_article(key)

    @guarded("reading article versions")
    def versions_of(self, fps: Sequence[str]) -> list[Doc]:
        """The previous versions (``article_versions``) of the articles ``fps``, by fp and
        version number."""
        return self._reader.versions_of(fps)

    def iter_sources(self, *, batch_size: int = 500) -> Iterator[Doc]:
        """Crawl-state records of the pages that list articles (entry and channel pages, feeds,
        sitemaps): ``url, site, host, role, kind, rate`` (new links per hour), ``last_visit,
        visits, first_seen``. Raises :class:`StoreError` while iterating."""
        return guarded_iter(self._reader.iter_sources(batch_size=batch_size), "reading sources")

    @guarded("reading the newest capture")
    def newest_capture(self) -> dt.datetime | None:
        """The latest ``first_seen`` of any stored article (None for an empty store)."""
        return self._reader.newest_capture()

    @guarded("reading discovered sources")
    def discovered_sources(self) -> list[dict[str, Any]]:
        """The feeds and sitemaps discovered per site, as the crawl keeps them in ``hosts``
        (the registered domain's document, field ``sources``): one row per source
        ``{site, url, kind, via, first_seen}`` (``first_seen`` epoch seconds), by site and URL."""
        rows = []
        for doc in self.hosts.find({"sources": {"$exists": True}}, {"sources": 1}):
            for source in doc.get("sources") or ():
                if isinstance(source, dict) and source.get("url"):
                    rows.append({"site": doc["_id"], **source})
        return sorted(rows, key=lambda r: (str(r["site"]), str(r["url"])))

    # -- crawl state ----------------------------------------------------------------------------

    @guarded("reading crawl state")
    def load_state(self) -> tuple[list[Doc], list[Doc]]:
        """Every crawl-state record and every host policy: ``(pages, hosts)``.
        """
        return self._state.load_state()

    @guarded("writing crawl state")
    def write_state(self, new_docs: Sequence[Mapping[str, Any]],
                    old_docs: Sequence[Mapping[str, Any]], *, retries: int = 3,
                    backoff: float = 0.5) -> int:
        """Write crawl-state records (documents with ``_id``): ``new_docs`` are inserted (a bulk
        insert is ~10x cheaper than an upsert on SecantusDB), ``old_docs`` replace the stored
        record; a "new" record that exists after all (another crawl wrote it) is replaced too.

        Newer visit wins: workers sharing a store each hold the state they loaded at their
        start, so a record only replaces a stored one that is missing, unvisited or visited no
        later (an unvisited record replaces only an unvisited one), with a filter the server
        answers through the ``_id`` index (:mod:`newscrawl.store.crawlstate`). A record that
        lost is skipped, not counted. Returns the number of records written.

        Raises:
            StoreUnavailable: the server stayed unreachable (``.docs`` is empty: the caller
                keeps its records dirty and writes them again later).
        """
        return self._state.write_state(new_docs, old_docs, retries=retries, backoff=backoff)

    @guarded("reading pending pages")
    def pending_pages(self) -> list[Doc]:
        """Crawl-state records of pages known and never visited (links found, not fetched:
        the durable frontier), evicted ones left out."""
        return self._state.pending_pages()

    @guarded("reading the frontier marker")
    def frontier_marker(self, namespace: str) -> str | None:
        """The run marker of the shared (Redis) frontier ``namespace`` last saved, or None."""
        return self._state.frontier_marker(namespace)

    @guarded("saving the frontier marker")
    def save_frontier_marker(self, namespace: str, marker: str, *, at: dt.datetime) -> None:
        """Keep ``marker`` as the run marker of the shared frontier ``namespace`` (collection
        ``meta``, ``_id: "frontier:<namespace>"``)."""
        self._state.save_frontier_marker(namespace, marker, at=at)

    @guarded("writing host policies")
    def write_hosts(self, docs: Sequence[Mapping[str, Any]]) -> None:
        """Replace host policies (documents with ``_id`` = host name), created when missing."""
        self._state.write_hosts(docs)

    @guarded("archiving a version")
    def archive_version(self, fp: str, new: Mapping[str, Any], *, archived_at: dt.datetime,
                        stage_run: str | None = None) -> dict[str, Any] | None:
        """Keep the stored version of article ``fp`` before ``new`` overwrites it: the stored
        title, text, dates and authors go to ``article_versions`` as version ``n`` (1 = the
        first one stored) with ``content_fp`` and ``diff``, the summary of the change to
        ``new`` (:func:`newscrawl.algorithms.changedetect.version_diff`), once per (article,
        content fingerprint) even with crawls running at once (:mod:`newscrawl.store.versions`).
        With ``stage_run`` the version is staged for that shadow run instead. Returns the
        version written, or None: no article ``fp`` stored, the stored text already is
        ``new``'s, or that old text was kept before."""
        version = self._state.previous_version(fp, new, archived_at=archived_at)
        if version is None:
            return None
        if stage_run:
            self._shadow.stage(stage_run, "versions", [version])
            return version
        return self._state.insert_version(version)

    def link_edges(self) -> Iterator[tuple[str, str]]:
        """``(source_fp, target_fp)`` of every stored link (the graph PageRank runs on), read
        lazily. Raises :class:`StoreUnavailable` while iterating."""
        return guarded_iter(self._state.link_edges(), "reading links")

    @guarded("writing PageRank")
    def update_pagerank(self, values: Mapping[str, float], *, retries: int = 3,
                        backoff: float = 0.5) -> int:
        """Set ``pagerank`` of crawl-state records by fingerprint; returns records matched.
        """
        return self._state.update_pagerank(values, retries=retries, backoff=backoff)

    @guarded("evicting pages")
    def evict(self, fps: Sequence[str], *, at: dt.datetime) -> int:
        """Evict pages: delete their bodies (``articles``/``nodes`` documents) and mark their
        records ``evicted`` at ``at`` (the run clock; kept, so the URL is not fetched again as
        new; never due). Returns the number of page bodies deleted.
        """
        return self._state.evict(fps, at=at)

    # -- shadow update mode ---------------------------------------------------------------------

    @guarded("staging writes")
    def stage(self, run: str, target: str, docs: Sequence[Mapping[str, Any]]) -> int:
        """Append ``docs`` to the ``staging`` collection for run ``run``: ``target`` is
        ``"items"`` (page documents as for :meth:`write_pages`), ``"pages"`` (crawl-state
        records), ``"hosts"`` or ``"versions"``. Returns the number staged."""
        return self._shadow.stage(run, target, docs)

    @guarded("reading staged runs")
    def committed_runs(self) -> list[str]:
        """Ids of runs whose merge started but did not finish (to be completed; oldest first)."""
        return self._shadow.committed_runs()

    @guarded("reading staged runs")
    def staged_runs(self) -> list[str]:
        """Ids of runs with staged writes not merged yet (oldest first)."""
        return self._shadow.staged_runs()

    @guarded("merging a shadow run")
    def merge_staged(self, run: str, *, now: dt.datetime | None = None) -> dict[str, Any]:
        """Merge run ``run``'s staged writes into the live collections and drop them: one
        transaction where the server has them (``atomic``), else idempotent upserts completed
        by the next call when cut short (:mod:`newscrawl.store.shadow`). Item documents keep
        :meth:`write_pages`' semantics (seen at their ``fetched_at``, else ``now``); ``now`` (the
        run clock) also stamps the commit marker (None: the wall clock).

        Returns:
            ``{"items", "pages", "hosts", "versions"}`` documents merged, and ``"atomic"``.
        """
        return self._shadow.merge_staged(run, now=now)

    # -- recurring crawls (newscrawl.schedule) --------------------------------------------------

    @guarded("reading the schedule")
    def load_schedule(self) -> dict[str, Doc]:
        """Run state of every site: ``{site: document}`` (``_id`` removed)."""
        return self._schedule.load_schedule()

    @guarded("writing the schedule")
    def save_schedule(self, site: str, state: Mapping[str, Any]) -> None:
        """Replace the run state of ``site`` (created when missing)."""
        self._schedule.save_schedule(site, state)

    @guarded("counting new articles")
    def count_new_articles(self, site: str, since: dt.datetime) -> int:
        """Articles of ``site`` (registered domain) first stored at or after ``since``
        (tz-aware)."""
        return self._schedule.count_new_articles(site, since)

