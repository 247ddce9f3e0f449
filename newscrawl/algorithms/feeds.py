"""Feeds (RSS / Atom / RDF) and sitemaps as discovery sources: finding and parsing them (pure).

What is here, and where the algorithm comes from:

- :func:`discover_feeds`: ``<link rel="alternate" type="application/rss+xml|atom+xml|rdf+xml">``
  of an HTML page (RSS Autodiscovery, rssboard.org/rss-autodiscovery; HTML Living Standard
  §4.6.7.1 "alternate" with a feed type), resolved against ``<base href>`` and the page URL.
- :func:`sitemaps_from_robots`: the ``Sitemap:`` lines of a robots.txt (sitemaps.org protocol
  §"Informing search engine crawlers"; RFC 9309 §2.2.4 lets other records stand), read with
  Protego, Scrapy's robots.txt parser.
- :func:`parse_feed`: one feed body → its entries (URL, title, dates) with feedparser (the
  Universal Feed Parser: RSS 0.9x/1.0/2.0, Atom 0.3/1.0, its loose parser for malformed XML and
  its RFC 3023 + XML-declaration + BOM encoding rules). Bad entries are counted, never raised.
- :func:`parse_sitemap`: a sitemap or sitemap index (sitemaps.org 0.9 with the Google News
  extension ``news:publication_date`` / ``news:title``), plain or gzipped, read as a stream with
  lxml ``iterparse`` (bounded memory: every finished ``<url>`` is cleared), entities not
  resolved, no network, a byte limit on the uncompressed stream (gzip bombs), a URL limit.
- :func:`sniff_kind` / :func:`is_feed_like`: what a fetched body is (a seed line may name a feed).
- Redirector links of feed entries are unwrapped with
  :func:`newscrawl.algorithms.urls.unwrap_redirect` (``go.rss.sina.com.cn/redirect.php?url=…``);
  FeedBurner ``/~r/`` links take the entry's ``feedburner:origLink`` (else a URL ``guid``).

Nothing here fetches, imports Scrapy or decides what to crawl: the crawl classifies the entry
URLs like any link (on-site / off-site) and passes the dates to the date resolver.
"""

from __future__ import annotations

import gzip
import html
import io
import re
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any, Final, Literal
from urllib.parse import urljoin, urlsplit

from newscrawl.algorithms.pubdate import parse_datetime
from newscrawl.algorithms.urls import unwrap_redirect

__all__ = [
    "FEED_MAX_BYTES", "SITEMAP_MAX_BYTES", "SITEMAP_MAX_URLS", "FeedEntry", "FeedParseResult",
    "FeedRef", "SitemapEntry", "SitemapStats", "discover_feeds", "is_feed_like",
    "is_sitemap_like", "parse_feed", "parse_sitemap", "sitemaps_from_robots", "sniff_kind",
]

FeedKind = Literal["rss", "atom", "sitemap", "seed"]

#: Largest feed body parsed (bytes); a larger one is a counted error, not parsed. Real news
#: feeds of set 14 are at most 0.5 MB.
FEED_MAX_BYTES: Final = 10 * 1024 * 1024
#: Largest *uncompressed* sitemap read (bytes): the sitemaps.org limit is 50 MB (52,428,800
#: bytes) uncompressed; reading stops there (a gzip bomb stops there too).
SITEMAP_MAX_BYTES: Final = 50 * 1024 * 1024
#: Most ``<url>`` / ``<sitemap>`` entries read from one file (sitemaps.org: 50,000).
SITEMAP_MAX_URLS: Final = 50_000

#: ``type`` values of an alternate ``<link>`` that name a feed, and the kind each gives.
_FEED_TYPES: Final[dict[str, FeedKind]] = {
    "application/rss+xml": "rss", "application/rdf+xml": "rss", "application/atom+xml": "atom",
}
#: Feeds of comments, not of articles (WordPress ``/comments/feed/``, ``/feed/comments``).
_COMMENTS_FEED: Final = re.compile(r"/comments?/feed|/feed/comments?|[?&]feed=comments",
                                   re.IGNORECASE)
