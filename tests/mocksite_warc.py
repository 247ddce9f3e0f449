"""A news site for the WARC tests that sends what real servers send: gzip bodies, chunked
transfer coding, validators and ``304``s. Run as a script it serves on 127.0.0.1, port 0, and
prints its base URL; ``--articles N`` (default 8), ``--feed-only K`` (the last K articles are
listed in the feed only, not on the home page), ``--delay S`` (seconds before each answer),
``--edition 2`` (article 0 corrected: another paragraph, ETag ``v2``), ``--port P``.

* ``/`` home page: links to every article (``/politik/2024-10-01/bericht-N.html``), a feed link;
* articles: HTML with a title, Open Graph date and paragraphs; gzip-encoded (``mtime=0``, so the
  bytes are :func:`article_wire_bytes`) when the request accepts gzip, with an ``ETag`` and
  ``Last-Modified``; ``If-None-Match`` with the ETag answers ``304``; every third article is sent
  with ``Transfer-Encoding: chunked`` (no Content-Length);
* ``/feed.xml`` (RSS 2.0 listing the articles), ``/robots.txt``; HEAD answered for everything.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LAST_MODIFIED = "Wed, 02 Oct 2024 06:00:00 GMT"
CORRECTED = "Fri, 25 Oct 2024 06:00:00 GMT"


def article_path(n: int) -> str:
    return f"/politik/2024-10-01/bericht-ueber-den-haushalt-{n:03d}.html"  # the day of its markup date


def article_html(n: int, edition: int = 1) -> bytes:
    paras = "".join(
        f"<p>Absatz {i} des Berichts {n}: Die Bundesregierung hat sich nach langen Verhandlungen "
        f"auf den Haushalt geeinigt. Der Finanzminister sprach von einem tragfähigen Kompromiss, "
        f"die Opposition kritisierte die Neuverschuldung und kündigte Widerstand an.</p>"
        for i in range(6))
    if n == 0 and edition > 1:
        paras += ("<p>Korrektur: In einer früheren Fassung stand, der Haushalt sei bereits "
                  "beschlossen. Der Bundestag stimmt erst in der kommenden Woche ab.</p>")
    return (f"<!DOCTYPE html><html lang=\"de\"><head><meta charset=\"utf-8\">"
            f"<title>Haushalt geeinigt, Bericht {n}</title>"
            f"<meta property=\"og:title\" content=\"Haushalt geeinigt, Bericht {n}\">"
            f"<meta property=\"article:published_time\" content=\"2024-10-01T08:30:00+02:00\">"
            f"</head><body><header><a href=\"/\">Start</a></header><article>"
            f"<h1>Haushalt geeinigt, Bericht {n}</h1>{paras}</article></body></html>").encode("utf-8")


def article_wire_bytes(n: int, edition: int = 1) -> bytes:
    """The body of article ``n`` as sent to a client accepting gzip."""
    return gzip.compress(article_html(n, edition), mtime=0)


def etag(n: int, edition: int = 1) -> str:
    return f'"bericht-{n}-v{2 if n == 0 and edition > 1 else 1}"'


def home_html(count: int, feed_only: int = 0) -> bytes:
    items = "".join(f"<li><a href=\"{article_path(n)}\">Haushalt geeinigt, Bericht {n}</a></li>"
                    for n in range(count - feed_only))
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Mock Zeitung</title>"
            f"<link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\"></head>"
            f"<body><h1>Mock Zeitung</h1><ul>{items}</ul></body></html>").encode("utf-8")


def feed_xml(base: str, count: int) -> bytes:
    items = "".join(f"<item><title>Bericht {n}</title><link>{base.rstrip('/')}{article_path(n)}</link>"
                    f"<pubDate>Tue, 01 Oct 2024 06:30:00 GMT</pubDate></item>" for n in range(count))
    return (f"<?xml version=\"1.0\" encoding=\"utf-8\"?><rss version=\"2.0\"><channel>"
            f"<title>Mock Zeitung</title><link>{base}</link>{items}</channel></rss>").encode("utf-8")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    count = 8
    feed_only = 0
    delay = 0.0
    edition = 1

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status, headers, body=b"", *, chunked=False):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD" or status == 304:
            return
        if chunked:
            for i in range(0, len(body), 500):
                piece = body[i:i + 500]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.delay:
            time.sleep(self.delay)
        base = f"http://{self.headers.get('Host')}/"
        path = self.path.split("?")[0]
        if path == "/robots.txt":
            return self._send(200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        if path == "/":
            return self._send(200, [("Content-Type", "text/html; charset=utf-8")], home_html(self.count, self.feed_only))
        if path == "/feed.xml":
            return self._send(200, [("Content-Type", "application/rss+xml")], feed_xml(base, self.count))
        for n in range(self.count):
            if path == article_path(n):
                modified = LAST_MODIFIED if etag(n, self.edition).endswith('v1"') else CORRECTED
                validators = [("ETag", etag(n, self.edition)), ("Last-Modified", modified)]
                if self.headers.get("If-None-Match") == etag(n, self.edition):
                    return self._send(304, validators)
                headers = [("Content-Type", "text/html; charset=utf-8"), *validators]
                body = article_html(n, self.edition)
                if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    headers.append(("Content-Encoding", "gzip"))
                    body = article_wire_bytes(n, self.edition)
                return self._send(200, headers, body, chunked=(n % 3 == 2))
        return self._send(404, [("Content-Type", "text/plain")], b"not found")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--articles", type=int, default=8)
    parser.add_argument("--feed-only", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--edition", type=int, default=1)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    Handler.count, Handler.feed_only, Handler.delay = args.articles, args.feed_only, args.delay
    Handler.edition = args.edition
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
