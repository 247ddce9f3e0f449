"""The ``news`` spider: news entry URLs in, node and article items out.

Usage::

    scrapy crawl news -a start_urls=https://www.heise.de/,https://www.zeit.de/index
    scrapy crawl news -a seeds=seeds.txt -a depth=2 -a strategy=best

The spider only fetches and describes pages. Links are extracted and classified by
:class:`middlewares.linkclass.LinkClassificationMiddleware`, which turns each :class:`NodeItem`'s
links into requests back to :meth:`NewsSpider.parse_node` (node links) and
:meth:`NewsSpider.parse_article` (content links).
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import Path

import scrapy
from scrapy.http import TextResponse
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

from newscrawl import defaults
from newscrawl.algorithms.extraction import extract_article
from newscrawl.algorithms.frontier import STRATEGIES
from newscrawl.algorithms.urls import host_of, registered_domain, url_fingerprint
from newscrawl.items import ArticleItem, NodeItem
from middlewares.revisit import due_channel_requests, seed_request
from middlewares.revisit import state_of as revisit_state

logger = logging.getLogger(__name__)


def _read_seeds_file(seeds: str) -> list[str]:
    """The lines of a seeds file, decoded as UTF-8 (a byte-order mark is dropped).

    Raises:
        ValueError: the file cannot be read, or is not UTF-8 (one line naming the path, the
            byte offset and the line of the first undecodable byte).
    """
    try:
        data = Path(seeds).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read seeds file {seeds!r}: {exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"seeds file {seeds!r} is not UTF-8 text: undecodable byte 0x{data[exc.start]:02x} "
            f"at byte offset {exc.start} (line {line}); save it as UTF-8") from None
    return text.splitlines()


def _entry_problem(url: str) -> tuple[str, str | None]:
    """``(normalised URL, None)`` for a usable entry, or ``(url, why it is skipped)``."""
    if any(ch.isspace() for ch in url):
        return url, "a URL has no spaces"
    if "://" not in url:
        url = "http://" + url
    scheme = url.split("://", 1)[0].lower()
    if scheme not in ("http", "https"):
        return url, "only http and https URLs are crawled"
    if not host_of(url):
        return url, "the URL has no host"
    return url, None


def read_entry_urls(start_urls: str | None = None, seeds: str | None = None,
                    skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Return the entry URLs given as ``-a start_urls=`` (comma-separated) and/or ``-a seeds=``.

    The seeds file holds one URL per line (UTF-8); blank lines and ``#`` comments are skipped.
    URLs without a scheme get ``http://``. Duplicates are dropped, order kept. A bad entry (a
    space in it, not http(s), no host) is skipped with a warning and appended to ``skipped`` as
    ``(entry, reason)`` when given.

    Raises:
        ValueError: no valid URL remains, or a seeds file that cannot be read or is not UTF-8.
    """
    urls: list[str] = []
    if start_urls:
        urls += [u.strip() for u in start_urls.split(",") if u.strip()]
    if seeds:
        urls += [line.split("#", 1)[0].strip() for line in _read_seeds_file(seeds)]
    bad: list[tuple[str, str]] = []
    out: list[str] = []
    for entry in urls:
        if not entry:
            continue
        url, problem = _entry_problem(entry)
        if problem:
            logger.warning("Skipping entry %r: %s", entry, problem)
            bad.append((entry, problem))
            continue
        if url not in out:
            out.append(url)
    if skipped is not None:
        skipped.extend(bad)
    if not out:
        if bad:
            first, why = bad[0]
            raise ValueError(f"news: no valid entry URL ({len(bad)} skipped; first: {first!r}: "
                             f"{why}); give http(s) URLs with -a start_urls=URL[,URL...] or "
                             f"-a seeds=FILE")
        raise ValueError("news: give entry URLs with -a start_urls=URL[,URL...] or -a seeds=FILE")
    return out


