"""Crawl throughput: ``news`` against a plain Scrapy CrawlSpider on a generated static news site.

Usage (from the repository root)::

    .venv/bin/python benchmarks/crawl_throughput.py            # full run, >= 10,000 pages
    .venv/bin/python benchmarks/crawl_throughput.py --quick    # smoke run, ~1,000 pages
    .venv/bin/python benchmarks/crawl_throughput.py --pages 20000 --keep /tmp/site
    .venv/bin/python benchmarks/crawl_throughput.py --profile /tmp/prof   # cProfile each variant
    .venv/bin/python benchmarks/crawl_throughput.py --repeat 3            # best of 3, less noise
    # a component's share: extra -s settings / -a arguments for (c) only
    .venv/bin/python benchmarks/crawl_throughput.py --variants c -s NEWSCRAWL_REVISIT_ENABLED=False

A full run took 10 min 45 s on this 2-core machine at load average 2-7 from other processes,
15 min at load average 5-6; the ``load average`` printed per variant tells how quiet it was.
Figures on a shared machine vary by about 15 % from run to run; CPU ms/page varies less than
pages/s.

The site (generated into a temporary folder, deterministic from ``--seed``): a home page
linking every channel, each channel's top article with an image and six more headlines; per
channel an index ``/<channel>/index.html`` and pagination ``/<channel>/page-2.html`` ... with a
windowed pager (first, last, previous, next, two either side), each listing 20 article teasers
(image, headline, teaser, date); articles ``/<channel>/YYYY-MM-DD/slug-words-NNNNN.html`` of
3-6 KB of German paragraph text (UTF-8, umlauts) with ``<title>``, Open Graph, ``author`` and
``article:published_time`` meta, JSON-LD ``NewsArticle``, breadcrumb, five related articles of
the same channel; three footer pages (Impressum, Datenschutz, Kontakt); ``robots.txt`` allowing
all. It is served by Twisted's static ``File`` resource in a subprocess on 127.0.0.1, port 0.

Variants, each one ``scrapy`` subprocess with the same ``-s`` settings (``COMMON_SETTINGS``:
the project's concurrency, robots.txt on, LOG_LEVEL=WARNING, HTTPCACHE off, telnet off):

(a) ``plain``   — ``benchmarks/_plain_spider.py``: CrawlSpider, one ``Rule(LinkExtractor(),
    follow=True)`` within the host, no extraction; run from a folder outside the project, so no
    project component is loaded.
(b) ``plain+x`` — the same CrawlSpider calling :func:`newscrawl.algorithms.extraction.
    extract_article` on every page and yielding the result as an item (no pipeline).
(c) ``news``    — ``scrapy crawl news`` with the project's settings: charset middleware, link
    classification, NewsPageRank and MongoDB pipelines, storing into the embedded SecantusDB
    store in a fresh data folder; ``-a depth=`` pages-per-channel + 2, so every pagination page
    is reached.

Measured per variant: HTML pages fetched (every variant must fetch exactly the site's pages;
checked URL by URL), wall time of the subprocess (interpreter start to exit, including the
store's close), CPU time user+sys of the subprocess (``resource.getrusage(RUSAGE_CHILDREN)``
deltas). For (c) the embedded database server is started beforehand by this script with
``python -m newscrawl.embedded start`` (so the crawl reuses it and its start-up is not in the
crawl's wall time) and its CPU time during the crawl is read from ``/proc/<pid>/stat`` and added;
the table shows both parts. The static server's CPU is shown for information, not counted.

Target (``benchmarks/_targets.py`` format): pages/s of (c) >= pages/s of (b). Last line:
``ratio news/plain pages_per_s: X.XX`` = pages/s of (c) / pages/s of (b).
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(__file__).resolve().parent
for _path in (str(ROOT), str(BENCH_DIR)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _targets import target  # noqa: E402

from newscrawl import settings as project_settings  # noqa: E402

CHANNELS = [
    ("politik", "Politik"), ("wirtschaft", "Wirtschaft"), ("sport", "Sport"),
    ("kultur", "Kultur"), ("wissen", "Wissen"), ("digital", "Digital"),
    ("panorama", "Panorama"), ("reisen", "Reisen"), ("auto", "Mobilität"),
    ("gesundheit", "Gesundheit"),
]
ARTICLES_PER_INDEX = 20
RELATED_PER_ARTICLE = 5
STATIC_PAGES = [("impressum", "Impressum"), ("datenschutz", "Datenschutz"), ("kontakt", "Kontakt")]
SITE_NAME = "Tagesblatt"

#: Scrapy settings given to every variant (the project's own values for the Scrapy knobs that
#: matter for throughput), so the comparison differs only in the spider and its components.
#: Link-classification settings under which ``news`` follows every in-site link of the synthetic
#: site like the plain spider: no service-link rules, no channel following (leaf pages kept).
SAME_PAGES_SETTINGS = {
    "NEWSCRAWL_LINKCLASS_RULES": '{"replace": true}',
    "NEWSCRAWL_LINKCLASS_FOLLOW_CHANNELS": "False",
}

COMMON_SETTINGS = {
    "LOG_LEVEL": "WARNING",
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",  # the generated site (loopback is refused)
    "HTTPCACHE_ENABLED": "False",
    "TELNETCONSOLE_ENABLED": "False",
    "ROBOTSTXT_OBEY": "True",
    "CONCURRENT_REQUESTS": "32",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    "CONCURRENT_ITEMS": "8",
    "DOWNLOAD_DELAY": "0",
    "AUTOTHROTTLE_ENABLED": "False",
    "USER_AGENT": "newscrawl/0.1 (+news monitoring; incremental crawler)",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    "EXTENSIONS": json.dumps({"_plain_spider.BenchStats": 900}),
    # The synthetic site's footer pages (imprint, privacy, contact) are service pages the news
    # spider skips by default; every variant fetches them here so that all fetch the same pages.
    **SAME_PAGES_SETTINGS,
}

_WORDS = (
    "Regierung Bundestag Haushalt Minister Ministerin Koalition Opposition Gesetz Entwurf Debatte "
    "Wähler Umfrage Länder Kommunen Städte Gemeinden Bürger Bürgerinnen Steuern Abgaben Rente "
    "Energie Strompreis Gaspreis Wärmepumpe Heizung Klimaschutz Verkehr Bahn Straßen Brücken "
    "Schulen Lehrkräfte Universität Forschung Studie Ergebnis Wissenschaftler Ärzte Kliniken "
    "Pflege Krankenkasse Beitrag Versicherung Unternehmen Konzern Mittelstand Handwerk Export "
    "Import Zölle Markt Börse Aktien Anleger Zinsen Inflation Notenbank Kredit Wohnungen Mieten "
    "Bauen Förderung Programm Milliarden Millionen Prozent Quartal Jahr Woche Montag Dienstag "
    "Mittwoch Donnerstag Freitag Samstag Sonntag Abend Morgen heute gestern früher später "
    "deutlich erheblich kaum bislang weiterhin jedoch allerdings außerdem zudem trotzdem daher "
    "schließlich zunächst bereits offenbar möglicherweise tatsächlich grundsätzlich "
    "und oder aber denn weil dass wenn als ob wie nach vor über unter zwischen gegen für ohne "
    "mit bei von zu aus seit bis durch um der die das den dem des ein eine einen einem einer "
    "nicht auch noch nur schon sehr mehr weniger viele wenige alle einige neue neuen alten großen "
    "kleinen wichtigen öffentlichen politischen wirtschaftlichen sozialen europäischen "
    "sagte erklärte kündigte forderte kritisierte betonte warnte räumte ein bestätigte verwies "
    "Mannschaft Trainer Spieler Tor Saison Liga Pokal Finale Niederlage Sieg Unentschieden "
    "Theater Museum Ausstellung Konzert Festival Roman Autorin Film Regisseur Bühne Publikum "
    "Software Daten Internet Plattform Nutzer Sicherheit Lücke Update Künstliche Intelligenz "
    "Reise Urlaub Flughafen Hotel Strand Gebirge Wanderung Fahrrad Elektroauto Ladesäule "
    "Polizei Feuerwehr Unfall Gericht Urteil Prozess Zeugen Ermittlungen Behörde Sprecherin"
).split()
_FIRST = ("Anna Jonas Lena Felix Sophie Paul Marie Lukas Hannah Ben Clara Elias Mia Noah Leonie "
          "Jakob Emilia Moritz Frieda Tim Jürgen Sören Björn Käthe Günther Özlem").split()
_LAST = ("Müller Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz Hoffmann Schäfer Koch "
         "Bauer Richter Klein Wolf Schröder Neumann Schwarz Zimmermann Braun Krüger Hofmann Lange "
         "Schmitt Werner Krause Meier Lehmann Köhler").split()
_TRANSLIT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "Ä": "ae", "Ö": "oe",
                           "Ü": "ue"})


# --- the site -----------------------------------------------------------------------------------


@dataclass
class Article:
    channel: str
    path: str
    title: str
    teaser: str
    author: str
    published: datetime
    image: str
    paragraphs: list[str]
    related: list[int] = field(default_factory=list)


@dataclass
class Site:
    root: Path
    pages_per_channel: int
    paths: list[str]  # every HTML page's URL path, home first

    @property
    def html_pages(self) -> int:
        return len(self.paths)


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(low, high))
    return words[0][:1].upper() + words[0][1:] + " " + " ".join(words[1:]) + rng.choice(".....?!:")


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng, 6, 16) for _ in range(rng.randint(3, 6)))


def _slug(title: str, ident: int, rng: random.Random) -> str:
    words = [w.lower().translate(_TRANSLIT) for w in title.rstrip(".?!:").split()]
    words = [w for w in words if w.isalnum()][: rng.randint(4, 7)]
    return "-".join(words) + f"-{ident}"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _german_date(value: datetime) -> str:
    return value.strftime("%d.%m.%Y, %H:%M Uhr")


def _head(title: str, extra: str = "") -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"de\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_e(title)}</title>\n"
        "<link rel=\"stylesheet\" href=\"/static/site.css\">\n"
        f"{extra}"
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
        "gtag('js',new Date());</script>\n</head>\n"
    )


def _header(active: str | None) -> str:
    active_class = ' class="active"'
    items = "".join(
        f"<li{active_class if slug == active else ''}><a href=\"/{slug}/index.html\">"
        f"{_e(name)}</a></li>" for slug, name in CHANNELS)
    return (
        "<body>\n<header class=\"site-header\"><a class=\"logo\" href=\"/\">"
        f"<img src=\"/img/logo.png\" alt=\"{SITE_NAME}\"></a>\n"
        f"<nav class=\"main-nav\"><ul>{items}</ul></nav>\n"
        "<form class=\"search\" action=\"/suche\" method=\"get\"><input name=\"q\" type=\"search\">"
        "</form></header>\n"
    )


def _footer() -> str:
    links = " ".join(f"<a href=\"/{slug}.html\">{_e(name)}</a>" for slug, name in STATIC_PAGES)
    return (f"<footer class=\"site-footer\"><p>{links}</p><p>© 2024 {SITE_NAME} Verlag GmbH</p>"
            "</footer>\n</body>\n</html>\n")


def _teaser_block(a: Article, heading: str = "h2") -> str:
    return (
        f"<article class=\"teaser\"><a href=\"{a.path}\"><figure><img src=\"{a.image}\" "
        f"alt=\"{_e(a.title)}\" width=\"320\" height=\"180\"></figure>"
        f"<{heading} class=\"teaser-title\">{_e(a.title)}</{heading}></a>"
        f"<p class=\"teaser-text\">{_e(a.teaser)}</p>"
        f"<time datetime=\"{a.published.isoformat()}\">{_german_date(a.published)}</time></article>\n"
    )


def _index_url(channel: str, page: int) -> str:
    return f"/{channel}/index.html" if page == 1 else f"/{channel}/page-{page}.html"


def _pager(channel: str, page: int, last: int) -> str:
    parts = []
    if page > 1:
        parts.append(f"<a rel=\"prev\" href=\"{_index_url(channel, page - 1)}\">« Zurück</a>")
    shown = sorted({1, last, *range(max(1, page - 2), min(last, page + 2) + 1)})
    previous = 0
    for number in shown:
        if number - previous > 1:
            parts.append("<span>…</span>")
        if number == page:
            parts.append(f"<span class=\"current\">{number}</span>")
        else:
            parts.append(f"<a href=\"{_index_url(channel, number)}\">{number}</a>")
        previous = number
    if page < last:
        parts.append(f"<a rel=\"next\" href=\"{_index_url(channel, page + 1)}\">Weiter »</a>")
    return "<nav class=\"pagination\">" + " ".join(parts) + "</nav>\n"


def _article_page(a: Article, articles: list[Article], base_name: str) -> str:
    ld = {
        "@context": "https://schema.org", "@type": "NewsArticle", "headline": a.title,
        "datePublished": a.published.isoformat(), "author": [{"@type": "Person", "name": a.author}],
        "publisher": {"@type": "Organization", "name": SITE_NAME}, "image": [a.image],
        "articleSection": base_name, "inLanguage": "de-DE",
    }
    extra = (
        f"<meta name=\"description\" content=\"{_e(a.teaser)}\">\n"
        f"<meta name=\"author\" content=\"{_e(a.author)}\">\n"
        f"<meta property=\"og:title\" content=\"{_e(a.title)}\">\n"
        "<meta property=\"og:type\" content=\"article\">\n"
        f"<meta property=\"og:site_name\" content=\"{SITE_NAME}\">\n"
        f"<meta property=\"og:image\" content=\"{a.image}\">\n"
        f"<meta property=\"article:published_time\" content=\"{a.published.isoformat()}\">\n"
        f"<meta property=\"article:section\" content=\"{_e(base_name)}\">\n"
        f"<link rel=\"canonical\" href=\"{a.path}\">\n"
        "<script type=\"application/ld+json\">"
        + json.dumps(ld, ensure_ascii=False).replace("</", "<\\/") + "</script>\n"
    )
    body = "\n".join(f"<p>{_e(p)}</p>" for p in a.paragraphs[1:])
    related = "".join(
        f"<li><a href=\"{articles[i].path}\">{_e(articles[i].title)}</a></li>" for i in a.related)
    return (
        _head(f"{a.title} | {SITE_NAME}", extra) + _header(a.channel)
        + "<main>\n<nav class=\"breadcrumb\"><a href=\"/\">Startseite</a> › "
        f"<a href=\"/{a.channel}/index.html\">{_e(base_name)}</a></nav>\n"
        f"<article class=\"article\">\n<h1>{_e(a.title)}</h1>\n"
        f"<p class=\"byline\">Von <span class=\"author\">{_e(a.author)}</span>, "
        f"<time datetime=\"{a.published.isoformat()}\">{_german_date(a.published)}</time></p>\n"
        f"<figure><img src=\"{a.image}\" alt=\"{_e(a.title)}\" width=\"960\" height=\"540\">"
        f"<figcaption>{_e(a.teaser[:80])} Foto: dpa</figcaption></figure>\n"
        f"<p class=\"lead\"><strong>{_e(a.paragraphs[0])}</strong></p>\n{body}\n</article>\n"
        f"<aside class=\"related\"><h2>Mehr zum Thema</h2><ul>{related}</ul></aside>\n"
        "</main>\n" + _footer()
    )


def generate_site(root: Path, pages: int, seed: int = 1) -> Site:
    """Write the static news site into ``root`` (at least ``pages`` HTML pages) and describe it."""
    rng = random.Random(seed)
    per_page_total = len(CHANNELS) * (ARTICLES_PER_INDEX + 1)
    pages_per_channel = max(2, math.ceil((pages - 1 - len(STATIC_PAGES)) / per_page_total))
    per_channel = pages_per_channel * ARTICLES_PER_INDEX
    newest = datetime(2024, 10, 1, 18, 0, tzinfo=timezone(timedelta(hours=2)))
    paths = ["/"]
    by_channel: dict[str, list[int]] = {}
    articles: list[Article] = []
    ident = 10_000
    for slug, _name in CHANNELS:
        by_channel[slug] = []
        published = newest - timedelta(minutes=rng.randint(0, 90))
        for _ in range(per_channel):
            ident += rng.randint(1, 37)
            title = _sentence(rng, 6, 11).rstrip(".?!:")
            paragraphs = []
            while sum(len(p) for p in paragraphs) < rng.randint(3000, 6000):
                paragraphs.append(_paragraph(rng))
            date = published.strftime("%Y-%m-%d")
            article = Article(
                channel=slug, path=f"/{slug}/{date}/{_slug(title, ident, rng)}.html", title=title,
                teaser=_sentence(rng, 14, 24),
                author=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", published=published,
                image=f"/img/{slug}-{rng.randint(1, 12)}.jpg", paragraphs=paragraphs)
            by_channel[slug].append(len(articles))
            articles.append(article)
            published -= timedelta(minutes=rng.randint(20, 240))
        ids = by_channel[slug]
        for position, index in enumerate(ids):
            near = ids[max(0, position - 10): position + 11]
            articles[index].related = rng.sample([i for i in near if i != index],
                                                 k=min(RELATED_PER_ARTICLE, len(near) - 1))
    names = dict(CHANNELS)
    (root / "img").mkdir(parents=True, exist_ok=True)
    (root / "static").mkdir(parents=True, exist_ok=True)
    for slug, _name in CHANNELS:
        for number in range(1, 13):
            (root / "img" / f"{slug}-{number}.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(60))
    (root / "img" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(60))
    (root / "static" / "site.css").write_text("body{font-family:serif}.teaser{margin:1em 0}\n")
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n")

    # home
    sections = []
    for slug, name in CHANNELS:
        ids = by_channel[slug]
        top = articles[ids[0]]
        more = "".join(f"<li><h3><a href=\"{articles[i].path}\">{_e(articles[i].title)}</a></h3></li>"
                       for i in ids[1:7])
        sections.append(
            f"<section class=\"channel\"><h2><a href=\"/{slug}/index.html\">{_e(name)}</a></h2>\n"
            + _teaser_block(top, "h3") + f"<ul class=\"headlines\">{more}</ul></section>\n")
    home = (_head(f"{SITE_NAME} – Nachrichten aus Deutschland und der Welt",
                  "<meta name=\"description\" content=\"Aktuelle Nachrichten\">\n")
            + _header(None) + "<main>\n" + "".join(sections) + "</main>\n" + _footer())
    (root / "index.html").write_text(home, encoding="utf-8")

    for slug, title in STATIC_PAGES:
        text = "\n".join(f"<p>{_e(_paragraph(rng))}</p>" for _ in range(3))
        (root / f"{slug}.html").write_text(
            _head(f"{title} | {SITE_NAME}") + _header(None) + f"<main><h1>{_e(title)}</h1>\n{text}"
            "</main>\n" + _footer(), encoding="utf-8")
        paths.append(f"/{slug}.html")

    for slug, name in CHANNELS:
        ids = by_channel[slug]
        (root / slug).mkdir(exist_ok=True)
        for page in range(1, pages_per_channel + 1):
            chunk = ids[(page - 1) * ARTICLES_PER_INDEX: page * ARTICLES_PER_INDEX]
            teasers = "".join(_teaser_block(articles[i]) for i in chunk)
            suffix = f" – Seite {page}" if page > 1 else ""
            content = (
                _head(f"{name}{suffix} | {SITE_NAME}",
                      f"<meta name=\"description\" content=\"Nachrichten: {_e(name)}\">\n")
                + _header(slug) + f"<main>\n<h1>{_e(name)}{_e(suffix)}</h1>\n"
                f"<div class=\"teaser-list\">\n{teasers}</div>\n"
                + _pager(slug, page, pages_per_channel) + "</main>\n" + _footer())
            url = _index_url(slug, page)
            (root / url.lstrip("/")).write_text(content, encoding="utf-8")
            paths.append(url)
        for i in ids:
            article = articles[i]
            target = root / article.path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_article_page(article, articles, name), encoding="utf-8")
            paths.append(article.path)
    return Site(root=root, pages_per_channel=pages_per_channel, paths=paths)


# --- the static server --------------------------------------------------------------------------


def serve(folder: str) -> None:
    """Serve ``folder`` with Twisted's static File on 127.0.0.1, port 0; print the port."""
    from twisted.internet import reactor
    from twisted.web.server import Site as WebSite
    from twisted.web.static import File

    resource_ = File(folder)
    resource_.indexNames = ["index.html"]
    port = reactor.listenTCP(0, WebSite(resource_), interface="127.0.0.1")
    print(port.getHost().port, flush=True)
    reactor.run()


