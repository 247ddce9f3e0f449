"""Publication date of a news article from every signal the page and the crawl give (pure).

:func:`resolve_dates` gathers *candidates* — each a timestamp with the source it came from —
bounds them by what the crawl knows, and picks one by a fixed precedence, with a confidence.
Modified dates are gathered apart and never taken for the publication date.

Candidates and their base confidence (highest first; the first source in this list wins a tie):

=============  ====  ===========================================================================
source         conf  where
=============  ====  ===========================================================================
``jsonld``     0.95  schema.org JSON-LD ``datePublished`` / ``dateCreated`` of the article object
``og``         0.90  Open Graph ``article:published_time`` (ogp.me, type article)
``microdata``  0.90  ``itemprop="datePublished"`` (``content`` / ``datetime`` attribute)
``sitemap``    0.88  the news sitemap's ``<news:publication_date>`` of this URL (when the crawl
                     read one; Google News sitemap spec). Also the publisher's word, but a
                     sitemap is often generated from a CMS field that lags the page (a test
                     page said 10:03 in its markup, its sitemap 09:00), so the page's own
                     published markup above wins when both are there; used when it has none
``feed``       0.85  the feed entry's date (RSS ``pubDate``, Atom ``published``; when the crawl
                     read one — feeds often give the *update* time, hence below the page's own
                     and overruled by the URL's day like page markup, rule 3)
``meta``       0.80  Dublin Core (``dc.date.issued``, ``dcterms.created`` ...), ``pubdate``,
                     ``parsely-pub-date``, ``sailthru.date`` and similar ``<meta>`` names
``time``       0.75  ``<time datetime>`` marked as the publication (``pubdate`` attribute,
                     ``itemprop``, a class naming publish/date); other ``<time>``
                     (``time_other``): 0.55
``label``      0.65  the first date of the visible text right after a publication label
                     (``Datum 28.04.2023``, ``Veröffentlicht am 07.06.2019``, ``Published:
                     March 5, 2020``, ``发布日期：2022年01月28日``); day precision. The page's
                     own statement to its reader, so above the URL and the guesses below
``url``        0.60  a full date in the URL path (``/2024/09/30/``, ``/2024-09-30/``,
                     ``/20240930/``, ``/2020-02/19/``); day precision
``text``       0.58  the first date *with a time of day* in the page's visible text outside
                     links and list items (``2005-04-05 06:40``, ``2005年4月5日 06:40``,
                     ``9/17/2004 5:54:13 AM``; a slashed date is read only when its order is
                     unambiguous): the byline of pages without markup dates
``htmldate``   0.50  htmldate's extensive search (Barbaresi 2020, JOSS 5(51) 2439:
                     markup, then text patterns, ``original_date=True``) on the page without
                     its links' ``href``; day precision
=============  ====  ===========================================================================

``label``, ``text`` and ``htmldate`` are looked for only when no other candidate of confidence
≥ 0.8 is left after the bounds of rules 2 and 3 (they cost a text scan and about 15 ms). They
are guesses from the page's text, and each leaves out what names the date of *another* page: links and list items (related
stories, lists of recent comments) for ``text``, link targets (``/news/20190619/...`` of a
related story) for htmldate; ``label`` needs a publication label, so a teaser's bare date in a
``<span class="date">`` (the one htmldate took on a DW page) does not count.

Rules, in order:

1. A timestamp without UTC offset borrows the offset of a candidate with one (the one with the
   same wall-clock minute if any, else the first); with none it is UTC. A bare date counts as
   its day (midnight UTC when it wins) and gives way to a timed candidate of the same day. A
   value without year, month and day is no timestamp: ``10:52`` is not read as today at 10:52
   (dateutil fills missing parts from the current date; :func:`parse_datetime` refuses them).
   ``<abbr itemprop="datePublished" title="2017-09-09T10:52:00+02:00">10:52</abbr>`` is read from
   its ``title``.
2. Bounds from the crawl: no candidate after ``fetched_at`` (an article cannot be published
   after the crawler first fetched it; a slack of one hour for timestamps, of 14 hours for bare
   dates, whose day may be ahead of UTC), none before 1995, and none more than ``max_link_lag``
   before ``first_linked_at`` (when the URL first appeared on a channel page the crawl had
   watched before without it). Rejected candidates are reported in ``rejected``.
   2b. The fetch day (in any zone, UTC-12 .. UTC+14 of ``fetched_at``) is a publication date only
   when the page's markup says so: a guess from the text (``text``, ``time_other``, ``htmldate``)
   naming it is rejected (a header bar's "today" dated every page of a Russian site on its
   capture day) unless the URL names that day too, or htmldate finds the same day in the page's
   machine-readable part alone (``<meta>``, attributes, scripts' JSON: the page without its
   visible text). Markup sources, feeds, sitemaps and labelled dates may name the fetch day.
3. The URL's date bounds the publication (:func:`url_bounds`): the URL is written once, by the
   publisher's CMS. A day in the URL: every candidate but the sitemap's must name that day (page
   markup and feeds: that day or the next, a story written in the evening and published after
   midnight) — in its own offset when it has a non-zero one, else in some real zone (a UTC ``Z``
   time of the evening before, in Sydney, is the URL's day); others are updates, related
   stories or clocks, and the URL's own candidate (day precision) takes over. Feeds: of the 731 dated entries of
   corpus set 14 whose URL carries a day, 92 name a (UTC) day more than one day later, none
   earlier (CNN's edition feed re-dates old stories: ``/2013/05/01/…`` with a 2014 pubDate;
   ``benchmarks/extraction_quality.py`` prints the figure). A year and month only
   (``/2012/10/slug``): guesses and labels must fall in that month; markup and feeds must not be
   before it (a later one stands: der-postillon.com re-publishes ``/2018/04/…`` stories with a
   2024 ``datePublished``, the date set 04 records). A news sitemap's ``publication_date`` is
   not bounded (the spec defines it as the first publication).
4. The highest confidence wins; the winner gains 0.05 for each other source that names the same
   day (±1 day: time zones), and loses 0.2 when a source of confidence ≥ 0.8 names another day.
5. The publisher's local day: a UTC winner is shown in the offset of another candidate naming the
   same instant, else in the first non-zero offset the page's markup gives anywhere (its
   modification time included); when the URL names a day and the winner's shown day is not it,
   the instant is shown in the whole-hour offset nearest to UTC that gives the URL's day (the
   true zone is unknown; the instant is exact).

The result's ``published`` is an aware UTC datetime; ``local`` keeps the offset the page gave
(or a :class:`~datetime.date` for day-precision answers; rule 5 for UTC winners), so the day a
reader of the page sees is known.
"""

