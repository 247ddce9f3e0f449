"""Article extraction: main text and metadata of a news page (pure; no Scrapy imports).

:func:`extract_article` returns ``title``, ``published`` (timezone-aware UTC datetime) with
``published_source`` and ``published_confidence``, ``modified``, ``authors``, ``text``,
``language`` (ISO 639-1), ``canonical_url`` and ``description``.

Sources and choices (measured by ``benchmarks/extraction_quality.py`` on the shared corpus,
set 04 = 258 fundus golden articles from 41 countries, set 06 = 131 pages of trafilatura's
evaluation set):

* Body text: trafilatura (Barbaresi 2021, https://trafilatura.readthedocs.io) ``bare_extraction``
  without metadata; reader comments are extracted apart (``include_comments=True``, as
  trafilatura's default) so their sections leave the main text, then discarded. Presets
  (``mode``) compared: ``default`` (chosen: set 04 token F1 0.945 mean / 0.970 median, set 06
  snippet F1 0.913), ``precision`` (0.948 / 0.976, but set 06 F1 0.894 as its recall drops to
  0.887), ``recall`` (0.938, 0.895), ``fast`` (0.935, 0.892).
* Published time: :func:`newscrawl.algorithms.pubdate.resolve_dates` (JSON-LD, Open Graph,
  microdata, meta, ``<time>``, a byline timestamp, the URL, htmldate's extensive search, the
  crawl's feed / sitemap dates, bounded by ``fetched_at``), returned with its source, its
  confidence and the page's modification time apart. Measured per set against trafilatura
  alone and htmldate alone in ``benchmarks/extraction_quality.py``.
* Input hygiene: C0 control characters are removed (one ESC byte made lxml's serialisation in
  trafilatura fail and emptied the article); comments are dropped by the parser, so the text
  after React's ``<!-- -->`` markers stays in its element (trafilatura dropped a comment with
  its tail text); a DOM deeper than libxml2's limit (256 elements: it silently drops the rest
  of the document) is flattened first (:func:`flatten_deep`) and reported in ``_details``;
  layout tables (a table holding another table) become plain blocks before trafilatura reads
  the page (:func:`unwrap_layout_tables`), so a portal page built of tables is not output as
  one table of navigation cells.
* Title: the first of JSON-LD ``headline``, ``og:title``, ``twitter:title``, first ``<h1>``,
  ``<title>``, trafilatura's title, after site suffixes are stripped ("Title | Site" becomes
  "Title" when another source says "Title" or "Site" is the ``og:site_name``). Set 04: 83.7 %
  exact (whitespace-normalised), og:title alone 81.8 %, JSON-LD alone 73.6 %, <h1> 70.9 %.
* Authors: JSON-LD ``author`` names, else ``<meta name=author>`` (URLs dropped), else
  trafilatura's author string, split by :func:`split_authors` (set 04: 83.7 % same list).
* Language: ``<html lang>``, ``content-language``, ``og:locale`` or JSON-LD ``inLanguage``,
  reduced to its ISO 639-1 primary subtag (found on 98.4 % of set 04).
* trafilatura's metadata pass runs only when a field above is still missing.

Never raises on bad input: empty, non-HTML, binary or oversized input gives the empty result
(all fields ``None``/empty, ``text == ""``); :func:`sniff_html` tells the crawler which bodies
are not HTML at all, so they are skipped rather than stored as empty articles.
"""

from __future__ import annotations

import html as html_lib
import logging
import re
from datetime import datetime, timezone
from typing import Any, Final, TypedDict
from urllib.parse import urljoin

from newscrawl import defaults
from newscrawl.algorithms.jsonld import ld_article as _ld_article
from newscrawl.algorithms.pagekind import declares_article
from newscrawl.algorithms.pubdate import parse_datetime, resolve_dates

__all__ = [
    "DEFAULT_MODE", "EMPTY_FIELDS", "MODES", "extract_article", "parse_datetime", "split_authors",
    "unwrap_layout_tables",
]

