"""A loopback news site that publishes over real time — for monitoring-mode tests and
``benchmarks/live_freshness.py``.

Run ``python tests/livesite.py CONFIG.json OUTDIR``; it serves several hosts, one per loopback
address (``127.0.0.11``, ``127.0.0.12``, …; distinct hosts, distinct sites), each on a free port,
and prints one JSON line ``{"hosts": {"127.0.0.11": "http://127.0.0.11:PORT/", ...}, "start": T}``
when ready. The whole publication schedule is drawn at start from the config's seed and written to
``OUTDIR/articles.jsonl`` (one line per article: ``id``, ``host``, ``channel``, ``path``,
``published``, ``corrected``); every request is appended to ``OUTDIR/requests.jsonl``
(``t``, ``host``, ``method``, ``path``, ``status``, ``listed``: ids of the articles an index
answer listed). So a test or a benchmark knows what was published when and what the crawler
saw when, independently of the crawler.

Each host has a home page ``/`` linking its channels ``/sectionK/``; a channel page lists its
newest ``index_size`` articles ``/sectionK/YYYY-MM-DD/story-ID.html`` published so far.
Channel ``k`` of host ``h`` publishes as a Poisson process of rate ``rates[h][k]`` per minute,
shaped by a compressed daily cycle ``1 + amplitude · sin(2π (t − start) / day + phase_h)``.
Some articles are corrected ``correct_after`` seconds after publication (text and
``Last-Modified`` change). Hosts answer ``ETag`` / ``Last-Modified`` and 304 to conditional GETs,
except the host listed as ``no_validators``; the host listed as ``no_head`` answers HEAD 405; the
host listed as ``lying`` keeps the ``ETag``, ``Last-Modified`` (and the HEAD / 304
``Content-Length``) of each page's first answer for ever while its body changes (a cache in front
of it that never learns of edits): its HEADs and conditional GETs say "unchanged", its full
answers carry the new body under the old validators.

Feeds mode (config ``feeds: true``; off by default, and then nothing below exists: the pages and
robots.txt are byte for byte those of a site without feeds): the home page announces an RSS 2.0
feed of the whole site ``/feed.xml`` and each channel page its own ``/sectionK/feed.xml`` with
``<link rel="alternate" type="application/rss+xml">``; each feed lists the newest ``feed_size``
articles (default ``index_size``) with absolute links, ``guid`` and ``pubDate``. robots.txt gains
``Sitemap: http://HOST:PORT/news-sitemap.xml``, a Google News sitemap of the newest
``sitemap_size`` articles (default 1000) with ``news:publication_date`` and ``news:title``.
Feeds and the sitemap answer validators and 304 like the channel pages, and their request lines
carry ``listed`` too.

Config keys: ``hosts`` (list of loopback addresses), ``rates`` (per host, a list of articles per
minute per channel), ``duration`` (seconds of schedule to draw), ``day`` (seconds of one
compressed day), ``amplitude`` (0..1), ``index_size``, ``initial`` (articles per channel already
published at start), ``correct_share`` (0..1), ``correct_after`` (seconds), ``no_validators``,
``no_head`` (a host, a list of hosts, or empty), ``seed``, ``article_delay`` (seconds each article answer is held
back: a window in which article requests are in flight, for crash tests; default 0), ``feeds``
(bool, default false), ``feed_size``, ``sitemap_size``,
``port`` (the same port on every host; default 0: a free port each).

Shape keys (``benchmarks/_matrix.py`` draws them; each absent key keeps the behaviour above):
``initial`` may also be a list per host of a count per channel; ``history_spacing`` is the
seconds between the already published articles (default 60) or ``"rate"``: drawn backwards as
a Poisson process at the channel's mean rate (so a listing's spacing tells the rate);
``lying`` (a host or a list): its validators are frozen at the first answer of each path —
``ETag``, ``Last-Modified`` and a HEAD's ``Content-Length`` stay those of the first version
served while the body changes, and a conditional GET with the frozen ETag answers 304;
``channel_feeds``, ``site_feed``, ``news_sitemap`` (bool or a list of hosts; default the value
of ``feeds``) switch the channel feeds, the site feed ``/feed.xml`` and the news sitemap apart.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
import sys
import time
from email.utils import formatdate
from pathlib import Path
from xml.sax.saxutils import escape

from twisted.internet import reactor
from twisted.web import resource, server

UTC = dt.timezone.utc


def host_in(cfg: dict, key: str, host: str, default: object = "") -> bool:
    """Whether ``host`` is named by config ``key``: a host, a list of hosts, or a bool (all)."""
    value = cfg.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return bool(value) and value == host
    return host in (value or ())


def initial_count(cfg: dict, h: int, k: int) -> int:
    """Articles of channel ``k`` of host number ``h`` already published at start."""
    value = cfg.get("initial", 3)
    if isinstance(value, list):
        return int(value[h][k])
    return int(value)


def draw_schedule(cfg: dict, start: float) -> list[dict]:
    """Every article of the run: publication times by thinning a Poisson process with the daily
    cycle (Lewis & Shedler 1979)."""
    rng = random.Random(cfg.get("seed", 1))
    amp = float(cfg.get("amplitude", 0.5))
    day = float(cfg.get("day", 600.0))
    out: list[dict] = []
    next_id = 1
    for h, host in enumerate(cfg["hosts"]):
        phase = 2 * math.pi * h / max(len(cfg["hosts"]), 1)
        for k, per_minute in enumerate(cfg["rates"][h]):
            lam = per_minute / 60.0
            spacing = cfg.get("history_spacing", 60.0)
            if spacing == "rate":
                times, t = [], start
                for _ in range(initial_count(cfg, h, k)):
                    t -= rng.expovariate(lam) if lam > 0 else 3600.0
                    times.append(t)
            else:
                times = [start - float(spacing) * (i + 1) for i in range(initial_count(cfg, h, k))]
            t = start
            peak = lam * (1 + amp)
            while peak > 0:
                t += rng.expovariate(peak)
                if t > start + float(cfg["duration"]):
                    break
                if rng.random() * (1 + amp) <= 1 + amp * math.sin(2 * math.pi * (t - start) / day + phase):
                    times.append(t)
            for p in sorted(times):
                corrected = (p + float(cfg.get("correct_after", 60.0))
                             if rng.random() < float(cfg.get("correct_share", 0.1)) else None)
                day_dir = dt.datetime.fromtimestamp(p, UTC).strftime("%Y-%m-%d")
                out.append({"id": next_id, "host": host, "channel": k, "published": p,
                            "corrected": corrected,
                            "path": f"/section{k}/{day_dir}/story-{next_id}.html"})
                next_id += 1
    return out


class Site(resource.Resource):
    isLeaf = True

    def __init__(self, host: str, cfg: dict, articles: list[dict], log) -> None:
        super().__init__()
        self.host = host
        self.cfg = cfg
        self.log = log
        self.channels: dict[int, list[dict]] = {}
        self.by_path: dict[str, dict] = {}
        for a in articles:
            if a["host"] == host:
                self.channels.setdefault(a["channel"], []).append(a)
                self.by_path[a["path"]] = a
        self.validators = not host_in(cfg, "no_validators", host)
        self.head_ok = not host_in(cfg, "no_head", host)
        self.lying = host_in(cfg, "lying", host)
        self.frozen: dict[str, tuple[str, str, int]] = {}  # path -> (etag, last-modified, length)
        feeds = bool(cfg.get("feeds", False))
        self.channel_feeds = host_in(cfg, "channel_feeds", host, feeds)
        self.site_feed = host_in(cfg, "site_feed", host, feeds)
        self.news_sitemap = host_in(cfg, "news_sitemap", host, feeds)
        self.feeds = self.channel_feeds or self.site_feed or self.news_sitemap

    def _newest(self, channel: int | None, now: float, size: int) -> list[dict]:
        """The newest ``size`` articles published by ``now`` (of one channel, or of all)."""
        pool = (self.channels.get(channel, []) if channel is not None
                else [a for arts in self.channels.values() for a in arts])
        live = [a for a in pool if a["published"] <= now]
        return sorted(live, key=lambda a: a["published"], reverse=True)[:size]

    def _title(self, a: dict) -> str:
        return f"Story {a['id']} of section {a['channel']} on {self.host}"

    def _feed(self, channel: int | None, now: float, base: str) -> tuple[bytes, float, list[int]]:
        """An RSS 2.0 feed of the newest articles (of one channel, or of the site)."""
        size = int(self.cfg.get("feed_size", self.cfg.get("index_size", 20)))
        newest = self._newest(channel, now, size)
        name = f"Section {channel}" if channel is not None else "All sections"
        items = "".join(
            f"<item><title>{escape(self._title(a))}</title><link>{base}{a['path']}</link>"
            f"<guid isPermaLink=\"true\">{base}{a['path']}</guid>"
            f"<pubDate>{formatdate(a['published'], usegmt=True)}</pubDate>"
            f"<description>Paragraph 0 of story {a['id']}.</description></item>" for a in newest)
        modified = max((a["published"] for a in newest), default=0.0)
        body = ('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
                f"<title>{escape(self.host)} news: {name}</title><link>{base}/</link>"
                f"<description>{name}</description>"
                f"<lastBuildDate>{formatdate(modified or 1.0e9, usegmt=True)}</lastBuildDate>"
                f"{items}</channel></rss>")
        return body.encode(), modified, [a["id"] for a in newest]

    def _news_sitemap(self, now: float, base: str) -> tuple[bytes, float, list[int]]:
        """A Google News sitemap (sitemaps.org 0.9 + news 0.9) of the newest articles."""
        newest = self._newest(None, now, int(self.cfg.get("sitemap_size", 1000)))
        urls = "".join(
            f"<url><loc>{base}{a['path']}</loc><news:news><news:publication>"
            f"<news:name>{escape(self.host)}</news:name><news:language>en</news:language>"
            f"</news:publication><news:publication_date>"
            f"{dt.datetime.fromtimestamp(a['published'], UTC).isoformat(timespec='seconds')}"
            f"</news:publication_date><news:title>{escape(self._title(a))}</news:title>"
            f"</news:news></url>" for a in newest)
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
                'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">' + urls + "</urlset>")
        modified = max((a["published"] for a in newest), default=0.0)
        return body.encode(), modified, [a["id"] for a in newest]

    def _page(self, path: str, now: float, base: str = "") -> tuple[bytes, float, list[int]] | None:
        """(body, last modified, listed ids) or None (404)."""
        head = '<html lang="en"><head><meta charset="utf-8"><title>{t}</title>{m}</head><body>'
        nav = "".join(f'<a href="/section{k}/">Section {k}</a> ' for k in sorted(self.channels))
        if self.feeds:
            if path == "/feed.xml" and self.site_feed:
                return self._feed(None, now, base)
            if path == "/news-sitemap.xml" and self.news_sitemap:
                return self._news_sitemap(now, base)
            if (self.channel_feeds and path.startswith("/section") and path.endswith("/feed.xml")
                    and path.count("/") == 2):
                try:
                    k = int(path[len("/section"):-len("/feed.xml")])
                except ValueError:
                    return None
                return self._feed(k, now, base) if k in self.channels else None
        if path == "/":
            alt = ('<link rel="alternate" type="application/rss+xml" title="All sections" '
                   'href="/feed.xml">') if self.site_feed else ""
            body = head.format(t=f"{self.host} news", m=alt) + f"<nav>{nav}</nav><p>Front page</p></body></html>"
            return body.encode(), 0.0, []
        if path.startswith("/section") and path.endswith("/") and path.count("/") == 2:
            try:
                k = int(path[len("/section"):-1])
            except ValueError:
                return None
            if k not in self.channels:
                return None
            newest = self._newest(k, now, int(self.cfg.get("index_size", 20)))
            items = "".join(f'<li><a href="{a["path"]}">Story {a["id"]} of section {k}</a></li>' for a in newest)
            alt = (f'<link rel="alternate" type="application/rss+xml" title="Section {k}" '
                   f'href="/section{k}/feed.xml">') if self.channel_feeds else ""
            body = (head.format(t=f"Section {k}", m=alt) + f"<nav>{nav}</nav><h1>Section {k}</h1>"
                    f"<ul>{items}</ul></body></html>")
            modified = max((a["published"] for a in newest), default=0.0)
            return body.encode(), modified, [a["id"] for a in newest]
        a = self.by_path.get(path)
        if a is None or a["published"] > now:
            return None
        fixed = a["corrected"] is not None and a["corrected"] <= now
        iso = dt.datetime.fromtimestamp(a["published"], UTC).isoformat()
        title = self._title(a)
        paras = [f"Paragraph {i} of story {a['id']}: the council met on Tuesday to discuss the "
                 f"budget of the coming year, and the opposition announced fierce resistance." for i in range(5)]
        if fixed:
            paras[1] = f"Correction to story {a['id']}: an earlier version gave the wrong figure."
        meta = f'<meta property="article:published_time" content="{iso}">'
        body = (head.format(t=title, m=meta) + f"<nav>{nav}</nav><article><h1>{title}</h1>"
                + "".join(f"<p>{p}</p>" for p in paras) + "</article></body></html>")
        return body.encode(), (a["corrected"] if fixed else a["published"]), []

    def render(self, request):
        now = time.time()
        path = request.path.decode("latin-1")
        method = request.method.decode()
        listed: list[int] = []
        length: int | None = None  # a lying host's frozen length
        base = f"http://{self.host}:{request.getHost().port}"
        if path == "/robots.txt":
            status, body = 200, b"User-agent: *\nAllow: /\n"
            if self.news_sitemap:
                body += f"Sitemap: {base}/news-sitemap.xml\n".encode()
            request.setHeader(b"content-type", b"text/plain")
        else:
            page = self._page(path, now, base)
            if page is None:
                status, body = 404, b"<html><body>not found</body></html>"
            else:
                body, modified, listed = page
                status = 200
                request.setHeader(b"content-type", _content_type(path))
                length = len(body)
                if self.validators:
                    etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                    lm = formatdate(modified or 1.0e9, usegmt=True)
                    if self.lying:
                        etag, lm, length = self.frozen.setdefault(path, (etag, lm, len(body)))
                    request.setHeader(b"etag", etag.encode())
                    request.setHeader(b"last-modified", lm.encode())
                    if request.getHeader(b"if-none-match") == etag.encode():
                        status, body = 304, b""
                if method == "HEAD" and not self.head_ok:
                    status, body = 405, b""
        self.log.write(json.dumps({"t": now, "host": self.host, "method": method, "path": path,
                                   "status": status, "listed": listed}) + "\n")
        self.log.flush()
        request.setResponseCode(status)
        if method == "HEAD" or status == 304:
            request.setHeader(b"content-length", str(length if length is not None else len(body)).encode())
            return b""
        delay = float(self.cfg.get("article_delay", 0))
        if delay > 0 and path in self.by_path:
            def finish() -> None:
                if not request.finished and not request._disconnected:
                    request.write(body)
                    request.finish()
            reactor.callLater(delay, finish)
            return server.NOT_DONE_YET
        return body


def _content_type(path: str) -> bytes:
    if path.endswith("feed.xml"):
        return b"application/rss+xml; charset=utf-8"
    if path.endswith(".xml"):
        return b"application/xml; charset=utf-8"
    return b"text/html; charset=utf-8"


def main() -> None:
    cfg = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    articles = draw_schedule(cfg, start)
    with open(out / "articles.jsonl", "w") as fh:
        for a in articles:
            fh.write(json.dumps(a) + "\n")
    log = open(out / "requests.jsonl", "a")
    urls = {}
    for host in cfg["hosts"]:
        port = reactor.listenTCP(int(cfg.get("port", 0)), server.Site(Site(host, cfg, articles, log)),
                                 interface=host)
        urls[host] = f"http://{host}:{port.getHost().port}/"
    print(json.dumps({"hosts": urls, "start": start}), flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
