"""Link classification and node/content separation (seed 004 §2; DESIGN.md §2).

Every link of a page gets one :class:`LinkClass` relative to the page's StartURL
``http://A.B.C/.../D`` (B.C = registered domain from the Public Suffix List):

==========  ===========================================================================
OUTWARD     registered domain differs, or another port (an explicit    → dropped
            port other than the StartURL's; 80 for http and 443 for
            https are the same as none)
CROSSWISE   same registered domain, other host; or same host, another  → one entry
            branch of the path tree                                      ``http(s)://host/``
UPWARD      the link is a directory page above the StartURL's directory → dropped
HORIZONTAL  same directory as the StartURL                              → grouped
DOWNWARD    below the StartURL's directory                              → grouped
FRAME       ``<frame>``/``<iframe>`` src (decided at extraction)         → fetched with the page
==========  ===========================================================================

Grouping (seed 004 §2, ``arrNodeLink`` / ``arrPageInfo``): DOWNWARD and HORIZONTAL links are
grouped by directory; a directory that is an ancestor of another group's directory holds node
links, groups under ``min_group`` links are node links, and the dominant group(s) — every group
with at least ``dominant_ratio`` × the largest group's size — hold content links.

Our reading, measured on the real pages of ``corpus/`` (see ``benchmarks/linkclass_quality.py``):

1. *Directory of a URL.* ``/sport`` (a one- or two-word segment without extension) names the
   directory ``/sport/``, as portals drop the trailing slash; ``/index.html``-like names and
   article slugs belong to their parent directory.
2. *URL shape* (``use_shape=True``, the default). Real portals spread articles over many
   directories or one date tree, so the group rule alone mislabels them. A link whose last
   segment is an article slug (date in the path, a long numeric id, or four or more words) is a
   content link, and a directory page (``/sport``, ``/thema/Oktoberfest``) is a node link,
   whatever its group; the group rule decides the links whose shape says neither.
3. *Crosswise articles* (``crosswise_content=True``): a portal home page links most of its
   articles on other hosts (``www.sina.com.cn`` → ``news.sina.com.cn/c/2018-08-08/doc-….shtml``);
   an article-shaped crosswise link is also a content link, besides its host entry.

Additions (issue 10, measured on ten fully labelled pages, ``tests/linkclass_labels.tsv``):

4. *Service links are dropped* (``rules``, :mod:`newscrawl.algorithms.linkrules`): links to a
   shop, job market, login, price comparison, games, comment threads, sponsored or VOD hosts and
   paths are neither content nor node links, whatever their shape (``ClassifiedLink.reason`` =
   ``"service:host|path|prefix"``). The list is data, per site overridable.
5. *Channels on sister hosts and other branches are followed* (``follow_channels=True``): a
   CROSSWISE link that names a directory page (``sport.example.com/``, ``/politik`` seen from
   ``/sport``) is a node link, crawled with itself as StartURL within the depth limit (the crawl
   never leaves the registered domain: other domains are OUTWARD). On the page's own host this is
   always so; on a sister host only when the page shows that host is editorial: it links an
   article there, or at least ``sister_evidence`` of its channel pages (a portal's section row
   ``business.sohu.com/994``, ``/995``…), or the host is below an editorial host (an edition:
   ``bj.auto.sina.com.cn`` under ``auto.sina.com.cn``), or the link sits in a navigation block
   (``RawLink.block``) whose other sister-host links are at least ``block_share`` editorial (a
   channel bar) — so that a lone footer link or a product row (``browser.qq.com``,
   ``pay.sohu.com``) is not followed. The ``http(s)://host/`` entry of a crosswise host is made
   for editorial hosts only, and only when the page does not link that root itself. "Channel"
   is :func:`is_channel_shaped`: a directory page, a list / index page (``society_index.shtml``,
   ``list2015….htm``), a page of a special-topic directory (``/zt2017/…``), and on a sister host
   a one-word page (``sports.sohu.com/nba.shtml``). A page of the page's own directory tree
   that is none of these and no article (``/icp.shtml``, ``/sheweishouye.htm``) is no longer a
   node link by the group rule: ``reason="leaf"``, dropped.
6. *Article shapes* (:func:`is_article_shaped`): print-issue paths ``/YYYY/NN/<slug>`` (zeit.de's
   weekly issue); opaque ids up to 64 characters with base64 padding
   (``tv.sohu.com/v/MjAx…bA==.html``); short ids under an editorial feature directory
   (``news.qq.com/original/oneday/2958.html``, :data:`FEATURE_DIRS`); pages directly under a
   series / podcast directory (``/serie/<name>``) are channels, like tag pages; a service
   directory only counts as the first segment (``/digital/datenschutz/2023-04/<slug>`` is news).

Measured (``benchmarks/linkclass_quality.py``, ten pages, 5,327 links, every one labelled):
content links P 0.952 → 0.995, R 0.911 → 0.999; channel links P 0.571 → 0.976, R 0.446 → 0.962.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Iterable, Sequence
from urllib.parse import unquote, urlsplit

from newscrawl.algorithms.linkextract import RawLink
from newscrawl.algorithms.linkrules import DEFAULT_RULES, TAXONOMY_DIRS, LinkRules
from newscrawl.algorithms.urls import canonicalize_url, registered_domain


class LinkClass(str, Enum):
    """The six link classes of seed 004 §2 (values are the stored strings)."""

    DOWNWARD = "downward"
    UPWARD = "upward"
    HORIZONTAL = "horizontal"
    CROSSWISE = "crosswise"
    OUTWARD = "outward"
    FRAME = "frame"


NODE = "node"
CONTENT = "content"
#: Role of links that are not followed (outward, upward, same-host crosswise).
DROPPED = "dropped"

_INDEX_NAMES = re.compile(r"^(?:index|default|home|start|main|portal)(?:\.[a-z0-9]{2,5})?$", re.IGNORECASE)
_FILE_EXTENSION = re.compile(r"\.(?:s?html?|php\d?|aspx?|jspx?|cgi|pl|cfm|xml)$", re.IGNORECASE)
_DATE_IN_PATH = re.compile(
    r"/(?:19|20)\d\d(?:[-_/.]?(?:0[1-9]|1[0-2]))(?:[-_/.]?(?:0[1-9]|[12]\d|3[01]))?(?:/|[-_]|$)"
)
_LONG_NUMBER = re.compile(r"\d{5,}")
#: A print issue: ``/2023/18/<slug>`` (year, then issue number 1-60, then a slug).
_ISSUE_IN_PATH = re.compile(r"/(?:19|20)\d\d/(?:0?[1-9]|[1-5]\d|60)/[^/]+$")
_WORD_SPLIT = re.compile(r"[-.+~,]+")


def _last_segment(path: str) -> tuple[str, bool]:
    """Return (last non-empty path segment, whether the path ends with '/')."""
    trailing = path.endswith("/")
    segment = path.rstrip("/").rsplit("/", 1)[-1]
    return unquote(segment), trailing


#: Ancestor directories of taxonomy pages (tags, topics, authors): never one article.
_TAXONOMY_DIRS = TAXONOMY_DIRS
#: Directories of editorial features whose pieces carry short ids (``/original/oneday/2958.html``).
FEATURE_DIRS = frozenset({"original"})
_SHORT_ID = re.compile(r"^[a-z]{0,12}\d{2,}[a-z0-9]*$", re.IGNORECASE)
#: Directories of service pages (legal notice, privacy, licences): never news.
_SERVICE_DIRS = frozenset({"license", "licence", "licenses", "licences", "legal", "about", "impressum",
                           "datenschutz", "privacy", "agb", "contact", "kontakt", "imprint", "terms"})
_SERVICE_FIRST_WORD = re.compile(
    r"^(?:datenschutz\w*|impressum|imprint|agb|privacy\w*|contact\w*|kontakt\w*|disclaimer|"
    r"terms|licen[cs]e\w*)$", re.IGNORECASE)
_LIST_NAME = re.compile(r"^(?:[a-z]*list|index)(?:[_-]?\d+)*$|(?:^|[_-])list(?:[_-]\d+)*$", re.IGNORECASE)
_MEDIA_EXTENSION = re.compile(
    r"\.(?:mp4|flv|m3u8|mp3|jpe?g|png|gif|webp|svg|pdf|zip|js|css|json|xml|apk|exe)$", re.IGNORECASE)
_OPAQUE_ID = re.compile(r"^(?:[a-z]+_)?([A-Za-z0-9]{7,64})={0,2}$")
_ALNUM_RUN = re.compile(r"[A-Za-z]+|\d+")
_SEPARATOR = re.compile(r"[-_.]")
_COMMENT_HOSTS = ("comment", "comments")


def _opaque_id(stem: str, parent: str) -> bool:
    """An opaque article id: ``blog_64d61f9a0102xwy3``, ``m0545ohup0f``, or a short id after an
    article slug (``/top-10-…-im-test/2dxtvlp``)."""
    match = _OPAQUE_ID.match(stem)
    if not match:
        return False
    token: str = match.group(1)
    digits = sum(ch.isdigit() for ch in token)
    letters = len(token) - digits
    if len([w for w in _WORD_SPLIT.split(parent) if w]) >= 4:
        return digits >= 1 and letters >= 1
    return len(token) >= 10 and digits >= 2 and letters >= 2 and len(_ALNUM_RUN.findall(token)) >= 3


@lru_cache(maxsize=65536)
def is_article_shaped(url: str) -> bool:
    """True when the URL's path looks like one article rather than a channel.

    Signals (any one): a date in the path (``/2023-04/28/``, ``/20180222/``) with a non-index
    last segment; a run of five or more digits in the last segment (``…-1.6318012``,
    ``…-6356890.html``); four or more words in the last segment (``berlin-marathon-hendel-lux…``);
    an opaque alphanumeric id (``blog_64d61f9a0102xwy3``); a dated slug's ``index.html``.
    Never: media and script files, comment hosts, pages under taxonomy directories (``/tag/``,
    ``/thema/``, ``/author/``) or service directories (``/impressum``, ``/license/``), list pages
    (``articlelist_…``, ``list2015….htm``), numbered special-topic directories (``car20180807/``),
    date archives and page numbers (``/archiv/2024/01``, ``/2024/05/12/``).
    Measured on hand-labelled real pages: ``benchmarks/linkclass_quality.py``.
    """
    parts = urlsplit(url)
    path = parts.path
    segment, trailing = _last_segment(path)
    segments = [unquote(s) for s in path.split("/") if s]
    if not segment or _MEDIA_EXTENSION.search(segment):
        return False
    if (parts.hostname or "").split(".")[0] in _COMMENT_HOSTS:
        return False
    ancestors = [s.lower() for s in segments[:-1]]
    if any(s in _TAXONOMY_DIRS for s in ancestors) or any(s in _SERVICE_DIRS for s in ancestors[:1]):
        return False  # a service area is the first segment: /digital/datenschutz/<slug> is news
    first_word = _WORD_SPLIT.split(_FILE_EXTENSION.sub("", segment))[0]
    if first_word and _SERVICE_FIRST_WORD.match(first_word):
        return False
    if _INDEX_NAMES.match(segment):
        if len(segments) >= 2:
            parent = segments[-2]
            if re.search(r"[A-Za-z]", parent) and not _INDEX_NAMES.match(parent):
                parent_path = path.rstrip("/").rsplit("/", 1)[0] + "/"
                return bool(_DATE_IN_PATH.search(parent_path)
                            and not _DATE_IN_PATH.fullmatch("/" + parent + "/"))
        return False
    stem = _FILE_EXTENSION.sub("", segment)
    if _LIST_NAME.search(stem):
        return False
    if (not trailing and _FILE_EXTENSION.search(segment) and _SHORT_ID.match(stem)
            and any(s in FEATURE_DIRS for s in ancestors)):
        return True  # a piece of an editorial feature: /original/oneday/2958.html
    if segment.isdigit() and len(segment) <= 4:
        return False  # a date component or page number: /archiv/2024/01, /2024/05/12/, /page/3
    if _ISSUE_IN_PATH.search(path.rstrip("/")) and len([w for w in _WORD_SPLIT.split(stem) if w]) >= 2:
        return True  # a print-issue article: /2023/18/kunst-unfaelle-wertsteigerung
    if _DATE_IN_PATH.search(path) and not _DATE_IN_PATH.fullmatch("/" + segment + "/"):
        return True
    if _LONG_NUMBER.search(stem) and not (trailing and not stem.isdigit() and not _SEPARATOR.search(stem)):
        return True
    if len([w for w in _WORD_SPLIT.split(stem) if w]) >= 4:
        return True
    return not trailing and _opaque_id(stem, segments[-2] if len(segments) >= 2 else "")


@lru_cache(maxsize=65536)
def is_directory_page(url: str) -> bool:
    """True when the URL names a directory (channel) page: ``/``, ``/sport/``, ``/sport``,
    ``/news/index``, ``/thema/Oktoberfest`` — not an article slug."""
    path = urlsplit(url).path or "/"
    segment, trailing = _last_segment(path)
    if not segment:
        return True
    if is_article_shaped(url):
        return False
    if trailing or _INDEX_NAMES.match(segment):
        return True
    if _FILE_EXTENSION.search(segment):
        return False
    segments = [s.lower() for s in path.split("/") if s]
    if len(segments) >= 2 and segments[-2] in _TAXONOMY_DIRS:
        return True  # /thema/<name>, /serie/<long-podcast-name>, /tag/<name>
    words = [w for w in _WORD_SPLIT.split(segment) if w]
    return len(words) <= 3 and "." not in segment


#: Directories of special-topic pages (``/zt2017/…/lswl.htm``, ``/zt_d/…``, ``/s2018/…``).
_SPECIAL_DIR = re.compile(r"^(?:zt|zt_d|zhuanti|special|specials|dossier|s)\d*$", re.IGNORECASE)
_CHANNEL_NAME = re.compile(r"(?:^|[_-])(?:index|list|photo)(?:[_-]?\d+)*(?:\.d)?$|^list\d+$|^index_[a-z]+$",
                            re.IGNORECASE)
#: A page of a paginated list: ``page-2.html``, ``seite-3``, ``p2``, ``index_2``.
_PAGINATION = re.compile(r"^(?:page|seite|p|pg|index)[-_]?\d{1,4}$", re.IGNORECASE)
#: A one-word page name (``nba.shtml``, ``gyzx.html``): a channel when on an editorial sister host.
_ONE_WORD_PAGE = re.compile(r"^[a-z]{2,12}$")
_LIST_DIRS = frozenset({"list", "lists", "liste"})


@lru_cache(maxsize=65536)
def _one_word_page(url: str) -> bool:
    """A page named by one short word, with an extension: ``/nba.shtml``, ``/gyzx.html``."""
    segment, trailing = _last_segment(urlsplit(url).path)
    if trailing or not _FILE_EXTENSION.search(segment):
        return False
    return bool(_ONE_WORD_PAGE.match(_FILE_EXTENSION.sub("", segment).lower()))


@lru_cache(maxsize=65536)
def is_channel_shaped(url: str) -> bool:
    """True when the URL names a page that lists articles: a directory page
    (:func:`is_directory_page`), a list or index file (``society_index.shtml``,
    ``beauty_list.htm``, ``list2015114161304.htm``), a further page of a list (``page-2.html``)
    or a page of a special-topic directory (``/zt2017/2017ztqt/lswl.htm``). Never an
    article-shaped URL."""
    if is_directory_page(url):
        return True
    if is_article_shaped(url):
        return False
    path = urlsplit(url).path
    segment, _trailing = _last_segment(path)
    stem = _FILE_EXTENSION.sub("", segment)
    if _CHANNEL_NAME.search(stem) or _LIST_NAME.search(stem) or _PAGINATION.match(stem):
        return True
    directories = [s for s in path.split("/")[1:-1] if s]
    return any(_SPECIAL_DIR.match(s) or s.lower() in _LIST_DIRS for s in directories)


@lru_cache(maxsize=65536)
def directory_of(url: str) -> str:
    """Return the directory path of ``url`` (ends with ``/``).

    ``/sport`` → ``/sport/``; ``/sport/`` → ``/sport/``; ``/news/index`` → ``/news/``;
    ``/sport/berlin-marathon-hendel-lux.GoPA`` → ``/sport/``; ``/a/b.html`` → ``/a/``.
    """
    path = urlsplit(url).path or "/"
    segment, trailing = _last_segment(path)
    if not segment:
        return "/"
    parent = path.rstrip("/").rsplit("/", 1)[0] + "/"
    if _INDEX_NAMES.match(segment):
        return parent
    if is_directory_page(url):
        return path if trailing else path + "/"
    return parent


@dataclass(frozen=True, slots=True)
class StartURL:
    """The reference URL links are classified against (seed 004's ``StartURL``)."""

    url: str
    scheme: str
    host: str
    domain: str
    directory: str
    #: The explicit port, None for none or the scheme's default (:func:`effective_port`).
    port: int | None = None

    @classmethod
    def parse(cls, url: str) -> "StartURL":
        """Parse an absolute http(s) URL; raises ``ValueError`` when it has no host."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if not host:
            raise ValueError(f"StartURL has no host: {url!r}")
        return cls(url, parts.scheme or "http", host, registered_domain(host), directory_of(url),
                   effective_port(url))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def effective_port(url: str) -> int | None:
    """The explicit port of ``url``, None when it has none or names its scheme's default (80
    for http, 443 for https); -1 for a port that is no number in 0-65535.

    >>> effective_port("https://a.example:443/x"), effective_port("http://a.example:8080/")
    (None, 8080)
    """
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return -1
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        return None
    return port


def classify_link(start: StartURL, url: str, *, tag: str = "a") -> LinkClass:
    """Return the class of one absolute link relative to ``start`` (seed 004 §2).

    A link on another port than ``start``'s (:func:`effective_port`) is OUTWARD, whatever its
    host: a page (or a feed) must not make the crawl probe the other ports of a host.
    """
    if tag == "frame":
        return LinkClass.FRAME
    host = (urlsplit(url).hostname or "").lower()
    if effective_port(url) != start.port:
        return LinkClass.OUTWARD
    if host != start.host:
        if registered_domain(host) != start.domain:
            return LinkClass.OUTWARD
        return LinkClass.CROSSWISE
    link_dir = directory_of(url)
    if link_dir == start.directory:
        return LinkClass.HORIZONTAL
    if link_dir.startswith(start.directory):
        return LinkClass.DOWNWARD
    if start.directory.startswith(link_dir) and is_directory_page(url):
        return LinkClass.UPWARD
    return LinkClass.CROSSWISE


@dataclass(slots=True)
class ClassifiedLink:
    """One distinct link of a page after classification.

    Attributes:
        url: canonical absolute URL.
        link_class: its :class:`LinkClass`.
        role: ``"node"``, ``"content"`` or ``"dropped"``.
        text: anchor text (the first non-empty one among duplicates).
        tag: ``"a"`` or ``"frame"``.
        features: ``image``/``font_size``/``bold`` (max over duplicates) and ``html_tag``
            (1 for content links), all 0/1.
        group: the directory group (``scheme://host/dir/``) for grouped links, else ``""``.
        reason: why a link is dropped beyond its class: ``"service:host"``,
            ``"service:path"``, ``"service:prefix"`` (:mod:`newscrawl.algorithms.linkrules`).
        published: its teaser's ``<time datetime>`` (epoch seconds) or None.
    """

    url: str
    link_class: LinkClass
    role: str
    text: str
    tag: str
    features: dict[str, int]
    group: str = ""
    reason: str = ""
    published: float | None = None


@dataclass(slots=True)
class PageClassification:
    """Result of :func:`classify_page`.

    Attributes:
        links: every distinct link, classified (``list[ClassifiedLink]``).
        entries: crosswise host entries ``http(s)://host/`` to follow as node links.
        counts: links per class value (``dict[str, int]``), over distinct links.
    """

    links: list[ClassifiedLink] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def by_role(self, role: str) -> list[ClassifiedLink]:
        """Links with the given role, in document order."""
        return [link for link in self.links if link.role == role]

    def node_requests(self) -> list[str]:
        """URLs to request as node (channel) pages: node links that are not frames (frames are
        part of their page), then the crosswise host entries; in document order."""
        return [link.url for link in self.links
                if link.role == NODE and link.link_class is not LinkClass.FRAME] + self.entries


def _merge(raw_links: Iterable[RawLink]) -> dict[str, RawLink]:
    merged: dict[str, RawLink] = {}
    for raw in raw_links:
        url = canonicalize_url(raw.url)
        seen = merged.get(url)
        if seen is None:
            merged[url] = RawLink(url, raw.text, raw.tag, dict(raw.features), raw.block,
                                  raw.published)
            continue
        for key, value in raw.features.items():
            if value > seen.features.get(key, 0):
                seen.features[key] = value
        if ((not seen.text and raw.text) or (not seen.block and raw.block)
                or (seen.published is None and raw.published is not None)):
            merged[url] = RawLink(url, seen.text or raw.text, seen.tag, seen.features,
                                  seen.block or raw.block,
                                  seen.published if seen.published is not None else raw.published)
    return merged


def group_roles(groups: dict[str, int], *, min_group: int, dominant_ratio: float) -> dict[str, str]:
    """Assign node/content to directory groups (seed 004 §2).

    Args:
        groups: directory (``scheme://host/dir/``) → number of distinct links in it.
        min_group: groups smaller than this are node groups (links).
        dominant_ratio: groups of at least this share of the largest qualifying group are content.

    Returns:
        directory → ``"node"`` | ``"content"``.
    """
    ancestors = {d for d in groups for other in groups if other != d and other.startswith(d)}
    candidates = {d: n for d, n in groups.items() if d not in ancestors and n >= min_group}
    largest = max(candidates.values(), default=0)
    roles = {}
    for directory in groups:
        if directory in candidates and candidates[directory] >= dominant_ratio * largest:
            roles[directory] = CONTENT
        else:
            roles[directory] = NODE
    return roles


def classify_page(start_url: str, raw_links: Sequence[RawLink], *, min_group: int = 5,
                  dominant_ratio: float = 0.5, use_shape: bool = True,
                  crosswise_content: bool = True, follow_crosswise: bool = True,
                  follow_channels: bool = True, sister_evidence: int = 2,
                  block_share: float = 0.5,
                  rules: LinkRules | None = None) -> PageClassification:
    """Classify every link of one page and separate node links from content links.

    Args:
        start_url: the page's StartURL (the page itself for entry and channel pages).
        raw_links: links as extracted (duplicates allowed; merged by canonical URL, features
            OR-ed).
        min_group: groups with fewer links are node links (seed 004: 5).
        dominant_ratio: share of the largest group a group needs to be a content group.
        use_shape: apply URL-shape signals before the group rule (module docstring, point 2).
        crosswise_content: article-shaped crosswise links are content links too (point 3).
        follow_crosswise: emit one ``http(s)://host/`` entry per editorial crosswise host.
        follow_channels: crosswise links to directory pages are node links (point 5).
        sister_evidence: directory links a sister host needs on the page (without an article
            link there) to count as editorial (point 5); links.
        block_share: share of editorial sister-host links a navigation block needs for its
            other sister-host links to be followed too (point 5); 0..1.
        rules: service-link rules (point 4); None: :data:`~newscrawl.algorithms.linkrules.DEFAULT_RULES`.

    Returns:
        :class:`PageClassification`. Raises ``ValueError`` if ``start_url`` has no host.
    """
    start = StartURL.parse(start_url)
    rules = DEFAULT_RULES if rules is None else rules
    merged = _merge(raw_links)
    classified: list[ClassifiedLink] = []
    grouped: list[ClassifiedLink] = []
    crosswise: list[tuple[ClassifiedLink, str, bool]] = []
    block_of: dict[str, int] = {url: raw.block for url, raw in merged.items()}
    articles: dict[str, bool] = {}
    for url, raw in merged.items():
        cls = classify_link(start, url, tag=raw.tag)
        link = ClassifiedLink(url, cls, DROPPED, raw.text, raw.tag, dict(raw.features),
                              published=raw.published)
        classified.append(link)
        if cls is LinkClass.FRAME:
            # A frame is part of the page when it is served from the site itself; ad and tag
            # manager frames from other registered domains are not fetched.
            frame_domain = registered_domain((urlsplit(url).hostname or "").lower())
            on_site = frame_domain == start.domain and effective_port(url) == start.port
            link.role = NODE if on_site else DROPPED
            continue
        if cls in (LinkClass.OUTWARD, LinkClass.UPWARD):
            continue
        article = use_shape and is_article_shaped(url)
        articles[url] = article
        reason = rules.service_reason(url, start.domain, article_shaped=article,
                                      own_host=start.host)
        if reason:
            link.reason = f"service:{reason}"
            continue
        if cls in (LinkClass.DOWNWARD, LinkClass.HORIZONTAL):
            parts = urlsplit(url)
            link.group = f"{parts.scheme}://{parts.netloc}{directory_of(url)}"
            grouped.append(link)
        else:  # CROSSWISE
            host = (urlsplit(url).hostname or "").lower()
            if crosswise_content and article:
                link.role = CONTENT
            crosswise.append((link, host, article))

    # Sister hosts the page shows to be editorial (point 5).
    article_hosts = {host for _link, host, article in crosswise if article}
    directories: Counter[str] = Counter(host for link, host, article in crosswise
                                        if not article and is_channel_shaped(link.url))
    editorial = article_hosts | {h for h, n in directories.items() if n >= sister_evidence}
    # A host below an editorial host is one of its editions: bj.auto. under auto., roll.sports.
    editorial |= {host for _link, host, _article in crosswise
                  if host.split(".", 1)[-1] in editorial}
    # A sister host without evidence of its own counts when its link sits in a block (a
    # navigation row) whose other sister-host links are mostly editorial: a portal's channel bar.
    block_votes: dict[int, list[tuple[str, bool]]] = defaultdict(list)
    for link, host, article in crosswise:
        if host != start.host and block_of.get(link.url):
            block_votes[block_of[link.url]].append((host, article or host in editorial))
    followed_roots: set[str] = set()
    for link, host, article in crosswise:
        if host != start.host and host not in editorial:
            votes = [ok for other, ok in block_votes.get(block_of.get(link.url, 0), ())
                     if other != host]
            if not (votes and sum(votes) >= block_share * len(votes)):
                continue
        if (follow_channels and link.role != CONTENT and use_shape
                and (is_channel_shaped(link.url)
                     or (host != start.host and _one_word_page(link.url)))):
            link.role = NODE
            if urlsplit(link.url).path in ("", "/"):
                followed_roots.add(host)
    entries: dict[str, str] = {}
    if follow_crosswise:
        for link, host, _article in crosswise:
            if host == start.host or host in followed_roots or host in entries:
                continue
            if follow_channels and host not in editorial:
                continue
            parts = urlsplit(link.url)
            root = f"{parts.scheme}://{parts.netloc}/"
            if rules.service_reason(root, start.domain, article_shaped=False, own_host=start.host):
                continue
            # One entry per host, whichever scheme the page linked first.
            entries[host] = root

    sizes = Counter(link.group for link in grouped)
    roles = group_roles(dict(sizes), min_group=min_group, dominant_ratio=dominant_ratio)
    for link in grouped:
        if use_shape and articles.get(link.url):
            link.role = CONTENT
        elif use_shape and is_directory_page(link.url):
            link.role = NODE
        elif roles[link.group] == NODE and use_shape and follow_channels and not is_channel_shaped(link.url):
            link.reason = "leaf"  # a single page that lists nothing: licence, contract, results
        else:
            link.role = roles[link.group]
    for link in classified:
        link.features["html_tag"] = 1 if link.role == CONTENT else 0

    counts: dict[str, int] = defaultdict(int)
    for link in classified:
        counts[link.link_class.value] += 1
    return PageClassification(classified, list(entries.values()), dict(counts))