logger = logging.getLogger(__name__)

#: The keys of every result, with the values of the empty result.
EMPTY_FIELDS: Final[dict[str, Any]] = {
    "title": None,
    "published": None,
    "published_source": None,
    "published_confidence": None,
    "published_local": None,
    "modified": None,
    "authors": [],
    "text": "",
    "language": None,
    "canonical_url": None,
    "description": None,
}

class Preset(TypedDict, total=False):
    """Keyword arguments of trafilatura's ``bare_extraction`` a preset sets."""

    fast: bool
    favor_precision: bool
    favor_recall: bool


#: trafilatura presets: mode -> bare_extraction keyword arguments.
MODES: Final[dict[str, Preset]] = {
    "default": {},
    "precision": {"favor_precision": True},
    "recall": {"favor_recall": True},
    "fast": {"fast": True},
}
#: Default preset (chosen by benchmarks/extraction_quality.py).
DEFAULT_MODE: Final = "default"

#: Title sources in order of trust, after site suffixes are stripped (measured on set 04:
#: JSON-LD headline, og:title, twitter:title, <h1>, <title>, trafilatura).
_TITLE_ORDER: Final = ("ld", "og", "twitter", "h1", "title", "trafilatura")
_TITLE_SEP: Final = re.compile(r"^\s*(?:[|\-\u2013\u2014:\u00b7\u2022\u3163\uff5c/\u00bb]+)")
_TITLE_SEP_END: Final = re.compile(r"\s*(?:[|\-\u2013\u2014:\u00b7\u2022\u3163\uff5c/\u00bb]+)\s*$")

_AUTHOR_SPLIT: Final = re.compile(r"\s*(?:[;|/&,]|\s(?:and|und|und von|et|y|e|и)\s)\s*", re.I)
_AUTHOR_PREFIX: Final = re.compile(r"^(?:by|von|par|por|di|door|av)\s+", re.I)
_LANG: Final = re.compile(r"^([a-zA-Z]{2})(?:[-_].*)?$")
_WS: Final = re.compile(r"\s+")
_HTML_START: Final = re.compile(r"<\s*(?:!doctype|html|head|body|meta|title|div|p|article)\b", re.I)


def _empty() -> dict[str, Any]:
    out = dict(EMPTY_FIELDS)
    out["authors"] = []
    return out


# --- dates -----------------------------------------------------------------------------------


# --- JSON-LD ---------------------------------------------------------------------------------


def _ld_text(value: Any) -> str | None:
    if isinstance(value, str):
        text = _WS.sub(" ", html_lib.unescape(value)).strip()
        return text or None
    if isinstance(value, list) and value:
        return _ld_text(value[0])
    return None


def _ld_authors(value: Any) -> list[str]:
    names: list[str] = []
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            name = _ld_text(item.get("name"))
            if name:
                names.append(name)
        elif isinstance(item, str):
            names.extend(split_authors(item))
    return names


# --- small metadata helpers ------------------------------------------------------------------


def _meta(tree: Any, *keys: str) -> str | None:
    """Content of the first ``<meta>`` whose property, name or itemprop is one of ``keys``."""
    wanted = {k.lower() for k in keys}
    found: dict[str, str] = {}
    for el in tree.iter("meta"):
        attrs = el.attrib
        key = (attrs.get("property") or attrs.get("name") or attrs.get("itemprop") or "").lower()
        if key in wanted and key not in found:
            content = (attrs.get("content") or "").strip()
            if content:
                found[key] = content
    for k in keys:
        if k.lower() in found:
            return found[k.lower()]
    return None


