"""Feed and sitemap entries as article links of a site (issue 12; DESIGN §7).

Pure functions between the parsing layer (:mod:`newscrawl.algorithms.feeds`: entries of RSS /
Atom feeds and sitemaps) and the crawl: which entries become article requests, under which URL,
with which record of where they were seen.

* :func:`entry_verdict` — one entry link against the site's entry URL with seed 004's link
  classes (:func:`newscrawl.algorithms.linkclass.classify_link`; redirector links such as ``go.rss.sina.com.cn/redirect.php?url=`` are
  unwrapped by the parser): another registered domain, or another port than the site's
  (:func:`is_offsite`, the rule of the link classifier), is ``offsite`` (dropped), a service link (shop, login …,
  :meth:`newscrawl.algorithms.linkrules.LinkRules.service_reason`) is ``service``, the rest is
  ``content``. Feeds list articles, so the directory grouping of channel pages (which needs a
  whole page of links) is not applied;
* :func:`merge_source` — a page's ``sources`` list (``[{kind, url, seen_at}]``: every feed,
  sitemap and channel page that listed it, the first sighting of each kept);
* :func:`sitemap_pick` — which entries of a sitemap are worth a request: every entry of a news
  sitemap, entries of a plain sitemap modified within ``max_age`` (a site's archive sitemap lists
  every page it ever published), child sitemaps of an index likewise, at most ``limit``.

No Scrapy, Twisted or database import.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from newscrawl.algorithms.feeds import SitemapStats, parse_feed, parse_sitemap, sniff_kind
from newscrawl.algorithms.linkclass import LinkClass, StartURL, classify_link, is_article_shaped
from newscrawl.algorithms.linkrules import DEFAULT_RULES, LinkRules

#: Kinds of article sources (the ``kind`` of a ``sources`` entry and of a discovered source).
FEED: Final = "feed"
SITEMAP: Final = "sitemap"
CHANNEL: Final = "channel"
SOURCE_KINDS: Final = (FEED, SITEMAP, CHANNEL)
#: Page roles of feeds and sitemaps (channel-like pages scheduled by their yield).
SOURCE_ROLES: Final = frozenset({FEED, SITEMAP})

#: Verdicts of :func:`entry_verdict`.
CONTENT: Final = "content"
OFFSITE: Final = "offsite"
SERVICE: Final = "service"
INVALID: Final = "invalid"

def is_offsite(start: StartURL, url: str) -> bool:
    """True when ``url`` is not a page of the site of ``start`` by the link classifier's rule
    (:func:`newscrawl.algorithms.linkclass.classify_link` says OUTWARD: another registered
    domain, or another explicit port, 80 / 443 being the same as none), or is no absolute
    http(s) URL. Used for feed and sitemap entries, child sitemaps and discovered sources.

    >>> start = StartURL.parse("http://127.0.0.1:18711/")
    >>> is_offsite(start, "http://127.0.0.1:18712/secret.html")
    True
    >>> is_offsite(start, "http://127.0.0.1:18711/a.html")
    False
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return True
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return True
    return classify_link(start, url) is LinkClass.OUTWARD


def entry_verdict(start: StartURL, url: str, *, rules: LinkRules = DEFAULT_RULES) -> str:
    """What one feed or sitemap entry link is for the site of ``start`` (module docstring):
    :data:`CONTENT`, :data:`OFFSITE` (another registered domain or another port,
    :func:`is_offsite`), :data:`SERVICE` or :data:`INVALID` (not an absolute http(s) URL)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return INVALID
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return INVALID
    if is_offsite(start, url):
        return OFFSITE
    if rules.service_reason(url, start.domain, article_shaped=is_article_shaped(url),
                            own_host=start.host):
        return SERVICE
    return CONTENT


def merge_source(sources: Any, kind: str, url: str, seen_at: float) -> list[dict[str, Any]] | None:
    """``sources`` with ``{kind, url, seen_at}`` added, or None when it holds that ``(kind,
    url)`` already (the first sighting is kept: no duplicates). ``seen_at`` is epoch seconds.

    >>> merge_source([{"kind": "feed", "url": "f", "seen_at": 1.0}], "feed", "f", 2.0) is None
    True
    >>> [s["kind"] for s in merge_source(None, "channel", "c", 3.0)]
    ['channel']
    """
    kept = [dict(s) for s in sources if isinstance(s, Mapping)] if isinstance(sources, list) else []
    if any(s.get("kind") == kind and s.get("url") == url for s in kept):
        return None
    kept.append({"kind": kind, "url": url, "seen_at": float(seen_at)})
    return kept


def _epoch(value: Any) -> float | None:
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc).timestamp()
    if isinstance(value, (int, float)):
        return float(value)
    return None


def is_child_sitemap(url: str) -> bool:
    """True for the URL of a sitemap (``….xml``, ``….xml.gz``, ``sitemap`` in the last
    segment): an entry of a sitemap index."""
    path = urlsplit(url).path.lower()
    last = path.rsplit("/", 1)[-1]
    return last.endswith((".xml", ".xml.gz")) or "sitemap" in last


def sitemap_pick(entries: Iterable[Any], *, now: float, max_age: float,
                 limit: int) -> tuple[list[Any], int]:
    """``(picked, skipped)``: the entries of one sitemap worth a request (module docstring).

    Args:
        entries: :class:`newscrawl.algorithms.feeds.SitemapEntry` objects (``url``,
            ``lastmod``, ``news_publication_date``, ``is_sitemap``), in file order.
        now: the run clock (epoch seconds); max_age: seconds; limit: most entries picked.
    """
    picked: list[Any] = []
    skipped = 0
    for entry in entries:
        news = _epoch(getattr(entry, "news_publication_date", None))
        when = news if news is not None else _epoch(getattr(entry, "lastmod", None))
        recent = when is None or now - when <= max_age
        # A plain sitemap without dates is an archive: only its child sitemaps are followed.
        child = bool(getattr(entry, "is_sitemap", False)) or is_child_sitemap(entry.url)
        undated_page = when is None and not child
        if len(picked) >= limit or not recent or undated_page:
            skipped += 1
            continue
        picked.append(entry)
    return picked, skipped


def date_hint(kind: str, published: Any, updated: Any = None) -> dict[str, Any]:
    """The date candidate an entry gives its article (:mod:`newscrawl.algorithms.pubdate`):
    ``{"feed_date": …}`` or ``{"sitemap_date": …}`` as an ISO 8601 string, ``{}`` without a
    date. A feed entry's ``updated`` stands in when it has no ``published``."""
    when = published if published is not None else updated
    if isinstance(when, dt.datetime):
        when = when.isoformat()
    if not isinstance(when, str) or not when:
        return {}
    return {"sitemap_date" if kind == SITEMAP else "feed_date": when}


