"""The article object of a page's schema.org JSON-LD (pure; no Scrapy imports).

Shared by :mod:`newscrawl.algorithms.extraction` (headline, authors, language) and
:mod:`newscrawl.algorithms.pubdate` (``datePublished``). Source: schema.org ``Article`` and its
subtypes (https://schema.org/Article), JSON-LD 1.1 ``@graph`` (W3C Recommendation, §4.9).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["ld_article"]

_ARTICLE_TYPES: Final = frozenset(
    t.lower()
    for t in (
        "NewsArticle", "Article", "ReportageNewsArticle", "AnalysisNewsArticle",
        "OpinionNewsArticle", "BackgroundNewsArticle", "ReviewNewsArticle", "BlogPosting",
        "LiveBlogPosting", "SocialMediaPosting", "TechArticle", "ScholarlyArticle", "Report",
        "SatiricalArticle", "AdvertiserContentArticle",
    )
)


def _iter_ld_objects(data: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    if depth > 6:
        return
    if isinstance(data, list):
        for item in data:
            yield from _iter_ld_objects(item, depth + 1)
    elif isinstance(data, dict):
        yield data
        graph = data.get("@graph")
        if graph is not None:
            yield from _iter_ld_objects(graph, depth + 1)
        main = data.get("mainEntity")
        if isinstance(main, (dict, list)):
            yield from _iter_ld_objects(main, depth + 1)


def _ld_types(obj: dict[str, Any]) -> set[str]:
    t = obj.get("@type")
    if isinstance(t, str):
        return {t.lower()}
    if isinstance(t, list):
        return {x.lower() for x in t if isinstance(x, str)}
    return set()


def ld_article(tree: Any) -> dict[str, Any] | None:
    """The first article-like JSON-LD object of the page (NewsArticle, BlogPosting, ...).

    :param tree: an lxml HTML tree.
    :returns: the object (a dict), else the first object with ``datePublished`` and
        ``headline``, else ``None``. Scripts that are not JSON are skipped; never raises.
    """
    fallback = None
    for script in tree.xpath('//script[contains(translate(@type,"LDJSON","ldjson"),"ld+json")]'):
        raw = (script.text or "").strip()
        if not raw:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            try:  # control characters inside strings are a common publisher mistake
                data = json.loads(re.sub(r"[\x00-\x1f]+", " ", raw))
            except ValueError:
                continue
        for obj in _iter_ld_objects(data):
            types = _ld_types(obj)
            if types & _ARTICLE_TYPES:
                return obj
            if fallback is None and "datePublished" in obj and "headline" in obj:
                fallback = obj
    return fallback