#: FeedBurner ``/~r/…`` and Pheedo ``/click.phdo`` links are click-through redirects whose
#: target is not in the URL (``feedburner:origLink`` / ``pheedo:origLink`` or the ``guid``
#: names it).
_HIDDEN_REDIRECT_PATH: Final = re.compile(r"^/(?:~r/|click\.phdo)")
_FEEDPROXY_HOSTS: Final = frozenset({"feedproxy.google.com", "feeds.feedburner.com"})
_TAG: Final = re.compile(r"<[^>]{0,2000}>")
_SPACE: Final = re.compile(r"\s+")
#: Root element names (namespace stripped) and the kind they make.
_ROOTS: Final[dict[str, str]] = {
    "rss": "rss", "rdf": "rss", "feed": "atom",
    "urlset": "sitemap", "sitemapindex": "sitemap",
}
_ROOT_TAG: Final = re.compile(rb"<([A-Za-z_][\w.:-]*)")
_SNIFF_BYTES: Final = 4096
_SITEMAP_NS: Final = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
_NEWS_NS: Final = "{http://www.google.com/schemas/sitemap-news/0.9}"
_GZIP_MAGIC: Final = b"\x1f\x8b"


# ---------------------------------------------------------------------------------------------
# Discovery


@dataclass(frozen=True)
class FeedRef:
    """A discovery source found for a site.

    ``url`` is absolute; ``kind`` is ``"rss"`` (RSS 0.9x/1.0/2.0, RDF), ``"atom"``,
    ``"sitemap"`` (a sitemap or sitemap index, e.g. from robots.txt) or ``"seed"`` (a seed line
    whose kind is known only once fetched: see :func:`sniff_kind`); ``title`` is the ``<link
    title>`` when given.
    """

    url: str
    kind: FeedKind
    title: str = ""


def discover_feeds(html_page: bytes | str, base_url: str) -> list[FeedRef]:
    """The feeds an HTML page announces with ``<link rel="alternate" type="…">``.

    :param html_page: the page (bytes in any encoding lxml can sniff, or text).
    :param base_url: the page URL; ``<base href>`` of the page overrides it for resolving.
    :returns: one :class:`FeedRef` per distinct absolute http(s) URL, in page order; types
        ``application/rss+xml`` / ``application/rdf+xml`` give ``"rss"``,
        ``application/atom+xml`` gives ``"atom"`` (parameters such as ``charset`` ignored,
        case-insensitive). Comment feeds (``/comments/feed/``) are left out.
    :raises: nothing; a page that does not parse gives ``[]``.

    >>> discover_feeds('<link rel="alternate" type="application/rss+xml" href="/rss">',
    ...                "https://example.org/news/")
    [FeedRef(url='https://example.org/rss', kind='rss', title='')]
    """
    from lxml import etree
    from lxml import html as lxml_html

    if not html_page:
        return []
    try:
        tree = lxml_html.document_fromstring(html_page)
    except (etree.ParserError, ValueError, TypeError):
        return []
    base = base_url
    for el in tree.iter("base"):
        href = (el.get("href") or "").strip()
        if href:
            base = urljoin(base_url, href)
            break
    out: list[FeedRef] = []
    seen: set[str] = set()
    for el in tree.iter("link"):
        rels = (el.get("rel") or "").lower().split()
        if "alternate" not in rels:
            continue
        kind = _FEED_TYPES.get((el.get("type") or "").split(";", 1)[0].strip().lower())
        href = (el.get("href") or "").strip()
        if kind is None or not href:
            continue
        url = _absolute(href, base)
        if url is None or url in seen or _COMMENTS_FEED.search(url):
            continue
        seen.add(url)
        out.append(FeedRef(url, kind, _SPACE.sub(" ", el.get("title") or "").strip()))
    return out


def sitemaps_from_robots(robots_txt: str | bytes, base_url: str) -> list[str]:
    """The ``Sitemap:`` URLs of a robots.txt, absolute, distinct, in file order.

    :param robots_txt: the body (bytes are decoded as UTF-8, RFC 9309 §2.3; its first
        :data:`~newscrawl.algorithms.politeness.ROBOTS_TXT_MAX_BYTES` are read).
    :param base_url: the robots.txt URL (or the site's); relative ``Sitemap:`` values are
        resolved against it.
    :returns: http(s) URLs only. Protego reads the lines (case-insensitive field name,
        anywhere in the file, outside any group).
    :raises: nothing; a body Protego cannot read gives ``[]``.

    >>> sitemaps_from_robots("User-agent: *\\nDisallow:\\nSitemap: /news.xml\\n",
    ...                      "https://example.org/robots.txt")
    ['https://example.org/news.xml']
    """
    from protego import Protego

    from newscrawl.algorithms.politeness import truncate_robots_txt

    body = robots_txt.encode("utf-8", "replace") if isinstance(robots_txt, str) else robots_txt
    text = truncate_robots_txt(body).decode("utf-8", "replace")
    try:
        found = list(Protego.parse(text).sitemaps)
    except Exception:  # noqa: BLE001 - a broken robots.txt names no sitemap for us
        return []
    out: list[str] = []
    for value in found:
        url = _absolute(str(value).strip(), base_url)
        if url is not None and url not in out:
            out.append(url)
    return out


