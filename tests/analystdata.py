"""A small store for the analysts' commands and the README's queries: two sites, articles with
publication times, NewsPageRank weights, a story carried by both sites, feed and channel
sources, channel pages with estimated rates, links, and one corrected article.

:func:`fill` writes it through the store's own write paths (``write_pages``, ``write_state``,
``archive_version``), the way a crawl does; :data:`NOW` is the run clock of the newest capture.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.store import NewsStore

UTC = dt.timezone.utc
page_fp = NewsRequestFingerprinter().page_fp
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LONG_TITLE = ("Marathon in Berlin: a new course record after a morning of rain, and what the "
              "organisers plan for the anniversary edition next autumn")


def _article(url: str, site: str, title: str, *, seen_h: float, delay_min: float | None,
             weight: float, story: str | None = None, sources: list[dict[str, Any]] | None = None,
             text: str = "Body text.") -> dict[str, Any]:
    seen = NOW - dt.timedelta(hours=seen_h)
    doc: dict[str, Any] = {
        "kind": "article", "url": url, "fp": page_fp(url), "site": site,
        "host": url.split("/")[2], "title": title, "text": text, "language": "de",
        "authors": ["A. Autor"], "weight": weight, "fetched_at": seen, "role": "content",
        "published": None if delay_min is None else seen - dt.timedelta(minutes=delay_min),
    }
    if story:
        doc["story_id"] = story
    if sources is not None:
        doc["sources"] = sources
    return doc


def articles() -> list[dict[str, Any]]:
    """The stored articles (10: 6 of zeit.de, 4 of sueddeutsche.de)."""
    z, s = "https://www.zeit.de", "https://www.sueddeutsche.de"
    feed = "https://newsfeed.zeit.de/index"

    def src(kind: str, url: str, h: float) -> dict[str, Any]:
        return {"kind": kind, "url": url, "seen_at": NOW - dt.timedelta(hours=h)}

    return [
        _article(f"{z}/sport/2026-12/marathon-berlin", "zeit.de", LONG_TITLE, seen_h=0, delay_min=5,
                 weight=0.9, story="s1", sources=[src("feed", feed, 0), src("channel", f"{z}/sport/index", 0)]),
        _article(f"{s}/sport/marathon-berlin-rekord-1.123", "sueddeutsche.de",
                 "Marathon: Rekord in Berlin", seen_h=1, delay_min=12, weight=0.7, story="s1",
                 sources=[src("channel", f"{s}/sport", 1)]),
        _article(f"{z}/politik/2026-12/haushalt", "zeit.de", "Haushalt beschlossen", seen_h=2,
                 delay_min=30, weight=0.8, sources=[src("channel", f"{z}/politik/index", 2)]),
        _article(f"{z}/kultur/2026-12/oper", "zeit.de", "Oper: Premiere", seen_h=3, delay_min=45,
                 weight=0.3),
        _article(f"{z}/wissen/2026-12/klima", "zeit.de", "Klimabericht", seen_h=5, delay_min=60,
                 weight=0.5, sources=[src("feed", feed, 5)]),
        _article(f"{z}/digital/2026-12/ki", "zeit.de", "KI im Alltag", seen_h=20, delay_min=None,
                 weight=0.2),
        _article(f"{z}/archiv/2020/alt", "zeit.de", "Aus dem Archiv", seen_h=30, delay_min=60 * 24 * 365,
                 weight=0.1),
        _article(f"{s}/politik/haushalt-1.456", "sueddeutsche.de", "Haushalt: Einigung", seen_h=2.5,
                 delay_min=20, weight=0.6),
        _article(f"{s}/wirtschaft/boerse-1.789", "sueddeutsche.de", "Börse schließt fester",
                 seen_h=4, delay_min=90, weight=0.4),
        _article(f"{s}/muenchen/wiesn-1.999", "sueddeutsche.de", "Wiesn-Bilanz", seen_h=10 * 24,
                 delay_min=15, weight=0.95),
    ]


def nodes() -> list[dict[str, Any]]:
    """Two home pages with a few classified links."""
    out = []
    for home, site, targets in (
            ("https://www.zeit.de/index", "zeit.de",
             [("https://www.zeit.de/sport/index", "downward"), ("https://www.zeit.de/politik/index", "downward"),
              ("https://www.zeit.de/sport/2026-12/marathon-berlin", "downward"),
              ("https://www.spiegel.de/", "outward")]),
            ("https://www.sueddeutsche.de/", "sueddeutsche.de",
             [("https://www.sueddeutsche.de/sport", "downward"),
              ("https://www.sueddeutsche.de/sport/marathon-berlin-rekord-1.123", "downward"),
              ("https://jobs.sueddeutsche.de/", "crosswise")])):
        out.append({"kind": "node", "url": home, "fp": page_fp(home), "site": site,
                    "host": home.split("/")[2], "title": site, "role": "entry", "weight": 1.0,
                    "fetched_at": NOW, "links": [
                        {"source_url": home, "source_fp": page_fp(home), "target_url": t,
                         "target_fp": page_fp(t), "link_class": cls, "role": "node", "site": site}
                        for t, cls in targets]})
    return out


def sources() -> list[dict[str, Any]]:
    """Crawl-state records of the pages that list articles, with estimated rates (per hour)."""
    rows = [("https://www.zeit.de/index", "zeit.de", "entry", None, 0.5),
            ("https://www.zeit.de/sport/index", "zeit.de", "node", None, 2.5),
            ("https://www.zeit.de/politik/index", "zeit.de", "node", None, 1.5),
            ("https://newsfeed.zeit.de/index", "zeit.de", "feed", "feed", 6.0),
            ("https://www.sueddeutsche.de/", "sueddeutsche.de", "entry", None, 0.25),
            ("https://www.sueddeutsche.de/sport", "sueddeutsche.de", "node", None, 1.0)]
    out = []
    for i, (url, site, role, kind, rate) in enumerate(rows):
        record: dict[str, Any] = {"_id": page_fp(url), "fp": page_fp(url), "url": url, "site": site,
                                  "host": url.split("/")[2], "role": role, "rate": rate,
                                  "last_visit": NOW, "first_seen": NOW - dt.timedelta(days=1),
                                  "visits": 3, "estimator": "channel",
                                  # every other page due an hour ago, the rest in ten years
                                  "due": NOW + (dt.timedelta(hours=-1) if i % 2 == 0 else dt.timedelta(days=3650))}
        if kind:
            record["kind"] = kind
        out.append(record)
    return out


def fill(store: NewsStore) -> None:
    """Write the articles, nodes, links, sources and one previous version into ``store``."""
    store.ensure_indexes()
    store.ensure_state_indexes()
    store.write_pages(articles() + nodes(), now=NOW)
    store.write_state(sources(), [])
    first = articles()[2]
    corrected = {**first, "title": "Haushalt beschlossen (korrigiert)", "text": "Body text, corrected."}
    store.archive_version(first["fp"], corrected, archived_at=NOW)
    store.write_pages([corrected], now=NOW)