from __future__ import annotations

import re
import warnings
from copy import deepcopy
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any, Final

from newscrawl.algorithms.jsonld import ld_article

__all__ = ["CONFIDENCE", "Candidate", "Resolution", "date_from_url", "parse_datetime",
           "resolve_dates", "url_bounds"]

#: Base confidence of each source (see the module docstring); the order breaks ties.
CONFIDENCE: Final[dict[str, float]] = {
    "jsonld": 0.95, "og": 0.90, "microdata": 0.90, "sitemap": 0.88, "feed": 0.85, "meta": 0.80,
    "time": 0.75, "label": 0.65, "url": 0.60, "text": 0.58, "time_other": 0.55, "htmldate": 0.50,
}
_ORDER: Final = {name: i for i, name in enumerate(CONFIDENCE)}
#: Page markup sources (the ones a URL date can overrule, rule 3).
_MARKUP: Final = frozenset(
    {"jsonld", "og", "microdata", "meta", "time", "time_other", "label", "text", "htmldate"})
_TEXT_TIMESTAMP: Final = re.compile(
    r"(?<![0-9])((?:199[5-9]|20[0-9]{2}))\s*[-/.年]\s*([01]?[0-9])\s*[-/.月]\s*([0-3]?[0-9])\s*日?"
    r"(?:\s*(?:[（(]?\s*(?:星期|周)[一二三四五六日天]\s*[)）]?))?[\s,T]*([0-2]?[0-9])\s*[:：时]\s*([0-5][0-9])"
    r"(?:\s*[:：分]\s*([0-5][0-9]))?"
)
_US_TIMESTAMP: Final = re.compile(
    r"(?<![0-9/])([01]?[0-9])/([0-3]?[0-9])/((?:199[5-9]|20[0-9]{2}))[\s,]+([0-2]?[0-9]):([0-5][0-9])"
    r"(?::([0-5][0-9]))?\s*([AaPp][Mm])?"
)
#: Characters of visible text searched for a timestamp (from the start of <body>).
_TEXT_WINDOW: Final = 20000
#: Month names (English, German) of the labelled dates (``Published: 5 March 2020``).
_MONTHS: Final[dict[str, int]] = {name: i + 1 for i, names in enumerate([
    ("january", "jan", "januar", "jänner"), ("february", "feb", "februar"),
    ("march", "mar", "märz", "maerz"), ("april", "apr"), ("may", "mai"), ("june", "jun", "juni"),
    ("july", "jul", "juli"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct", "oktober", "okt"), ("november", "nov"), ("december", "dec", "dezember", "dez"),
]) for name in names}
_MONTH_NAMES: Final = "|".join(sorted(_MONTHS, key=len, reverse=True))
_YEAR: Final = r"(?:199[5-9]|20[0-9]{2})"
#: A date right after a label that names it the publication date ("Datum 28.04.2023",
#: "Published: March 5, 2020", "发布日期：2022年01月28日"). Labels of other dates (updated,
#: modified, 更新, 成文日期 = date written) do not match: the date must follow the label. The
#: generic words "date" and 日期 count only with a colon and not after another word
#: ("Date: ..."), so "release date: 2024-05-01" in a review or 成文日期 is not taken.
_LABELLED_DATE: Final = re.compile(
    r"(?:(?<!\w)(?:published(?:\s+on)?|posted(?:\s+on)?|publication\s+date|date\s+published"
    r"|first\s+published|datum|ver(?:ö|oe)ffentlicht(?:\s+am)?|erschienen(?:\s+am)?"
    r"|publi[ée](?:\s+le)?|date\s+de\s+publication|publicado(?:\s+el)?"
    r"|fecha\s+de\s+publicaci[óo]n|pubblicato(?:\s+il)?|gepubliceerd(?:\s+op)?"
    r"|опубликовано|дата\s+публикации)[\s:：|\-\u2013]{0,6}"
    r"|(?:发布日期|发布时间|发表日期|发表时间|发布于|发表于|公開日|掲載日|配信日)[\s:：|\-\u2013]{0,6}"
    r"|(?:(?<![^\W\d_]\s)(?<!\w)date|(?<![\u4e00-\u9fff])日期)\s*[:：]\s*)"
    r"(?:(?P<y>" + _YEAR + r")\s*[-/.年]\s*(?P<m>[01]?[0-9])\s*[-/.月]\s*(?P<d>[0-3]?[0-9])(?![0-9])"
    r"|(?P<d2>[0-3]?[0-9])\.\s?(?P<m2>[01]?[0-9])\.\s?(?P<y2>" + _YEAR + r")(?![0-9])"
    r"|(?P<d3>[0-3]?[0-9])\.?\s+(?P<n3>" + _MONTH_NAMES + r")\.?\s+(?P<y3>" + _YEAR + r")(?![0-9])"
    r"|(?P<n4>" + _MONTH_NAMES + r")\.?\s+(?P<d4>[0-3]?[0-9])(?:st|nd|rd|th)?,?\s+(?P<y4>" + _YEAR
    + r")(?![0-9]))",
    re.I,
)

# <meta> names / properties of the publication time, by source.
_OG_META: Final = ("article:published_time", "og:article:published_time", "og:published_time",
                   "article:published:time")
_OTHER_META: Final = (
    "datepublished", "date", "pubdate", "publishdate", "publish-date", "publish_date",
    "publication_date", "dc.date.issued", "dcterms.issued", "dc.date", "dcterms.date",
    "dcterms.created", "dc.date.created", "parsely-pub-date", "sailthru.date",
    "article.published", "article_date_original", "original-publish-date",
    "cxenseparse:recs:publishtime", "iso-8601-publish-date", "displaydate", "date.release",
    "published_time", "og:pubdate", "pub_date", "created", "citation_publication_date",
    "citation_date", "dc.date.published", "rnews:datepublished",
)
_MODIFIED_META: Final = (
    "article:modified_time", "og:updated_time", "og:article:modified_time", "datemodified",
    "dcterms.modified", "dc.date.modified", "last-modified", "lastmod", "modified_time",
)
_TIME_CLASS: Final = re.compile(r"publi|pubdate|post-?date|entry-date|article-date|datetime|date",
                                re.I)
_URL_DATE: Final = re.compile(
    r"(?<![0-9])(?P<y>(?:199[5-9]|20[0-9]{2}))"
    r"(?:(?P<s>[/_.-])(?P<m>0?[1-9]|1[0-2])(?:(?P=s)|/)(?P<d>0?[1-9]|[12][0-9]|3[01])"
    r"|(?P<m2>0[1-9]|1[0-2])(?P<d2>0[1-9]|[12][0-9]|3[01]))(?![0-9])"
)
#: A year and month in the URL path without a day (``/2012/10/slug``, ``/2020-06/``).
_URL_MONTH: Final = re.compile(
    r"/(?P<y>199[5-9]|20[0-9]{2})[/-](?P<m>0?[1-9]|1[0-2])(?=/|\.html?$|$)")
#: Guesses from the page's text without a publication label (not its markup): never the fetch
#: day on their own word (a labelled date, ``Published: ...``, is the page's own statement).
_GUESSES: Final = frozenset({"text", "htmldate", "time_other"})
#: How far a zone's day may lie from the UTC day: UTC-12 .. UTC+14.
_WEST: Final = timedelta(hours=12)
_EAST: Final = timedelta(hours=14)
# Zone abbreviations seen in publishers' timestamps (seconds east of UTC).
_TZ_ABBREVIATIONS: Final[dict[str, int]] = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "BST": 3600, "WEST": 3600, "CET": 3600, "MEZ": 3600,
    "CEST": 7200, "MESZ": 7200, "EET": 7200, "EEST": 10800, "MSK": 10800, "IST": 19800,
    "CDT": -18000, "EST": -18000, "EDT": -14400, "MST": -25200, "MDT": -21600,
    "PST": -28800, "PDT": -25200, "JST": 32400, "KST": 32400, "HKT": 28800, "SGT": 28800,
    "AEST": 36000, "AEDT": 39600,
}
#: Two defaults for dateutil that differ in year, month and day (see :func:`_parse_raw`).
_DEFAULT_A: Final = datetime(1900, 1, 1)
_DEFAULT_B: Final = datetime(1904, 2, 2)
_DATE_ONLY: Final = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
_MIN_YEAR: Final = 1995
#: Slack of the fetched_at bound for timestamps and for bare dates.
_SLACK_TIMED: Final = timedelta(hours=1)
_SLACK_DAY: Final = timedelta(hours=14)


