"""The hostile cases: one handler per case, registered by path (see :mod:`tests.hostile.site`).

Each case's test lives in ``tests/hostile/test_*.py`` and reads the one crawl of the session
(``tests/hostile/conftest.py``). Keep every case fast: the whole crawl shares a few seconds of
download timeout.
"""

from __future__ import annotations

import os
import socket
import struct
import time
import zlib
from functools import lru_cache

from tests.hostile.site import Handler, article_page, case, page

# --- encodings and compression -------------------------------------------------------------------

GBK_TITLE = "新华社消息：国务院召开常务会议"


@case("gbk-no-charset", article=True)
def gbk_no_charset(h: Handler, path: str) -> None:
    """A GBK article with no charset in the header nor in the page (2005 portals)."""
    body = ("<html><head><title>" + GBK_TITLE + "</title></head><body><div>"
            + "<p>国务院总理主持召开国务院常务会议，部署进一步做好经济工作，会议指出要坚持稳中求进。</p>" * 6
            + "</div></body></html>").encode("gbk")
    h.send(200, body, content_type="text/html")


@lru_cache(maxsize=1)
def _gzip_bomb() -> bytes:
    """64 MiB of spaces, gzipped to about 64 KiB (twice DOWNLOAD_MAXSIZE once decoded)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    return b"".join([compressor.compress(chunk) for _ in range(64)] + [compressor.flush()])


@case("gzip-bomb", article=True)
def gzip_bomb(h: Handler, path: str) -> None:
    h.send(200, _gzip_bomb(), headers={"Content-Encoding": "gzip"})


RAW_DEFLATE_TITLE = "Raw deflate article"


@case("raw-deflate", article=True)
def raw_deflate(h: Handler, path: str) -> None:
    """``Content-Encoding: deflate`` as a raw deflate stream (no zlib header), as IIS sends."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = compressor.compress(article_page(RAW_DEFLATE_TITLE).encode()) + compressor.flush()
    h.send(200, body, headers={"Content-Encoding": "deflate"})


@case("binary-as-html", article=True)
def binary_as_html(h: Handler, path: str) -> None:
    """Random bytes (a JPEG header first) labelled ``text/html``."""
    h.send(200, b"\xff\xd8\xff\xe0" + os.urandom(20_000), content_type="text/html")


# --- redirects and traps ---------------------------------------------------------------------------


@case("redirect-loop", article=True)
def redirect_loop(h: Handler, path: str) -> None:
    """The article redirects to a second URL that redirects back."""
    target = path + "x" if not path.endswith("x") else path[:-1]
    h.send(302, b"", headers={"Location": target})


@case("calendar-trap")
def calendar_trap(h: Handler, path: str) -> None:
    """An endless calendar: every month page links to the next month (a crawler trap)."""
    parts = path.strip("/").split("/")
    year, month = (int(parts[1]), int(parts[2])) if len(parts) >= 3 else (2024, 1)
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    links = "".join(f"<a href='/calendar-trap/{year}/{month:02d}/{day:02d}/'>{day}</a> "
                    for day in range(1, 3))
    h.send(200, page(f"Kalender {year}-{month}",
                     f"{links}<a href='/calendar-trap/{year}/{month:02d}/'>weiter</a>"))


# --- pages that are not articles (newscrawl/algorithms/pagekind.py) ---------------------------

#: Article-shaped URLs of the soft-404 case; each answers 200 with the same "not found" page.
SOFT_404_PAGES = 5


def soft_404_paths() -> list[str]:
    return [f"/soft-404/2024-10-01/soft-404-article-of-the-day-{i}.html"
            for i in range(1, SOFT_404_PAGES + 1)]


@case("soft-404")
def soft_404(h: Handler, path: str) -> None:
    """Dead article links answered 200 with the site's "Seite nicht gefunden" page (issue 23:
    20 such pages were stored as 20 articles)."""
    if path == "/soft-404/":
        links = "".join(f"<li><a href='{p}'>Artikel {i}</a></li>" for i, p in enumerate(soft_404_paths()))
        h.send(200, page("soft-404", f"<ul>{links}</ul>"))
        return
    h.send(200, page("Seite nicht gefunden | Hostile Zeitung",
                     "<nav><a href='/soft-404/'>Start</a></nav><h1>Seite nicht gefunden</h1>"
                     "<p>Die angeforderte Seite existiert leider nicht (mehr). Bitte versuchen "
                     "Sie es mit der Suche oder kehren Sie zur Startseite zurück.</p>"))


