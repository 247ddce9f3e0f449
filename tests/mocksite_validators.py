"""Four small news sites whose pages are edited between crawls, one per way of sending (or not
sending) validators, for the change-detection tests (RFC 9110 §8.8, §13.1):

* ``length`` on 127.0.0.11 — only ``Content-Length`` (no ``ETag``, no ``Last-Modified``);
* ``weak``   on 127.0.0.12 — a weak ``ETag`` (``W/"…"``, hash of the body) only; answers
  ``If-None-Match`` with 304 by the weak comparison;
* ``future`` on 127.0.0.13 — ``Last-Modified`` in 2031 (article 4: the epoch) and
  ``Content-Length``; a naive ``If-Modified-Since`` check (304 when it equals that date), so a
  crawler that echoes the date never sees an edit;
* ``good``   on 127.0.0.14 — strong ``ETag``, a true past ``Last-Modified``, ``Content-Length``;
  answers conditional GETs;
* ``stale``  on 127.0.0.15 — a server that lies: the same ``ETag`` and ``Last-Modified`` for
  every version of a page (a cache in front of it that never learns of edits).

The four-host tests crawl the first four; ``stale`` has a test of its own.

Run ``python tests/mocksite_validators.py STATE_FILE``: each site on a free port, one JSON line
``{"length": "http://127.0.0.11:PORT/", ...}``. Every site has a home page ``/`` (two teasers),
a channel page ``/politik/`` (four articles) and articles ``/politik/2024-10-0N/meldung-N.html``.
The content version is read from STATE_FILE on every request (``1`` when missing);
:data:`EDITS` lists what each version edits: ``same`` keeps the body's length (a figure
changes), ``longer`` adds a paragraph. Titles and links never change, so the home and channel
pages never do. Every request is logged to ``STATE_FILE.log`` as a JSON line ``{"site",
"method", "path", "status", "if_none_match", "if_modified_since"}``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from twisted.internet import reactor
from twisted.web import resource, server

HOSTS = {"length": "127.0.0.11", "weak": "127.0.0.12", "future": "127.0.0.13",
         "good": "127.0.0.14", "stale": "127.0.0.15"}
ARTICLES = (1, 2, 3, 4)
#: version -> {article: "same" (the body keeps its length) | "longer"}
EDITS: dict[int, dict[int, str]] = {2: {1: "same", 2: "longer"}, 3: {3: "same", 1: "longer"}}
FUTURE = "Wed, 01 Jan 2031 00:00:00 GMT"
EPOCH = "Thu, 01 Jan 1970 00:00:00 GMT"
#: Last-Modified of the good site: the day of the version that last edited the page.
GOOD_MODIFIED = {1: "Mon, 30 Sep 2024 08:00:00 GMT", 2: "Tue, 01 Oct 2024 08:00:00 GMT",
                 3: "Wed, 02 Oct 2024 08:00:00 GMT"}


def article_path(n: int) -> str:
    return f"/politik/2024-10-0{n}/meldung-{n}.html"


def last_edit(n: int, version: int) -> int:
    """The version that last edited article ``n`` (1: never edited)."""
    return max([v for v in EDITS if v <= version and n in EDITS[v]], default=1)


def article_body(site: str, n: int, version: int) -> str:
    """The article's text at ``version`` (every edit up to it applied)."""
    figure = 1000
    extra = []
    for v in sorted(EDITS):
        if v > version or n not in EDITS[v]:
            continue
        if EDITS[v][n] == "same":
            figure += v  # four digits stay four digits: the body keeps its length
        else:
            extra.append(f"Nachtrag aus Fassung {v}: Die Regierung hat die Zahlen am Abend "
                         f"noch einmal korrigiert und eine neue Vorlage angekündigt.")
    paragraphs = [f"Absatz {k} der Meldung {n} von {site}: Der Haushaltsausschuss berät in "
                  f"Berlin über die Vorlage mit der Kennziffer {figure}, die Opposition kündigt "
                  f"Widerstand gegen die Pläne der Regierung an." for k in range(1, 6)]
    return "".join(f"<p>{p}</p>" for p in paragraphs + extra)