@dataclass(frozen=True)
class Candidate:
    """One publication (or modification) timestamp of a page.

    ``local`` is the value as the page gives it: an aware datetime in the page's offset (after
    offset borrowing, rule 1) or a :class:`~datetime.date` for a bare date.
    """

    source: str
    local: datetime | date
    raw: str = ""
    #: the page's markup names this date (htmldate's markup-only search agrees: rule 2b)
    marked: bool = False

    @property
    def date_only(self) -> bool:
        return not isinstance(self.local, datetime)

    @property
    def day(self) -> date:
        return self.local.date() if isinstance(self.local, datetime) else self.local

    @property
    def utc(self) -> datetime:
        """The instant in UTC (a bare date: midnight UTC of that day)."""
        if isinstance(self.local, datetime):
            return self.local.astimezone(timezone.utc)
        return datetime(self.local.year, self.local.month, self.local.day, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Resolution:
    """What :func:`resolve_dates` found. ``published``/``modified`` are aware UTC datetimes."""

    published: datetime | None = None
    source: str | None = None
    confidence: float = 0.0
    local: datetime | date | None = None
    modified: datetime | None = None
    candidates: tuple[Candidate, ...] = ()
    rejected: tuple[Candidate, ...] = field(default=())

    @property
    def date_only(self) -> bool:
        return self.local is not None and not isinstance(self.local, datetime)


def date_from_url(url: str | None) -> date | None:
    """The publication day a URL path carries, or ``None``.

    :param url: an absolute or relative URL.
    :returns: the first full date (year 1995 or later, month and day valid) in the path:
        ``/2024/09/30/``, ``/2024-09-30-slug``, ``/20240930/``, ``/2020-02/19/``; a year and
        month alone (``/2020/06/``) is not a date. The query and fragment are not read.
    :raises: nothing.

    >>> date_from_url("https://example.com/politik/2024/09/30/wahl.html")
    datetime.date(2024, 9, 30)
    >>> date_from_url("https://example.com/journal/2020/06/88083") is None
    True
    """
    if not url:
        return None
    path = url.split("://", 1)[-1]
    path = path[path.find("/"):] if "/" in path else ""
    path = path.split("?", 1)[0].split("#", 1)[0]
    for m in _URL_DATE.finditer(path):
        month = m.group("m") or m.group("m2")
        day = m.group("d") or m.group("d2")
        try:
            return date(int(m.group("y")), int(month), int(day))
        except ValueError:
            continue
    return None


def url_bounds(url: str | None) -> tuple[date, date] | None:
    """The first and last day the URL path allows for the publication, or ``None``.

    :param url: an absolute or relative URL.
    :returns: ``(day, day)`` when the path carries a full date (:func:`date_from_url`), the first
        and last day of the month when it carries a year and month only (``/2012/10/slug``,
        ``/2020/06/88083``), else ``None``. The query and fragment are not read.
    :raises: nothing.

    Rationale: the URL is written once, by the publisher's CMS, when the article is created; a
    date in it is the publisher's own record of the day (or month). On corpus sets 04/06/08/12 a
    markup or text date outside it was an update time, a related story's date or the site's
    clock (``benchmarks/extraction_quality.py`` measures the effect).

    >>> url_bounds("https://example.com/blog/2012/10/some-post.html")
    (datetime.date(2012, 10, 1), datetime.date(2012, 10, 31))
    >>> url_bounds("https://example.com/politik/2024/09/30/wahl.html")
    (datetime.date(2024, 9, 30), datetime.date(2024, 9, 30))
    """
    day = date_from_url(url)
    if day is not None:
        return day, day
    if not url:
        return None
    path = url.split("://", 1)[-1]
    path = path[path.find("/"):] if "/" in path else ""
    m = _URL_MONTH.search(path.split("?", 1)[0].split("#", 1)[0])
    if m is None:
        return None
    y, mo = int(m.group("y")), int(m.group("m"))
    first = date(y, mo, 1)
    last = (date(y + (mo == 12), mo % 12 + 1, 1) - timedelta(days=1))
    return first, last


def parse_datetime(value: Any, *, assume_utc: bool = True) -> datetime | None:
    """Parse a machine-readable timestamp into a timezone-aware UTC datetime.

    :param value: ISO 8601 / RFC 3339 (``2024-09-29T15:27:29.697Z``, ``2023-04-28T20:22:00+02:00``,
        ``2024-09-30 07:50:48``), RFC 2822 and other forms ``dateutil`` reads (common zone
        abbreviations such as CEST, EDT, JST understood), or a Unix timestamp in seconds or
        milliseconds (int, float or digit string).
    :param assume_utc: a value without UTC offset is taken as UTC (else ``None`` is returned).
    :returns: an aware datetime in UTC, or ``None`` when it does not parse.
    :raises: nothing.
    """
    parsed = _parse_raw(value)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        if not assume_utc:
            return None
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        return parsed.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None


def _parse_raw(value: Any) -> datetime | None:
    """Parse like :func:`parse_datetime` but keep the offset, or no tzinfo when none was given."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ts = float(value)
        if ts > 1e11:
            ts /= 1000.0
        try:
            return datetime.fromtimestamp(ts, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if text.isdigit() and len(text) in (10, 13):
        return _parse_raw(int(text))
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        try:
            from dateutil import parser as du_parser

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # UnknownTimezoneWarning for odd zone names
                parsed = du_parser.parse(text, tzinfos=_TZ_ABBREVIATIONS, default=_DEFAULT_A)
                # dateutil fills what the string lacks from ``default`` (today unless given):
                # "10:52" would become today at 10:52. A second parse with another default
                # shows which parts were missing; a value without year, month and day is no date.
                other = du_parser.parse(text, tzinfos=_TZ_ABBREVIATIONS, default=_DEFAULT_B)
        except (ValueError, OverflowError, TypeError, ImportError):
            return None
        if (parsed.year, parsed.month, parsed.day) != (other.year, other.month, other.day):
            return None
    if parsed.tzinfo is not None and parsed.tzinfo.utcoffset(parsed) is None:
        parsed = parsed.replace(tzinfo=None)
    return parsed


def _parse(value: Any) -> tuple[datetime | date, bool] | None:
    """(value, has an offset) — a date for bare dates, a datetime (naive or aware) otherwise."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, datetime):
        return value, value.tzinfo is not None
    if isinstance(value, date):
        return value, False
    if isinstance(value, str) and _DATE_ONLY.match(value.strip()):
        try:
            y, m, d = (int(x) for x in value.strip().split("-"))
            return date(y, m, d), False
        except ValueError:
            return None
    parsed = _parse_raw(value)
    if parsed is None:
        return None
    return parsed, parsed.tzinfo is not None


def _localize(raw: list[tuple[str, Any]], donors: tuple[datetime, ...] = ()) -> list[Candidate]:
    """Rule 1: parse every raw value; naive timestamps borrow an offset of the page (of the
    other values, else of ``donors``)."""
    parsed: list[tuple[str, datetime | date, str]] = []
    for source, value in raw:
        got = _parse(value)
        if got is not None:
            parsed.append((source, got[0], str(value)[:64]))
    aware: list[datetime] = [
        v for _s, v, _r in parsed if isinstance(v, datetime) and v.tzinfo is not None]
    aware.extend(d for d in donors if d.tzinfo is not None)
    out = []
    for source, value, text in parsed:
        if isinstance(value, datetime) and value.tzinfo is None:
            same = [a for a in aware if a.replace(tzinfo=None, second=0, microsecond=0)
                    == value.replace(second=0, microsecond=0)]
            lender = same or aware
            value = value.replace(tzinfo=lender[0].tzinfo if lender else timezone.utc)
        out.append(Candidate(source, value, text))
    return out


def _within(c: Candidate, fetched_at: datetime | None, first_linked_at: datetime | None,
            max_link_lag: float) -> bool:
    if c.day.year < _MIN_YEAR:
        return False
    try:
        utc = c.utc
    except (OverflowError, ValueError):
        return False
    if fetched_at is not None:
        if c.date_only:
            if c.day > (fetched_at.astimezone(timezone.utc) + _SLACK_DAY).date():
                return False
        elif utc > fetched_at + _SLACK_TIMED:
            return False
    if first_linked_at is not None:
        lower = first_linked_at - timedelta(seconds=max_link_lag)
        if (utc + timedelta(days=1) if c.date_only else utc) < lower:
            return False
    return True


def _in_bounds(c: Candidate, bounds: tuple[date, date] | None) -> bool:
    """Rule 3: the URL's day (or month) bounds every candidate but the sitemap's.

    A candidate with its own non-zero offset is judged by its local day; a UTC (or borrowed
    UTC) timestamp of the markup by every day some real zone (UTC-12 .. UTC+14) shows for its
    instant; a bare date and a text guess by its day.
    """
    if bounds is None or c.source in ("url", "sitemap"):
        return True
    lo, hi = bounds
    if lo == hi and c.source not in _GUESSES and c.source != "label":
        # a day: page markup and feeds may name the next one (a story written in the evening,
        # its URL dated then, published after midnight); more than that is an update
        hi = hi + timedelta(days=1)
    elif c.source not in _GUESSES and c.source != "label":
        # a month only: page markup and feeds after it stand (an old story re-published:
        # der-postillon.com/2018/04/... carries datePublished 2024-04-25 in JSON-LD and
        # <time>, the day set 04 records); nothing is published before the URL was written
        hi = date.max - timedelta(days=1)
    if isinstance(c.local, datetime) and not c.local.utcoffset() and c.source not in _GUESSES:
        # (a guess's wall clock is the day the page prints: judged by its day below)
        try:
            utc = c.utc.replace(tzinfo=None)
        except (OverflowError, ValueError):
            return False
        return (utc - _WEST).date() <= hi and (utc + _EAST).date() >= lo
    return lo <= c.day <= hi


def _fetch_day_guess(c: Candidate, fetched_at: datetime | None,
                     bounds: tuple[date, date] | None) -> bool:
    """Rule 2b: a guess from the page's text that names the day of the fetch (in any zone) is
    the site's clock ("today" in a header bar), not a publication date — unless the URL names
    that day too. Page markup (JSON-LD, Open Graph, microdata, meta, marked ``<time>``), feeds
    and sitemaps may name the fetch day."""
    if fetched_at is None or c.source not in _GUESSES or c.marked:
        return False
    if bounds is not None and bounds[0] <= c.day <= bounds[1]:
        return False
    utc = fetched_at.astimezone(timezone.utc).replace(tzinfo=None)
    return (utc - _WEST).date() <= c.day <= (utc + _EAST).date()


def _publisher_offset(cands: list[Candidate]) -> timezone | None:
    """The first non-zero UTC offset the page's own markup gives (its publisher's zone)."""
    for c in cands:
        if c.source in _MARKUP and isinstance(c.local, datetime):
            off = c.local.utcoffset()
            if off:
                return timezone(off)
    return None


def _on_day(value: datetime, day: date) -> datetime:
    """``value`` in the whole-hour offset nearest to UTC (UTC-12 .. UTC+14) whose wall clock
    falls on ``day``; ``value`` itself when none does."""
    for hours in sorted(range(-12, 15), key=abs):
        shown = value.astimezone(timezone(timedelta(hours=hours)))
        if shown.date() == day:
            return shown
    return value


def _near(a: date, b: date, days: int = 1) -> bool:
    return abs((a - b).days) <= days


def resolve_dates(
    tree: Any,
    url: str,
    *,
    ld: dict[str, Any] | None = None,
    fetched_at: datetime | None = None,
    first_linked_at: datetime | None = None,
    feed_date: datetime | str | None = None,
    sitemap_date: datetime | str | None = None,
    max_link_lag: float = 30 * 86400.0,
    extensive: bool = True,
) -> Resolution:
    """Resolve the publication and modification time of one article page.

    :param tree: the page as an lxml HTML tree (``lxml.html.document_fromstring``), or ``None``
        (only the URL and the crawl's own dates are used).
    :param url: the page URL (its path may carry the date).
    :param ld: the page's article JSON-LD object, when the caller has found it (else looked up).
    :param fetched_at: when the crawl first fetched the page (aware datetime); upper bound.
    :param first_linked_at: when the URL first appeared on a channel page the crawl had watched
        before without it (aware datetime); lower bound with ``max_link_lag``.
    :param feed_date: the feed entry's date for this URL (aware datetime or a timestamp string).
    :param sitemap_date: the news sitemap's ``news:publication_date`` for this URL.
    :param max_link_lag: how long before ``first_linked_at`` an article may be published and
        still be linked as new (seconds; default 30 days: channel pages re-link older stories).
    :param extensive: also look for a byline timestamp and run htmldate's extensive search
        (about 15 ms per page) when no candidate of confidence ≥ 0.8 is found.
    :returns: a :class:`Resolution` (``published is None`` when nothing usable was found).
    :raises: nothing; unparsable values are ignored.
    """
    raw: list[tuple[str, Any]] = []
    modified_raw: list[tuple[str, Any]] = []
    if sitemap_date is not None:
        raw.append(("sitemap", sitemap_date))
    if feed_date is not None:
        raw.append(("feed", feed_date))
    if tree is not None:
        _markup(tree, ld, raw, modified_raw)
    bounds = url_bounds(url)
    url_day = bounds[0] if bounds is not None and bounds[0] == bounds[1] else None
    if url_day is not None:
        raw.append(("url", url_day))
    cands = _localize(raw)

    def admissible(c: Candidate) -> bool:
        return (_within(c, fetched_at, first_linked_at, max_link_lag) and _in_bounds(c, bounds)
                and not _fetch_day_guess(c, fetched_at, bounds))

    kept = [c for c in cands if admissible(c)]
    if extensive and tree is not None and not any(
        c.source != "url" and CONFIDENCE[c.source] >= 0.8 for c in kept
    ):
        labelled = _labelled_date(_visible_text(tree, lists=True))
        if labelled is not None:
            cands.append(Candidate("label", labelled, labelled.isoformat()))
        stamp = _text_timestamp(_visible_text(tree, lists=False))
        if stamp is not None:
            cands.extend(_localize([("text", stamp)], tuple(
                c.local for c in cands if isinstance(c.local, datetime))))
        found = _htmldate(tree, url, fetched_at)
        if found is not None:
            cand = Candidate("htmldate", found, found.isoformat())
            if _fetch_day_guess(cand, fetched_at, bounds) \
                    and _htmldate(tree, url, fetched_at, markup_only=True) == found:
                cand = Candidate("htmldate", found, found.isoformat(), marked=True)
            cands.append(cand)
        kept = [c for c in cands if admissible(c)]
    rejected = tuple(c for c in cands if c not in kept)
    modified_cands = _localize(modified_raw, tuple(
        c.local for c in cands if isinstance(c.local, datetime)))
    modified = _first_modified(modified_raw, cands)
    if not kept:
        return Resolution(modified=modified, candidates=tuple(cands), rejected=rejected)
    best = min(kept, key=lambda c: (-CONFIDENCE[c.source], _ORDER[c.source]))
    if best.date_only:  # a bare date gives way to a timed candidate of the same day
        timed = [c for c in kept if not c.date_only and c.day == best.day]
        if timed:
            best = Candidate(best.source, min(timed, key=lambda c: _ORDER[c.source]).local, best.raw)
    local: datetime | date = best.local
    if isinstance(local, datetime) and local.utcoffset() == timedelta(0):
        # a UTC timestamp: show it in the offset another candidate gives the same instant,
        # else in the publisher's zone when the page's markup gives one anywhere (rule 5)
        zone = next((c.local.tzinfo for c in kept if isinstance(c.local, datetime)
                     and c.local.utcoffset() and abs((c.utc - best.utc).total_seconds()) <= 60),
                    None) or _publisher_offset([*cands, *modified_cands])
        if zone is not None:
            local = local.astimezone(zone)
    if (url_day is None and extensive and tree is not None and isinstance(local, datetime)
            and not local.utcoffset()):
        # a UTC time and no zone anywhere: the day the page prints for its reader (a labelled
        # date, else the byline's timestamp) decides the local day when it is the next or
        # previous one (rule 5)
        seen = next((c.day for c in cands if c.source in ("label", "text")), None)
        if seen is None and not any(c.source in ("label", "text") for c in cands):
            labelled = _labelled_date(_visible_text(tree, lists=True))
            stamp = None if labelled else _text_timestamp(_visible_text(tree, lists=False))
            seen = labelled or (stamp.date() if stamp else None)
        if seen is not None and abs((seen - local.date()).days) == 1:
            shown = _on_day(local, seen)
            if shown.date() == seen:
                local = shown
    if (url_day is not None and isinstance(local, datetime) and local.date() != url_day
            and not local.utcoffset()):
        # a UTC instant the URL's day places in another zone: keep the instant, shown in the
        # whole-hour offset nearest to UTC that gives the URL's day (the true zone is unknown)
        local = _on_day(local, url_day)
    agree = {c.source for c in kept if c.source != best.source and _near(c.day, best.day)}
    against = {c.source for c in kept if c.source != best.source and not _near(c.day, best.day)
               and CONFIDENCE[c.source] >= 0.8}
    confidence = CONFIDENCE[best.source] + 0.05 * len(agree) - 0.2 * bool(against)
    confidence = round(min(1.0, max(0.05, confidence)), 2)
    return Resolution(
        published=best.utc, source=best.source, confidence=confidence, local=local,
        modified=modified, candidates=tuple(cands), rejected=rejected,
    )


def _markup(tree: Any, ld: dict[str, Any] | None, raw: list[tuple[str, Any]],
            modified_raw: list[tuple[str, Any]]) -> None:
    """Append the page's own publication / modification candidates (in precedence order)."""
    if ld is None:
        ld = ld_article(tree)
    if ld is not None:
        for key in ("datePublished", "dateCreated"):
            if ld.get(key):
                raw.append(("jsonld", ld.get(key)))
                break
        if ld.get("dateModified"):
            modified_raw.append(("jsonld", ld.get("dateModified")))
    metas: dict[str, str] = {}
    for el in tree.iter("meta"):
        attrs = el.attrib
        key = (attrs.get("property") or attrs.get("name") or attrs.get("itemprop")
               or attrs.get("http-equiv") or "").strip().lower()
        content = (attrs.get("content") or "").strip()
        if key and content and key not in metas:
            metas[key] = content
    for key in _OG_META:
        if key in metas:
            raw.append(("og", metas[key]))
            break
    for el in tree.xpath('//*[@itemprop="datePublished" or @itemprop="datepublished"]')[:2]:
        value = el.get("content") or el.get("datetime")
        if el.tag != "meta" and not value:
            # <abbr itemprop="datePublished" title="2017-09-09T10:52:00+02:00">10:52</abbr>:
            # the machine-readable value is the title (microformats' abbr pattern); the
            # visible text is often a bare time of day
            value = (el.get("title") or "").strip() if _parse(el.get("title") or "") else ""
            value = value or (el.text_content() or "").strip()
        if value:
            raw.append(("microdata", value))
    for key in _OTHER_META:
        if key in metas and key != "datepublished":
            raw.append(("meta", metas[key]))
            break
    for key in _MODIFIED_META:
        if key in metas:
            modified_raw.append(("meta", metas[key]))
            break
    for el in tree.xpath('//*[@itemprop="dateModified" or @itemprop="datemodified"]')[:1]:
        value = el.get("content") or el.get("datetime")
        if value:
            modified_raw.append(("microdata", value))
    marked: list[str] = []
    other: list[str] = []
    for el in tree.xpath("//time[@datetime]")[:10]:
        value = (el.get("datetime") or "").strip()
        if not value:
            continue
        is_pub = ("pubdate" in el.attrib or el.get("itemprop") == "datePublished"
                  or bool(_TIME_CLASS.search(el.get("class") or ""))
                  or bool(_TIME_CLASS.search((el.getparent().get("class") or "")
                                             if el.getparent() is not None else "")))
        if el.get("itemprop") == "dateModified" or "updated" in (el.get("class") or "").lower():
            continue
        (marked if is_pub else other).append(value)
    if marked:
        raw.append(("time", marked[0]))
    elif other:
        raw.append(("time_other", other[0]))


def _visible_text(tree: Any, *, lists: bool) -> str:
    """The first :data:`_TEXT_WINDOW` characters of the visible text of ``<body>``, without the
    text of links, and without the text of list items unless ``lists``.

    Links and list items are listings — related stories, "latest comments", tickers — whose
    dates are the dates of other pages: a blog page's sidebar of recent comments ``(2006-12-24
    03:45:27)`` came before the post's own date and was taken for it. A byline is neither a
    link nor a list item on the corpus pages whose date the text gives. Labelled dates
    (:func:`_labelled_date`) are read with list items (``lists=True``): a page's fact box is
    often a list (``<li><strong>Datum</strong> 28.04.2023</li>``), and the label says whose date
    it is.
    """
    body = tree.find("body") if hasattr(tree, "find") else None
    if body is None:
        return ""
    parts: list[str] = []
    size = 0
    query = ".//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::a)"
    for chunk in body.xpath(query + ("]" if lists else " and not(ancestor::li)]")):
        parts.append(str(chunk))
        size += len(chunk)
        if size > _TEXT_WINDOW:
            break
    return " ".join(parts)


def _labelled_date(text: str) -> date | None:
    """The first date of ``text`` that follows a publication label (:data:`_LABELLED_DATE`).

    Day precision: ``YYYY-MM-DD`` (also ``/``, ``.``, ``年月日``), ``DD.MM.YYYY`` (day first, as
    every dotted European date), ``5 March 2020`` and ``March 5, 2020`` (English and German month
    names). Slashed ``D/M/Y`` is ambiguous and not read. Returns None when no label is followed
    by a valid date. Rationale: a date the page itself labels "published" / "Datum" / 发布日期 is
    the publisher's statement to the reader, unlike the first date anywhere in the text (which
    may be a teaser's, a comment's or today's date in a header bar); on the corpus (sets 04, 06,
    08, 12) every labelled date found named the ground-truth day.
    """
    for m in _LABELLED_DATE.finditer(text):
        g = m.groupdict()
        try:
            if g["y"]:
                return date(int(g["y"]), int(g["m"]), int(g["d"]))
            if g["y2"]:
                return date(int(g["y2"]), int(g["m2"]), int(g["d2"]))
            if g["y3"]:
                return date(int(g["y3"]), _MONTHS[g["n3"].lower()], int(g["d3"]))
            if g["y4"]:
                return date(int(g["y4"]), _MONTHS[g["n4"].lower()], int(g["d4"]))
        except (ValueError, KeyError):
            continue
    return None


def _text_timestamp(text: str) -> datetime | None:
    """The first date with a time of day in ``text`` (visible text of ``<body>``; naive), or None.

    Year-first dates are read year-month-day. Slashed dates with the year last
    (``D/M/Y`` or ``M/D/Y``) are read only when unambiguous: a first number above 12 is the day,
    a second above 12 is the day, and a 12-hour clock (``AM``/``PM``, the US convention) means
    month first; ``02/12/2024 10:16`` (a Spanish byline: 2 December) is skipped rather than read
    as February 12.
    """
    found: list[tuple[int, datetime]] = []
    for m in _TEXT_TIMESTAMP.finditer(text):
        y, mo, d, h, mi, s = m.groups()
        try:
            found.append((m.start(), datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0))))
            break
        except ValueError:
            continue
    for m in _US_TIMESTAMP.finditer(text):
        first, second, y, h, mi, s, half = m.groups()
        if int(first) > 12:  # 17/09/2004: day first, whatever the page's country
            d, mo = first, second
        elif int(second) > 12 or half:  # 9/17/2004, or a 12-hour clock: the US order
            mo, d = first, second
        else:  # 02/12/2024 10:16 is 2 December in Madrid and February 12 in New York
            continue
        hour = int(h) % 12 + (12 if half and half.lower() == "pm" else 0) if half else int(h)
        try:
            found.append((m.start(), datetime(int(y), int(mo), int(d), hour, int(mi), int(s or 0))))
            break
        except ValueError:
            continue
    return min(found, key=lambda f: f[0])[1] if found else None


