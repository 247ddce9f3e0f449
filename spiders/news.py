"""The ``news`` spider: news entry URLs in, node and article items out.

Usage::

    scrapy crawl news -a start_urls=https://www.heise.de/,https://www.zeit.de/index
    scrapy crawl news -a seeds=seeds.txt -a depth=2 -a strategy=best

The spider only fetches and describes pages; :class:`middlewares.linkclass.
LinkClassificationMiddleware` turns each :class:`NodeItem`'s links into requests back to
:meth:`NewsSpider.parse_node` / :meth:`NewsSpider.parse_article`. Entry URLs: :mod:`newscrawl.
seeds`; re-run requests: :mod:`spiders.requests`. A page fetched as an article that is not one
(:mod:`newscrawl.algorithms.pagekind`) becomes a node with its ``page_kind``.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.http import TextResponse
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension
from newscrawl import meta
from newscrawl.algorithms.extraction import EMPTY_FIELDS, extract_article, sniff_html
from newscrawl.algorithms.feedlinks import item_sources, source_role
from newscrawl.algorithms.frontier import STRATEGIES
from newscrawl.algorithms.pagekind import PageKinds
from newscrawl.algorithms.urls import host_of, registered_domain
from newscrawl.crawlstate import RunClock, RunState, parse_whole_number
from newscrawl.fingerprint import PageFingerprint, page_fingerprint
from newscrawl.items import ArticleItem, FeedItem, NodeItem
from newscrawl.meta import PageContext
from newscrawl.seeds import SkippedEntry, no_entry_message, parse_entries
from newscrawl.settingscheck import warn_unknown_arguments
from spiders.requests import due_channel_requests, entry_request, seed_request

logger = logging.getLogger(__name__)


def parse_depth(value: Any) -> int:
    """A depth argument or setting as a whole number >= 0.

    Raises:
        ValueError: not a whole number >= 0.
    """
    return parse_whole_number(value, "news: depth")


def parse_strategy(value: Any) -> str:
    """A strategy argument or setting, one of ``STRATEGIES``.

    Raises:
        ValueError: another value.
    """
    if value not in STRATEGIES:
        raise ValueError(f"news: strategy must be one of {STRATEGIES}, got {value!r}")
    return str(value)


class NewsSpider(scrapy.Spider):
    """Crawl news sites from their entry URLs (seed 004's StartURLs).

    Spider arguments: :data:`newscrawl.settingscheck.SPIDER_ARGUMENTS` (others are warned about);
    ``depth`` / ``strategy`` default to the settings ``NEWSCRAWL_DEPTH`` / ``NEWSCRAWL_STRATEGY``.

    The spider reads its settings and takes the run's objects (the run clock, the page
    fingerprint, the crawl state) at ``spider_opened`` (:meth:`open_run`): Scrapy creates the
    spider before the add-ons register the ``NEWSCRAWL_*`` defaults and before the extensions.
    """

    name = "news"

    def __init__(self, start_urls: str | None = None, seeds: str | None = None,
                 depth: str | int | None = None, strategy: str | None = None, **kwargs: Any):
        warn_unknown_arguments(kwargs, logger)  # -a dpeth=0: "(did you mean depth?)"
        super().__init__(**kwargs)
        if isinstance(start_urls, (list, tuple)):
            start_urls = ",".join(start_urls)
        entries = parse_entries(start_urls, seeds)
        if not entries.urls and getattr(self, "requires_entries", True):  # spiders/warcimport.py
            raise ValueError(no_entry_message(entries.skipped))
        self.entry_urls = entries.urls
        #: entries skipped as unusable (stats ``newscrawl/seeds/skipped[_<reason>]``)
        self.skipped_entries: list[SkippedEntry] = entries.skipped
        #: host → (user, password) of credentialed entries (middlewares/credentials.py)
        self.entry_credentials = entries.credentials
        self._depth_arg = parse_depth(depth) if depth is not None else None
        self._strategy_arg = parse_strategy(strategy) if strategy else None
        # Set by open_run() from the settings and the run.
        self.max_depth: int = self._depth_arg if self._depth_arg is not None else 0
        self.strategy: str = self._strategy_arg or "bfs"
        self.extract_max_bytes = self.extract_thread_bytes = 0
        self.feeds_enabled = False
        self.clock = RunClock()
        self.crawl_state: RunState | None = None
        self._page_fp: PageFingerprint | None = None
        self.page_kinds = PageKinds()  # pages fetched as articles that are not (pagekind.py)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> NewsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.open_run, signal=signals.spider_opened)
        return spider

    def open_run(self, spider: Any = None) -> None:
        """Read the settings; take the run's clock, page fingerprint, crawl state (spider_opened).

        Raises:
            CloseSpider: a bad ``NEWSCRAWL_DEPTH`` / ``NEWSCRAWL_STRATEGY`` (logged).
        """
        crawler, settings = self.crawler, self.crawler.settings
        try:
            self.max_depth = self._depth_arg if self._depth_arg is not None else parse_depth(
                settings.get("NEWSCRAWL_DEPTH"))
            self.strategy = self._strategy_arg or parse_strategy(settings.get("NEWSCRAWL_STRATEGY"))
        except ValueError as exc:
            logger.error("%s", exc)
            raise CloseSpider("bad_settings") from exc
        self.extract_max_bytes = settings.getint("NEWSCRAWL_EXTRACT_MAX_BYTES")
        self.extract_thread_bytes = settings.getint("NEWSCRAWL_EXTRACT_THREAD_BYTES")
        self.feeds_enabled = settings.getbool("NEWSCRAWL_FEEDS_ENABLED")
        self._page_fp = page_fingerprint(crawler)
        if (run := crawler.get_extension(CrawlStateExtension)) is not None:
            self.clock, self.crawl_state = run.state.clock, run.state if run.revisit else None

    def page_fp(self, url: str) -> str:
        """The page fingerprint of ``url`` (the crawler's; see :mod:`newscrawl.fingerprint`).

        Raises:
            RuntimeError: the spider is not open yet (:meth:`open_run` not called).
        """
        if self._page_fp is None:
            raise RuntimeError("the news spider is not open (spider_opened not sent)")
        return self._page_fp(url)

    def _count_skip(self, skip: SkippedEntry) -> None:
        for key in ("newscrawl/seeds/skipped", f"newscrawl/seeds/skipped_{skip.reason}"):
            self.crawler.stats.inc_value(key)

    def _log_start(self) -> None:
        """The effective depth, strategy, budget and store of the run, in one line."""
        settings = self.crawler.settings

        def source(arg: Any, name: str) -> str:
            if arg is not None:
                return f"-a {name.removeprefix('NEWSCRAWL_').lower()}"
            return name if (settings.getpriority(name) or 0) > 0 else f"{name} default"

        run, store = self.crawler.get_extension(CrawlStateExtension), self.crawler.get_extension(StoreExtension)
        budget = run.state.budget if run is not None else None
        logger.info("Crawl of %d entr%s (%d skipped): depth %d (%s), strategy %s (%s), budget %s, "
                    "store: %s", len(self.entry_urls), "y" if len(self.entry_urls) == 1 else "ies",
                    len(self.skipped_entries), self.max_depth,
                    source(self._depth_arg, "NEWSCRAWL_DEPTH"), self.strategy,
                    source(self._strategy_arg, "NEWSCRAWL_STRATEGY"),
                    f"{budget} requests" if budget else "unlimited",
                    store.describe() if store is not None else "none (NEWSCRAWL_MONGO_ENABLED off)")

    async def start(self):
        # Counted here, not in __init__: the stats exist from now on.
        for skip in self.skipped_entries:
            self._count_skip(skip)
        self._log_start()
        # Incremental re-runs (the crawl state is loaded before this runs): the seeds carry
        # their stored state, then every known channel page that is due. One entry that cannot
        # be requested is a counted skip, never the end of the others.
        state = self.crawl_state
        requested = 0
        for n, url in enumerate(self.entry_urls, 1):
            try:
                request = entry_request(url, self.parse_node)
                if state is not None:
                    request = seed_request(state, request, page_fp=self.page_fp,
                                           stats=self.crawler.stats)
            except Exception as exc:  # noqa: BLE001 - any cause: skip this entry, keep the rest
                skip = SkippedEntry("entries", n, url, "bad_url")
                logger.warning("Skipping %s (%s)", skip.describe(), exc)
                self._count_skip(skip)
                continue
            if request is None:  # a known entry page that is not due
                continue
            requested += 1
            self.crawler.stats.set_value("newscrawl/seeds/requested", requested)
            yield request
        self.crawler.stats.set_value("newscrawl/seeds/requested", requested)
        if state is not None:
            for request in due_channel_requests(state, self, self.crawler.stats):
                yield request

    def _page_fields(self, response) -> dict:
        url = response.url
        host = host_of(url)
        return {"url": url, "fp": self.page_fp(url), "site": registered_domain(host), "host": host,
                **PageContext.from_meta(response.meta).to_item(), "role": response.meta.get(meta.ROLE),
                "status": response.status, "encoding": getattr(response, "encoding", None),
                "fetched_at": self.clock.utcnow()}

    def _skip_non_html(self, response) -> bool:
        """True (counted, logged) for responses that are not HTML: images, PDFs, feeds, and
        bodies whose bytes are not HTML whatever the Content-Type says (PDF or random bytes
        served as text/html: :func:`~newscrawl.algorithms.extraction.sniff_html`)."""
        why = None
        if isinstance(response, TextResponse):
            content_type = (response.headers.get("Content-Type") or b"text/html").lower()
            if b"html" in content_type or response.body.lstrip()[:1] == b"<":
                why = sniff_html(response.body)
                if why is None or why == "empty":  # an empty page is described, not skipped
                    return False
        self.crawler.stats.inc_value("newscrawl/spider/skipped_non_html")
        if why is not None:
            self.crawler.stats.inc_value(f"newscrawl/spider/skipped_non_html/{why}")
            logger.info("Skipping %s: served as HTML but the body is not (%s)", response.url, why)
        else:
            logger.debug("Skipping non-HTML response %s", response)
        return True

    def parse_node(self, response):
        """Describe an entry or channel page (its links are classified by the spider middleware),
        or a feed or sitemap: a :class:`FeedItem`, its entries read by middlewares/feeds.py."""
        role = source_role(response.body, response.headers.get("Content-Type")) \
            if self.feeds_enabled else None
        if role is not None:
            yield FeedItem(kind="node", title=None, **{**self._page_fields(response), "role": role})
            return
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
            article = dict(EMPTY_FIELDS, authors=[])
        else:
            details: dict[str, Any] = {}
            hint = self._feed_entry(response)
            extract = partial(extract_article, response.text, response.url,
                              fetched_at=fields["fetched_at"], feed_date=hint.get("feed_date"),
                              sitemap_date=hint.get("sitemap_date"), _details=details)
            if self.extract_in_thread and len(response.body) > self.extract_thread_bytes:
                article = await maybe_deferred_to_future(threads.deferToThread(extract))
            else:
                article = extract()
            if details.get("dom_flattened"):  # deeper than the parser's limit: flattened, kept
                stats.inc_value("newscrawl/extraction/dom_flattened")
            if details.get("dom_truncated"):
                stats.inc_value("newscrawl/extraction/dom_truncated")
            if not article.get("title") and hint.get("title"):  # the feed entry's title
                article["title"] = hint["title"]
            kind, first = self.page_kinds.judge(response.url, fields["site"], article.get("title"),
                                                article.get("text"), bool(details.get("article_markup")))
            if kind is not None:
                stats.inc_value(f"newscrawl/extraction/{kind}")
                if first:
                    logger.info("Not storing %s as an article: a %s page (newscrawl/extraction/%s;"
                                " further ones are not logged)", response.url, kind, kind)
                yield NodeItem(kind="node", **{**fields, "title": article.get("title")}, page_kind=kind)
                return
            if not article.get("text"):
                stats.inc_value("newscrawl/extraction/empty")
            elif not article.get("title"):
                stats.inc_value("newscrawl/extraction/no_title")
            else:
                stats.inc_value("newscrawl/extraction/ok")
        yield ArticleItem(kind="article", **fields, **{k: article.get(k) for k in EMPTY_FIELDS},
                          sources=item_sources(self._record(response).get("sources")))

    def _record(self, response) -> dict:
        """The crawl-state record of the requested page ({} without one)."""
        fp = (response.meta.get(meta.REVISIT) or {}).get("fp")
        return (self.crawl_state.get(fp) if self.crawl_state and fp else None) or {}

    def _feed_entry(self, response) -> dict:
        """What a feed or sitemap entry said of this article (title, date): the request's, else
        the one its record keeps from an earlier run."""
        return response.meta.get(meta.FEED_ENTRY) or self._record(response).get("feed_entry") or {}
