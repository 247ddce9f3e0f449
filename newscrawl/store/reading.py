"""Analysts' reads: stored articles, their versions and the crawl's sources, streamed.

``newscrawl export`` and ``newscrawl report`` read through these methods (via
:class:`~newscrawl.store.facade.NewsStore`): every read is a server cursor fetched in batches of
``batch_size`` documents, so a store of millions of articles is never held in memory.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from newscrawl.store.base import Collections, Doc

#: Crawl-state fields of a source (a page that lists articles: entry, channel, feed, sitemap).
SOURCE_FIELDS = ("url", "site", "host", "role", "kind", "rate", "last_visit", "visits", "first_seen")


def article_filter(*, since: dt.datetime | None = None, site: str | None = None,
                   host: str | None = None, seen_since: dt.datetime | None = None) -> Doc:
    """The ``articles`` filter of an export: first stored at or after ``since`` (tz-aware), of
    one registered domain ``site`` and / or one ``host``, last stored (written) at or after
    ``seen_since`` (the search index's catch-up); ``{}`` for all."""
    query: Doc = {}
    if since is not None:
        query["first_seen"] = {"$gte": since}
    if seen_since is not None:
        query["last_seen"] = {"$gte": seen_since}
    if site:
        query["site"] = site
    if host:
        query["host"] = host
    return query


class AnalystReader:
    """Streaming reads of ``articles``, ``article_versions`` and ``pages``."""

    def __init__(self, collections: Collections) -> None:
        self.c = collections

    def iter_articles(self, query: Mapping[str, Any], *, fields: Sequence[str] | None = None,
                      batch_size: int = 500) -> Iterator[Doc]:
        """Articles matching ``query`` (without ``_id``; only ``fields`` when given), in the
        server's order, ``batch_size`` documents per round trip."""
        projection: Doc = {"_id": 0}
        if fields:
            projection.update({name: 1 for name in fields})
        yield from self.c.articles.find(dict(query), projection, batch_size=max(int(batch_size), 1))

    def find_article(self, key: str) -> Doc | None:
        """The article whose ``fp``, ``url`` or ``canonical_url`` is ``key`` (without ``_id``),
        or None."""
        for field in ("fp", "url", "canonical_url"):
            doc = self.c.articles.find_one({field: key}, {"_id": 0})
            if doc is not None:
                return dict(doc)
        return None

    def versions_of(self, fps: Sequence[str]) -> list[Doc]:
        """The stored previous versions of the articles ``fps`` (without ``_id``), by ``fp``
        then ``version``."""
        if not fps:
            return []
        docs = list(self.c.versions.find({"fp": {"$in": list(fps)}}, {"_id": 0}))
        return sorted(docs, key=lambda d: (str(d.get("fp")), int(d.get("version") or 0)))

    def iter_sources(self, *, batch_size: int = 500) -> Iterator[Doc]:
        """Crawl-state records of every page that lists articles (``role`` other than
        ``content``: entry and channel pages, feeds, sitemaps), with :data:`SOURCE_FIELDS`."""
        projection: Doc = {"_id": 0, **{name: 1 for name in SOURCE_FIELDS}}
        yield from self.c.pages.find({"role": {"$ne": "content"}}, projection,
                                     batch_size=max(int(batch_size), 1))

    def newest_capture(self) -> dt.datetime | None:
        """The latest ``first_seen`` of any article (None for an empty store)."""
        for doc in self.c.articles.find({}, {"_id": 0, "first_seen": 1}).sort(
                "first_seen", -1).limit(1):
            value = doc.get("first_seen")
            return value if isinstance(value, dt.datetime) else None
        return None