_PLAIN_ABSOLUTE: Final = re.compile(r"https?://[^\s/?#@\\]+(?:[/?#][^\s\\]*)?", re.IGNORECASE)


def _absolute(href: str, base: str) -> str | None:
    """``href`` made absolute against ``base``; ``None`` unless it is http(s)."""
    if _PLAIN_ABSOLUTE.fullmatch(href):  # the common case, without urljoin's cost
        return href
    try:
        url = urljoin(base, href.strip())
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None


# ---------------------------------------------------------------------------------------------
# Sniffing


def sniff_kind(body: bytes, content_type: str | None = None) -> str | None:
    """What a fetched body is: ``"rss"``, ``"atom"``, ``"sitemap"`` (urlset or sitemap index,
    also gzipped) or ``None`` (HTML, anything else).

    :param body: the body bytes (only the first 4 KiB are read; a gzip body is inflated that far).
    :param content_type: the HTTP ``Content-Type`` header value, or ``None``.
    :returns: the kind by the root element (namespace prefix dropped: ``rdf:RDF`` is RSS 1.0)
        after any BOM, XML declaration, comments and doctype; the content type only decides
        when the body is empty of markup (``application/rss+xml`` → rss, ``application/atom+xml``
        → atom). An HTML root (``<html>``) is never a feed, whatever the header says.
    :raises: nothing.

    >>> sniff_kind(b'<?xml version="1.0"?><rss version="2.0"><channel/></rss>')
    'rss'
    >>> sniff_kind(b"<!doctype html><html><head>", "application/rss+xml") is None
    True
    """
    head = body[:_SNIFF_BYTES] if body else b""
    if head.startswith(_GZIP_MAGIC):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body[:65536], _SNIFF_BYTES)
        except zlib.error:
            head = b""
    head = _to_ascii_compatible(head)
    m = _ROOT_TAG.search(head)  # a name right after "<": declarations, PIs, doctype never match
    if m is not None:
        local = m.group(1).decode("ascii", "replace").rsplit(":", 1)[-1].lower()
        return None if local == "html" else _ROOTS.get(local)
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    kind = _FEED_TYPES.get(ctype)
    return kind if kind is not None and not head.strip() else None