class StaticServer:
    def __init__(self, folder: Path):
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(folder)],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError(f"static server did not start (got {line!r})")
        self.port = int(line)
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen | None, timeout: float = 10.0) -> None:
    """Terminate ``proc`` (SIGTERM), kill it after ``timeout`` seconds; nothing if it ended."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- measuring ----------------------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu_seconds(pid: int) -> float:
    """user+sys CPU seconds of a live process (all its threads), from /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14 and 15)


@dataclass
class Result:
    key: str
    label: str
    wall: float
    cpu: float
    store_cpu: float | None
    site_cpu: float
    pages: int
    items: int
    same_pages: bool
    missing: int
    extra: int
    returncode: int
    stats: dict

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall if self.wall else 0.0

    @property
    def cpu_total(self) -> float:
        return self.cpu + (self.store_cpu or 0.0)

    def ms_per_page(self, seconds: float | None) -> float | None:
        return None if seconds is None or not self.pages else 1000.0 * seconds / self.pages


def _settings_args(settings: dict[str, str]) -> list[str]:
    args = []
    for key, value in settings.items():
        args += ["-s", f"{key}={value}"]
    return args


def run_variant(key: str, label: str, command: list[str], *, cwd: Path, env: dict, stats_file: Path,
                site: Site, server: StaticServer, store_pid: int | None = None,
                profile: Path | None = None) -> Result:
    if profile is not None:
        command = [command[0], "-m", "cProfile", "-o", str(profile / f"{key}.prof")] + command[1:]
    stats_file.unlink(missing_ok=True)
    site_before = proc_cpu_seconds(server.proc.pid)
    store_before = proc_cpu_seconds(store_pid) if store_pid else None
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - started
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    store_cpu = proc_cpu_seconds(store_pid) - store_before if store_pid else None
    site_cpu = proc_cpu_seconds(server.proc.pid) - site_before
    cpu = (usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)
    output = proc.stdout.strip()
    if proc.returncode != 0 or output:
        print(f"--- {label}: exit {proc.returncode}; output (last 40 lines):", file=sys.stderr)
        print("\n".join(output.splitlines()[-40:]), file=sys.stderr)
    try:
        dump = json.loads(stats_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        dump = {"stats": {}, "urls": []}
    prefix = server.url.rstrip("/")
    responses = [u[len(prefix):] if u.startswith(prefix) else u for u in dump["urls"]]
    responses = [u for u in responses if u != "/robots.txt"]
    fetched, expected = set(responses), set(site.paths)
    stats = dump["stats"]
    # pages = HTML responses, a page fetched twice counts twice (and makes same_pages false)
    return Result(key=key, label=label, wall=wall, cpu=cpu, store_cpu=store_cpu, site_cpu=site_cpu,
                  pages=len(responses), items=int(stats.get("item_scraped_count", 0)),
                  same_pages=fetched == expected and len(responses) == len(expected),
                  missing=len(expected - fetched), extra=len(responses) - len(fetched & expected),
                  returncode=proc.returncode, stats=stats)


def start_store(data_dir: Path, env: dict) -> int:
    proc = subprocess.run([sys.executable, "-m", "newscrawl.embedded", "start", "--data-dir",
                           str(data_dir)], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"embedded store did not start: {proc.stderr.strip()}")
    state = json.loads((data_dir / "server.json").read_text(encoding="utf-8"))
    return int(state["pid"])


def stop_store(data_dir: Path, env: dict) -> None:
    subprocess.run([sys.executable, "-m", "newscrawl.embedded", "stop", "--force", "--data-dir",
                    str(data_dir)], cwd=ROOT, env=env, capture_output=True, text=True)


# --- output -------------------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def print_table(results: list[Result]) -> None:
    headers = ["variant", "pages", "items", "same pages", "wall s", "pages/s", "CPU ms/page",
               "crawler", "store", "site server"]
    rows = []
    for r in results:
        same = "yes" if r.same_pages else f"no (-{r.missing} +{r.extra})"
        rows.append([r.label, str(r.pages), str(r.items), same, _fmt(r.wall), _fmt(r.pages_per_s),
                     _fmt(r.ms_per_page(r.cpu_total), 2), _fmt(r.ms_per_page(r.cpu), 2),
                     _fmt(r.ms_per_page(r.store_cpu), 2), _fmt(r.ms_per_page(r.site_cpu), 2)])
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
        print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
        for row in rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
        return
    table = Table(title="Crawl throughput (CPU ms/page = crawler + store; site server not counted)")
    for i, header in enumerate(headers):
        table.add_column(header, justify="left" if i == 0 or i == 3 else "right")
    for row in rows:
        table.add_row(*row)
    Console(width=140).print(table)


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000,
                        help="at least this many HTML pages (articles + indexes + home; default 10000)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1,000 pages")
    parser.add_argument("--seed", type=int, default=1, help="site generator seed")
    parser.add_argument("--variants", default="a,b,c", help="which of a,b,c to run (default all)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run the variants N times, interleaved (a,b,c,a,b,c...), and report "
                        "each variant's fastest run (best of N; less noise on a shared machine)")
    parser.add_argument("--keep", metavar="DIR", help="generate the site and data into DIR, keep it")
    parser.add_argument("--profile", metavar="DIR", help="run each variant under cProfile, write "
                        "DIR/<variant>.prof (throughput figures then include profiler overhead)")
    parser.add_argument("--news-setting", "-s", metavar="NAME=VALUE", action="append", default=[],
                        help="extra -s setting for (c) only, to measure a component's share "
                        "(e.g. -s NEWSCRAWL_MONGO_ENABLED=False); the ratio is then not the "
                        "benchmark's")
    parser.add_argument("--news-arg", "-a", metavar="NAME=VALUE", action="append", default=[],
                        help="extra -a spider argument for (c) only (same caveat)")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    pages = 1_000 if args.quick else args.pages
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="newscrawl-bench-"))
    if args.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    profile = Path(args.profile).resolve() if args.profile else None
    if profile:
        profile.mkdir(parents=True, exist_ok=True)
    site_dir, outside = work / "site", work / "run"
    outside.mkdir()
    started = time.perf_counter()
    site = generate_site(site_dir, pages, args.seed)
    sizes = [p.stat().st_size for p in site_dir.rglob("*.html")]
    print(f"site: {site.html_pages} HTML pages (1 home, {len(STATIC_PAGES)} footer pages, "
          f"{len(CHANNELS) * site.pages_per_channel} channel index pages = {len(CHANNELS)} channels "
          f"x {site.pages_per_channel}, {site.html_pages - 1 - len(STATIC_PAGES) - len(CHANNELS) * site.pages_per_channel} "
          f"articles), {sum(sizes) / len(sizes) / 1024:.1f} KB/page on average, generated in "
          f"{time.perf_counter() - started:.1f} s into {site_dir}")

    env = {k: v for k, v in os.environ.items()
           if k not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(BENCH_DIR), str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONHASHSEED"] = "0"
    server = StaticServer(site_dir)
    print(f"static server: {server.url} (Twisted static File, pid {server.proc.pid}); "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    results: list[Result] = []
    depth = site.pages_per_channel + 2
    try:
        for key in [k for _ in range(max(1, args.repeat)) for k in variants]:
            load_before = os.getloadavg()[0]
            stats_file = work / f"stats-{key}.json"
            settings = {**COMMON_SETTINGS, "BENCH_STATS_FILE": str(stats_file)}
            if key in ("a", "b"):
                label = "(a) plain CrawlSpider" if key == "a" else "(b) CrawlSpider + extract_article"
                command = [sys.executable, "-m", "scrapy", "runspider",
                           str(BENCH_DIR / "_plain_spider.py"), "-a", f"start_url={server.url}",
                           "-a", f"extract={1 if key == 'b' else 0}", *_settings_args(settings)]
                result = run_variant(key, label, command, cwd=outside, env=env,
                                     stats_file=stats_file, site=site, server=server, profile=profile)
            elif key == "c":
                data_dir = work / f"data-{len(results)}"  # fresh store: a first crawl every time
                run_env = {**env, "NEWSCRAWL_DATA_DIR": str(data_dir)}
                store_pid = start_store(data_dir, run_env)
                try:
                    # The project's extensions (store, crawl state) plus the stats recorder:
                    # -s EXTENSIONS replaces the project's dict, it does not add to it.
                    news_settings = {**settings, "EXTENSIONS": json.dumps(
                        {**project_settings.EXTENSIONS, "_plain_spider.BenchStats": 900})}
                    command = [sys.executable, "-m", "scrapy", "crawl", "news",
                               "-a", f"start_urls={server.url}", "-a", f"depth={depth}",
                               *_settings_args(news_settings)]
                    for extra in args.news_setting:
                        command += ["-s", extra]
                    for extra in args.news_arg:
                        command += ["-a", extra]
                    result = run_variant(key, "(c) news, all components + store", command,
                                         cwd=ROOT, env=run_env, stats_file=stats_file, site=site,
                                         server=server, store_pid=store_pid, profile=profile)
                finally:
                    stop_store(data_dir, run_env)
                stored = {k.rsplit("/", 1)[1]: v for k, v in result.stats.items()
                          if k.startswith("newscrawl/store/")}
                print(f"news: depth={depth}; stored {stored}; the embedded store (pid {store_pid}) "
                      "was started by this script before the crawl, its CPU during the crawl is "
                      "counted")
            else:
                parser.error(f"unknown variant {key!r}")
            results.append(result)
            print(f"{result.label}: {result.pages} pages in {result.wall:.1f} s "
                  f"(exit {result.returncode}); load average before {load_before:.2f}, after "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    by_key: dict[str, Result] = {}
    for r in results:  # best of N: the run with the shortest wall time per variant
        if r.key not in by_key or r.wall < by_key[r.key].wall:
            by_key[r.key] = r
    results = [by_key[k] for k in dict.fromkeys(variants) if k in by_key]
    if args.repeat > 1:
        print(f"best of {args.repeat} runs per variant:")
    print_table(results)
    failed = [r for r in results if r.returncode != 0 or not r.same_pages]
    if failed:
        print("WARNING: not comparable: " + ", ".join(
            f"{r.label} (exit {r.returncode}, missing {r.missing}, extra {r.extra})" for r in failed))
    if "a" in by_key and "c" in by_key:
        a, c = by_key["a"], by_key["c"]
        print(f"ratio news/(a) plain CrawlSpider pages_per_s: {c.pages_per_s / a.pages_per_s:.2f}; "
              f"CPU ms/page: {c.ms_per_page(c.cpu_total) / a.ms_per_page(a.cpu_total):.2f}")
    if "b" in by_key and "c" in by_key:
        b, c = by_key["b"], by_key["c"]
        ratio = c.pages_per_s / b.pages_per_s
        print(f"CPU ms/page news/plain: {c.ms_per_page(c.cpu_total) / b.ms_per_page(b.cpu_total):.2f} "
              f"(crawler process alone: {c.ms_per_page(c.cpu) / b.ms_per_page(b.cpu):.2f})")
        target(f"crawl_throughput ratio news/plain pages_per_s ({c.pages} pages)", ratio, ">=", 1.0)
        print(f"ratio news/plain pages_per_s: {ratio:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