def page(site: str, path: str, version: int) -> tuple[bytes, int] | None:
    """(body, version that last changed it) of a page, or None for 404."""
    head = '<html lang="de"><head><meta charset="utf-8"><title>{0}</title>{1}</head><body>'
    nav = '<nav><a href="/">Startseite</a> <a href="/politik/">Politik</a></nav>'
    titles = {n: f"Meldung {n} aus {site}: Ausschuss berät Vorlage" for n in ARTICLES}
    if path == "/":
        teasers = "".join(f'<article><a href="{article_path(n)}"><h2>{titles[n]}</h2></a></article>'
                          for n in (1, 2))
        return (head.format(f"{site} Nachrichten", "") + nav + teasers + "</body></html>").encode(), 1
    if path == "/politik/":
        items = "".join(f'<li><a href="{article_path(n)}">{titles[n]}</a></li>' for n in ARTICLES)
        return (head.format("Politik", "") + nav + f"<ul>{items}</ul></body></html>").encode(), 1
    for n in ARTICLES:
        if path == article_path(n):
            meta = (f'<meta property="article:published_time" content="2024-10-0{n}T08:30:00+02:00">'
                    '<meta name="author" content="Anna Autorin">')
            body = (head.format(titles[n], meta) + nav
                    + f"<article><h1>{titles[n]}</h1>{article_body(site, n, version)}</article>"
                    + "</body></html>")
            return body.encode(), last_edit(n, version)
    return None


class Site(resource.Resource):
    isLeaf = True

    def __init__(self, site: str, state_file: Path):
        super().__init__()
        self.site = site
        self.state_file = state_file

    def version(self) -> int:
        try:
            return int(self.state_file.read_text().strip() or "1")
        except (OSError, ValueError):
            return 1

    def render(self, request):
        body = super().render(request)
        entry = {"site": self.site, "method": request.method.decode(),
                 "path": request.path.decode(), "status": request.code,
                 "if_none_match": (request.getHeader(b"If-None-Match") or b"").decode(),
                 "if_modified_since": (request.getHeader(b"If-Modified-Since") or b"").decode()}
        with open(str(self.state_file) + ".log", "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")
        return body

    def render_GET(self, request):  # noqa: N802 (Twisted's name)
        path = request.path.decode()
        if path == "/robots.txt":
            request.setHeader(b"Content-Type", b"text/plain")
            return b"User-agent: *\nAllow: /\n"
        found = page(self.site, path, self.version())
        if found is None:
            request.setResponseCode(404)
            return b"<html><body>not found</body></html>"
        body, edited = found
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        digest = hashlib.sha1(body).hexdigest()[:16]
        inm = (request.getHeader(b"If-None-Match") or b"").decode()
        ims = (request.getHeader(b"If-Modified-Since") or b"").decode()
        not_modified = False
        if self.site == "weak":
            etag = f'W/"{digest}"'
            request.setHeader(b"ETag", etag.encode())
            not_modified = inm.removeprefix("W/") == etag.removeprefix("W/")
        elif self.site == "future":
            modified = EPOCH if path == article_path(4) else FUTURE
            request.setHeader(b"Last-Modified", modified.encode())
            not_modified = ims == modified  # naive: whatever date comes back, same = 304
        elif self.site == "good":
            etag, modified = f'"{digest}"', GOOD_MODIFIED[edited]
            request.setHeader(b"ETag", etag.encode())
            request.setHeader(b"Last-Modified", modified.encode())
            not_modified = inm == etag if inm else ims == modified
        elif self.site == "stale":
            request.setHeader(b"ETag", b'"v1"')
            request.setHeader(b"Last-Modified", GOOD_MODIFIED[1].encode())
            not_modified = inm == '"v1"'
        if not_modified:
            request.setResponseCode(304)
            return b""
        return body


def main() -> None:
    state_file = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("mocksite_version.txt")
    urls = {}
    for site, address in HOSTS.items():
        port = reactor.listenTCP(0, server.Site(Site(site, state_file)), interface=address)
        urls[site] = f"http://{address}:{port.getHost().port}/"
    print(json.dumps(urls), flush=True)
    reactor.run()


if __name__ == "__main__":
    sys.exit(main())