def site_sources(current: Sequence[Mapping[str, Any]] | None, url: str, kind: str, via: str,
                 seen_at: float) -> list[dict[str, Any]] | None:
    """A site's discovered sources with ``{url, kind, via, first_seen}`` added, or None when it
    is listed already (``via``: ``alternate``, ``robots``, ``seed``, ``index``)."""
    kept = [dict(s) for s in current or () if isinstance(s, Mapping)]
    if any(s.get("url") == url for s in kept):
        return None
    kept.append({"url": url, "kind": kind, "via": via, "first_seen": float(seen_at)})
    return kept


def source_role(body: bytes, content_type: bytes | str | None) -> str | None:
    """The page role of a fetched body when it is a source: ``"sitemap"`` for a sitemap or
    sitemap index (plain or gzipped), ``"feed"`` for RSS / Atom / RDF, None for anything else
    (HTML): :func:`newscrawl.algorithms.feeds.sniff_kind`, so a seed line or a link that
    answers with a feed is read as one."""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    kind = sniff_kind(body, content_type)
    if kind is None:
        return None
    return SITEMAP if kind == "sitemap" else FEED


def entry_facts(kind: str, entry: Any, source_url: str) -> dict[str, Any]:
    """What one feed or sitemap entry says of its article: ``{kind, url (of the source),
    title, feed_date | sitemap_date}`` (the request meta :data:`newscrawl.meta.FEED_ENTRY`,
    read by the spider for the date resolver). ``entry`` is a
    :class:`~newscrawl.algorithms.feeds.FeedEntry` or
    :class:`~newscrawl.algorithms.feeds.SitemapEntry`; the date as written is preferred, so a
    zone-less date borrows the page's offset (:func:`newscrawl.algorithms.pubdate.resolve_dates`)."""
    if kind == SITEMAP:
        title = getattr(entry, "news_title", None)
        hint = date_hint(kind, getattr(entry, "news_publication_raw", None)
                         or getattr(entry, "news_publication_date", None))
    else:
        title = getattr(entry, "title", None)
        hint = date_hint(kind, getattr(entry, "published_raw", None)
                         or getattr(entry, "published", None), getattr(entry, "updated", None))
    return {"kind": kind, "url": source_url, "title": title or None, **hint}


@dataclass
class SourceRead:
    """What :func:`read_source` read of one feed or sitemap.

    Attributes:
        entries: the entries worth a request, in file order (at most ``max_entries``).
        skipped: entries left out, by reason (the parser's, ``over_limit``, ``old``).
        format: ``rss``, ``atom``, ``urlset``, ``sitemapindex``; ``""`` when nothing was read.
        error: why the file was read in part or not at all (the parser's word), or ``""``.
    """

    entries: list[Any] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    format: str = ""
    error: str = ""


def read_source(kind: str, body: bytes, url: str, headers: Mapping[str, Any] | None = None, *,
                now: float, max_entries: int, max_age: float) -> SourceRead:
    """Parse a fetched feed (:func:`~newscrawl.algorithms.feeds.parse_feed`) or sitemap
    (:func:`~newscrawl.algorithms.feeds.parse_sitemap`, streamed; :func:`sitemap_pick` keeps
    the recent entries) of ``kind``; ``now`` epoch seconds, ``max_age`` seconds. Never raises:
    a file that cannot be read has ``format=""`` and its ``error``."""
    if kind == SITEMAP:
        stats = SitemapStats()
        entries = list(parse_sitemap(body, url, stats=stats))
        picked, old = sitemap_pick(entries, now=now, max_age=max_age, limit=max_entries)
        return SourceRead(picked, {**stats.skipped, "old": old},
                          stats.kind if stats.kind or entries else "", stats.error)
    result = parse_feed(body, url, headers)
    if result.error:
        return SourceRead([], dict(result.skipped), "", result.error)
    over = max(0, len(result.entries) - max_entries)
    return SourceRead(list(result.entries[:max_entries]), {**result.skipped, "over_limit": over},
                      result.kind, result.bozo_reason if result.bozo else "")


def item_sources(sources: Any) -> list[dict[str, Any]]:
    """A record's ``sources`` for an article item: ``seen_at`` as an aware UTC datetime."""
    out = []
    for source in sources if isinstance(sources, list) else ():
        if isinstance(source, Mapping):
            seen = _epoch(source.get("seen_at"))
            out.append({**source, "seen_at": None if seen is None
                        else dt.datetime.fromtimestamp(seen, dt.timezone.utc)})
    return out
