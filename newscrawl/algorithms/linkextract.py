"""Extract a page's links with the NewsPageRank markup features of each.

Input is an lxml element tree (Scrapy's ``response.selector.root`` is one, so the page is parsed
once); output is a list of :class:`RawLink`. Features follow seed 004 §3 (DESIGN.md §3):

- ``image``: an ``<img>``/``<picture>`` inside the anchor, or in the anchor's list item / teaser
  block when that block holds at most :data:`MAX_ANCHORS_IN_IMAGE_BLOCK` anchors;
- ``font_size``: the anchor sits in or holds an ``h1``–``h4``, ``<big>``, ``<font size>`` ≥ 4
  (or ``+n``), an inline ``font-size`` ≥ 16px / ``large``, or a class that names a headline;
- ``bold``: ``<b>``/``<strong>`` around or inside it, or ``font-weight: bold`` / ≥ 600.

``html_tag`` (content link vs node link) is not markup: the classifier sets it.

Links are cleaned as the HTML standard says: ASCII whitespace stripped from the attribute,
resolved against ``<base href>`` (itself resolved against the page URL) and the page URL;
``javascript:``, ``mailto:``, ``tel:``, ``data:`` and other non-http(s) schemes are not links,
nor are pure ``#fragment`` links (counted in :class:`ExtractionStats`).

Addition (issue 10): portals ship parts of their article lists as HTML inside a hidden
``<textarea>`` that a script renders later (sina.com.cn's home page holds 27 such tab panels,
about 370 links to its news, sports and video articles); to the parser that is text. A
``<textarea>`` outside any ``<form>`` and without a ``name`` (so it is no form field) whose text
holds an anchor is parsed as an HTML fragment and its links are read like the page's own
(counted in ``ExtractionStats.from_textarea``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias
from urllib.parse import urljoin, urlsplit, urlunsplit

import lxml.html
from lxml import etree
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from newscrawl.algorithms.pubdate import parse_datetime

#: An ``lxml.html`` element (lxml ships no type information, so it is ``Any`` to mypy).
Element: TypeAlias = Any

#: An image counts for a link when its enclosing block holds at most this many anchors.
MAX_ANCHORS_IN_IMAGE_BLOCK = 3
#: How many ancestors are inspected for headline / bold markup and for the image block.
ANCESTOR_LEVELS = 4
#: A link's block (``RawLink.block``) is the nearest ancestor with at least this many anchors …
BLOCK_MIN_ANCHORS = 8
#: … found at most this many levels above the anchor.
BLOCK_LEVELS = 6

_BLOCK_TAGS = frozenset({"li", "article", "figure", "dd", "td", "section", "div"})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "big"})
_BOLD_TAGS = frozenset({"b", "strong"})
_INVISIBLE_TAGS = frozenset({"script", "style", "noscript", "template"})
_IMAGE_TAGS = ("img", "picture")
_HEADLINE_CLASS = re.compile(
    r"(?:^|[\s_-])(?:headline|hero|lead|big|large|xl|xxl|topstory|top-story|h[1-4])(?:$|[\s_-])",
    re.IGNORECASE,
)
_BOLD_CLASS = re.compile(r"(?:^|[\s_-])(?:bold|strong)(?:$|[\s_-])", re.IGNORECASE)
_FONT_WEIGHT = re.compile(r"font-weight\s*:\s*(bold|bolder|[6-9]00)", re.IGNORECASE)
_FONT_SIZE = re.compile(r"font-size\s*:\s*(\d+(?:\.\d+)?)(px|pt|em|rem)|font-size\s*:\s*(x*-?large)", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
_HTTP_SCHEMES = ("http", "https")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


@dataclass(frozen=True, slots=True)
class RawLink:
    """A link as found on a page, before classification.

    Attributes:
        url: absolute http(s) URL, fragment removed.
        text: anchor text (whitespace folded; an image's ``alt`` when the anchor has no text).
        tag: ``"a"`` (also ``<area>``) or ``"frame"`` (``<frame>``/``<iframe>`` src).
        features: ``{"image": 0|1, "font_size": 0|1, "bold": 0|1}``.
        block: an id, unique within the page, of the link's navigation / list block (the
            nearest ancestor holding at least :data:`BLOCK_MIN_ANCHORS` anchors, at most
            :data:`BLOCK_LEVELS` levels up); 0 when there is none.
        published: the ``<time datetime>`` of the link's teaser (its block ancestor holding at
            most :data:`MAX_ANCHORS_IN_IMAGE_BLOCK` anchors), epoch seconds; None without one
            (what a listing says of its source's rate: :mod:`newscrawl.algorithms.listing`).
    """

    url: str
    text: str
    tag: str
    features: dict[str, int] = field(default_factory=dict)
    block: int = 0
    published: float | None = None


@dataclass(slots=True)
class ExtractionStats:
    """Counts of what :func:`extract_links` skipped (links)."""

    not_http: int = 0
    fragment_only: int = 0
    malformed: int = 0
    truncated: int = 0
    from_textarea: int = 0


def _style_says(element: Element, pattern: re.Pattern[str]) -> bool:
    style = element.get("style")
    return bool(style) and bool(pattern.search(style))


def _enlarged(element: Element) -> bool:
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag in _HEADING_TAGS:
        return True
    if tag == "font":
        size = (element.get("size") or "").strip()
        if size.startswith("+") or (size.isdigit() and int(size) >= 4):
            return True
    cls = element.get("class")
    if cls and _HEADLINE_CLASS.search(cls):
        return True
    style = element.get("style")
    if style:
        m = _FONT_SIZE.search(style)
        if m:
            if m.group(3):
                return True
            value, unit = float(m.group(1)), m.group(2).lower()
            return value >= (16 if unit == "px" else 12 if unit == "pt" else 1.15)
    return False


def _bold(element: Element) -> bool:
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag in _BOLD_TAGS:
        return True
    cls = element.get("class")
    if cls and _BOLD_CLASS.search(cls):
        return True
    return _style_says(element, _FONT_WEIGHT)


def _teaser_block(anchor: Element) -> Element | None:
    """The nearest block ancestor (list item, article, figure, div …) that holds at most
    :data:`MAX_ANCHORS_IN_IMAGE_BLOCK` anchors: the teaser the link stands for; or None."""
    level = 0
    for parent in anchor.iterancestors():
        level += 1
        if level > ANCESTOR_LEVELS:
            return None
        ptag = parent.tag if isinstance(parent.tag, str) else ""
        if ptag in _BLOCK_TAGS:
            anchors = sum(1 for _ in parent.iter("a"))
            return parent if anchors <= MAX_ANCHORS_IN_IMAGE_BLOCK else None
    return None


def teaser_time(anchor: Element, block: Element | None) -> float | None:
    """The instant of the first ``<time datetime>`` inside the anchor or its teaser ``block``
    (epoch seconds; HTML Living Standard §4.5.14: a valid global date and time string, or any
    form :func:`~newscrawl.algorithms.pubdate.parse_datetime` reads). A date without a time
    (``2024-09-30``) is no instant and gives None, as does no ``<time>`` at all."""
    for scope in (anchor, block):
        if scope is None:
            continue
        for el in scope.iter("time"):
            value = (el.get("datetime") or "").strip()
            if len(value) > 10 and any(c in value for c in "T :"):
                when = parse_datetime(value)
                if when is not None:
                    return when.timestamp()
    return None


def _visible_text(element: Element) -> str:
    """Text of an element without ``<script>``/``<style>`` content, whitespace folded."""
    parts: list[str] = []
    for el in element.iter():
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag not in _INVISIBLE_TAGS and el.text:
            parts.append(el.text)
        if el is not element and el.tail:
            parts.append(el.tail)
    return _WHITESPACE.sub(" ", " ".join(parts)).strip()


def _markup_features(elements: Iterable[Element]) -> tuple[int, int, int]:
    image = font_size = bold = 0
    for el in elements:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _IMAGE_TAGS:
            image = 1
        if not font_size and _enlarged(el):
            font_size = 1
        if not bold and _bold(el):
            bold = 1
    return image, font_size, bold


def link_features(anchor: Element, *, block: Element | None = None) -> dict[str, int]:
    """Return the markup features of one anchor element.

    An anchor with no text and no image (a "card overlay" link laid over a whole teaser, as on
    sueddeutsche.de) takes the features of its teaser block's content.

    Args:
        anchor: an lxml element (``<a>``/``<area>``).
        block: its teaser block (:func:`_teaser_block`), when already known.

    Returns:
        ``{"image": 0|1, "font_size": 0|1, "bold": 0|1}`` (seed 004 §3 P1–P3).
    """
    image, font_size, bold = _markup_features(anchor.iter())
    if block is not None and not image and not _visible_text(anchor):
        b_image, b_font, b_bold = _markup_features(block.iter())
        image, font_size, bold = image or b_image, font_size or b_font, bold or b_bold
    level = 0
    for parent in anchor.iterancestors():
        level += 1
        if level > ANCESTOR_LEVELS:
            break
        if not font_size and _enlarged(parent):
            font_size = 1
        if not bold and _bold(parent):
            bold = 1
    if not image and block is not None and any(True for _ in block.iter(*_IMAGE_TAGS)):
        image = 1
    return {"image": image, "font_size": font_size, "bold": bold}


def _anchor_text(anchor: Element, block: Element | None) -> str:
    text = _visible_text(anchor)
    if not text:
        for img in anchor.iter("img"):
            text = (img.get("alt") or img.get("title") or "").strip()
            if text:
                break
    if not text:
        text = (anchor.get("title") or anchor.get("aria-label") or "").strip()
    if not text and block is not None:
        for heading in block.iter("h1", "h2", "h3", "h4", "h5", "h6"):
            text = _visible_text(heading)
            if text:
                break
        else:
            text = _visible_text(block)[:300]
    return text


def resolve_link(href: str | None, base_url: str) -> str | None:
    """Resolve an ``href``/``src`` attribute to an absolute http(s) URL without fragment.

    Args:
        href: the raw attribute value (may be None or hold whitespace).
        base_url: the document base URL (``<base href>`` resolved, else the page URL).

    Returns:
        The URL, or ``None`` for empty, fragment-only, non-http(s) (``javascript:``, ``mailto:``,
        ``tel:``, ``data:`` …) or unparsable values. Never raises.
    """
    if href is None:
        return None
    href = strip_html5_whitespace(href)
    if not href or href.startswith("#"):
        return None
    try:
        url = urljoin(base_url, href)
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in _HTTP_SCHEMES or not parts.netloc:
        return None
    try:
        return safe_url_string(urlunsplit(parts._replace(fragment="")))
    except (ValueError, UnicodeError):
        return None


def document_base(root: Element, page_url: str) -> str:
    """Return the base URL of a document: its first ``<base href>`` resolved, else ``page_url``."""
    for base in root.iter("base"):
        href = base.get("href")
        if href:
            resolved = resolve_link(href, page_url)
            if resolved:
                return resolved
            break
    return page_url


def extract_links(root: Element, page_url: str, *, max_links: int = 5000,
                  stats: ExtractionStats | None = None) -> list[RawLink]:
    """Return every http(s) link of a page with its features, in document order.

    Args:
        root: the lxml root element of the parsed page.
        page_url: the page's absolute URL (after redirects).
        max_links: at most this many links are returned (links); every later ``href`` /
            ``src`` counts as truncated, unread (whatever it holds).
        stats: optional counters of skipped attributes, updated in place.

    Returns:
        ``list[RawLink]``; duplicates are kept (the classifier merges them). Never raises on
        malformed markup: lxml has already repaired it.
    """
    stats = stats if stats is not None else ExtractionStats()
    base_url = document_base(root, page_url)
    links: list[RawLink] = []
    ids = itertools.count(1)  # block ids unique over the page and its textarea fragments
    _read_links(root, base_url, links, max_links, stats, ids)
    for fragment in _textarea_fragments(root):
        before = len(links)
        _read_links(fragment, base_url, links, max_links, stats, ids)
        stats.from_textarea += len(links) - before
    return links


_ANCHOR_TEXT = re.compile(r"<a\s", re.IGNORECASE)


def _textarea_fragments(root: Element) -> list[Element]:
    """HTML templates held in ``<textarea>`` elements that are no form fields (module
    docstring), parsed; a fragment lxml cannot parse is skipped."""
    fragments = []
    for area in root.iter("textarea"):
        text = area.text or ""
        if area.get("name") is not None or not _ANCHOR_TEXT.search(text):
            continue
        if any(parent.tag == "form" for parent in area.iterancestors()):
            continue
        try:
            fragments.append(lxml.html.fragment_fromstring(text, create_parent="div"))
        except (ValueError, TypeError, etree.ParserError):
            continue
    return fragments


def _read_links(root: Element, base_url: str, links: list[RawLink], max_links: int,
                stats: ExtractionStats, ids: Iterator[int]) -> None:
    blocks = _Blocks(root, ids)
    for el in root.iter("a", "area", "frame", "iframe"):
        tag = el.tag
        raw = el.get("src") if tag in ("frame", "iframe") else el.get("href")
        if raw is None:
            continue
        if len(links) >= max_links:  # counted unresolved: 100,000 links took 5 s to resolve
            stats.truncated += 1
            continue
        url = resolve_link(raw, base_url)
        if url is None:
            stripped = strip_html5_whitespace(raw)
            if stripped.startswith("#") or not stripped:
                stats.fragment_only += 1
            elif (m := _SCHEME.match(stripped)) and m.group(1).lower() not in _HTTP_SCHEMES:
                stats.not_http += 1
            else:
                stats.malformed += 1
            continue
        if tag in ("frame", "iframe"):
            links.append(RawLink(url, "", "frame", {"image": 0, "font_size": 0, "bold": 0}))
        else:
            block = _teaser_block(el)
            links.append(RawLink(url, _anchor_text(el, block), "a", link_features(el, block=block),
                                 blocks.of(el), teaser_time(el, block)))


class _Blocks:
    """Navigation / list blocks of a page: ancestors holding many anchors (``RawLink.block``).

    One pass counts, for each element up to :data:`BLOCK_LEVELS` above an anchor, the anchors
    below it; :meth:`of` then walks up from an anchor to the first ancestor with at least
    :data:`BLOCK_MIN_ANCHORS`.
    """

    def __init__(self, root: Element, ids: Iterator[int]) -> None:
        self.counts: dict[Element, int] = {}
        self.ids: dict[Element, int] = {}
        self.next_id = ids
        for anchor in root.iter("a"):
            for level, parent in enumerate(anchor.iterancestors()):
                if level >= BLOCK_LEVELS:
                    break
                self.counts[parent] = self.counts.get(parent, 0) + 1

    def of(self, anchor: Element) -> int:
        for level, parent in enumerate(anchor.iterancestors()):
            if level >= BLOCK_LEVELS:
                break
            if self.counts.get(parent, 0) >= BLOCK_MIN_ANCHORS:
                if parent not in self.ids:
                    self.ids[parent] = next(self.next_id)
                return self.ids[parent]
        return 0
