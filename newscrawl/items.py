"""Items the ``news`` spider yields.

Every fetched page yields one item: :class:`ArticleItem` for content pages (``kind="article"``)
and :class:`NodeItem` for entry and channel pages (``kind="node"``). Field names are the MongoDB
field names (see the README's schema); datetimes are timezone-aware UTC, read from the run clock
(:class:`newscrawl.crawlstate.RunClock`). The fields of the page context (entry_url ...
parent_weight) come from :meth:`newscrawl.meta.PageContext.to_item`.
"""

from __future__ import annotations

import scrapy


class _PageFields(scrapy.Item):
    url = scrapy.Field()  # str: the fetched URL (after redirects)
    fp = scrapy.Field()  # str: 16 hex digits, the page fingerprint (newscrawl.fingerprint, page_fp)
    kind = scrapy.Field()  # "article" | "node"
    site = scrapy.Field()  # str: registered domain, e.g. "sina.com.cn"
    host = scrapy.Field()  # str: host name, e.g. "news.sina.com.cn"
    start_url = scrapy.Field()  # str: the StartURL the link was classified against
    entry_url = scrapy.Field()  # str: the analyst's entry URL this page was reached from
    link_class = scrapy.Field()  # "entry" | "downward" | "horizontal" | "crosswise" | "frame" ...
    role = scrapy.Field()  # "entry" | "node" | "content"
    depth = scrapy.Field()  # int: node-link depth below the entry URL (entry = 0)
    referer = scrapy.Field()  # str | None: the page holding the link
    features = scrapy.Field()  # dict[str, int]: NewsPageRank features of the in-link (0/1)
    parent_weight = scrapy.Field()  # float: weight of the page holding the in-link (entry: 1)
    r0 = scrapy.Field()  # float: Σ W_i·P_i of the in-link (after the floor remedy)
    weight = scrapy.Field()  # float: NewsPageRank r = r0 × r(parent); entry = 1
    title = scrapy.Field()  # str | None
    status = scrapy.Field()  # int: HTTP status
    encoding = scrapy.Field()  # str: charset the page was decoded with
    fetched_at = scrapy.Field()  # datetime (UTC), on the run clock


class ArticleItem(_PageFields):
    """A content page with the extracted article."""

    canonical_url = scrapy.Field()  # str | None
    published = scrapy.Field()  # datetime (UTC) | None
    published_source = scrapy.Field()  # str | None: jsonld, og, meta, url, htmldate ... (pubdate.py)
    published_confidence = scrapy.Field()  # float 0..1 | None
    #: str | None: ISO 8601 publication time in the publisher's UTC offset ("2024-10-01T09:30:00+02:00"),
    #: or its day ("2024-10-01") for day-precision answers (pubdate.py, rule 5)
    published_local = scrapy.Field()
    modified = scrapy.Field()  # datetime (UTC) | None: the page's own modification time
    authors = scrapy.Field()  # list[str]
    text = scrapy.Field()  # str: body text
    language = scrapy.Field()  # str | None: ISO 639-1
    description = scrapy.Field()  # str | None
    story_id = scrapy.Field()  # str: story (near-duplicate cluster) = fp of its first article
    minhash = scrapy.Field()  # str: MinHash signature, base64 of 32-bit values (stories.py)
    sources = scrapy.Field()  # list[dict]: {kind: feed|sitemap|channel, url, seen_at} known so far


class NodeItem(_PageFields):
    """An entry or channel page with its classified links."""

    link_counts = scrapy.Field()  # dict[str, int]: links per class on this page
    role_counts = scrapy.Field()  # dict[str, int]: {"node": n, "content": n}
    links = scrapy.Field()  # list[dict]: classified out-links (stored in the links collection)
    #: str | None: why a page fetched as an article is stored as a node: soft_404, calendar,
    #: archive, tag, author (newscrawl/algorithms/pagekind.py); None for channel pages
    page_kind = scrapy.Field()


class FeedItem(_PageFields):
    """A feed (RSS / Atom / RDF) or sitemap fetched as a source (``kind="node"``, role
    ``feed`` or ``sitemap``): stored with the channel pages; its entries become ``links``
    (middlewares/feeds.py)."""

    link_counts = scrapy.Field()  # dict[str, int]: entry links per class (feed, sitemap)
    role_counts = scrapy.Field()  # dict[str, int]: {"content": n, "sitemap": n}
    links = scrapy.Field()  # list[dict]: on-site entry links (stored in the links collection)
    feed_format = scrapy.Field()  # str | None: rss, atom, rdf, urlset, sitemapindex (the parser's)
    entries = scrapy.Field()  # int: entries in the file
    new_entries = scrapy.Field()  # int: entries the source did not list at its last visit
    skipped_entries = scrapy.Field()  # dict[str, int]: entries not requested, by reason
