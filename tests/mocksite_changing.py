"""Four small news sites that change between crawls, one per loopback address, each with its own
way of (not) telling what changed — for the incremental re-crawl tests.

Run ``python tests/mocksite_changing.py STATE_FILE``: it serves

* ``good``   on 127.0.0.2 — honest ``ETag`` (hash of the body), ``Last-Modified`` and
  ``Content-Length``; ``HEAD`` works; ``If-None-Match`` / ``If-Modified-Since`` answer 304;
* ``nohead`` on 127.0.0.3 — the same, but ``HEAD`` answers 405 Method Not Allowed;
* ``liar``   on 127.0.0.4 — ``HEAD`` answers 200 with ``Content-Length: 0``, a fresh random
  ``ETag`` and ``Last-Modified: now`` on every request; ``GET`` is honest (and answers 304);
* ``ads``    on 127.0.0.5 — no validators at all (chunked answers, no ``ETag`` nor
  ``Last-Modified``), and every answer carries a new ad block with a random token and a clock,
  so the HTML changes on every request while the news does not;
* ``flaky``  on 127.0.0.6 — validators that change on every request: a random ``ETag`` and
  ``Last-Modified: now`` on every HEAD and GET (with a correct ``Content-Length``), so neither a
  HEAD nor a conditional GET can ever say "unchanged";

each on a free port, and prints one JSON line ``{"good": "http://127.0.0.2:PORT/", ...}``. Every
site has a home page ``/`` (two article teasers and the channel link), a channel page
``/politik/`` and articles ``/politik/2024-10-0N/...-N.html``. The *version* of the content is
read from STATE_FILE on every request (``1`` when missing), so a test switches versions between
crawls by writing the file. :data:`CHANGES` lists what version 2 changes. Every request is
logged to ``STATE_FILE.log`` as a JSON line ``{"site", "method", "path", "status"}``, so a test
can count requests per host.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sys
import time
from email.utils import formatdate
from pathlib import Path

from twisted.internet import reactor
from twisted.web import resource, server

HOSTS = {"good": "127.0.0.2", "nohead": "127.0.0.3", "liar": "127.0.0.4", "ads": "127.0.0.5",
         "flaky": "127.0.0.6"}
SLUGS = {
    1: "kanzler-trifft-minister-zum-gespraech",
    2: "opposition-kritisiert-haushaltsplaene-scharf",
    3: "bundesrat-stimmt-dem-gesetz-zu",
    4: "gericht-verhandelt-klage-der-laender",
    5: "regierung-legt-neuen-entwurf-vor",
}


def article_path(n: int) -> str:
    return f"/politik/2024-10-0{n}/{SLUGS[n]}-{n}.html"


#: Version 2, per site: articles added to the channel page, articles whose text is corrected.
CHANGES = {
    "good": {"added": [5], "corrected": [2]},
    "nohead": {"added": [], "corrected": [3]},
    "liar": {"added": [], "corrected": [4]},
    "ads": {"added": [], "corrected": []},
    "flaky": {"added": [], "corrected": []},
}
#: Articles of version 1 (the channel page lists them all; the home page the first two).
ARTICLES_V1 = [1, 2, 3, 4]
#: Last-Modified of unchanged pages, and of pages changed in version 2.
MODIFIED = {1: "Mon, 30 Sep 2024 08:00:00 GMT", 2: "Tue, 01 Oct 2024 12:00:00 GMT"}


def articles(site: str, version: int) -> list[int]:
    return ARTICLES_V1 + (CHANGES[site]["added"] if version >= 2 else [])


def article_text(site: str, n: int, version: int) -> tuple[str, str]:
    """(title, body HTML) of article n."""
    corrected = version >= 2 and n in CHANGES[site]["corrected"]
    title = f"Meldung {n} aus {site}: " + SLUGS[n].replace("-", " ").capitalize()
    if corrected and n == 2:
        title += " (aktualisiert)"
    paragraphs = [
        f"Absatz {k} der Meldung {n}: Die Regierung berät heute in Berlin über den Haushalt des "
        f"kommenden Jahres, und die Opposition kündigt scharfen Widerstand gegen die Pläne an."
        for k in range(1, 7)
    ]
    if corrected:
        paragraphs[2] = (f"Korrektur zu Meldung {n}: In einer früheren Fassung hieß es, der Haushalt "
                         f"werde um vier Milliarden Euro gekürzt; richtig sind drei Milliarden Euro.")
    return title, "".join(f"<p>{p}</p>" for p in paragraphs)


def ad_block() -> str:
    token = secrets.token_hex(8)
    clock = time.strftime("%H:%M:%S")
    return (f'<div class="ad-banner"><a href="http://ads.example.net/click?id={token}">'
            f"Anzeige {token}</a> <span class=\"clock\">Es ist {clock} Uhr</span></div>")


def page(site: str, path: str, version: int) -> tuple[bytes, bool] | None:
    """(body, changed in this version) of a page, or None for 404."""
    ads = ad_block() if site == "ads" else ""
    head = '<html lang="de"><head><meta charset="utf-8"><title>{title}</title>{meta}</head><body>'
    nav = '<nav><a href="/">Startseite</a> <a href="/politik/">Politik</a></nav>'
    if path == "/":
        teasers = "".join(
            f'<article><a href="{article_path(n)}"><h2>{article_text(site, n, 1)[0]}</h2></a></article>'
            for n in (1, 2))
        body = head.format(title=f"{site} Nachrichten", meta="") + ads + nav + teasers + "</body></html>"
        return body.encode(), False
    if path == "/politik/":
        listed = articles(site, version)
        items = "".join(f'<li><a href="{article_path(n)}">{article_text(site, n, version)[0]}</a></li>'
                        for n in listed)
        body = head.format(title="Politik", meta="") + ads + nav + f"<ul>{items}</ul></body></html>"
        return body.encode(), version >= 2 and bool(CHANGES[site]["added"])
    for n in SLUGS:
        if path == article_path(n) and n in articles(site, version):
            title, text = article_text(site, n, version)
            meta = (f'<meta property="article:published_time" content="2024-10-0{n}T08:30:00+02:00">'
                    '<meta name="author" content="Anna Autorin">')
            body = (head.format(title=title, meta=meta) + ads + nav
                    + f"<article><h1>{title}</h1>{text}</article></body></html>")
            return body.encode(), version >= 2 and n in CHANGES[site]["corrected"]
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
        with open(str(self.state_file) + ".log", "a", encoding="utf-8") as log:
            log.write(json.dumps({"site": self.site, "method": request.method.decode(),
                                  "path": request.path.decode(), "status": request.code}) + "\n")
        return body

    def _answer(self, request):
        path = request.path.decode()
        if path == "/robots.txt":
            request.setHeader(b"Content-Type", b"text/plain")
            return b"User-agent: *\nAllow: /\n", None
        found = page(self.site, path, self.version())
        if found is None:
            request.setResponseCode(404)
            return b"<html><body>not found</body></html>", None
        body, changed = found
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        validators = None
        if self.site != "ads":
            etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            modified = MODIFIED[2 if changed else 1]
            validators = (etag, modified)
        return body, validators

    def render_GET(self, request):  # noqa: N802 (Twisted's name)
        body, validators = self._answer(request)
        if self.site == "flaky":
            request.setHeader(b"ETag", f'"{secrets.token_hex(8)}"'.encode())
            request.setHeader(b"Last-Modified", formatdate(usegmt=True).encode())
            return body
        if validators is not None:
            etag, modified = validators
            request.setHeader(b"ETag", etag.encode())
            request.setHeader(b"Last-Modified", modified.encode())
            inm = (request.getHeader(b"If-None-Match") or b"").decode()
            ims = (request.getHeader(b"If-Modified-Since") or b"").decode()
            if (inm and inm == etag) or (not inm and ims and ims == modified):
                request.setResponseCode(304)
                return b""
        if self.site == "ads":  # chunked: no Content-Length either
            request.write(body)
            request.finish()
            return server.NOT_DONE_YET
        return body

    def render_HEAD(self, request):  # noqa: N802
        if self.site == "nohead":
            request.setResponseCode(405)
            request.setHeader(b"Allow", b"GET")
            return b""
        if self.site == "liar":
            self._answer(request)
            request.setHeader(b"ETag", f'"{secrets.token_hex(8)}"'.encode())
            request.setHeader(b"Last-Modified", formatdate(usegmt=True).encode())
            request.setHeader(b"Content-Length", b"0")
            return b""
        return self.render_GET(request)


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