def split_authors(value: str | None) -> list[str]:
    """Split an author string into names: ``"A; B und C"`` -> ``["A", "B", "C"]``.

    Separators: ``;`` ``,`` ``|`` ``/`` ``&`` and the words and/und/et/y/e; a leading
    "By"/"Von" is dropped; duplicates removed (order kept). Never raises.
    """
    if not value:
        return []
    out: list[str] = []
    for part in _AUTHOR_SPLIT.split(value):
        name = _AUTHOR_PREFIX.sub("", _WS.sub(" ", part).strip()).strip(" .:-")
        if name and name not in out and len(name) <= 100:
            out.append(name)
    return out


def _language(tree: Any, ld: dict[str, Any] | None) -> str | None:
    values = [tree.get("lang"), tree.get("{http://www.w3.org/XML/1998/namespace}lang")]
    values.append(_meta(tree, "content-language", "og:locale", "language", "dc.language"))
    for el in tree.iter("meta"):
        if (el.get("http-equiv") or "").lower() == "content-language":
            values.append(el.get("content"))
    if ld is not None:
        values.append(_ld_text(ld.get("inLanguage")))
    for value in values:
        if value:
            m = _LANG.match(str(value).strip().split(",")[0].strip())
            if m:
                return m.group(1).lower()
    return None


def _canonical(tree: Any, url: str) -> str | None:
    for el in tree.xpath('//link[@href and contains(concat(" ", normalize-space(translate(@rel,'
                         '"CANOLI","canoli")), " "), " canonical ")]'):
        href = str(el.get("href") or "").strip()
        if href:
            return urljoin(url, href)
    og = _meta(tree, "og:url")
    if og:
        return urljoin(url, og)
    return url or None


def _first_h1(tree: Any) -> str | None:
    for el in tree.iter("h1"):
        text = _WS.sub(" ", el.text_content()).strip()
        if text:
            return text
    return None


def _strip_suffixes(candidates: dict[str, str | None], site_name: str | None) -> dict[str, str]:
    """Drop site suffixes: "Title | Site" becomes "Title" when another source gives "Title" or
    when "Site" is the page's ``og:site_name``."""
    values = {k: v for k, v in candidates.items() if v}
    shorter = sorted(set(values.values()), key=len)
    out: dict[str, str] = {}
    for key, value in values.items():
        best = value
        for other in shorter:
            if len(other) >= len(best):
                break
            if best.startswith(other) and _TITLE_SEP.match(best[len(other) :]):
                best = other
                break
        if site_name and best.endswith(site_name) and len(best) > len(site_name):
            head = best[: -len(site_name)]
            m = _TITLE_SEP_END.search(head)
            if m and m.start() > 0:
                best = head[: m.start()]
        out[key] = best
    return out


def _choose_title(candidates: dict[str, str | None], site_name: str | None) -> str | None:
    values = _strip_suffixes(candidates, site_name)
    for key in _TITLE_ORDER:
        if values.get(key):
            return values[key]
    return None


# --- main ------------------------------------------------------------------------------------


#: libxml2's HTML parser stops at this element depth (256 without XML_PARSE_HUGE) and drops
#: the rest of the document; deeper pages are flattened below it first (:func:`flatten_deep`).
PARSER_MAX_DEPTH: Final = 256
#: Nesting kept by :func:`flatten_deep` (elements; html and body included).
FLATTEN_DEPTH: Final = 200
# C0 controls except tab, newline, carriage return, form feed; and DEL. XML (and so lxml's
# serialisation inside trafilatura) rejects them: one ESC byte emptied a whole article.
_CONTROL_CHARS: Final = dict.fromkeys([*range(0, 9), 11, *range(14, 32), 127])
_TAG: Final = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:[^<>\"']|\"[^\"]*\"|'[^']*')*)>|<!--.*?-->",
                         re.S)
_VOID: Final = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr", "keygen", "command", "basefont", "frame", "isindex",
})


