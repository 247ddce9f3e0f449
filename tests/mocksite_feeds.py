"""A small news site with an RSS feed and a news sitemap, for the feed tests (issue 12).

Run ``python tests/mocksite_feeds.py STATE_FILE``: serves on 127.0.0.21 (a free port) and prints
one JSON line ``{"url": "http://127.0.0.21:PORT/"}``. The feed's version is read from STATE_FILE
on every request (``1`` when missing). Pages:

* ``/`` — home page announcing ``/feed.xml`` with ``<link rel="alternate">``, linking article 1
  (so article 1 is known from the channel and the feed);
* ``/robots.txt`` — ``Sitemap: /news-sitemap.xml`` (``Cache-Control: max-age=3600``);
* ``/feed.xml`` — RSS 2.0 with a strong ``ETag`` (answers ``If-None-Match`` with 304): the
  articles of :data:`FEED_ITEMS` for the version, an off-site entry and a redirector entry
  (``/redirect.php?url=<article 4>``);
* ``/news-sitemap.xml`` — a Google News sitemap listing article 9 (publication 2024-10-02);
* ``/politik/2024-10-0N/meldung-N.html`` — articles without any date in their markup, so the
  date an entry gives is the only one.

Every request is logged to ``STATE_FILE.log`` as a JSON line ``{"method", "path", "status",
"if_none_match", "if_modified_since"}``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from twisted.internet import reactor
from twisted.web import resource, server

HOST = "127.0.0.21"
#: version -> articles the feed lists (newest first)
FEED_ITEMS = {1: (3, 2, 1), 2: (5, 4, 3, 2, 1)}
#: publication time each article's feed entry gives (RFC 822)
PUB_DATES = {n: f"Tue, 0{1 + n // 5} Oct 2024 0{n}:30:00 +0200" for n in range(1, 10)}
SITEMAP_ARTICLE = 9


def article_path(n: int) -> str:
    return f"/politik/2024-10-0{1 + n // 5}/meldung-{n}.html"


def feed_xml(base: str, version: int) -> str:
    items = []
    for n in FEED_ITEMS.get(version, FEED_ITEMS[max(FEED_ITEMS)]):
        link = base + article_path(n)
        if n == 4:  # a redirector, as go.rss.sina.com.cn/redirect.php?url= does
            link = f"{base}/redirect.php?url={link}"
        items.append(f"<item><title>Meldung {n} aus dem Feed</title><link>{link}</link>"
                     f"<pubDate>{PUB_DATES[n]}</pubDate></item>")
    items.append("<item><title>Anderswo</title><link>http://elsewhere.example/a.html</link></item>")
    # The same host on another port: another site, never requested (a feed must not make the
    # crawler probe the ports of a host).
    other = base.rsplit(":", 1)[0] + f":{int(base.rsplit(':', 1)[1]) + 1}" if base else ""
    items.append(f"<item><title>Nebenan</title><link>{other}{article_path(9)}</link></item>")
    return ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
            f"<title>Mock news</title><link>{base}/</link>{''.join(items)}</channel></rss>")


def sitemap_xml(base: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
            f"<url><loc>{base}{article_path(SITEMAP_ARTICLE)}</loc><news:news>"
            "<news:publication><news:name>Mock</news:name><news:language>de</news:language>"
            "</news:publication><news:publication_date>2024-10-02T06:00:00+02:00"
            "</news:publication_date><news:title>Meldung 9 aus der Sitemap</news:title>"
            "</news:news></url></urlset>")


def article_html(n: int) -> str:
    text = " ".join(f"Satz {i} der Meldung {n} über die Politik des Tages." for i in range(30))
    return (f"<html><head><title>Meldung {n}</title></head><body><article><h1>Meldung {n}</h1>"
            f"<p>{text}</p><p>{text}</p></article></body></html>")


def home_html() -> str:
    return ('<html><head><title>Mock news</title>'
            '<link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.xml">'
            f'</head><body><a href="{article_path(1)}">Meldung 1, ein langer Titel hier</a>'
            '</body></html>')


class Site(resource.Resource):
    isLeaf = True

    def __init__(self, state: Path) -> None:
        super().__init__()
        self.state = state
        self.base = ""

    def version(self) -> int:
        try:
            return int(self.state.read_text().strip() or 1)
        except (OSError, ValueError):
            return 1

    def render(self, request):  # noqa: C901 - one branch per page
        path = request.path.decode()
        body, ctype, status, headers = None, "text/html; charset=utf-8", 200, {}
        if path == "/":
            body = home_html()
        elif path == "/robots.txt":
            body, ctype = "User-agent: *\nAllow: /\nSitemap: /news-sitemap.xml\n", "text/plain"
            headers["Cache-Control"] = "max-age=3600"
        elif path == "/feed.xml":
            body, ctype = feed_xml(self.base, self.version()), "application/rss+xml"
            etag = '"%s"' % hashlib.sha1(body.encode()).hexdigest()[:16]
            headers["ETag"] = etag
            if request.getHeader("If-None-Match") == etag:
                status, body = 304, ""
        elif path == "/news-sitemap.xml":
            body, ctype = sitemap_xml(self.base), "application/xml"
        elif path.startswith("/politik/") and path.endswith(".html"):
            body = article_html(int(path.rsplit("-", 1)[1].split(".")[0]))
        if body is None:
            status, body = 404, "not found"
        with open(f"{self.state}.log", "a", encoding="utf-8") as log:
            log.write(json.dumps({"method": request.method.decode(), "path": path,
                                  "status": status,
                                  "if_none_match": request.getHeader("If-None-Match"),
                                  "if_modified_since": request.getHeader("If-Modified-Since")})
                      + "\n")
        request.setResponseCode(status)
        request.setHeader("Content-Type", ctype)
        for name, value in headers.items():
            request.setHeader(name, value)
        return body.encode("utf-8")


def main() -> None:
    site = Site(Path(sys.argv[1]))
    port = reactor.listenTCP(0, server.Site(site), interface=HOST)
    site.base = f"http://{HOST}:{port.getHost().port}"
    print(json.dumps({"url": site.base + "/"}), flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