def _to_ascii_compatible(head: bytes) -> bytes:
    """``head`` ready for the root-tag regex: UTF-16/32 (by BOM) re-encoded as UTF-8, and
    comments removed (a licence comment before the root may name tags)."""
    for bom, codec in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                       (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if head.startswith(bom):
            return head[len(bom):].decode(codec, "ignore").encode("utf-8", "ignore")
    return re.sub(rb"<!--.*?-->", b"", head, flags=re.DOTALL)


def is_feed_like(body: bytes, content_type: str | None = None) -> bool:
    """True when the body is an RSS / RDF / Atom feed (:func:`sniff_kind`): a seed line that
    answers with one is read as a feed, not as a channel page. Sitemaps: :func:`is_sitemap_like`.

    >>> is_feed_like(b'<feed xmlns="http://www.w3.org/2005/Atom"></feed>', "text/xml")
    True
    """
    return sniff_kind(body, content_type) in ("rss", "atom")


def is_sitemap_like(body: bytes, content_type: str | None = None) -> bool:
    """True when the body is a sitemap or sitemap index (plain or gzipped)."""
    return sniff_kind(body, content_type) == "sitemap"


# ---------------------------------------------------------------------------------------------
# Feeds


@dataclass(frozen=True)
class FeedEntry:
    """One feed entry that names an article.

    ``url``: absolute http(s) URL, redirectors unwrapped (``link`` keeps the URL as the feed
    gave it). ``published`` / ``updated``: aware UTC datetimes or ``None``;
    ``published_raw``: the date text as written (pass it, not ``published``, to
    :func:`~newscrawl.algorithms.pubdate.resolve_dates` as ``feed_date`` so a zone-less date
    borrows the page's offset); ``date_has_zone`` is False when the feed gave no UTC offset
    (``published`` then assumes UTC).
    """

    url: str
    title: str
    published: datetime | None
    updated: datetime | None
    published_raw: str = ""
    date_has_zone: bool = True
    link: str = ""
    guid: str = ""


@dataclass(frozen=True)
class FeedParseResult:
    """What :func:`parse_feed` made of one body.

    ``kind``: ``"rss"`` / ``"atom"`` or ``""`` when it is no feed. ``entries`` in feed order,
    one per distinct URL. ``skipped``: entries left out, by reason (``no_link``, ``bad_url``,
    ``duplicate``). ``bozo``: the XML was not well-formed or the declared encoding was wrong
    (feedparser's flag; what parsed is still returned), ``bozo_reason`` says why. ``error``:
    why nothing could be read (``too_large``, ``empty``, ``not_a_feed``, ``parser_error``), or
    ``""``.
    """

    url: str
    kind: str
    entries: tuple[FeedEntry, ...] = ()
    title: str = ""
    encoding: str = ""
    skipped: Mapping[str, int] = field(default_factory=dict)
    bozo: bool = False
    bozo_reason: str = ""
    error: str = ""
    dates_unparsed: int = 0

    @property
    def ok(self) -> bool:
        """True when the body was read as a feed (it may still have no entries)."""
        return not self.error

    @property
    def skipped_count(self) -> int:
        return sum(self.skipped.values())


def parse_feed(body: bytes, url: str, headers: Mapping[Any, Any] | None = None, *,
               max_bytes: int = FEED_MAX_BYTES) -> FeedParseResult:
    """Parse one RSS / RDF / Atom body into its article entries.

    :param body: the raw body bytes (not decoded: feedparser decides the encoding).
    :param url: the feed URL; relative entry links are resolved against it.
    :param headers: the HTTP response headers (a mapping; values ``str`` or ``bytes`` or lists of
        them, as Scrapy's ``Headers`` give), or ``None``. Only the ``Content-Type`` charset is
        passed on to feedparser, and only when given: a ``text/xml`` without charset would
        otherwise mean US-ASCII (RFC 3023 §3.1), which real servers never mean. A feed with no
        charset anywhere that is not UTF-8 is decoded as the crawl's charset detector says.
    :param max_bytes: larger bodies are not parsed (``error="too_large"``).
    :returns: a :class:`FeedParseResult`; never raises. Encoding: the charset of the HTTP header,
        else the XML declaration, else a BOM, else UTF-8, else the charset detector; the
        GB2312 feed of news.qq.com is read as GB18030 (its superset), so its titles are right.
        A zone-less date (``2018-09-18 14:38:10``) is taken as UTC with ``date_has_zone=False``;
        a date feedparser cannot read is tried with :func:`~newscrawl.algorithms.pubdate
        .parse_datetime`, else left ``None`` and counted in ``dates_unparsed``.
    """
    if not body or not body.strip():
        return FeedParseResult(url=url, kind="", error="empty")
    if len(body) > max_bytes:
        return FeedParseResult(url=url, kind="", error="too_large")
    if body.startswith(_GZIP_MAGIC):  # a .gz feed served without Content-Encoding
        try:
            body = _gunzip(body, max_bytes)
        except (OSError, EOFError, zlib.error, _TooLarge) as exc:
            reason = "too_large" if isinstance(exc, _TooLarge) else "parser_error"
            return FeedParseResult(url=url, kind="", error=reason)
    import feedparser  # type: ignore[import-untyped]  # no type information shipped

    charset = _charset_of(_header(headers, "content-type")) or _undeclared_charset(body)
    response_headers: dict[str, str] = {
        "content-location": url,
        "content-type": f"application/xml; charset={charset}" if charset else "application/xml",
    }
    try:
        # a stream, never bytes: feedparser opens a bytes argument as a *file name* if it can
        # (a body b"/etc/passwd" would be read from disk), and fetches a str URL
        parsed = feedparser.parse(io.BytesIO(body), response_headers=response_headers,
                                  resolve_relative_uris=False, sanitize_html=False)
    except Exception as exc:  # noqa: BLE001 - feedparser is defensive; this is a last resort
        return FeedParseResult(url=url, kind="", error="parser_error",
                               bozo_reason=type(exc).__name__)
    version = str(parsed.get("version") or "")
    kind = "atom" if version.startswith("atom") else "rss" if version else ""
    bozo = bool(parsed.get("bozo"))
    bozo_exc = parsed.get("bozo_exception")
    bozo_reason = f"{type(bozo_exc).__name__}: {bozo_exc}"[:200] if bozo and bozo_exc else ""
    raw_entries = parsed.get("entries") or []
    if not kind and not raw_entries:
        return FeedParseResult(url=url, kind="", error="not_a_feed", bozo=bozo,
                               bozo_reason=bozo_reason,
                               encoding=str(parsed.get("encoding") or ""))
    skipped: Counter[str] = Counter()
    entries: list[FeedEntry] = []
    seen: set[str] = set()
    unparsed = 0
    for raw in raw_entries:
        entry, reason, bad_date = _entry(raw, url)
        unparsed += bad_date
        if entry is None:
            skipped[reason] += 1
            continue
        if entry.url in seen:
            skipped["duplicate"] += 1
            continue
        seen.add(entry.url)
        entries.append(entry)
    feed = parsed.get("feed") or {}
    return FeedParseResult(
        url=url, kind=kind or "rss", entries=tuple(entries),
        title=_plain(str(feed.get("title") or "")), encoding=str(parsed.get("encoding") or ""),
        skipped=dict(skipped), bozo=bozo, bozo_reason=bozo_reason, dates_unparsed=unparsed,
    )


_XML_DECLARED_ENCODING: Final = re.compile(rb"^\s*<\?xml[^>]{0,200}?encoding\s*=", re.IGNORECASE)
_BOMS: Final = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _undeclared_charset(body: bytes) -> str:
    """The encoding of a feed that declares none and is not UTF-8, by the crawl's own detector
    (:func:`newscrawl.algorithms.charset.detect_encoding`: the GB18030 test, script fit,
    windows-1252 for Latin bytes); ``""`` when the feed declares one (BOM, XML declaration) or
    is valid UTF-8, which is what XML means without a declaration (XML 1.0 §4.3.3).

    feedparser alone reads such a feed as windows-1252: news.qq.com's GB2312 feed without its
    declaration came out as "Ï°½üÆ½..." instead of "习近平...".
    """
    from newscrawl.algorithms.charset import detect_encoding, invalid_utf8

    if body.startswith(_BOMS) or _XML_DECLARED_ENCODING.match(body):
        return ""
    if not invalid_utf8(body[:1 << 20]):
        return ""
    return detect_encoding(body, http_charset=None)


def _entry(raw: dict[str, Any], feed_url: str) -> tuple[FeedEntry | None, str, int]:
    """(entry or None, reason when None, 1 when a date was given but could not be read).

    Keys are read with ``dict.get``: feedparser's own ``get`` maps ``updated`` to ``published``
    (with a DeprecationWarning), which would hide which date the feed gave.
    """
    get = dict.get
    link = str(get(raw, "link") or "").strip()
    guid = str(get(raw, "id") or "").strip()
    if not link:
        for alt in get(raw, "links") or ():
            if alt.get("rel", "alternate") == "alternate" and alt.get("href"):
                link = str(alt["href"]).strip()
                break
    if not link and get(raw, "guidislink") is not False and guid.startswith(("http://", "https://")):
        link = guid
    if not link:
        return None, "no_link", 0
    absolute = _absolute(link, feed_url)
    if absolute is None:
        return None, "bad_url", 0
    target = _unwrap_entry_link(absolute, raw, guid)
    published_raw = str(get(raw, "published") or get(raw, "created") or "").strip()
    updated_raw = str(get(raw, "updated") or "").strip()
    published, has_zone, bad_p = _entry_date(get(raw, "published_parsed")
                                             or get(raw, "created_parsed"), published_raw)
    updated, _zone, bad_u = _entry_date(get(raw, "updated_parsed"), updated_raw)
    if published is None and updated is not None:
        # RSS feeds give one date (pubDate); Atom feeds may give only <updated>
        published_raw, has_zone = updated_raw, _has_zone(updated_raw)
        published = updated
    entry = FeedEntry(
        url=target, title=_plain(str(get(raw, "title") or "")), published=published,
        updated=updated, published_raw=published_raw[:64], date_has_zone=has_zone,
        link=absolute, guid=guid,
    )
    return entry, "", int(bool(bad_p or bad_u))


def _unwrap_entry_link(link: str, raw: dict[str, Any], guid: str) -> str:
    """The article URL behind a feed entry link (FeedBurner ``/~r/`` links, redirectors)."""
    for key in ("feedburner_origlink", "pheedo_origlink"):
        orig = str(dict.get(raw, key) or "").strip()
        if orig.startswith(("http://", "https://")):
            return unwrap_redirect(html.unescape(orig))
    parts = urlsplit(link)
    host = (parts.hostname or "").lower()
    if host in _FEEDPROXY_HOSTS or _HIDDEN_REDIRECT_PATH.match(parts.path):
        if guid.startswith(("http://", "https://")) and urlsplit(guid).hostname != host:
            return unwrap_redirect(guid)
    return unwrap_redirect(link)


_ZONE_AT_END: Final = re.compile(
    r"(?:[zZ]|[+-]\d{2}:?\d{2}|\b(?:GMT|UTC?|[A-Z]{2,4}T|[A-Z]{3,5})(?:[+-]\d{1,4})?)\s*$")


def _has_zone(raw: str) -> bool:
    return bool(_ZONE_AT_END.search(raw.strip()))


def _entry_date(parsed: Any, raw: str) -> tuple[datetime | None, bool, bool]:
    """(aware UTC datetime or None, the text gave a zone, a date was given but not read)."""
    if not raw and parsed is None:
        return None, True, False
    has_zone = _has_zone(raw) if raw else True
    if raw and _GMT_HOURS.search(raw):
        parsed = None  # "GMT+9" is UTC+9 as written; feedparser reads it with the POSIX sign
        raw = _GMT_HOURS.sub(lambda m: f"{m.group(1)}{int(m.group(2)):02d}00", raw)
    if parsed is not None:
        try:
            year, month, day, hour, minute, second = (int(v) for v in parsed[:6])
            return (datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc),
                    has_zone, False)
        except (TypeError, ValueError):
            pass
    value = parse_datetime(raw) or parse_datetime(_english_date(raw))
    if value is None:
        return None, has_zone, True
    return value, has_zone, False