#: File signatures of formats that are served as text/html by mistake (WHATWG MIME Sniffing,
#: "matching an image / audio or video / archive type pattern", plus PDF, PostScript,
#: executables and compressed streams).
_BINARY_MAGIC: Final = (
    b"%PDF-", b"%!PS-Adobe-", b"PK\x03\x04", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a",
    b"\xff\xd8\xff", b"RIFF", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c",
    b"Rar!\x1a\x07", b"\x00\x00\x01\x00", b"OggS", b"ID3", b"fLaC", b"\x7fELF", b"MZ",
    b"wOFF", b"wOF2", b"\x00\x01\x00\x00", b"\x1aE\xdf\xa3", b"\xd0\xcf\x11\xe0",
)
# WHATWG "binary data byte": C0 controls other than TAB, LF, FF, CR and ESC.
_BINARY_BYTES: Final = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32)])
_HTML_START_BYTES: Final = re.compile(
    rb"<\s*(?:!doctype|html|head|body|meta|title|div|p|article|script|link|table)\b", re.I)
#: Bytes of the body a sniff reads.
SNIFF_BYTES: Final = 4096


def sniff_html(body: bytes) -> str | None:
    """Why ``body`` is not an HTML page, or ``None`` when it may be one.

    :param body: the raw response body (only the first :data:`SNIFF_BYTES` are read, and the
        first 64 KiB for the markup test).
    :returns: ``"empty"``, ``"signature"`` (a PDF, image, archive ... file signature),
        ``"binary"`` (more than 1 % binary data bytes, WHATWG MIME Sniffing §7.2), or
        ``"no-markup"`` (no HTML tag in the first 64 KiB); ``None`` for HTML.
    :raises: nothing.

    UTF-16 / UTF-32 pages (BOM, or NUL bytes in every other position) are not binary.
    """
    head = body[:SNIFF_BYTES].lstrip(b" \t\r\n\x0c")
    if not head:
        return "empty"
    if head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or (
        len(head) >= 64 and head[1::2].count(0) > len(head) // 4
    ) or (len(head) >= 64 and head[0::2].count(0) > len(head) // 4):
        return None  # UTF-16/32 text: its NULs are not binary data
    if head.startswith(_BINARY_MAGIC):
        return "signature"
    binary = len(head) - len(head.translate(None, _BINARY_BYTES))
    if binary > len(head) // 100:
        return "binary"
    if not _HTML_START_BYTES.search(body[:65536]):
        return "no-markup"
    return None


#: Elements kept below the flattening limit (up to ``_KEEP_MARGIN`` more levels), so the text of
#: a deep paragraph, heading or list item stays a paragraph for the extractor; wrapper elements
#: (div, span, section ...) are the ones dropped.
_KEEP_DEEP: Final = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "blockquote", "pre", "a", "b",
    "strong", "em", "i", "table", "tr", "td", "th", "tbody", "thead",
})
_KEEP_MARGIN: Final = 40


def flatten_deep(html: str, *, limit: int = FLATTEN_DEPTH) -> tuple[str, int]:
    """Drop the tags nested deeper than ``limit`` and keep their text: ``(html, tags dropped)``.

    :param html: a page.
    :param limit: element nesting kept (open elements on the stack, void elements not counted).
    :returns: the page with the start and end tags of wrapper elements (div, span, section ...)
        below ``limit`` removed (paragraphs, headings, list items and tables are kept for
        ``_KEEP_MARGIN`` more levels); their text and the text after them stays in place. Also
        the number of start tags removed. Comments are removed too.
    :raises: nothing.

    Nesting is tracked as a stack of open elements; an end tag closes up to its matching open
    element (as the HTML tree builder does for misnested tags), so the count stays at or above
    the parser's own depth. Used only when a parse hit :data:`PARSER_MAX_DEPTH`.
    """
    stack: list[str] = []
    dropped: dict[str, int] = {}
    removed = 0
    out: list[str] = []
    pos = 0
    for m in _TAG.finditer(html):
        out.append(html[pos : m.start()])
        pos = m.end()
        name = (m.group(2) or "").lower()
        if not name:  # a comment
            continue
        if m.group(1):  # end tag
            if dropped.get(name):
                dropped[name] -= 1
                continue
            if name in stack:
                while stack and stack.pop() != name:
                    pass
            out.append(m.group(0))
            continue
        if name in _VOID or (m.group(3) or "").rstrip().endswith("/"):
            out.append(m.group(0))
            continue
        if name in ("script", "style", "textarea", "title"):  # raw text: up to its end tag
            end = html.lower().find(f"</{name}", m.end())
            end = len(html) if end < 0 else end
            if len(stack) < limit:
                out.append(m.group(0) + html[m.end() : end])
            else:  # too deep: the element goes whole (script text is not page text)
                dropped[name] = dropped.get(name, 0) + 1
                removed += 1
            pos = end
            continue
        if len(stack) >= limit and (name not in _KEEP_DEEP or len(stack) >= limit + _KEEP_MARGIN):
            dropped[name] = dropped.get(name, 0) + 1
            removed += 1
            continue
        stack.append(name)
        out.append(m.group(0))
    out.append(html[pos:])
    return "".join(out), removed


