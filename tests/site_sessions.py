"""A loopback news site that hands out session ids, optionally behind HTTP Basic auth.

Run ``python tests/site_sessions.py [--auth USER:PASSWORD] [--delay SECONDS]``; it prints
``http://127.0.0.1:PORT/`` on its first line and serves until killed. Every page links the two
articles in several forms, each with a fresh random session id: ``…/a.html;jsessionid=R``,
``/;jsessionid=R/…/a.html``, ``…/a.html?PHPSESSID=R``, ``…?sid=R`` — a crawler that
does not remove session ids stores many documents for two articles. With ``--auth`` every
request without the right ``Authorization`` header is answered 401, and counted: ``/_stats``
answers ``{"unauthorised": N, "authorised": M}`` (not behind auth). ``--delay`` slows every
answer (seconds) for fault tests.
"""

from __future__ import annotations

import argparse
import base64
import json
import secrets
import sys

from twisted.internet import reactor, task
from twisted.web import resource, server

ARTICLES = ["/politik/2024-10-01/kanzler-trifft-minister-zum-gespraech-1.html",
            "/politik/2024-10-02/opposition-kritisiert-den-haushaltsplan-2.html"]


def _sid() -> str:
    return secrets.token_hex(8).upper()


def links() -> str:
    out = []
    for n, path in enumerate(ARTICLES, 1):
        variants = [f"{path};jsessionid={_sid()}", f"/;jsessionid={_sid()}{path}",
                    f"{path}?PHPSESSID={_sid()}", f"{path}?sid={_sid()}",
                    f"{path}?utm_source=x&JSESSIONID={_sid()}"]
        out += [f'<li><a href="{v}"><b>Schlagzeile {n}</b></a></li>' for v in variants]
    return "<ul>" + "".join(out) + "</ul>"


def article_html(n: int) -> str:
    body = "".join(f"<p>Absatz {k} des Artikels {n}: Die Regierung berät heute über den Haushalt "
                   f"und die Opposition kritisiert die Pläne scharf.</p>" for k in range(8))
    return (f"<html><head><title>Artikel {n} - Session News</title>"
            f'<meta property="article:published_time" content="2024-10-0{n}T08:30:00+02:00">'
            f"</head><body><nav><a href='/;jsessionid={_sid()}/'>Home</a></nav>"
            f"<article><h1>Artikel {n}</h1>{body}</article>{links()}</body></html>")


class Site(resource.Resource):
    isLeaf = True

    def __init__(self, auth: str | None, delay: float) -> None:
        super().__init__()
        self.expected = (b"Basic " + base64.b64encode(auth.encode())) if auth else None
        self.delay = delay
        self.counts = {"unauthorised": 0, "authorised": 0}

    def render_GET(self, request):  # noqa: N802 (Twisted's name)
        if not self.delay:
            return self._answer(request)
        task.deferLater(reactor, self.delay, self._later, request)
        return server.NOT_DONE_YET

    render_HEAD = render_GET  # noqa: N815

    def _later(self, request) -> None:
        body = self._answer(request)
        if request.method != b"HEAD":
            request.write(body)
        request.finish()

    def _answer(self, request) -> bytes:
        path = request.path.decode().split(";", 1)[0]
        if path == "/_stats":
            return json.dumps(self.counts).encode()
        if self.expected is not None:
            if request.getHeader("Authorization") != self.expected.decode():
                self.counts["unauthorised"] += 1
                request.setResponseCode(401)
                request.setHeader(b"WWW-Authenticate", b'Basic realm="news"')
                return b"unauthorised"
            self.counts["authorised"] += 1
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        if path == "/robots.txt":
            request.setHeader(b"Content-Type", b"text/plain")
            return b"User-agent: *\nAllow: /\n"
        if path in ("/", ""):
            return (f"<html><head><title>Session News</title></head><body>{links()}"
                    "</body></html>").encode()
        clean = request.path.decode()
        for n, article in enumerate(ARTICLES, 1):
            if clean.endswith(article) or path == article:
                return article_html(n).encode()
        request.setResponseCode(404)
        return b"<html><body>not found</body></html>"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--auth")
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    port = reactor.listenTCP(0, server.Site(Site(args.auth, args.delay)), interface="127.0.0.1")
    print(f"http://127.0.0.1:{port.getHost().port}/", flush=True)
    reactor.run()


if __name__ == "__main__":
    sys.exit(main())