class NewsSpider(scrapy.Spider):
    """Crawl news sites from their entry URLs (seed 004's StartURLs).

    Spider arguments: ``start_urls`` (comma-separated), ``seeds`` (file), ``depth`` (node-link
    recursion depth, default ``NEWSCRAWL_DEPTH``), ``strategy`` (``bfs``/``dfs``/``best``,
    default ``NEWSCRAWL_STRATEGY``).
    """

    name = "news"

    def __init__(self, start_urls: str | None = None, seeds: str | None = None,
                 depth: str | int | None = None, strategy: str | None = None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(start_urls, (list, tuple)):
            start_urls = ",".join(start_urls)
        #: entries skipped as unusable, ``(entry, reason)`` (stat ``newscrawl/seeds/skipped``)
        self.skipped_entries: list[tuple[str, str]] = []
        self.entry_urls = read_entry_urls(start_urls, seeds, self.skipped_entries)
        self._depth_arg = depth
        self._strategy_arg = strategy
        self.max_depth = defaults.NEWSCRAWL_DEPTH
        self.strategy = defaults.NEWSCRAWL_STRATEGY
        self.extract_max_bytes = defaults.NEWSCRAWL_EXTRACT_MAX_BYTES
        self.extract_thread_bytes = defaults.NEWSCRAWL_EXTRACT_THREAD_BYTES

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        depth = spider._depth_arg if spider._depth_arg is not None else settings.getint(
            "NEWSCRAWL_DEPTH", defaults.NEWSCRAWL_DEPTH)
        try:
            spider.max_depth = int(depth)
        except (TypeError, ValueError):
            raise ValueError(f"news: depth must be a whole number, got {depth!r}") from None
        if spider.max_depth < 0:
            raise ValueError(f"news: depth must be >= 0, got {spider.max_depth}")
        strategy = spider._strategy_arg or settings.get("NEWSCRAWL_STRATEGY", defaults.NEWSCRAWL_STRATEGY)
        if strategy not in STRATEGIES:
            raise ValueError(f"news: strategy must be one of {STRATEGIES}, got {strategy!r}")
        spider.strategy = strategy
        spider.extract_max_bytes = settings.getint("NEWSCRAWL_EXTRACT_MAX_BYTES",
                                                   defaults.NEWSCRAWL_EXTRACT_MAX_BYTES)
        spider.extract_thread_bytes = settings.getint("NEWSCRAWL_EXTRACT_THREAD_BYTES",
                                                      defaults.NEWSCRAWL_EXTRACT_THREAD_BYTES)
        return spider

    async def start(self):
        if self.skipped_entries:  # here, not in from_crawler: the stats exist from now on
            self.crawler.stats.set_value("newscrawl/seeds/skipped", len(self.skipped_entries))
        # Incremental re-runs (pipelines/crawlstate.py loads the crawl state before this runs):
        # the seeds carry their stored state, then every known channel page that is due.
        revisit = revisit_state(getattr(self, "crawler", None))
        for url in self.entry_urls:
            request = scrapy.Request(url, callback=self.parse_node, priority=10_000_000, meta={
                "newscrawl_entry_url": url,
                "newscrawl_start_url": url,
                "newscrawl_depth": 0,
                "newscrawl_link_class": "entry",
                "newscrawl_role": "entry",
                "newscrawl_features": {},
                "newscrawl_parent_weight": 1.0,
            })
            yield seed_request(revisit, request) if revisit is not None else request
        if revisit is not None:
            for request in due_channel_requests(revisit, self, self.crawler.stats):
                yield request

    def _page_fields(self, response) -> dict:
        meta = response.meta
        url = response.url
        host = host_of(url)
        return {
            "url": url,
            "fp": url_fingerprint(url),
            "site": registered_domain(host),
            "host": host,
            "entry_url": meta.get("newscrawl_entry_url"),
            "start_url": meta.get("newscrawl_start_url"),
            "link_class": meta.get("newscrawl_link_class"),
            "role": meta.get("newscrawl_role"),
            "depth": meta.get("newscrawl_depth", 0),
            "referer": meta.get("newscrawl_referer"),
            "features": meta.get("newscrawl_features") or {},
            "parent_weight": meta.get("newscrawl_parent_weight", 1.0),
            "status": response.status,
            "encoding": getattr(response, "encoding", None),
            "fetched_at": datetime.now(timezone.utc),
        }

    def _skip_non_html(self, response) -> bool:
        """True (and counted) for responses that are not HTML: images, PDFs, feeds."""
        if isinstance(response, TextResponse):
            content_type = (response.headers.get("Content-Type") or b"text/html").lower()
            if b"html" in content_type or response.body.lstrip()[:1] == b"<":
                return False
        self.crawler.stats.inc_value("newscrawl/spider/skipped_non_html")
        logger.debug("Skipping non-HTML response %s", response)
        return True

    def parse_node(self, response):
        """Describe an entry or channel page; its links are classified by the spider middleware."""
        if self._skip_non_html(response):
            return
        fields = self._page_fields(response)
        title = response.xpath("normalize-space(//title)").get() or None
        yield NodeItem(kind="node", title=title, **fields)

    #: Run the extractor in Scrapy's thread pool for pages larger than
    #: ``NEWSCRAWL_EXTRACT_THREAD_BYTES``, so a slow page never stalls the reactor (downloads
    #: and timeouts go on meanwhile); smaller pages are extracted inline, which measured twice as
    #: fast (no GIL hand-over). Tests switch threads off entirely.
    extract_in_thread = True

    async def parse_article(self, response):
        """Extract one article (content page); the extractor runs off the reactor thread."""
        if self._skip_non_html(response):
            return
        fields = self._page_fields(response)
        stats = self.crawler.stats
        if len(response.body) > self.extract_max_bytes:
            stats.inc_value("newscrawl/extraction/skipped_too_large")
            logger.warning("Not extracting %s: %d bytes > NEWSCRAWL_EXTRACT_MAX_BYTES", response.url,
                           len(response.body))
            article = {"title": None, "published": None, "authors": [], "text": "",
                       "language": None, "canonical_url": None, "description": None}
        else:
            if self.extract_in_thread and len(response.body) > self.extract_thread_bytes:
                article = await maybe_deferred_to_future(
                    threads.deferToThread(extract_article, response.text, response.url))
            else:
                article = extract_article(response.text, response.url)
            if not article.get("text"):
                stats.inc_value("newscrawl/extraction/empty")
            elif not article.get("title"):
                stats.inc_value("newscrawl/extraction/no_title")
            else:
                stats.inc_value("newscrawl/extraction/ok")
        yield ArticleItem(kind="article", **fields, **{k: article.get(k) for k in (
            "title", "published", "authors", "text", "language", "canonical_url", "description")})
