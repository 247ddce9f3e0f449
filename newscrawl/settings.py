"""Scrapy settings of the newscrawl project (``scrapy.cfg`` → ``newscrawl.settings``).

Scrapy's own settings and newscrawl's components are set here. Every ``NEWSCRAWL_*`` default
lives in :mod:`newscrawl.defaults` and is registered at ``default`` priority by
:class:`newscrawl.addon.DefaultsAddon` (``ADDONS`` below), so ``-s NEWSCRAWL_X=…`` (or a value
set here) overrides one value and components read settings plainly.
"""

BOT_NAME = "newscrawl"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"

USER_AGENT = "newscrawl/0.1 (+news monitoring; incremental crawler)"
ROBOTSTXT_OBEY = True

# Politeness on one machine: a few parallel requests per host, AutoThrottle off by default
# (the replay proxy and local sites answer at once); raise DOWNLOAD_DELAY for live sites.
CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_DELAY = 0
# Spider outputs (one item and its page's links) processed in parallel per response. Scrapy
# starts this many asyncio tasks for every response (default 100: ~100 tasks per page, about a
# tenth of a worker's CPU here); a page has one item, so a few are enough.
CONCURRENT_ITEMS = 8
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024  # bytes: larger downloads are cancelled (logged, counted)
DOWNLOAD_WARNSIZE = 8 * 1024 * 1024
# Redirects: a loop ends at the duplicate filter (dupefilter/filtered), longer chains here.
REDIRECT_MAX_TIMES = 10
RETRY_TIMES = 2
# A request that fails for good is logged once at ERROR: by the scraper ("Error downloading …")
# or, for robots.txt, by the robots middleware; Scrapy's "Gave up retrying" line said it again.
RETRY_GIVE_UP_LOG_LEVEL = "DEBUG"

# Breadth-first within equal priority; the spider sets priorities per strategy.
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"

DOWNLOADER_MIDDLEWARES = {
    "middlewares.charset.CharsetMiddleware": 585,  # below HttpCompression (590): sees decoded bodies
    # The request budget: first, so requests count in the order the scheduler hands them out.
    "middlewares.budget.BudgetMiddleware": 10,
    # Entry credentials as an Authorization header for their host only; none in any URL.
    "middlewares.credentials.CredentialsMiddleware": 20,
    # HEAD first / conditional GET for known pages: below Retry (550) so it sees final answers.
    "middlewares.headprobe.HeadProbeMiddleware": 540,
    # Scrapy's redirect middlewares with counted drops (too many hops, another site).
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "middlewares.redirect.CountedMetaRefreshMiddleware": 580,
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "middlewares.redirect.CountedRedirectMiddleware": 600,
    # robots.txt read with its status code (RFC 9309: 4xx allow all, 5xx disallow all) and
    # kept in the crawl state for its max-age.
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "middlewares.robotscache.CachedRobotsTxtMiddleware": 100,
    # No request to private addresses: after HttpProxy (750, sets meta["proxy"]), last before
    # the download handler connects.
    "middlewares.destination.DestinationMiddleware": 760,
    # WARC (NEWSCRAWL_WARC_DIR): first to see each answer as received, before decompression (590).
    "middlewares.warc.WarcCaptureMiddleware": 990,
    # WARC import (NEWSCRAWL_WARC_IMPORT): answers from the archive, before the destination check.
    "middlewares.warcreplay.WarcReplayMiddleware": 755,
}
SPIDER_MIDDLEWARES = {
    "middlewares.linkclass.LinkClassificationMiddleware": 800,
    # Sees the link classification's output: fingerprints, new / due / not-due links.
    "middlewares.revisit.RevisitSpiderMiddleware": 700,
    # Between the two: feeds and sitemaps (discovery, entries as article links, sources).
    "middlewares.feeds.FeedSourcesMiddleware": 750,
}
ITEM_PIPELINES = {
    "pipelines.newsrank.NewsRankPipeline": 300,
    # Before the storage pipeline: keeps the stored version of a changed article first.
    "pipelines.crawlstate.CrawlStatePipeline": 700,
    # story_id and minhash on articles (near-duplicates across sites), before storage.
    "pipelines.stories.StoryPipeline": 750,
    # A WARC metadata record per page (NEWSCRAWL_WARC_DIR), once the story id is known.
    "pipelines.warc.WarcMetadataPipeline": 790,
    "pipelines.mongo.MongoPipeline": 800,
}
# Run-wide objects, built before the engine and every middleware and pipeline (which reach them
# with crawler.get_extension): the store, its writer thread and the embedded server's lease;
# the run's state (clock, budget, known pages).
EXTENSIONS = {
    "extensions.store.StoreExtension": 100,
    "extensions.crawlstate.CrawlStateExtension": 110,
    # The full-text index beside the store and the saved-search alerts (newscrawl search/alert).
    "extensions.search.SearchExtension": 115,
    # Per-host politeness in one process: Crawl-delay, Retry-After (off when distributed).
    "extensions.politeness.HostPolitenessExtension": 120,
    # Monitoring mode (-a watch=1); not configured otherwise.
    "extensions.watch.WatchExtension": 130,
    # The run summary and the exit status (the crawl command below makes it the process's).
    "extensions.outcome.OutcomeExtension": 140,
    # A batch crawl's progress line every NEWSCRAWL_PROGRESS_INTERVAL seconds.
    "extensions.progress.ProgressExtension": 150,
    # The run's WARC writer (NEWSCRAWL_WARC_DIR) and an import's archive (NEWSCRAWL_WARC_IMPORT).
    "extensions.warc.WarcExtension": 152,
    "extensions.warcimport.WarcImportExtension": 160,
}
# `scrapy crawl` exits non-zero when the run failed (newscrawl/outcome.py) and says why in one
# line, also when it cannot start (bad argument, setting or seeds): newscrawl/commands/crawl.py.
COMMANDS_MODULE = "newscrawl.commands"

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
TELNETCONSOLE_ENABLED = False
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
# One fingerprint for every duplicate check (Scrapy's dupefilter, the Redis one, the HTTP cache):
# 8 bytes of SHA-1 over the canonical URL with host aliases folded (seeds 001, 003).
REQUEST_FINGERPRINTER_CLASS = "newscrawl.fingerprint.NewsRequestFingerprinter"

ADDONS = {
    # Every NEWSCRAWL_* default (newscrawl/defaults.py), registered first.
    "newscrawl.addon.DefaultsAddon": 0,
    # Distributed crawling: REDIS_URL (setting or environment) or -s NEWSCRAWL_DISTRIBUTED=1
    # switches to the scrapy-redis scheduler and the shared frontier.
    "newscrawl.distributed.addon.DistributedAddon": 10,
}
