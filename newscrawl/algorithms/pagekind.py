"""What kind of page an article-shaped URL answered with: an article, or a page that is not one (pure).

A crawler that follows article-shaped links still meets pages that are not articles: *soft
404s* (a "page not found" answered with status 200, often the same page on many URLs) and
*index pages* (archive, calendar, tag and author listings). :func:`page_kind` names such a page
from what the extractor already has (URL, title, text, the page's declared type);
:class:`RepeatTracker` finds the soft 404s that only show as the same page on many URLs of one
site. Neither keeps a page from being fetched: the spider stores such pages as nodes, counts
them (``newscrawl/extraction/<kind>``) and logs each kind once.

Kinds (:data:`KINDS`):

* ``soft_404``: the title says the page was not found (English, German, French, Spanish,
  Italian, Portuguese, Dutch, Polish, Russian, Chinese, Japanese, Korean: the corpus languages)
  and the text is short (< :data:`SOFT_404_MAX_CHARS`); or the same title and text seen on
  :data:`REPEAT_URLS` or more URLs of one site (:class:`RepeatTracker`). Tiny text alone is
  not a soft 404: a short or broken real page (a truncated body, a one-line item) is still
  stored as an article, with its text. Soft 404s: Bar-Yossef, Broder,
  Kumar, Tomkins, "Sic transit gloria telae: towards an understanding of the web's decay",
  WWW 2004, section 3 (same content on random URLs of a site, short "not found" pages).
* ``calendar``: a path with a calendar segment (``/calendar/2024/05/archive``, ``/kalender/``).
* ``archive``: a path that is an archive segment followed only by dates and page numbers
  (``/archive/2024/05/``, ``/archiv/``, ``/2024/05/`` alone, ``/page/3``).
* ``tag``: ``/tag/<slug>``, ``/tags/``, ``/topic/``, ``/schlagwort/`` … with nothing after but a
  page number.
* ``author``: ``/author/<slug>``, ``/autor/``, ``/auteur/`` … with nothing after but a page number.

Index kinds are named from the URL path and only when the page declares no article type
(JSON-LD ``@type`` of the Article family, ``og:type`` ``article``): an article under
``/archives/2012/10/slug.html`` or ``/author/jane/my-post`` is not an index. Thresholds were
checked on corpus sets 04/06/08/12 (``benchmarks/extraction_quality.py`` prints how many of their
article pages are given a kind: the target is none).
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from typing import Final

__all__ = ["KINDS", "REPEAT_URLS", "SOFT_404_MAX_CHARS", "RepeatTracker",
           "declares_article", "index_kind", "page_kind"]

#: Every kind :func:`page_kind` returns (besides ``None``: an article).
KINDS: Final = ("soft_404", "calendar", "archive", "tag", "author")
#: A "not found" title names a soft 404 only when the text is shorter than this (characters).
SOFT_404_MAX_CHARS: Final = 2000
#: The same title and text on this many distinct URLs of one site make a soft 404.
REPEAT_URLS: Final = 3

_NOT_FOUND: Final = re.compile(
    r"(?<![0-9])404(?![0-9])|not\s+found|page\s+(?:does\s+not|doesn.t)\s+exist|no\s+longer\s+available"
    r"|nicht\s+gefunden|existiert\s+nicht|nicht\s+verf(?:ü|ue)gbar|fehlerseite"
    r"|introuvable|page\s+non\s+trouv[ée]e|n.existe\s+pas"
    r"|no\s+encontrad[ao]|no\s+existe|non\s+trovat[ao]|non\s+esiste"
    r"|n[ãa]o\s+encontrad[ao]|niet\s+gevonden|bestaat\s+niet|nie\s+znaleziono|nie\s+istnieje"
    r"|не\s+найден|не\s+существует|ошибка\s+404"
    r"|页面不存在|页面未找到|找不到(?:页面|网页|您要的页面)|网页不存在|頁面不存在|找不到網頁|页面没有找到"
    r"|ページが見つかりません|お探しのページ|페이지를\s*찾을\s*수\s*없",
    re.I,
)
_SEGMENT_CALENDAR: Final = frozenset({"calendar", "kalender", "calendario", "calendrier", "kalendarz"})
_SEGMENT_ARCHIVE: Final = frozenset({"archive", "archives", "archiv", "archivio", "archivo", "archief",
                                     "arsip", "archiwum", "архив"})
_SEGMENT_TAG: Final = frozenset({"tag", "tags", "topic", "topics", "schlagwort", "schlagworte",
                                 "stichwort", "thema", "themen", "etiqueta", "etiquetas", "sujet",
                                 "tagged", "теги", "тег"})
_SEGMENT_AUTHOR: Final = frozenset({"author", "authors", "autor", "autoren", "auteur", "auteurs",
                                    "autore", "autori", "redakteur", "byline", "journalist",
                                    "автор"})
#: What may follow an index segment: a year, month and day, then pagination, then an index file
#: (``2024/05``, ``2024/05/page/2``, ``page/3``, ``index.html``); ``/archives/123`` (a numeric
#: permalink) does not match.
_DATES_THEN_PAGES: Final = re.compile(
    r"(?:(?:199[5-9]|20[0-9]{2})(?:/[0-9]{1,2}){0,2})?(?:/?(?:page|seite|p)/[0-9]{1,5})?"
    r"(?:/?index\.(?:html?|php))?")
_YEAR_SEGMENT: Final = re.compile(r"199[5-9]|20[0-9]{2}")
#: ``@type`` values (and ``og:type``) that declare an article.
_ARTICLE_TYPES: Final = frozenset({
    "article", "newsarticle", "reportagenewsarticle", "analysisnewsarticle", "blogposting",
    "opinionnewsarticle", "reviewnewsarticle", "backgroundnewsarticle", "scholarlyarticle",
    "techarticle", "liveblogposting", "socialmediaposting", "report", "advertisercontentarticle",
    "satiricalarticle", "posting",
})


def declares_article(ld_type: object, og_type: str | None) -> bool:
    """Does the page declare itself an article (JSON-LD ``@type`` or ``og:type``)?

    :param ld_type: the ``@type`` of the page's main JSON-LD object (str, list of str or None).
    :param og_type: the ``og:type`` meta content, or None.
    :returns: True when either names a type of the Article family (schema.org) or ``article``.
    :raises: nothing.
    """
    types = ld_type if isinstance(ld_type, list) else [ld_type]
    for t in types:
        if isinstance(t, str) and t.rsplit("/", 1)[-1].strip().lower() in _ARTICLE_TYPES:
            return True
    return og_type is not None and og_type.strip().lower() in (
        "article", "og:article", "blog", "blogpost")


def _segments(url: str) -> list[str]:
    path = url.split("://", 1)[-1]
    path = path[path.find("/"):] if "/" in path else "/"
    path = path.split("?", 1)[0].split("#", 1)[0]
    return [s for s in path.lower().split("/") if s]


def index_kind(url: str) -> str | None:
    """The index kind (``calendar``, ``archive``, ``tag``, ``author``) a URL path names, or None.

    :param url: absolute or relative URL; only its path is read.
    :returns: see the module docstring; None for every other path.
    :raises: nothing.

    >>> index_kind("https://example.com/calendar/2024/05/archive")
    'calendar'
    >>> index_kind("https://example.com/archives/2012/10/my-post.html") is None
    True
    >>> index_kind("https://example.com/tag/elections/page/2/")
    'tag'
    """
    segs = _segments(url)
    if not segs:
        return None
    for i, seg in enumerate(segs):
        rest = segs[i + 1:]
        # a bare segment only: ``/archives.php?date=200506&blogID=1854`` (a blog script of set
        # 12) serves a post
        base = seg
        if base in _SEGMENT_CALENDAR:
            return "calendar"
        if base in _SEGMENT_ARCHIVE and _DATES_THEN_PAGES.fullmatch("/".join(rest)):
            return "archive"
        if base in _SEGMENT_TAG or base in _SEGMENT_AUTHOR:
            # /tag/<slug>[/page/N]: one slug, then at most pagination
            if rest and not _YEAR_SEGMENT.fullmatch(rest[0]) \
                    and _DATES_THEN_PAGES.fullmatch("/".join(rest[1:])):
                return "tag" if base in _SEGMENT_TAG else "author"
            return None
    # /2024/ , /2024/05/ , /2024/05/30/ alone: a date archive
    if 1 <= len(segs) <= 3 and _YEAR_SEGMENT.fullmatch(segs[0]) \
            and all(re.fullmatch(r"[0-9]{1,2}", s) for s in segs[1:]):
        return "archive"
    return None


def page_kind(url: str, *, title: str | None, text: str | None,
              article_markup: bool = False) -> str | None:
    """The kind of a page fetched as an article, or None for an article.

    :param url: the page URL (after redirects).
    :param title: the extracted title (or the ``<title>``), or None.
    :param text: the extracted body text (``""`` when none).
    :param article_markup: the page declares itself an article (an article JSON-LD object,
        ``og:type`` article: :func:`declares_article`).
    :returns: a key of :data:`KINDS`, or None.
    :raises: nothing.
    """
    text = text or ""
    size = len(text.strip())
    if title and _NOT_FOUND.search(title) and size < SOFT_404_MAX_CHARS:
        return "soft_404"
    if not article_markup:
        kind = index_kind(url)
        if kind is not None:
            return kind
    return None


class RepeatTracker:
    """The same page (title and text) on many URLs of one site: a soft 404 (pure, bounded).

    :param threshold: distinct URLs of one site with the same page that make it a soft 404
        (default :data:`REPEAT_URLS`; the first ``threshold - 1`` are not flagged: they cannot be
        told from an article and its copy yet).
    :param max_sites: sites remembered (least recently seen forgotten first).
    :param per_site: page fingerprints remembered per site (least recently seen forgotten first).

    Memory: at most ``max_sites * per_site`` entries of a 16-byte digest and up to ``threshold``
    URL digests each.
    """

    def __init__(self, *, threshold: int = REPEAT_URLS, max_sites: int = 2000,
                 per_site: int = 256) -> None:
        if threshold < 2:
            raise ValueError("threshold must be at least 2")
        self.threshold = threshold
        self.max_sites = max_sites
        self.per_site = per_site
        self._sites: OrderedDict[str, OrderedDict[bytes, set[bytes]]] = OrderedDict()

    def seen(self, site: str, url: str, title: str | None, text: str | None) -> bool:
        """Record one page; True when its title and text have now been seen on ``threshold`` or
        more distinct URLs of ``site``.

        :raises: nothing.
        """
        key = hashlib.blake2b(f"{title or ''}\x00{(text or '').strip()}".encode(),
                              digest_size=16).digest()
        where = hashlib.blake2b(url.encode(), digest_size=8).digest()
        pages = self._sites.get(site)
        if pages is None:
            pages = self._sites[site] = OrderedDict()
            if len(self._sites) > self.max_sites:
                self._sites.popitem(last=False)
        else:
            self._sites.move_to_end(site)
        urls = pages.get(key)
        if urls is None:
            urls = pages[key] = set()
            if len(pages) > self.per_site:
                pages.popitem(last=False)
        else:
            pages.move_to_end(key)
        if len(urls) < self.threshold:
            urls.add(where)
        return len(urls) >= self.threshold


class PageKinds:
    """The page kinds of one crawl: :func:`page_kind` of each page fetched as an article, and
    the soft 404s a :class:`RepeatTracker` finds; remembers which kinds were reported already
    (each kind is logged once per run). Pure.
    """

    def __init__(self, repeats: RepeatTracker | None = None) -> None:
        self.repeats = repeats or RepeatTracker()
        self.reported: set[str] = set()

    def judge(self, url: str, site: str, title: str | None, text: str | None,
              article_markup: bool) -> tuple[str | None, bool]:
        """``(kind, first)``: the page's kind (None: an article) and whether it is the first of
        its kind this run.

        :raises: nothing.
        """
        kind = page_kind(url, title=title, text=text, article_markup=article_markup)
        if kind is None and text and self.repeats.seen(site, url, title, text):
            kind = "soft_404"
        if kind is None:
            return None, False
        first = kind not in self.reported
        self.reported.add(kind)
        return kind, first