#: The calendar archive page's URL (issue 23: ``/calendar/2024/05/archive`` stored as an article).
CALENDAR_ARCHIVE_PATH = "/calendar-archive/calendar/2024/05/archive"


@case("calendar-archive")
def calendar_archive(h: Handler, path: str) -> None:
    """A month's calendar archive: a list of the month's stories with teasers."""
    if path == "/calendar-archive/":
        h.send(200, page("calendar-archive", f"<ul><li><a href='{CALENDAR_ARCHIVE_PATH}'>Mai 2024"
                                             "</a></li></ul>"))
        return
    teasers = "".join(
        f"<div class='teaser'><h2>Meldung {d} vom {d}. Mai 2024</h2><p>Die Regierung berät über "
        f"den Haushalt, die Opposition kritisiert die Pläne scharf (Teil {d}).</p></div>"
        for d in range(1, 9))
    h.send(200, page("Archiv Mai 2024 | Hostile Zeitung", f"<main>{teasers}</main>"))


# --- broken transfers ----------------------------------------------------------------------------


@case("slowloris", article=True)
def slowloris(h: Handler, path: str) -> None:
    """Headers at once, then one byte of body every 0.5 s, for longer than DOWNLOAD_TIMEOUT."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.wfile.flush()
    for _ in range(40):  # 20 s at most; the crawler gives up long before
        h.wfile.write(b"<")
        h.wfile.flush()
        time.sleep(0.5)


@case("reset-mid-body", article=True)
def reset_mid_body(h: Handler, path: str) -> None:
    """Half of the declared body, then a TCP reset (SO_LINGER 0)."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "20000")
    h.end_headers()
    h.wfile.write(article_page("Reset")[:1000].encode())
    h.wfile.flush()
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    h.connection.close()
    h.close_connection = True


@case("short-body", article=True)
def short_body(h: Handler, path: str) -> None:
    """Content-Length promises 20,000 bytes; 1,000 come, then a clean close."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "20000")
    h.send_header("Connection", "close")
    h.end_headers()
    h.wfile.write(article_page("Short")[:1000].encode())
    h.wfile.flush()
    h.close_connection = True


@case("huge-page", article=True)
def huge_page(h: Handler, path: str) -> None:
    """A 50 MB page (declared in Content-Length; streamed until the client gives up)."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", str(HUGE_PAGE_BYTES))
    h.send_header("Connection", "close")
    h.end_headers()
    chunk = b"<p>" + b"x" * 65_533
    for _ in range(HUGE_PAGE_BYTES // len(chunk)):
        h.wfile.write(chunk)
    h.close_connection = True


HUGE_PAGE_BYTES = 50 * 1024 * 1024


# --- sizes -------------------------------------------------------------------------------------

MANY_LINKS = 100_000


@case("many-links")
def many_links(h: Handler, path: str) -> None:
    """An entry page with 100,000 links (4 MB), all to other sites (classified, never fetched)."""
    h.send(200, _many_links_page())


@lru_cache(maxsize=1)
def _many_links_page() -> bytes:
    return page("Viele Links", "".join(f"<a href='http://s{i % 97}.example.org/{i}'>{i}</a>"
                                       for i in range(MANY_LINKS)))


LONG_URL_BYTES = 10_000


@case("long-url")
def long_url(h: Handler, path: str) -> None:
    """An entry page linking to an article whose URL is 10 KB long."""
    if path == "/long-url/":
        target = "/long-url/2024-10-01/" + "a" * LONG_URL_BYTES + "-article-1.html"
        h.send(200, page("Lange URL", f"<a href='{target}'>Artikel</a>"))
    else:
        h.send(200, article_page("Long URL article").encode())
