r"""Which links lead to service pages, not news: the data behind link classification's drop list.

A news crawler should not spend node requests on a site's shop, job market, login, price
comparison, games, comment threads or sponsored microsites, nor store their pages as articles
(issue: 292 of 976 node requests went there). Those are recognised by *where* a link points, not
by its shape, so they are kept as data: :data:`DEFAULT_RULES` below (module level, reviewed like
code), which a crawl can extend or replace from a JSON file (``NEWSCRAWL_LINKCLASS_RULES``,
:func:`load_rules`).

A link is a *service link* (:meth:`LinkRules.service_reason`) when

- a label of its host below the registered domain is a service host label
  (``shop.heise.de``, ``stellenmarkt.sueddeutsche.de``, ``coral.qq.com``), or
- one of its path segments (of an article-shaped URL: its first segment only, the site area,
  and not even that below an editorial part, :data:`EDITORIAL_DIRS`) is a service path segment, or starts with one followed by ``-``/``_``
  (``/gutscheine/ebay``, ``/newsletter-homepagefooter``, ``/raetsel/schach/``), or
- it starts with a per-site ``prefixes`` entry (``host/path``: ``v.qq.com/detail/``), or
  matches a per-site ``patterns`` regular expression over ``host/path``
  (``^v\.qq\.com/x/cover/[^/]+\.html$``: a programme's cover page, not one of its videos).

A segment directly under a taxonomy directory (:data:`TAXONOMY_DIRS`) is a name, not an area
(``/thema/karriere`` is a topic page). Host labels of the page's own host never count (a crawl started on ``m.example.com`` keeps its
links); an unrendered template (``/newsticker/${url}``) is a service link too.

Per-site entries (``sites``, keyed by registered domain) add labels, segments and prefixes for
one site only: knowledge about a publisher's own hosts, the way fundus declares publishers as
data. Words are compared lower-cased.

File format (JSON; every key optional)::

    {"replace": false,                       # true: start from empty rules, not the defaults
     "hosts": ["shop", "abo"],               # service host labels, all sites
     "paths": ["gutscheine", "login"],       # service path segments, all sites
     "sites": {"example.com": {"hosts": [...], "paths": [...], "prefixes": ["v.example.com/tv/"],
                               "patterns": ["^v\\.example\\.com/show/[^/]+$"]}}}

Source: the vocabulary was read off the ten hand-labelled pages of
``tests/linkclass_labels.tsv`` (sueddeutsche, zeit, heise, sina, sohu, qq) and is measured by
``benchmarks/linkclass_quality.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

#: Host labels (anywhere below the registered domain) of service hosts on any site.
SERVICE_HOSTS = frozenset({
    # shops, subscriptions, accounts, payment
    "shop", "szshop", "store", "abo", "aboshop", "premium", "produkte", "login", "passport",
    "account", "accounts", "meine", "my", "member", "mail", "pay", "payment",
    # jobs and companies
    "jobs", "job", "stellenmarkt", "karriere", "career", "careers", "hr", "corp", "investors",
    "verlag",
    # games, puzzles, quizzes, tests
    "spiele", "sudoku", "raetsel", "quiz", "iqtest",
    # price comparison, vouchers, classifieds, dating
    "preisvergleich", "gutscheine", "inserieren", "partnersuche", "2sc",
    # comments, forums, communities, complaints, votes
    "comment", "comments", "coral", "forum", "foren", "community", "tousu", "vote",
    # advertising and tracking redirectors, media data, legal
    "ad", "ads", "sax", "mediadaten", "datenschutz", "privacy",
    # help desks, support
    "help", "hilfe", "support", "service", "kf",
    # mobile mirrors and app download pages of a desktop site
    "m", "wap",
})

#: Path segments (or their first word) of service pages on any site.
SERVICE_PATHS = frozenset({
    "impressum", "imprint", "datenschutz", "privacy", "agb", "terms", "consent", "kontakt",
    "contact", "contactus", "mediadaten", "hilfe", "help", "login", "logout", "anmelden",
    "registrieren", "account", "konto", "meinabo", "meinesz", "newsletter", "benachrichtigungen",
    "updates", "utiq", "gutscheine", "coupons", "raetsel", "spiele", "quiz", "jobs", "karriere",
    "abo", "bestellung", "shop", "preisvergleich", "tarifrechner", "download", "downloads",
    "angebote", "administratives", "sport-liveticker", "copyright", "licence", "license",
    "upload", "forum", "foren", "meine", "my", "ad", "ads",
})


#: Directories whose children are names (topics, tags, series, authors), never site areas:
#: ``/thema/karriere`` is a topic page, not the careers page.
TAXONOMY_DIRS = frozenset({"tag", "tags", "topic", "topics", "thema", "themen", "keyword", "keywords",
                           "schlagwort", "schlagworte", "author", "authors", "autor", "autoren",
                           "serie", "series", "serien"})


#: Editorial parts of a service area: an article-shaped page below them is news
#: (``/download/specials/Die-besten-Videoschnitt-Programme-im-Vergleich-6150036``).
EDITORIAL_DIRS = frozenset({"special", "specials", "news", "artikel", "article", "articles",
                            "ratgeber", "tests", "hintergrund", "magazin"})


@dataclass(frozen=True, slots=True)
class SiteRules:
    """Service hosts, path segments and ``host/path`` prefixes of one scope (all sites or one)."""

    hosts: frozenset[str] = frozenset()
    paths: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()


#: Per-site knowledge of the seed sites: sponsored / shop / VOD hosts whose names are no general
#: word (each read off the labelled pages).
SITE_DEFAULTS: dict[str, SiteRules] = {
    # sponsored specials, B2B white papers, compaliate ads, the word game
    "heise.de": SiteRules(hosts=frozenset({"business-services", "it-kenner", "compaliate",
                                           "social"}),
                          # /solutions/: sponsored content (links tagged source=hbsad)
                          paths=frozenset({"tools", "netzwerk-tools", "loseblattwerke", "select",
                                           "solutions"})),
    # sponsored microsites, travel shop, study / career tests, festival tickets
    "zeit.de": SiteRules(hosts=frozenset({"cmk", "zeitreisen", "studiengaenge", "berufstest",
                                          "z2x"})),
    "sueddeutsche.de": SiteRules(hosts=frozenset({"adventskalender", "fuehrerschein",
                                                  "zeitung"})),  # e-paper reader app
    # video-on-demand programme pages (TV series, films), self-media profiles, novels
    "sohu.com": SiteRules(hosts=frozenset({"film", "mp", "my", "db", "dealer", "jiangjia", "00",
                                           "mote", "popup", "caipiao", "q"}),
                          prefixes=("tv.sohu.com/drama", "tv.sohu.com/movie", "tv.sohu.com/show",
                                    "tv.sohu.com/comic", "tv.sohu.com/self", "tv.sohu.com/s20")),
    "qq.com": SiteRules(hosts=frozenset({"chuangshi", "yunqi", "dushu", "book", "class", "ke",
                                         "film", "fans", "baojia", "data", "db", "gu",
                                         "stockhtm", "stockapp", "nba", "110", "browser",
                                         "automall", "youpin", "weather", "fun", "qian", "ac"}),
                        paths=frozenset({"fans", "kbs", "ceshi", "jiangjia"}),
                        # v.qq.com is the video-on-demand platform: only its single videos
                        # (x/page/<vid>, x/cover/<cid>/<vid>) are news items
                        patterns=(r"^v\.qq\.com/(?!x/page/|x/cover/[^/]+/|p/cross/)",),
                        ),
    "sina.com.cn": SiteRules(hosts=frozenset({"vip", "db", "ka", "zhongce", "licaishi", "jiaoyi",
                                              "open", "product", "data", "dealer", "zx", "anli",
                                              "live", "fund", "touzi", "zhibo", "lottery",
                                              "weather", "emarketing", "designer", "jiancai"}),
                             paths=frozenset({"quote", "hq", "realstock", "paijia", "jump"}),
                             prefixes=("fashion.sina.com.cn/try/",)),
}


def _first_word(segment: str) -> str:
    return re.split(r"[-_.]", segment, maxsplit=1)[0]


@dataclass(frozen=True, slots=True)
class LinkRules:
    """The service-link rules of a crawl: global ones and per-site additions.

    Attributes:
        common: rules for every site.
        sites: registered domain → additional rules for that site.
    """

    common: SiteRules = field(default_factory=SiteRules)
    sites: Mapping[str, SiteRules] = field(default_factory=dict)

    def service_reason(self, url: str, domain: str, *, article_shaped: bool,
                       own_host: str = "") -> str:
        """Why ``url`` is a service link (``"host"``, ``"path"``, ``"prefix"``, ``"pattern"``),
        or ``""`` when it is not one.

        Args:
            url: absolute URL.
            domain: its registered domain (``newscrawl.algorithms.urls.registered_domain``).
            article_shaped: whether the URL looks like one article; only its first segment is
                then compared with the service segments (``/jobs/…-123456.html`` is a job ad,
                ``/digital/datenschutz/2023-04/<slug>`` and ``/2023/18/…-karriere-…`` stay news).
            own_host: the host of the page being classified: its own host labels never make a
                link a service link (a crawl started on ``m.example.com`` keeps its links).
        """
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        site = self.sites.get(domain)
        below = host[: -len(domain)].rstrip(".") if domain and host.endswith(domain) else host
        labels = set(below.split(".")) if below and host != own_host else set()
        if labels & self.common.hosts or (site is not None and labels & site.hosts):
            return "host"
        segments = [unquote(s).lower() for s in parts.path.split("/") if s]
        if any("${" in s or "{{" in s for s in segments):
            return "path"  # an unrendered template: /newsticker/${url}
        if article_shaped:
            # An article is judged by the site area it sits in (its first segment: /download/,
            # /jobs/), not by its subject directories (/digital/datenschutz/2023-04/<slug>);
            # an editorial part of a service area keeps its articles (/download/specials/<slug>).
            editorial_part = len(segments) > 2 and segments[1] in EDITORIAL_DIRS
            segments = segments[:1] if len(segments) > 1 and not editorial_part else []
        for index, segment in enumerate(segments):
            if index and segments[index - 1] in TAXONOMY_DIRS:
                continue  # a topic's name: /thema/karriere
            for word in (segment, _first_word(segment)):
                if word in self.common.paths or (site is not None and word in site.paths):
                    return "path"
        if site is not None and (site.prefixes or site.patterns):
            target = host + parts.path
            if any(target.startswith(prefix) for prefix in site.prefixes):
                return "prefix"
            if any(_compiled(p).search(target) for p in site.patterns):
                return "pattern"
        return ""


def _words(values: Any, what: str) -> frozenset[str]:
    if values is None:
        return frozenset()
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"link rules: {what} must be a list of strings")
    return frozenset(v.strip().lower() for v in values if v.strip())


def _site(data: Any, where: str) -> SiteRules:
    if not isinstance(data, dict):
        raise ValueError(f"link rules: {where} must be an object")
    unknown = set(data) - {"hosts", "paths", "prefixes", "patterns"}
    if unknown:
        raise ValueError(f"link rules: {where} has unknown keys {sorted(unknown)}")
    prefixes = _words(data.get("prefixes"), f"{where}.prefixes")
    patterns = data.get("patterns") or []
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ValueError(f"link rules: {where}.patterns must be a list of strings")
    for pattern in patterns:
        try:
            _compiled(pattern)
        except re.error as exc:
            raise ValueError(f"link rules: {where}.patterns: {pattern!r}: {exc}") from exc
    return SiteRules(_words(data.get("hosts"), f"{where}.hosts"),
                     _words(data.get("paths"), f"{where}.paths"), tuple(sorted(prefixes)),
                     tuple(patterns))


def _union(a: SiteRules, b: SiteRules) -> SiteRules:
    return SiteRules(a.hosts | b.hosts, a.paths | b.paths, tuple(sorted({*a.prefixes, *b.prefixes})),
                     tuple(dict.fromkeys((*a.patterns, *b.patterns))))


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def build_rules(data: Mapping[str, Any] | None = None) -> LinkRules:
    """The default rules, extended (or replaced, ``"replace": true``) by ``data``.

    Args:
        data: the parsed JSON of a rules file (module docstring), or None for the defaults.

    Raises:
        ValueError: ``data`` does not have the documented shape.
    """
    common = SiteRules(SERVICE_HOSTS, SERVICE_PATHS)
    sites: dict[str, SiteRules] = dict(SITE_DEFAULTS)
    if not data:
        return LinkRules(common, sites)
    if not isinstance(data, Mapping):
        raise ValueError("link rules: the file must hold a JSON object")
    unknown = set(data) - {"replace", "hosts", "paths", "sites"}
    if unknown:
        raise ValueError(f"link rules: unknown keys {sorted(unknown)}")
    if data.get("replace"):
        common, sites = SiteRules(), {}
    common = _union(common, _site({k: data[k] for k in ("hosts", "paths") if k in data}, "rules"))
    extra = data.get("sites") or {}
    if not isinstance(extra, dict):
        raise ValueError("link rules: sites must be an object")
    for domain, entry in extra.items():
        rules = _site(entry, f"sites[{domain!r}]")
        key = str(domain).lower()
        sites[key] = _union(sites[key], rules) if key in sites else rules
    return LinkRules(common, sites)


def load_rules(path: str | Path | None) -> LinkRules:
    """Rules from a JSON file (module docstring) over the defaults; the defaults for ``""``/None.
    A value that starts with ``{`` is the JSON object itself (``{"replace": true}``).

    Raises:
        ValueError: the file is missing, not JSON, or not of the documented shape (the message
            names the file).
    """
    if not path:
        return build_rules()
    try:
        text = str(path).strip()
        data = json.loads(text if text.startswith("{") else Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"link rules file {path}: {exc}") from exc
    try:
        return build_rules(data)
    except ValueError as exc:
        raise ValueError(f"link rules file {path}: {exc}") from exc


#: The rules used when a caller gives none.
DEFAULT_RULES = build_rules()

__all__ = ["DEFAULT_RULES", "LinkRules", "SERVICE_HOSTS", "SERVICE_PATHS", "SITE_DEFAULTS",
           "SiteRules", "EDITORIAL_DIRS", "TAXONOMY_DIRS", "build_rules", "load_rules"]