#: ``GMT+9`` / ``UTC-03`` at the end of a date: hours east of UTC, as publishers mean it.
_GMT_HOURS: Final = re.compile(r"\b(?:GMT|UTC)\s*([+-])(\d{1,2})\s*$")
#: Month abbreviations of RSS dates written in other languages (pt, es, fr, de, it), by the
#: English one: ``Seg, 24 Set 2018 19:42:40 -0300`` (UOL) reads as ``24 Sep 2018 …``.
_MONTHS: Final[dict[str, str]] = {
    "fev": "Feb", "abr": "Apr", "mai": "May", "ago": "Aug", "set": "Sep", "out": "Oct",
    "dez": "Dec", "ene": "Jan", "dic": "Dec", "janv": "Jan", "févr": "Feb", "fevr": "Feb",
    "mars": "Mar", "avr": "Apr", "juin": "Jun", "juil": "Jul", "août": "Aug", "aout": "Aug",
    "sept": "Sep", "déc": "Dec", "mär": "Mar", "mrz": "Mar", "okt": "Oct", "gen": "Jan",
    "mag": "May", "giu": "Jun", "lug": "Jul", "ott": "Oct", "dicembre": "Dec",
}
_WORD: Final = re.compile(r"[^\W\d_]+\.?")


def _english_date(raw: str) -> str:
    """``raw`` with a leading weekday dropped and foreign month abbreviations made English."""
    text = re.sub(r"^\s*[^\W\d_]+\.?\s*,\s*", "", raw)

    def month(m: re.Match[str]) -> str:
        word = m.group(0).rstrip(".").lower()
        return _MONTHS.get(word, _MONTHS.get(word[:4], _MONTHS.get(word[:3], m.group(0))))

    return _WORD.sub(month, text)


