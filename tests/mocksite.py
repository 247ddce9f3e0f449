"""A small news site with messy pages, served on 127.0.0.1 port 0 (Scrapy's mockserver habit).

Run ``python tests/mocksite.py``; it prints ``http://127.0.0.1:PORT/`` on its first line and
serves until killed. Pages: a home page (headline teasers, a channel link, an outward link, a
``javascript:`` link, a frame), a channel page, articles, a GBK article served with no charset
anywhere, a page larger than the extraction limit, a redirect loop, malformed HTML, and a
robots.txt that disallows ``/private/``.
"""

from __future__ import annotations

import sys

from twisted.internet import reactor
from twisted.web import resource, server

ARTICLES = [f"/politik/2024-10-0{i}/kanzler-trifft-minister-zum-gespraech-{i}.html" for i in range(1, 7)]
GBK_ARTICLE = "/china/2005-03-21/gbk-article-without-charset-244339.shtml"
HUGE_ARTICLE = "/politik/2024-10-09/very-large-page-with-many-words-9.html"
LOOP = "/politik/2024-10-08/redirect-loop-article-here-8.html"
BROKEN = "/politik/2024-10-07/broken-markup-article-story-7.html"
PRIVATE = "/private/2024-10-01/secret-article-not-for-robots-1.html"


def article_html(n: int, title: str) -> str:
    body = "".join(f"<p>Absatz {k} des Artikels {n}: Die Regierung berät heute über den Haushalt "
                   f"und die Opposition kritisiert die Pläne scharf.</p>" for k in range(8))
    return (f"<html><head><title>{title} - Mock News</title>"
            f'<meta property="article:published_time" content="2024-10-0{n % 9 + 1}T08:30:00+02:00">'
            f'<meta name="author" content="Anna Autorin"></head><body><nav><a href="/">Home</a></nav>'
            f"<article><h1>{title}</h1>{body}</article></body></html>")


def home_html() -> str:
    teasers = "".join(
        f'<article><a href="{url}"><img src="/i{i}.jpg"><h2>Schlagzeile {i}</h2></a></article>'
        for i, url in enumerate(ARTICLES[:3]))
    return ("<html><head><title>Mock News Startseite</title></head><body>"
            '<nav><a href="/politik/">Politik</a> <a href="/china/">China</a></nav>'
            f"{teasers}"
            f'<ul><li><a href="{GBK_ARTICLE}">GBK Artikel</a></li><li><a href="{HUGE_ARTICLE}">Gross</a></li>'
            f'<li><a href="{LOOP}">Schleife</a></li><li><a href="{BROKEN}">Kaputt</a></li>'
            f'<li><a href="{PRIVATE}">Privat</a></li></ul>'
            '<a href="https://www.example.org/partner">Partner</a> <a href="javascript:void(0)">js</a>'
            '<a href="mailto:redaktion@example.org">Mail</a> <a href="#top">top</a>'
            '<iframe src="/widget/frame.html"></iframe></body></html>')


def channel_html() -> str:
    items = "".join(f'<li><a href="{url}">Artikel {i}</a></li>' for i, url in enumerate(ARTICLES))
    return f"<html><head><title>Politik</title></head><body><ul>{items}</ul></body></html>"


GBK_BYTES = ("<html><head><title>新华社消息：国务院召开常务会议</title></head><body><div>"
             + "<p>国务院总理主持召开国务院常务会议，部署进一步做好经济工作，会议指出要坚持稳中求进。</p>" * 6
             + "</div></body></html>").encode("gbk")


class Site(resource.Resource):
    isLeaf = True

    def render_GET(self, request):  # noqa: N802 (Twisted's name)
        path = request.path.decode()
        if path == "/robots.txt":
            request.setHeader(b"Content-Type", b"text/plain")
            return b"User-agent: *\nDisallow: /private/\n"
        if path == LOOP:  # an endless chain of new URLs: the redirect limit must end it
            n = int(request.args.get(b"n", [b"0"])[0]) + 1
            request.setResponseCode(302)
            request.setHeader(b"Location", f"{path}?n={n}".encode())
            return b""
        if path == GBK_ARTICLE:
            request.setHeader(b"Content-Type", b"text/html")  # no charset, as 2005 portals did
            return GBK_BYTES
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        if path == "/":
            return home_html().encode()
        if path in ("/politik/", "/china/"):
            return channel_html().encode()
        if path == "/widget/frame.html":
            return b"<html><body><a href='/politik/'>Politik</a></body></html>"
        if path == HUGE_ARTICLE:
            return article_html(9, "Sehr grosse Seite").encode() + b"<!--" + b"x" * 3_000_000 + b"-->"
        if path == BROKEN:
            return b"<html><head><title>Kaputt</title><body><article><h1>Kaputt<p>Text ohne Ende <div><p>"
        if path in ARTICLES:
            n = ARTICLES.index(path) + 1
            return article_html(n, f"Kanzler trifft Minister {n}").encode()
        request.setResponseCode(404)
        return b"<html><body>not found</body></html>"


def main() -> None:
    port = reactor.listenTCP(0, server.Site(Site()), interface="127.0.0.1")
    print(f"http://127.0.0.1:{port.getHost().port}/", flush=True)
    reactor.run()


if __name__ == "__main__":
    sys.exit(main())