def _first_modified(modified_raw: list[tuple[str, Any]], cands: list[Candidate]) -> datetime | None:
    donors = tuple(c.local for c in cands if isinstance(c.local, datetime))
    for cand in _localize(modified_raw, donors):
        try:
            return cand.utc
        except (OverflowError, ValueError):
            continue
    return None


def _htmldate(tree: Any, url: str, fetched_at: datetime | None, *,
              markup_only: bool = False) -> date | None:
    """htmldate's extensive search (original date), bounded by ``fetched_at``; day precision.

    ``markup_only``: htmldate's fast search (no ``extensive_search``) on a copy of the page
    without its visible text (:func:`_markup_only`): a date it finds there is in the page's
    machine-readable part (``<meta>``, attributes, scripts' JSON), not a date printed for the
    reader such as a header bar's "today" (rule 2b).

    htmldate is given a copy of the page without the ``href`` of its ``<a>`` elements: its
    last-resort pattern search reads the serialised HTML, attributes included, and took the
    date in the path of a *linked* page (a related story's ``/news/html/20190619/...``) for the
    page's own. The date of the page's own URL is read apart (the ``url`` candidate; htmldate
    gets ``url`` too). On the corpus's dated pages this changed one answer, from wrong to right.
    """
    try:
        from htmldate import find_date
    except ImportError:  # pragma: no cover - htmldate ships with trafilatura
        return None
    tree = _markup_only(tree) if markup_only else _without_links(tree)
    max_date = None
    if fetched_at is not None:
        max_date = (fetched_at.astimezone(timezone.utc) + _SLACK_DAY).strftime("%Y-%m-%d")
    try:
        found = find_date(tree, url=url or None, extensive_search=not markup_only, original_date=True,
                          outputformat="%Y-%m-%d", max_date=max_date)
    except Exception:  # noqa: BLE001 - htmldate raises on some malformed trees
        return None
    if not found:
        return None
    try:
        return date.fromisoformat(found)
    except ValueError:
        return None


def _markup_only(tree: Any) -> Any:
    """A copy of ``tree`` without links' ``href`` and without the text of every element but
    ``<script>`` and ``<style>`` (the tree itself on failure): what is left is markup."""
    try:
        copy = deepcopy(tree)
        for el in copy.iter():
            if not isinstance(el.tag, str):
                el.text = None  # comments, processing instructions
                continue
            if el.tag == "a":
                el.attrib.pop("href", None)
            if el.tag not in ("script", "style", "html", "head"):
                el.text = None
            parent = el.getparent()
            if parent is not None and parent.tag not in ("script", "style"):
                el.tail = None
    except Exception:  # noqa: BLE001 - a tree that cannot be copied is not searched
        return None
    return copy


def _without_links(tree: Any) -> Any:
    """A copy of ``tree`` whose ``<a>`` elements have no ``href`` (the tree itself on failure)."""
    try:
        copy = deepcopy(tree)
        for el in copy.iter("a"):
            el.attrib.pop("href", None)
    except Exception:  # noqa: BLE001 - a tree that cannot be copied is searched as it is
        return tree
    return copy
