"""What the analysts' report shows, computed from plain records: freshness per site, articles
per hour, publication → capture delays, top stories, sources and their rates.

Pure: no Scrapy, no pymongo. :class:`ReportBuilder` takes article documents and crawl-state
source records one at a time (``add_article`` / ``add_source``, so a caller can stream them
from a cursor) and :meth:`ReportBuilder.build` returns a :class:`Report`; the terminal and HTML
renderings (:mod:`newscrawl.report`, :mod:`newscrawl.report_html`) only lay it out.

Definitions (all times UTC; a naive datetime is read as UTC):

* the **window** is ``[now - days, now]``; an article is *in the window* when its ``first_seen``
  (first capture) is;
* **new articles per hour** of a site = its articles in the window / the hours from
  ``max(window start, its first capture in the window)`` to ``now``, at least one hour (a site
  added yesterday is not diluted over a week) — *not measured* (NaN, with a note such as
  ``n/a (captured within 1 min)``) when the site's captures in the window span less than
  :data:`MIN_RATE_SPAN` (one sweep of a site says what it holds, not how fast it publishes);
* **publication → capture delay** = ``first_seen - published`` in seconds, of the articles in
  the window that were also *published* in it (an old article found by a first sweep says
  nothing about freshness); a negative delay (publication after capture: a wrong date) is
  counted in ``future_dated`` and left out; median and p90 by linear interpolation
  (:func:`newscrawl.algorithms.watch.quantile`, the watch status line's);
* **stories**: articles grouped by ``story_id`` (near-duplicate clustering) when they carry one,
  else each article is its own story; a story's weight is its heaviest article's NewsPageRank
  ``weight``, its title and URL that article's; stories rank by weight, then sites; the
  stories *carried by the most sites* are the multi-site stories not among the top stories
  already listed (no table twice);
* **sources**: crawl-state records of the pages that list articles (``role`` other than
  ``content``: entry and channel pages, feeds, sitemaps); their ``rate`` is the channel
  scheduler's estimate of new links per hour, which is only its prior until the source was
  visited twice: the rate of a source with fewer than two ``visits`` is not shown (``n/a (1
  visit)``) nor summed into the site's channel rate; an article's ``sources`` list
  (``[{kind, url, seen_at}]``) counts articles per source URL and per kind, and the kind that
  saw it first;
* **the time axis** of the per-hour counts runs from the hour of the earliest capture in the
  window (not the window's start) to ``now``: a store filled in the last hour is one bin, not a
  week of zeros with a spike;
* **newest articles**: the ``top`` articles of the window with the latest ``first_seen``.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from newscrawl.algorithms.watch import quantile

UTC = dt.timezone.utc
#: Seconds a site's captures must span before its new-articles-per-hour is a measurement.
MIN_RATE_SPAN = 3600.0


def as_utc(value: Any) -> dt.datetime | None:
    """``value`` as a tz-aware UTC datetime (naive read as UTC); None for anything else."""
    if not isinstance(value, dt.datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def hour_floor(value: dt.datetime) -> dt.datetime:
    """The start of ``value``'s hour."""
    return value.replace(minute=0, second=0, microsecond=0)


@dataclass
class SiteFreshness:
    """One site's figures over the window (delays in seconds, rates per hour)."""

    site: str
    articles: int = 0
    first_capture: dt.datetime | None = None
    last_capture: dt.datetime | None = None
    per_hour: float = 0.0
    #: Why ``per_hour`` is NaN ("n/a (captured within 1 min)"), None when it is measured.
    per_hour_note: str | None = None
    delays: list[float] = field(default_factory=list)
    future_dated: int = 0
    median_delay: float = math.nan
    p90_delay: float = math.nan
    channels: int = 0
    channel_rate: float = 0.0
    #: Sources whose rate is an estimate (visited at least twice, or of unknown visits).
    rated_channels: int = 0
    found_first_by: dict[str, int] = field(default_factory=dict)


@dataclass
class Story:
    """A story: the articles sharing a ``story_id`` (or one article without one)."""

    key: str
    title: str
    url: str
    weight: float
    sites: set[str] = field(default_factory=set)
    articles: int = 0
    clustered: bool = False


@dataclass
class Source:
    """A page that lists articles, with its estimated rate (new links per hour) and the
    articles of the window that name it among their ``sources``."""

    url: str
    site: str
    kind: str
    rate: float | None
    articles: int = 0
    visits: int | None = None

    @property
    def rate_note(self) -> str | None:
        """Why the rate is not shown (``n/a (1 visit)``), None when it is an estimate."""
        if self.visits is not None and self.visits < 2:
            return f"n/a ({self.visits} visit{'' if self.visits == 1 else 's'})"
        return None