def _plain(text: str) -> str:
    """Title text: tags removed, entities decoded, whitespace collapsed."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    return _SPACE.sub(" ", text).strip()


def _header(headers: Mapping[Any, Any] | None, name: str) -> str:
    """The first value of header ``name`` (case-insensitive; str or bytes keys and values, or
    lists of them as Scrapy's ``Headers`` hold), decoded as Latin-1; ``""`` when absent."""
    if not headers:
        return ""
    value: Any = None
    try:
        value = headers.get(name.title().encode("ascii")) if hasattr(headers, "getlist") else None
    except (TypeError, AttributeError):
        value = None
    if value is None:
        for key, val in headers.items():
            k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
            if k.lower() == name.lower():
                value = val
                break
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value) if value else ""


_CHARSET: Final = re.compile(r"""charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)


def _charset_of(content_type: str) -> str:
    m = _CHARSET.search(content_type or "")
    return m.group(1) if m else ""


# ---------------------------------------------------------------------------------------------
# Sitemaps


@dataclass(frozen=True)
class SitemapEntry:
    """One ``<url>`` of a sitemap, or one ``<sitemap>`` child of a sitemap index
    (``is_sitemap=True``: fetch and parse it as a sitemap).

    ``url`` is absolute (``<loc>``, whitespace stripped); ``lastmod`` and
    ``news_publication_date`` are aware UTC datetimes or ``None`` (a bare date is midnight UTC);
    ``news_publication_raw`` keeps the text for the date resolver; ``news_title`` is the Google
    News ``<news:title>``.
    """

    url: str
    lastmod: datetime | None = None
    news_title: str | None = None
    news_publication_date: datetime | None = None
    is_sitemap: bool = False
    news_publication_raw: str = ""


@dataclass
class SitemapStats:
    """Counts :func:`parse_sitemap` keeps while it streams (pass one in to read them).

    ``kind``: ``"urlset"``, ``"sitemapindex"`` or ``""`` (not a sitemap). ``entries``: entries
    yielded. ``skipped``: ``<url>``/``<sitemap>`` elements left out, by reason (``no_loc``,
    ``bad_url``). ``error``: why reading stopped early or was incomplete (``empty``,
    ``too_large``, ``too_many_urls``, ``xml_error: …`` — libxml2's first fatal error, read past
    in recover mode or where it stopped, e.g. entity amplification —, ``not_a_sitemap``,
    ``gzip_error``), or ``""``; the entries yielded before stay valid. ``bytes_read``: bytes of the
    uncompressed XML read.
    """

    kind: str = ""
    entries: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    error: str = ""
    bytes_read: int = 0

    @property
    def is_index(self) -> bool:
        return self.kind == "sitemapindex"


class _TooLarge(Exception):
    pass


#: A ``&`` that starts no entity or character reference: written raw by many sitemap
#: generators (``?a=1&b=2``); libxml2's recover mode would drop ``&b`` from the URL.
_RAW_AMPERSAND: Final = re.compile(rb"&(?!(?:[A-Za-z_][\w.-]{0,40}|#[0-9]{1,8}|#x[0-9A-Fa-f]{1,8});)")
_REFERENCE_MAX: Final = 48


class _LimitedReader(io.RawIOBase):
    """A read-only stream over ``raw``: counts bytes into ``stats.bytes_read``, raises
    :class:`_TooLarge` past ``limit`` bytes, and escapes raw ``&`` (:data:`_RAW_AMPERSAND`)."""

    def __init__(self, raw: IO[bytes], limit: int, stats: SitemapStats) -> None:
        self._raw = raw
        self._limit = limit
        self._stats = stats
        self._pending = b""  # a trailing "&..." that may continue in the next chunk
        self._out = b""
        self._eof = False

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        while not self._out and not self._eof:
            chunk = self._raw.read(65536)
            self._stats.bytes_read += len(chunk)
            if self._stats.bytes_read > self._limit:
                raise _TooLarge()
            data = self._pending + chunk
            self._pending = b""
            if not chunk:  # end of the raw stream: what was held back goes out
                self._eof = True
            else:
                cut = data.rfind(b"&", max(0, len(data) - _REFERENCE_MAX))
                if cut >= 0:
                    data, self._pending = data[:cut], data[cut:]
            self._out = _RAW_AMPERSAND.sub(b"&amp;", data)

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = 65536
        self._fill()
        data, self._out = self._out[:size], self._out[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _gunzip(body: bytes, limit: int) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=io.BytesIO(body)) as stream:
        while True:
            chunk = stream.read(65536)
            if not chunk:
                break
            out.write(chunk)
            if out.tell() > limit:
                raise _TooLarge()
    return out.getvalue()


def parse_sitemap(source: bytes | IO[bytes], url: str, *, max_bytes: int = SITEMAP_MAX_BYTES,
                  max_urls: int = SITEMAP_MAX_URLS,
                  stats: SitemapStats | None = None) -> Iterator[SitemapEntry]:
    """Stream the entries of a sitemap (``<urlset>``) or sitemap index (``<sitemapindex>``).

    :param source: the body as bytes or a binary file object; gzip (``.xml.gz``, magic bytes
        ``1f 8b``) is inflated on the fly. A plain-text sitemap (one URL per line, sitemaps.org
        "Text file") is read too.
    :param url: the sitemap URL; relative ``<loc>`` values are resolved against it.
    :param max_bytes: stop after this many *uncompressed* bytes (``stats.error="too_large"``;
        the entries read before are still yielded).
    :param max_urls: stop after this many entries (``stats.error="too_many_urls"``).
    :param stats: a :class:`SitemapStats` to fill in (kind, counts, error).
    :returns: an iterator of :class:`SitemapEntry`; for an index each child has
        ``is_sitemap=True``. Memory stays bounded: lxml ``iterparse`` with every finished element
        cleared; entities are not resolved, no DTD or network access (XXE, billion laughs),
        ``recover`` mode reads past bad bytes where libxml2 can.
    :raises: nothing: malformed XML ends the iteration with ``stats.error`` set.
    """
    from lxml import etree

    st = stats if stats is not None else SitemapStats()
    raw: IO[bytes] = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    try:
        head = _peek(raw, 2)
        if head == _GZIP_MAGIC:
            raw = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
        first = _peek(raw, 512)
    except (OSError, EOFError, zlib.error):
        st.error = "gzip_error"
        return
    if not first.strip():
        st.error = "empty"
        return
    stream = io.BufferedReader(_LimitedReader(raw, max_bytes, st), 65536)
    if first and not first.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        yield from _text_sitemap(stream, url, max_urls, st)
        return
    context = etree.iterparse(
        stream, events=("start", "end"), resolve_entities=False, no_network=True,
        load_dtd=False, huge_tree=False, recover=True, remove_comments=True, remove_pis=True)
    depth = 0
    try:
        for event, el in context:
            if event == "start":
                depth += 1
                if depth == 1:
                    local = _local(el.tag)
                    if local not in ("urlset", "sitemapindex"):
                        st.error = "not_a_sitemap"
                        return
                    st.kind = local
                continue
            depth -= 1
            if depth != 1:
                continue
            local = _local(el.tag)
            if local in ("url", "sitemap"):
                entry, reason = _sitemap_entry(el, url, local == "sitemap")
                if entry is None:
                    st.skipped[reason] += 1
                else:
                    if st.entries >= max_urls:
                        st.error = "too_many_urls"
                        return
                    st.entries += 1
                    yield entry
            el.clear(keep_tail=False)
            parent = el.getparent()
            if parent is not None:
                while el.getprevious() is not None:
                    del parent[0]
    except _TooLarge:
        st.error = "too_large"
    except etree.XMLSyntaxError as exc:
        st.error = f"xml_error: {exc}"[:200]
    except (OSError, EOFError, zlib.error) as exc:
        st.error = f"gzip_error: {exc}"[:200]
    if not st.error:
        fatal = [e for e in context.error_log if e.level_name == "FATAL"]
        if fatal:  # recover mode read on, or stopped (entity amplification): say so
            st.error = f"xml_error: {fatal[0].message} (line {fatal[0].line})"[:200]
    if not st.kind and not st.error:
        st.error = "not_a_sitemap"


def _peek(raw: IO[bytes], n: int) -> bytes:
    """The first ``n`` bytes without consuming them (seeks back, or wraps in a buffer)."""
    peek = getattr(raw, "peek", None)
    if peek is not None:
        data: bytes = peek(n)[:n]
        return data
    if not raw.seekable():
        raise OSError("pass a seekable stream or one with peek()")
    pos = raw.tell()
    data = raw.read(n)
    raw.seek(pos)
    return data


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _sitemap_entry(el: Any, base: str, is_sitemap: bool) -> tuple[SitemapEntry | None, str]:
    loc = lastmod = title = pub = None
    for child in el.iter():
        if child is el or not isinstance(child.tag, str):
            continue
        local = _local(child.tag)
        text = (child.text or "").strip()
        if local == "loc" and loc is None and child.getparent() is el:
            loc = text
        elif local == "lastmod" and lastmod is None:
            lastmod = text
        elif local == "title" and child.tag.startswith(_NEWS_NS[:-1]):
            title = text
        elif local == "publication_date" and child.tag.startswith(_NEWS_NS[:-1]):
            pub = text
    if not loc:
        return None, "no_loc"
    absolute = _absolute(loc, base)
    if absolute is None:
        return None, "bad_url"
    return SitemapEntry(
        url=absolute, lastmod=parse_datetime(lastmod) if lastmod else None,
        news_title=_SPACE.sub(" ", title).strip() if title else None,
        news_publication_date=parse_datetime(pub) if pub else None, is_sitemap=is_sitemap,
        news_publication_raw=(pub or "")[:64],
    ), ""


def _text_sitemap(stream: IO[bytes], base: str, max_urls: int,
                  st: SitemapStats) -> Iterator[SitemapEntry]:
    st.kind = "urlset"
    try:
        for line in stream:
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            absolute = _absolute(text, base) if text.startswith(("http://", "https://")) else None
            if absolute is None or " " in text:
                st.skipped["bad_url"] += 1
                continue
            if st.entries >= max_urls:
                st.error = "too_many_urls"
                return
            st.entries += 1
            yield SitemapEntry(url=absolute)
    except _TooLarge:
        st.error = "too_large"
    except (OSError, EOFError, zlib.error) as exc:
        st.error = f"gzip_error: {exc}"[:200]