def _parse(html: str, details: dict[str, Any] | None = None) -> Any:
    """lxml tree of the page, comments removed; pages past libxml2's depth limit are flattened
    (:func:`flatten_deep`) so no text is lost; ``details`` gets ``dom_flattened`` (tags removed)
    and ``dom_truncated`` (True when even the flattened page hit the limit)."""
    from lxml import html as lxml_html
    from lxml.etree import ParserError

    parser = lxml_html.HTMLParser(remove_comments=True)
    try:
        tree = lxml_html.document_fromstring(html, parser=parser)
    except (ParserError, ValueError):
        return None
    if not any("Excessive depth" in e.message for e in parser.error_log):
        return tree
    flat, removed = flatten_deep(html)
    logger.info("DOM deeper than %d elements: %d tags flattened", PARSER_MAX_DEPTH, removed)
    try:
        tree = lxml_html.document_fromstring(flat, parser=parser)
    except (ParserError, ValueError):
        return None
    truncated = any("Excessive depth" in e.message for e in parser.error_log)
    if truncated:
        logger.warning("DOM still deeper than %d elements after flattening: text lost", PARSER_MAX_DEPTH)
    if details is not None:
        details["dom_flattened"] = removed
        details["dom_truncated"] = truncated
    return tree


def extract_article(
    html: str | bytes | None,
    url: str,
    *,
    mode: str = DEFAULT_MODE,
    max_chars: int = defaults.NEWSCRAWL_EXTRACT_MAX_BYTES,
    fetched_at: datetime | None = None,
    first_linked_at: datetime | None = None,
    feed_date: datetime | str | None = None,
    sitemap_date: datetime | str | None = None,
    _details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Extract the article of one HTML page.

    :param html: the decoded page (``str``); ``bytes`` are decoded with
        :func:`newscrawl.algorithms.charset.decode_html` first.
    :param url: the page URL (resolves the canonical link; passed to trafilatura).
    :param mode: trafilatura preset, a key of :data:`MODES` (``default``, ``precision``,
        ``recall``, ``fast``).
    :param max_chars: larger inputs are not parsed (the empty result is returned).
    :param fetched_at, first_linked_at, feed_date, sitemap_date: what the crawl knows of the
        page's dates, passed to :func:`newscrawl.algorithms.pubdate.resolve_dates` (aware
        datetimes; feed and sitemap dates may be timestamp strings).
    :returns: dict with keys ``title`` (str|None), ``published`` (aware UTC datetime|None),
        ``published_source`` (str|None: a key of :data:`newscrawl.algorithms.pubdate.CONFIDENCE`),
        ``published_confidence`` (float 0..1|None), ``published_local`` (str|None: ISO 8601, the
        publication in the publisher's UTC offset, or its day for day-precision answers),
        ``modified`` (aware UTC datetime|None),
        ``authors`` (list[str]), ``text`` (str, paragraphs separated by newlines; ``""`` when
        nothing was found), ``language`` (ISO 639-1 str|None), ``canonical_url`` (str|None),
        ``description`` (str|None).
    :raises ValueError: only for an unknown ``mode``; bad pages never raise.
    """
    if mode not in MODES:
        raise ValueError(f"unknown extraction mode {mode!r}; expected one of {sorted(MODES)}")
    dates = {"fetched_at": fetched_at, "first_linked_at": first_linked_at,
             "feed_date": feed_date, "sitemap_date": sitemap_date}
    try:
        return _extract(html, url, mode=mode, max_chars=max_chars, details=_details, dates=dates)
    except Exception:  # noqa: BLE001 - a crawler must not die on one malformed page
        logger.debug("extraction failed for %s", url, exc_info=True)
        return _empty()


def _extract(
    html: str | bytes | None,
    url: str,
    *,
    mode: str,
    max_chars: int,
    details: dict[str, Any] | None,
    dates: dict[str, Any],
) -> dict[str, Any]:
    if html is None:
        return _empty()
    if isinstance(html, (bytes, bytearray)):
        if len(html) > max_chars:
            return _empty()
        from newscrawl.algorithms.charset import decode_html

        html = decode_html(bytes(html), http_charset=None)[0]
    if not isinstance(html, str) or len(html) > max_chars or not html.strip():
        return _empty()
    html = html.translate(_CONTROL_CHARS)
    if not _HTML_START.search(html[:65536]):
        return _empty()  # not HTML (plain text, binary garbage, JSON ...)
    tree = _parse(html, details)
    if tree is None:
        return _empty()

    ld = _ld_article(tree)
    result = _empty()
    resolution = resolve_dates(tree, url, ld=ld, **dates)
    result["published"] = resolution.published
    result["published_source"] = resolution.source
    result["published_confidence"] = resolution.confidence if resolution.source else None
    # the publisher's local time with its UTC offset, or its day (ISO 8601 str)
    result["published_local"] = (resolution.local.isoformat()
                                 if resolution.local is not None else None)
    result["modified"] = resolution.modified
    result["language"] = _language(tree, ld)
    result["canonical_url"] = _canonical(tree, url)
    authors = _ld_authors(ld.get("author")) if ld else []
    if not authors:
        authors = split_authors(_meta(tree, "author", "article:author", "parsely-author"))
        # article:author is often a profile URL, not a name
        authors = [a for a in authors if "://" not in a and not a.startswith("www.")]
    title_candidates: dict[str, str | None] = {
        "ld": _ld_text(ld.get("headline")) if ld else None,
        "og": _clean(_meta(tree, "og:title")),
        "twitter": _clean(_meta(tree, "twitter:title")),
        "h1": _first_h1(tree),
        "title": _clean(tree.findtext(".//title")),
    }
    description = _clean(_meta(tree, "description", "og:description", "twitter:description"))
    if description is None and ld is not None:
        description = _ld_text(ld.get("description"))
    site_name = _clean(_meta(tree, "og:site_name", "application-name"))

    unwrapped = unwrap_layout_tables(tree)  # after the date, title and metadata passes above
    text = _trafilatura_text(tree, url, mode)
    result["text"] = text

    trafilatura_meta: dict[str, Any] = {}
    if not authors or not any(title_candidates.values()) or description is None:
        trafilatura_meta = _trafilatura_metadata(tree, url)
        title_candidates["trafilatura"] = _clean(trafilatura_meta.get("title"))
        description = description or _clean(trafilatura_meta.get("description"))
        if not authors:
            authors = split_authors(trafilatura_meta.get("author"))
    result["title"] = _choose_title(title_candidates, site_name)
    result["authors"] = authors
    result["description"] = description
    if details is not None:
        details["layout_tables"] = unwrapped
        details["title_candidates"] = _strip_suffixes(title_candidates, site_name)
        details["trafilatura_meta"] = trafilatura_meta
        # the page declares itself an article (pagekind.page_kind: not an index page)
        details["article_markup"] = ld is not None or declares_article(None, _meta(tree, "og:type"))
        details["published_local"] = resolution.local
        details["published_date_only"] = resolution.date_only
        details["date_candidates"] = resolution.candidates
        details["date_rejected"] = resolution.rejected
    return result


#: Structural elements of a table (they go with it when a layout table is unwrapped).
_TABLE_PARTS: Final = ("tbody", "thead", "tfoot", "tr", "td", "th")


def unwrap_layout_tables(tree: Any) -> int:
    """Turn the layout tables of ``tree`` into plain blocks (in place); returns how many.

    :param tree: an lxml HTML tree (modified: ``table``, ``tr``, ``td`` ... of a layout table
        become ``div``; nested data tables are kept).
    :returns: the number of tables unwrapped.
    :raises: nothing.

    A table is *layout* when it holds another table, or says so (``role="presentation"`` /
    ``role="none"``, ``datatable="0"``): the first rule of Mozilla Readability's data-table test
    (``_markDataTables``; WAI-ARIA for the roles). Pages of the 2000s portals (set 12: sina,
    sohu, yahoo.cn, wenxuecity) are built of nested tables; trafilatura, given tables, keeps such
    a page-wide table as one table and outputs its navigation, advertising and link boxes as
    ``| cell | cell |`` rows next to the article; as blocks, its own boilerplate rules apply to
    each cell. Data tables do not nest tables, so they stay tables. Measured on the corpus
    (``benchmarks/extraction_quality.py``): set 12 body F1 0.897 -> 0.910 (15 pages better,
    one 0.002 worse), set 06 snippet F1 0.911 -> 0.912, sets 04 and 08 unchanged. Readability's further rules (one row or one column is
    layout) also unwrapped one-cell shopping boxes that set 08's ground truth keeps.
    """
    layout = []
    for table in tree.iter("table"):
        if ((table.get("role") or "").strip().lower() in ("presentation", "none")
                or (table.get("datatable") or "").strip() == "0"
                or next(table.iterdescendants("table"), None) is not None):
            layout.append(table)
    if not layout:
        return 0
    parts = []
    for table in layout:
        for el in table.iter(*_TABLE_PARTS):
            owner = el.getparent()
            while owner is not None and owner.tag != "table":
                owner = owner.getparent()
            if owner is table:
                parts.append(el)
    for el in [*parts, *layout]:
        el.tag = "div"
    return len(layout)


def _clean(value: str | None) -> str | None:
    if not value:
        return None
    text = _WS.sub(" ", html_lib.unescape(value)).strip()
    return text or None


def _trafilatura_text(tree: Any, url: str, mode: str) -> str:
    """Main text by trafilatura (no metadata: ours is read above); ``""`` when none found."""
    from trafilatura import bare_extraction

    try:
        doc = bare_extraction(
            tree,
            url=url or None,
            with_metadata=False,
            include_comments=True,  # comment sections go to their own field, out of the text
            include_tables=True,
            deduplicate=False,
            **MODES[mode],
        )
    except Exception:  # noqa: BLE001 - trafilatura raises on some malformed trees
        logger.debug("trafilatura failed on %s", url, exc_info=True)
        return ""
    if doc is None:
        return ""
    doc = doc if isinstance(doc, dict) else doc.as_dict()
    return (doc.get("text") or "").strip()


def _trafilatura_metadata(tree: Any, url: str) -> dict[str, Any]:
    """trafilatura's metadata (htmldate without extensive search), only for missing fields."""
    from trafilatura import extract_metadata

    try:
        doc = extract_metadata(tree, url or None, {"extensive_search": False, "original_date": True})
    except Exception:  # noqa: BLE001
        logger.debug("trafilatura metadata failed on %s", url, exc_info=True)
        return {}
    return doc.as_dict() if doc is not None else {}