@dataclass
class Report:
    """Everything the report shows; see the module docstring for the definitions."""

    now: dt.datetime
    start: dt.datetime
    hours: list[dt.datetime]
    per_hour: dict[str, list[int]]
    sites: list[SiteFreshness]
    stories: list[Story]
    widest: list[Story]
    sources: list[Source]
    source_kinds: dict[str, dict[str, int]]
    clustered: bool
    articles: int
    #: The newest articles (``title, url, site, first_seen, published, weight``), newest first.
    newest: list[dict[str, Any]] = field(default_factory=list)


class ReportBuilder:
    """Accumulates articles and source records; :meth:`build` makes the :class:`Report`.

    Args:
        now: end of the window (tz-aware or naive UTC).
        days: window length (days, > 0).
        top: stories and sources kept (each).

    Raises:
        ValueError: ``days`` not a positive finite number, ``top`` negative.
    """

    def __init__(self, now: dt.datetime, *, days: float = 7.0, top: int = 10) -> None:
        if not (isinstance(days, (int, float)) and math.isfinite(days) and days > 0):
            raise ValueError(f"days must be a positive number, got {days!r}")
        if top < 0:
            raise ValueError(f"top must be >= 0, got {top!r}")
        end = as_utc(now)
        if end is None:
            raise ValueError(f"now must be a datetime, got {now!r}")
        self.now = end
        self.start = end - dt.timedelta(days=days)
        self.top = top
        self.sites: dict[str, SiteFreshness] = {}
        self.bins: dict[str, dict[dt.datetime, int]] = {}
        self.stories: dict[str, Story] = {}
        self.source_counts: dict[str, int] = {}
        self.sources: dict[str, Source] = {}
        self.kinds: dict[str, dict[str, int]] = {}
        self.articles = 0
        self.skipped = 0
        self.earliest: dt.datetime | None = None
        self.newest: list[tuple[dt.datetime, str, dict[str, Any]]] = []  # a min-heap of top

    def _site(self, site: str) -> SiteFreshness:
        row = self.sites.get(site)
        if row is None:
            row = self.sites[site] = SiteFreshness(site)
        return row

    def add_article(self, doc: Mapping[str, Any]) -> bool:
        """Count one stored article (fields ``site, first_seen, published, weight, title, url,
        fp, story_id, sources``); False (and counted in ``skipped``) when its ``first_seen`` is
        missing or outside the window."""
        seen = as_utc(doc.get("first_seen"))
        if seen is None or not self.start <= seen <= self.now:
            self.skipped += 1
            return False
        site = str(doc.get("site") or "?")
        self.articles += 1
        row = self._site(site)
        row.articles += 1
        if row.first_capture is None or seen < row.first_capture:
            row.first_capture = seen
        if row.last_capture is None or seen > row.last_capture:
            row.last_capture = seen
        if self.earliest is None or seen < self.earliest:
            self.earliest = seen
        self._add_newest(doc, seen, site)
        hours = self.bins.setdefault(site, {})
        hours[hour_floor(seen)] = hours.get(hour_floor(seen), 0) + 1
        published = as_utc(doc.get("published"))
        if published is not None and published >= self.start:
            delay = (seen - published).total_seconds()
            if delay < 0:
                row.future_dated += 1
            else:
                row.delays.append(delay)
        self._add_story(doc, site)
        self._add_article_sources(doc, site, row)
        return True

    def _add_newest(self, doc: Mapping[str, Any], seen: dt.datetime, site: str) -> None:
        if self.top <= 0:
            return
        entry = (seen, str(doc.get("fp") or doc.get("url") or ""),
                 {"title": str(doc.get("title") or ""), "url": str(doc.get("url") or ""),
                  "site": site, "first_seen": seen, "published": as_utc(doc.get("published")),
                  "weight": doc.get("weight")})
        if len(self.newest) < self.top:
            heapq.heappush(self.newest, entry)
        elif entry[:2] > self.newest[0][:2]:
            heapq.heapreplace(self.newest, entry)

    def _add_story(self, doc: Mapping[str, Any], site: str) -> None:
        story_id = doc.get("story_id")
        clustered = story_id not in (None, "")
        key = f"story:{story_id}" if clustered else f"article:{doc.get('fp') or doc.get('url')}"
        weight = doc.get("weight")
        w = float(weight) if isinstance(weight, (int, float)) and math.isfinite(weight) else 0.0
        story = self.stories.get(key)
        if story is None:
            story = self.stories[key] = Story(key, str(doc.get("title") or ""),
                                              str(doc.get("url") or ""), w, clustered=clustered)
        elif w > story.weight:
            story.weight, story.title, story.url = w, str(doc.get("title") or ""), str(doc.get("url") or "")
        story.sites.add(site)
        story.articles += 1

    def _add_article_sources(self, doc: Mapping[str, Any], site: str, row: SiteFreshness) -> None:
        sources = doc.get("sources")
        if not isinstance(sources, list):
            return
        kinds = self.kinds.setdefault(site, {})
        first: tuple[dt.datetime, str] | None = None
        seen_kinds: set[str] = set()
        for source in sources:
            if not isinstance(source, Mapping):
                continue
            kind = str(source.get("kind") or "?")
            seen_kinds.add(kind)
            url = source.get("url")
            if isinstance(url, str) and url:
                self.source_counts[url] = self.source_counts.get(url, 0) + 1
            at = as_utc(source.get("seen_at"))
            if at is not None and (first is None or at < first[0]):
                first = (at, kind)
        for kind in seen_kinds:
            kinds[kind] = kinds.get(kind, 0) + 1
        if first is not None:
            row.found_first_by[first[1]] = row.found_first_by.get(first[1], 0) + 1

    def add_source(self, record: Mapping[str, Any]) -> None:
        """Count one crawl-state record of a page that lists articles (``url, site, role,
        kind, rate``); a record of an article page (``role`` ``content``) is ignored."""
        role = str(record.get("role") or "")
        if role == "content":
            return
        url = str(record.get("url") or "")
        site = str(record.get("site") or "?")
        kind = str(record.get("kind") or ("channel" if role in ("entry", "node", "") else role))
        rate = record.get("rate")
        value = float(rate) if isinstance(rate, (int, float)) and math.isfinite(rate) else None
        visits = record.get("visits")
        source = Source(url, site, kind, value,
                        visits=int(visits) if isinstance(visits, (int, float)) else None)
        self.sources[url] = source
        row = self._site(site)
        row.channels += 1
        if source.rate_note is None:
            row.rated_channels += 1
            if value is not None and value > 0:
                row.channel_rate += value

    def build(self) -> Report:
        """The :class:`Report` of what was added."""
        first_hour = hour_floor(max(self.start, self.earliest or self.now))
        hours = []
        t = first_hour
        while t <= self.now:
            hours.append(t)
            t += dt.timedelta(hours=1)
        per_hour = {site: [bins.get(h, 0) for h in hours] for site, bins in sorted(self.bins.items())}
        for row in self.sites.values():
            begin = max(self.start, row.first_capture) if row.first_capture else self.start
            span = max((self.now - begin).total_seconds() / 3600.0, 1.0)
            row.per_hour = row.articles / span
            if row.first_capture is not None and row.last_capture is not None:
                covered = (row.last_capture - row.first_capture).total_seconds()
                if covered < MIN_RATE_SPAN:
                    row.per_hour = math.nan
                    row.per_hour_note = ("n/a (1 article)" if row.articles == 1 else
                                         f"n/a (captured within {format_seconds(covered)})")
            if row.channels and not row.rated_channels:
                row.channel_rate = math.nan
            row.median_delay = quantile(row.delays, 0.5)
            row.p90_delay = quantile(row.delays, 0.9)
        sites = sorted(self.sites.values(), key=lambda r: (-r.articles, r.site))
        stories = sorted(self.stories.values(), key=lambda s: (-s.weight, -len(s.sites), s.title))
        for source in self.sources.values():
            source.articles = self.source_counts.get(source.url, 0)
        sources = sorted(self.sources.values(),
                         key=lambda s: (-(s.rate or 0.0), -s.articles, s.url))
        shown = {s.key for s in stories[: self.top]}
        newest = [e[2] for e in sorted(self.newest, key=lambda e: e[:2], reverse=True)]
        return Report(now=self.now, start=self.start, hours=hours, per_hour=per_hour, sites=sites,
                      stories=stories[: self.top], newest=newest,
                      # not the top stories again: the multi-site stories below them
                      widest=[s for s in most_sites(stories) if s.key not in shown][: self.top],
                      sources=sources[: self.top],
                      source_kinds={k: dict(v) for k, v in sorted(self.kinds.items())},
                      clustered=any(s.clustered for s in self.stories.values()),
                      articles=self.articles)


def most_sites(stories: Iterable[Story]) -> list[Story]:
    """The stories carried by more than one site, most sites first (then weight)."""
    return sorted((s for s in stories if len(s.sites) > 1), key=lambda s: (-len(s.sites), -s.weight))


def format_rate(value: float, note: str | None = None) -> str:
    """A per-hour figure for people: ``"3.50"``; ``note`` (or ``"n/a"``) when it is not a
    measurement (NaN)."""
    if not math.isfinite(value):
        return note or "n/a"
    return f"{value:.2f}"


def format_seconds(value: float) -> str:
    """A delay for people: ``"42 s"``, ``"7.5 min"``, ``"3.2 h"``, ``"2.1 d"``; ``"-"`` for NaN."""
    if not math.isfinite(value):
        return "-"
    if value < 120:
        return f"{value:.0f} s"
    if value < 7200:
        return f"{value / 60:.1f} min"
    if value < 172800:
        return f"{value / 3600:.1f} h"
    return f"{value / 86400:.1f} d"
