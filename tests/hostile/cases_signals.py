"""Hostile cases of server signals: robots.txt status codes and size, Crawl-delay, Retry-After.

Each case has a loopback host of its own (:data:`tests.hostile.site.HOSTS`), so its robots.txt
and its politeness touch no other case.
"""

from __future__ import annotations

from tests.hostile.site import Handler, article_page, case, robots

#: Seconds a 503 asks the crawler to wait (Retry-After).
RETRY_AFTER = 2
#: The Crawl-delay robots.txt asks for (capped by the crawl's NEWSCRAWL_CRAWL_DELAY_MAX).
CRAWL_DELAY = 3600
#: Size of the big robots.txt (bytes, about).
BIG_ROBOTS = 5_000_000


@robots("robots5xx")
def robots_5xx(h: Handler, path: str) -> None:
    h.send(503, b"<html>Service unavailable</html>")


@case("robots-5xx", host="robots5xx", article=True)
def robots_5xx_site(h: Handler, path: str) -> None:
    """Never fetched: robots.txt answers 503, so the host is disallowed (RFC 9309)."""
    h.send(200, article_page("Should not be fetched").encode())


@robots("robots4xx")
def robots_4xx(h: Handler, path: str) -> None:
    # A 403 page whose body would disallow everything if it were read as robots.txt.
    h.send(403, b"User-agent: *\nDisallow: /\n", content_type="text/plain")


ROBOTS_4XX_TITLE = "Allowed although robots.txt is forbidden"


@case("robots-4xx", host="robots4xx", article=True)
def robots_4xx_site(h: Handler, path: str) -> None:
    h.send(200, article_page(ROBOTS_4XX_TITLE).encode())


@robots("crawldelay")
def robots_crawl_delay(h: Handler, path: str) -> None:
    h.send(200, f"User-agent: *\nCrawl-delay: {CRAWL_DELAY}\n".encode(), content_type="text/plain")


@case("crawl-delay", host="crawldelay", article=True)
def crawl_delay_site(h: Handler, path: str) -> None:
    h.send(200, article_page("Slowly, please").encode())


@case("retry-after", host="retryafter")
def retry_after_site(h: Handler, path: str) -> None:
    """The entry page answers 503 with Retry-After the first time, then the page."""
    if path == "/retry-after/" and len(h.site.requests_to("/retry-after/", "retryafter")) == 1:
        h.send(503, b"busy", headers={"Retry-After": str(RETRY_AFTER)})
        return
    if path == "/retry-after/":
        link = "/retry-after/2024-10-01/retry-after-article-of-the-day-1.html"
        h.send(200, f"<html><body><a href='{link}'>Artikel</a></body></html>".encode())
        return
    h.send(200, article_page("After the wait").encode())


@robots("bigrobots")
def robots_big(h: Handler, path: str) -> None:
    lines = "".join(f"Disallow: /private-{i:07d}/\n" for i in range(BIG_ROBOTS // 26))
    h.send(200, ("User-agent: *\n" + lines).encode(), content_type="text/plain")


@case("big-robots", host="bigrobots", article=True)
def big_robots_site(h: Handler, path: str) -> None:
    h.send(200, article_page("Behind a big robots.txt").encode())
